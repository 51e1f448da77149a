"""Redaction applied: a Series of texts (``redact_series``), JSON records of many tenants with their
tenant names (``redact_records``), one string (``redact_text``), the PII test (``pii_mask``) and
the PII listing (``find_pii``).

One pass over the texts as written (``_redact_plain``): the pattern-only secrets, then the
candidate stages in order (AWS secret keys, e-mail addresses, IP addresses, digit runs), then
the repair of any JSON row a bare placeholder broke. Rows with ``\\uXXXX`` escapes get a second
pass with the escapes decoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

import polars as pl

from ..normalise import plain_one, plain_text  # noqa: F401 (re-exported by the package)
from .json_repair import _parse_json, _repair_broken_json
from .patterns import _AWS_SECRET_RUN, _DIGIT_RUN, _EMAIL, _IP_RUN, _MAY_HOLD_PII, _SECRET_RULES, _UNICODE_ESCAPE
from .placeholders import SECRET_PLACEHOLDER
from .stages import (_CANDIDATE_STAGES, _decode_escapes, _extract_candidates, _redact_candidates, _redact_secrets,
                     _replace_candidates, _rows_matching, _salt_keys)
from .validate import _aws_secret_hits, _digit_run_hits, _email_hits, _ip_hits


def redact_series(
    texts: pl.Series,
    tenants: pl.Series | None,
    salts: Mapping[str, bytes],
    default_salt: bytes,
) -> pl.Series:
    r"""Return ``texts`` with PII replaced by placeholders and secrets by ``[SECRET]``.

    ``tenants[i]`` selects the salt for ``texts[i]``; a null tenant, or one missing from
    ``salts``, uses ``default_salt``. Null texts stay null; order, length and name are kept.
    A value hidden behind JSON ``\uXXXX`` escapes (``\u0031\u0033\u0038...``) is found too: rows
    with such escapes are also redacted with the escapes decoded, and where that finds something
    the decoded, redacted text is the result.
    """
    if tenants is not None and tenants.len() != texts.len():
        raise ValueError(f"texts has {texts.len()} rows but tenants has {tenants.len()}")
    original = texts.cast(pl.String)
    if original.len() == 0 or original.null_count() == original.len():
        return original
    original = plain_text(original)
    salt_keys = _salt_keys(tenants, salts, original.len())
    out = _redact_plain(original, salt_keys, salts, default_salt)
    escaped = _rows_matching(original, _UNICODE_ESCAPE)
    if escaped.len():
        decoded = _decode_escapes(original.gather(escaped))
        redacted = _redact_plain(decoded, salt_keys.gather(escaped), salts, default_salt)
        found = (redacted != decoded).fill_null(False)
        out.scatter(escaped.filter(found), redacted.filter(found))
    return out


def redact_records(
    texts: pl.Series,
    tenants: pl.Series,
    salts_for: Callable[[Sequence[str]], Mapping[str, bytes]],
) -> pl.Series:
    """Redact JSON record lines of many tenants, tenant names included (ingest, event files).

    ``tenants[i]`` is the raw top-level ``tenant`` of ``texts[i]`` (null when it has none);
    ``salts_for(names)`` returns the salt of each tenant name plus the lake-wide one under
    ``""`` (``Lake.tenant_salts``). A tenant name that holds PII (``bob@example.com``) is itself
    replaced by its placeholder under the lake-wide salt (``[EMAIL:3f2a9c1d]``), in the record
    and as the key of its salt: every table and file then knows the tenant by that one stable
    name, and the other values of its records are hashed with its own salt as usual.
    """
    # folded as the record texts are, so that only a placeholder renames a tenant (a tenant of the
    # wrong type stays wrong, whatever invisible characters it holds)
    tenants = plain_text(tenants.cast(pl.String))
    lake_salt = salts_for([])[""]
    names = redact_series(tenants, None, {}, lake_salt)
    salts = salts_for(names.drop_nulls().unique().to_list())
    out = redact_series(texts, names, salts, salts[""])
    renamed = (names != tenants).fill_null(False)
    if renamed.any():
        _rename_tenants(out, tenants, names, renamed, salts)
    return out


def redact_text(text: str, salt: bytes) -> str:
    """Redact one string (a log line, a CLI value) with ``salt``; same rules as redact_series."""
    if text is None:
        return text
    text = plain_one(text)
    if not _MAY_HOLD_PII.search(text):
        return text  # every PII kind needs a digit, "@", ":" or "dot", every secret rule its trigger
    return redact_series(pl.Series([text], dtype=pl.String), None, {}, salt)[0]


def pii_mask(texts: pl.Series) -> pl.Series:
    """True where raw PII (validated) or an unredacted secret remains; False for null texts.

    Redaction is idempotent, so a text holds PII exactly when redacting it would change it;
    placeholders and ``[SECRET]`` therefore do not count.
    """
    texts = texts.cast(pl.String)
    redacted = redact_series(texts, None, {}, b"pii-mask")
    return (redacted != texts).fill_null(False).alias(texts.name)


def find_pii(text: str) -> list[tuple[str, str]]:
    """(kind, raw value) pairs in ``text``, kinds from PLACEHOLDER_KINDS plus "SECRET".

    In the order redaction meets them: secrets, e-mail addresses, IP addresses, digit runs.
    """
    found: list[tuple[str, str]] = []
    current = pl.Series([text], dtype=pl.String)
    for pattern, replacement in _SECRET_RULES:
        matches = current.str.extract_all(pattern)[0].to_list() or []
        kept_prefix = "${1}" if replacement.startswith("${1}") else ""
        for match in matches:
            prefix = pl.Series([match]).str.replace(pattern, kept_prefix)[0]
            value = match[len(prefix):]
            if value != SECRET_PLACEHOLDER:
                found.append(("SECRET", value))
        current = current.str.replace_all(pattern, replacement)
    for pattern, classify in ((_AWS_SECRET_RUN, _aws_secret_hits), (_EMAIL, _email_hits), (_IP_RUN, _ip_hits),
                              (_DIGIT_RUN, _digit_run_hits)):
        hits = {}
        for candidate in current.str.extract_all(pattern)[0].to_list() or []:
            hits[candidate] = classify(candidate)
            found.extend((hit.kind, candidate[hit.start:hit.end]) for hit in hits[candidate])
        hits = {candidate: value for candidate, value in hits.items() if value}
        if hits:
            candidates = _extract_candidates(current, pl.Series([None], dtype=pl.String), pattern)
            _replace_candidates(current, candidates, pattern, hits, {}, b"find")
    return found


def _redact_plain(
    original: pl.Series, salt_keys: pl.Series, salts: Mapping[str, bytes], default_salt: bytes
) -> pl.Series:
    """Every rule over ``original`` as written (no escape decoding); a redacted copy."""
    out = original.clone()
    triggered = _redact_secrets(out)
    touched = [triggered]
    for pattern, classify, prefilter, worth_checking, only_triggered in _CANDIDATE_STAGES:
        touched.append(_redact_candidates(out, salt_keys, salts, default_salt, pattern, classify,
                                          prefilter=prefilter, worth_checking=worth_checking,
                                          among=triggered if only_triggered else None))
    _repair_broken_json(original, out, salt_keys, pl.concat(touched).unique(), salts, default_salt, redact_series)
    return out


def _rename_tenants(out: pl.Series, tenants: pl.Series, names: pl.Series, renamed: pl.Series,
                    salts: Mapping[str, bytes]) -> None:
    """Put each renamed tenant's name into its records' top-level ``tenant`` value, in place.

    Redaction gave that value the tenant's own salt; it becomes the name under the lake-wide
    salt. One vectorised replacement per renamed tenant (there are few); a record where the
    first ``"tenant"`` key is not the top-level one is rebuilt from its JSON."""
    rows = pl.Series(range(out.len())).filter(renamed)
    before = out.gather(rows)
    pairs = pl.DataFrame({"tenant": tenants.filter(renamed), "name": names.filter(renamed)}).unique()
    for tenant, name in pairs.iter_rows():
        mine = rows.filter(tenants.gather(rows) == tenant)
        salted = redact_text(tenant, salts.get(name, salts[""]))
        literal = json.dumps(salted, ensure_ascii=False)
        pattern = r'("tenant"\s*:\s*)' + re.escape(literal)
        replacement = "${1}" + json.dumps(name, ensure_ascii=False).replace("$", "$$")
        out.scatter(mine, out.gather(mine).str.replace(pattern, replacement))
    wrong = (out.gather(rows).str.json_path_match("$.tenant") != names.gather(rows)).fill_null(False)
    for row, text, name in zip(rows.filter(wrong).to_list(), before.filter(wrong).to_list(),
                               names.gather(rows).filter(wrong).to_list()):
        doc = _parse_json(text)
        if isinstance(doc, dict):
            doc["tenant"] = name
            out[row] = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
