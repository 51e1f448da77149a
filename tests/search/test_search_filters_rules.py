"""Scope and filters of a search: the exact refusals, the spellings ingest accepts, one row per
memory, session neighbours in a larger scope, and the per-process cache of loaded scopes."""

from __future__ import annotations

import math

import duckdb
import pytest

from memory_lake import InputError
from memory_lake.search.query import search
from memory_lake.search.scopeindex import SCOPES
from memory_lake.store.policy import Policy

from ..conftest import AS_OF, rows, write_jsonl

SCOPE = {"tenant": "acme", "agent_id": "bot", "user_id": "alice"}


@pytest.fixture(autouse=True)
def _content_only(request):
    """Scores over the contents alone (no creation-date terms), and an empty scope cache."""
    SCOPES.clear()
    if "lake" in request.fixturenames:
        request.getfixturevalue("lake").policy = Policy().with_overrides({"search": {"index_dates": False}})
    yield
    SCOPES.clear()


def _ingest(lake, path, records):
    report = lake.ingest([write_jsonl(path, records)], as_of="2026-11-30T00:00:00Z")
    assert report.as_dict()["quarantined"] == 0
    return report


def _ids(lake, query, **kw):
    return [r.id for r in search(lake, query, tenant="acme", mode="keyword", as_of=AS_OF, **kw)]


def _refusal(lake, **kw) -> str:
    with pytest.raises(InputError) as refused:
        search(lake, "dark", tenant="acme", mode="keyword", as_of=AS_OF, **kw)
    return str(refused.value)


def test_a_bad_filter_value_is_refused_with_the_filter_named_and_its_choices(lake, tmp_path):
    _ingest(lake, tmp_path / "a.jsonl", [SCOPE | {"id": "e1", "content": "dark mode", "tags": ["ui"]}])
    assert _refusal(lake, type="memo") == (
        "unknown type 'memo': use one of decision, event, fact, lesson, other, preference, summary, todo")
    assert _refusal(lake, tier="medium") == "unknown tier 'medium': use one of important, long_term, short_term, working"
    assert _refusal(lake, tag=[]) == "tag must be a tag or a list of tags, not []"
    assert _refusal(lake, tag=5) == "tag must be a tag or a list of tags, not 5"
    assert _refusal(lake, tag="") == "tag must be a tag or a list of tags, not ''"
    assert _refusal(lake, tag=["ui", ""]) == "tag must be a tag or a list of tags, not ['ui', '']"
    assert _refusal(lake, tag=["ui", 3]) == "tag must be a tag or a list of tags, not ['ui', 3]"
    assert _refusal(lake, tag={"ui": 1}) == "tag must be a tag or a list of tags, not {'ui': 1}"
    assert _refusal(lake, source=7) == "source must be text, not 7"
    assert _refusal(lake, context=["ctx-1"]) == "context must be text, not ['ctx-1']"
    assert _refusal(lake, until=20261101) == "until 20261101 is not an ISO 8601 timestamp"
    with pytest.raises(InputError) as refused:
        search(lake, "dark", tenant="acme", agent=7, as_of=AS_OF)
    assert str(refused.value) == "agent must be text, not int"
    with pytest.raises(InputError) as refused:
        search(lake, "dark", tenant="   ", as_of=AS_OF)
    assert str(refused.value) == "search needs a tenant: memories are searched per scope"
    assert not list(lake.events.glob("searches-*"))  # a refused search is not logged
    # the good forms of the same filters: a tuple of tags, a blank agent meaning "any agent"
    assert _ids(lake, "dark", tag=("ui",)) == ["e1"]
    assert [r.id for r in search(lake, "dark", tenant="acme", agent=" ", mode="keyword", as_of=AS_OF)] == ["e1"]


# Spellings a person types; ingest reads a tier or a type with case, hyphens, underscores and spaces
# not mattering, and a search filter must read them the same way.
TIER_SPELLINGS = {
    "long_term": ["long_term", "Long Term", "long-term", "LONG_TERM", " long  term ", "Long_-_Term", "longterm", "long"],
    "short_term": ["short_term", "Short Term", "short-term", "Short__Term", "shortterm", "short"],
    "working": ["working", "Work", "WORK_ING"],
}
TYPE_SPELLINGS = {"todo": ["todo", "To-Do", "to do", "TODOS", "task"], "preference": ["Preferences", "pref", "PREF_ERENCE"]}


def test_tier_and_type_spellings_are_read_as_ingest_reads_them(lake, tmp_path):
    records = [SCOPE | {"id": f"{tier}-{n}", "content": f"note {n}", "tier": spelling}
               for tier, spellings in TIER_SPELLINGS.items() for n, spelling in enumerate(spellings)]
    records += [SCOPE | {"id": f"{kind}-{n}", "content": f"plan {n}", "type": spelling, "tier": "working"}
                for kind, spellings in TYPE_SPELLINGS.items() for n, spelling in enumerate(spellings)]
    _ingest(lake, tmp_path / "a.jsonl", records)
    stored = {r["id"]: (r["tier"], r["type"]) for r in rows(lake, "SELECT id, tier, type FROM memories")}
    for tier, spellings in TIER_SPELLINGS.items():
        expected = sorted(f"{tier}-{n}" for n in range(len(spellings)))
        assert sorted(i for i, (t, _) in stored.items() if t == tier and i.startswith(tier)) == expected
        for spelling in spellings:
            assert sorted(_ids(lake, "note", tier=spelling, limit=50)) == expected, spelling
    for kind, spellings in TYPE_SPELLINGS.items():
        expected = sorted(f"{kind}-{n}" for n in range(len(spellings)))
        assert sorted(i for i, (_, t) in stored.items() if t == kind) == expected
        for spelling in spellings:
            assert sorted(_ids(lake, "plan", type=spelling, limit=50)) == expected, spelling


def test_a_memory_stored_twice_is_one_result(lake, tmp_path):
    """The memories table has no key; a row written twice (by hand, or a published file that
    holds it twice) is still one memory: the first in session and time order is the one scored."""
    _ingest(lake, tmp_path / "a.jsonl", [
        SCOPE | {"id": "m1", "content": "Blue bird on the wire", "created_at": "2026-11-01T09:00:00Z"},
        SCOPE | {"id": "m2", "content": "Red bird in the tree", "created_at": "2026-11-02T09:00:00Z"},
    ])
    with lake.writer() as con:
        con.execute("INSERT INTO memories SELECT * REPLACE ('Blue bird, blue sky' AS content, "
                    "created_at + INTERVAL 3 DAY AS created_at) FROM memories WHERE id = 'm1'")
    assert rows(lake, "SELECT count(*) AS n FROM memories WHERE id = 'm1'") == [{"n": 2}]
    found = search(lake, "blue bird", tenant="acme", mode="keyword", as_of=AS_OF)
    assert [(r.id, r.content) for r in found] == [("m1", "Blue bird on the wire"), ("m2", "Red bird in the tree")]
    assert _ids(lake, "sky") == []


def test_session_neighbours_are_the_memories_next_in_time_in_a_larger_scope(lake, tmp_path):
    """Rows stay in session and time order once loaded: each memory's document is itself and
    the one before and after it in its session, never a memory of another place or session."""
    words = ["apple", "brook", "cedar", "delta", "ember", "fjord", "grove", "heath", "inlet", "jetty"]
    records = []
    for s in range(3):
        for n, word in enumerate(words):
            # ingested out of order: the session order comes from created_at, not the file
            records.append(SCOPE | {"id": f"s{s}-{n:02d}", "content": f"{word}{s} said something", "session_id": f"s{s}",
                                    "created_at": f"2026-11-0{s + 1}T10:{59 - n:02d}:00Z"})
    _ingest(lake, tmp_path / "a.jsonl", records[::-1])
    lake.policy = Policy().with_overrides({"search": {"index_dates": False, "context_window": 1}})
    for s in range(3):
        for n, word in enumerate(words):
            # time order is the reverse of n: the neighbours of n are n - 1 and n + 1
            expected = sorted(f"s{s}-{m:02d}" for m in (n - 1, n, n + 1) if 0 <= m < len(words))
            assert sorted(_ids(lake, f"{word}{s}")) == expected, (s, word)


def test_a_kept_scope_answers_without_opening_the_lake_and_only_for_its_own_scope(lake, tmp_path):
    _ingest(lake, tmp_path / "a.jsonl", [
        SCOPE | {"id": "a1", "content": "blue bird", "tags": ["sky", "ui"]},
        SCOPE | {"id": "a2", "content": "red bird", "tags": ["ui"]},
        {"tenant": "globex", "agent_id": "bot", "id": "g1", "content": "green bird"},
    ])
    assert _ids(lake, "bird", tag=["sky", "ui"]) == ["a1"]
    assert [r.id for r in search(lake, "bird", tenant="globex", mode="keyword", as_of=AS_OF)] == ["g1"]
    assert len(SCOPES) == 2
    # the file open read-write in this process makes any read-only open of it fail: what answers
    # now comes from the scopes kept in this process, and only for the scope and filters kept
    blocker = duckdb.connect(str(lake.db_path))
    try:
        kept = search(lake, "bird", tenant="acme", mode="keyword", as_of=AS_OF, tag=["sky", "ui"])
        assert ([r.id for r in kept], kept.source, kept.notes) == (["a1"], "live", [])
        assert [r.id for r in search(lake, "bird", tenant="globex", mode="keyword", as_of=AS_OF)] == ["g1"]
        for other in ({"tag": "ui"}, {"agent": "bot"}):
            with pytest.raises(Exception):
                search(lake, "bird", tenant="acme", mode="keyword", as_of=AS_OF, **other)
    finally:
        blocker.close()
    assert _ids(lake, "bird", tag="ui") == ["a1", "a2"]
    assert len(SCOPES) == 3


def test_postings_of_an_older_tokenizer_are_not_read(tmp_path):
    """After a tokenizer change and before the next index run, the stored postings are from the
    old version: search tokenises that content again and reads none of the old terms."""
    from memory_lake import Lake

    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "memory-lake.toml").write_text('[search]\nmodel = "none"\nindex_dates = false\n')
    lake = Lake.open(tmp_path / "lake", create=True)
    _ingest(lake, tmp_path / "a.jsonl", [
        SCOPE | {"id": "m1", "content": "Blue bird on the wire"},
        SCOPE | {"id": "m2", "content": "Red bird in the blue tree"},
        SCOPE | {"id": "m3", "content": "Green frog"},
    ])

    def scores(query):
        return [(r.id, r.parts["keyword"]) for r in search(lake, query, tenant="acme", mode="keyword", as_of=AS_OF,
                                                           explain=True)]

    fresh = scores("blue bird")
    assert [i for i, _ in fresh] == ["m1", "m2"]
    assert lake.index(as_of=AS_OF).counts["tokenized"] == 3
    assert scores("blue bird") == fresh  # the index holds what search would tokenise
    with lake.writer() as con:  # what an older tokenizer version left: other terms, other counts
        con.execute("UPDATE keyword_docs SET tokenizer = 'v0'")
        con.execute("UPDATE postings SET tf = tf + 2")
        con.execute("INSERT INTO postings SELECT text_hash, 'old' || term, tf FROM postings")
    assert scores("blue bird") == fresh
    assert scores("oldblu oldbird") == []


def test_a_memory_without_a_single_word_is_a_document_of_length_zero(lake, tmp_path):
    """A memory of emoji and punctuation has no term: it still counts in BM25's N and in the mean
    document length, with length 0 (not 1), so the other memories score as over three documents
    of lengths 2, 2 and 0."""
    from memory_lake.text import tokenize

    texts = {"a1": "apple pie", "a2": "banana bread", "a3": "🙂🙂 !!!"}
    _ingest(lake, tmp_path / "s.jsonl", [{"id": i, "tenant": "acme", "content": t} for i, t in texts.items()])
    assert [len(tokenize(t)) for t in texts.values()] == [2, 2, 0]
    (found,) = search(lake, "apple", tenant="acme", mode="keyword", as_of=AS_OF, explain=True)
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    norm = 1.2 * (1 - 0.75 + 0.75 * 2 / (4 / 3))
    assert (found.id, found.parts["keyword"]) == ("a1", pytest.approx(idf * 2.2 / (1 + norm), rel=1e-12))
