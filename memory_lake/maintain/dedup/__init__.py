"""Deduplication that never merges contradictions (seed 004: fingerprint, then semantic > 0.90).

Per scope (tenant, agent_id, user_id), over active memories that are not merged and not important
(automation never changes an important memory, on either side of a merge), three set-based passes:

1. **exact**: the same content after normalisation (NFKC width, case, whitespace, punctuation);
2. **near**: MinHash over the character 3-grams (2-grams in Chinese) of the normalised text (so
   Chinese works without segmentation; a word-level change moves several n-grams), LSH-bucketed (``bands`` x ``rows``
   hashes; only memories sharing a bucket are compared, never all pairs), verified by the exact
   Jaccard similarity of the two 3-gram sets >= ``near_jaccard``. Every number reads as ``0``
   here, so that a changed number never hides a pair from the guard ("Budget is $500" / "$600");
3. **semantic**: cosine > ``semantic_cosine`` (seed 004: 0.90) between memories that share their type
   or a tag, with the cached embeddings, only where the model covers both texts' language (MiniLM
   maps most Chinese to [UNK]); candidates come from random-hyperplane LSH buckets.

A fourth source of candidates sits in the near pass: memories of one scope whose word sequences
differ in exactly one word (``substitution_pairs``), which a short memory's n-grams and the models
both miss ("不吃香菜" / "不吃芫荽").

**Contradiction guard.** A candidate pair (near or semantic) is never merged when its texts differ
in a number, a weekday or month, a negation (not/never/n't/no/不/没/别/无/未..., counted), one side
of an antonym pair (``data/antonyms.tsv``: dark/light, like/dislike, 喜欢/讨厌, 深色/浅色 ...; and
WordNet's antonyms, ``text/lexicon``), the order of two items (Parquet over PDF / PDF over Parquet),
new detail (``ADDED_DETAIL_WORDS``), or a content word replaced by one that is not its synonym:
not a typo, not in ``data/synonyms.tsv``, not a synonym by the offline dictionaries (``text/lexicon``:
WordNet 3.0, CC-CEDICT), and, with embedding models, not put close by them (``_rewording``). Every run of digits is a number (0 too),
and so are Chinese numerals and English number words. A number is read by its neighbours: after a
label (``ticket 88``, ``order 5512``, ``#42``, ``INC-4411``, ``订单5512``, ``第3号``) it is an
identifier, and two identifiers that differ name two different things; with a unit, a currency,
a date or time, or after a verb or copula (``31 years``, ``$500``, ``3pm``, ``2026-03-04``,
``预算500元``, ``是500``) it is a value of the same thing. A changed value, date, negation, antonym
or swap is a sign of a contradiction: the pair goes to the ``conflicts`` queue as kind
``contradiction`` for a person to decide. A changed identifier or a replaced word means two
different memories ("ticket 88" / "ticket 89", "updates about billing" / "about search"): they
are kept apart and counted, not queued.

**Clusters** grow by complete linkage on the guard: from the canonical memory along the candidate
pairs, a memory joins only if it passes the guard against every member already in the cluster, so
A~B and B~C never merge A with a C that differs from A. The guard runs within a cluster's few
members, never over all pairs of a scope.

**Merge.** The canonical memory is the most important one, then the oldest (created_at), then the
smallest id. It takes the union of the tags, the sum of the access and reference counts, the max
importance, the earliest created_at and the latest last_accessed_at; the others get ``merged_into``
and status ``merged`` (they are not deleted; search, publish, health and the tier rules skip them;
forget still reaches them). A merge is a system move: no version bump, a ``memory_history`` row
(change ``merge``) per memory with its before image, a ``dedup_merges`` row per member, and the
cleanup log. ``unmerge(canonical)`` restores the whole cluster exactly from those before images
(the status too); the pairs it separates are never merged again.

Where the parts live
--------------------
The guard, lowest first (each file imports only the ones above it):

* ``verdicts`` - what the guard answers: the reasons that keep a pair apart (``DIFFERENT``).
* ``reading`` - how the guard reads a text (`_facts`): normalised, its numbers (value or identifier),
  dates and times, negations counted, its words in order (jieba).
* ``words`` - synonyms and typos, antonyms, negations that reword, graded degrees, two items swapped.
* ``values`` - changed numbers, identifiers, codes, units and letters; Chinese fixed expressions.
* ``names`` - entities, and two texts about two different named things (``OTHER_THING``).
* ``rewording`` - a replaced word or new detail: a rewording, or two memories (`_rewording`).
* ``guard`` - `contradiction` (chat turns, titles, the order of the signs) and `closeness`.

Then the step:

* ``candidates`` - candidate pairs: the exact key, MinHash and one-word buckets, embedding buckets.
* ``clustering`` - `find_duplicates`: the guarded pairs, complete-linkage clusters, the `Plan`.
* ``step`` - `plan_dedup` (the rows and vectors read, scope by scope on failure) and `dedup`.
* ``unmerge`` - applying a plan's merges, and `unmerge`.
"""

from __future__ import annotations

from .verdicts import CHANGED_VALUE, DIFFERENT, IDENTIFIER, NO_STATEMENT, OTHER_SPEAKER, OTHER_THING, UNREADABLE
from .reading import _normalise, _numbers, _phrase_words
from .words import (ANTONYMS_FILE, SYNONYMS_FILE, _chinese_synonym_map, _crossed, _opposed, _relation,
                    _single_character_change, antonym_pairs, synonym_groups)
from .values import _counted, _fixed_expressions
from .rewording import ADDED_DETAIL_WORDS
from .guard import SWAP_OTHER_WORDS, Closeness, closeness, contradiction
from .candidates import (BUCKET_WINDOW, SUBSTITUTION_KEPT, SUBSTITUTION_MAX_WORDS, SUBSTITUTION_WIDTHS, near_pairs,
                         semantic_pairs, substitution_pairs)
from .clustering import NEAR_CHUNK_ROWS, Plan, find_duplicates
from .step import KEPT_APART_SHOWN, PASSES, dedup, plan_dedup
from .unmerge import unmerge

__all__ = [
    "CHANGED_VALUE", "DIFFERENT", "IDENTIFIER", "NO_STATEMENT", "OTHER_SPEAKER", "OTHER_THING", "UNREADABLE",
    "ANTONYMS_FILE", "SYNONYMS_FILE", "antonym_pairs", "synonym_groups",
    "ADDED_DETAIL_WORDS",
    "SWAP_OTHER_WORDS", "Closeness", "closeness", "contradiction",
    "BUCKET_WINDOW", "SUBSTITUTION_KEPT", "SUBSTITUTION_MAX_WORDS", "SUBSTITUTION_WIDTHS", "near_pairs",
    "semantic_pairs", "substitution_pairs",
    "NEAR_CHUNK_ROWS", "Plan", "find_duplicates",
    "KEPT_APART_SHOWN", "PASSES", "dedup", "plan_dedup",
    "unmerge",
    # private names used outside the package: by tests/maintain/test_dedup_rules.py (_counted, _crossed,
    # _fixed_expressions, _normalise, _numbers, _opposed, _relation, _single_character_change) and
    # benchmarks/dedup_paraphrase.py (_normalise, _phrase_words); `_chinese_synonym_map` is a zero-argument
    # lru_cache like antonym_pairs and synonym_groups, kept in this namespace for warm-up code that walks it
    "_chinese_synonym_map", "_counted", "_crossed", "_fixed_expressions", "_normalise", "_numbers", "_opposed",
    "_phrase_words", "_relation", "_single_character_change",
]
