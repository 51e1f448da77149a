"""Compression (package docstring, *compression*): source tokens over summary tokens, counted with
the embedding model's tokenizer."""

from __future__ import annotations


def _compression(texts: list[str], summary_markdown: str) -> tuple[float, int, int]:
    """(compression, source tokens, summary tokens); 0.0 for an empty summary."""
    from ...text import count_tokens, count_tokens_many

    source_tokens = sum(count_tokens_many(texts)) if texts else 0
    summary_tokens = count_tokens(summary_markdown) if summary_markdown.strip() else 0
    compression = source_tokens / summary_tokens if summary_tokens else 0.0
    return compression, source_tokens, summary_tokens
