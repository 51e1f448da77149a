"""Two Chinese stretches (`questions.relation` for Chinese): by CC-CEDICT's cross-references and
senses, Cilin's synonym groups and the WordNet synsets of the words' English senses; and the
questions that lift dedup's one-character veto (`head_sense`; `cilin.one_group`)."""

from __future__ import annotations

import functools
import re

from .cedict import _BRACKETS, _cedict, _cedict_entries, _pivot, cross_referenced
from .cilin import _cilin, _cilin_any, _cilin_nouns, _cilin_separates
from .kinds import natural_kind
from .pairs import _stripped
from .pointers import NEAR_SENSES, _antonym_links, _near_links
from .short_forms import _abbreviation
from .wordnet import _bases, _english_synsets


_TRAILING_PHRASE = re.compile(r"\s+(?:of|for|in|on|at|with|between|from|to|by|during|after|before)\s.*$")


def _cedict_disagrees(table: dict, x: str, y: str) -> bool:
    """True when CC-CEDICT knows both words and reads them as two things: no shared sense and no
    shared WordNet synset, even reading each sense by its head ("snacks between meals" as
    "snacks"). 包子 "steamed stuffed bun" / 馒头 "steamed bun", on one line of Cilin's foods, are
    two foods; 零食 "snacks" / 零嘴 "snacks between meals" are one."""
    sx, sy = table.get(x), table.get(y)
    if not sx or not sy:
        return False
    sx = sx | {_TRAILING_PHRASE.sub("", sense) for sense in sx}
    sy = sy | {_TRAILING_PHRASE.sub("", sense) for sense in sy}
    return not (sx & sy) and not (_pivot(frozenset(sx)) & _pivot(frozenset(sy)))


_GLOSS_FILLER = frozenset({"sb", "sth", "be", "get", "one's", "sb's", "sth's", "oneself"})
_GLOSS_WORDS = re.compile(r"[a-z][a-z'-]*")
_ARTICLES = frozenset({"a", "an", "the", "to"})


def _aligned_senses(sx: frozenset[str], sy: frozenset[str]) -> str | None:
    """Two CC-CEDICT senses of several words that say the same word by word: the same words in
    the same order but for words WordNet puts in one synset, the first sense of one of them
    ("elder brother" / "older brother": 兄长 / 哥哥), at least one word shared. Two words of one
    kind (brother / sister), two opposites (older / younger) or a word more on one side (bun /
    stuffed bun) do not align."""
    def words(sense: str) -> tuple[str, ...]:
        return tuple(w for w in _GLOSS_WORDS.findall(sense) if w not in _GLOSS_FILLER and w not in _ARTICLES)

    for first in sorted(sx):
        a = words(first)
        if len(a) < 2:
            continue
        for second in sorted(sy):
            b = words(second)
            if len(b) != len(a) or a == b or not set(a) & set(b):
                continue
            if all(u == v or _first_sense_shared(u, v) for u, v in zip(a, b)):
                return f"'{first}' ~ '{second}'"
    return None


def _first_sense_shared(u: str, v: str) -> bool:
    """Whether two English words share a synset among their first NEAR_SENSES senses that is the
    most frequent sense of one of them (elder / older: "older" is the first sense of "elder");
    maternal / paternal meet only in the third sense of each ("parental")."""
    a, b = _english_synsets((u,), NEAR_SENSES), _english_synsets((v,), NEAR_SENSES)
    return any(min(a[s], b[s]) == 0 for s in a.keys() & b.keys())


@functools.lru_cache(maxsize=1)
def _verb_glosses() -> dict[str, frozenset[frozenset[str]]]:
    """Chinese word -> its CC-CEDICT senses that are verbs ("to pass an entrance exam"), each as
    the base forms of its content words ({pass, entrance, exam})."""
    from ..tokenize import ENGLISH_STOP_WORDS

    found: dict[str, set[frozenset[str]]] = {}
    for word, raws in _cedict_entries():
        for raw in raws:
            for part in raw.split(";"):
                text = _BRACKETS.sub("", part.lower()).strip(" .,;")
                if not text.startswith("to "):
                    continue
                words = [w for w in re.findall(r"[a-z][a-z'-]*", text[3:])
                         if w not in ENGLISH_STOP_WORDS and w not in _GLOSS_FILLER]
                bases = frozenset(min(_bases(w, "verb") or _bases(w, "noun") or {w}) for w in words)
                if bases:
                    found.setdefault(word, set()).add(bases)
    return {word: frozenset(glosses) for word, glosses in found.items()}


def _verb_within(x: str, y: str) -> str | None:
    """Two Chinese verbs whose CC-CEDICT senses say the same thing, one perhaps with more words:
    考取 "to pass an entrance exam" / 考上 "to pass a university entrance exam", 报账 "to submit
    accounts" / 报销 "to submit an expense account". Base forms compared; a sense of one content
    word must be the other's whole sense (one word inside a longer sense, "play" in "play the
    piano", is not enough). Verbs only: among nouns a shorter gloss names a wider thing (馒头
    "steamed bun" / 包子 "steamed stuffed bun")."""
    table = _verb_glosses()
    for a in sorted(table.get(x, ()), key=sorted):
        for b in sorted(table.get(y, ()), key=sorted):
            if a == b or (len(a) >= 2 and a <= b) or (len(b) >= 2 and b <= a):
                return f"'{' '.join(sorted(a))}' ~ '{' '.join(sorted(b))}'"
    return None


def _chinese_antonym(table: dict, x: str, y: str) -> tuple[str, str] | None:
    sx, sy = table.get(x), table.get(y)
    if not sx or not sy:
        return None
    ex, ey = _pivot(sx), _pivot(sy)
    for first, second in ((ex, ey), (ey, ex)):
        for synset in sorted(first):
            if _antonym_links(*synset) & second:
                return "antonym", f"cedict {x}/{y} -> wordnet {synset[0]} {synset[1]:08d}"
    return None


# Words that only strengthen the word after them (非常吝啬 "very stingy" against 一毛不拔 "stingy").
INTENSIFIERS = frozenset("很 非常 十分 特别 挺 太 真 比较 相当 极其 格外 特 超 好".split())
# Aspect particles a verb takes inside itself (当过兵 is 当兵 "serve in the army" with 过).
_ASPECT = "过了着"


def _without_aspect(word: str, table: dict, cilin: dict) -> str:
    """`word` without an aspect particle inside it, when that leaves a word the dictionaries list
    (当过兵 -> 当兵, 参过军 -> 参军, 见了面 -> 见面); else `word` unchanged."""
    if len(word) < 3:
        return word
    for i in range(1, len(word) - 1):
        if word[i] in _ASPECT:
            plain = word[:i] + word[i + 1:]
            if plain in table or plain in cilin or plain in _cilin_any():
                return plain
    return word


def head_sense(x: str, y: str) -> bool:
    """Whether CC-CEDICT gives one Chinese word a sense that is the last word of a longer sense of
    the other: 室友 "roommate" / 舍友 "dormitory roommate" name one person by a wider and a narrower
    word, as "truck" and "lorry" do. Not a synonym by itself: it lifts the one-character veto
    (`dedup._single_character_change`) so that the models judge the pair."""
    table = _cedict() or {}
    sx, sy = table.get(x, frozenset()), table.get(y, frozenset())
    for first, second in ((sx, sy), (sy, sx)):
        for sense in second:
            words = sense.split()
            if len(words) >= 2 and words[-1] in first and not natural_kind(words[-1]):
                return True
    return False


def _chinese(left: tuple[str, ...], right: tuple[str, ...]) -> tuple[str, str] | None:
    """By CC-CEDICT: antonyms when their English senses are antonyms in WordNet; synonyms when
    they share a sense, or (words of two or more characters) when their English senses share one
    of their most frequent WordNet synsets. A single character (also one left after stripping) has
    too many senses to be a synonym by anything but a sense of its own (坐 / 搭 "take"); it may
    still be an antonym."""
    table = _cedict()
    if table is None:
        return None
    cilin = _cilin()
    joined = ("".join(left), "".join(right))
    plain = (_without_aspect(joined[0], table, cilin), _without_aspect(joined[1], table, cilin))
    pairs = _stripped(*joined) + (_stripped(*plain) if plain != joined else [])
    bare = ("".join(w for w in left if w not in INTENSIFIERS), "".join(w for w in right if w not in INTENSIFIERS))
    if bare != joined and all(bare):
        pairs += _stripped(*bare)                          # 非常吝啬 is looked up as 吝啬 too
    for x, y in pairs:
        if x == y:
            continue
        if cross_referenced(x, y):
            return "synonym", f"cedict {x}/{y} cross-reference"
        if len(x) >= 2 and len(y) >= 2 and cilin.get(x, frozenset()) & cilin.get(y, frozenset()):
            code = sorted(cilin[x] & cilin[y])[0]
            antonym = _chinese_antonym(table, x, y)
            if antonym:
                return antonym
            return "synonym", f"cilin {x}/{y} {code}"
        nouns = _cilin_nouns()
        if (len(x) >= 2 and len(y) >= 2 and nouns.get(x, frozenset()) & nouns.get(y, frozenset())
                and not _cedict_disagrees(table, x, y)):
            antonym = _chinese_antonym(table, x, y)
            if antonym:
                return antonym
            return "synonym", f"cilin {x}/{y} {sorted(nouns[x] & nouns[y])[0]}"
        sx, sy = table.get(x), table.get(y)
        if not sx or not sy:
            continue
        antonym = _chinese_antonym(table, x, y)
        if antonym:
            return antonym
        ex, ey = _pivot(sx), _pivot(sy)
        if _cilin_separates(x, y):
            continue                                      # 岳母 / 婆婆: both "mother-in-law" in English
        shared = sorted(sx & sy)
        if shared:
            return "synonym", f"cedict {x}/{y} '{shared[0]}'"
        if len(x) < 2 or len(y) < 2:
            continue
        aligned = _aligned_senses(sx, sy)
        if aligned:
            return "synonym", f"cedict {x}/{y} {aligned}"
        verbs = _verb_within(x, y)
        if verbs:
            return "synonym", f"cedict {x}/{y} {verbs}"
        both = sorted(ex & ey)
        if both:
            return "synonym", f"cedict {x}/{y} -> wordnet {both[0][0]} {both[0][1]:08d}"
        for synset in sorted(ex):
            linked = sorted(_near_links(*synset) & ey)
            if linked:
                return "synonym", f"cedict {x}/{y} -> wordnet {synset[0]} {synset[1]:08d} ~ {linked[0][1]:08d}"
    abbreviated = _abbreviation(left, right) or _abbreviation(right, left)
    (x, y), shorter = joined, []
    while len(x) > 1 and len(y) > 1 and x[-1] == y[-1]:
        x, y = x[:-1], y[:-1]
        shorter.insert(0, (x, y))
    for x, y in shorter:
        # with the end both share set aside: 科学研究工作 / 科研工作 -> 科学研究 / 科研
        abbreviated = abbreviated or _abbreviation((x,), (y,)) or _abbreviation((y,), (x,))
    return ("synonym", abbreviated) if abbreviated else None
