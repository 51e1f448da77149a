"""Chat turns (issue 35): a memory that is one turn of a conversation, ``"Caroline: I went to the
art show"`` or ``"用户：我今天去了电影院"``, is a speaker and an utterance, and much of what people
say in a chat states no fact at all ("Hey Mel! Good to see you!", "Thanks!", "不用谢！").

**Speaker.** A memory opens with a speaker when what stands before its first colon (``:`` or
``：``) is a role (``User``, ``AI``, ``Assistant``, ``用户``, ``助手`` ...: ``ROLES``) or a name:
one to three capitalised words in Latin script, or two to four Chinese characters, that are not a
label a note opens with (``Note:``, ``Decision:``, ``TODO:``, ``备注：``, ``决定：`` ...:
``_LABELS``). A prefix that is also a common word ("Jack", "Frank", "Sunny", "Budget") is a name
only when the utterance speaks as a person does, with a personal pronoun (I, you, we, she, they
…), an exclamation or a question ("Budget: $500" is a label, "Jack: I moved to Denver" and "Caroline: Bye
Mel!" speakers). A named speaker is a person (entities
reads it so); a role is no entity.

**Phatic talk.** Greetings, thanks, goodbyes, congratulations, acknowledgements and interjections
(``_PHATIC_PHRASES``, ``_PHATIC_WORDS``: "good to see you", "no problem", "see you tomorrow",
"wow", "yep", "你好", "不用谢", "没问题", "再见", "哈哈" ...) hold no fact, and neither does a
question: it asks. ``statement`` is what is left of an utterance when its questions and phatic
sentences are dropped, and the phatic phrases and the names it addresses ("Hey Mel!") taken out
of the rest. A memory whose statement is empty states nothing: dedup never reads a contradiction
into it, and entities never take an interjection for a name.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

# Speakers that are roles, not names (lower case): the turn has a speaker, the speaker is no entity.
ROLES = frozenset("""
    user assistant ai bot chatbot agent system human me you customer client support operator model gpt
    用户 助手 助理 客服 客户 机器人 系统 我 你 ai助手 智能助手 小助手 人工智能 顾客 访客 主持人
    """.split())
# Words a note opens with before a colon ("Note: ...", "决定：..."): a label, never a speaker.
_LABELS = frozenset("""
    note notes nb ps todo to-do fyi decision decisions decided summary recap update updates reminder reminders
    remember question questions q a answer re subject title status action actions task tasks issue issues problem
    goal goals plan plans idea ideas lesson lessons tip tips warning error errors important context preference
    preferences fact facts event events result results reason outcome agenda date time when where location
    address phone email name names project customer account ticket order source link url topic topics key
    meeting minutes next follow-up followup step steps budget deadline cost price total note-to-self
    owner priority category type tag tags example examples eg ie i.e e.g bug fix feature release version
    update edit correction warning caution attention highlight highlights summary_of agreed decision_log
    备注 提醒 决定 决策 总结 摘要 注意 问题 答案 回答 任务 计划 目标 时间 地点 事件 结论 原因 结果 更新 待办
    说明 要点 重点 关键 偏好 事实 背景 会议 议题 进展 状态 主题 标题 地址 电话 邮箱 姓名 名字 项目 客户信息
    订单 预算 截止 价格 费用 日期 备忘 笔记 记录 附注 注 例如 比如 提示 警告 错误 原话 原文 链接 来源
    """.split())
_PRONOUNS_EN = re.compile(r"\b(?:i|i'm|i’m|i've|i’ve|i'll|i’ll|i'd|i’d|me|my|mine|myself|we|we're|we’re|us|our|"
                          r"you|you're|you’re|your|yours|let's|let’s|he|she|he's|she's|his|her|him|they|them|their)\b",
                          re.IGNORECASE)
_PRONOUNS_ZH = re.compile(r"[我你您咱俺]")
_LATIN_NAME = re.compile(r"[A-Z][A-Za-z'’.\-]*(?: [A-Z][A-Za-z'’.\-]*){0,2}")
_HAN_NAME = re.compile(r"[\u3400-\u9fff·]{2,4}")
_TURN = re.compile(r"\A\s*([^:：\n]{1,40}?)\s*[:：]\s*(\S[\s\S]*)\Z")


class Turn(NamedTuple):
    speaker: str        # as written ("Caroline", "用户")
    role: bool          # a role (User, AI, 用户), not a name
    utterance: str      # the text after the colon

    @property
    def key(self) -> str:
        return self.speaker.casefold()


@functools.lru_cache(maxsize=100_000)
def split_turn(text: str) -> Turn | None:
    """The speaker and utterance of a chat turn, or None when `text` does not open with a speaker
    (see the module docstring)."""
    match = _TURN.match(text or "")
    if not match:
        return None
    speaker, utterance = match.group(1).strip(), match.group(2).strip()
    folded = speaker.casefold()
    if folded in ROLES:
        return Turn(speaker, True, utterance)
    if folded in _LABELS or folded.split(" ")[0] in _LABELS or "http" in folded:
        return None
    if _LATIN_NAME.fullmatch(speaker):
        words = speaker.replace(".", "").split()
        if any(w.isupper() and len(w) > 1 for w in words) and not _PRONOUNS_EN.search(utterance):
            return None                                  # "SKU: A-1047", "API: v2": an acronym label
        if all(_common_english(w.lower()) for w in words) and not _PRONOUNS_EN.search(utterance) \
                and not re.search(r"[!?]", utterance):
            return None                                  # "Budget: $500" (not "Caroline: Bye Mel!")
        return Turn(speaker, False, utterance)
    if _HAN_NAME.fullmatch(speaker):
        if _chinese_name(speaker) or (len(speaker) <= 3 and not _common_chinese(speaker)
                                      and _PRONOUNS_ZH.search(utterance)):
            return Turn(speaker, False, utterance)      # "张曼婷：你好", "小琳：我..."
        return None                                      # "预算：500元", "吴敏提醒：..."
    return None


def _common_english(word: str) -> bool:
    from ..text import lexicon
    from ..text import ENGLISH_STOP_WORDS

    return word in ENGLISH_STOP_WORDS or lexicon.is_english_word(word)


def _chinese_name(word: str) -> bool:
    """A Chinese personal name: a surname and one or two characters (张曼婷, 欧阳娜娜), or a
    nickname (小琳, 老王), not a common word (王国 "kingdom")."""
    from ..text import COMPOUND_SURNAMES as _COMPOUND_SURNAMES, SURNAMES as _SURNAMES

    if word[:2] in _COMPOUND_SURNAMES:
        return 3 <= len(word) <= 4
    return 2 <= len(word) <= 3 and (word[0] in _SURNAMES or word[0] in "小老阿") and not _common_chinese(word)


def _common_chinese(word: str) -> bool:
    from ..text import lexicon

    return lexicon.common_word(word)


# ---------------------------------------------------------------------------- phatic talk
# Whole phrases that greet, thank, take leave, congratulate or acknowledge (lower case, matched on
# word boundaries, longest first). Written from how people chat, not from any evaluation set.
_PHATIC_PHRASES_EN = """
    good to see you|nice to see you|great to see you|good to hear from you|nice to hear from you|great to hear from you
    nice to meet you|pleased to meet you|good to meet you|nice talking to you|nice chatting with you|good talking to you
    great talking to you|great chatting with you|talk to you later|talk to you soon|talk soon|talk later|catch you later
    see you later|see you soon|see you tomorrow|see you next time|see you around|see ya|see you|until next time
    take care of yourself|take care|have a good day|have a great day|have a nice day|have a good night|have a good one
    have a great weekend|have a good weekend|have a nice weekend|have a great time|have a good time|have fun|enjoy
    long time no see|long time no talk|long time no chat|long time no speak|it's been a while|been a while|been ages
    can't wait to see you|can't wait to hear|can't wait|cannot wait|so excited|super stoked|stoked
    good night|goodnight|good morning|good afternoon|good evening|morning|bye for now|bye bye|goodbye|bye
    how are you doing|how are you|how have you been|how's it going|how is it going|how are things|what's up|whats up
    how about you|and you|you too|same to you|same here|me too
    thank you so much|thank you very much|thanks so much|thanks a lot|thanks a bunch|many thanks|thank you|thanks|thx
    no problem|no problem at all|no worries|you're welcome|you are welcome|my pleasure|anytime|any time|don't mention it
    glad to help|happy to help|glad i could help|happy i could help|glad to hear it|glad to hear that|good to hear
    great to hear|nice to hear|happy to hear|sorry to hear that|sorry to hear|i'm sorry to hear that
    congratulations|congrats|well done|good job|great job|good luck|best of luck|all the best|cheers
    sounds good|sounds great|sounds fun|sounds amazing|sounds awesome|sounds like fun|sounds like a plan|that sounds great
    that sounds amazing|that sounds awesome|that sounds fun|that's great|that's awesome|that's amazing|that's cool
    that's so cool|that's wonderful|that's fantastic|how cool|how nice|so cool|so nice|love it|love that|i love that
    of course|for sure|sure thing|got it|makes sense|i see|fair enough|oh well|you bet|absolutely|definitely|totally
    exactly|indeed|right|alright|all right|okay|ok|sure|yes|yeah|yep|yup|nope|no|hey there|hi there|hello there|hey|hi
    hello|hiya|howdy|wow|whoa|woah|oh|ooh|ohh|ah|aah|aw|aww|awww|hmm|hmmm|um|umm|uh|uhh|er|haha|hahaha|hehe|lol|lmao
    omg|oh my god|oh my gosh|gosh|geez|yay|woohoo|phew|oops|ugh|meh|sorry|please|dear|buddy|pal|friend|my friend
    nah|gotcha|lemme|oof|mmm|mm|dang|darn|ouch|yo|yikes|whoops|welp|aha|ahh|hooray|btw|tbh|imo|idk|brb|ttyl|np|ty
"""
_PHATIC_PHRASES_ZH = """
    你好|您好|大家好|早上好|上午好|中午好|下午好|晚上好|早安|午安|晚安|嗨|哈喽|哈啰|嘿|喂
    谢谢你|谢谢您|谢谢|多谢|感谢你|感谢您|感谢|非常感谢|太感谢了|不用谢|不客气|别客气|不谢|客气了
    没问题|没有问题|没关系|没有关系|没事|没事儿|不要紧|别担心|放心
    再见|拜拜|回头见|明天见|下次见|待会见|一会儿见|改天见|下次聊|回头聊|再聊|先不聊了|不聊了|先这样吧|先这样|就聊到这里|就聊到这|下线了|先下了
    好的|好吧|好啊|好呀|好滴|行|可以|嗯嗯|嗯|哦|噢|喔|啊|呀|哇|哇塞|哈哈哈|哈哈|呵呵|嘿嘿|嘻嘻|唉|哎|哎呀
    加油|辛苦了|辛苦|恭喜|恭喜你|祝贺你|祝贺|太好了|太棒了|真棒|很棒|好棒|真好|不错|真不错|挺好|对|对的|是的|确实
    祝你好运|祝你开心|祝你愉快|祝你|开心|愉快|朋友|亲爱的|亲|宝贝|我的朋友|老朋友|很高兴认识你|很高兴见到你|很高兴
    很高兴能帮到你|很高兴帮到你|帮到你我很高兴|能帮到你我很高兴|我很高兴|不用谢
"""


def _phrases(block: str) -> tuple[str, ...]:
    return tuple(sorted({p.strip() for line in block.split("\n") for p in line.split("|") if p.strip()},
                        key=lambda p: (-len(p), p)))


_EN = _phrases(_PHATIC_PHRASES_EN)
_ZH = _phrases(_PHATIC_PHRASES_ZH)
_EN_RE = re.compile(r"(?<![a-z'’])(?:" + "|".join(re.escape(p).replace("'", "['’]") for p in _EN) + r")(?![a-z'’])")
_ZH_RE = re.compile("|".join(re.escape(p) for p in _ZH))
# Words the phatic test reads past (particles, pronouns, punctuation live elsewhere).
_FILLER_ZH = frozenset("的了呢吧啊哦呀嘛啦哈么你我他她它们也都很真太就还再又挺蛮超好这那个一下")
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*|[.!?。！？]+")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_HAN = re.compile(r"[\u3400-\u9fff]")


def _question(sentence: str) -> bool:
    """A question: it ends with a question mark, or with 吗 ("你去过杭州吗。")."""
    return sentence.rstrip().endswith(("?", "？")) or bool(re.search(r"吗[。.！!~～]*\s*$", sentence))


def _left_over(sentence: str, names: frozenset[str]) -> str:
    """`sentence` without its phatic phrases and the names it addresses (lower case)."""
    text = sentence.casefold()
    for name in names:
        text = re.sub(rf"(?<![\w]){re.escape(name)}(?![\w])", " ", text)
    text = _EN_RE.sub(" ", text)
    return _ZH_RE.sub(" ", text)


def _addressed(rest: str) -> bool:
    """Whether what is left of a clause of a phatic sentence is only a Chinese name it addresses
    (小琳, 张曼婷)."""
    from ..text import COMPOUND_SURNAMES as _COMPOUND_SURNAMES, SURNAMES as _SURNAMES

    han = "".join(_HAN.findall(rest))
    return (2 <= len(han) <= 3 and len(han) == len(rest.strip(" \t,，.。!！~～")) and
            (han[0] in _SURNAMES or han[0] in "小老阿" or han[:2] in _COMPOUND_SURNAMES))


def _states_nothing(rest: str, vocatives: frozenset[str] = frozenset(), phatic_sentence: bool = False) -> bool:
    from ..text import ENGLISH_STOP_WORDS

    words = _WORD.findall(rest)
    if words and all(w in vocatives for w in words):
        return True                                      # "Hey Mel", "Thanks, Caroline": the name addressed
    words = [w for w in words if w not in ENGLISH_STOP_WORDS]
    han = [c for c in _HAN.findall(rest) if c not in _FILLER_ZH]
    return not words and (len(han) <= 1 or (phatic_sentence and _addressed(rest)))


_CLAUSE = re.compile(r"([,，;；:：]+)")


def statement(text: str, names: frozenset[str] = frozenset(), questions: bool = False) -> str:
    """What `text` states: its utterance (the speaker dropped) without questions, phatic sentences
    ("Hey Mel! Good to see you!") and phatic clauses ("你好，朋友，今天我去了电影院" -> "今天我去了
    电影院"). Empty when it states nothing. `names`: lower-case names the chat addresses (its
    speakers), read past; in a sentence that greets or thanks, a capitalised word is read as the
    name it addresses too ("No problem, Luna, see you tomorrow!"). `questions`: keep the questions
    (entities reads them: "Have you been to Lisbon?" names a place)."""
    turn = split_turn(text)
    body = turn.utterance if turn else text
    kept = []
    for sentence in _SENTENCE.findall(body or ""):
        if not sentence.strip(" \t.!?。！？,，~～…") or (not questions and _question(sentence)):
            continue
        folded = sentence.casefold()
        phatic_sentence = bool(_EN_RE.search(folded) or _ZH_RE.search(sentence))
        vocatives = frozenset(w.casefold() for w in re.findall(r"(?<![A-Za-z])[A-Z][a-z]+(?![A-Za-z])", sentence)
                              ) if phatic_sentence else frozenset()
        parts = _CLAUSE.split(sentence)
        clauses = [(parts[i], parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]
        stating = [(c, sep) for c, sep in clauses
                   if c.strip() and not _states_nothing(_left_over(c, names), vocatives, phatic_sentence)]
        if not stating:
            continue
        kept.append("".join(c + sep for c, sep in stating).strip().rstrip(",，;；:：").strip() +
                    ("" if re.search(r"[.!?。！？]$", stating[-1][0].strip()) else _end(sentence)))
    return " ".join(kept)


def _end(sentence: str) -> str:
    end = re.search(r"[.!?。！？]+$", sentence.strip())
    return end.group() if end else ""


def phatic(text: str, names: frozenset[str] = frozenset()) -> bool:
    """Whether `text` states nothing (greetings, thanks, goodbyes, interjections, questions only)."""
    return not statement(text, names)


@functools.lru_cache(maxsize=1)
def phatic_words() -> frozenset[str]:
    """Single words that greet, thank or exclaim ("wow", "yep", "hey", "congrats", "thanks"): at
    the start of a sentence they are never a name."""
    return frozenset(p for p in _EN if " " not in p and "'" not in p)
