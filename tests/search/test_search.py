"""Search (first form): keyword BM25 over a scope, filters, degradation note, log, busy reads."""

from __future__ import annotations

import json
import math

import pytest

from memory_lake import InputError, LakeBusy
from memory_lake.search.query import NOTE_NO_INDEX, SearchResult, SearchResults, search

from ..conftest import AS_OF, rows, write_jsonl


@pytest.fixture(autouse=True)
def _content_only(request):
    """The scores below are BM25 worked out by hand over the contents; the creation-date terms
    (`[search] index_dates`) have their own test."""
    from memory_lake.store.policy import Policy

    if "lake" in request.fixturenames:
        request.getfixturevalue("lake").policy = Policy().with_overrides({"search": {"index_dates": False}})

SCOPE = {"tenant": "acme", "agent_id": "bot", "user_id": "alice"}
ENGLISH = [
    {"id": "e1", "content": "Alice prefers dark mode in the editor", "tier": "long_term", "type": "preference",
     "tags": ["ui"], "importance": 0.8, "source": "chat", "created_at": "2026-11-01T09:00:00Z"},
    {"id": "e2", "content": "Dark roast coffee every morning", "type": "preference", "tags": ["food"],
     "created_at": "2026-11-10T09:00:00Z"},
    {"id": "e3", "content": "Deploy the billing service on Friday", "type": "todo", "tier": "working",
     "created_at": "2026-11-20T09:00:00Z"},
    {"id": "e4", "content": "Dark mode, dark theme, dark everything", "tags": ["ui", "theme"], "source": "import",
     "context_id": "ctx-1", "created_at": "2026-11-25T09:00:00Z"},
]


def _ingest(lake, tmp_path, records, name="snap.jsonl"):
    report = lake.ingest([write_jsonl(tmp_path / name, records)], as_of="2026-11-30T00:00:00Z")
    assert report.as_dict()["quarantined"] == 0
    return report


def _english(lake, tmp_path, extra=()):
    _ingest(lake, tmp_path, [SCOPE | r for r in ENGLISH] + list(extra))


def _ranked(results):
    return [(r.id, round(r.score, 4)) for r in results]


def _log_lines(lake, day="2026-11-30"):
    path = lake.events / f"searches-{day}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_english_ranking_is_bm25(lake, tmp_path):
    _english(lake, tmp_path)
    found = search(lake, "dark modes", tenant="acme", mode="keyword", as_of=AS_OF, explain=True)
    # Tokens: e1 alic prefer dark mod editor (5), e2 dark roast coffe morn (4),
    # e3 deploy bill servic friday (4), e4 dark mod dark them dark everyth (6); avgdl 19/4.
    # The query is "dark mod": df(dark) = 3, df(mod) = 2 of N = 4.
    idf_dark, idf_mod = math.log(1 + 1.5 / 3.5), math.log(1 + 2.5 / 2.5)
    norm_e1 = 1.2 * (1 - 0.75 + 0.75 * 5 / 4.75)
    raw_e1 = idf_dark * 2.2 / (1 + norm_e1) + idf_mod * 2.2 / (1 + norm_e1)
    assert _ranked(found) == [("e4", 1.0), ("e1", 0.8887), ("e2", 0.3297)]
    assert found[1].parts["keyword"] == pytest.approx(raw_e1, rel=1e-12)
    assert [round(r.parts["keyword"], 4) for r in found] == [1.1563, 1.0277, 0.3813]
    assert [r.parts["keyword_norm"] for r in found] == [r.score for r in found]
    assert (found.mode_used, found.notes, found.query) == ("keyword", [], "dark modes")


def test_as_dict_is_the_json_contract(lake, tmp_path):
    _english(lake, tmp_path)
    found = search(lake, "editor", tenant="acme", mode="keyword", as_of=AS_OF)
    assert isinstance(found, SearchResults) and isinstance(found[0], SearchResult) and len(found) == 1
    assert found.as_dict() == {
        "search_id": found.search_id,
        "mode_used": "keyword",
        "notes": [],
        "results": [{
            "id": "e1", "content": "Alice prefers dark mode in the editor", "tier": "long_term",
            "type": "preference", "score": 1.0, "tags": ["ui"], "created_at": "2026-11-01T09:00:00Z",
            "importance": 0.8, "source": "chat", "agent_id": "bot", "user_id": "alice",
            "conflict": False, "conflict_with": [], "status": "active",
        }],
    }
    assert len(found.search_id) == 32 and int(found.search_id, 16) >= 0
    explained = search(lake, "editor", tenant="acme", mode="keyword", as_of=AS_OF, explain=True).as_dict()
    assert explained["results"][0]["parts"] == {"keyword": pytest.approx(1.1786, abs=1e-4), "keyword_norm": 1.0}


def test_ties_sort_by_id_and_limit_cuts(lake, tmp_path):
    records = [SCOPE | {"id": i, "content": "blue widget here"} for i in ["m3", "m1", "m2"]]
    _ingest(lake, tmp_path, records + [SCOPE | {"id": "m0", "content": "other words"}])
    assert _ranked(search(lake, "widget", tenant="acme", mode="keyword", as_of=AS_OF)) == [
        ("m1", 1.0), ("m2", 1.0), ("m3", 1.0)]
    assert _ranked(search(lake, "widget", tenant="acme", mode="keyword", as_of=AS_OF, limit=2)) == [
        ("m1", 1.0), ("m2", 1.0)]
    with pytest.raises(InputError, match="limit must be a positive integer"):
        search(lake, "widget", tenant="acme", limit=0)


@pytest.mark.models
def test_chinese_queries(lake, tmp_path):
    _ingest(lake, tmp_path, [
        SCOPE | {"id": "z1", "content": "用户喜欢喝咖啡"},
        SCOPE | {"id": "z2", "content": "项目截止日期是下周五"},
        SCOPE | {"id": "z3", "content": "用户偏好深色模式"},
    ])
    assert _ranked(search(lake, "咖啡", tenant="acme", mode="keyword", as_of=AS_OF)) == [("z1", 1.0)]
    assert _ranked(search(lake, "截止日期", tenant="acme", mode="keyword", as_of=AS_OF)) == [("z2", 1.0)]
    # 用户 is in two of three memories, 深色 in one: z3 first.
    assert _ranked(search(lake, "用户的深色模式", tenant="acme", mode="keyword", as_of=AS_OF)) == [
        ("z3", 1.0), ("z1", 0.1933)]
    assert _ranked(search(lake, "下雨", tenant="acme", mode="keyword", as_of=AS_OF)) == []
    # hybrid: MiniLM does not cover Chinese, the multilingual model does, and the notes say so
    lake.index(as_of=AS_OF)
    found = search(lake, "咖啡", tenant="acme", as_of=AS_OF)
    assert (found.mode_used, [r.id for r in found]) == ("hybrid", ["z1"])
    assert found.notes == ["semantic part: use-multilingual-v3 for 3 memories (all-MiniLM-L6-v2 does not cover "
                           "the query's language (100% unknown tokens))"]
    # without the multilingual model, MiniLM's weight moves to keyword, and the notes say so
    lake.policy = lake.policy.with_overrides({"search": {"multilingual_model": "none"}})
    found = search(lake, "咖啡", tenant="acme", as_of=AS_OF)
    assert (found.mode_used, [r.id for r in found]) == ("hybrid", ["z1"])
    assert found.notes == ["the embedding model does not cover the query's language (100% unknown tokens); "
                           "its semantic weight moved to keyword"]


@pytest.mark.models
def test_scope_isolation(lake, tmp_path):
    _ingest(lake, tmp_path, [
        {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "id": "a1", "content": "Quarterly budget review"},
        {"tenant": "acme", "agent_id": "bot", "user_id": "bob", "id": "a2", "content": "Quarterly budget review"},
        {"tenant": "acme", "agent_id": "ops", "user_id": "alice", "id": "a3", "content": "Quarterly budget review"},
        {"tenant": "globex", "agent_id": "bot", "user_id": "alice", "id": "g1", "content": "Quarterly budget review"},
    ])
    ids = lambda **scope: [r.id for r in search(lake, "budget", as_of=AS_OF, **scope)]  # noqa: E731
    assert ids(tenant="acme") == ["a1", "a2", "a3"]
    assert ids(tenant="globex") == ["g1"]
    assert ids(tenant="acme", agent="bot") == ["a1", "a2"]
    assert ids(tenant="acme", user="alice") == ["a1", "a3"]
    assert ids(tenant="acme", agent="bot", user="alice") == ["a1"]
    with pytest.raises(InputError, match="unknown tenant 'initech': known tenants: acme, globex"):
        ids(tenant="initech")
    assert {r.tenant for r in search(lake, "budget", tenant="acme", as_of=AS_OF)} == {"acme"}
    with pytest.raises(InputError, match="search needs a tenant"):
        search(lake, "budget", tenant="")


@pytest.mark.models
def test_filters(lake, tmp_path):
    _english(lake, tmp_path)
    ids = lambda query="dark", **kw: [r.id for r in search(lake, query, tenant="acme", as_of=AS_OF, **kw)]  # noqa: E731
    # "dark" alone: e4 has it three times; e2 is shorter than e1, so it ranks above.
    assert ids() == ["e4", "e2", "e1"]
    assert ids(tier="long_term") == ["e1"]
    assert ids(tier="Long-Term") == ["e1"]  # the tolerant spellings of ingest
    assert ids(tier="short_term") == ["e4", "e2"]
    assert ids(type="preference") == ["e2", "e1"]
    assert ids(type="preferences") == ["e2", "e1"]
    assert ids(source="import") == ["e4"]
    assert ids(tag="ui") == ["e4", "e1"]
    assert ids(tag=["ui", "theme"]) == ["e4"]
    assert ids(context="ctx-1") == ["e4"]
    assert ids(since="2026-11-10T09:00:00Z") == ["e4", "e2"]  # since is inclusive
    assert ids(until="2026-11-10T09:00:00Z") == ["e1"]  # until is exclusive
    assert ids(since=AS_OF.replace(day=2), until="2026-11-24") == ["e2"]
    assert ids(tier=None, tag=None) == ["e4", "e2", "e1"]  # None means "not given"
    assert ids("billing", tier="working", type="todo") == ["e3"]


def test_bad_input_is_an_input_error(lake, tmp_path):
    _english(lake, tmp_path)
    with pytest.raises(InputError, match=r"unknown search filter colour: use tier, type, source, tag, context, since, until"):
        search(lake, "dark", tenant="acme", colour="red")
    with pytest.raises(InputError, match=r"unknown search mode 'fuzzy': use one of keyword, semantic, hybrid"):
        search(lake, "dark", tenant="acme", mode="fuzzy")
    with pytest.raises(InputError, match="unknown tier 'medium'"):
        search(lake, "dark", tenant="acme", tier="medium")
    with pytest.raises(InputError, match="since 'yesterday' is not an ISO 8601 timestamp"):
        search(lake, "dark", tenant="acme", since="yesterday")
    assert not list(lake.events.glob("searches-*"))  # a refused search is not logged


@pytest.mark.models
def test_inactive_and_merged_are_excluded_unless_asked(lake, tmp_path):
    _ingest(lake, tmp_path, [
        SCOPE | {"id": "live", "content": "Invoice template v2"},
        SCOPE | {"id": "old", "content": "Invoice template v1", "status": "archived"},
        SCOPE | {"id": "sleep", "content": "Invoice template draft", "status": "dormant"},
        SCOPE | {"id": "both", "content": "Invoice template disputed", "status": "conflicted"},
        SCOPE | {"id": "dup", "content": "Invoice template v2 copy"},
    ])
    with lake.writer() as con:  # a merge is a later feature; set its marker directly
        con.execute("UPDATE memories SET merged_into = 'live' WHERE id = 'dup'")
    assert [r.id for r in search(lake, "invoice", tenant="acme", as_of=AS_OF)] == ["both", "live"]
    # Equal lengths tie and sort by id; "dup" has one token more, so it scores lower.
    found = search(lake, "invoice", tenant="acme", as_of=AS_OF, include_inactive=True)
    assert [(r.id, r.status, r.resting) for r in found] == [
        ("both", "conflicted", False), ("live", "active", False), ("old", "archived", True),
        ("sleep", "dormant", True), ("dup", "active", False)]
    assert [r["status"] for r in found.as_dict()["results"]] == ["conflicted", "active", "archived", "dormant", "active"]


@pytest.mark.models
def test_semantic_and_hybrid_need_the_index_and_say_so(lake, tmp_path):
    _english(lake, tmp_path)
    for mode in ("semantic", "hybrid", "HYBRID"):
        found = search(lake, "coffee", tenant="acme", mode=mode, as_of=AS_OF)
        assert [r.id for r in found] == ["e2"] and found.notes[0] == NOTE_NO_INDEX
    assert search(lake, "coffee", tenant="acme", mode="semantic", as_of=AS_OF).mode_used == "keyword"
    lake.index(as_of=AS_OF)
    semantic = search(lake, "dark mode", tenant="acme", mode="semantic", as_of=AS_OF, explain=True)
    # only memories with a raw cosine >= hit_cosine come back: the two about dark mode, not the dark coffee
    assert (semantic.mode_used, semantic.notes, [r.id for r in semantic]) == ("semantic", [], ["e4", "e1"])
    assert semantic[0].parts["semantic"] > semantic[1].parts["semantic"] >= lake.policy.search.hit_cosine
    hybrid = search(lake, "coffee", tenant="acme", as_of=AS_OF, explain=True)
    assert (hybrid.mode_used, hybrid.notes, hybrid[0].id) == ("hybrid", [], "e2")
    parts = hybrid[0].parts
    weights = lake.policy.search
    assert hybrid[0].score == pytest.approx(weights.keyword_weight * parts["keyword_norm"] + weights.semantic_weight
                                            * parts["semantic_norm"] + weights.recency_weight * parts["recency"]
                                            + weights.importance_weight * parts["importance"])
    assert _log_lines(lake)[-1]["mode_used"] == "hybrid"


def test_no_model_degrades_to_keyword_and_says_so(tmp_path):
    from memory_lake import Lake

    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "memory-lake.toml").write_text('[search]\nmodel = "none"\n')
    lake = Lake.open(tmp_path / "lake", create=True)
    _english(lake, tmp_path)
    found = search(lake, "coffee", tenant="acme", mode="semantic", as_of=AS_OF)
    assert (found.mode_used, [r.id for r in found]) == ("keyword", ["e2"])
    assert found.notes == [NOTE_NO_INDEX]


@pytest.mark.models
def test_default_mode_is_hybrid(lake, tmp_path):
    _english(lake, tmp_path)
    assert search(lake, "coffee", tenant="acme", as_of=AS_OF).mode_used == "hybrid"
    assert _log_lines(lake)[0]["mode"] == "hybrid"


def test_empty_queries_and_no_matches(lake, tmp_path):
    _english(lake, tmp_path)
    empty = search(lake, "  ", tenant="acme", mode="keyword", as_of=AS_OF)
    assert (list(empty), empty.notes) == ([], ["the query is empty; nothing to search for"])
    stop = search(lake, "the and of, was!", tenant="acme", mode="keyword", as_of=AS_OF)
    assert (list(stop), stop.notes) == ([], ["the query has no searchable words (only stop words or punctuation)"])
    none = search(lake, "kubernetes", tenant="acme", mode="keyword", as_of=AS_OF)
    assert (list(none), none.notes, none.as_dict()["results"]) == ([], [
        "no memory matched 'kubernetes' in scope tenant acme (none shares a word with the query); 4 memories searched"],
        [])
    assert [(line["query"], line["result_ids"], line["keyword_match"]) for line in _log_lines(lake)] == [
        ("  ", [], False), ("the and of, was!", [], False), ("kubernetes", [], False)]


@pytest.mark.models
def test_each_search_appends_one_log_line(lake, tmp_path):
    _english(lake, tmp_path)
    first = search(lake, "dark mode", tenant="acme", agent="bot", mode="semantic", as_of="2026-11-30T08:15:00Z",
                   tag="ui", since="2026-11-01T00:00:00+02:00")
    second = search(lake, "kubernetes", tenant="acme", as_of="2026-12-01T00:00:01Z")
    [line] = _log_lines(lake, "2026-11-30")
    assert line.pop("search_id") == first.search_id
    assert line == {
        "ts": "2026-11-30T08:15:00Z",
        "tenant": "acme",
        "agent_id": "bot",
        "user_id": None,
        "query": "dark mode",
        "mode": "semantic",
        "mode_used": "keyword",
        "filters": {"tag": "ui", "since": "2026-10-31T22:00:00Z"},
        "result_ids": ["e4", "e1"],
        "raw_scores": [pytest.approx(0.4568, abs=1e-4), pytest.approx(0.3787, abs=1e-4)],
        "keyword_match": True,
        "semantic_match": False,
    }
    [other] = _log_lines(lake, "2026-12-01")
    assert (other["search_id"], other["result_ids"], other["raw_scores"], other["keyword_match"]) == (
        second.search_id, [], [], False)
    # Each line is a whole JSON document ending in a newline.
    assert (lake.events / "searches-2026-11-30.jsonl").read_bytes().endswith(b"}\n")


def test_a_search_made_to_measure_search_quality_is_not_logged(lake, tmp_path):
    """Issue 39 (05_search_quality): an analyst's evaluation searches stay out of events/ and so out
    of the hit rate; the results are those of a logged search."""
    _english(lake, tmp_path)
    measured = search(lake, "dark mode", tenant="acme", mode="keyword", as_of=AS_OF, log=False)
    assert not list(lake.events.glob("searches-*.jsonl"))
    logged = search(lake, "dark mode", tenant="acme", mode="keyword", as_of=AS_OF)
    assert [r.as_dict() for r in measured] == [r.as_dict() for r in logged] != []
    assert [line["search_id"] for line in _log_lines(lake)] == [logged.search_id]


@pytest.mark.models
def test_many_searches_append_whole_lines(lake, tmp_path):
    _english(lake, tmp_path)
    ids = [search(lake, "dark", tenant="acme", as_of=AS_OF).search_id for _ in range(5)]
    assert [line["search_id"] for line in _log_lines(lake)] == ids


@pytest.mark.models
def test_query_pii_is_redacted_before_logging_and_matches_placeholders(lake, tmp_path):
    _ingest(lake, tmp_path, [
        SCOPE | {"id": "p1", "content": "Alice's phone is 13812345678"},
        SCOPE | {"id": "p2", "content": "Bob's phone is 13987654321"},
    ])
    [stored] = rows(lake, "SELECT content FROM memories WHERE id = 'p1'")
    placeholder = stored["content"].removeprefix("Alice's phone is ")
    assert placeholder.startswith("[PHONE:")
    found = search(lake, "who has 138-1234-5678", tenant="acme", as_of=AS_OF)
    assert ([r.id for r in found], found.query) == (["p1"], f"who has {placeholder}")
    text = (lake.events / "searches-2026-11-30.jsonl").read_text(encoding="utf-8")
    assert "5678" not in text and placeholder in text


def test_search_while_busy_answers_from_the_published_version(lake, tmp_path):
    _english(lake, tmp_path)
    version = lake.exports / "v1"
    version.mkdir(parents=True)
    lake.sql("SELECT * FROM memories").write_parquet(version / "memories.parquet")
    with lake.writer(purpose="nightly run"):
        with pytest.raises(LakeBusy, match="nothing is published yet"):
            search(lake, "dark", tenant="acme", mode="keyword", as_of=AS_OF)
        (lake.exports / "CURRENT").symlink_to("v1")
        found = search(lake, "dark mode", tenant="acme", mode="keyword", as_of=AS_OF, tag="ui")
        assert _ranked(found) == [("e4", 1.0), ("e1", 0.8291)]
        # v1 was published without the conflicts table: no crash, no contradiction marker, a note
        assert found.notes == ["the lake is busy (a run holds it); answered from published v1",
                               "published v1 has no conflicts table: results are not marked as sides of open "
                               "contradictions (a conflicted status still is)"]
        assert found.source == "published v1"
        # a scope the published version lacks (ingested since, or a typo: names cannot be checked now)
        newer = search(lake, "dark mode", tenant="globex", mode="keyword", as_of=AS_OF)
        assert (list(newer), newer.notes[-1]) == ([], (
            "no memory of scope tenant globex is in published v1, which this search read because a run holds the "
            "lake (its names cannot be checked meanwhile): memories ingested since that publish become searchable "
            "when the run ends"))
        # A query with PII still gets redacted while busy (salts are not published: a one-off salt).
        busy = search(lake, "call 13812345678", tenant="acme", mode="keyword", as_of=AS_OF)
        assert busy.query.startswith("call [PHONE:") and list(busy) == []
    assert [line["result_ids"] for line in _log_lines(lake)] == [["e4", "e1"], [], []]
    assert "13812345678" not in (lake.events / "searches-2026-11-30.jsonl").read_text(encoding="utf-8")
    live = search(lake, "dark mode", tenant="acme", mode="keyword", as_of=AS_OF, tag="ui")
    assert (live.notes, live.source, _ranked(live)) == ([], "live", [("e4", 1.0), ("e1", 0.8291)])


def test_keyword_matches_a_memory_with_its_session_neighbours(lake, tmp_path):
    from memory_lake.store.policy import Policy

    session = [("s1-1", "Melanie: What did you do last weekend?", "s1", 0), ("s1-2", "Caroline: I went hiking.", "s1", 1),
               ("s1-3", "Melanie: Sounds fun!", "s1", 2), ("s2-1", "Caroline: I baked bread.", "s2", 0)]
    _ingest(lake, tmp_path, [SCOPE | {"id": i, "content": c, "session_id": sid, "created_at": f"2026-11-01T10:00:0{n}Z"}
                             for i, c, sid, n in session])
    # "weekend" is only in s1-1; with one neighbour each side, the reply s1-2 matches too,
    # and what comes back is the memories themselves; the other session does not
    assert sorted(r.id for r in search(lake, "weekend", tenant="acme", mode="keyword", as_of=AS_OF)) == [
        "s1-1", "s1-2"]
    lake.policy = Policy().with_overrides({"search": {"context_window": 0}})
    assert [r.id for r in search(lake, "weekend", tenant="acme", mode="keyword", as_of=AS_OF)] == ["s1-1"]


def test_a_query_that_names_a_date_meets_the_memories_of_that_date(lake, tmp_path):
    from memory_lake.store.policy import Policy

    _ingest(lake, tmp_path, [SCOPE | {"id": "may", "content": "Melanie painted a sunrise", "created_at": "2023-05-08T10:00:00Z"},
                             SCOPE | {"id": "july", "content": "Melanie painted a lake", "created_at": "2023-07-02T10:00:00Z"}])
    lake.policy = Policy()  # index_dates on, as shipped
    found = search(lake, "What did Melanie paint in May 2023?", tenant="acme", mode="keyword", as_of=AS_OF, explain=True)
    assert [r.id for r in found] == ["may", "july"]
    lake.policy = Policy().with_overrides({"search": {"index_dates": False}})
    tied = search(lake, "What did Melanie paint in May 2023?", tenant="acme", mode="keyword", as_of=AS_OF, explain=True)
    assert tied[0].parts["keyword"] == tied[1].parts["keyword"]


# ------------------------------------------------------------------ issue 11: results an agent can trust
UNRELATED = ["Deploy the billing service on Friday", "Dentist appointment next Tuesday at 3pm",
             "Bob's birthday is on March 3rd", "The quarterly report is due at the end of the month",
             "Prefers a window seat on long flights", "Allergic to peanuts",
             "Uses Python 3.12 for the data pipeline", "Weekly sync with the sales team on Mondays"]


@pytest.mark.models
def test_a_word_most_memories_hold_admits_no_memory_alone(lake, tmp_path):
    """A stranger asked "where does the user live" and got 9 of 10 memories: every one says "User".
    With a cosine to judge by, a word more than half the scope holds still scores but admits no
    memory by itself; keyword mode keeps every word (it has no other evidence)."""
    texts = ["User lives in Hangzhou near the West Lake", "Remind the user to renew the passport",
             "User prefers green tea in the morning", "User's daughter plays the violin",
             "User drives to work on Mondays", "User is allergic to peanuts"]
    _ingest(lake, tmp_path, [SCOPE | {"id": f"u{i}", "content": c} for i, c in enumerate(texts, 1)])
    lake.index(as_of=AS_OF)
    found = search(lake, "where does the user live", tenant="acme", as_of=AS_OF)
    assert (found.mode_used, [r.id for r in found]) == ("hybrid", ["u1"])
    # the same word where fewer than half the memories hold it is evidence again
    found = search(lake, "passport renewal for the user", tenant="acme", mode="hybrid", as_of=AS_OF)
    assert [r.id for r in found][:1] == ["u2"] and "u5" not in [r.id for r in found]
    assert len(search(lake, "user", tenant="acme", mode="keyword", as_of=AS_OF).results) == 6


@pytest.mark.models
def test_nothing_relevant_gives_no_results_and_says_why(lake, tmp_path):
    """11.12: "dark mode" over eight unrelated memories returned all eight at ~0.27 (hybrid)."""
    _ingest(lake, tmp_path, [SCOPE | {"id": f"u{i}", "content": c} for i, c in enumerate(UNRELATED, 1)])
    lake.index(as_of=AS_OF)
    for mode, why in (("hybrid", "none shares a word with the query (besides words most memories hold) or has a "
                                 "cosine >= 0.35 to it"),
                      ("semantic", "none has a cosine >= 0.35 to the query"),
                      ("keyword", "none shares a word with the query")):
        found = search(lake, "dark mode", tenant="acme", mode=mode, as_of=AS_OF)
        assert (found.results, found.mode_used, found.notes, found.searched) == (
            [], mode, [f"no memory matched 'dark mode' in scope tenant acme ({why}); 8 memories searched"], 8)
    scoped = search(lake, "dark mode", tenant="acme", agent="bot", user="alice", tag="ui", as_of=AS_OF)
    assert scoped.notes == ["no memory to search in scope tenant acme, agent bot, user alice with tag=ui: "
                            "none is active or conflicted and passes the filters"]
    assert [line["result_ids"] for line in _log_lines(lake)] == [[], [], [], []]
    # one memory that is about dark mode: it alone comes back, in every mode
    _ingest(lake, tmp_path, [SCOPE | {"id": "dark", "content": "User prefers dark mode in the editor"}], name="more.jsonl")
    lake.index(as_of=AS_OF)
    for mode in ("hybrid", "semantic", "keyword"):
        found = search(lake, "dark mode", tenant="acme", mode=mode, as_of=AS_OF)
        assert ([r.id for r in found], found.notes, found.searched) == (["dark"], [], 9)


def test_results_attribute_matches_the_json(lake, tmp_path):
    """11.12: `SearchResults` had no `.results` although the JSON has "results"."""
    _english(lake, tmp_path)
    found = search(lake, "dark", tenant="acme", mode="keyword", as_of=AS_OF)
    assert [r.id for r in found.results] == ["e4", "e2", "e1"] == [r.id for r in found]  # still a list
    assert [r.as_dict() for r in found.results] == found.as_dict()["results"]
    assert all(isinstance(r, SearchResult) for r in found.results) and found[0] is found.results[0]


def _contradicting(lake, tmp_path):
    """Two memories that contradict (dark vs light), each with a 16-character id, and unrelated ones."""
    _ingest(lake, tmp_path, [SCOPE | {"id": "acme-pref-dark-1", "content": "User prefers dark mode in the editor",
                                      "type": "preference", "tier": "long_term"},
                             SCOPE | {"id": "acme-pref-lite-2", "content": "User prefers light mode in the editor",
                                      "type": "preference"},
                             SCOPE | {"id": "acme-note-x", "content": "Escape test: the editor shows [/x] literally"}])


def test_both_sides_of_a_contradiction_carry_the_marker(lake, tmp_path):
    """11.3: both sides of an open contradiction carry the marker and the other side's id, also when
    the contradiction is queued after a first search of the (cached) scope."""
    _contradicting(lake, tmp_path)
    before = search(lake, "editor mode", tenant="acme", mode="keyword", as_of=AS_OF)
    assert [(r.id, r.conflict, r.conflict_with) for r in before] == [
        ("acme-pref-dark-1", False, []), ("acme-pref-lite-2", False, []), ("acme-note-x", False, [])]
    report = lake.dedup(as_of=AS_OF)
    assert report.counts["contradictions_filed"] == 1
    after = search(lake, "editor mode", tenant="acme", mode="keyword", as_of=AS_OF)
    assert [(r.id, r.conflict, r.conflict_with) for r in after] == [
        ("acme-pref-dark-1", True, ["acme-pref-lite-2"]), ("acme-pref-lite-2", True, ["acme-pref-dark-1"]),
        ("acme-note-x", False, [])]
    assert [(r["id"], r["conflict"], r["conflict_with"]) for r in after.as_dict()["results"]] == [
        ("acme-pref-dark-1", True, ["acme-pref-lite-2"]), ("acme-pref-lite-2", True, ["acme-pref-dark-1"]),
        ("acme-note-x", False, [])]
    # resolving it (keep both values) clears the marker on the next search
    (conflict_id,) = lake.conflicts()["conflict_id"].to_list()
    lake.resolve_conflict(conflict_id, "lake", as_of=AS_OF)
    assert [r.conflict for r in search(lake, "editor mode", tenant="acme", mode="keyword", as_of=AS_OF)] == [
        False, False, False]


@pytest.mark.models
def test_a_conflicted_memory_is_marked_without_a_partner(lake, tmp_path):
    _ingest(lake, tmp_path, [SCOPE | {"id": "both", "content": "Invoice template disputed", "status": "conflicted"},
                             SCOPE | {"id": "live", "content": "Invoice template v2"}])
    assert [(r.id, r.conflict, r.conflict_with) for r in search(lake, "invoice", tenant="acme", as_of=AS_OF)] == [
        ("both", True, []), ("live", False, [])]


def test_while_busy_the_marker_comes_from_the_published_conflicts(lake, tmp_path):
    _contradicting(lake, tmp_path)
    lake.dedup(as_of=AS_OF)
    version = lake.exports / "v1"
    (version / "tables").mkdir(parents=True)
    lake.sql("SELECT * FROM memories").write_parquet(version / "memories.parquet")
    lake.sql("SELECT * FROM conflicts").write_parquet(version / "tables" / "conflicts.parquet")
    (lake.exports / "CURRENT").symlink_to("v1")
    with lake.writer(purpose="nightly run"):
        found = search(lake, "editor mode", tenant="acme", mode="keyword", as_of=AS_OF)
    assert found.notes == ["the lake is busy (a run holds it); answered from published v1"]
    assert [(r.id, r.conflict_with) for r in found] == [
        ("acme-pref-dark-1", ["acme-pref-lite-2"]), ("acme-pref-lite-2", ["acme-pref-dark-1"]), ("acme-note-x", [])]


# ------------------------------------------------------------------ the command's human output
def _cli(capsys, monkeypatch, *args, width=80):
    from rich.console import Console

    from memory_lake import cli
    from memory_lake.cli import search as cli_search

    monkeypatch.setattr(cli_search, "out", Console(soft_wrap=True, width=width))
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_human_output_shows_full_ids_scope_conflicts_and_escapes_content(lake, tmp_path, capsys, monkeypatch):
    """11.12 / 11.3: the table at 100 columns keeps every 16-character id whole, shows the scope,
    tier, type, score, the conflict mark and the other side; content `[/x]` is printed as is."""
    _contradicting(lake, tmp_path)
    lake.dedup(as_of=AS_OF)
    code, out, err = _cli(capsys, monkeypatch, "--lake", str(lake.root), "search", "editor mode", "--tenant", "acme",
                          "--mode", "keyword", width=100)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    header = next(line for line in lines if " id " in f" {line} ")
    assert header.split() == ["id", "scope", "tier", "type", "score", "!", "content"]
    rows_ = {line.split()[0]: line for line in lines if line.strip().startswith("acme-")}
    assert set(rows_) == {"acme-pref-dark-1", "acme-pref-lite-2", "acme-note-x"}
    assert rows_["acme-pref-dark-1"].split()[:2] + rows_["acme-pref-dark-1"].split()[3:7] == [
        "acme-pref-dark-1", "acme", "long_term", "preference", "1.000", "!"]
    assert rows_["acme-pref-lite-2"].split()[3:7] == ["short_term", "preference", "1.000", "!"]
    assert rows_["acme-note-x"].split()[3:6] == ["short_term", "other", "0.211"]
    assert "bot /" in out and "alice" in out and "[/x]" in out
    assert "3 result(s) of 3 memories searched" in lines
    assert "! acme-pref-dark-1 contradicts acme-pref-lite-2 (memory-lake conflicts list)" in lines
    assert "! acme-pref-lite-2 contradicts acme-pref-dark-1 (memory-lake conflicts list)" in lines
    # at 80 columns (piped) every search prints blocks, whatever the ids: the same conflict marks
    code, out, err = _cli(capsys, monkeypatch, "--lake", str(lake.root), "search", "editor mode", "--tenant", "acme",
                          "--mode", "keyword")
    lines = out.splitlines()
    assert lines[1] == " 1. acme-pref-dark-1  score 1.000  long_term / preference  acme / bot / alice  !"
    assert "    Escape test: the editor shows [/x] literally" in lines
    assert "! acme-pref-dark-1 contradicts acme-pref-lite-2 (memory-lake conflicts list)" in lines


def test_human_output_with_derived_ids_at_80_columns_prints_one_block_per_result(lake, tmp_path, capsys, monkeypatch):
    """A memory ingested without id gets a 34-character one (m_ + 32 hex): at 80 columns (piped) a
    table left the content 12 columns, Chinese text 6 characters a line. Each result is a block
    then: rank, full id, score, tier / type, scope, and the content whole on the next line."""
    _ingest(lake, tmp_path, [{"tenant": "acme", "agent_id": "bot", "user_id": "alice",
                              "content": "用户住在杭州，周末常去西湖边跑步"}])
    code, out, err = _cli(capsys, monkeypatch, "--lake", str(lake.root), "search", "杭州", "--tenant", "acme",
                          "--mode", "keyword")
    [memory_id] = lake.sql("SELECT id FROM memories")["id"].to_list()
    lines = out.splitlines()
    assert (code, len(memory_id)) == (0, 34)
    assert lines[1:] == [f" 1. {memory_id}  score 1.000  short_term / other  acme / bot / alice",
                         "    用户住在杭州，周末常去西湖边跑步", "1 result(s) of 1 memories searched"]
    assert lines[0].startswith("search ") and lines[0].endswith(" (keyword)")
    # a wide terminal keeps the table
    code, out, err = _cli(capsys, monkeypatch, "--lake", str(lake.root), "search", "杭州", "--tenant", "acme",
                          "--mode", "keyword", width=160)
    assert any(line.split()[:1] == [memory_id] and "用户住在杭州" in line for line in out.splitlines())


@pytest.mark.models
def test_human_output_explains_scores_and_says_why_nothing_matched(lake, tmp_path, capsys, monkeypatch):
    _english(lake, tmp_path)
    lake.index(as_of=AS_OF)
    code, out, err = _cli(capsys, monkeypatch, "--lake", str(lake.root), "search", "coffee", "--tenant", "acme",
                          "--explain", width=120)
    assert code == 0 and "note:" not in err
    lines = out.splitlines()
    header = lines[lines.index("score parts (raw -> scaled)") + 2].split()  # the title, the box's top edge
    assert header == ["id", "keyword", "semantic", "(cos)", "recency", "importance", "score"]
    from memory_lake import Lake

    # the command's policy, and its as_of (now: `search` takes none)
    [result] = search(Lake.open(lake.root), "coffee", tenant="acme", explain=True)
    parts = result.parts
    row = next(line for line in lines[lines.index("score parts (raw -> scaled)"):] if line.strip().startswith("e2"))
    assert row.split() == ["e2", f"{parts['keyword']:.3f}", "->", "1.000", f"{parts['semantic']:.3f}", "->", "1.000",
                           f"{parts['recency']:.3f}", "0.500", f"{result.score:.3f}"]
    assert lines[-1] == ("score = 0.4 x keyword + 0.4 x semantic + 0.1 x recency + 0.1 x importance "
                         "(keyword and semantic scaled over the scope)")
    assert parts["weights"] == {"keyword": 0.4, "semantic": 0.4, "recency": 0.1, "importance": 0.1}
    code, out, err = _cli(capsys, monkeypatch, "--lake", str(lake.root), "search", "kubernetes", "--tenant", "acme")
    assert (code, out, err) == (0, "0 results: no memory matched 'kubernetes' in scope tenant acme (none shares a "
                                   "word with the query (besides words most memories hold) or has a cosine >= 0.35 "
                                   "to it); 4 memories searched\n", "")


def test_human_output_marks_resting_results_and_says_the_search_does_not_wake_them(lake, tmp_path, capsys,
                                                                                  monkeypatch):
    """--include-inactive: a dormant or archived result says so in its tier, and the footer says
    that seeing it is not using it (the events step counts no access for it)."""
    _ingest(lake, tmp_path, [SCOPE | {"id": "live", "content": "Invoice template v2"},
                             SCOPE | {"id": "sleep", "content": "Invoice template draft", "status": "dormant"},
                             SCOPE | {"id": "old", "content": "Invoice template v1", "status": "archived"}])
    args = ("--lake", str(lake.root), "search", "invoice", "--tenant", "acme", "--mode", "keyword", "--include-inactive")
    code, out, err = _cli(capsys, monkeypatch, *args)
    lines = out.splitlines()
    assert (code, err) == (0, "")
    assert lines[1] == " 1. live  score 1.000  short_term / other  acme / bot / alice"
    assert lines[3] == " 2. old  score 1.000  short_term (archived) / other  acme / bot / alice"
    assert lines[5] == " 3. sleep  score 1.000  short_term (dormant) / other  acme / bot / alice"
    assert lines[7:] == ["3 result(s) of 3 memories searched",
                         "2 of them are archived or dormant (marked in the tier): this search does not make them "
                         "active again; `memory-lake restore ID...` does"]
    code, out, err = _cli(capsys, monkeypatch, *args, width=140)
    row = next(line.strip() for line in out.splitlines() if line.strip().startswith("sleep "))
    assert row.split()[:6] == ["sleep", "acme", "/", "bot", "/", "alice"] and "short_term (dormant)" in row


def test_an_empty_query_on_the_command_line_is_a_usage_error(lake, tmp_path, capsys, monkeypatch):
    """The library answers an empty query with a note (an agent may pass one); a person typing
    `search ""` made a mistake: exit 2 with an example, and nothing logged."""
    _english(lake, tmp_path)
    code, out, err = _cli(capsys, monkeypatch, "--lake", str(lake.root), "search", "  ", "--tenant", "acme")
    assert (code, out) == (2, "")
    assert err.strip() == ('error: the query is empty: give the words to look for, e.g. memory-lake search '
                           '"dark mode" --tenant acme')
    assert not list(lake.events.glob("searches-*"))
