"""The vectorised stages: whole Polars Series in, the rows they changed out.

Cheap prefilters pick the rows that can hold a match; secrets are replaced by pattern alone
(``_redact_secrets``); for the other kinds the matches are extracted as candidates, only the
unique ones go to their classifier in Python (``validate``), and the rows holding a hit are cut
at the matches and joined again with the placeholders (``_replace_candidates``). Lazy frames run
in parallel over the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from .patterns import (_AWS_SECRET_RUN, _AWS_SECRET_RUN_PREFILTER, _DIGIT_RUN, _DIGIT_RUN_WORTH_CHECKING, _EMAIL,
                       _EMAIL_PREFILTER, _IP_PREFILTER, _IP_RUN, _SECRET_RULES, _SECRET_TRIGGER, _UNICODE_ESCAPE)
from .placeholders import _Hit, _render
from .validate import _aws_secret_hits, _digit_run_hits, _email_hits, _ip_hits

_CUT_CHARACTERS = ("\x00", "\x01", "\x02", "\x03", "\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3")

# (pattern, classify, prefilter, worth_checking, triggered) of the stages after the pattern-only
# secrets, in the order they run: a later stage never sees what an earlier one replaced. A
# `triggered` stage looks only at the rows the secret trigger matched: its prefilter is one of the
# trigger's alternatives, and the secret rules changed none of the other rows.
_CANDIDATE_STAGES = (
    (_AWS_SECRET_RUN, _aws_secret_hits, _AWS_SECRET_RUN_PREFILTER, None, True),
    (_EMAIL, _email_hits, _EMAIL_PREFILTER, None, False),
    (_IP_RUN, _ip_hits, _IP_PREFILTER, None, False),
    (_DIGIT_RUN, _digit_run_hits, None, _DIGIT_RUN_WORTH_CHECKING, False),
)


def _salt_keys(tenants: pl.Series | None, salts: Mapping[str, bytes], n: int) -> pl.Series:
    """Per row, the key of its salt in ``salts``, or null for the default salt."""
    if tenants is None:
        return pl.Series("salt_key", [None] * n, dtype=pl.String)
    tenants = tenants.cast(pl.String)
    known = pl.Series(list(salts), dtype=pl.String)
    known_tenant = tenants.is_in(known.implode())
    return pl.select(pl.when(known_tenant).then(tenants).alias("salt_key")).to_series()


def _redact_secrets(texts: pl.Series) -> pl.Series:
    """Replace the secrets found by pattern alone in place; return the indices of the rows looked at."""
    rows = _rows_matching(texts, _SECRET_TRIGGER)
    if rows.len() == 0:
        return rows
    subset = texts.gather(rows)
    for pattern, replacement in _SECRET_RULES:
        subset = subset.str.replace_all(pattern, replacement)
    texts.scatter(rows, subset)
    return rows


def _redact_candidates(
    texts: pl.Series,
    salt_keys: pl.Series,
    salts: Mapping[str, bytes],
    default_salt: bytes,
    pattern: str,
    classify: Callable[[str], list[_Hit]],
    *,
    prefilter: str | tuple[str, ...] | None,
    worth_checking: str | None,
    among: pl.Series | None = None,
) -> pl.Series:
    """Replace, in place, the values ``classify`` finds in the matches of ``pattern``; return the
    indices of the rows changed. Only unique candidates reach Python; ``worth_checking`` drops
    hopeless ones before that, vectorised. `among`: the only rows that can hold a match (indices)."""
    candidates = _extract_candidates(texts, salt_keys, pattern, prefilter=prefilter, among=among)
    checked = candidates if worth_checking is None else candidates.filter(
        pl.col("candidate").str.contains(worth_checking))
    hits = {}
    for candidate in checked["candidate"].unique().to_list():
        found = classify(candidate)
        if found:
            hits[candidate] = found
    return _replace_candidates(texts, candidates, pattern, hits, salts, default_salt)


def _decode_escapes(texts: pl.Series) -> pl.Series:
    r"""``texts`` with the JSON ``\uXXXX`` escapes of printable characters decoded. Escaped
    backslashes (``\\u0031`` is a backslash and "u0031") stay, and so do escapes of quotes,
    backslashes, control characters and surrogates, so JSON stays JSON."""
    cut = _unused_character(texts)
    protected = texts.str.replace_all(r"\\", cut, literal=True)
    escapes = protected.str.extract_all(_UNICODE_ESCAPE).explode().drop_nulls().unique().to_list()
    decodable = {e: chr(int(e[2:], 16)) for e in escapes if _is_decodable(int(e[2:], 16))}
    if decodable:
        protected = protected.str.replace_many(list(decodable), list(decodable.values()))
    return protected.str.replace_all(cut, r"\\", literal=True)


def _is_decodable(code_point: int) -> bool:
    return code_point >= 0x20 and code_point not in (0x22, 0x5C, 0x7F) and not 0xD800 <= code_point <= 0xDFFF


def _rows_matching(texts: pl.Series, pattern: str) -> pl.Series:
    """Indices of the non-null rows that contain ``pattern``."""
    # Lazy frames run in parallel over the rows; eager Series methods do not.
    return (
        pl.DataFrame({"text": texts})
        .lazy()
        .with_row_index("row")
        .filter(pl.col("text").str.contains(pattern))
        .select("row")
        .collect()
        .to_series()
    )


def _extract_candidates(
    texts: pl.Series, salt_keys: pl.Series, pattern: str, *, prefilter: str | tuple[str, ...] | None = None,
    among: pl.Series | None = None,
) -> pl.DataFrame:
    """One (row, salt_key, candidate) per match of ``pattern``, in text order within a row.

    ``prefilter`` is a simple pattern every row with a match holds (or several, one of which it
    holds): a far cheaper scan than the regex. ``among``, when given, are the indices of the only
    rows that can hold a match (in order): the others are not scanned at all.
    """
    if among is None:
        frame = pl.DataFrame({"text": texts, "salt_key": salt_keys}).lazy().with_row_index("row")
    else:
        frame = pl.DataFrame({"row": among, "text": texts.gather(among), "salt_key": salt_keys.gather(among)}).lazy()
    if prefilter is not None:
        prefilters = (prefilter,) if isinstance(prefilter, str) else prefilter
        frame = frame.filter(pl.any_horizontal(pl.col("text").str.contains(p) for p in prefilters))
    return (
        frame.select("row", "salt_key", pl.col("text").str.extract_all(pattern).alias("candidate"))
        .explode("candidate")
        .drop_nulls("candidate")
        .collect()
    )


def _replace_candidates(
    texts: pl.Series,
    candidates: pl.DataFrame,
    pattern: str,
    hits: Mapping[str, list[_Hit]],
    salts: Mapping[str, bytes],
    default_salt: bytes,
) -> pl.Series:
    """Rewrite, in place, the rows holding a hit; return their indices.

    Each affected row is cut at the matches of ``pattern`` and put back together with every
    match replaced by its rendering (itself when harmless). Working on the match positions,
    rather than searching the candidate strings again, keeps each replacement exactly where
    the maximal run was found.
    """
    hit_candidates = pl.Series(list(hits), dtype=pl.String).implode()
    hit_matches = candidates.filter(pl.col("candidate").is_in(hit_candidates))
    rows = hit_matches["row"].unique(maintain_order=True)
    if rows.len() == 0:
        return rows
    pairs = hit_matches.select("salt_key", "candidate").unique()
    renderings = _renderings(pairs, hits, salts, default_salt)
    matches = (
        candidates.filter(pl.col("row").is_in(rows.implode()))
        .with_columns(order=pl.int_range(pl.len()).over("row") * 2 + 1)
        .join(renderings, on=["salt_key", "candidate"], how="left", nulls_equal=True)
        .select("row", piece=pl.coalesce("rendering", "candidate"), order="order")
    )
    subset = texts.gather(rows)
    cut = _unused_character(subset)
    gaps = (
        pl.DataFrame({"row": rows, "piece": subset.str.replace_all(pattern, cut).str.split(cut)})
        .explode("piece")
        .with_columns(order=pl.int_range(pl.len()).over("row") * 2)
    )
    rebuilt = (
        pl.concat([gaps, matches])
        .group_by("row")
        .agg(pl.col("piece").sort_by("order").str.join(""))
    )
    texts.scatter(rebuilt["row"], rebuilt["piece"])
    return rows


def _renderings(
    pairs: pl.DataFrame, hits: Mapping[str, list[_Hit]], salts: Mapping[str, bytes], default_salt: bytes
) -> pl.DataFrame:
    """(salt_key, candidate, rendering) for the unique (salt, candidate) pairs with a hit."""
    rendered = [
        _render(candidate, hits[candidate], default_salt if salt_key is None else salts[salt_key])
        for salt_key, candidate in pairs.iter_rows()
    ]
    return pairs.with_columns(rendering=pl.Series(rendered, dtype=pl.String))


def _unused_character(texts: pl.Series) -> str:
    """A character absent from ``texts``, to cut them at the matches (NUL nearly always)."""
    for char in _CUT_CHARACTERS:
        if not texts.str.contains(char, literal=True).any():
            return char
    raise ValueError("every cut character occurs in the texts")  # needs all eight in one batch
