"""Two English stretches (`questions.relation` for English): antonyms and synonyms by WordNet's
synsets and pointers, then by the British / American word lists and the short forms."""

from __future__ import annotations

from .british import _variety_synonyms
from .kinds import same_kind
from .pointers import INDIRECT_SENSES, NARROW_HYPERNYM, NEAR_SENSES, _antonym_links, _indirect_antonyms, _near_links
from .short_forms import _shortened
from .wordnet import _english_synsets


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
