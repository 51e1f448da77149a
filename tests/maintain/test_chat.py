"""Issue 35.3: real chat is the normal case. A turn is a speaker and an utterance; greetings, thanks,
goodbyes and interjections are never entities and never contradictions; two memories about
different named things are not a contradiction. Each test starts from what was observed on LoCoMo
and on the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_lake import Lake
from memory_lake.maintain import extract_entities
from memory_lake.maintain.chat import phatic, split_turn, statement
from memory_lake.maintain.dedup import DIFFERENT, NO_STATEMENT, OTHER_SPEAKER, OTHER_THING, contradiction
from memory_lake.observe import run_nightly_steps

from ..conftest import AS_OF, write_jsonl

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "locomo" / "locomo10.json"
NO_MODELS = '[search]\nmodel = "none"\nmultilingual_model = "none"\n'


@pytest.mark.parametrize("text, expected", [
    ("Caroline: Hey Mel! Good to see you!", ("Caroline", False, "Hey Mel! Good to see you!")),
    ("用户：我下周去杭州出差。", ("用户", True, "我下周去杭州出差。")),
    ("AI: No problem, Luna, see you tomorrow!", ("AI", True, "No problem, Luna, see you tomorrow!")),
    ("张曼婷：你好，很高兴认识你", ("张曼婷", False, "你好，很高兴认识你")),
    ("Jack: I moved to Denver last spring", ("Jack", False, "I moved to Denver last spring")),  # a common word, speaking
    # labels a note opens with are no speakers
    ("Note: call Bob about the renewal", None),
    ("Decision: we export to Parquet", None),
    ("Budget: $500 for the offsite", None),                 # a common word, no pronoun: a label
    ("SKU: A-1047 is out of stock", None),
    ("备注：周五前交报告", None),
    ("吴敏提醒：预发环境数据每周脱敏一次。", None),        # a name and a verb: not a speaker
    ("https://example.com/a: the link", None),
])
def test_a_turn_is_a_speaker_and_an_utterance_and_a_label_is_not(text, expected):
    turn = split_turn(text)
    assert (tuple(turn) if turn else None) == expected


@pytest.mark.parametrize("text, said", [
    ("Caroline: Hey Mel! Good to see you! How have you been?", ""),
    ("Melanie: Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you?",
     "I'm swamped with the kids & work."),
    ("AI: You're welcome. Have fun!", ""),
    ("Tim: Take care! Talk soon!", ""),
    ("Andrew: Hey Audrey! Long time no talk! How have you been?", ""),
    ("用户：谢谢你，朋友！", ""),
    ("AI：不用谢！", ""),
    ("用户：你好，朋友，今天我去了一部新上映的电影，非常好看。你喜欢看电影吗？", "今天我去了一部新上映的电影，非常好看。"),
    ("Alice prefers dark mode.", "Alice prefers dark mode."),  # a note states what it says
    ("Standup is in the morning", "Standup is in the morning"),
])
def test_a_statement_leaves_out_greetings_thanks_goodbyes_and_questions(text, said):
    assert statement(text) == said
    assert phatic(text) is (said == "")


@pytest.mark.parametrize("a, b, why", [
    # observed on LoCoMo: greetings by two speakers were filed as a "swap", two greetings as a "negation"
    ("Caroline: Hey Mel! Good to see you!", "Melanie: Hey Caroline! Good to see you!", OTHER_SPEAKER),
    ("Jon: I love hiking", "Gina: I don't like hiking", OTHER_SPEAKER),
    ("AI: No problem, Luna, see you tomorrow!", "AI: I'm glad to help you, Luna. See you tomorrow!", NO_STATEMENT),
    ("用户：谢谢你，朋友！", "用户：没问题，朋友！", NO_STATEMENT),
    ("Calvin: Yeah, let's do it! That would be awesome.", "Calvin: Yeah, let's do this! I can't wait!", None),
    # observed on the demo: a checklist for one customer and one for another
    ("TODO: share the migration checklist for Hooli by Nov 26.",
     "TODO: share the migration checklist for Wayne Retail by Nov 14.", OTHER_THING),
    ("华信科技目前购买了424个Team版席位。", "云帆医疗目前购买了203个Team版席位。", OTHER_THING),
    ("Alice does not like tea.", "Bob likes tea.", OTHER_THING),
    ("Frank wants the churn report delivered every Monday morning.",
     "Frank wants the SLA report delivered every Tuesday morning.", OTHER_THING),  # a name for a common word
    # a title's number is part of its name; a time added is detail, not a change
    ("用户：今天我面试完了", "用户：今天下午面了字节，面了一个半小时，感觉还行", None),
])
def test_chat_and_different_things_are_never_a_contradiction(a, b, why):
    found = contradiction(a, b)
    assert found == why if why else (found is None or found in DIFFERENT)


@pytest.mark.parametrize("a, b, why", [
    ("Carol wants the incident review delivered every Friday morning.",
     "Carol wants the incident review delivered every Wednesday morning.", "date"),
    ("Meeting at 3pm on Friday with the procurement team.", "Meeting at 4pm on Friday with the procurement team.",
     "number"),
    ("User does not like coffee in the morning.", "User likes coffee in the morning.", "negation"),
    ("用户不喜欢喝咖啡，不加糖。", "用户喜欢喝咖啡，不加糖。", "negation"),
    ("北辰能源目前购买了359个Team版席位。", "北辰能源目前购买了338个Team版席位。", "number"),
    # the same speaker stating opposite facts is still a contradiction
    ("Tim: I go running every morning before work", "Tim: I never go running, mornings are way too hard", "negation"),
    ("Sam: my birthday's on March 3rd btw", "Sam: my birthday is on October 3rd btw", "date"),
    ("用户：我吃素，已经五年没吃肉了", "用户：我无肉不欢，一顿不吃肉就难受", "number"),
])
def test_a_changed_value_of_one_thing_is_still_a_contradiction(a, b, why):
    assert contradiction(a, b) == why


def _mentions(lake: Lake) -> dict[str, str]:
    return {e["name"]: e["kind"] for e in lake.entities(tenant="chat")["entities"]}


def test_speakers_are_persons_and_interjections_are_no_entities(tmp_path):
    """Observed on LoCoMo: `Wow` (77 mentions), `Yep`, `Sounds`, `Hey Caroline` were entities, the
    speakers were kind `thing` and `Just` a person."""
    lake = Lake.init(tmp_path / "lake")
    turns = [
        ("Caroline", "Hey Mel! Good to see you! How have you been?"),
        ("Melanie", "Hey Caroline! Good to see you! I'm swamped with the kids & work."),
        ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "Wow, Caroline! Sounds great. Just wanted to say Oliver loves the beach."),
        ("Caroline", "Yep! I'm reading \"Becoming Nicole\" by Amy Ellis Nutt."),
        ("Melanie", "Nah, we took the kids to the Grand Canyon with Oliver instead."),
        ("Caroline", "Bye Mel! Take care!"),
    ]
    write_jsonl(tmp_path / "chat.jsonl", [
        {"id": f"t{i}", "tenant": "chat", "content": f"{who}: {text}", "created_at": f"2026-11-0{i + 1}T10:00:00Z"}
        for i, (who, text) in enumerate(turns)])
    lake.ingest([tmp_path / "chat.jsonl"], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    assert _mentions(lake) == {
        "Caroline": "person", "Melanie": "person", "LGBTQ": "thing", "Oliver": "thing", "Becoming Nicole": "thing",
        "Amy Ellis Nutt": "thing", "Grand Canyon": "thing"}
    # the speaker's facts are what the speaker said
    caroline = next(e for e in lake.entities(tenant="chat")["entities"] if e["name"] == "Caroline")
    assert sorted(f["content"] for f in caroline["facts"]) == [
        "I went to the LGBTQ support group yesterday and it was so powerful.",
        "I'm reading \"Becoming Nicole\" by Amy Ellis Nutt."]  # "Yep!" states nothing


def test_roles_are_no_entities_and_a_chinese_title_is_one_thing(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    write_jsonl(tmp_path / "chat.jsonl", [
        {"id": "c1", "tenant": "chat", "user_id": "u1", "content": "用户：你好，我叫张曼婷，最近在读《流浪地球2》的小说。",
         "created_at": "2026-11-01T10:00:00Z"},
        {"id": "c2", "tenant": "chat", "user_id": "u1", "content": "AI：你好，张曼婷！不用谢，随时找我聊天。",
         "created_at": "2026-11-01T10:01:00Z"},
        {"id": "c3", "tenant": "chat", "user_id": "u1", "content": "用户：我下周去杭州出差。",
         "created_at": "2026-11-02T10:00:00Z"}])
    lake.ingest([tmp_path / "chat.jsonl"], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    found = {e["name"]: e["kind"] for e in lake.entities(tenant="chat", user="u1")["entities"]}
    assert found == {"张曼婷": "person", "流浪地球2": "thing", "杭州": "place"}


def _locomo_turns(conversation: int, sessions: int) -> list[dict]:
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo is read from {LOCOMO} (../shared/benchmarks), which is absent here")
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))[conversation]["conversation"]
    turns = []
    for k in range(1, sessions + 1):
        for t, turn in enumerate(data.get(f"session_{k}", [])):
            turns.append({"id": f"s{k}-{t}", "tenant": "locomo", "session_id": f"s{k}",
                          "content": f"{turn['speaker']}: {turn['text']}",
                          "created_at": f"2026-11-{k:02d}T10:{t // 60:02d}:{t % 60:02d}Z"})
    return turns


def test_a_night_over_real_locomo_sessions_files_no_greeting_and_keeps_the_speakers_as_persons(tmp_path):
    """Five sessions of LoCoMo's first conversation (Caroline and Melanie), ingested as history:
    the night ends ok, no contradiction is filed among its greetings and thanks, and the most
    mentioned entities are the two speakers, as persons; no interjection is an entity."""
    lake = Lake.init(tmp_path / "lake")
    (lake.root / "memory-lake.toml").write_text(
        NO_MODELS + "[tiers]\nshort_term_capacity = 100000\n[ingest]\nhistory = true\n", encoding="utf-8")
    write_jsonl(tmp_path / "locomo.jsonl", _locomo_turns(0, 5))
    lake = Lake.open(lake.root)
    lake.ingest([tmp_path / "locomo.jsonl"], as_of=AS_OF)
    summary = run_nightly_steps(lake, AS_OF, tmp_path / "reports")
    assert summary["status"] == "ok" and summary["publish"]["status"] == "published"
    assert lake.conflicts(status=None).height == 0
    entities = lake.entities(tenant="locomo")["entities"]
    assert sorted((e["name"], e["kind"]) for e in entities[:2]) == [("Caroline", "person"), ("Melanie", "person")]
    names = {e["name"].lower() for e in entities}
    assert not names & {"wow", "yep", "yeah", "hey", "sounds", "just", "thanks", "bye", "hey caroline", "hey mel",
                        "love", "great", "awesome", "congrats"}


def test_dedup_keeps_greetings_apart_and_says_why(tmp_path):
    """Observed on LoCoMo: two greetings of two speakers filed as a "swap", two of one speaker as a
    "negation". They are kept apart, and `dedup --dry-run --json` lists each pair with its reason."""
    from memory_lake.maintain import dedup

    lake = Lake.init(tmp_path / "lake")
    (lake.root / "memory-lake.toml").write_text(NO_MODELS, encoding="utf-8")
    lake = Lake.open(lake.root)
    texts = ["Caroline: Hey Mel! Good to see you! How have you been?",
             "Melanie: Hey Caroline! Good to see you! How have you been?",
             "Caroline: Hey Mel! Good to see you! How have you been lately?",
             "Caroline: Hey Mel! Not good to see you! How have you been?"]
    write_jsonl(tmp_path / "chat.jsonl", [
        {"id": f"g{n}", "tenant": "chat", "content": text, "created_at": f"2026-11-0{n + 1}T10:00:00Z"}
        for n, text in enumerate(texts)])
    lake.ingest([tmp_path / "chat.jsonl"], as_of=AS_OF)
    report = dedup(lake, AS_OF, dry_run=True)
    assert report.counts["contradictions"] == 0
    assert {(p["a"], p["b"], p["reason"]) for p in report.details["kept_apart"]} >= {
        ("g0", "g1", OTHER_SPEAKER), ("g1", "g2", OTHER_SPEAKER)}
    assert report.details["kept_apart_reasons"].get("states nothing", 0) + \
        report.details["kept_apart_reasons"].get(OTHER_SPEAKER, 0) == len(report.details["kept_apart"])
