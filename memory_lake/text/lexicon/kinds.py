"""Items of one kind: two words that name two different things of one kind (violin / cello, red /
blue; 小提琴 / 大提琴, 护士 / 药剂师), by WordNet's noun hierarchy and attributes, Cilin's lines of
related words and the WordNet nouns of CC-CEDICT's senses (`same_kind`); and the kinds under which
a modifier names a kind of its own (`natural_kind`)."""

from __future__ import annotations

import functools

from .cedict import _cedict, _pivot
from .cilin import _all_cilin_codes
from .pairs import _is_chinese, _stripped
from .pointers import _ancestors, _attributes, _near_links
from .relatives import _two_relatives, _two_relatives_zh
from .wordnet import _english_synsets


# How far up WordNet's noun hierarchy two words are compared: two words whose senses share a
# hypernym this many steps up are two items of one kind (violin / cello: bowed stringed
# instruments; red / blue: chromatic colours). One step only: further up, near-synonyms meet too
# (boss / manager under "leader"). A word under the other (lorry / truck, hobby / pastime) is not
# read as another item: people use the wider word for the same thing.
KIND_LEVELS = 1
# Only a word's most frequent noun senses are read (a rare sense makes everything "of one kind").
KIND_SENSES = 2


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
