"""JSON that the text replacements broke, rebuilt from its parsed original (rare rows).

Inside a JSON string a placeholder never breaks the line. Only a replacement that lands on a bare
value (``{"phone":13812345678}``, ``{"password":12345}``) can, and such a row is re-serialised:
every key, string and integer of its parsed original is redacted by the same rules, a changed
integer becomes a placeholder string, and everything under a password key becomes ``[SECRET]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import polars as pl

from .patterns import _BARE_PLACEHOLDER, _PASSWORD_KEY
from .placeholders import SECRET_PLACEHOLDER


def _repair_broken_json(
    original: pl.Series,
    out: pl.Series,
    salt_keys: pl.Series,
    touched: pl.Series,
    salts: Mapping[str, bytes],
    default_salt: bytes,
    redact_series: Callable[..., pl.Series],
) -> None:
    """Re-serialise rows that were valid JSON but are not after the text replacements.

    `redact_series` is `apply.redact_series`, passed in by its caller (apply imports this module,
    so this module does not import apply).

    This happens only when a replacement hit a bare value (a number, or an unquoted value
    under a password key). The row is rebuilt from its parsed original: every string and
    integer is redacted by the same rules, and a changed integer becomes a placeholder string.
    """
    if touched.len() == 0:
        return
    # Inside a JSON string a placeholder never breaks the line; only a bare one (after ":",
    # "[" or ",") can, so only those rows pay for the JSON checks.
    touched = touched.filter(out.gather(touched).str.contains(_BARE_PLACEHOLDER))
    if touched.len() == 0:
        return
    # Only objects and arrays: a bare JSON scalar line ("13812345678") is plain text here, and
    # treating it as a document would redact it to itself forever. Parsed here, not by Polars,
    # whose reader takes no integer beyond 64 bits: {"secret": 1000…0} (400 digits) was valid JSON
    # that its redaction broke and nothing rebuilt (quarantined as bad JSON).
    touched = touched.filter(original.gather(touched).str.contains(r"^\s*[\[{]"))
    parsed = [_parse_json(text) for text in original.gather(touched).to_list()]
    broken = [doc is not _UNPARSABLE and _parse_json(text) is _UNPARSABLE
              for doc, text in zip(parsed, out.gather(touched).to_list())]
    rows = touched.filter(pl.Series(broken, dtype=pl.Boolean))
    if rows.len() == 0:
        return
    docs = [doc for doc, bad in zip(parsed, broken) if bad]
    row_salt_keys = salt_keys.gather(rows).to_list()
    leaves: list[str] = []
    leaf_salt_keys: list[str | None] = []
    for doc, salt_key in zip(docs, row_salt_keys):
        before_count = len(leaves)
        _collect_leaves(doc, leaves)
        leaf_salt_keys.extend([salt_key] * (len(leaves) - before_count))
    redacted = iter(
        redact_series(
            pl.Series(leaves, dtype=pl.String),
            pl.Series(leaf_salt_keys, dtype=pl.String),
            salts,
            default_salt,
        ).to_list()
    )
    rebuilt = [
        json.dumps(_rebuild(doc, redacted), ensure_ascii=False, separators=(",", ":"))
        for doc in docs
    ]
    out.scatter(rows, rebuilt)


_UNPARSABLE = object()


def _parse_json(text: str) -> Any:
    """`text` parsed as JSON, or _UNPARSABLE (NaN and Infinity, which Python reads, are not JSON)."""
    try:
        return json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return _UNPARSABLE


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _is_password_key(key: str) -> bool:
    return _PASSWORD_KEY.fullmatch(key) is not None


def _collect_leaves(node: Any, leaves: list[str]) -> None:
    """Strings and integers (as text) to redact, in the order _rebuild consumes them."""
    if isinstance(node, dict):
        for key, value in node.items():
            leaves.append(key)
            if not _is_password_key(key):
                _collect_leaves(value, leaves)
    elif isinstance(node, list):
        for item in node:
            _collect_leaves(item, leaves)
    elif isinstance(node, str):
        leaves.append(node)
    elif isinstance(node, int) and not isinstance(node, bool):
        leaves.append(str(node))


def _rebuild(node: Any, redacted: Iterator[str]) -> Any:
    if isinstance(node, dict):
        rebuilt = {}
        for key, value in node.items():
            new_key = next(redacted)
            rebuilt[new_key] = _secret_value(value) if _is_password_key(key) else _rebuild(value, redacted)
        return rebuilt
    if isinstance(node, list):
        return [_rebuild(item, redacted) for item in node]
    if isinstance(node, str):
        return next(redacted)
    if isinstance(node, int) and not isinstance(node, bool):
        text = next(redacted)
        return node if text == str(node) else text
    return node


def _secret_value(node: Any) -> Any:
    """Everything under a password key goes, except structure, null, booleans and ""."""
    if isinstance(node, dict):
        return {key: _secret_value(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_secret_value(item) for item in node]
    if node is None or isinstance(node, bool) or node == "":
        return node
    return SECRET_PLACEHOLDER
