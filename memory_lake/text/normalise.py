"""Normalisation: the form in which two contents count as the same text (DESIGN "Ingest": ids and
content hashes are computed on it)."""

from __future__ import annotations

import polars as pl


def normalise_content(expr: pl.Expr) -> pl.Expr:
    """Content as compared for identity: NFKC (full/half width), lower case, single spaces."""
    return expr.str.normalize("NFKC").str.to_lowercase().str.replace_all(r"\s+", " ").str.strip_chars()
