"""Entity memory (issue 16): extraction without an LLM in English and Chinese, facts merged with
dedup's machinery, changed values superseding older facts (history kept), incremental runs,
forget reaching entity facts, and the listing."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_lake import Lake
from memory_lake.demo.generator import generate_demo
from memory_lake.maintain.entities import extract_entities, list_entities, sentences
from memory_lake.maintain.forget import forget

from ..conftest import AS_OF, rows, write_jsonl

LATER = AS_OF + timedelta(days=1)


def memory(memory_id, content, created, **extra):
    return {"id": memory_id, "tenant": "acme", "agent_id": "bot", "user_id": "u1", "content": content,
            "created_at": created, **extra}


def render(result) -> str:
    """An entity listing as people read it: entity, kind, mentions; current facts with their
    mentions and sources; history with what changed and until when."""
    out = []
    for e in result["entities"]:
        out.append(f"{e['name']} ({e['kind']}, {e['mention_count']})")
        out += [f"  * {f['content']} [{f['mentions']}x {','.join(f['sources'])}] {f['valid_from'][:10]}"
                for f in e["facts"]]
        out += [f"  ~ {f['content']} [{','.join(f['sources'])}] {f['valid_from'][:10]}..{f['valid_to'][:10]} "
                f"{f['change']}" for f in e["history"]]
    return "\n".join(out)


def entity(result, name):
    (found,) = [e for e in result["entities"] if e["name"] == name]
    return found


@pytest.mark.parametrize("texts", [
    ("Alice lives in Paris.", "Alice lives in Berlin.", "Alice lives in Berlin now!"),
    ("张伟住在北京。", "张伟住在上海。", "张伟住在上海啦！"),
], ids=["english", "chinese"])
def test_a_changed_place_supersedes_the_old_fact_and_keeps_it_in_history(lake, tmp_path, texts):
    old, new, again = texts
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        memory("m1", old, "2026-10-01T00:00:00Z"), memory("m2", new, "2026-11-01T00:00:00Z"),
        memory("m3", again, "2026-11-05T00:00:00Z")])], as_of=AS_OF)
    report = extract_entities(lake, AS_OF)
    assert report.counts["memories_read"] == 3
    result = lake.entities(tenant="acme", user="u1")
    person = entity(result, "Alice" if old.startswith("Alice") else "张伟")
    # one entity; the newer fact current (merged with its repeat), the older one in history, never merged
    assert (person["kind"], person["mention_count"]) == ("person", 3)
    assert [(f["content"], f["sources"], f["mentions"], f["valid_from"], f["valid_to"]) for f in person["facts"]] == [
        (new, ["m2", "m3"], 2, "2026-11-01T00:00:00Z", None)]
    assert [(f["content"], f["sources"], f["change"], f["valid_from"], f["valid_to"]) for f in person["history"]] == [
        (old, ["m1"], "place", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z")]
    assert person["history"][0]["superseded_by"] == person["facts"][0]["fact_id"]
    # the stored rows: three mentions, one superseded, one merged into the current fact
    assert rows(lake, "SELECT memory_id, merged_into IS NOT NULL AS merged, superseded_by IS NOT NULL AS superseded, "
                      "change FROM entity_facts WHERE entity_id = ? ORDER BY memory_id", [person["entity_id"]]) == [
        {"memory_id": "m1", "merged": False, "superseded": True, "change": "place"},
        {"memory_id": "m2", "merged": False, "superseded": False, "change": None},
        {"memory_id": "m3", "merged": True, "superseded": False, "change": None}]


def test_numbers_dates_and_phone_placeholders_supersede_but_other_words_are_two_facts(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        memory("n1", "Initech has 40 seats on the Team plan.", "2026-10-01T00:00:00Z"),
        memory("n2", "Initech has 55 seats on the Team plan.", "2026-10-02T00:00:00Z"),
        memory("p1", "Call Bob at +44 20 7946 0958 after lunch.", "2026-10-01T00:00:00Z"),
        memory("p2", "Call Bob at +44 20 7946 0999 after lunch.", "2026-10-03T00:00:00Z"),
        memory("t1", "Initech renewed ticket 88 for the Team plan.", "2026-10-04T00:00:00Z"),
        memory("t2", "Initech renewed ticket 89 for the Team plan.", "2026-10-05T00:00:00Z"),
    ])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    result = lake.entities(tenant="acme")
    initech, bob = entity(result, "Initech"), entity(result, "Bob")
    assert [f["content"] for f in initech["facts"]] == [
        "Initech renewed ticket 89 for the Team plan.", "Initech renewed ticket 88 for the Team plan.",
        "Initech has 55 seats on the Team plan."]  # two tickets are two things, both current
    assert [(f["content"], f["change"]) for f in initech["history"]] == [("Initech has 40 seats on the Team plan.",
                                                                          "number")]
    (phone,) = rows(lake, "SELECT content FROM memories WHERE id = 'p2'")
    assert [f["content"] for f in bob["facts"]] == [phone["content"]] and "[PHONE:" in phone["content"]
    assert [f["change"] for f in bob["history"]] == ["phone"]


def test_extraction_reads_only_new_or_changed_memories(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        memory("m1", "Alice lives in Paris.", "2026-10-01T00:00:00Z"),
        memory("m2", "Priya owns the billing service.", "2026-10-02T00:00:00Z"),
        memory("m3", "nothing to see here", "2026-10-03T00:00:00Z")])], as_of=AS_OF)
    first = extract_entities(lake, AS_OF, run_id="r1")
    assert first.counts == {"memories_read": 3, "memories_gone": 0, "mentions": 3, "entities_changed": 3}
    before = rows(lake, "SELECT * FROM entity_facts ORDER BY fact_id")
    again = extract_entities(lake, LATER, run_id="r2")
    assert again.counts == {"memories_read": 0, "memories_gone": 0, "mentions": 0, "entities_changed": 0}
    assert rows(lake, "SELECT * FROM entity_facts ORDER BY fact_id") == before
    # one edit: only that memory is read again, and only the entities it touches change
    lake.edit("m1", content="Alice lives in Lisbon.", as_of=LATER)
    third = extract_entities(lake, LATER, run_id="r3")
    assert third.counts == {"memories_read": 1, "memories_gone": 0, "mentions": 2, "entities_changed": 3}
    assert rows(lake, "SELECT memory_id, content FROM entity_facts ORDER BY memory_id, content") == [
        {"memory_id": "m1", "content": "Alice lives in Lisbon."}, {"memory_id": "m1", "content": "Alice lives in Lisbon."},
        {"memory_id": "m2", "content": "Priya owns the billing service."}]
    assert sorted(r["name"] for r in rows(lake, "SELECT name FROM entities")) == ["Alice", "Lisbon", "Priya"]
    assert rows(lake, "SELECT memory_id, extractor FROM entity_extractions ORDER BY 1") == [
        {"memory_id": m, "extractor": rows(lake, "SELECT extractor FROM entity_extractions LIMIT 1")[0]["extractor"]}
        for m in ("m1", "m2", "m3")]


def test_forget_removes_a_memory_s_facts_and_an_entity_left_without_facts(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        memory("m1", "Alice lives in Paris.", "2026-10-01T00:00:00Z"),
        memory("m2", "Alice lives in Berlin.", "2026-11-01T00:00:00Z"),
        memory("m3", "Alice prefers tea.", "2026-11-02T00:00:00Z")])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    assert [f["content"] for f in entity(lake.entities(tenant="acme"), "Alice")["facts"]] == [
        "Alice prefers tea.", "Alice lives in Berlin."]
    forget(lake, ids=["m2"], operator="user", reason="moved away", as_of=LATER)
    result = lake.entities(tenant="acme")
    # the Berlin memory's fact and text are gone; Paris is current again; Berlin has no fact left
    assert render(result) == (
        "Alice (person, 2)\n"
        "  * Alice prefers tea. [1x m3] 2026-11-02\n"
        "  * Alice lives in Paris. [1x m1] 2026-10-01\n"
        "Paris (place, 1)\n"
        "  * Alice lives in Paris. [1x m1] 2026-10-01")
    assert rows(lake, "SELECT count(*) AS n FROM entity_facts WHERE content ILIKE '%berlin%' OR memory_id = 'm2'") == [
        {"n": 0}]
    assert rows(lake, "SELECT count(*) AS n FROM entities WHERE name = 'Berlin' OR list_contains(memory_ids, 'm2')") == [
        {"n": 0}]
    # the next run finds nothing to re-read and leaves the repaired facts as they are
    before = rows(lake, "SELECT * FROM entity_facts ORDER BY fact_id")
    assert extract_entities(lake, LATER).counts["memories_read"] == 0
    assert rows(lake, "SELECT * FROM entity_facts ORDER BY fact_id") == before


def test_the_user_dictionary_adds_words_with_their_kind(tmp_path):
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "memory-lake.toml").write_text('[entities]\nuser_dict = ["星河科技 nt", "小周 nr"]\n')
    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [memory("z1", "小周明天去星河科技开会。", "2026-11-01T00:00:00Z")])],
                as_of=AS_OF)
    extract_entities(lake, AS_OF)
    assert [(e["name"], e["kind"], e["facts"][0]["confidence"]) for e in lake.entities()["entities"]] == [
        ("小周", "person", 1.0), ("星河科技", "organisation", 1.0)]


def test_a_bad_user_dictionary_entry_is_one_clear_error(tmp_path):
    from memory_lake.store import InputError

    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "memory-lake.toml").write_text('[entities]\nuser_dict = ["星河 xx"]\n')
    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [memory("z1", "星河开会。", "2026-11-01T00:00:00Z")])], as_of=AS_OF)
    with pytest.raises(InputError, match="unknown tag 'xx'; use nr"):
        extract_entities(lake, AS_OF)


def test_sentences_split_english_and_chinese():
    assert sentences("Alice lives in Paris. She likes tea!  TODO: call Bob") == [
        "Alice lives in Paris.", "She likes tea!", "TODO: call Bob"]
    assert sentences("张伟住在北京。王芳住在上海；明天开会") == ["张伟住在北京。", "王芳住在上海；", "明天开会"]


@pytest.fixture(scope="module")
def demo_lake(tmp_path_factory):
    """The demo (seed 7), plus later memories of two users that repeat and change demo facts."""
    lake = Lake.init(tmp_path_factory.mktemp("demo") / "lake")
    data = generate_demo(lake.inbox, seed=7)
    lake.ingest(as_of=data.as_of)
    base_en = {"tenant": "acme", "agent_id": "support-bot", "user_id": "u-carol"}
    base_zh = {"tenant": "zhongke", "agent_id": "yanfa-assistant", "user_id": "u-liuyang"}
    lake.ingest([write_jsonl(lake.root.parent / "later.jsonl", [
        {**base_en, "id": "carol-lisbon-again", "content": "Carol's team for the partner portal is based in Lisbon!",
         "created_at": "2026-11-29T09:00:00Z"},
        {**base_en, "id": "carol-porto", "content": "Carol's team for the partner portal is based in Porto.",
         "created_at": "2026-11-29T10:00:00Z"},
        {**base_zh, "id": "liuyang-shenzhen", "content": "统一认证网关部署在华南1（深圳）",
         "created_at": "2026-11-29T09:00:00Z"},
        {**base_zh, "id": "liuyang-hangzhou", "content": "刘洋负责版本发布的团队在杭州办公。",
         "created_at": "2026-11-20T09:00:00Z"},
        {**base_zh, "id": "liuyang-nanjing", "content": "刘洋负责版本发布的团队在南京办公。",
         "created_at": "2026-11-29T10:00:00Z"},
        {**base_zh, "id": "liuyang-nanjing-again", "content": "刘洋负责版本发布的团队在南京办公",
         "created_at": "2026-11-29T11:00:00Z"},
    ])], as_of=data.as_of)
    extract_entities(lake, data.as_of)
    return lake


def test_a_demo_user_s_entities_in_english(demo_lake):
    result = demo_lake.entities(tenant="acme", agent="support-bot", user="u-carol")
    assert result["notes"] == []
    assert render(result) == EXPECTED_CAROL
    _no_duplicates_and_honest_counts(demo_lake, result)


def test_a_demo_user_s_entities_in_chinese(demo_lake):
    result = demo_lake.entities(tenant="zhongke", agent="yanfa-assistant", user="u-liuyang")
    assert render(result) == EXPECTED_LIUYANG
    _no_duplicates_and_honest_counts(demo_lake, result)


def _no_duplicates_and_honest_counts(lake, result):
    """No two current facts of an entity are the same text; every source is a memory of the scope
    that holds the fact; mention counts are the distinct sources."""
    for e in result["entities"]:
        texts = [" ".join(f["content"].lower().strip(".!。").split()) for f in e["facts"]]
        assert len(texts) == len(set(texts)), e["name"]
        sources = {s for f in e["facts"] + e["history"] for s in f["sources"]}
        assert e["mention_count"] == len(sources)
        held = {r["id"]: r["content"] for r in rows(
            lake, "SELECT id, content FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[])) "
                  "AND tenant = ? AND agent_id = ? AND user_id = ?",
            [sorted(sources), e["tenant"], e["agent_id"], e["user_id"]])}
        assert set(held) == sources
        for f in e["facts"] + e["history"]:
            assert all(f["content"] in held[s] or f["content"].rstrip("!.。") in held[s] for s in f["sources"])


# Whole listings (seed 7 and the later memories above): every fact once, with its sources; the
# Lisbon -> Porto and 杭州 -> 南京 moves superseded, not merged; repeats merged (2x).
EXPECTED_CAROL = (
    'Carol (person, 18)\n'
    "  * Carol's team for the partner portal is based in Porto. [1x carol-porto] 2026-11-29\n"
    '  * Carol希望每周四上午收到故障复盘。 [1x mem-f97ca6ad7d08] 2026-11-28\n'
    '  * Carol likes answers about release notes with code samples. [1x mem-b3d3b739a101] 2026-11-24\n'
    '  * Carol希望通过企业微信群接收权限申请相关的通知。 [1x mem-7dd737579ef7] 2026-11-23\n'
    '  * Carol wants the incident review delivered every Wednesday morning. [1x mem-5f3410581e25] 2026-11-21\n'
    '  * Remind Carol to send the revised quote before the Monday sync. [1x m_f7b1b74c170fc0f5f0a4cef53faf2257] 2026-11-09\n'
    '  * Carol prefers the ticket thread for updates about the pricing page. [1x mem-27aee293196e] 2026-11-08\n'
    '  * Carol wants the churn report delivered every Monday morning. [1x m_331de76ae07984d9e1c84b17ac8bc5d4] 2026-11-05\n'
    '  * Carol希望关于报表看板的回答附上操作截图。 [1x mem-39bf3d537e17] 2026-11-05\n'
    '  * Carol prefers email for updates about password resets. [1x mem-932bd71bc5ef] 2026-11-04\n'
    '  * Carol prefers email for updates about GDPR requests. [1x m_cee9c9d0440576fb13473497d6c458d5] 2026-11-01\n'
    '  * Carol likes answers about SSO login in plain language without jargon. [1x mem-4dfd691c6a25] 2026-10-25\n'
    '  * 提醒Carol在周二例会前共享迁移检查清单。 [1x m_ea5708dfc3cbf2d38a0fc567b31c447c] 2026-09-25\n'
    "  * Carol's team for API rate limits is based in Toronto. [1x m_9b0be01b9cc8045fc82a53cde9be184f] 2026-09-13\n"
    '  * Carol希望通过工单回复接收季度规划相关的通知。 [1x mem-17230623f27a] 2026-09-09\n'
    '  ~ Carol wants the incident review delivered every Friday morning. [m_248e825512fb9f850f52046f14a3d0ad] 2026-11-01..2026-11-21 date\n'
    "  ~ Carol's team for the partner portal is based in Lisbon. [carol-lisbon-again,m_b93ae19fed6a3460b5bd4bc7d3c918fc] 2026-09-03..2026-11-29 place\n"
    'Initech (thing, 3)\n'
    '  * TODO: review the access list for Initech by Dec 16. [1x mem-38ae8a83afab] 2026-11-29\n'
    '  * TODO: schedule the renewal call for Initech by Oct 28. [1x m_831f13e5bb9891711bc5fce70cd9b001] 2026-11-28\n'
    '  * Initech has 106 seats on the Enterprise plan. [1x mem-34f6db819489] 2026-11-09\n'
    'API (thing, 2)\n'
    '  * Mei owns the export API and reviews changes to the reporting job. [1x m_4c7333311983b5bbf44da1682c950361] 2026-11-10\n'
    "  * Carol's team for API rate limits is based in Toronto. [1x m_9b0be01b9cc8045fc82a53cde9be184f] 2026-09-13\n"
    'Lisbon (place, 2)\n'
    "  * Carol's team for the partner portal is based in Lisbon. [2x carol-lisbon-again,m_b93ae19fed6a3460b5bd4bc7d3c918fc] 2026-09-03\n"
    'Mei (person, 2)\n'
    '  * Mei owns the export API and reviews changes to the reporting job. [1x m_4c7333311983b5bbf44da1682c950361] 2026-11-10\n'
    '  * Mei joined the the pricing page call on Dec 19 with Wayne Retail. [1x mem-af4362c6a5c7] 2026-11-09\n'
    'SSO (thing, 2)\n'
    '  * Note for SSO login: the staging data is anonymised weekly. [1x m_5d853bd011b8f0764ac9243b3cb58db0] 2026-11-29\n'
    '  * Carol likes answers about SSO login in plain language without jargon. [1x mem-4dfd691c6a25] 2026-10-25\n'
    'Vandelay Imports (organisation, 2)\n'
    '  * TODO: update the runbook for Vandelay Imports by Nov 5. [1x m_4fae29bb8cae2fd75c2381155ffa673d] 2026-11-27\n'
    '  * TODO: review the access list for Vandelay Imports by Nov 21. [1x mem-6bef9d9fae4a] 2026-10-18\n'
    'Enterprise (thing, 1)\n'
    '  * Initech has 106 seats on the Enterprise plan. [1x mem-34f6db819489] 2026-11-09\n'
    'GDPR (thing, 1)\n'
    '  * Carol prefers email for updates about GDPR requests. [1x m_cee9c9d0440576fb13473497d6c458d5] 2026-11-01\n'
    'Kafka (thing, 1)\n'
    '  * 报表服务在11月22日前继续使用Kafka，渠道合作上线后再评估。 [1x mem-181b9adce2f9] 2026-10-28\n'
    'Omar (thing, 1)\n'
    '  * Omar owns the nightly batch and reviews changes to the data warehouse. [1x mem-a91381a65441] 2026-09-04\n'
    'Porto (place, 1)\n'
    "  * Carol's team for the partner portal is based in Porto. [1x carol-porto] 2026-11-29\n"
    'QA (thing, 1)\n'
    '  * Lesson: never promise a release date before QA signs off (learned while handling mobile app crashes). [1x mem-a233908238dd] 2026-11-06\n'
    'Toronto (place, 1)\n'
    "  * Carol's team for API rate limits is based in Toronto. [1x m_9b0be01b9cc8045fc82a53cde9be184f] 2026-09-13\n"
    'Wayne Retail (thing, 1)\n'
    '  * Mei joined the the pricing page call on Dec 19 with Wayne Retail. [1x mem-af4362c6a5c7] 2026-11-09\n'
    '华东 (place, 1)\n'
    '  * 客服工单系统部署在华东1（杭州）。 [1x mem-d93d3ddfdb83] 2026-11-10\n'
    '吴敏 (person, 1)\n'
    '  * 吴敏提醒：预发环境数据每周脱敏一次。 [1x mem-a40e198cae96] 2026-10-30\n'
    '张伟 (person, 1)\n'
    '  * 张伟参加了10月23日与百川零售的接口限流会议。 [1x mem-4d2e712920a0] 2026-11-03\n'
    '李雷 (person, 1)\n'
    '  * 李雷参加了10月18日与星河教育的合同续签会议。 [1x mem-e3de639667bb] 2026-11-27\n'
    '杭州 (place, 1)\n'
    '  * 客服工单系统部署在华东1（杭州）。 [1x mem-d93d3ddfdb83] 2026-11-10'
)
EXPECTED_LIUYANG = (
    '刘洋 (person, 18)\n'
    '  * 跟进：和刘洋确认价格调整进展，截止11月19日。 [1x m_bec8e0939cc1676edfa42bdb703f87fe] 2026-11-29\n'
    '  * 刘洋希望通过工单回复接收季度规划相关的通知。 [1x mem-0b696e033a34] 2026-11-29\n'
    '  * 刘洋负责版本发布的团队在南京办公。 [2x liuyang-nanjing,liuyang-nanjing-again] 2026-11-29\n'
    '  * 刘洋 likes answers about API rate limits with code samples. [1x mem-7d3fc55fcb56] 2026-11-29\n'
    '  * 刘洋导出移动端闪退数据时偏好PDF格式，不要Excel。 [1x m_ef847f7a80230dc1e7dffbfb292554c1] 2026-11-21\n'
    '  * 刘洋希望通过工单回复接收数据导出相关的通知。 [1x mem-91c3cafbc533] 2026-11-19\n'
    '  * 刘洋希望通过电话接收移动端闪退相关的通知。 [1x m_ddf147b9d6b8d5ddd55d508faef97926] 2026-11-19\n'
    '  * 刘洋希望关于接口限流的回答用表格对比。 [1x m_e4c51cc366c2d8e3e83891252bc61dad] 2026-11-18\n'
    '  * 跟进：和刘洋确认接口限流进展，截止10月27日。 [1x mem-922e0e6d451c] 2026-11-17\n'
    '  * 刘洋希望每周二上午收到故障复盘。 [1x m_4682c2cb63a49ec101ce4d0bc474c631] 2026-11-16\n'
    '  * 刘洋同意把消息推送类工单转给计费运营。 [1x mem-30394ea35229] 2026-11-10\n'
    '  * 刘洋同意把渠道合作类工单转给二线支持。 [1x mem-7ce6302512e7] 2026-11-03\n'
    '  * 刘洋希望每周四上午收到每周工单汇总。 [1x mem-82fe597da90b] 2026-10-25\n'
    '  * 刘洋希望通过钉钉接收移动端闪退相关的通知。 [1x mem-23f81945daee] 2026-10-18\n'
    '  * 提醒刘洋在周三例会前复核权限清单。 [1x m_d69f4c94b022793fd6a0b93c5d3eb86e] 2026-10-15\n'
    '  ~ 刘洋负责版本发布的团队在杭州办公。 [liuyang-hangzhou] 2026-11-20..2026-11-29 place\n'
    '  ~ 提醒刘洋在周四例会前复核权限清单。 [mem-ce52bfab7615] 2026-09-26..2026-10-15 number\n'
    '华南 (place, 2)\n'
    '  * 统一认证网关部署在华南1（深圳）。 [2x liuyang-shenzhen,m_1fb15547f72c9927531b606aaf7ca01f] 2026-09-08\n'
    '南京 (place, 2)\n'
    '  * 刘洋负责版本发布的团队在南京办公。 [2x liuyang-nanjing,liuyang-nanjing-again] 2026-11-29\n'
    '杭州 (place, 2)\n'
    '  * 刘洋负责版本发布的团队在杭州办公。 [1x liuyang-hangzhou] 2026-11-20\n'
    '  * 计费系统部署在华东1（杭州）。 [1x mem-bd2b556344b6] 2026-09-12\n'
    '深圳 (place, 2)\n'
    '  * 统一认证网关部署在华南1（深圳）。 [2x liuyang-shenzhen,m_1fb15547f72c9927531b606aaf7ca01f] 2026-09-08\n'
    '陈静 (person, 2)\n'
    '  * 跟进：和陈静确认报表看板进展，截止10月6日。 [1x mem-3f47e43b9b76] 2026-11-14\n'
    '  * 陈静负责客户门户，搜索集群的变更也由其评审。 [1x mem-073947f1e761] 2026-11-07\n'
    'API (thing, 1)\n'
    '  * 刘洋 likes answers about API rate limits with code samples. [1x mem-7d3fc55fcb56] 2026-11-29\n'
    'DuckDB (thing, 1)\n'
    '  * 客服工单系统在10月25日前继续使用DuckDB，值班交接上线后再评估。 [1x m_7b888ddbcf82d724b8ad1b1a55a91eaf] 2026-11-21\n'
    'Excel (thing, 1)\n'
    '  * 刘洋导出移动端闪退数据时偏好PDF格式，不要Excel。 [1x m_ef847f7a80230dc1e7dffbfb292554c1] 2026-11-21\n'
    'Kubernetes (thing, 1)\n'
    '  * 统一认证网关在11月4日前继续使用Kubernetes，报表看板上线后再评估。 [1x mem-659cc76bd9d7] 2026-11-25\n'
    'PDF (thing, 1)\n'
    '  * 刘洋导出移动端闪退数据时偏好PDF格式，不要Excel。 [1x m_ef847f7a80230dc1e7dffbfb292554c1] 2026-11-21\n'
    'PostgreSQL (thing, 1)\n'
    '  * 计费系统在11月25日前继续使用PostgreSQL，价格调整上线后再评估。 [1x m_d8563b878b1689d84f1332c4b74d7036] 2026-11-15\n'
    'Prefect (thing, 1)\n'
    '  * 团队同意审计日志改用Prefect。 [1x mem-aff1a13217a3] 2026-11-23\n'
    'QA (thing, 1)\n'
    '  * 经验：遇到物流延迟问题时，QA 未签字前不要承诺上线日期。 [1x mem-b9afee7674b4] 2026-11-01\n'
    'Redis (thing, 1)\n'
    '  * 团队同意搜索索引改用Redis。 [1x m_8a6cabb0895d3529cf7fd6084b87dbc6] 2026-09-16\n'
    'SLA (thing, 1)\n'
    '  * 11月13日价格调整上线，结果：已在 SLA 内解决。 [1x m_bb6e451c0993908293e13f7e0d7cf0bb] 2026-10-31\n'
    'Starter (thing, 1)\n'
    '  * 长风汽车目前购买了276个Starter版席位。 [1x mem-1e589da99494] 2026-11-25\n'
    '华东 (place, 1)\n'
    '  * 计费系统部署在华东1（杭州）。 [1x mem-bd2b556344b6] 2026-09-12\n'
    '孙丽 (person, 1)\n'
    '  * 孙丽负责导出接口，计费系统的变更也由其评审。 [1x mem-0e0745684b7e] 2026-11-29\n'
    '王芳 (person, 1)\n'
    '  * 跟进：和王芳确认消息推送进展，截止12月26日。 [1x mem-3983633e5aaa] 2026-10-29\n'
    '赵磊 (person, 1)\n'
    '  * 赵磊提醒：预发环境数据每周脱敏一次。 [1x mem-a126d1bb88c8] 2026-11-27'
)


def test_a_fact_supersedes_only_when_nothing_but_its_value_changed():
    """Observed on the demo: "the team for invoices is in Shanghai" was superseded by "the team for
    refunds is in Nanjing", and a format preference for one data set by a swapped one for another.
    Those are other statements, kept as two current facts; a changed value alone still supersedes."""
    from memory_lake.maintain.entities import compare_facts

    def fact(content, values=()):
        return {"content": content, "slot_values": list(values)}

    assert compare_facts(fact("王芳负责发票的团队在上海办公。", ["上海"]), fact("王芳负责退款的团队在南京办公。", ["南京"])) is None
    assert compare_facts(fact("王芳负责发票的团队在上海办公。", ["上海"]), fact("王芳负责发票的团队在南京办公。", ["南京"])) == "place"
    assert compare_facts(fact("王芳导出数据导出数据时偏好Parquet格式，不要PDF。"),
                         fact("王芳导出物流延迟数据时偏好PDF格式，不要Parquet。")) is None
    assert compare_facts(fact("Alice prefers Parquet exports over PDF for billing."),
                         fact("Alice prefers PDF exports over Parquet for billing.")) == "swap"
    assert compare_facts(fact("Soylent Foods has 234 seats on the Team plan."),
                         fact("Soylent Foods has 20 seats on the Business plan.")) is None
    assert compare_facts(fact("Remind Alice to renew the TLS certificate before the Friday sync."),
                         fact("Remind Alice to renew the TLS certificate before the Monday sync.")) == "date"
    assert compare_facts(fact("提醒王芳在周一例会前发送修订后的报价单。"), fact("提醒王芳在周五例会前发送修订后的报价单。")) == "number"


def test_a_pii_placeholder_is_a_value_never_an_entity():
    """Observed: a stranger's context pack listed "PHONE (thing, 1 mention)" under known entities."""
    import polars as pl

    from memory_lake.maintain.entities import extract_mentions
    from memory_lake.store.policy import Policy

    frame = pl.DataFrame({"id": ["p"], "tenant": ["acme"], "agent_id": ["bot"], "user_id": ["u"], "created_at": [AS_OF],
                          "content": ["Call Dana at [PHONE:3f2a9c1d] or [EMAIL:12345678], not [SECRET]. "
                                      "[PHONE:3f2a9c1d] is her number."]})
    found = extract_mentions(frame, Policy())
    assert sorted(set(found["surface"])) == ["Dana"]
    assert found.filter(pl.col("surface") == "Dana")["slot_values"].to_list() == [
        ["[EMAIL:12345678]", "[PHONE:3f2a9c1d]"]]


@pytest.mark.parametrize(("sentence", "people"), [
    ("张三住在杭州西湖区，在星河科技做后端工程师。", ["张三"]),   # the HMM gave 张三住
    ("张三说明天开会", ["张三"]),
    ("张伟住在北京", ["张伟"]),
    ("李四在华信科技上班", ["李四"]),
])
def test_a_function_word_the_hmm_glued_to_a_name_is_not_part_of_it(sentence, people):
    """jieba's HMM joins a name it does not know to the word after it (张三住); a stranger's lake
    had the person 张三住 and the fact under the wrong name. A function word that follows names and
    almost never ends one (在, 是, 说, 去, 住 ...) is cut off a three-character name."""
    from memory_lake.maintain.entities import _chinese_mentions

    assert [m[0] for m in _chinese_mentions(sentence, ()) if m[1] == "person"] == people


@pytest.mark.parametrize(("sentence", "people"), [
    ("王五去星河科技上班", ["王五"]),          # the HMM cut 王 / 五去
    ("小明住在上海", ["小明"]),                # 小 + a given name, tagged nr but no surname first
    ("我的朋友小红和小明是同学", ["小红", "小明"]),
    ("小李是我的同事", ["小李"]),              # jieba cut 小 / 李
    ("老张住在杭州", ["老张"]),                # a known word, tagged n
    ("他的小林同学", ["小林"]),                # CC-CEDICT holds it as a name (Kobayashi)
    ("我老公在银行上班", []),                  # words: husband, young lady, auntie, Oman
    ("小姐您好，阿姨做饭很好吃", []),
    ("阿曼是一个国家", []),
    ("一个小黄鸭", []),                        # 小 / 黄 as adjectives, not a surname
    ("这个小王八蛋", []),                      # a common word jieba tags nr, though 王 is a surname
])
def test_chinese_nicknames_and_a_name_the_hmm_split_are_people(sentence, people):
    """How friends call a person (小明, 老王, 阿强) starts with no surname, so such names were no
    entity: a stranger's 小明 had no facts. 小 / 老 / 阿 before one character is a person unless
    CC-CEDICT holds the pair as a word; 王 / 五去 (a surname, then a new word ending in a verb) is 王五."""
    from memory_lake.maintain.entities import _chinese_mentions

    assert [m[0] for m in _chinese_mentions(sentence, ()) if m[1] == "person"] == people


def test_a_latin_name_alone_in_a_chinese_sentence_is_an_entity():
    """"Carol希望每周四上午收到故障复盘" named nobody: the English reading of a Chinese sentence ran
    only when jieba had found an entity first, so five of Carol's facts were missing from her entity."""
    import polars as pl

    from memory_lake.maintain.entities import extract_mentions
    from memory_lake.store.policy import Policy

    frame = pl.DataFrame({"id": ["m1"], "tenant": ["t"], "agent_id": ["a"], "user_id": ["u"],
                          "created_at": [AS_OF], "content": ["Carol希望每周四上午收到故障复盘。"]})
    found = extract_mentions(frame, Policy())
    assert found.select("surface", "mention_kind", "content").rows() == [
        ("Carol", "thing", "Carol希望每周四上午收到故障复盘。")]   # a bare capitalised word; her other mentions say person


def test_two_facts_of_one_time_are_read_in_the_order_they_were_written(tmp_path):
    """One file without created_at: "Bo lives in Paris", then "Bo lives in Berlin". Both memories
    have the run's time, and which fact was current fell to the facts' hashes (Bo: Paris, wrong;
    Eve: right). The later line is the later write and supersedes the earlier one."""
    lake = Lake.init(tmp_path / "lake")
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", [
        {"id": f"{who}{k}", "tenant": "solo", "user_id": "bo", "content": f"{name} lives in {city}"}
        for who, name, cities in (("b", "Bo", ("Paris", "Berlin")), ("d", "Dee", ("Rome", "Oslo")),
                                  ("e", "Eve", ("Oslo", "Rome")))
        for k, city in enumerate(cities)])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    people = {e["name"]: e for e in lake.entities(tenant="solo", user="bo")["entities"] if e["kind"] == "person"}
    assert {name: ([f["content"] for f in e["facts"]], [f["content"] for f in e["history"]])
            for name, e in people.items()} == {
        "Bo": (["Bo lives in Berlin"], ["Bo lives in Paris"]),
        "Dee": (["Dee lives in Oslo"], ["Dee lives in Rome"]),
        "Eve": (["Eve lives in Rome"], ["Eve lives in Oslo"])}
