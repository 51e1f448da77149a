"""A scope that only lost memories since a closed settled plan is not planned again (settled.py):
the bucket pairing it rests on, which scopes a plan leaves open, and a night that skips such a
scope writing exactly the tables a night that plans it writes."""

from __future__ import annotations

import ast
import shutil
from itertools import combinations
from pathlib import Path

import polars as pl

from memory_lake.cli import main
from memory_lake.maintain.dedup import dedup, find_duplicates
from memory_lake.maintain.dedup import verdictcache
from memory_lake.maintain.dedup.candidates import WHOLE_BUCKET, _bucket_pairs
from memory_lake.store import fingerprint, resolve_as_of
from memory_lake.store.fingerprint import PACKAGE, source_files
from memory_lake.store.policy import Policy

from ..conftest import AS_OF, copy_lake, write_jsonl


def _buckets(members: list[list[int]]) -> pl.DataFrame:
    return pl.DataFrame({"members": members}).with_row_index("bucket")


def test_a_bucket_up_to_its_whole_size_pairs_every_two_members():
    """Up to WHOLE_BUCKET members, every two members of a bucket are a pair, so any of its members
    pair only as the whole bucket paired them; one more and a pair is missing, and its members are
    noted as crowded."""
    for size in range(2, WHOLE_BUCKET + 1):
        crowded: set[int] = set()
        pairs = _bucket_pairs(_buckets([list(range(size))]), crowded)
        assert sorted(pairs.rows()) == list(combinations(range(size), 2)) and not crowded, size
    crowded = set()
    bigger = _bucket_pairs(_buckets([list(range(WHOLE_BUCKET + 1)), [20, 21]]), crowded)
    assert len(bigger.filter(pl.col("a") < 20)) < len(list(combinations(range(WHOLE_BUCKET + 1), 2)))
    assert crowded == set(range(WHOLE_BUCKET + 1))


def _scopes(texts: dict[str, list[str]]) -> pl.DataFrame:
    return pl.DataFrame([{"id": f"{user}-{i}", "tenant": "t", "agent_id": "bot", "user_id": user, "type": "fact",
                          "tags": [], "content": text, "importance": 0.5, "created_at": AS_OF, "covered": True}
                         for user, group in texts.items() for i, text in enumerate(group)],
                        schema_overrides={"tags": pl.List(pl.String)})


def test_a_plan_leaves_open_the_scopes_some_of_their_memories_could_merge_in():
    """Open: a pair the guard let through (a rewording), two memories with one strict key, a bucket
    too large to pair whole (eight budgets that differ in their number share every bucket).
    Closed: a pair kept apart (another number), memories with no pair."""
    budgets = [f"The team budget for the offsite is ${500 + i} this year" for i in range(WHOLE_BUCKET + 2)]
    plan = find_duplicates(_scopes({
        "reworded": ["User prefers dark mode in every editor", "Note: user prefers dark mode in every editor"],
        "twins": ["Lunch is at noon on Fridays", "lunch is at noon on fridays!"],
        "crowded": budgets,
        "numbers": budgets[:2],
        "apart": ["The printer on floor 3 jams", "Lunch is at noon on Fridays"],
    }), None, Policy())
    assert sorted(plan.merges["member"].to_list()) == ["reworded-1", "twins-1"]
    assert sorted(plan.contradictions.select("a", "b").rows())[:1] == [("crowded-0", "crowded-1")]
    assert ("numbers-0", "numbers-1") in plan.contradictions.select("a", "b").rows()
    assert plan.open_scopes == {("t", "bot", user) for user in ("reworded", "twins", "crowded")}


def _records(texts: list[str]) -> list[dict]:
    return [{"id": f"m{i}", "tenant": "t", "agent_id": "bot", "user_id": "u", "content": text, "type": "fact",
             "created_at": "2026-11-20T09:00:00Z"} for i, text in enumerate(texts)]


def _tables(lake) -> dict[str, list]:
    with lake.reader() as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                                           "ORDER BY 1").fetchall()]
        return {name: sorted(map(repr, con.execute(f'SELECT * FROM "{name}"').fetchall())) for name in names}


def test_a_closed_scope_that_only_lost_memories_is_not_planned_and_the_tables_are_a_plans(lake, tmp_path, capsys):
    """Night 1 settles a closed scope (two budgets kept apart as a contradiction, other notes) and an
    open one (a crowded bucket). A memory of each leaves (dormant, as the tier rule leaves it), and
    night 2 does not plan the closed scope, plans the open one, writes every table as a night
    that plans both, and `memory-lake dedup` says so. When the memory of the closed scope comes back, night 3 plans it again."""
    closed = ["The team budget for the offsite is $500 this year", "The team budget for the offsite is $600 this year",
              "The printer on floor 3 jams", "Lunch is at noon on Fridays", "Standup moved to 9:30 on Mondays"]
    crowded = [f"The build server has {10 + i} cores and a queue" for i in range(WHOLE_BUCKET + 2)]
    records = _records(closed) + [{**r, "id": f"c{i}", "user_id": "v"} for i, r in enumerate(_records(crowded))]
    night = [resolve_as_of(f"2026-12-0{d}T03:00:00Z") for d in (1, 2, 3)]
    lake.ingest([write_jsonl(tmp_path / "in.jsonl", records)], as_of=night[0])
    first = dedup(lake, night[0], run_id="n1")
    assert first.counts["merged"] == 0 and first.counts["contradictions_filed"] > 1
    assert lake.sql("SELECT user_id, settled, members IS NOT NULL AS closed FROM dedup_scopes ORDER BY 1").rows() == [
        ("u", True, True), ("v", True, False)]
    with lake.writer() as con:
        con.execute("UPDATE memories SET status = 'dormant' WHERE id IN ('m1', 'c2')")
    kept, planned, told = (copy_lake(lake.root, tmp_path / name / "lake") for name in ("kept", "planned", "told"))
    with planned.writer() as con:
        con.execute("DELETE FROM dedup_scopes")  # plans every scope

    second, full = dedup(kept, night[1], run_id="n2"), dedup(planned, night[1], run_id="n2")
    assert (second.counts["scopes_settled_after_removals"], second.counts["examined"]) == (1, len(crowded) - 1)
    assert (full.counts["scopes_settled_after_removals"], full.counts["examined"]) == (0, len(closed) - 1 + len(crowded) - 1)
    assert second.counts["merged"] == full.counts["merged"] == 0
    assert _tables(kept) == _tables(planned)
    assert kept.sql("SELECT count(*) FROM dedup_verdicts WHERE 'm1' IN (a_memory_id, b_memory_id)").item() == 0

    assert main(["--lake", str(told.root), "dedup", "--as-of", night[1].isoformat()]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  1 scope(s) not planned, as since a night that merged nothing there they are unchanged (0) or only lost "
        "memories (1)"]

    with kept.writer() as con:  # the memory comes back: still one of the rows the closed plan read
        con.execute("UPDATE memories SET status = 'active' WHERE id = 'm1'")
    back = dedup(kept, night[2], run_id="n3")
    assert (back.counts["scopes_settled_after_removals"], back.counts["examined"]) == (0, len(closed))


# ---------------------------------------------------------------- what the kept verdicts depend on

# Names the guard imports from memory_lake that the fingerprint covers otherwise: Policy's [dedup]
# and [search] settings are in it (guard_fingerprint), not store's code.
_OUTSIDE = {"store": {"Policy"}}
# Calls that could load a module or a file of memory_lake by name, out of sight of the imports.
_LOADERS = {"import_module", "__import__", "files", "get_data", "open_text", "open_binary", "read_binary"}


def _dotted(path: Path) -> list[str]:
    """memory_lake/text/lexicon/__init__.py -> [text, lexicon]; memory_lake/text/tokens.py -> [text, tokens]."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _module(parts: list[str]) -> Path | None:
    base = PACKAGE.joinpath(*parts)
    return next((p for p in (base / "__init__.py", base.with_suffix(".py")) if p.is_file()), None)


def _imports(path: Path, top_only: bool = False):
    """(module parts, imported names, bound names) of each import of memory_lake in `path`, in
    functions too (the guard imports text/ lazily) unless `top_only`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _dotted(path) if path.name == "__init__.py" else _dotted(path)[:-1]
    for node in (tree.body if top_only else ast.walk(tree)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            yield base, [a.name for a in node.names], [a.asname or a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "memory_lake":
            yield node.module.split(".")[1:], [a.name for a in node.names], [a.asname or a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "memory_lake":
                    yield a.name.split(".")[1:], None, [a.asname or a.name]


def _files_opened(path: Path) -> tuple[set[Path], list[str]]:
    """The files below memory_lake/ that `path` opens by a path made from its own (``Path(__file__)
    .parent / "data" / "x.tsv"``; a folder stands for every file in it), and what it loads in a way
    this test cannot follow (a loader called with a name of memory_lake, a path it cannot work out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    opened, unknown = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "__file__":
            while isinstance(up := parents.get(node), ast.BinOp | ast.Attribute | ast.Subscript) or (
                    isinstance(up, ast.Call) and (up.func is node or ast.unparse(up.func) == "Path")):
                if isinstance(up, ast.Attribute) and up.attr not in {"parent", "parents", "resolve", "absolute"}:
                    break
                node = up
            try:
                found = Path(eval(compile(ast.Expression(node), str(path), "eval"), {"Path": Path, "__file__": str(path)}))
            except Exception:
                unknown.append(f"{path.relative_to(PACKAGE)}: {ast.unparse(node)}")
                continue
            if found.is_dir():
                opened |= {p.resolve() for p in found.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
            elif found.resolve().is_relative_to(PACKAGE):
                opened.add(found.resolve())
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in _LOADERS:
            first = node.args[0] if node.args else None  # a literal name, or an f-string's literal start
            first = first.values[0] if isinstance(first, ast.JoinedStr) and first.values else first
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) \
                    or first.value.startswith(("memory_lake", ".")):
                unknown.append(f"{path.relative_to(PACKAGE)}: {ast.unparse(node)}")
    return opened, unknown


def _guard_closure() -> tuple[set[Path], list[str]]:
    """The files of memory_lake the guard's verdict can depend on: guard.py and what it imports,
    directly or through another, and the files those open next to themselves (`_files_opened`);
    with what this walk cannot follow. A name imported from a package (``from ...text import
    lexicon, ENGLISH_STOP_WORDS``) reaches the package's __init__.py and, through the import there
    that binds it, only the module it comes from (text/lexicon/, text/tokenize.py): text/__init__.py
    also imports text/tokens.py, which defines the names it imports and nothing the guard reads."""
    reached, unknown, seen, read_whole = set(), [], set(), set()

    def whole(path: Path) -> None:
        if path in read_whole:
            return
        read_whole.add(path)
        reached.add(path)
        opened, cannot = _files_opened(path)
        reached.update(opened)
        unknown.extend(cannot)
        for parts, names, _ in _imports(path):
            names_from(parts, names)

    def names_from(parts: list[str], names: list[str] | None) -> None:
        if parts and parts[0] in _OUTSIDE and not parts[1:]:
            assert set(names or ["*"]) <= _OUTSIDE[parts[0]], f"the guard imports {names} from {parts[0]}"
            return
        path = _module(parts)
        assert path is not None, f"no module memory_lake.{'.'.join(parts)}"
        if names is None or path.name != "__init__.py" or "*" in names:
            return whole(path)
        reached.add(path)  # the package's __init__.py binds the names
        bound = {b: (p, n) for p, ns, bs in _imports(path, top_only=True) if ns for n, b in zip(ns, bs)}
        for name in names:
            if (*parts, name) in seen:
                continue
            seen.add((*parts, name))
            if _module([*parts, name]) is not None:
                whole(_module([*parts, name]))  # a submodule
            elif name in bound:
                names_from(bound[name][0], [bound[name][1]])
            else:
                whole(path)  # defined in __init__.py itself

    whole(PACKAGE / "maintain" / "dedup" / "guard.py")
    return reached, unknown


def _relative(paths) -> list[str]:
    return sorted(str(p.relative_to(PACKAGE)) for p in paths)


def test_the_verdicts_fingerprint_covers_every_module_the_guard_imports():
    """The kept verdicts hold while what the guard reads does not change: the fingerprint's files
    (verdictcache._SOURCES) are exactly guard.py, the modules it imports from memory_lake, directly
    or through another, name by name through a package's __init__.py (so text/ only in part, and
    Policy from store, whose settings the fingerprint holds), and the word lists they open."""
    reached, unknown = _guard_closure()
    assert unknown == []  # nothing loaded in a way this walk cannot follow
    assert {p.name for p in reached if p.parent == PACKAGE / "maintain" / "dedup"} == set(verdictcache.GUARD_MODULES)
    covered = set(source_files(verdictcache._SOURCES))
    assert _relative(reached - covered) == []  # each file the guard reads is in the fingerprint
    assert _relative(covered - reached) == []  # and nothing else is
    assert {"maintain/chat.py", "maintain/data/antonyms.tsv", "maintain/data/synonyms.tsv", "text/__init__.py",
            "text/lexicon/wordnet.py", "text/tokenize.py", "text/models.py"} <= set(_relative(reached))


def test_the_walk_finds_a_module_and_a_word_list_the_guard_reads():
    """The walk behind the test above sees what it must: dropping a module or a word list the guard
    reads from the sources leaves it uncovered, and a name imported through text/__init__.py
    reaches the module it comes from."""
    reached, _ = _guard_closure()
    for dropped in ("text/tokenize.py", "maintain/data/synonyms.tsv", "text/lexicon"):
        fewer = tuple(s for s in verdictcache._SOURCES if s != dropped)
        assert _relative(reached - set(source_files(fewer))) == _relative(source_files((dropped,)))
    assert (PACKAGE / "text" / "tokens.py") not in reached  # imported by text/__init__.py, never read by the guard


def test_the_verdicts_fingerprint_changes_with_what_the_guard_reads_only(tmp_path, monkeypatch):
    """A changed module or word list of the guard's judges every pair again; a change elsewhere in
    text/ (tokens.py, the token counts of budgets) or data/ (the summaries' cues) keeps the verdicts."""
    covered = _relative(source_files(verdictcache._SOURCES))
    assert "text/tokens.py" not in covered and {"text/tokenize.py", "maintain/dedup/guard.py"} <= set(covered)
    real = fingerprint.code_fingerprint(verdictcache._SOURCES, ())
    copy = tmp_path / "memory_lake"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "PACKAGE", copy)

    def now() -> str:
        return fingerprint.code_fingerprint.__wrapped__(verdictcache._SOURCES, ())

    assert now() == real
    for untouched in ("text/tokens.py", "text/worthy.py", "text/redact/apply.py", "maintain/data/summary_cues.tsv"):
        with (copy / untouched).open("a", encoding="utf-8") as f:
            f.write("\n# changed\n")
    assert now() == real
    seen = {real}
    for touched in ("text/lexicon/pairs.py", "maintain/data/synonyms.tsv", "maintain/chat.py"):
        with (copy / touched).open("a", encoding="utf-8") as f:
            f.write("\n# changed\n")
        assert now() not in seen, touched
        seen.add(now())
