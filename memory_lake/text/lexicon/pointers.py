"""WordNet's pointers between synsets, read from its ``data.<pos>`` files: antonyms (``!``), the
links that join near-synonyms (`_near_links`), indirect antonyms of adjective clusters, the noun
hierarchy (hypernyms: `_ancestors`, `is_unit`) and the attributes adjectives are values of."""

from __future__ import annotations

import functools
from collections import Counter

from .files import wordnet_dir
from .wordnet import _POS, _english_synsets


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


def _synset_lines(folder, pos: str):
    """The fields of every synset line of WordNet's ``data.<pos>`` file (licence lines, which start
    with a space, skipped), each with the index of its pointer count."""
    with open(folder / f"data.{pos}", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(" "):
                continue
            parts = line.split(" | ")[0].split()
            yield parts, 4 + 2 * int(parts[3], 16)


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
        for parts, at in _synset_lines(folder, pos):
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


def _pointers(pos: str, symbols: tuple[str, ...], target_pos: str) -> dict[int, frozenset[int]]:
    """{synset of `pos`: the synsets of `target_pos` it points to with one of `symbols`}, read from
    WordNet's ``data.<pos>`` file."""
    folder = wordnet_dir()
    if folder is None:
        return {}
    found: dict[int, set[int]] = {}
    for parts, at in _synset_lines(folder, pos):
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


@functools.lru_cache(maxsize=1)
def _attribute_table() -> dict[int, frozenset[int]]:
    """{adjective synset: the noun synsets it is a value of (WordNet's attribute pointer ``=``)}."""
    return _pointers("adj", ("=",), "n")


def _attributes(offset: int) -> frozenset[int]:
    return _attribute_table().get(offset, frozenset())
