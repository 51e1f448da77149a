"""Clusters of duplicates by complete linkage on the contradiction guard (seed 004): `find_duplicates`.

**Clusters** grow by complete linkage on the guard: from the canonical memory along the candidate
pairs, a memory joins only if it passes the guard against every member already in the cluster, and
against every memory a member absorbed in an earlier merge, so A~B and B~C never merge A with a C
that differs from A, tonight or on a later night. The guard runs within a cluster's few
members, never over all pairs of a scope. The canonical memory is the most important one, then the
oldest (created_at), then the smallest id.

`find_duplicates` makes the merge plan (`Plan`) of a frame of memories: the candidate pairs of
``candidates``, each passed through the guard (a pair it cannot read is kept apart, never merged on
doubt), the clusters, and the contradictions to file. It reads and writes nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ...store import MemoryLakeError, step_error, Policy
from .verdicts import DIFFERENT, UNREADABLE
from .guard import closeness, contradiction
from .helpers import RAISED, prejudge
from .candidates import _strict_key, near_pairs, semantic_pairs, substitution_pairs


# The near pass works on at most about this many memories at once (whole scopes per chunk).
NEAR_CHUNK_ROWS = 150_000


@dataclass
class Plan:
    """What a dedup run found: ``merges`` (cluster, canonical, member, pass, score) and
    ``contradictions`` (a, b, reason, pass, score), both as memory ids."""

    merges: pl.DataFrame
    contradictions: pl.DataFrame
    candidates: int
    examined: int
    different: int = 0  # similar pairs kept apart as two memories (an identifier or a content word changed; not filed)
    left_out: int = 0  # memories similar to a cluster member that differ from another member (not merged)
    errors: list = field(default_factory=list)  # step errors: a pair the guard could not read, a scope that raised
    apart: list = field(default_factory=list)  # the similar pairs kept apart: {a, b, reason, pass, score}
    verdicts: Any = None  # the guard's verdicts, kept and new (verdictcache.VerdictCache), when a cache was given
    # the scopes (tenant, agent_id, user_id) whose plan some of their memories alone could change:
    # two memories with one strict key, a bucket too large to pair whole, or a pair the guard let
    # through (``settled.py``: the others merge nothing on any subset of their memories)
    open_scopes: set = field(default_factory=set)


def find_duplicates(frame: pl.DataFrame, vectors: dict[str, np.ndarray] | None, policy: Policy,
                    kept_apart: set[tuple[str, str]] | None = None, *,
                    spaces: dict[str, tuple[dict[str, np.ndarray], float]] | None = None,
                    close: Any = "policy", cache: Any = None, helpers: Any = None,
                    absorbed: dict[str, list[tuple[str, str]]] | None = None) -> Plan:
    """The merge plan for `frame` (columns id, tenant, agent_id, user_id, type, tags, content,
    importance, created_at, and ``covered``: the model covers its language). `vectors` maps ids to
    L2-normalised embeddings (None: no semantic pass), compared at ``semantic_cosine``; or
    `spaces` maps each model to (its vectors by id, only where it covers the language; its
    threshold), and the semantic pass runs in each space. `close` judges rewordings (see
    `contradiction`; "policy": `closeness(policy)`, None: the synonym list alone). `cache` (a
    ``verdictcache.VerdictCache``) answers pairs judged on an earlier night. `helpers` (a
    ``helpers.GuardHelpers``) judge part of a large batch's pairs in other processes when `close`
    is "policy" (the same verdicts). `absorbed` maps a memory's id to the (id, content) of the
    memories merged into it before: a memory joins a cluster only if it passes the guard against
    those too. Reads and writes nothing."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    d = policy.dedup
    kept_apart = kept_apart or set()
    frame = frame.with_row_index("row").with_columns(
        scope=pl.concat_str([pl.col("tenant"), pl.col("agent_id").fill_null("\x00"), pl.col("user_id").fill_null("\x00")],
                            separator="\x1f").hash(),
        key=_strict_key(pl.col("content")))
    frame = frame.with_columns(pl.col("row").cast(pl.Int64))
    ids = frame["id"].to_list()
    contents = frame["content"].to_list()
    edges = []  # (a, b, pass, score)
    # 1. exact: everyone with the first of their group
    groups = frame.group_by("scope", "key").agg(members=pl.col("row").sort()).filter(pl.col("members").list.len() > 1)
    crowded: set[int] = set(groups["members"].explode().to_list())  # rows whose scope is open (Plan)
    exact = groups.select(a=pl.col("members").list.first(), b=pl.col("members")).explode("b").filter(pl.col("a") != pl.col("b"))
    edges.append(exact.with_columns(kind=pl.lit("exact"), score=pl.lit(1.0)))
    representatives = frame.unique(["scope", "key"], keep="first", maintain_order=True)
    candidates = []
    # 2. near, in chunks of whole scopes (pairs never cross a scope), so memory stays bounded
    if "near" in d.passes:
        texts = representatives.select("row", "scope", text="content")
        chunks = max(1, -(-texts.height // NEAR_CHUNK_ROWS))
        parts = (texts.with_columns(chunk=pl.col("scope") % chunks).partition_by("chunk", include_key=False)
                 if chunks > 1 else [texts])
        for part in parts:
            candidates.append(near_pairs(part, bands=d.minhash_bands, rows=d.minhash_rows,
                                         threshold=d.near_jaccard, crowded=crowded).with_columns(kind=pl.lit("near")))
            candidates.append(substitution_pairs(part, crowded).with_columns(kind=pl.lit("near")))
    # 3. semantic
    if spaces is None:  # one space: the vectors of the memories whose language the model covers
        covered_ids = frame.filter(pl.col("covered"))["id"].to_list() if vectors else []
        spaces = {"": ({i: vectors[i] for i in covered_ids if i in vectors}, d.semantic_cosine)} if vectors else {}
    if "semantic" in d.passes:
        for space, threshold in spaces.values():
            covered = representatives.filter(pl.col("id").is_in(list(space)))
            if covered.height > 1:
                matrix = np.stack([space[i] for i in covered["id"].to_list()]).astype(np.float32)
                candidates.append(semantic_pairs(covered, matrix, threshold=threshold, crowded=crowded).with_columns(
                    kind=pl.lit("semantic")))
    judge = closeness(policy) if isinstance(close, str) else close
    window = d.paraphrase_window
    errors: list[dict[str, Any]] = []
    scope_columns = frame.select("tenant", "agent_id", "user_id").rows()
    # the strongest reading of each pair first, in one order every run (the first pair of two
    # memories' canonical ones files their contradiction, with its pass and score)
    pairs = (pl.concat(candidates).sort(["score", "a", "b", "kind"], descending=[True, False, False, False])
             .unique(["a", "b"], keep="first", maintain_order=True)
             if candidates else pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64, "kind": pl.String}))
    prejudged = {}
    if helpers is not None and isinstance(close, str):
        unjudged = dict.fromkeys(
            (contents[a], contents[b]) for a, b in pairs.select("a", "b").iter_rows()
            if (ids[a], ids[b]) not in kept_apart and (ids[b], ids[a]) not in kept_apart
            and not (cache is not None and cache.knows(contents[a], contents[b])))
        prejudged = prejudge(list(unjudged), lambda x, y: contradiction(x, y, judge, window), helpers)

    def judged(x: str, y: str) -> str | None:
        found = prejudged.get((x, y), RAISED)
        return contradiction(x, y, judge, window) if found == RAISED else found

    def guard_texts(id_x: str, x: str, id_y: str, y: str, row: int) -> str | None:
        """The contradiction guard on texts x and y (of memories id_x, id_y, in the scope of `row`);
        a pair it cannot read is kept apart (UNREADABLE) and recorded, never merged on doubt."""
        try:
            if cache is not None:
                return cache.verdict(x, y, (id_x, id_y), lambda: judged(x, y))
            return judged(x, y)
        except MemoryLakeError:
            raise
        except Exception as exc:
            tenant, agent, user = scope_columns[row]
            errors.append(step_error("dedup", exc, item=f"memories {id_x} and {id_y}", tenant=tenant,
                                     agent_id=agent, user_id=user))
            return UNREADABLE

    def guard(a: int, b: int) -> str | None:
        return guard_texts(ids[a], contents[a], ids[b], contents[b], a)

    # what each row's memory absorbed in earlier merges: complete linkage holds for them too
    held = {row: absorbed[i] for row, i in enumerate(ids) if i in absorbed} if absorbed else {}

    def absorbed_apart(rows_x: list[int], rows_y: list[int]) -> bool:
        """Whether a memory absorbed by one side (rows_x / rows_y: the rows of two cluster
        nodes) differs from the other side or from what it absorbed (B took in A "5 km" last
        night; C "7 km" is like B but differs from A: C does not join B)."""
        x_first, y_first = rows_x[0], rows_y[0]
        x_held = [pair for r in rows_x for pair in held.get(r, ())]
        y_held = [pair for r in rows_y for pair in held.get(r, ())]
        return (any(guard_texts(i, t, ids[y_first], contents[y_first], y_first) is not None for i, t in x_held)
                or any(guard_texts(ids[x_first], contents[x_first], j, u, x_first) is not None for j, u in y_held)
                or any(guard_texts(i, t, j, u, x_first) is not None for i, t in x_held for j, u in y_held))
    good, bad = [], []
    for a, b, score, kind in pairs.select("a", "b", "score", "kind").iter_rows():
        if (ids[a], ids[b]) in kept_apart or (ids[b], ids[a]) in kept_apart:
            continue
        why = guard(a, b)
        (bad if why else good).append((a, b, kind, score, why))
    edges.append(pl.DataFrame([(a, b, k, s) for a, b, k, s, _ in good],
                              schema={"a": pl.Int64, "b": pl.Int64, "kind": pl.String, "score": pl.Float64}, orient="row"))
    all_edges = pl.concat([e.select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64), "kind",
                                    pl.col("score").cast(pl.Float64)) for e in edges])
    if kept_apart and all_edges.height:
        apart = pl.DataFrame(sorted(kept_apart), schema={"x": pl.String, "y": pl.String}, orient="row")
        names = frame.select("row", "id")
        all_edges = (all_edges.join(names.rename({"row": "a", "id": "x"}), on="a")
                     .join(names.rename({"row": "b", "id": "y"}), on="b")
                     .join(apart, on=["x", "y"], how="anti").drop("x", "y"))
    merges, left_out = _clusters(frame, all_edges, ids, contents, coo_matrix, connected_components, guard,
                                 absorbed_apart if held else None)
    # a pair is filed between the memories that stay: a member stands for its canonical memory
    canonical = dict(zip(merges["member"].to_list(), merges["canonical"].to_list()))
    # Only the signals of a contradiction (number, date, negation, antonym, swap) go to a person; a
    # changed identifier or a replaced content word means two different memories, kept apart.
    seen, filed, different, apart = set(), [], 0, []
    for a, b, kind, score, why in bad:
        if why in DIFFERENT:
            different += 1
            apart.append({"a": ids[a], "b": ids[b], "reason": why, "pass": kind, "score": round(float(score), 3)})
            continue
        x, y = sorted((canonical.get(ids[a], ids[a]), canonical.get(ids[b], ids[b])))
        if x != y and (x, y) not in seen:
            seen.add((x, y))
            filed.append((x, y, why, kind, score))
    contradictions = pl.DataFrame(
        filed,
        schema={"a": pl.String, "b": pl.String, "reason": pl.String, "pass": pl.String, "score": pl.Float64},
        orient="row")
    crowded.update(all_edges["a"].to_list() + all_edges["b"].to_list())
    return Plan(merges, contradictions, candidates=pairs.height + exact.height, examined=frame.height,
                different=different, left_out=left_out, errors=errors, apart=apart,
                open_scopes={scope_columns[row] for row in crowded})


def _clusters(frame, edges, ids, contents, coo_matrix, connected_components, guard, apart=None) -> tuple[pl.DataFrame, int]:
    """Clusters from the guarded edges, and how many memories were left out of one. Complete
    linkage on the guard: a memory joins a cluster only through an edge to one of its members and
    only if it passes the guard (`guard(row_a, row_b)`) against every member already in it (A~B and B~C never merge A
    with a C that differs from A). Memories with the same strict key count once, and the guard
    runs per cluster (a few members), never over all pairs of a scope. `apart(rows_x, rows_y)`:
    whether what two nodes' memories absorbed in earlier merges keeps them apart."""
    import heapq

    schema_ = {"cluster": pl.String, "canonical": pl.String, "member": pl.String, "pass": pl.String,
               "score": pl.Float64}
    if edges.height == 0:
        return pl.DataFrame(schema=schema_), 0
    n = frame.height
    graph = coo_matrix((np.ones(edges.height), (edges["a"].to_numpy(), edges["b"].to_numpy())), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    touched = np.unique(np.concatenate([edges["a"].to_numpy(), edges["b"].to_numpy()]))
    members = (frame.filter(pl.col("row").is_in(touched))
               .with_columns(label=pl.lit(pl.Series(labels)).gather(pl.col("row")))
               .sort(["label", "importance", "created_at", "id"], descending=[False, True, False, False]))
    # how each member joined: the strongest edge touching it
    how = (pl.concat([edges.select(row="a", kind="kind", score="score"), edges.select(row="b", kind="kind", score="score")])
           .with_columns(rank=pl.col("kind").replace_strict({"exact": 0, "near": 1, "semantic": 2}, return_dtype=pl.Int8))
           .sort("rank", pl.col("score").neg()).unique("row", keep="first"))
    # one node per (component, strict key), numbered in canonical order: its first row speaks for it
    rows_in_order = members["row"].to_list()
    position = {row: i for i, row in enumerate(rows_in_order)}
    node_of_key: dict[tuple[int, str], int] = {}
    node_rows: list[list[int]] = []
    node_label: list[int] = []
    node_of_row: dict[int, int] = {}
    for row, label, key in zip(rows_in_order, members["label"].to_list(), members["key"].to_list()):
        node = node_of_key.setdefault((label, key), len(node_rows))
        if node == len(node_rows):
            node_rows.append([])
            node_label.append(label)
        node_rows[node].append(row)
        node_of_row[row] = node
    neighbours: list[set[int]] = [set() for _ in node_rows]
    for a, b in zip(edges["a"].to_list(), edges["b"].to_list()):
        x, y = node_of_row[a], node_of_row[b]
        if x != y:
            neighbours[x].add(y)
            neighbours[y].add(x)
    out, left_out, assigned = [], 0, [False] * len(node_rows)
    for seed in range(len(node_rows)):
        if assigned[seed]:
            continue
        assigned[seed] = True
        cluster, tried = [seed], {seed}
        frontier = sorted(neighbours[seed])
        heapq.heapify(frontier)
        while frontier:
            node = heapq.heappop(frontier)
            if assigned[node] or node in tried:
                continue
            tried.add(node)
            if (all(guard(node_rows[m][0], node_rows[node][0]) is None for m in cluster)
                    and not (apart and any(apart(node_rows[m], node_rows[node]) for m in cluster))):
                cluster.append(node)
                assigned[node] = True
                for nxt in neighbours[node]:
                    if not assigned[nxt] and nxt not in tried:
                        heapq.heappush(frontier, nxt)
        rows = sorted((r for node in cluster for r in node_rows[node]), key=position.__getitem__)
        if len(rows) < 2:
            left_out += 1  # similar to another memory, but it differs from every cluster it could join
            continue
        canonical, kept = rows[0], rows[1:]
        cluster_ids = sorted(ids[r] for r in rows)
        cluster_id = hashlib.sha256("\x1f".join(cluster_ids).encode()).hexdigest()[:16]
        out.extend((cluster_id, ids[canonical], ids[r], r) for r in kept)
    if not out:
        return pl.DataFrame(schema=schema_), left_out
    plan = pl.DataFrame(out, schema={"cluster": pl.String, "canonical": pl.String, "member": pl.String,
                                     "row": pl.Int64}, orient="row")
    return plan.join(how.select("row", pl.col("kind").alias("pass"), "score"), on="row", how="left").select(
        "cluster", "canonical", "member", "pass", "score"), left_out
