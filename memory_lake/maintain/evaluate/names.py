"""Names (package docstring, *names*): English capitalised spans, jieba's Chinese names and the
person references it misses, the context the rules read across all the texts (speakers, words
capitalised mid-sentence, the source's vocabulary) and when a name occurs in a text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from .dates import _MONTH_NAMES, _WEEKDAYS
from .fact import _CJK, Fact

# Words that are capitalised only because they start a sentence or a label: function words,
# discourse words of a conversation, the roles of a chat transcript (user, assistant, system ...)
# and the seed's summary labels. Never names.
NOT_NAMES = frozenset("""
a an the i we you he she it they me us him her them my our your his its their this that these those
there here what which who whom whose when where why how if then so and but or nor yet also too as at
by for from in into of on onto to with without about after before during since until while because
although though unless whether do does did done is are was were be been being am have has had will
would shall should can could may might must let lets let's not no yes yeah yep nope ok okay sure hi
hello hey thanks thank please sorry great good fine cool right well oh ah hmm now today tomorrow
yesterday tonight just still already again maybe perhaps anyway actually basically all any each every
user assistant system human ai bot agent
some most many more much few other another both either neither such only very really
note notes update updates summary summaries decision decisions decided lesson lessons learned todo todos
to-do task tasks event events fact facts problem cause root avoidance avoid impact outcome result why
what priority due deadline owner action actions item items next step steps time place people who
""".split())
# jieba's dictionary tags some pleasantries as person names (谢谢 is "nr"); chatter is never a name.
NOT_NAMES_ZH = frozenset("谢谢 感谢 多谢 好的 收到 辛苦 再见 哈哈 嗯嗯 没问题 不好意思 对不起".split())
_NAME_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz"})
# jieba's dictionary tags many ordinary words as person names (nr: 太贵-like adjectives, kinship and
# role words), so a person name must start with one of the common family names (the usual top
# surnames of 百家姓 frequency lists), optionally after 老/小/阿 (老周, 小王).
COMMON_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付傅方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧")


_L = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"  # Latin letters, accented too (Inês)
_LATIN_WORD = re.compile(rf"[{_L}][{_L}0-9]*(?:['’][{_L}]+)?(?:-[{_L}0-9]+)*")
_OPENERS = " \t\"'“‘([{*_•·-–—>"
_SENTENCE_CUT = re.compile(r"[:：.!?。！？]")
_LETTER = re.compile(r"[^\W\d_]")


def _strip_possessive(word: str) -> str:
    """The word without a possessive or clitic: Alice's -> Alice, I'd -> I, We're -> We."""
    return re.sub(r"['’](?:s|d|ll|ve|m|re|t)$", "", word, flags=re.IGNORECASE)


def _is_marked(word: str) -> bool:
    """An acronym (TLS), a mixed-case word (PostgreSQL, iOS) or a word with a digit (Q3)."""
    return (sum(ch.isupper() for ch in word) >= 2) or any(ch.isdigit() for ch in word)


@dataclass
class _Context:
    """What the name rules know about all the texts: words capitalised mid-sentence, the source's
    lower-cased vocabulary and (for summary statements) the source's names."""

    capitalised_inside: set[str] = field(default_factory=set)
    speakers: set[str] = field(default_factory=set)
    speaker_labels: set[str] = field(default_factory=set)
    source_words: set[str] = field(default_factory=set)
    source_stems: set[str] = field(default_factory=set)
    source_names: set[str] = field(default_factory=set)


def _latin_words(text: str) -> list[tuple[str, int, int, bool]]:
    """(word, start, end, initial) for each Latin word; `initial` when only openers precede it in the
    sentence or it follows a colon."""
    # initial: no letter of any script since the sentence start or the last colon, so a timestamp
    # or a list number before the word does not make it mid-sentence. One pass over the text: a
    # long line without a full stop (a pasted JSON blob) must not cost its length squared.
    cuts = iter(m.end() for m in _SENTENCE_CUT.finditer(text))
    words, cut, next_cut, previous_start, previous_end = [], 0, next(cuts, None), -1, 0
    for m in _LATIN_WORD.finditer(text):
        while next_cut is not None and next_cut <= m.start():
            cut, next_cut = next_cut, next(cuts, None)
        initial = previous_start < cut and not _LETTER.search(text, max(cut, previous_end), m.start())
        words.append((_strip_possessive(m.group(0)), m.start(), m.end(), initial))
        previous_start, previous_end = m.start(), m.end()
    return words


def _latin_names(text: str, ctx: _Context, summary: bool) -> list[Fact]:
    words = _latin_words(text)
    names: list[Fact] = []
    span: list[tuple[str, int]] = []

    def close() -> None:
        if span:
            names.append(Fact("name", " ".join(w for w, _ in span).casefold(), " ".join(w for w, _ in span),
                              span[0][1]))
            span.clear()

    previous_end = None
    for word, start, end, initial in words:
        lower = word.casefold()
        capital = word[0].isupper()
        if previous_end is not None and text[previous_end:start] != " ":
            close()
        previous_end = end
        if not capital or lower in NOT_NAMES or lower in _MONTH_NAMES or lower in _WEEKDAYS:
            close()
            continue
        if initial:
            speaker = lower in ctx.speakers
            name = (speaker or _is_marked(word) or lower in ctx.capitalised_inside
                    or (summary and (lower in ctx.source_names or _new_word(word, ctx))))
            if not name:
                close()
                continue
        span.append((word, start))
    close()
    return names


def _new_word(word: str, ctx: _Context) -> bool:
    """Whether no form of `word` occurs in the source (``Payments`` occurs as ``payment``,
    ``Passive`` as ``passively``: a source word with the same stem, or starting with it)."""
    from ...text import tokenize

    stems = set(tokenize(word))
    return bool(stems) and not stems & ctx.source_stems and not any(
        known.startswith(s) for s in stems if len(s) >= 4 for known in ctx.source_stems)


# Places and organisations jieba tags reliably end in an administrative, geographic or
# institutional word (浦东新区, 杭州市, 西湖, 北京大学, 法务部); jieba's dictionary tags many common
# words ns/nt too (a thing, to go on stage), so an ns/nt word without such an ending is checked in
# summary statements but is not a key fact.
_PLACE_ENDS = tuple("省市区县州镇乡村路街道巷山江河湖海岛港湾站城国府园寺桥楼"
                    "部局厅处署委院所校社行司团馆店") + ("大学", "学院", "医院", "公司", "集团", "银行", "中心", "协会")
# A person name that jieba's dictionary knows with a corpus frequency this high is a common word
# it mis-tags (段时间 "period", 白白 "in vain"); the names of people are rare in its corpus.
COMMON_WORD_FREQ = 100


def _surname_head(word: str) -> bool:
    head = word[1:] if word[0] in "老小阿" and len(word) >= 2 else word
    return head[:1] in COMMON_SURNAMES


# A personal pronoun is never part of a name: jieba tags 谢谢您 / 谢谢你们 (谢 is a family name) as a person.
_PRONOUN_ZH = re.compile("[您你我他她它们咱俺]")


def _jieba_names(text: str) -> list[Fact]:
    from ...text import jieba_segmenter

    jieba_segmenter()
    import jieba.posseg

    names, pos = [], 0
    pairs = jieba.posseg.lcut(text)
    for pair in pairs:
        at = text.find(pair.word, pos)
        pos = at + len(pair.word) if at >= 0 else pos
        if (pair.flag in _NAME_FLAGS and len(pair.word) >= 2 and _CJK.search(pair.word)
                and pair.word not in NOT_NAMES_ZH and not _PRONOUN_ZH.search(pair.word)
                and (not pair.flag.startswith("nr") or pair.flag == "nrt" or _surname_head(pair.word))):
            # a person (nr with a family name) is a name; jieba's dictionary also tags common words
            # as places and organisations (ns, nt) and as other proper nouns (nz) far more often
            grade = ("support" if pair.flag == "nz" or (pair.flag in ("ns", "nt") and not pair.word.endswith(_PLACE_ENDS))
                     or (pair.flag.startswith("nr") and jieba.dt.FREQ.get(pair.word, 0) >= COMMON_WORD_FREQ)
                     else "hard" if pair.flag.startswith("nr") else "soft")
            names.append(Fact("name", pair.word, pair.word, max(at, 0), grade))
    return _person_references(text, pairs, names)


# How Chinese refers to a person by family name: 老/小/阿 before it (老周, 小王) or a title or kinship
# word after it (刘工, 王总, 张经理, 李老师, 陈医生, 王师傅, 李姐). A general resource, like the surnames.
PERSON_TITLES = ("工程师", "总经理", "总监", "经理", "老师", "医生", "大夫", "师傅", "主任", "老板", "教授", "律师",
                 "博士", "院长", "局长", "处长", "科长", "部长", "所长", "校长", "书记", "主管", "队长", "班长",
                 "同学", "护士", "阿姨", "先生", "女士", "小姐", "工", "总", "董", "姐", "哥", "叔", "姨", "婶")
_PERSON_REF = re.compile(rf"[老小阿][{''.join(sorted(COMMON_SURNAMES))}]|[{''.join(sorted(COMMON_SURNAMES))}]"
                         rf"(?:{'|'.join(sorted(PERSON_TITLES, key=len, reverse=True))})")


def _person_references(text: str, pairs: list, names: list[Fact]) -> list[Fact]:
    """`names` (jieba's) with the person references its tags miss or grade low (老周 is tagged a time
    word, 老王 is frequent): :data:`_PERSON_REF` spans that begin and end on jieba word boundaries
    (周总结 = 周 + 总结 and 小程序 = 小 + 程序 are no reference) and, when the span is one frequent
    dictionary word, jieba tags it a person (小于 "less than" is none). They are hard facts."""
    import jieba

    bounds, pos = set(), 0
    tokens: dict[int, Any] = {}
    for pair in pairs:
        tokens[pos] = pair
        bounds.add(pos)
        pos += len(pair.word)
    bounds.add(pos)
    refs = []
    for m in _PERSON_REF.finditer(text):
        start, end = m.span()
        if start not in bounds or end not in bounds:
            continue
        token = tokens.get(start)
        if (token is not None and token.word == m.group(0) and not token.flag.startswith("nr")
                and jieba.dt.FREQ.get(m.group(0), 0) >= COMMON_WORD_FREQ):
            continue
        refs.append(Fact("name", m.group(0), m.group(0), start, "hard"))
    spans = {(f.pos, f.text) for f in refs}
    return [f for f in names if (f.pos, f.text) not in spans] + refs


_SPEAKER = re.compile(r"^[\W\d_]*?([^\W\d_][\w'’.-]*(?:\s+[^\W\d_][\w'’.-]*){0,2})\s*[:：]")


def _build_context(source_sentences: list[str], statements: list[str]) -> _Context:
    ctx = _Context()
    labels: dict[str, int] = {}
    for text in source_sentences:
        m = _SPEAKER.match(text)
        if m:
            labels[m.group(1)] = labels.get(m.group(1), 0) + 1
    # a speaker labels two lines or more of the source ("Alice: ..."); a one-off "Results:" is not one
    ctx.speakers = {w.casefold() for label, n in labels.items() if n >= 2 for w in label.split()}
    ctx.speaker_labels = {label.casefold() for label, n in labels.items() if n >= 2}
    for text in source_sentences + statements:
        for word, _, _, initial in _latin_words(unicodedata.normalize("NFKC", text)):
            if not initial and word[:1].isupper():
                ctx.capitalised_inside.add(word.casefold())
    for text in source_sentences:
        for word, _, _, _ in _latin_words(unicodedata.normalize("NFKC", text)):
            if word.islower():
                ctx.source_words.add(word)
    from ...text import tokenize

    ctx.source_stems = {w for text in source_sentences for w in tokenize(text)}
    return ctx


def _name_in(name: str, text: str) -> bool:
    if _CJK.search(name):
        return name in text
    return re.search(rf"(?<![{_L}0-9]){re.escape(name)}(?![{_L}0-9])", text, re.IGNORECASE) is not None
