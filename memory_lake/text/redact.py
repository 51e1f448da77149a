r"""PII and secret redaction, applied to every text line before anything is written to disk.

DESIGN: "No raw PII anywhere on disk". The ingest hands each line (usually a minified JSON
object, sometimes broken text) to :func:`redact_series` before it parses or stores it, so the
rules cover every field, including unknown extra fields and keys such as ``"password"``.

What is replaced
----------------
PII becomes a typed placeholder ``[KIND:xxxxxxxx]``, where ``xxxxxxxx`` is the first 8 hex
characters of HMAC-SHA256(tenant salt, normalised value). The same value of one tenant always
gets the same placeholder (joins and de-duplication still work); other tenants get another one.

* PHONE - Chinese mobiles ``1[3-9]`` + 9 digits, bare or grouped 3-4-4 by spaces/dashes,
  optionally behind ``+86`` / ``86`` (normalised to the 11 national digits, so every spelling
  of one number hashes alike); international numbers ``+`` + 8..17 digits grouped by spaces,
  dashes or parentheses (normalised to ``+`` and the digits); landlines with their area code:
  US 3-3-4 (``(415) 555-0132``, ``1-415-555-0132``) and Chinese ``0`` + area code + 7-8 digits
  (``010-62345678``, ``(010) 6234 5678``), normalised to their international spelling.
* EMAIL - ``local@domain.tld``, also with a full-width ``＠`` or spelt out for people
  (``alice at example dot com``, ``alice [at] example [dot] org``, with a common top-level
  domain); normalised to ``local@domain.tld`` in lower case.
* ID_CN - 18-character resident ID whose ISO 7064 MOD 11-2 check character is right and whose
  birth date (characters 7-14) is a real date from 1900-2099 (normalised to upper case).
* CARD - 13-19 digits, bare or in groups of 4 (or Amex 4-6-5), that pass the Luhn check and
  start like a payment card (3-6, or 2221-2720); normalised to the digits.
* IP - IPv4 dotted quads (not versions: ``v1.2.3.4``, four single digits, leading zeros, a fifth
  part) and IPv6 addresses with at least three groups (normalised to the compressed form).

Secrets are dropped without a hash: ``sk-`` keys, AWS key ids (``AKIA``/``ASIA``) and secret
access keys (40 mixed-case base64 characters), GitHub, Slack and Stripe tokens (by prefix),
JWTs, bearer tokens (the word ``Bearer`` is kept), PEM private key blocks, and the values of
labels and JSON keys for passwords (``password``/``passwd``/``pwd``/``pass``/``密码``) and for
keys, tokens and secrets (``api_key``, ``access_token``, ``client_secret`` ...; the label and
separator are kept) all become ``[SECRET]``. A free-text value runs to the end of its clause.

A value hidden behind JSON ``\uXXXX`` escapes is found by redacting the row once more with the
escapes of printable characters decoded. A tenant name is itself redacted (``redact_records``),
with the lake-wide salt, so that a tenant named by an e-mail address has one stable placeholder
name everywhere.

Digit runs are classified as maximal runs first (ID, then card, then phone), then split on their
separators, so the 11 digits inside an 18-digit number never count as a phone, while
``13812345678 13912345678`` yields two phones. Runs that pass no check (dates, times, amounts,
versions, order numbers, timestamps) are left alone.

How it stays fast
-----------------
Everything per row runs as Polars (Rust regex) operations on the whole Series: cheap prefilters
select the rows that can hold a match, candidates are extracted, only the unique candidates are
classified and hashed in Python (once per salt), and the affected rows are cut at the matches
and joined again with the placeholders. Redaction is idempotent: placeholders never match again.

JSON stays JSON: placeholders hold no quotes or backslashes, secret values end at ``"``,
``,``, ``}`` or a backslash, and a JSON escape in front of a value (the ``\n`` of
``"line\n13812345678"``) is kept whole. When a replacement lands on a bare JSON value (for
example ``{"phone":13812345678}`` or ``{"password":12345}``), the rare row is re-serialised from
its parsed original with the value as a placeholder string.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import polars as pl

PLACEHOLDER_KINDS = ("PHONE", "EMAIL", "ID_CN", "CARD", "IP")
SECRET_PLACEHOLDER = "[SECRET]"
HASH_HEX_CHARS = 8

# ---------------------------------------------------------------- Rust-regex patterns (Polars)
# Polars uses the Rust regex crate: no look-around and no backreferences. ``(?-u:\b)`` is an
# ASCII word boundary, so a CJK character next to a key still counts as a boundary.
_ASCII_BOUNDARY = r"(?-u:\b)"
# Where a key, token or number may start: a word boundary, or right after a JSON escape such as
# the \n in "line one\n13812345678" or \u001f (its letters would otherwise glue the value to a
# word). Patterns keep this edge in their first group, so the escape survives the replacement.
_JSON_ESCAPE = r"\\(?:[bfnrt]|u[0-9A-Fa-f]{4})"
_LEFT_EDGE = r"(?:" + _ASCII_BOUNDARY + "|" + _JSON_ESCAPE + ")"

# One cheap scan picks the rows worth running the secret patterns on: a trigger word, or a run
# as long as an AWS secret access key.
_SECRET_TRIGGER = (
    r"(?i)sk-|sk_|rk_|akia|asia|bearer|pass|pwd|密码|口令|gh[pousr]_|github_pat_|xox|xapp-|eyj|private key"
    r"|token|secret|api[_ -]?key|[A-Za-z0-9/+]{40}"
)
# The prefilter of one short text: what no rule can match without (see redact_text). Spelt
# e-mail addresses need "dot", IPv6 addresses may have no digit ("fe80::abcd:ef").
_MAY_HOLD_PII = re.compile(r"[0-9０-９@＠:]|dot|" + _SECRET_TRIGGER[4:], re.IGNORECASE)

# PEM private keys go whole, markers included; in JSON text their line breaks are "\n" escapes.
# A key cut off before its END line goes up to the end of the text or string.
_PEM_BODY = r"(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\[nrt]|\\u000[9aAdD])"
_PEM_BEGIN = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
_PEM_KEY = _PEM_BEGIN + _PEM_BODY + r"*?-----END [A-Z0-9 ]*PRIVATE KEY-----"
_PEM_TRUNCATED = _PEM_BEGIN + _PEM_BODY + "*"
_OPENAI_KEY = r"(" + _LEFT_EDGE + r")sk-[A-Za-z0-9_-]{16,}"
_AWS_KEY_ID = r"(" + _LEFT_EDGE + r")(?:AKIA|ASIA)[A-Z0-9]{16}" + _ASCII_BOUNDARY
# Tokens whose prefix says what they are: GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_),
# Slack (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxo-, xapp-), Stripe secret and restricted keys.
_PREFIXED_TOKEN = (
    r"(" + _LEFT_EDGE + r")(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,})"
)
# A JSON Web Token: base64url header and payload, both JSON objects ("eyJ" is '{"'), and a signature.
_JWT = r"(" + _LEFT_EDGE + r")eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"
# RFC 6750 token characters. A token must hold a non-letter or be long, so that prose such as
# "the bearer of this letter" survives; "[" is not a token character, so "[SECRET]" is final.
_BEARER_TOKEN = (
    r"(?i)(" + _LEFT_EDGE
    + r"bearer\s+)(?:[A-Za-z]*[0-9._~+/-][A-Za-z0-9._~+/-]*|[A-Za-z]{20,})=*"
)

# Labels whose value is a secret: passwords (keys such as db_password or passwordHash count too),
# and keys, tokens and secrets (api_key, apiKey, access_token, client_secret, private_key ...).
# Those end with the word, so "max_tokens", "tokenizer" or "secret_santa" are no labels. A bare
# "pass" must be a whole word.
_PASSWORD_WORDS = (
    r"(?:[A-Za-z0-9_-]*(?:password|passwd|pwd)[A-Za-z0-9_-]*"
    r"|[A-Za-z0-9_-]*(?:token|secret|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key))"
)
_PASSWORD_LABEL = r"(?:" + _PASSWORD_WORDS + r"|pass|密码|口令)"
# A JSON string value under a password key goes whole, spaces and escapes included.
_PASSWORD_JSON_VALUE = r'(?i)("' + _PASSWORD_LABEL + r'"\s*:\s*")(?:[^"\\]|\\.)+'
# The same inside JSON that was itself stored as a string (\"password\":\"...\").
_PASSWORD_ESCAPED_JSON_VALUE = (
    r'(?i)(\\"' + _PASSWORD_LABEL + r'\\"\s*:\s*\\")(?:[^"\\]|\\[^"])+'
)
# Free text ("password: x", "pwd=x", "密码：x", "API key: x") and unquoted JSON values. The value
# runs to the end of its clause, so a passphrase ("password: correct horse battery staple") goes
# whole: it stops at the characters that could end a JSON string or token, at CJK punctuation,
# at a full stop followed by a space, and at a space followed by anything but an ASCII word
# (Chinese text, an opening bracket). It cannot start with "]" or ":", which follow a string's
# closing quote (as in ["密码："]), so a quote taken for an opening one never exposes JSON
# structure. "[SECRET]" is tried first so that a redacted value stays as it is.
_SECRET_VALUE_CHAR = r"""[^\s"',}\\，。；、！？）.]"""
_SECRET_VALUE_FIRST_CHAR = r"""[^\s"',}\]:\\，。；、！？）]"""
_SECRET_NEXT_WORD_CHAR = r"[A-Za-z0-9!#$%&*+/<=>?@^_`|~-]"
_SECRET_TEXT_VALUE = (
    _SECRET_VALUE_FIRST_CHAR
    + r"(?:" + _SECRET_VALUE_CHAR + r"|\.+" + _SECRET_VALUE_CHAR + r"|[ \t]+" + _SECRET_NEXT_WORD_CHAR + r")*"
)
_PASSWORD_TEXT_VALUE = (
    r"(?i)((?:" + _PASSWORD_WORDS + r"|api key|access key|secret key|" + _LEFT_EDGE + r"pass|密码|口令)"
    + r"""(?:\\?")?\s*[:=：]\s*(?:\\?["'])?)"""
    + r"(?:\[SECRET\]|" + _SECRET_TEXT_VALUE + ")"
)

# (pattern, replacement) in the order they run; replacements never contain quotes.
_SECRET_RULES: tuple[tuple[str, str], ...] = (
    (_PEM_KEY, SECRET_PLACEHOLDER),
    (_PEM_TRUNCATED, SECRET_PLACEHOLDER),
    (_PREFIXED_TOKEN, "${1}" + SECRET_PLACEHOLDER),
    (_OPENAI_KEY, "${1}" + SECRET_PLACEHOLDER),
    (_AWS_KEY_ID, "${1}" + SECRET_PLACEHOLDER),
    (_JWT, "${1}" + SECRET_PLACEHOLDER),
    (_BEARER_TOKEN, "${1}" + SECRET_PLACEHOLDER),
    (_PASSWORD_JSON_VALUE, "${1}" + SECRET_PLACEHOLDER),
    (_PASSWORD_ESCAPED_JSON_VALUE, "${1}" + SECRET_PLACEHOLDER),
    (_PASSWORD_TEXT_VALUE, "${1}" + SECRET_PLACEHOLDER),
)
# An AWS secret access key has no prefix: a run of exactly 40 base64 characters mixing upper
# case, lower case and digits (checked in Python, see _aws_secret_hit); hex digests (lower case
# only), longer base64 and paths ("/" at an end, or "//") are not.
_AWS_SECRET_RUN = r"(?:" + _JSON_ESCAPE + r")?[A-Za-z0-9/+]{40,}"
_AWS_SECRET_CHARS = 40

# The optional JSON escape keeps the "n" of "\n" out of the local part (see _LEFT_EDGE). The
# full-width "＠" counts as "@". Addresses spelt out for people ("alice at example dot com",
# "alice [at] example [dot] org") count when they end in a common top-level domain; without that
# "look at this dot matrix" would be an address.
_SPELT_AT = r"(?:\s+at\s+|\s*[\[(]at[\])]\s*)"
_SPELT_DOT = r"(?:\s+dot\s+|\s*[\[(]dot[\])]\s*)"
_SPELT_TLD = r"(?:com|org|net|edu|gov|mil|int|io|ai|co|cn|uk|de|fr|jp|in|us|ca|au|ru|info|biz|me|dev|app)"
_EMAIL = (
    r"(?:" + _JSON_ESCAPE + r")?(?:[A-Za-z0-9._%+-]+[@＠](?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}"
    + r"|(?i:[A-Za-z0-9._%+-]+" + _SPELT_AT + r"(?:[A-Za-z0-9-]+" + _SPELT_DOT + r")+" + _SPELT_TLD + r")"
    + _ASCII_BOUNDARY + ")"
)
_EMAIL_PREFILTER = r"(?i)[@＠]|dot"
_SPELT_AT_WORD = re.compile(r"(?i)" + _SPELT_AT)
_SPELT_DOT_WORD = re.compile(r"(?i)" + _SPELT_DOT)

# IP addresses: IPv4 dotted quads and IPv6 (checked and normalised with `ipaddress`). A dotted
# quad behind "v" or "version" is a version, and so is one whose four parts are single digits
# ("1.2.3.4"), one with a leading zero ("2026.01.02.03") or with a fifth part.
_VERSION_PREFIX = r"(?i:" + _ASCII_BOUNDARY + r"(?:version|ver|v)[ :]?)"
_IPV4_RUN = (
    r"(?:" + _VERSION_PREFIX + "|" + _LEFT_EDGE + r")[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:\.[0-9]+)*" + _ASCII_BOUNDARY
)
_IPV6_RUN = r"(?:" + _JSON_ESCAPE + r")?(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}"
_IP_RUN = _IPV4_RUN + "|" + _IPV6_RUN
_IP_PREFILTER = r"[0-9]\.[0-9]|::|[0-9A-Fa-f]:[0-9A-Fa-f]"
_IPV6_MIN_GROUPS = 3  # "d::" of "std::vector" and "::1" are no one's address

# Digit runs that could hold PII, joined by single separators: "+" and at least 8 digits
# (international phone), at least 11 digits, or a landline of 10-12 digits grouped with an area
# code, possibly in parentheses ("(415) 555-0132", "(010) 6234 5678"). Decimal parts are captured too (and then
# rejected) so that the fraction of a float such as 0.4111111111111111 is never taken for a card.
# A trailing X belongs to a resident ID. ASCII runs glued to letters are parts of hex ids and
# hashes (trace ids, commit shas), not PII; CJK text around a number is still a boundary. Runs of
# full-width digits (１３８...) have their own branch, as the ASCII boundary does not see them.
_INTL_SEPARATOR = r"(?:[ -]|[ -]?\(|\)[ -]?)"
_INTL_RUN = r"\+[0-9](?:" + _INTL_SEPARATOR + r"?[0-9]){7,}" + _ASCII_BOUNDARY
_ASCII_RUN = (
    _LEFT_EDGE + r"(?:[0-9]+\.)*[0-9](?:[ -]?[0-9]){10,}(?:[Xx]|(?:\.[0-9]+)+)?" + _ASCII_BOUNDARY
)
_LOCAL_RUN = r"(?:\(|" + _LEFT_EDGE + r")[0-9]{2,4}\)?[ -]?[0-9]{3,4}[ -]?[0-9]{4}" + _ASCII_BOUNDARY
_WIDE_DIGIT = r"[\d&&[^0-9]]"
_WIDE_RUN = _WIDE_DIGIT + r"(?:[ -]?" + _WIDE_DIGIT + r"){10,}[Xx]?"
_DIGIT_RUN = "|".join((_INTL_RUN, _ASCII_RUN, _LOCAL_RUN, _WIDE_RUN))
# Runs of bare ASCII digits that cannot be PII (timestamps, long order numbers, floats) are
# dropped here, vectorised, before the per-candidate checks in Python. Anything with a
# separator, "+", X or non-ASCII digit goes on.
_DIGIT_RUN_WORTH_CHECKING = (
    r"[^0-9.]|^(?:1[3-9][0-9]{9}|861[3-9][0-9]{9}|[2-6][0-9]{12,18}|[0-9]{17}[0-9Xx]|0[1-9][0-9]{9,10})$"
)

# A placeholder where a JSON value starts: the only way a replacement can break a JSON line.
_BARE_PLACEHOLDER = r"[:\[,]\s*-?\[(?:PHONE|EMAIL|ID_CN|CARD|IP|SECRET)[:\]]"

# ---------------------------------------------------------------- Python-side rules
_MAX_GROUPS_PER_VALUE = 8  # more groups than any phone/card/ID spelling has
_GROUP = re.compile(r"[^ ()-]+")
_CN_MOBILE = re.compile(r"1[3-9]\d{9}")
_CN_COUNTRY_CODE = "86"
_INTL_DIGITS = range(8, 18)  # country code (1-3) + 7..14 digits
_MAX_COUNTRY_CODE_DIGITS = 3
# Landlines with their area code: US/NANP 3-3-4 (area and exchange start with 2-9, an optional
# leading 1), China 0 + a 2-digit (10, 2x) or 3-digit area code + a 7-8 digit local number.
_US_GROUPINGS = ((3, 3, 4), (1, 3, 3, 4))
_US_NUMBER = re.compile(r"1?([2-9]\d{2}[2-9]\d{6})")
_CN_LANDLINE = re.compile(r"0(?:10|2\d|[3-9]\d{2})[2-9]\d{6,7}")
_CN_AREA = re.compile(r"0(?:10|2\d|[3-9]\d{2})")
_CARD_DIGITS = range(13, 20)
_CARD_GROUPINGS_AMEX = ((4, 6, 5), (4, 6, 4))
_ID_GROUPING = (6, 8, 4)
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK_CHARS = "10X98765432"
_ID_BIRTH_YEARS = range(1900, 2100)
_JSON_ESCAPE_PREFIX = re.compile(_JSON_ESCAPE)
_UNICODE_ESCAPE = r"\\u[0-9A-Fa-f]{4}"
_CUT_CHARACTERS = ("\x00", "\x01", "\x02", "\x03", "\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3")
_PASSWORD_KEY = re.compile("(?i)" + _PASSWORD_LABEL)  # the JSON keys whose whole value is secret


@dataclass(frozen=True)
class _Hit:
    """One PII value inside a candidate string: [start, end) and its normalised form."""

    start: int
    end: int
    kind: str
    normalised: str


# ================================================================ public API


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
    tenants = tenants.cast(pl.String)
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
    if text is None or not _MAY_HOLD_PII.search(text):
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


# ================================================================ stages (vectorised)


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


def _redact_plain(
    original: pl.Series, salt_keys: pl.Series, salts: Mapping[str, bytes], default_salt: bytes
) -> pl.Series:
    """Every rule over ``original`` as written (no escape decoding); a redacted copy."""
    out = original.clone()
    touched = [_redact_secrets(out)]
    for pattern, classify, prefilter, worth_checking in _CANDIDATE_STAGES:
        touched.append(_redact_candidates(out, salt_keys, salts, default_salt, pattern, classify,
                                          prefilter=prefilter, worth_checking=worth_checking))
    _repair_broken_json(original, out, salt_keys, pl.concat(touched).unique(), salts, default_salt)
    return out


def _redact_candidates(
    texts: pl.Series,
    salt_keys: pl.Series,
    salts: Mapping[str, bytes],
    default_salt: bytes,
    pattern: str,
    classify: Callable[[str], list[_Hit]],
    *,
    prefilter: str | None,
    worth_checking: str | None,
) -> pl.Series:
    """Replace, in place, the values ``classify`` finds in the matches of ``pattern``; return the
    indices of the rows changed. Only unique candidates reach Python; ``worth_checking`` drops
    hopeless ones before that, vectorised."""
    candidates = _extract_candidates(texts, salt_keys, pattern, prefilter=prefilter)
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
    texts: pl.Series, salt_keys: pl.Series, pattern: str, *, prefilter: str | None = None
) -> pl.DataFrame:
    """One (row, salt_key, candidate) per match of ``pattern``, in text order within a row.

    ``prefilter`` is a simple pattern every row with a match holds: a far cheaper scan than the regex.
    """
    frame = pl.DataFrame({"text": texts, "salt_key": salt_keys}).lazy().with_row_index("row")
    if prefilter is not None:
        frame = frame.filter(pl.col("text").str.contains(prefilter))
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


# ================================================================ classification (unique candidates)


def _email_hits(candidate: str) -> list[_Hit]:
    start = _json_escape_length(candidate)
    address = candidate[start:].replace("＠", "@")
    if "@" not in address:  # spelt out: "alice at example dot com"
        address = _SPELT_DOT_WORD.sub(".", _SPELT_AT_WORD.sub("@", address, count=1))
    return [_Hit(start, len(candidate), "EMAIL", address.lower())]


def _ip_hits(candidate: str) -> list[_Hit]:
    """An IPv4 or IPv6 address, normalised (IPv6 compressed); versions and times are not."""
    start = _json_escape_length(candidate)
    text = candidate[start:]
    if "." in text:
        parts = text.split(".")
        if (len(parts) != 4 or not text[0].isdigit() or all(len(p) == 1 for p in parts)
                or any(len(p) > 1 and p[0] == "0" for p in parts) or any(int(p) > 255 for p in parts)):
            return []
        return [_Hit(start, len(candidate), "IP", text)]
    if sum(1 for group in text.split(":") if group) < _IPV6_MIN_GROUPS:
        return []
    if "::" not in text and text.count(":") != 7:
        return []  # times (10:30:00) and MAC addresses (00:1a:2b:3c:4d:5e)
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        return []
    return [_Hit(start, len(candidate), "IP", address.compressed)]


def _aws_secret_hits(candidate: str) -> list[_Hit]:
    start = _json_escape_length(candidate)
    text = candidate[start:]
    if (len(text) != _AWS_SECRET_CHARS or text[0] == "/" or text[-1] == "/" or "//" in text
            or not any(c.isupper() for c in text) or not any(c.islower() for c in text)
            or not any(c.isdigit() for c in text)):
        return []
    return [_Hit(start, len(candidate), "SECRET", "")]


def _json_escape_length(candidate: str) -> int:
    """Length of the JSON escape (\\n, \\u001f) that ``candidate`` starts with, kept as text."""
    escape = _JSON_ESCAPE_PREFIX.match(candidate)
    return escape.end() if escape else 0


def _digit_run_hits(run: str) -> list[_Hit]:
    """PII values inside one digit run: the longest valid span from the left, repeatedly."""
    skip = _json_escape_length(run)
    if skip:
        return [_Hit(h.start + skip, h.end + skip, h.kind, h.normalised) for h in _digit_run_hits(run[skip:])]
    if run.isdecimal():  # most runs are bare digits: one group, nothing to split
        classified = _classify_bare_digits(_ascii_digits(run))
        return [] if classified is None else [_Hit(0, len(run), *classified)]
    has_plus = run.startswith("+")
    groups = [(m.start(), m.end()) for m in _GROUP.finditer(run, 1 if has_plus else 0)]
    found: list[_Hit] = []
    i = 0
    while i < len(groups):
        last = min(len(groups), i + _MAX_GROUPS_PER_VALUE) - 1
        for j in range(last, i - 1, -1):
            parts = [run[start:end] for start, end in groups[i:j + 1]]
            classified = _classify_groups(parts, international=has_plus and i == 0)
            if classified is not None:
                kind, normalised, keeps_trailing_x = classified
                start = 0 if has_plus and i == 0 else groups[i][0]
                if start and run[start - 1] == "(":
                    start -= 1  # "(415) 555-0132": the parenthesis goes with the area code
                end = groups[j][1] - (0 if keeps_trailing_x or not _ends_with_x(parts[-1]) else 1)
                found.append(_Hit(start, end, kind, normalised))
                i = j + 1
                break
        else:
            i += 1
    return found


def _classify_groups(parts: list[str], *, international: bool) -> tuple[str, str, bool] | None:
    """(kind, normalised, keeps_trailing_x) for groups that form one PII value, else None."""
    if any("." in part for part in parts):
        return None  # a decimal number, never PII
    raw = "".join(parts)
    sizes = tuple(len(part) for part in parts)
    if not international and _is_resident_id(raw) and sizes in ((18,), _ID_GROUPING):
        return "ID_CN", _ascii_digits(raw).upper(), True
    if _ends_with_x(raw):
        raw = raw[:-1]  # an X that is not an ID check character stays in the text
        sizes = sizes[:-1] + (sizes[-1] - 1,)
        if sizes[-1] == 0:
            return None
    if not raw.isdecimal():
        return None
    digits = _ascii_digits(raw)
    if international:
        return _classify_international(digits, sizes)
    if _is_card(digits) and _is_card_grouping(sizes):
        return "CARD", digits, False
    national = _cn_mobile_national(digits, sizes)
    if national is not None:
        return "PHONE", national, False
    landline = _landline(digits, sizes)
    if landline is not None:
        return "PHONE", landline, False
    return None


def _landline(digits: str, sizes: tuple[int, ...]) -> str | None:
    """A US or Chinese landline written with its area code, normalised as the international
    spelling is ("+14155550132", "+861062345678"), so both hash alike."""
    us = _US_NUMBER.fullmatch(digits)
    if us and sizes in _US_GROUPINGS and (len(sizes) == 3 or digits[0] == "1"):
        return "+1" + us.group(1)
    if _CN_LANDLINE.fullmatch(digits):
        area = _CN_AREA.match(digits).group()
        # "010-62345678", "0755 1234 5678", or bare: the area code is its own group
        if len(sizes) == 1 or (sizes[0] == len(area) and min(sizes[1:]) >= 3 and len(sizes) <= 3):
            return "+86" + digits[1:]
    return None


def _classify_bare_digits(digits: str) -> tuple[str, str] | None:
    """(kind, normalised) for one unseparated ASCII digit run, in the order ID, card, phone."""
    length = len(digits)
    if length == 18 and _is_resident_id(digits):
        return "ID_CN", digits
    if _is_card(digits):
        return "CARD", digits
    if length == 13 and digits.startswith(_CN_COUNTRY_CODE):
        digits = digits[2:]
    if len(digits) == 11 and _CN_MOBILE.fullmatch(digits):
        return "PHONE", digits
    if digits[0] == "0" and _CN_LANDLINE.fullmatch(digits):
        return "PHONE", "+86" + digits[1:]
    return None


def _classify_international(digits: str, sizes: tuple[int, ...]) -> tuple[str, str, bool] | None:
    if digits.startswith(_CN_COUNTRY_CODE) and _CN_MOBILE.fullmatch(digits[2:]):
        return "PHONE", digits[2:], False
    # A written-out number starts with its 1-3 digit country code ("+44 20 ..."); "+1500 2000"
    # is arithmetic, not a phone.
    if len(sizes) > 1 and sizes[0] > _MAX_COUNTRY_CODE_DIGITS:
        return None
    if len(digits) in _INTL_DIGITS and digits[0] != "0":
        return "PHONE", "+" + digits, False
    return None


def _cn_mobile_national(digits: str, sizes: tuple[int, ...]) -> str | None:
    """The 11 national digits of a Chinese mobile spelt with an optional 86 prefix."""
    if len(digits) == 13 and digits.startswith(_CN_COUNTRY_CODE) and sizes[0] in (2, 13):
        digits, sizes = digits[2:], (sizes[1:] if sizes[0] == 2 else (11,))
    if not _CN_MOBILE.fullmatch(digits):
        return None
    # 138-1234-5678, 138 12345678: groups of at least 3 (not "1 3812345678" by accident).
    if len(sizes) <= 3 and min(sizes) >= 3:
        return digits
    return None


def _is_resident_id(raw: str) -> bool:
    if len(raw) != 18 or not raw[:17].isdecimal() or not (raw[17].isdecimal() or raw[17] in "Xx"):
        return False
    body = _ascii_digits(raw[:17])
    check = _ID_CHECK_CHARS[sum(int(c) * w for c, w in zip(body, _ID_WEIGHTS)) % 11]
    return check == _ascii_digits(raw[17]).upper() and _is_birth_date(body[6:14])


def _is_birth_date(yyyymmdd: str) -> bool:
    # A real ID always holds a real birth date; most random 18-digit numbers do not.
    year, month, day = int(yyyymmdd[:4]), int(yyyymmdd[4:6]), int(yyyymmdd[6:])
    if year not in _ID_BIRTH_YEARS:
        return False
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _is_card(digits: str) -> bool:
    # Payment cards start with 3-6 or the 2221-2720 Mastercard range; this keeps timestamps
    # (1...) and date-prefixed order numbers (20...) out even when they happen to pass Luhn.
    if len(digits) not in _CARD_DIGITS:
        return False
    if not (digits[0] in "3456" or 2221 <= int(digits[:4]) <= 2720):
        return False
    return _luhn_ok(digits)


def _is_card_grouping(sizes: tuple[int, ...]) -> bool:
    if len(sizes) == 1:
        return True
    if sizes in _CARD_GROUPINGS_AMEX:
        return True
    return all(size == 4 for size in sizes[:-1]) and 1 <= sizes[-1] <= 4


def _luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _ends_with_x(text: str) -> bool:
    return text[-1:] in ("X", "x")


def _ascii_digits(text: str) -> str:
    # Rust's \d also matches full-width and other Unicode digits; hash them as ASCII.
    return text if text.isascii() else "".join(str(int(c)) if c.isdecimal() else c for c in text)


# ================================================================ placeholders


def _render(candidate: str, hits: Sequence[_Hit], salt: bytes) -> str:
    """``candidate`` with each hit replaced by its placeholder."""
    if len(hits) == 1 and hits[0].start == 0 and hits[0].end == len(candidate):
        return _placeholder(hits[0].kind, hits[0].normalised, salt)
    pieces: list[str] = []
    position = 0
    for hit in hits:
        pieces.append(candidate[position:hit.start])
        pieces.append(_placeholder(hit.kind, hit.normalised, salt))
        position = hit.end
    pieces.append(candidate[position:])
    return "".join(pieces)


def _placeholder(kind: str, normalised: str, salt: bytes) -> str:
    if kind == "SECRET":
        return SECRET_PLACEHOLDER  # secrets are dropped, never hashed
    digest = hmac.digest(salt, normalised.encode("utf-8"), hashlib.sha256)
    return f"[{kind}:{digest.hex()[:HASH_HEX_CHARS]}]"


# (pattern, classify, prefilter, worth_checking) of the stages after the pattern-only secrets,
# in the order they run: a later stage never sees what an earlier one replaced.
_CANDIDATE_STAGES = (
    (_AWS_SECRET_RUN, _aws_secret_hits, r"[A-Za-z0-9/+]{40}", None),
    (_EMAIL, _email_hits, _EMAIL_PREFILTER, None),
    (_IP_RUN, _ip_hits, _IP_PREFILTER, None),
    (_DIGIT_RUN, _digit_run_hits, None, _DIGIT_RUN_WORTH_CHECKING),
)


# ================================================================ JSON repair (rare rows)


def _repair_broken_json(
    original: pl.Series,
    out: pl.Series,
    salt_keys: pl.Series,
    touched: pl.Series,
    salts: Mapping[str, bytes],
    default_salt: bytes,
) -> None:
    """Re-serialise rows that were valid JSON but are not after the text replacements.

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
    before = original.gather(touched)
    after = out.gather(touched)
    # Only objects and arrays: a bare JSON scalar line ("13812345678") is plain text here, and
    # treating it as a document would redact it to itself forever.
    broken = (
        before.str.contains(r"^\s*[\[{]")
        & before.str.json_path_match("$").is_not_null()
        & after.str.json_path_match("$").is_null()
    )
    rows = touched.filter(broken)
    if rows.len() == 0:
        return
    parsed = [_parse_json(text) for text in original.gather(rows).to_list()]
    # Polars and Python may disagree on an exotic line; such a line keeps its text replacement.
    keep = [doc is not _UNPARSABLE for doc in parsed]
    rows = rows.filter(pl.Series(keep))
    docs = [doc for doc in parsed if doc is not _UNPARSABLE]
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
    try:
        return json.loads(text)
    except ValueError:
        return _UNPARSABLE


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
