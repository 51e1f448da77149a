"""Normalisation: the form in which two contents count as the same text (DESIGN "Ingest": ids and
content hashes are computed on it), and the plain form every text is kept in (issue 37.2): no
invisible characters, Unicode spaces and hyphens folded. Redaction applies the plain form before
its detectors; the token counter counts the invisible characters the tokenizer would drop."""

from __future__ import annotations

import re

import polars as pl


def normalise_content(expr: pl.Expr) -> pl.Expr:
    """Content as compared for identity: NFKC (full/half width), lower case, single spaces."""
    return _folded(expr.str.normalize("NFKC"))


def normalise_contents(texts: pl.Series) -> pl.Series:
    """``normalise_content`` of a whole Series, with NFKC applied only to the texts that are not
    plain ASCII: it changes no ASCII text, and it is most of the cost (ingest computes every
    record's id and hash from this form)."""
    wide = (texts.str.len_bytes() != texts.str.len_chars()).fill_null(False).arg_true()
    if wide.len():
        texts = texts.clone()
        texts.scatter(wide, texts.gather(wide).str.normalize("NFKC"))
    return pl.select(_folded(pl.lit(texts))).to_series().alias(texts.name)


def _folded(expr: pl.Expr) -> pl.Expr:
    return expr.str.to_lowercase().str.replace_all(r"\s+", " ").str.strip_chars()


# Issue 37.2: characters that hide a value from every detector while a reader (or a model) reads it
# whole. Invisible format characters go (soft hyphen, zero-width space / joiners, word joiner, bidi
# controls, the byte-order mark, Unicode tag characters, which can also carry hidden instructions);
# no-break and other fixed-width spaces become a space (not U+3000, Chinese text's own); hyphens that
# look like "-" (non-breaking, figure, minus, small and full-width) become "-".
INVISIBLE = "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\U000e0000-\U000e007f]"
_SPACES = "[\u00a0\u2000-\u200a\u202f\u205f]"
_HYPHENS = "[\u2010-\u2012\u2212\ufe63\uff0d]"
_ANY_FOLDED = "|".join((INVISIBLE, _SPACES, _HYPHENS))


def plain_text(texts: pl.Series) -> pl.Series:
    """`texts` as every detector reads them and as they are kept: invisible characters removed,
    Unicode spaces and hyphens folded (see above). Text without any of them is returned as it is."""
    if not beyond_ascii(texts).str.contains(_ANY_FOLDED).any():  # the common case: nothing to fold
        return texts
    return (texts.str.replace_all(INVISIBLE, "").str.replace_all(_SPACES, " ")
            .str.replace_all(_HYPHENS, "-"))


def beyond_ascii(texts: pl.Series) -> pl.Series:
    """The texts that hold a character beyond ASCII (no nulls): only they can hold an invisible
    character, a Unicode space or hyphen, all of which lie beyond U+007F. Telling them apart costs
    a tenth of a regex scan for those characters (a byte count against a character count)."""
    return texts.filter((texts.str.len_bytes() != texts.str.len_chars()).fill_null(False))


INVISIBLE_RE, _SPACES_RE, _HYPHENS_RE = re.compile(INVISIBLE), re.compile(_SPACES), re.compile(_HYPHENS)


def plain_one(text: str) -> str:
    """`plain_text` of one string."""
    return _HYPHENS_RE.sub("-", _SPACES_RE.sub(" ", INVISIBLE_RE.sub("", text)))
