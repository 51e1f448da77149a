"""The contradiction guard (seed 004: dedup never merges contradictions): `contradiction`.

A candidate pair (near or semantic) is never merged when its texts differ in a number, a weekday or
month, a negation (not/never/n't/no/不/没/别/无/未..., counted), one side of an antonym pair
(``data/antonyms.tsv``: dark/light, like/dislike, 喜欢/讨厌, 深色/浅色 ...; and WordNet's antonyms,
``text/lexicon``), the order of two items (Parquet over PDF / PDF over Parquet), new detail
(``ADDED_DETAIL_WORDS``), or a content word replaced by one that is not its synonym: not a typo, not
in ``data/synonyms.tsv``, not a synonym by the offline dictionaries (``text/lexicon``: WordNet 3.0,
CC-CEDICT), and, with embedding models, not put close by them (``_rewording``). A changed value,
date, negation, antonym or swap is a sign of a contradiction: the pair goes to the ``conflicts``
queue as kind ``contradiction`` for a person to decide. A changed identifier or a replaced word
means two different memories ("ticket 88" / "ticket 89", "updates about billing" / "about search"):
they are kept apart and counted, not queued (``verdicts.DIFFERENT``).

Here: `contradiction` and the order in which it reads the signs (`_guard`; the rules themselves are
in ``reading``, ``values``, ``words``, ``names`` and ``rewording``), chat turns (issue 35, ``chat.py``:
two speakers, a turn that states nothing), titles in 《》, and `closeness`, the judge of rewordings
by the embedding models of the policy.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from ...store import Policy
from .verdicts import DIFFERENT, IDENTIFIER, NO_STATEMENT, OTHER_SPEAKER, OTHER_THING
from .reading import _VALUE_REASONS, _content_words, _facts, _has
from .words import _compared, _degree_change, _negation_reworded, _numeral_reworded, _swap, antonym_pairs
from .values import _amounts_zh, _codes, _fixed_expressions, _letter_values, _number_change, _without
from .names import _about_other_things
from .rewording import _rewording


# More content words than this that only one of two texts holds make a "swap" two statements.
SWAP_OTHER_WORDS = 2


def contradiction(a: str, b: str, close=None, window: int = 3) -> str | None:
    """Why two similar texts must not be merged, or None. Signs of a contradiction (queued for a
    person): a changed number, weekday, month or time of day, a negation, an antonym, two items
    swapped. Signs of two different memories (kept apart, counted): a changed identifier or code,
    a content word replaced by another.

    Without `close`, any content word replaced by one that is neither a typo nor a synonym from
    ``data/synonyms.tsv`` keeps the pair apart. With `close` (issue 17: a function of two phrases,
    True when the embedding models covering their language put them close in meaning), a replaced
    word is a rewording when `close` says so for the replaced words with `window` words of context,
    unless it names an entity (a name, a place, a product, a time) or the other text adds new
    detail (see `_rewording`).

    Chat turns are read as a speaker and an utterance (``chat.py``): turns of two speakers are two
    memories (OTHER_SPEAKER), and only what the utterances state is compared: their questions and
    phatic sentences ("Hey Mel! Good to see you!", "不用谢！") are left out, and a text that states
    nothing is kept apart (NO_STATEMENT), never queued."""
    from ..chat import split_turn, statement

    turn_a, turn_b = split_turn(a), split_turn(b)
    if turn_a and turn_b and turn_a.key != turn_b.key:
        return OTHER_SPEAKER
    said_a, said_b = statement(a), statement(b)
    if not said_a or not said_b:
        return NO_STATEMENT
    said_a, said_b = _titled(said_a), _titled(said_b)
    why = _guard(said_a, said_b, close, window)
    if why.startswith("swap") if why else False:
        # a swap is two items trading places in one statement; two statements that differ in more
        # than a couple of words besides are two things said ("I appreciate your support. It means
        # a lot" / "Your support means a lot. I really appreciate it. I'll keep you posted")
        return OTHER_THING if len(_content_words(said_a) ^ _content_words(said_b)) > SWAP_OTHER_WORDS else why
    if why is None or why in DIFFERENT or why.startswith(("antonym", "comparison")):
        return why
    if _about_other_things(said_a, said_b):
        return OTHER_THING
    return why


_TITLE = re.compile(r"《([^《》]{1,60})》")


def _titled(text: str) -> str:
    """`text` with each title in 《》 read as one name: its numbers are part of it (《流浪地球2》),
    and two titles are two names."""
    def name(match: re.Match) -> str:
        digest = hashlib.md5(match.group(1).encode("utf-8")).hexdigest()
        return "《Title" + "".join(chr(ord("a") + int(c, 16) % 26) for c in digest[:8]) + "》"
    return _TITLE.sub(name, text) if "《" in text else text


def _guard(a: str, b: str, close, window: int) -> str | None:
    """`contradiction` on two statements (see there)."""
    fa, fb = _facts(a), _facts(b)
    idioms_a, idioms_b = _fixed_expressions(fa.text), _fixed_expressions(fb.text)
    if idioms_a - idioms_b and idioms_b - idioms_a:
        # one fixed expression for another (一团糟 / 乱七八糟, 忐忑不安 / 七上八下): the numerals and
        # negations inside them are not values; the dictionaries and the models judge the two
        fa, fb = _without(a, idioms_a - idioms_b), _without(b, idioms_b - idioms_a)
    codes_a, codes_b = _codes(fa.text), _codes(fb.text)
    if codes_a and codes_b and codes_a != codes_b:
        return IDENTIFIER                                 # seat 14A / seat 14C: two seats
    changed = _number_change(fa, fb)
    if changed and not _numeral_reworded(fa, fb):         # (pure: asked only when a number changed)
        return changed
    units_a, units_b = _amounts_zh(fa.text), _amounts_zh(fb.text)
    if len(units_a) == len(units_b):
        for (va, ua), (vb, ub) in zip(units_a, units_b):
            if va == vb and ua != ub:
                return f"unit {ua}/{ub}"                  # 一百二十斤 / 一百二十公斤
    letters_a, letters_b = _letter_values(a), _letter_values(b)
    if letters_a and letters_b and letters_a != letters_b:
        return "letter"                                   # blood type O / A: a changed value, queued
    for va, vb, reason in zip(fa.values, fb.values, _VALUE_REASONS):
        if va and vb and va != vb and not (set(va) < set(vb) or set(vb) < set(va)):
            return reason                                 # (今天 / 今天下午: a time added, not changed)
    if fa.negations != fb.negations and not _negation_reworded(a, b, fa, fb):
        # counted, not by parity: "has a licence, so he can drive" / "doesn't have a licence, so
        # he can't drive" negates twice and says the opposite
        return "negation"
    degree = _degree_change(fa, fb)
    if degree:
        return degree
    # negations the texts do not share that got this far sit in a reworded stretch ("doesn't like" /
    # "dislikes"); the stretches are judged one by one below
    for left, right in antonym_pairs() if fa.negations == fb.negations else ():
        a_left, a_right, b_left, b_right = _has(fa, left), _has(fa, right), _has(fb, left), _has(fb, right)
        if (a_left and not a_right and b_right and not b_left) or (a_right and not a_left and b_left and not b_right):
            return f"antonym {left}/{right}"
    swapped = _swap(fa, fb)
    if swapped:
        return f"swap {swapped[0]}/{swapped[1]}"
    compared = _compared(fa, fb)
    if compared:
        return f"comparison: {compared[0]} moved across {compared[1]}"
    return _rewording(a, b, close or _never_close, window)


def _never_close(x: str, y: str) -> bool:
    """The judge when no embedding model is switched on: only the dictionaries explain a replaced word."""
    return False


class Closeness:
    """``close(x, y)``: True when the embedding models that cover the language of both phrases put
    them at a cosine of at least ``[dedup] paraphrase_cosine`` (the mean over those models: MiniLM
    and USE for English, USE for Chinese). The models load at the first question; vectors are kept
    per phrase and model for the run."""

    def __init__(self, names: tuple[str, ...], threshold: float, max_unknown: float, batch_size: int = 64):
        self.names, self.threshold, self.max_unknown, self.batch_size = names, threshold, max_unknown, batch_size
        self._providers: list | None = None
        self._vectors: dict[tuple[str, str], tuple[np.ndarray, float]] = {}

    @property
    def providers(self) -> list:
        """The models that load here, in the policy's order (none: every phrase is "not close")."""
        if self._providers is None:
            from ...text import ModelUnavailable, load_model

            self._providers = []
            for name in self.names:
                try:
                    self._providers.append(load_model(name))
                except ModelUnavailable:
                    continue
        return self._providers

    def cosine(self, x: str, y: str) -> float | None:
        """The mean cosine of the two phrases over the models covering both (None: none covers them)."""
        values = []
        for provider in self.providers:
            missing = [t for t in dict.fromkeys((x, y)) if (provider.name, t) not in self._vectors]
            if missing:
                out = provider.embed(missing, self.batch_size)
                for t, v, u in zip(missing, out.vectors, out.unknown):
                    self._vectors[(provider.name, t)] = (v, float(u))
            (vx, ux), (vy, uy) = self._vectors[(provider.name, x)], self._vectors[(provider.name, y)]
            if ux <= self.max_unknown and uy <= self.max_unknown:
                values.append(float(vx @ vy))
        return sum(values) / len(values) if values else None

    def __call__(self, x: str, y: str) -> bool:
        value = self.cosine(x, y)
        return value is not None and value >= self.threshold


def closeness(policy: Policy) -> Closeness | None:
    """The judge of rewordings for `policy`'s models, or None when semantic search is switched off
    (then a replaced word keeps a pair apart unless it is a typo or a listed synonym)."""
    from ...text import embedding_models

    names = embedding_models(policy)
    if not names:
        return None
    return Closeness(names, policy.dedup.paraphrase_cosine, policy.search.max_unknown_ratio,
                     policy.search.batch_size)
