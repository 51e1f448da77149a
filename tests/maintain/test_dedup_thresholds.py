"""Dedup's numbers matter (issue 19): near-miss pairs on both sides of the semantic cosine (seed
004: > 0.90) and of the near pass's Jaccard (>= 0.6), with real MiniLM embeddings.

The labelled pair set (tests/data/dedup_pairs.json) has few "different" pairs that any pass would
ever consider, so a lowered threshold went unnoticed there. Here every pair is a candidate of the
pass it is meant for and sits in a known band: at the default policy the "X" / "X with one more
word" pairs stay apart, the paraphrases just above a threshold merge, and each decision flips when
the one threshold that governs it moves past the pair. "X" / "X and a new fact" pairs, and "X" /
"X with one new thing" (a noun, a WordNet compound: "jazz concerts", "green tea"), are kept
apart by the guard (issue 17), whatever the thresholds. Types keep the passes apart: a pair of two
types shares no type and no tag, so only the near pass can merge it.
"""

from __future__ import annotations

import pytest

from memory_lake.maintain.dedup import plan_dedup
from memory_lake.store.policy import Policy

from ..conftest import AS_OF, write_jsonl

# name -> (older text, newer text, type of the newer one): each pair in its own tenant, the older
# memory of type "fact".
PAIRS = {
    # "X" / "X and a new fact": two or more new content words, or a new item joined by "and": the
    # guard keeps them apart whatever the thresholds (issue 17)
    "jazz-band": ("User likes jazz", "User likes jazz and plays guitar in a band every weekend", "fact"),
    "jazz-guitar": ("User likes jazz", "User likes jazz and plays the guitar", "fact"),
    "email-updates": ("Frank prefers email over chat", "Frank prefers email over chat for status updates", "fact"),
    "cat-parrot": ("Bob owns a cat", "Bob owns a cat and a parrot", "preference"),
    "team-contractors": ("Erin manages the mobile team", "Erin manages the mobile team and hires contractors",
                         "todo"),
    # one new word that names a thing of its own: a noun ("concerts") or a word that makes one
    # WordNet compound with its neighbour ("green tea", "modern jazz"): the guard keeps them apart too
    "jazz-modern": ("User likes jazz", "User likes modern jazz", "fact"),
    "tea-green": ("User drinks tea", "User drinks green tea", "fact"),
    "jazz-concerts": ("User likes jazz", "User likes jazz concerts", "fact"),
    # "X" / "X with one modifier": more specific, one new adjective; the guard leaves these to the
    # thresholds, which keep them apart at the defaults
    "jazz-smooth": ("User likes jazz", "User likes smooth jazz", "fact"),
    "jazz-upbeat": ("User likes jazz", "User likes upbeat jazz", "fact"),
    "jazz-romantic": ("User likes jazz", "User likes romantic jazz", "fact"),
    "car-electric": ("User drives a car to work", "User drives an electric car to work", "preference"),
    # paraphrases just above a threshold: one memory
    "hiking": ("The user likes hiking", "User loves going hiking", "fact"),
    "review": ("Deploy the billing service after the review", "Deploy billing service after review", "todo"),
}


@pytest.fixture(scope="module")
def pairs_lake(tmp_path_factory):
    from memory_lake import Lake

    root = tmp_path_factory.mktemp("thresholds")
    lake = Lake.open(root / "lake", create=True)
    records = []
    for name, (older, newer, newer_type) in PAIRS.items():
        records += [{"id": f"{name}-old", "tenant": name, "content": older, "type": "fact",
                     "created_at": "2026-11-01T00:00:00Z"},
                    {"id": f"{name}-new", "tenant": name, "content": newer, "type": newer_type,
                     "created_at": "2026-11-02T00:00:00Z"}]
    lake.ingest([write_jsonl(root / "pairs.jsonl", records)], as_of=AS_OF)
    lake.index(as_of=AS_OF)
    return lake


def plan(lake, **dedup_overrides):
    policy = Policy().with_overrides({"dedup": dedup_overrides}) if dedup_overrides else Policy()
    with lake.reader() as con:
        found, _ = plan_dedup(con, policy)
    return found


def merged(lake, **dedup_overrides) -> dict[str, str]:
    """name -> the pass that merged its pair, for the pairs a run with these dedup settings merges."""
    found = {}
    for row in plan(lake, **dedup_overrides).merges.iter_rows(named=True):
        name = row["member"].rsplit("-", 1)[0]
        assert (row["canonical"], row["member"]) == (f"{name}-old", f"{name}-new")  # the older one is kept
        found[name] = row["pass"]
    return found


def scores(lake, **dedup_overrides) -> dict[str, float]:
    return {row["member"].rsplit("-", 1)[0]: row["score"]
            for row in plan(lake, **dedup_overrides).merges.iter_rows(named=True)}


@pytest.mark.models
def test_the_pairs_sit_where_the_thresholds_decide(pairs_lake):
    """The premise of the tests below, measured: each pair's cosine (MiniLM) and, for the pairs
    the near pass finds at all (MinHash LSH buckets), the Jaccard of their 3-gram sets. The
    "and a new fact" pairs never appear: the guard keeps them apart at any threshold."""
    cosine = scores(pairs_lake, passes=["semantic"], semantic_cosine=0.0)
    assert {k: round(v, 2) for k, v in cosine.items()} == {
        "jazz-smooth": 0.87, "jazz-upbeat": 0.86, "jazz-romantic": 0.8, "hiking": 0.92}
    jaccard = scores(pairs_lake, passes=["near"], near_jaccard=0.0)
    assert {k: round(v, 2) for k, v in jaccard.items()} == {"jazz-smooth": 0.47, "car-electric": 0.55, "review": 0.66}


def test_at_the_default_thresholds_only_the_paraphrases_merge(pairs_lake):
    assert merged(pairs_lake) == {"hiking": "semantic", "review": "near"}


@pytest.mark.parametrize(("cosine", "expected"), [
    (0.95, {}),                                                     # the paraphrase at 0.92 falls below
    (0.91, {"hiking": "semantic"}),
    (0.865, {"hiking": "semantic", "jazz-smooth": "semantic"}),     # 0.873 passes
    (0.85, {"hiking": "semantic", "jazz-smooth": "semantic", "jazz-upbeat": "semantic"}),
    (0.80, {"hiking": "semantic", "jazz-smooth": "semantic", "jazz-upbeat": "semantic"}),  # 0.799 falls below
    (0.79, {"hiking": "semantic", "jazz-smooth": "semantic", "jazz-upbeat": "semantic", "jazz-romantic": "semantic"}),
    (0.0, {"hiking": "semantic", "jazz-smooth": "semantic", "jazz-upbeat": "semantic", "jazz-romantic": "semantic"}),
])
def test_each_semantic_near_miss_flips_with_the_cosine_threshold(pairs_lake, cosine, expected):
    """Near pass off: only the cosine decides. Pairs of two types with no tag (car-electric,
    cat-parrot, team-contractors) never merge by meaning, however low the threshold; nor do the
    "and a new fact" pairs (the guard)."""
    assert merged(pairs_lake, passes=["semantic"], semantic_cosine=cosine) == expected


@pytest.mark.parametrize(("jaccard", "expected"), [
    (0.70, {}),                                                     # the rewording at 0.66 falls below
    (0.60, {"review": "near"}),
    (0.55, {"review": "near", "car-electric": "near"}),
    (0.45, {"review": "near", "car-electric": "near", "jazz-smooth": "near"}),
    (0.0, {"review": "near", "car-electric": "near", "jazz-smooth": "near"}),
])
def test_each_near_miss_flips_with_the_jaccard_threshold(pairs_lake, jaccard, expected):
    """Semantic pass off: only the Jaccard of the 3-gram sets decides."""
    assert merged(pairs_lake, passes=["near"], near_jaccard=jaccard) == expected


def test_a_pair_exactly_at_a_threshold(pairs_lake):
    """Near: Jaccard at least the threshold merges. Semantic (seed 004): a cosine above the
    threshold merges, one equal to it does not."""
    jaccard = scores(pairs_lake, passes=["near"], near_jaccard=0.0)["review"]
    assert merged(pairs_lake, passes=["near"], near_jaccard=jaccard) == {"review": "near"}
    cosine = scores(pairs_lake, passes=["semantic"], semantic_cosine=0.0)["hiking"]
    assert "hiking" not in merged(pairs_lake, passes=["semantic"], semantic_cosine=cosine)
    assert "hiking" in merged(pairs_lake, passes=["semantic"], semantic_cosine=cosine - 1e-6)


# The paraphrase of "hiking" (cosine 0.92, Jaccard 0.27: only the semantic pass can merge it) in
# scopes that differ in type and tags. Seed 004 compares memories that share their type or a tag.
TYPES_AND_TAGS = {
    "same-type": (("fact", None), ("fact", None), True),
    "two-types": (("fact", None), ("preference", None), False),
    "two-types-a-shared-tag": (("fact", ["outdoors", "weekend"]), ("preference", ["outdoors"]), True),
    "two-types-two-tags": (("fact", ["outdoors"]), ("preference", ["sports"]), False),
    "same-type-two-tags": (("fact", ["outdoors"]), ("fact", ["sports"]), True),
}


@pytest.mark.models
def test_the_semantic_pass_needs_a_shared_type_or_tag(lake, tmp_path):
    records = []
    for name, ((type_a, tags_a), (type_b, tags_b), _) in TYPES_AND_TAGS.items():
        records += [{"id": f"{name}-old", "tenant": name, "content": "The user likes hiking", "type": type_a,
                     "tags": tags_a, "created_at": "2026-11-01T00:00:00Z"},
                    {"id": f"{name}-new", "tenant": name, "content": "User loves going hiking", "type": type_b,
                     "tags": tags_b, "created_at": "2026-11-02T00:00:00Z"}]
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", records)], as_of=AS_OF)
    lake.index(as_of=AS_OF)
    assert merged(lake) == {name: "semantic" for name, (*_, merges) in TYPES_AND_TAGS.items() if merges}
