"""Issue 41.3: which chat messages are worth remembering (``memory_lake.text.judge``). Whole
``Judgement`` values for English and Chinese sentences written for this test (not the blind set),
the failure paths (empty text, emoji only, a very long text, mixed scripts, unknown roles), the
assistant's rare worthy turns, and the rule machinery's own promise: every rule can only start
where ``EN_STARTS`` / ``ZH_STARTS`` or a clause start say."""

from __future__ import annotations

import unicodedata

import pytest

from memory_lake.text import Judgement, judge
from memory_lake.text import worthy

ENGLISH = [  # (text, worthy, kind, importance, reason)
    ('My name is Sarah and I work as a nurse.', True, 'fact', 0.9, 'en.fact.name'),
    ("I'm allergic to peanuts.", True, 'fact', 0.9, 'en.fact.health'),
    ("I'm 28 years old.", True, 'fact', 0.85, 'en.fact.age'),
    ('I live in Berlin with my two cats.', True, 'fact', 0.8, 'en.fact.home'),
    ('I have two kids, a boy and a girl.', True, 'fact', 0.8, 'en.fact.family'),
    ('My sister just got engaged!', True, 'event', 0.85, 'en.event.people'),
    ('My dad passed away last year.', True, 'event', 0.85, 'en.event.people'),
    ('I got promoted today!', True, 'event', 0.8, 'en.event.life'),
    ('I love hiking in the mountains.', True, 'preference', 0.8, 'en.preference.strong'),
    ("I don't like spicy food.", True, 'preference', 0.7, 'en.preference.like'),
    ("I'm not really into sports.", True, 'preference', 0.7, 'en.preference.like'),
    ('My favorite movie is Inception.', True, 'preference', 0.8, 'en.preference.favourite'),
    ('I decided to quit my job and go back to school.', True, 'decision', 0.8, 'en.decision.decided'),
    ("From now on I'll only drink decaf.", True, 'decision', 0.8, 'en.decision.from_now_on'),
    ("I think I'll go with the blue one.", True, 'decision', 0.65, 'en.decision.switch-hedge'),
    ('I have an interview next Tuesday at 10am.', True, 'commitment', 0.85, 'en.commitment.appointment+date'),
    ('Remind me to call my mom tomorrow.', True, 'commitment', 0.9, 'en.commitment.remind+date'),
    ('Can you remind me to buy milk tonight?', True, 'commitment', 0.7, 'en.commitment.remind+today'),
    ("I'm planning to learn Spanish this year.", True, 'commitment', 0.85, 'en.commitment.plan+date'),
    ('I want to visit Japan someday.', True, 'commitment', 0.5, 'en.commitment.wish'),
    ('I usually go running every morning.', True, 'fact', 0.55, 'en.fact.habit'),
    ("I've been feeling really stressed lately.", True, 'fact', 0.5, 'en.fact.state'),
    ('We went hiking yesterday with some friends.', True, 'event', 0.4, 'en.event.outing'),
    ("Just so you know, I'm vegetarian.", True, 'preference', 0.9, 'en.preference.diet+remember'),
    ('Hi there!', False, 'pleasantry', None, 'en.pleasantry'),
    ("Thanks so much, that's really helpful!", False, 'pleasantry', None, 'en.pleasantry'),
    ('Good night, talk tomorrow!', False, 'pleasantry', None, 'en.pleasantry'),
    ("What's the capital of France?", False, 'question', None, 'en.question'),
    ('Should I quit my job?', False, 'question', None, 'en.question'),
    ("If I decide to move, I'll let you know.", False, 'other', None, 'en.other'),
    ("I'll try it.", False, 'pleasantry', None, 'en.pleasantry'),
    ("I'm going to bed now.", False, 'pleasantry', None, 'en.pleasantry'),
    ('I love it!', False, 'chitchat', None, 'en.chitchat'),
    ('lol', False, 'chitchat', None, 'en.chitchat'),
    ('I had lunch with my colleague today.', False, 'other', None, 'en.other'),
]

CHINESE = [
    ('我叫李明，是一名程序员。', True, 'fact', 0.9, 'zh.fact.name'),
    ('我对花生过敏。', True, 'fact', 0.9, 'zh.fact.health'),
    ('我今年28岁。', True, 'fact', 0.85, 'zh.fact.age'),
    ('我住在北京，养了两只猫。', True, 'fact', 0.8, 'zh.fact.home'),
    ('我有两个孩子。', True, 'fact', 0.8, 'zh.fact.family'),
    ('我姐姐刚订婚了！', True, 'event', 0.85, 'zh.event.people'),
    ('我爸爸去年去世了。', True, 'event', 0.85, 'zh.event.people'),
    ('我今天升职了！', True, 'event', 0.8, 'zh.event.life'),
    ('我喜欢爬山。', True, 'preference', 0.7, 'zh.preference.like'),
    ('我不喜欢吃辣的。', True, 'preference', 0.7, 'zh.preference.like'),
    ('我最喜欢的电影是盗梦空间。', True, 'preference', 0.9, 'zh.preference.favourite+strong'),
    ('我决定辞职回学校读书。', True, 'decision', 0.8, 'zh.decision.decided'),
    ('从今天开始我只喝无咖啡因的咖啡。', True, 'decision', 0.8, 'zh.decision.from_now_on'),
    ('我下周二上午十点有个面试。', True, 'commitment', 0.85, 'zh.commitment.appointment+date'),
    ('提醒我明天给妈妈打电话。', True, 'commitment', 0.9, 'zh.commitment.remind+date'),
    ('你能提醒我今晚买牛奶吗？', True, 'commitment', 0.7, 'zh.commitment.remind+today'),
    ('我打算今年学西班牙语。', True, 'commitment', 0.85, 'zh.commitment.plan+date'),
    ('我想去日本旅游。', True, 'commitment', 0.5, 'zh.commitment.wish'),
    ('我每天早上都去跑步。', True, 'fact', 0.55, 'zh.fact.habit'),
    ('我最近压力特别大。', True, 'fact', 0.5, 'zh.fact.state'),
    ('我们昨天和朋友去爬山了。', True, 'event', 0.4, 'zh.event.outing'),
    ('记住，我是吃素的。', True, 'preference', 0.9, 'zh.preference.diet+remember'),
    ('明天要去医院复查', True, 'commitment', 0.85, 'zh.commitment.dated+date'),
    ('你好！', False, 'pleasantry', None, 'zh.pleasantry'),
    ('谢谢你，帮了大忙！', False, 'pleasantry', None, 'zh.pleasantry'),
    ('晚安，明天聊！', False, 'pleasantry', None, 'zh.pleasantry'),
    ('法国的首都是哪里？', False, 'question', None, 'zh.question'),
    ('我该辞职吗？', False, 'question', None, 'zh.question'),
    ('如果我决定搬家的话，我会告诉你。', False, 'other', None, 'zh.other'),
    ('我会试试的。', False, 'pleasantry', None, 'zh.pleasantry'),
    ('我要去睡觉了。', False, 'pleasantry', None, 'zh.pleasantry'),
    ('我爱你！', False, 'chitchat', None, 'zh.chitchat'),
    ('哈哈哈', False, 'chitchat', None, 'zh.chitchat'),
    ('我今天去上班了。', False, 'other', None, 'zh.other'),
    ('我明天要去上海出差，你觉得我该带什么？', True, 'commitment', 0.85, 'zh.commitment.appointment+date'),
]


@pytest.mark.parametrize(("text", "worthy_", "kind", "importance", "reason"), ENGLISH + CHINESE)
def test_a_sentence_gets_its_whole_judgement(text, worthy_, kind, importance, reason):
    assert judge(text) == Judgement(worthy_, kind, importance, reason)


def test_the_sets_cover_every_memory_kind_and_the_skipped_ones_in_both_languages():
    for cases, lang in ((ENGLISH, "en"), (CHINESE, "zh")):
        assert len(cases) >= 30
        assert {c[2] for c in cases} == {"preference", "decision", "fact", "commitment", "event", "pleasantry",
                                         "question", "chitchat", "other"}
        assert all(c[4].startswith(lang + ".") for c in cases)


@pytest.mark.parametrize(("text", "expected"), [
    ("", Judgement(False, "other", None, "empty")),
    ("   \n\t ", Judgement(False, "other", None, "empty")),
    ("👍", Judgement(False, "chitchat", None, "no words")),
    ("🎉🎉🎉!!! 😂", Judgement(False, "chitchat", None, "no words")),
    ("123 456", Judgement(False, "chitchat", None, "no words")),
    ("???", Judgement(False, "chitchat", None, "no words")),
    # mixed scripts: both rule sets read the message, the script with more text names the language
    ("My favorite food is 火锅", Judgement(True, "preference", 0.8, "en.preference.favourite")),
    ("我最近在学 Python programming", Judgement(True, "fact", 0.6, "zh.fact.skill")),
    ("I'm moving to 上海 next month", Judgement(True, "commitment", 0.85, "en.commitment.dated+date")),
    ("我下周要去 New York 出差", Judgement(True, "commitment", 0.85, "zh.commitment.dated+date")),
    ("OK 好的", Judgement(False, "pleasantry", None, "zh.pleasantry")),
    # full-width punctuation and curly apostrophes read as their plain forms
    ("I’m allergic to shellfish！", Judgement(True, "fact", 0.9, "en.fact.health")),
    # emoji after a pleasantry and its trailing "there" / "everyone" leave it one
    ("hi there 😊", Judgement(False, "pleasantry", None, "en.pleasantry")),
    ("Good night everyone ❤️", Judgement(False, "pleasantry", None, "en.pleasantry")),
    ("晚安😴", Judgement(False, "pleasantry", None, "zh.pleasantry")),
    # code is no memory
    ("```python\ndef f(): pass\n```", Judgement(False, "chitchat", None, "no words")),
])
def test_failure_paths_and_mixed_scripts(text, expected):
    assert judge(text) == expected


def test_a_very_long_message_is_read_only_to_max_chars_and_stays_fast():
    hit_late = "blah " * 1000 + "I love hiking."
    assert judge(hit_late) == Judgement(False, "other", None, "en.other")  # the hit is past MAX_CHARS
    assert judge("I love hiking. " + "blah " * 100_000) == Judgement(True, "preference", 0.8, "en.preference.strong")
    assert judge("x" * 50_000) == Judgement(False, "chitchat", None, "en.chitchat")
    assert judge("我喜欢爬山。" * 10_000) == Judgement(True, "preference", 0.7, "zh.preference.like")
    assert judge(None) == Judgement(False, "other", None, "empty")  # not text at all


@pytest.mark.parametrize(("text", "role", "expected"), [
    ("I love hiking", "human", Judgement(True, "preference", 0.8, "en.preference.strong")),
    ("I love hiking", "system", Judgement(False, "other", None, "system turn")),
    ("I love hiking", "Tool", Judgement(False, "other", None, "tool turn")),
    ("I love hiking", None, Judgement(True, "preference", 0.8, "en.preference.strong")),
    # the assistant: worthy only when it commits to something concrete for the user
    ("I'll remind you tomorrow at 9am to call your mom.", "assistant",
     Judgement(True, "commitment", 0.8, "en.assistant.commitment+date")),
    ("I've booked a table for two.", "ai", Judgement(True, "commitment", 0.6, "en.assistant.commitment")),
    ("If you want, I can remind you later.", "assistant", Judgement(False, "other", None, "en.assistant")),
    ("Would you like me to set a reminder?", "assistant", Judgement(False, "question", None, "en.assistant")),
    ("I will remember that you love hiking.", "assistant", Judgement(False, "other", None, "en.assistant")),
    ("I love hiking too!", "assistant", Judgement(False, "other", None, "en.assistant")),
    ("好的，我会在明天早上八点提醒你吃药。", "assistant", Judgement(True, "commitment", 0.8, "zh.assistant.commitment+date")),
    ("已经帮你预约了牙医。", "bot", Judgement(True, "commitment", 0.6, "zh.assistant.commitment")),
    ("如果你需要的话，我可以提醒你。", "assistant", Judgement(False, "other", None, "zh.assistant")),
    ("你可以试试早点睡觉，多喝水。", "assistant", Judgement(False, "question", None, "zh.assistant")),
])
def test_roles(text, role, expected):
    assert judge(text, role) == expected


def test_importance_is_in_range_and_only_on_worthy_messages():
    for text, *_ in ENGLISH + CHINESE:
        j = judge(text)
        assert j.kind in worthy.KINDS
        assert (j.importance is not None) == j.worthy == (j.kind in worthy.MEMORY_KINDS)
        assert j.importance is None or 0.1 <= j.importance <= 0.95


def test_every_rule_starts_only_where_the_scanner_looks():
    """``judge`` tries rules only at clause starts and at the words of EN_STARTS / ZH_STARTS (speed);
    a rule that could start elsewhere would silently never fire there."""
    texts = [c[0] for c in ENGLISH + CHINESE] + [
        "Hello, I'm Tom. Lately I have been stressed. Starting today, I quit sugar. Let us go with the red one.",
        "Never let me forget: set a reminder. Recently, I've been feeling down. These days I go running.",
        "你好，我是小王。是我妈妈的生日。提醒我。别让我忘了。到时候叫我。最近工作压力好大。今天我们去了长城。",
        "从明天起，我要早睡。一直失眠。前几天我去了上海。就这么定了。周末去爬山。喜欢吃辣。",
    ]
    for text in texts:
        t = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
        t = worthy._CONTRACTION.sub(lambda m: worthy.EN_CONTRACTIONS[m.group(0)], t)
        bounds = worthy._clauses(t)
        for lang, starts in (("en", worthy.EN_STARTS), ("zh", worthy.ZH_STARTS)):
            places = set(worthy._candidates(t, bounds, starts))
            _, each = worthy._compiled(lang)
            for pattern in each:
                assert [p for p in range(len(t)) if pattern.match(t, p) and p not in places] == [], (pattern.pattern, t)
