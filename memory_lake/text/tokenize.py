"""The tokeniser (DESIGN "Search", mode ``keyword``): the words of a text as every stage reads them.

Tokeniser rules (:func:`tokenize`)
----------------------------------
1. The text is NFKC-normalised (full-width ``ＡＢＣ１２３`` reads as ``abc123``) and words are
   lower-cased (``str.casefold``, so ``Straße`` meets ``STRASSE``).
2. A PII placeholder written by redaction, ``[PHONE:3f2a9c1d]``, is one token,
   ``phone:3f2a9c1d``, so a memory that holds a phone number is found by that number's placeholder
   (every kind: PHONE, EMAIL, ID_CN, CARD). ``[SECRET]`` is just the word ``secret``.
3. A run of Chinese characters (Han ideographs) is segmented with jieba in search mode
   (``lcut_for_search``), which also emits the shorter words inside a long one: ``喝咖啡`` gives
   ``咖啡`` and ``喝咖啡``, so the query ``咖啡`` finds it. Chinese stop words
   (:data:`CHINESE_STOP_WORDS`) are dropped. jieba's HMM guessing of words missing from its
   dictionary is off: it joins an unknown word to its neighbours, and does so differently in
   different sentences (``年会定`` in "公司年会定在明年", ``拿铁要`` in "拿铁要加什么奶"), so a query
   and a memory that share a word would not share the token. Without it an unknown word falls
   into its characters in every text alike, and they still meet (``拿`` + ``铁``).
4. Any other run of letters and digits (Latin, Cyrillic, kana, hangul, digits...) is one word;
   everything else, including ``_``, ``-``, ``'`` and punctuation, separates words. English stop
   words (:data:`ENGLISH_STOP_WORDS`) are dropped, then the word goes through :func:`stem`.

Stemming (:func:`stem`) is deliberately light and only folds inflections, never derivations
(``preference`` stays apart from ``prefer``). It applies to ASCII-letter words only, and every
rule keeps a stem of at least two letters holding a vowel (a, e, i, o, u, y):

* plural: ``sses`` -> ``ss``; ``ies`` -> ``i``; a final ``s`` is dropped unless the word ends
  in ``ss``, ``us`` or ``is`` (``users`` -> ``user``; ``status`` and ``analysis`` stay);
* past / progressive, on the result: ``ied`` -> ``i``; ``eed`` -> ``ee``; ``ed`` and ``ing``
  are dropped, and a doubled final consonant other than ``l``, ``s``, ``z`` is undoubled
  (``running`` -> ``run``, ``stopped`` -> ``stop``, ``falling`` -> ``fall``);
* last, so that the forms above meet their base word: a final ``y`` after a consonant becomes
  ``i`` (``query``/``queries`` -> ``queri``, ``try``/``tried`` -> ``tri``), else a final silent
  ``e`` is dropped (``make``/``makes``/``making`` -> ``mak``, ``use``/``used``/``uses``/``using``
  -> ``us``).

Stems are index keys, not words; what matters is that a query and a memory meet.

Stop words are matched before stemming, on the lower-cased word.

BM25 ranking lives in `memory_lake.search.bm25`; this module only makes tokens.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import polars as pl

# Bump whenever a rule of `tokenize` changes: the index step then rebuilds the postings it made
# with an older version (the only full rebuild; otherwise only new or changed content is tokenised).
TOKENIZER_VERSION = "2"


# A typical English stop list (articles, pronouns, auxiliaries, prepositions, conjunctions and
# the most frequent adverbs). They carry no meaning of their own in a memory search.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are aren as at
    be because been before being below between both but by
    can cannot could couldn did didn do does doesn doing don down during
    each either else ever every few for from further
    had hadn has hasn have haven having he her here hers herself him himself his how
    i if in into is isn it its itself just
    let ll me more most much must mustn my myself
    neither no nor not now of off on once only or other ought our ours ourselves out over own
    re same shall shan she should shouldn so some such
    than that the their theirs them themselves then there these they this those through to too
    under until up upon us
    very was wasn we were weren what when where whether which while who whom whose why will with
    won would wouldn yet you your yours yourself yourselves
    ve d s t m
    """.split()
)

# A small Chinese list: particles, conjunctions, pronouns and punctuation (seed search rule: the
# keyword mode must handle Chinese). Punctuation never reaches jieba here, but the list also
# serves callers that filter jieba output of raw text.
# Question words (什么, 时候, 哪里 ...) carry no topic: in a query they would rank every memory that
# mentions "...的时候" above the ones that answer it.
CHINESE_STOP_WORDS: frozenset[str] = frozenset(
    "的 了 是 在 和 也 就 都 而 及 与 着 或 一个 我们 你们 他们 这 那 吗 呢 吧 啊 我 你 他 她 它".split()
    + "什么 时候 哪里 哪儿 哪些 哪个 怎么 怎么样 怎样 如何 为什么 多少 几 谁 是否 有没有 上次 一下".split()
    + list("，。！？、；：“”‘’（）")
)

# Redaction placeholders (redact.PLACEHOLDER_KINDS): kind, colon, hex digest, in brackets.
_PLACEHOLDER = r"\[([A-Za-z][A-Za-z_]*):([0-9A-Fa-f]{4,64})\]"
# Han ideographs: the CJK Unified Ideographs and their extensions and compatibility blocks.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# One placeholder, one Han run, or one run of word characters that are neither "_" nor Han.
_TOKEN_RE = re.compile(rf"{_PLACEHOLDER}|([{_HAN}]+)|([^\W_{_HAN}]+)")
_VOWELS = frozenset("aeiouy")
_UNDOUBLED = frozenset("lsz")  # "fall", "miss", "buzz" keep their double letter

_jieba_lock = threading.Lock()
_jieba_module = None


def _jieba():
    """jieba, initialised once: its dictionary cache goes to a temp folder we own, and it prints nothing."""
    global _jieba_module
    if _jieba_module is None:
        with _jieba_lock:
            if _jieba_module is None:
                import jieba

                # jieba logs "Building prefix dict..." to stderr, which would pollute `--json` runs.
                jieba.setLogLevel(logging.CRITICAL + 10)
                jieba.dt.tmp_dir = _jieba_cache_dir()
                jieba.initialize()
                _jieba_module = jieba
    return _jieba_module


def _jieba_cache_dir() -> str:
    # Per user, so that another account's folder never makes the cache unwritable; jieba writes
    # it atomically (temp file + rename), so concurrent processes are fine.
    path = Path(tempfile.gettempdir()) / f"memory-lake-jieba-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        if os.access(path, os.W_OK):
            return str(path)
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="memory-lake-jieba-")


def stem(word: str) -> str:
    """The light stem of a lower-case word (see the module docstring); other words come back as they are."""
    if len(word) < 3 or not word.isascii() or not word.isalpha():
        return word
    # Step 1: plurals.
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and _stem_ok(word[:-3] + "i"):
        word = word[:-3] + "i"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and _stem_ok(word[:-1]):
        word = word[:-1]
    # Step 2: past and progressive forms.
    if word.endswith("ied") and _stem_ok(word[:-3] + "i"):
        word = word[:-3] + "i"
    elif word.endswith("eed"):
        if _stem_ok(word[:-1]):
            word = word[:-1]
    elif word.endswith("ed") and _stem_ok(word[:-2]):
        word = _undouble(word[:-2])
    elif word.endswith("ing") and _stem_ok(word[:-3]):
        word = _undouble(word[:-3])
    # Step 3: meet the base word: "query" meets "queries" (queri), "make" meets "making" (mak).
    if len(word) >= 3 and word.endswith("y") and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    elif word.endswith("e") and _stem_ok(word[:-1]):
        word = word[:-1]
    return word


def _stem_ok(candidate: str) -> bool:
    return len(candidate) >= 2 and not _VOWELS.isdisjoint(candidate)


def _undouble(word: str) -> str:
    if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in _VOWELS and word[-1] not in _UNDOUBLED:
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """The search tokens of `text`: lower-case words, jieba-segmented Chinese, placeholders whole.

    Stop words are removed and English words lightly stemmed; see the module docstring.
    ``tokenize("The users were running quickly") == ["user", "run", "quickly"]``.
    """
    if not text:
        return []
    return list(_tokenize_cached(text))


# Queries repeat (an agent asks the same thing again); a bounded cache keeps them cheap.
@functools.lru_cache(maxsize=4_096)
def _tokenize_cached(text: str) -> tuple[str, ...]:
    return _tokenize_uncached(text)


def _tokenize_uncached(text: str) -> tuple[str, ...]:
    tokens: list[str] = []
    normalised = unicodedata.normalize("NFKC", text)
    for match in _TOKEN_RE.finditer(normalised):
        kind, digest, han, word = match.groups()
        if kind is not None:
            tokens.append(f"{kind.lower()}:{digest.lower()}")
        elif han is not None:
            tokens.extend(w for w in _jieba().lcut_for_search(han, HMM=False) if w not in CHINESE_STOP_WORDS and w.strip())
        else:
            lowered = word.casefold()  # casefold: "Straße" meets "STRASSE"
            if lowered not in ENGLISH_STOP_WORDS:
                tokens.append(stem(lowered))
    return tuple(tokens)


def term_counts(hashes: Sequence[str], texts: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The postings of texts keyed by their hash: ``(docs, postings)`` where docs has one row per
    hash (``text_hash``, ``length`` = number of tokens) and postings one per (``text_hash``,
    ``term``) with its count ``tf``, sorted by term (so a table that stores them in that order can
    skip whole row groups when a query looks up a few terms)."""
    tokens = [_tokenize_uncached(text or "") for text in texts]
    docs = pl.DataFrame({"text_hash": list(hashes), "length": [len(t) for t in tokens]},
                        schema={"text_hash": pl.String, "length": pl.Int32})
    postings = (
        pl.DataFrame({"text_hash": list(hashes), "term": tokens},
                     schema={"text_hash": pl.String, "term": pl.List(pl.String)})
        .explode("term")
        .drop_nulls("term")
        .group_by("text_hash", "term")
        .agg(pl.len().cast(pl.Int32).alias("tf"))
        .sort("term", "text_hash")
    )
    return docs, postings
