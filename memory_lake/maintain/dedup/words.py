"""The word-level rules of the contradiction guard (seed 004): synonyms, antonyms, negations,
degrees, and the order of two items.

A content word replaced by a typo of it or by its synonym (``data/synonyms.tsv``; the offline
dictionaries of ``text/lexicon``: WordNet 3.0, CC-CEDICT) is a rewording. One side of an antonym pair
(``data/antonyms.tsv``: dark/light, like/dislike, 喜欢/讨厌, 深色/浅色 ...; and WordNet's antonyms), a
word and its opposite by prefix or by character (increase / decrease, 上涨 / 下跌), one unit for
another, a graded word of another degree (most / all, may / must, usually / always) or a function
word for its opposite (in / out) is a sign of a contradiction. A negation or a numeral inside a word
the dictionaries equate with the other side (不及格 / 挂科, 总共 / 一共), or a negated word against
its antonym ("doesn't like" / "dislikes"), says the same thing. Two items that trade places
(Parquet over PDF / PDF over Parquet; the two sides of a comparison with 比 or "than") are a swap.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path

from .reading import (_Facts, _HAN, _NUMBER_RE, _UNITS_EN, _UNITS_ZH, _content_words, _jieba_flags, _negation_count,
                      _numbers, _phrase_words, _singular, _word_opcodes)


ANTONYMS_FILE = Path(__file__).parent.parent / "data" / "antonyms.tsv"


@functools.lru_cache(maxsize=1)
def antonym_pairs() -> tuple[tuple[str, str], ...]:
    """The antonym pairs of ``data/antonyms.tsv`` (comments and blank lines skipped)."""
    pairs = []
    for line in ANTONYMS_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            left, _, right = line.partition("\t")
            if left.strip() and right.strip():
                pairs.append((left.strip().lower(), right.strip().lower()))
    return tuple(pairs)


def _typo(x: str, y: str) -> bool:
    """One slip apart: two adjacent letters swapped, one letter missing or extra, or (in a word of
    six or more) one letter wrong. ``west``/``east`` is not a slip; ``moed``/``mode`` is."""
    if x == y:
        return True
    if len(x) == len(y):
        diff = [i for i in range(len(x)) if x[i] != y[i]]
        if len(diff) == 2 and diff[1] == diff[0] + 1 and x[diff[0]] == y[diff[1]] and x[diff[1]] == y[diff[0]]:
            return len(x) >= 3
        return len(diff) == 1 and len(x) >= 6
    short, long_ = sorted((x, y), key=len)
    if len(long_) - len(short) != 1 or len(short) < 3:
        return False
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


SYNONYMS_FILE = Path(__file__).parent.parent / "data" / "synonyms.tsv"


@functools.lru_cache(maxsize=1)
def synonym_groups() -> dict[str, int]:
    """Each word of ``data/synonyms.tsv`` -> the number of its group."""
    groups: dict[str, int] = {}
    for number, line in enumerate(SYNONYMS_FILE.read_text(encoding="utf-8").splitlines()):
        if line.strip() and not line.startswith("#"):
            for word in line.split("\t"):
                if word.strip():
                    groups.setdefault(word.strip().lower(), number)
    return groups


@functools.lru_cache(maxsize=1)
def _chinese_synonym_map() -> tuple[list[str], list[str]]:
    """(words, the first word of their group) for the Chinese words of two or more characters in
    ``data/synonyms.tsv`` (single characters would rewrite inside other words), longest first."""
    heads: dict[int, str] = {}
    pairs = []
    for word, group in synonym_groups().items():
        if re.fullmatch(r"[\u3400-\u9fff]{2,}", word):
            heads.setdefault(group, word)
            pairs.append((word, group))
    pairs.sort(key=lambda p: -len(p[0]))
    return [w for w, _ in pairs], [heads[g] for _, g in pairs]


def _same_meaning(x: str, y: str) -> bool:
    """A slip of the keyboard, or two words of one synonym group."""
    if _typo(x, y):
        # a slip of the keyboard, unless both are words of the dictionary with no sense in
        # common (hotel / hostel are two words, not one misspelt)
        from ...text import lexicon

        return not lexicon.two_words(x, y)
    groups = synonym_groups()
    return x in groups and groups.get(y) == groups[x]


def _replaced(a: str, b: str) -> tuple[list[str], list[str]]:
    """The content words of `a` and of `b` that the other text lacks and that no typo or synonym
    (``data/synonyms.tsv``) of the other side explains."""
    wa, wb = _content_words(a), _content_words(b)
    only_a, only_b = wa - wb, wb - wa
    if not only_a or not only_b:
        return [x for x in only_a if not any(_same_meaning(x, y) for y in only_b)], \
            [y for y in only_b if not any(_same_meaning(x, y) for x in only_a)]
    left = [x for x in only_a if not any(_same_meaning(x, y) for y in only_b)]
    right = [y for y in only_b if not any(_same_meaning(x, y) for x in only_a)]
    return left, right


# Opposing prefixes (increase / decrease, upgrade / downgrade, overpaid / underpaid) and negating
# ones (able / unable, like / dislike): a word and its opposite share the rest.
_OPPOSING_PREFIXES = (("in", "de"), ("in", "ex"), ("im", "ex"), ("up", "down"), ("over", "under"), ("pre", "post"),
                      ("max", "min"), ("inc", "dec"))
_NEGATING_PREFIXES = ("un", "dis", "in", "im", "il", "ir", "non", "mis")
# Chinese characters of opposite meaning: two words that differ in such a character at one place
# (上涨 / 下跌, 增加 / 减少, 本周 / 下周) say opposite or other things, not the same one.
_OPPOSING_CHARS = frozenset(tuple(p) for p in (
    "上下 增减 升降 涨跌 多少 大小 高低 长短 早晚 前后 左右 内外 开关 进出 买卖 来去 好坏 新旧 快慢 冷热 深浅 轻重 "
    "强弱 加减 正负 男女 东西 南北 先后 盈亏 输赢 胜负 有无 真假 对错 是非 收支 借还 赚赔 存取 推拉 宽窄 厚薄 "
    "粗细 远近 松紧 明暗 干湿 软硬 贵贱 忙闲 难易 生死 老少 首末 始终 入出 本下 本上 这下 这上 今明 今昨 明昨 今去 "
    "明去 最").split() if len(p) == 2)


def _comparative(word: str) -> bool:
    """A comparative or superlative of an adjective WordNet knows (larger, cheapest, busier), not
    any word ending in -er ("hoover", "trainer")."""
    from ...text import lexicon

    if len(word) <= 4 or not word.endswith(("er", "est")):
        return False
    stem = word[:-2] if word.endswith("er") else word[:-3]
    bases = {stem, stem + "e", stem[:-1] + "y" if stem.endswith("i") else stem,
             stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem}
    return any(lexicon.is_adjective(b) for b in bases)


def _opposed(left: list[str], right: list[str]) -> str | None:
    """A sign that the replaced words mean opposite or different degrees ("antonym" reasons): a
    unit (meters / yards is a changed value), comparatives or superlatives on both sides (larger /
    smaller), a word and its opposite by prefix (increase / decrease, able / unable), or Chinese
    words that differ in a pair of opposite characters (上涨 / 下跌) or in a unit (斤 / 公斤)."""
    from ...text import lexicon

    for x in left:
        for y in right:
            if x.isascii() and y.isascii():
                if all(w in _UNITS_EN or _singular(w) in _UNITS_EN or lexicon.is_unit(w) for w in (x, y)):
                    return f"unit {x}/{y}"                # both units: "a day" / "daily" is not
                if all(_comparative(w) for w in (x, y)) and x[-2:] == y[-2:]:
                    return f"degree {x}/{y}"
                for p, q in _OPPOSING_PREFIXES:
                    for u, v in ((x, y), (y, x)):
                        if u.startswith(p) and v.startswith(q) and u[len(p):] == v[len(q):] and len(u) - len(p) >= 3:
                            return f"antonym {x}/{y}"
                for p in _NEGATING_PREFIXES:
                    if (x == p + y or y == p + x) and min(len(x), len(y)) >= 3:
                        return f"antonym {x}/{y}"
            elif x in _UNITS_ZH and y in _UNITS_ZH:
                return f"unit {x}/{y}"
            elif _HAN.match(x) and _HAN.match(y) and any(
                    u in _UNITS_ZH and v in _UNITS_ZH and u != v for u, v in lexicon._stripped(x, y)):
                return f"unit {x}/{y}"                    # 十斤 / 十公斤, cut as one word each
            elif len(x) == len(y) and _HAN.match(x) and _HAN.match(y):
                if any((c, d) in _OPPOSING_CHARS or (d, c) in _OPPOSING_CHARS for c, d in zip(x, y) if c != d):
                    return f"antonym {x}/{y}"
    return None


# Chinese individual classifiers (个体量词): the word a noun takes when it is counted, chosen by the
# noun's shape or kind, not by how much there is. One swapped for another with the same number
# before it counts the same thing (一条金毛 / 一只金毛, 一部手机 / 一台手机). Measures and
# containers (斤 / 公斤, 杯 / 瓶) are not among them: those change an amount.
_CLASSIFIERS = frozenset("个只条头匹部台辆架件本张把位名口座栋所间家棵株朵颗粒块支根枚封首篇幅项门")


def _classifier_swap(x: str, y: str) -> bool:
    """Two Chinese phrases that differ only in an individual classifier after the same numeral."""
    while x and y and x[0] == y[0]:
        prefix, x, y = x[0], x[1:], y[1:]
        if not x or not y:
            return False
        if x[0] in _CLASSIFIERS and y[0] in _CLASSIFIERS and x[1:] == y[1:] and x[0] != y[0]:
            return bool(_NUMBER_RE.fullmatch(prefix)) or prefix in "几每这那哪某"
    return False


def _single_character_change(x: str, y: str) -> bool:
    """Two Chinese words that differ in one character only, in the same place (很好 / 很差,
    采光好 / 采光差): a single character carries the whole change there, and the models read the
    rest of the phrase; only a dictionary may call that a rewording."""
    from ...text import lexicon

    if x == y or not (_HAN.search(x) and _HAN.search(y)):
        return False
    x, y = lexicon._stripped(x, y)[-1]                 # without the characters both share at the edges
    return len(x) == 1 and len(y) == 1


def _two_verbs(x: str, y: str) -> bool:
    """Two Chinese words of two or more characters that jieba reads as verbs, one character apart
    where the dictionaries see no opposites (改到 / 调到, 补课 / 补习, 打车 / 叫车): a verb's
    character is a way of doing, and the models judge the phrase. Nouns and adjectives stay under
    the one-character rule (表哥 / 堂哥, 很好 / 很差)."""
    from ...text import lexicon

    if len(x) < 2 or len(y) < 2 or _jieba_flags(x)[:1] != ("v",) or _jieba_flags(y)[:1] != ("v",):
        return False
    cx, cy = lexicon._stripped(x, y)[-1]
    found = lexicon.relation((cx,), (cy,))
    return not (found and found[0] == "antonym") and not lexicon.antonyms((x,), (y,))


def _crossed(stretches: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> tuple[str, str] | None:
    """Two items that changed places, seen in the replaced stretches: what one stretch takes out
    comes back inside another, and what it puts in came from there ("比起火车更喜欢坐飞机" /
    "比起飞机更喜欢坐火车": 火车 -> 飞机 and 坐飞机 -> 坐火车). `_swap` misses this when jieba
    cuts the two texts differently (起火 / 起飞)."""
    def within(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
        if not part or part == whole:
            return False
        if _HAN.search("".join(part)):
            return "".join(part) in "".join(whole)
        return set(part) <= set(whole)

    for i, (x1, y1) in enumerate(stretches):
        for x2, y2 in stretches[i + 1:]:
            if (within(y1, x2) and within(x1, y2)) or (within(y2, x1) and within(x2, y1)):
                return "".join(x1) if _HAN.search("".join(x1)) else " ".join(x1), \
                    "".join(y1) if _HAN.search("".join(y1)) else " ".join(y1)
    return None


def _relation(x: tuple[str, ...], y: tuple[str, ...], after: tuple[str, ...]) -> tuple[str, str] | None:
    """What the dictionaries say of stretch `x` replaced by `y` (``lexicon.relation``), or of a
    swapped Chinese classifier; an English verb is also read with the particles both texts have
    after it, since the particle is part of the verb ("bumped into" / "ran into", "showed up" /
    "turned up": the stretches alone are "bumped" / "ran"), and a modifier with the noun both have
    after it when WordNet lists both compounds ("current account" / "checking account")."""
    from ...text import lexicon

    recut = _negation_recut(x, y)
    if recut is not None:
        return lexicon.relation(*recut) if all(recut) else None
    found = lexicon.relation(x, y)
    if found:
        return found
    if _classifier_swap("".join(x), "".join(y)):
        return "synonym", "classifier"
    particles = 0
    while particles < len(after) and after[particles] in lexicon.PARTICLES:
        particles += 1
        found = lexicon.relation(x + after[:particles], y + after[:particles])
        if found:
            return found
    if after and not particles and after[0].isascii() and after[0].isalpha():
        # a compound noun whose head both texts share: "current account" / "checking account"
        # (found only when WordNet lists both compounds whole)
        found = lexicon.relation(x + after[:1], y + after[:1])
        if found and all(lexicon.is_lemma("_".join(side + after[:1])) for side in (x, y)):
            return found
    return None


_NEGATION_CHARACTERS = "不没"


def _negation_recut(x: tuple[str, ...], y: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Two Chinese stretches that jieba cut at a negation differently, read with the negation as
    a word of its own, less what both then share: 从来不 吃 / 向来 不吃 is 从来 / 向来 (both say
    "never eats"; looked up whole, 从来不 "never" against 向来 "always" read as antonyms). None when
    the stretches hold no such cut (a negation only one side has stays where it is)."""
    if not (_HAN.search("".join(x)) and _HAN.search("".join(y))):
        return None

    from ...text import lexicon

    def cut(words: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        for w in words:
            negates = len(w) >= 2 and lexicon.negating(w)  # not 不错 "not bad", 沉没 "to sink"
            if negates and w[-1] in _NEGATION_CHARACTERS and lexicon.is_chinese_word(w[:-1]):
                out += [w[:-1], w[-1]]                    # 从来不 -> 从来 不, 从不 -> 从 不
            elif negates and w[0] in _NEGATION_CHARACTERS and lexicon.is_chinese_word(w[1:]):
                out += [w[0], w[1:]]                      # 不吃 -> 不 吃
            else:
                out.append(w)
        return tuple(out)

    cx, cy = cut(x), cut(y)
    if (cx, cy) == (x, y) or sum(w in _NEGATION_CHARACTERS for w in cx) != sum(w in _NEGATION_CHARACTERS for w in cy):
        return None
    start = 0
    while start < min(len(cx), len(cy)) and cx[start] == cy[start]:
        start += 1
    end = 0
    while end < min(len(cx), len(cy)) - start and cx[len(cx) - 1 - end] == cy[len(cy) - 1 - end]:
        end += 1
    if not any(w in _NEGATION_CHARACTERS for w in cx[:start] + cx[len(cx) - end:]):
        return None                                       # the negation did not line up: no recut to read
    return cx[start:len(cx) - end], cy[start:len(cy) - end]


# Closed classes of words that grade one scale: a memory that swaps one degree for another states
# another fact ("answered most / all of the questions", "may / must leave early", "usually / always
# takes the bus"), though search ignores them as stop words and the models put the two close.
# Words on one line are one degree (often / frequently, 应该 / 应当); Chinese quantifiers and
# modals are content words and reach the dictionaries too, which may not see the degree.
_DEGREES = {
    "quantity": ("all every each 所有 全部 全都", "most 大多数 大部分 多数", "many much lots 许多 很多 好多 不少",
                 "some several 一些 有些 部分", "few 少数 很少", "no none 没有"),
    "obligation": ("must 必须 务必 必需", "should ought 应该 应当", "may might can could 可以 可能 也许 或许 能",
                   "will 肯定 一定 必定"),
    "frequency": ("always 总是 一直 始终 从来都", "usually normally generally typically 通常 一般 往往",
                  "often frequently 经常 常常 时常", "sometimes occasionally 有时 有时候 偶尔",
                  "rarely seldom 很少 难得", "never 从不 从来不 从没"),
}
_DEGREE_OF = {word: (scale, rank) for scale, ranks in _DEGREES.items()
              for rank, words in enumerate(ranks) for word in words.split()}
# Function words of opposite direction or stance (logged in / out, above / below, for / against).
_OPPOSED_WORDS = frozenset(frozenset(p.split("/")) for p in (
    "in/out into/out inside/outside up/down on/off above/below over/under before/after for/against "
    "with/without to/from more/less more/fewer").split())


def _degree_words(ranks: set[int]) -> str:
    return ",".join(_DEGREES["frequency"][r].split()[0] for r in sorted(ranks)) or "-"


def _phrasal_synonyms(verb: tuple[str, ...], x: str, y: str) -> bool:
    """Whether the word before two opposed particles makes two phrasal verbs of one sense with
    them (fill in / fill out a form), by WordNet."""
    from ...text import lexicon

    return bool(verb) and lexicon.phrasal_synonyms(verb[-1], x, y)


# Two-word degrees: "hardly ever" is rarely (hardly, scarcely and barely are not counted as negations).
_LOW_FREQUENCY = frozenset({("almost", "never"), ("nearly", "never"), ("practically", "never"),
                            ("virtually", "never"), ("hardly", "ever"), ("scarcely", "ever"), ("barely", "ever")})
_RARELY = _DEGREE_OF["rarely"]


def _frequencies(words: tuple[str, ...]) -> set[int]:
    """The degrees of the frequency scale a text states (0 always ... 5 never), two-word degrees
    read as one ("hardly ever", "almost never": rarely)."""
    found, skip = set(), False
    for k, w in enumerate(words):
        if skip:
            skip = False
            continue
        if tuple(words[k:k + 2]) in _LOW_FREQUENCY:
            found.add(_RARELY[1])
            skip = True
        elif _DEGREE_OF.get(w, ("",))[0] == "frequency":
            found.add(_DEGREE_OF[w][1])
    return found


def _degree_change(fa: _Facts, fb: _Facts) -> str | None:
    """A word of a graded closed class replaced by one of another degree of the same scale
    (quantity, obligation, frequency), or a function word by its opposite, in one replaced
    stretch of the two word sequences: "quantity most/all", "opposite in/out". A low frequency
    (rarely, hardly ever, almost never) that only one text states, or states at another degree,
    changes the fact too: "rarely eats breakfast" / "eats breakfast"."""
    sa, sb = _phrase_words(fa.text), _phrase_words(fb.text)
    never = len(_DEGREES["frequency"]) - 1                # "never" / "doesn't": the negations are counted
    stated_a, stated_b = _frequencies(sa), _frequencies(sb)
    freq_a, freq_b = stated_a - {never}, stated_b - {never}
    if freq_a != freq_b and max(freq_a | freq_b) >= _RARELY[1]:
        return f"frequency {_degree_words(freq_a)}/{_degree_words(freq_b)}"
    same_frequency = stated_a == stated_b                 # "almost never" / "rarely": one degree
    for op, i1, i2, j1, j2 in _word_opcodes(fa.text, fb.text):
        if op != "replace":
            continue
        for x in sa[i1:i2]:
            for y in sb[j1:j2]:
                dx, dy = _DEGREE_OF.get(x), _DEGREE_OF.get(y)
                if dx and dy and dx[0] == dy[0] and dx[1] != dy[1] and not (dx[0] == "frequency" and same_frequency):
                    return f"{dx[0]} {x}/{y}"
                if frozenset((x, y)) in _OPPOSED_WORDS and not _phrasal_synonyms(sa[max(0, i1 - 1):i1], x, y):
                    return f"opposite {x}/{y}"
    return None


def _inside_equated_words(fa: _Facts, fb: _Facts, measure, whole: dict, explains=None) -> bool:
    """True when what `measure` counts in a stretch of words (negations, numbers) differs between
    the texts by `whole` (a's count minus b's) and only inside stretches the dictionaries equate:
    a negation or a numeral inside one dictionary word is its meaning, not a value (不及格 / 挂科
    "fail", 甭 / 不用 "need not", 总共 / 一共 "altogether", 一起 / 一块儿 "together"). Only a
    shared sense, Cilin or a cross-reference equates here: a near link or a reading of the English
    glosses through WordNet is too loose (可以 "not bad" and 不行 "be no good" meet only through
    WordNet's similar adjectives), and a stretch whose negation stands beside a word ("did not
    learn" / "learned") is no word (`_lexicalised`). `explains(x, y)`, when given, equates two
    stretches the dictionaries do not."""
    from ...text import lexicon

    sa, sb = _phrase_words(fa.text), _phrase_words(fb.text)
    explained: Counter = Counter()
    for tag, i1, i2, j1, j2 in _word_opcodes(fa.text, fb.text):
        x, y = sa[i1:i2], sb[j1:j2]
        mx, my = measure(x), measure(y)
        if tag == "equal" or mx == my:
            continue
        why = lexicon.synonyms(x, y) if x and y and _lexicalised(x) and _lexicalised(y) else None
        if (not why or " ~ " in why or "-> wordnet" in why) and not (explains and explains(x, y)):
            return False
        explained.update(mx)
        explained.subtract(my)
    return bool(whole) and _nonzero(explained) == whole


def _numeral_reworded(fa: _Facts, fb: _Facts) -> bool:
    """The numbers the texts do not share all sit inside equated words (`_inside_equated_words`)."""
    whole = Counter(n.value for n in fa.numbers)
    whole.subtract(Counter(n.value for n in fb.numbers))
    if not _nonzero(whole):
        return False                                      # no number the texts do not share
    return _inside_equated_words(fa, fb, lambda words: Counter(n.value for n in _numbers(" ".join(words))),
                                 _nonzero(whole))


def _negation_reworded(a: str, b: str, fa: _Facts, fb: _Facts) -> bool:
    """The negations the texts do not share all sit inside equated words (`_inside_equated_words`)."""
    return _inside_equated_words(fa, fb, lambda words: Counter(negation=_negation_count(words)),
                                 _nonzero(Counter(negation=fa.negations - fb.negations)), _negated_antonym)


def _negated_antonym(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
    """Whether one stretch negates one word and the other states that word's antonym, which says
    the same: "doesn't like" / "dislikes", "isn't happy" / "is unhappy", "didn't remember" /
    "forgot", 不喜欢 / 讨厌 (WordNet's antonym links; Chinese through CC-CEDICT's senses)."""
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS
    from ...text import lexicon

    stop = ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS
    for negated, other in ((x, y), (y, x)):
        if _negation_count(negated) != 1 or _negation_count(other):
            continue
        rest = []
        for w in negated:
            if _HAN.match(w) and len(w) >= 2 and _negation_count((w[0],)) and _negation_count((w,)) == 1:
                rest.append(w[1:])                        # 不喜欢: 喜欢
            elif not _negation_count((w,)) and w not in stop:
                rest.append(w)
        plain = tuple(w for w in other if w not in stop)
        if len(rest) == 1 and len(plain) == 1 and lexicon.antonyms(tuple(rest), plain):
            return True
    return False


def _nonzero(counts: Counter) -> dict:
    """The counts that are not 0, signs kept (a's count minus b's)."""
    return {key: value for key, value in counts.items() if value}


def _lexicalised(words: tuple[str, ...]) -> bool:
    """Whether every negation in a stretch is part of one dictionary word: an English stretch that
    WordNet lists whole ("in no time"), a Chinese word of two or more characters that CC-CEDICT
    lists (不及格, 不用). "did not learn" / "learned" share a verb, not a meaning: not lexicalised."""
    from ...text import lexicon

    if not _negation_count(words):
        return True
    if any(_HAN.match(w) for w in words):
        return all(len(w) >= 2 and lexicon.is_chinese_word(w) for w in words if _negation_count((w,)))
    return lexicon.is_phrase(words)


# Between two swapped items, only these make it a list in another order ("CSV and PDF"), not a swap.
_CONJUNCTIONS = frozenset("and or & 和 与 及 或 跟 以及 还有".split())


def _swap(fa: _Facts, fb: _Facts) -> tuple[str, str] | None:
    """Two items that changed places (Parquet over PDF / PDF over Parquet; from 3 to 4 / from 4
    to 3; Alice told Bob / Bob told Alice): words x and y (each once in both texts) whose order
    flips while a word between them stays between them. A clause moved to the other end (no word
    stays between) is a rewording; items with only "and"/"or"/和 between them are a list in
    another order."""
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    counts_a, counts_b = Counter(fa.sequence), Counter(fb.sequence)
    position_b = {t: i for i, t in enumerate(fb.sequence) if counts_b[t] == 1}
    anchors = [(t, position_b[t]) for t in fa.sequence if counts_a[t] == 1 and t in position_b]
    order = [p for _, p in anchors]
    if all(x < y for x, y in zip(order, order[1:])):
        return None  # the shared words keep their order

    def item(word: str) -> bool:
        # only content words are items: a clause moved around "the", "every" or 的 swaps nothing
        # ("Tyler's car insurance renews every October" / "Every October, ... Tyler's car ...")
        return word not in ENGLISH_STOP_WORDS and word not in CHINESE_STOP_WORDS

    for i, (x, px) in enumerate(anchors):
        if not item(x):
            continue
        for j in range(i + 2, len(anchors)):
            y, py = anchors[j]
            if py < px and item(y) and any(py < pm < px and m not in _CONJUNCTIONS for m, pm in anchors[i + 1:j]):
                return x, y
    return None


# The word that puts two things side by side in a comparison: 比 ("她丈夫比她大五岁"), than.
_COMPARISON_WORDS = frozenset({"比", "than"})


def _compared(fa: _Facts, fb: _Facts) -> tuple[str, str] | None:
    """Two sides of a comparison that changed places: a content word before 比 / "than" in one
    text and after it in the other ("用户的丈夫比她大五岁" / "用户比她丈夫大五岁": who is older
    flips). `_swap` needs a word between two items that stays between; here the pronoun on the
    other side (她, her) is not a content word."""
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    def sides(sequence: tuple[str, ...]) -> tuple[set[str], set[str]] | None:
        at = [i for i, w in enumerate(sequence) if w in _COMPARISON_WORDS]
        if len(at) != 1:
            return None
        content = lambda words: {w for w in words if w not in ENGLISH_STOP_WORDS and w not in CHINESE_STOP_WORDS
                                 and w not in _COMPARISON_WORDS}
        return content(sequence[:at[0]]), content(sequence[at[0] + 1:])

    found_a, found_b = sides(fa.sequence), sides(fb.sequence)
    if not found_a or not found_b:
        return None
    (before_a, after_a), (before_b, after_b) = found_a, found_b
    moved = sorted((before_a & after_b) - before_b) or sorted((after_a & before_b) - after_b)
    if moved:
        return moved[0], next(iter(sorted(_COMPARISON_WORDS & (set(fa.sequence)))))
    return None
