"""Issue 17: routing by language. Each memory is embedded by the models covering its language, a
query by the models covering its own, cosine is compared only within one model's space, and the
notes say which model scored what; a query in a language no model covers says so."""

from __future__ import annotations

import pytest

from memory_lake.search.embeddings import PACKAGED_MODEL
from memory_lake.text.models import USE_MODEL, get_provider
from memory_lake.search.query import search

from ..conftest import AS_OF, rows, write_jsonl

SCOPE = {"tenant": "acme", "agent_id": "bot", "user_id": "alice"}
MEMORIES = [
    {"id": "en-coffee", "content": "Alice drinks a flat white every morning before work"},
    {"id": "en-deploy", "content": "Production deploys are frozen during the December holidays"},
    {"id": "zh-dentist", "content": "上周二去看了牙医，下个月还要复诊"},
    {"id": "zh-report", "content": "周报每周五下午五点前发给张经理"},
]


@pytest.fixture
def mixed(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [SCOPE | m for m in MEMORIES])], as_of=AS_OF)
    lake.index(as_of=AS_OF)
    return lake


@pytest.mark.models
def test_each_memory_has_vectors_from_the_models_covering_its_language(mixed):
    table = rows(mixed, "SELECT m.id, e.model, len(e.vector) > 0 AS embedded FROM memories m "
                        "JOIN embeddings e ON e.text_hash = m.content_hash ORDER BY m.id, e.model")
    assert table == [
        {"id": "en-coffee", "model": PACKAGED_MODEL, "embedded": True},
        {"id": "en-coffee", "model": USE_MODEL, "embedded": True},
        {"id": "en-deploy", "model": PACKAGED_MODEL, "embedded": True},
        {"id": "en-deploy", "model": USE_MODEL, "embedded": True},
        {"id": "zh-dentist", "model": PACKAGED_MODEL, "embedded": False},   # MiniLM: [UNK], not embedded
        {"id": "zh-dentist", "model": USE_MODEL, "embedded": True},
        {"id": "zh-report", "model": PACKAGED_MODEL, "embedded": False},
        {"id": "zh-report", "model": USE_MODEL, "embedded": True},
    ]


@pytest.mark.models
def test_a_chinese_query_finds_an_english_memory_through_the_multilingual_model(mixed):
    found = search(mixed, "十二月假期期间禁止部署生产环境", tenant="acme", mode="semantic", as_of=AS_OF, explain=True)
    assert found.mode_used == "semantic"
    assert [r.id for r in found][:1] == ["en-deploy"]
    assert found[0].parts["model"] == USE_MODEL
    # the query's vector in USE's space against the memory's USE vector: nothing else
    use = get_provider(USE_MODEL)
    query = use.embed_queries(["十二月假期期间禁止部署生产环境"], 1).vectors[0]
    memory = use.embed([MEMORIES[1]["content"]], 1).vectors[0]
    assert found[0].parts["semantic"] == pytest.approx(float(query @ memory), abs=1e-5)
    assert found.notes == [f"semantic part: {USE_MODEL} for 4 memories ({PACKAGED_MODEL} does not cover the "
                           "query's language (100% unknown tokens))"]


@pytest.mark.models
def test_an_english_query_scores_english_memories_with_minilm_and_chinese_ones_with_use(mixed):
    found = search(mixed, "dentist appointment", tenant="acme", mode="semantic", as_of=AS_OF, explain=True)
    by_id = {r.id: r.parts["model"] for r in found}
    assert by_id.get("zh-dentist") == USE_MODEL
    assert {m for i, m in by_id.items() if i.startswith("en-")} <= {PACKAGED_MODEL}
    assert found.notes == [f"semantic part: {PACKAGED_MODEL} for 2 memories, {USE_MODEL} for 2 memories "
                           f"({PACKAGED_MODEL} does not cover the language of the others)"]
    # a purely English scope needs no note: MiniLM alone scored, as before issue 17
    english = search(mixed, "what coffee does Alice drink", tenant="acme", mode="semantic", as_of=AS_OF,
                     explain=True)
    assert [r.id for r in english][:1] == ["en-coffee"] and english[0].parts["model"] == PACKAGED_MODEL


@pytest.mark.models
def test_a_query_in_a_language_no_model_covers_says_so_instead_of_returning_noise(mixed):
    found = search(mixed, "ሰላም እንዴት ነህ ዛሬ", tenant="acme", mode="semantic", as_of=AS_OF)
    assert (found.mode_used, list(found)) == ("keyword", [])
    assert found.notes[0] == (f"no embedding model covers the query's language ({PACKAGED_MODEL}: 100% unknown tokens, "
                              f"{USE_MODEL}: 100% unknown tokens); its semantic weight moved to keyword")


@pytest.mark.models
def test_switching_the_multilingual_model_off_keeps_the_old_behaviour(mixed):
    mixed.policy = mixed.policy.with_overrides({"search": {"multilingual_model": "none"}})
    found = search(mixed, "十二月假期期间禁止部署生产环境", tenant="acme", as_of=AS_OF)
    assert found.notes[0] == ("the embedding model does not cover the query's language (100% unknown tokens); "
                              "its semantic weight moved to keyword")


@pytest.mark.models
def test_a_model_does_not_cover_a_script_it_was_not_trained_on_whatever_its_tokenizer_knows(lake, tmp_path):
    """A stranger's lake: MiniLM's WordPiece has a piece for most common Chinese characters, so
    小明住在上海 came out at 28 % unknown and got a MiniLM vector while 小明住在杭州 (43 %) did not,
    and the two near-identical memories were scored in two spaces; a Hindi query was scored by MiniLM
    alone (cosine 0.39 noise, no note). MiniLM reads the Latin script, USE its 16 languages' scripts."""
    memories = [{"id": "sh", "content": "小明住在上海"}, {"id": "hz", "content": "小明住在杭州"},
                {"id": "mix", "content": "User喜欢Python and hiking every weekend"}]
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [SCOPE | m for m in memories])], as_of=AS_OF)
    lake.index(as_of=AS_OF)
    table = rows(lake, "SELECT m.id, e.model, len(e.vector) > 0 AS embedded FROM memories m "
                       "JOIN embeddings e ON e.text_hash = m.content_hash ORDER BY m.id, e.model")
    assert table == [
        {"id": "hz", "model": PACKAGED_MODEL, "embedded": False},
        {"id": "hz", "model": USE_MODEL, "embedded": True},
        {"id": "mix", "model": PACKAGED_MODEL, "embedded": True},        # 2 Han letters of 27
        {"id": "mix", "model": USE_MODEL, "embedded": True},
        {"id": "sh", "model": PACKAGED_MODEL, "embedded": False},
        {"id": "sh", "model": USE_MODEL, "embedded": True},
    ]
    found = search(lake, "Xiaoming lives in Shanghai", tenant="acme", mode="semantic", as_of=AS_OF, explain=True)
    assert [(r.id, r.parts["model"]) for r in found][:2] == [("sh", USE_MODEL), ("hz", USE_MODEL)]
    hindi = search(lake, "शियाओमिंग कहाँ काम करता है", tenant="acme", mode="semantic", as_of=AS_OF)
    assert (hindi.mode_used, list(hindi)) == ("keyword", [])
    assert hindi.notes[0] == (f"no embedding model covers the query's language ({PACKAGED_MODEL}: 100% unknown tokens, "
                              f"{USE_MODEL}: 100% unknown tokens); its semantic weight moved to keyword")


@pytest.mark.models
def test_an_index_run_empties_the_vectors_a_model_holds_for_a_script_it_does_not_read(lake, tmp_path):
    """A lake indexed before the script check holds MiniLM vectors of short Chinese texts; the next
    index run empties them (keeping the share), touches nothing else, and the run after finds none."""
    memories = [{"id": "sh", "content": "小明住在上海"}, {"id": "fr", "content": "L'utilisatrice aime le café crème"},
                {"id": "mix", "content": "User喜欢Python and hiking every weekend"}]
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [SCOPE | m for m in memories])], as_of=AS_OF)
    lake.index(as_of=AS_OF)
    stale = get_provider(PACKAGED_MODEL).embed(["小明住在上海"], 1).vectors[0].tolist()
    with lake.writer() as con:   # as a lake written before the check holds it (28 % unknown tokens)
        con.execute("UPDATE embeddings SET vector = ?, unknown_ratio = 0.28 WHERE model = ? AND text_hash = "
                    "(SELECT content_hash FROM memories WHERE id = 'sh')", [stale, PACKAGED_MODEL])
    query = ("SELECT m.id, e.model, len(e.vector) > 0 AS embedded, round(e.unknown_ratio, 2) AS unknown "
             "FROM memories m JOIN embeddings e ON e.text_hash = m.content_hash ORDER BY m.id, e.model")
    before = rows(lake, query)
    report = lake.index(as_of=AS_OF)
    assert [report.details["models"][m]["remeasured"] for m in (PACKAGED_MODEL, USE_MODEL)] == [1, 0]
    after = rows(lake, query)
    assert [r for r in after if r not in before] == [
        {"id": "sh", "model": PACKAGED_MODEL, "embedded": False, "unknown": 1.0}]
    assert lake.index(as_of=AS_OF).details["models"][PACKAGED_MODEL]["remeasured"] == 0


@pytest.mark.models
def test_a_later_model_encodes_the_query_only_when_the_scope_holds_memories_only_it_scores(lake, tmp_path, monkeypatch):
    """Issue 38 (latency): an English query in an English scope is encoded by MiniLM alone (USE's
    vector would score nothing: MiniLM's space holds every memory), in a mixed scope by both; the
    results are the same as when every model encodes every query."""
    from memory_lake.search import query as module

    english = [m for m in MEMORIES if m["id"].startswith("en-")]
    lake.ingest([write_jsonl(tmp_path / "en.jsonl", [SCOPE | m for m in english]),
                 write_jsonl(tmp_path / "mixed.jsonl", [SCOPE | m | {"id": "mixed-" + m["id"], "agent_id": "mixed"} for m in MEMORIES])],
                as_of=AS_OF)
    lake.index(as_of=AS_OF)
    encoded: list[str] = []
    real = module._encode_query

    def counted(policy, query, name, *rest):
        encoded.append(name)
        return real(policy, query, name, *rest)

    monkeypatch.setattr(module, "_encode_query", counted)
    lazy = {}
    for agent in ("bot", "mixed"):
        encoded.clear()
        lazy[agent] = search(lake, "what does Alice drink in the morning", tenant="acme", agent=agent, as_of=AS_OF,
                             explain=True)
        assert encoded == ([PACKAGED_MODEL] if agent == "bot" else [PACKAGED_MODEL, USE_MODEL])
    # the reference: every model encodes every query, as before
    every = module._query_vector
    monkeypatch.setattr(module, "_query_vector", lambda policy, query, first_only=False: every(policy, query))
    monkeypatch.setattr(module, "_more_vectors", lambda *args: [])
    for agent in ("bot", "mixed"):
        encoded.clear()
        full = search(lake, "what does Alice drink in the morning", tenant="acme", agent=agent, as_of=AS_OF,
                      explain=True)
        assert encoded == [PACKAGED_MODEL, USE_MODEL]
        assert [r.as_dict() for r in full] == [r.as_dict() for r in lazy[agent]]
        assert (full.notes, full.mode_used) == (lazy[agent].notes, lazy[agent].mode_used)
    assert [r.id for r in lazy["mixed"]][:1] == ["mixed-en-coffee"]


@pytest.mark.models
def test_minilm_encodes_a_query_through_onnx_runtime_as_torch_embeds_a_memory(tmp_path, monkeypatch):
    """Issue 38 (latency): one query runs through ONNX Runtime, exported once from the installed
    weights into the cache; its vector is torch's to 1e-6 (cosine 1 with a memory of the same text),
    its unknown share the same. With $MEMORY_LAKE_ONNX=0 (or no exporter) torch answers, bit for bit."""
    import numpy as np

    from memory_lake.text.models import SentenceTransformerProvider

    monkeypatch.setenv("MEMORY_LAKE_CACHE", str(tmp_path / "cache"))
    model = get_provider(PACKAGED_MODEL)
    fresh = object.__new__(SentenceTransformerProvider)  # the loaded model, without its cached session
    fresh.__dict__.update({k: v for k, v in model.__dict__.items() if k != "_onnx"})
    texts = [m["content"] for m in MEMORIES] + ["", "x " * 600, "what did Caroline research?"]
    for text in texts:
        query, stored = fresh.embed_queries([text], 8), model.embed([text], 8)
        assert np.abs(query.vectors - stored.vectors).max() < 1e-6, text
        assert float(query.vectors[0] @ stored.vectors[0]) == pytest.approx(1.0, abs=1e-6)
        assert np.array_equal(query.unknown, stored.unknown), text
    assert fresh._onnx is not None and len(list((tmp_path / "cache" / "onnx").glob("*.onnx"))) == 1
    monkeypatch.setenv("MEMORY_LAKE_ONNX", "0")
    fresh.__dict__.pop("_onnx")
    for text in texts:
        assert np.array_equal(fresh.embed_queries([text], 8).vectors, model.embed([text], 8).vectors), text
    assert fresh._onnx is None
