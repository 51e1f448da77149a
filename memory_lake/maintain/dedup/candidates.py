"""Candidate pairs for dedup (seed 004: fingerprint, then semantic > 0.90): exact key, MinHash and
embedding buckets.

Per scope (tenant, agent_id, user_id), set-based passes, never all pairs:

1. **exact**: the same content after normalisation (NFKC width, case, whitespace, punctuation);
2. **near**: MinHash over the character 3-grams (2-grams in Chinese) of the normalised text (so
   Chinese works without segmentation; a word-level change moves several n-grams), LSH-bucketed
   (``bands`` x ``rows`` hashes; only memories sharing a bucket are compared, never all pairs),
   verified by the exact Jaccard similarity of the two 3-gram sets >= ``near_jaccard``. Every
   number reads as ``0`` here, so that a changed number never hides a pair from the guard ("Budget
   is $500" / "$600");
3. **semantic**: cosine > ``semantic_cosine`` (seed 004: 0.90) between memories that share their
   type or a tag, with the cached embeddings, only where the model covers both texts' language
   (MiniLM maps most Chinese to [UNK]); candidates come from random-hyperplane LSH buckets.

A fourth source of candidates sits in the near pass: memories of one scope whose word sequences
differ in exactly one word (``substitution_pairs``), which a short memory's n-grams and the models
both miss ("不吃香菜" / "不吃芫荽").
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .reading import _normalise, _phrase_words
from .words import _chinese_synonym_map


_SHINGLE = 3
# Within an LSH bucket, each member is paired with the first one and with this many before it.
BUCKET_WINDOW = 4
# A bucket of at most this many members is paired whole (the first member with each other one,
# and the others at most BUCKET_WINDOW apart): then the pairs among any of its members are pairs of
# the bucket, which ``settled.py`` relies on. A larger bucket's rows are noted as ``crowded``.
WHOLE_BUCKET = BUCKET_WINDOW + 2


def _strict_key(expr: pl.Expr) -> pl.Expr:
    """Content for the exact pass: NFKC, lower case, no whitespace or punctuation, except that a
    separator between two digits and a minus sign stay (1.5 is not 15, 3 4 is not 34, -5 is not 5)."""
    lowered = expr.str.normalize("NFKC").str.to_lowercase()
    between_digits = r"(\d)[\p{P}\p{S}\s]+(\d)"
    return (lowered.str.replace_all(r"(^|[^\p{L}\p{N}])[-\u2212](\d)", "${1}\x02${2}")
            .str.replace_all(between_digits, "${1}\x01${2}").str.replace_all(between_digits, "${1}\x01${2}")
            .str.replace_all(r"[\p{P}\p{S}\s]+", ""))


def _bucket_pairs(buckets: pl.DataFrame, crowded: set[int] | None = None) -> pl.DataFrame:
    """(a, b) pairs within each bucket (a list column `members`, sorted): every member with the
    first one and with the ``BUCKET_WINDOW`` before it (linear, never quadratic). A path through
    one neighbour is not enough: the guard may cut it (a sibling that differs in a number). The
    members of a bucket larger than ``WHOLE_BUCKET`` are added to `crowded` when it is given."""
    if crowded is not None:
        crowded.update(buckets.filter(pl.col("members").list.len() > WHOLE_BUCKET)
                       .select(pl.col("members").explode().unique())["members"].to_list())
    exploded = (buckets.filter(pl.col("members").list.len() > 1)
                .with_columns(first=pl.col("members").list.first())
                .explode("members")
                .with_columns([pl.col("members").shift(k).over("bucket").alias(f"prev{k}")
                               for k in range(1, BUCKET_WINDOW + 1)]))
    star = exploded.filter(pl.col("members") != pl.col("first")).select(a="first", b="members")
    chains = [exploded.drop_nulls(f"prev{k}").select(a=f"prev{k}", b="members") for k in range(1, BUCKET_WINDOW + 1)]
    return (pl.concat([star, *chains]).filter(pl.col("a") != pl.col("b"))
            .select(a=pl.min_horizontal("a", "b"), b=pl.max_horizontal("a", "b")).unique())


def near_pairs(frame: pl.DataFrame, *, bands: int, rows: int, threshold: float,
               crowded: set[int] | None = None) -> pl.DataFrame:
    """Verified near-duplicate pairs (a, b, score = Jaccard of 3-gram sets) among `frame`'s rows
    (columns ``row``, ``scope``, ``text``), from MinHash LSH buckets within a scope; the rows of a
    bucket too large to pair whole are added to `crowded` when it is given."""
    patterns, heads = _chinese_synonym_map()
    texts = frame.select("row", "scope", norm=pl.col("text").str.normalize("NFKC").str.to_lowercase()
                         # a number reads as "0" here: texts that differ only in a number are
                         # candidates, and the guard (not the n-grams) decides what the number means
                         .str.replace_all(r"\d+(?:[.,:/-]\d+)*", "0")
                         .str.replace_all(r"[\p{P}\p{S}\s]+", "")
                         # Chinese synonyms read as one word, so a rewording shares its n-grams
                         .str.replace_many(patterns, heads))
    # Chinese carries more per character: bigrams there, 3-grams elsewhere
    texts = texts.with_columns(size=pl.when(pl.col("norm").str.contains(r"\p{Han}")).then(2).otherwise(_SHINGLE))
    texts = texts.with_columns(n=(pl.col("norm").str.len_chars() - pl.col("size") + 1).clip(1))
    grams = (texts.select("row", "scope", "norm", "size", start=pl.int_ranges(0, "n"))
             .explode("start")
             .select("row", "scope", h=pl.col("norm").str.slice(pl.col("start"), pl.col("size")).hash(seed=7))
             .unique(["row", "h"]))
    if grams.height == 0:
        return pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    signatures = grams.group_by("row", "scope").agg(
        [pl.col("h").hash(seed=100 + i).min().alias(f"m{i}") for i in range(bands * rows)])
    keyed = signatures.select(
        "row", "scope",
        *[pl.concat_list([pl.col(f"m{band * rows + r}") for r in range(rows)]).hash(seed=band).alias(f"b{band}")
          for band in range(bands)])
    buckets = (keyed.unpivot(index=["row", "scope"], variable_name="band", value_name="key")
               .group_by("scope", "band", "key").agg(members=pl.col("row").sort())
               .with_row_index("bucket"))
    pairs = _bucket_pairs(buckets, crowded)
    if pairs.height == 0:
        return pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    sets = grams.group_by("row").agg(grams=pl.col("h"))
    scored = (pairs.join(sets.rename({"row": "a", "grams": "ga"}), on="a")
              .join(sets.rename({"row": "b", "grams": "gb"}), on="b")
              .with_columns(score=pl.col("ga").list.set_intersection("gb").list.len()
                            / pl.col("ga").list.set_union("gb").list.len())
              .filter(pl.col("score") >= threshold))
    return scored.select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64), "score")


# A memory longer than this many words is not looked at by the one-word pass (its other passes
# still see it): one word of 60 changes too little for the n-grams to miss the pair anyway.
SUBSTITUTION_MAX_WORDS = 60
# A stretch of one to three words is blanked: a phrasal verb, a compound or an idiom replaced by
# one word ("turned down" / "declined", "vacuum cleaner" / "hoover", "out of work" / "unemployed",
# "cut down on" / "reduce") pairs too.
SUBSTITUTION_WIDTHS = (1, 2, 3)
# The words a text must keep around a blanked stretch of that width: three blanked words of "User
# loves going hiking" leave one, and would pair it with anything that ends in "hiking".
SUBSTITUTION_KEPT = {3: 4}


def substitution_pairs(frame: pl.DataFrame, crowded: set[int] | None = None) -> pl.DataFrame:
    """Pairs (a, b, score) of `frame`'s rows (columns ``row``, ``scope``, ``text``) in one scope whose
    word sequences differ in one stretch of at most two words, replaced by another ("the old couch"
    / "the old sofa", "不吃香菜" / "不吃芫荽", "turned down" / "declined"). In a short memory one replaced word moves too many n-grams for
    the near pass and too little meaning for the models to tell a synonym from another value, so
    such pairs come here and the guard (``contradiction``: the dictionaries, the hard signals)
    decides. Each text is keyed once per word position and width (``SUBSTITUTION_WIDTHS``) with
    that stretch blanked out; texts sharing a key are the pairs (linear in the words, never all
    pairs). Words as ``_phrase_words`` reads
    them: Latin words and codes by a regular expression in Polars, Chinese cut by jieba (only the
    texts with Chinese go through Python). Score: the share of words kept. The rows of a key shared
    by too many texts to pair whole are added to `crowded` when it is given."""
    empty = pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    if frame.height == 0:
        return empty
    norm = pl.col("text").str.normalize("NFKC").str.to_lowercase()
    texts = frame.select(pl.col("row").cast(pl.Int64), "scope", "text", han=pl.col("text").str.contains(r"\p{Han}"))
    latin = (texts.filter(~pl.col("han"))
             .select("row", "scope", words=norm.str.extract_all(r"[a-z0-9]+(?:['’][a-z]+)?")))
    han = texts.filter(pl.col("han"))
    if han.height:
        han = han.select("row", "scope", words=pl.col("text").map_elements(
            lambda t: list(_phrase_words(_normalise(t))), return_dtype=pl.List(pl.String)))
        words = pl.concat([latin, han])
    else:
        words = latin
    from ...text import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS

    stop = sorted(ENGLISH_STOP_WORDS | CHINESE_STOP_WORDS)
    words = words.with_columns(n=pl.col("words").list.len(),
                               h=pl.col("words").list.eval(pl.element().hash(seed=11)),
                               content=pl.col("words").list.eval(pl.element().filter(~pl.element().is_in(stop))))
    positions = words.filter(pl.col("n").is_between(2, SUBSTITUTION_MAX_WORDS)).with_columns(
        i=pl.int_ranges(0, "n")).explode("i")
    keyed = pl.concat([
        positions.filter((pl.col("i") + width <= pl.col("n"))
                         & (pl.col("n") - width >= SUBSTITUTION_KEPT.get(width, 0))).select("row", key=pl.struct(
            "scope",
            prefix=pl.col("h").list.slice(0, pl.col("i")),
            suffix=pl.col("h").list.slice(pl.col("i") + width, pl.col("n"))).hash(seed=12))
        for width in SUBSTITUTION_WIDTHS])
    if keyed.height == 0:
        return empty
    buckets = keyed.group_by("key").agg(members=pl.col("row").unique().sort()).with_row_index("bucket")
    pairs = _bucket_pairs(buckets, crowded)
    if pairs.height == 0:
        return empty
    sizes = words.select("row", "n", "content")
    joined = (pairs.join(sizes.rename({"row": "a", "n": "na", "content": "ca"}), on="a")
              .join(sizes.rename({"row": "b", "n": "nb", "content": "cb"}), on="b"))
    # a word added ("likes jazz" / "likes modern jazz", "a car" / "an electric car") is not a
    # replacement: the thresholds of the near and semantic passes decide such pairs, so each text
    # must hold a content word the other lacks
    replaced = ((pl.col("na") == pl.col("nb"))
                | ((pl.col("ca").list.set_difference("cb").list.len() > 0)
                   & (pl.col("cb").list.set_difference("ca").list.len() > 0)))
    return (joined.filter(replaced)
            .select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64),
                    score=(1 - 1 / pl.max_horizontal("na", "nb")).cast(pl.Float64)))


def semantic_pairs(frame: pl.DataFrame, vectors: np.ndarray, *, threshold: float, bands: int = 16,
                   bits: int = 8, seed: int = 11, crowded: set[int] | None = None) -> pl.DataFrame:
    """Pairs (a, b, score = cosine) with cosine > `threshold` among rows that have a vector
    (``frame``: ``row``, ``scope``, ``type``, ``tags``; `vectors` aligned with it, L2-normalised),
    sharing a scope and a type or a tag; candidates from random-hyperplane LSH buckets (the rows of
    a bucket too large to pair whole are added to `crowded` when it is given)."""
    empty = pl.DataFrame(schema={"a": pl.Int64, "b": pl.Int64, "score": pl.Float64})
    if frame.height < 2:
        return empty
    planes = np.random.default_rng(seed).standard_normal((vectors.shape[1], bands * bits)).astype(np.float32)
    signs = (vectors @ planes) > 0
    weights = (1 << np.arange(bits)).astype(np.int64)
    keys = np.stack([signs[:, b * bits:(b + 1) * bits].astype(np.int64) @ weights for b in range(bands)], axis=1)
    keyed = frame.select("row", "scope").with_columns(
        [pl.Series(f"b{b}", keys[:, b]) for b in range(bands)])
    buckets = (keyed.unpivot(index=["row", "scope"], variable_name="band", value_name="key")
               .group_by("scope", "band", "key").agg(members=pl.col("row").sort())
               .with_row_index("bucket"))
    pairs = _bucket_pairs(buckets, crowded)
    if pairs.height == 0:
        return empty
    position = {row: i for i, row in enumerate(frame["row"].to_list())}
    a_idx = np.array([position[r] for r in pairs["a"].to_list()])
    b_idx = np.array([position[r] for r in pairs["b"].to_list()])
    cosine = np.einsum("ij,ij->i", vectors[a_idx], vectors[b_idx])
    meta = frame.select("row", "type", tags=pl.col("tags").fill_null([]))
    scored = (pairs.with_columns(score=pl.Series(cosine.astype(np.float64)))
              .filter(pl.col("score") > threshold)
              .join(meta.rename({"row": "a", "type": "ta", "tags": "ga"}), on="a")
              .join(meta.rename({"row": "b", "type": "tb", "tags": "gb"}), on="b")
              .filter((pl.col("ta") == pl.col("tb")) | (pl.col("ga").list.set_intersection("gb").list.len() > 0)))
    return scored.select(pl.col("a").cast(pl.Int64), pl.col("b").cast(pl.Int64), "score")
