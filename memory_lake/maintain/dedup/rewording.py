"""A replaced word: a rewording, or two memories (seed 004; issue 17): `_rewording`.

A candidate pair is never merged when a content word is replaced by one that is not its synonym:
not a typo, not in ``data/synonyms.tsv``, not a synonym by the offline dictionaries (``text/lexicon``:
WordNet 3.0, CC-CEDICT), and, with embedding models, not put close by them (`close`, a cosine of at
least ``[dedup] paraphrase_cosine`` with a few words of context). New detail keeps a pair apart too
(``ADDED_DETAIL_WORDS``): inserted content words, a new item joined by "and" or brought by a
preposition, a new name, number or code, a new clause, a narrower kind of the same thing ("reads
fiction" / "reads crime fiction"). Both mean two different memories (``CHANGED_VALUE``), kept apart
and counted, not queued; an antonym or a swap found in the replaced stretches is a contradiction.
"""

from __future__ import annotations

import functools
import re

from .verdicts import CHANGED_VALUE
from .reading import _Facts, _HAN, _facts, _jieba_flags, _phrase_words, _word_opcodes
from .words import (_CONJUNCTIONS, _crossed, _negated_antonym, _opposed, _relation, _replaced, _single_character_change,
                    _two_verbs)
from .values import _CODE_RE, _counted, _states_number
from .names import _NAME_FLAGS, _entities


# Words that attach a new place, time, partner or purpose to a clause (see ADDED_DETAIL_WORDS).
_PREPOSITIONS = frozenset("in on at for with to from by about during near after before since until via "
                          "without 在 给 从 对 为 向 替 于 用 去 到".split())


# Inserted (or dropped) content words from this many on make new detail, not a filler: "User likes
# jazz" / "User likes jazz and plays guitar in a band" are two memories, not one; so are "bought a
# Kindle" / "bought a Kindle for her mother's birthday". One new word joined by "and" / 和 or
# brought by a preposition is a new item and counts as many ("allergic to penicillin" / "... and
# latex", "likes hiking" / "likes hiking in the mountains"). Words that only moved, stop words
# ("also", "very", 都, 也) and numbers (the number guard reads those) are not counted. One other
# new word ("Reminder: meeting at 3pm", "owns a black cat") is left to the thresholds.
ADDED_DETAIL_WORDS = 2


_HYPHENATED_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def _hyphen_parts(*norms: str) -> set[str]:
    """The parts of the hyphenated words of normalised texts (great-grandfather: great, grandfather)."""
    return {w for text in norms for token in _HYPHENATED_RE.findall(text) for w in token.split("-")}


# jieba's tags of words that carry a fact: nouns, verbs, adjectives, names, places, organisations,
# Latin words. Adverbs (已, 还, 都), particles, prepositions, pronouns and numerals do not.
_DETAIL_FLAGS = ("n", "v", "a", "eng", "j", "l", "i")


def _chinese_noun(word: str) -> bool:
    """Whether jieba tags a Chinese word as one common noun (n, not a name: 茶, 绿茶, 鲫鱼), or as a
    name that CC-CEDICT glosses as a common word (胡萝卜 nr "carrot")."""
    from ...text import lexicon

    flags = _jieba_flags(word)
    return flags in (("n",), ("ng",)) or (len(flags) == 1 and flags[0] in _NAME_FLAGS and lexicon.common_word(word))


@functools.lru_cache(maxsize=100_000)
def _detail_word(word: str) -> bool:
    """Whether a new word adds a fact: a Chinese word jieba tags as a noun, verb, adjective or name
    (``（已确认）`` adds 确认 but not 已); an English word unless WordNet knows it only as an adverb
    ("really", "probably")."""
    if _HAN.match(word):
        return any(flag.startswith(_DETAIL_FLAGS) for flag in _jieba_flags(word))
    from ...text import lexicon

    return not lexicon.adverb_only(word)


def _new_thing(word: str, neighbours: tuple[str, ...], text: str) -> bool:
    """Whether one inserted word names a new thing, which makes new detail by itself: a Chinese
    common noun of two or more characters ("在一所大学的图书馆工作", "读计算机专业的研究生"),
    unless it completes one dictionary word with a neighbour (平板 / 平板电脑: "tablet computer");
    an English word whose most frequent sense is a noun ("studying chemistry", "a crime novel"), or
    that makes one WordNet compound with its neighbour ("civil engineering"). A heading before a
    colon ("Reminder: meeting at 3pm", "备注：") labels the text and adds nothing."""
    from ...text import lexicon

    if re.search(rf"(?<![\w]){re.escape(word)}\s*[:：]", text):
        return False

    if _HAN.match(word):
        return (len(word) >= 2 and _chinese_noun(word)
                and not any(_HAN.match(n) and (lexicon.is_chinese_word(n + word) or lexicon.is_chinese_word(word + n))
                            for n in neighbours))
    return lexicon.noun_first(word) or any(lexicon.is_phrase((word, n)) or lexicon.is_phrase((n, word))
                                           for n in neighbours if n.isascii())


def _replaced_spans(fa: "_Facts", fb: "_Facts", window: int, replaced: set[str], entities: frozenset = frozenset()
                    ) -> tuple[list[tuple[str, str]], int, list[tuple[tuple[str, ...], tuple[str, ...]]],
                               list[tuple[str, ...]]]:
    """(pairs of phrases, content words added, pairs of stretches, what follows each stretch): each
    stretch of the two texts' word sequences that replaces one of the words `replaced`, as a phrase
    with `window` words of context on each side and as the bare words, with the (up to two) words
    both texts have after it; and how many content words one text inserts that the other lacks. A new word among `entities` (a name, a place, an organisation; in Chinese also
    a time or an amount, as jieba tags them), a new number ("bought a used Civic" / "... for
    £6,000") or a new code (1Password, A320) is new detail by itself: "works at a bank" / "works at
    Lloyds Bank", "去成都出差" / "去成都出差，要待三天"."""
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS
    from ...text import lexicon

    def phrase(words: tuple[str, ...]) -> str:
        text = ""
        for w in words:
            text += w if text and (_HAN.match(w[:1]) and _HAN.match(text[-1:])) else (" " + w if text else w)
        return text

    spans, added, stretches, following = [], 0, [], []
    sa, sb = _phrase_words(fa.text), _phrase_words(fb.text)
    # a word added inside a hyphenated word changes what it names (grandfather / great-grandfather)
    hyphenated = _hyphen_parts(fa.text, fb.text)
    stop = ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS
    for op, i1, i2, j1, j2 in _word_opcodes(fa.text, fb.text):
        converted = False
        if (op == "replace" and not all(w in stop for w in sa[i1:i2] + sb[j1:j2])
                and not lexicon.synonyms(sa[i1:i2], sb[j1:j2])):
            # a stretch of stop words replaced by content words is an insertion ("at a bank" /
            # "at Lloyds Bank"), and the reverse a deletion; unless the dictionary reads the two
            # stretches as one ("prior to" / "before", "do it yourself" / DIY)
            if all(w in stop for w in sa[i1:i2]):
                op, converted = "insert", True
            elif all(w in stop for w in sb[j1:j2]):
                op, converted = "delete", True
        if op == "replace":
            # one side's words only moved (a word the other text has elsewhere): the other side's
            # words are inserted ("在上小学" / "在实验小学上四年级": 小学 moved, 四年级 is new)
            moved_a, moved_b = set(sa[i1:i2]) <= set(sb), set(sb[j1:j2]) <= set(sa)
            if moved_a != moved_b:
                op = "insert" if moved_a else "delete"
        if op == "replace" and replaced & set(sa[i1:i2] + sb[j1:j2]):
            spans.append((phrase(sa[max(0, i1 - window):i2 + window]), phrase(sb[max(0, j1 - window):j2 + window])))
            stretches.append((sa[i1:i2], sb[j1:j2]))
            following.append(sa[i2:i2 + 2] if sa[i2:i2 + 2] == sb[j2:j2 + 2] else sa[i2:i2 + 1])
        elif op in ("insert", "delete"):
            words, other = (sa[i1:i2], set(sb)) if op == "delete" else (sb[j1:j2], set(sa))
            new = [w for w in words if w not in stop
                   and not w[:1].isdigit() and w not in other     # a word moved elsewhere is not new
                   and _detail_word(w)]
            # a new item joined by "and" / 和, or a new place, time or purpose brought by a
            # preposition, is new detail by itself ("penicillin and latex", "hiking in the mountains");
            # not where the other text has function words in its place: there one connective
            # replaces another ("due to" / "because of", "prior to" / "before")
            listed = (bool(new) and not converted
                      and any(w in _CONJUNCTIONS or w in _PREPOSITIONS for w in words))
            valued = any(w not in other and (w in entities or w in hyphenated or _CODE_RE.fullmatch(w) or w.isdigit()
                                             or _counted(w))
                         for w in words)
            neighbours, text = ((sb[j1 - 1:j1] + sb[j2:j2 + 1], fb.text) if op == "insert"
                                else (sa[i1 - 1:i1] + sa[i2:i2 + 1], fa.text))
            named = not converted and len(new) == 1 and _new_thing(new[0], neighbours, text)
            added += max(len(new), ADDED_DETAIL_WORDS if listed or valued or named else 0)
    return spans, added, stretches, following


# Where one clause ends and another begins: a memory that adds a clause of its own adds a fact.
# Not a colon ("Reminder: meeting at 3pm" is one clause), nor a full stop inside 3.5 or a.m.
_BRACKETED = re.compile(r"\([^()]*\)|（[^（）]*）")
_CLAUSE_BREAK = re.compile(r"(?:[,，;；。!！?？、]|\.(?=\s|$))+")


def _new_clause(norm_a: str, norm_b: str) -> bool:
    """Whether one text has more clauses than the other and one of them mostly new: at least half
    of its fact-bearing words (``_detail_word``) missing from the other text, or a Chinese noun
    among them ("用户吃芒果会过敏，吃菠萝也会" / "用户吃芒果会过敏"). "用户的丈夫在银行工作，
    经常出差" / "用户的丈夫在银行工作" (blind set K merged it: one new verb, 出差, was left to the
    thresholds); "用户去年在郊区买了房，还买了一辆车" / "用户去年在郊区买了房" (blind set P: 买 is in
    both, 车 is new)."""
    # a note in brackets ("... last week. (confirmed)", "（已确认）") annotates; it is no clause
    norm_a, norm_b = _BRACKETED.sub(" ", norm_a), _BRACKETED.sub(" ", norm_b)
    whole = {norm_a: set(_phrase_words(norm_a)), norm_b: set(_phrase_words(norm_b))}
    count = {text: len([c for c in _CLAUSE_BREAK.split(text) if c.strip()]) for text in (norm_a, norm_b)}
    for text, other in ((norm_a, norm_b), (norm_b, norm_a)):
        clauses = [c for c in _CLAUSE_BREAK.split(text) if c.strip()]
        if len(clauses) <= count[other]:
            continue                                      # a clause reworded in place is no new one
        for clause in clauses:
            words = [w for w in _phrase_words(clause) if not w[:1].isdigit() and _content_word(w)]
            new = [w for w in words
                   if not (w in whole[other] or any(w in o or o in w for o in whole[other] if len(o) > 1))]
            if new and (2 * len(new) >= len(words) or any(_chinese_noun(w) for w in new)):
                return True                               # mostly new, or a new thing named (吃菠萝也会)
    return False


def _content_word(word: str) -> bool:
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    return word not in ENGLISH_STOP_WORDS and word not in CHINESE_STOP_WORDS and _detail_word(word)


def _narrowed(norm_a: str, norm_b: str) -> bool:
    """Whether one text names a narrower kind of a thing the other names, by one noun put before
    it: "reads fiction" / "reads crime fiction", "buys milk" / "buys oat milk", 喝茶 / 喝绿茶 (a
    jieba word that ends with the other's word: 绿茶 / 茶). A new adjective ("a new car") is left
    to the thresholds; so is a noun after the shared one ("jazz" / "jazz music" may be one thing)."""
    from ...text import lexicon
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    sa, sb = _phrase_words(norm_a), _phrase_words(norm_b)
    changes = [op for op in _word_opcodes(norm_a, norm_b) if op[0] != "equal"]
    if len(changes) != 1:
        return False
    tag, i1, i2, j1, j2 = changes[0]
    for (x, y, after) in ((sa[i1:i2], sb[j1:j2], sb[j2:j2 + 1]), (sb[j1:j2], sa[i1:i2], sa[i2:i2 + 1])):
        if tag in ("insert", "delete") and not x and len(y) == 1 and after:
            word, head = y[0], after[0]
            if (word.isalpha() and word.isascii() and word not in ENGLISH_STOP_WORDS
                    and re.search(rf"\b{word} {head}\b", norm_a if tag == "delete" else norm_b)
                    and lexicon.is_lemma(word) and lexicon.is_lemma(head) and not lexicon.is_adjective(word)):
                return True
        if tag == "replace" and len(x) == 1 and len(y) == 1 and _HAN.match(x[0]) and _HAN.match(y[0]):
            shorter, longer = x[0], y[0]
            if (len(longer) > len(shorter) and longer.endswith(shorter) and shorter not in CHINESE_STOP_WORDS
                    and _chinese_noun(shorter) and _chinese_noun(longer)
                    and not lexicon.synonyms((shorter,), (longer,))):
                return True                               # 茶 / 绿茶; not 修 / 维修, 订 / 预订 (verbs)
    return False


def _rewording(a: str, b: str, close, window: int) -> str | None:
    """None when `b` rewords `a`, else the reason they are two memories. Each stretch of words
    that `b` puts in place of one in `a` is looked up in the dictionary of its language
    (``text/lexicon``: WordNet, CC-CEDICT): antonyms there are a contradiction ("antonym"); synonyms
    there are a rewording, whatever the models say (couch / sofa, 同意 / 批准). A stretch the
    dictionary does not call synonyms keeps the pair apart (CHANGED_VALUE) when it names an entity
    (a name, a place, a product, a time), when its words are opposed by form (``_opposed``: a
    unit, a comparative, a negating prefix), or when the models covering the language do not put
    the two phrases close (`close(x, y)`: a cosine of at least ``[dedup] paraphrase_cosine`` with
    `window` words of context). New detail added (ADDED_DETAIL_WORDS) keeps a pair apart too."""
    from ...text import lexicon

    left, right = _replaced(a, b)
    fa, fb = _facts(a), _facts(b)
    spans, added, stretches, following = _replaced_spans(fa, fb, window, set(left) | set(right),
                                                         _entities(a) | _entities(b))
    if added >= ADDED_DETAIL_WORDS or _narrowed(fa.text, fb.text) or _new_clause(fa.text, fb.text):
        return CHANGED_VALUE
    if not left or not right:
        return None
    crossed = _crossed(stretches)
    if crossed:
        return f"swap {crossed[0]}/{crossed[1]}"
    relations = [_relation(x, y, after) for (x, y), after in zip(stretches, following)]
    # a negated word against its antonym says the same ("doesn't like" / "dislikes")
    relations = [("synonym", "negated antonym") if (not found or found[0] == "antonym") and _negated_antonym(x, y) else found
                 for (x, y), found in zip(stretches, relations)]
    hyphenated = _hyphen_parts(fa.text, fb.text)
    for (x, y), found in zip(stretches, relations):
        if found and found[0] == "antonym":
            return f"antonym {' '.join(x)}/{' '.join(y)}"
        if not found and _states_number(x, hyphenated) != _states_number(y, hyphenated):
            return CHANGED_VALUE                          # "several times" / "three times": a value given
    unexplained = [(x, y) for (x, y), found in zip(stretches, relations) if not found]
    explained = {w for (x, y), found in zip(stretches, relations) if found for w in x + y}
    # a word is explained when a stretch with a synonym holds it (also inside a token: "st" of "1st")
    rest_left = [w for w in left if not any(w in token for token in explained)]
    rest_right = [w for w in right if not any(w in token for token in explained)]
    if stretches and not unexplained and not rest_left and not rest_right:
        return None                                       # every replaced word has a synonym in its place
    named_a, named_b = _entities(a), _entities(b)
    if (set(rest_left) & (named_a - named_b)) or (set(rest_right) & (named_b - named_a)):
        # a name only one text has; one both name is only cut differently (每个月攒 / 每个月存: 月存)
        return CHANGED_VALUE
    opposed = _opposed(rest_left, rest_right)
    if opposed:
        return opposed
    for (x, y), found in zip(stretches, relations):
        if (not found and _single_character_change("".join(x), "".join(y))
                and not lexicon.head_sense("".join(x), "".join(y)) and not lexicon.one_group("".join(x), "".join(y))
                and not _two_verbs("".join(x), "".join(y))):
            return CHANGED_VALUE
        if not found and lexicon.same_kind(x, y):
            return CHANGED_VALUE                          # violin / cello: the models put them close
    unexplained_spans = [span for span, found in zip(spans, relations) if not found]
    if not unexplained_spans or not all(close(x, y) for x, y in unexplained_spans):
        return CHANGED_VALUE
    return None
