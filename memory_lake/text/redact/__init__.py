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

Where the parts live
--------------------
* ``placeholders`` - the kinds, ``[SECRET]``, the HMAC placeholder and the ``_Hit`` a rule finds.
* ``patterns`` - the regular expressions of every kind (Rust regex, run by Polars) and their prefilters.
* ``validate`` - the Python checks of unique candidates: check digits (ID, Luhn), phone shapes,
  IP and e-mail normalisation, AWS secret keys.
* ``stages`` - the vectorised stages: rows worth a look, candidates out, placeholders in.
* ``json_repair`` - rows whose JSON a bare placeholder broke, rebuilt from the parsed original.
* ``apply`` - ``redact_series``, ``redact_records``, ``redact_text``, ``pii_mask``, ``find_pii``.
"""

from __future__ import annotations

from .apply import find_pii, pii_mask, plain_one, plain_text, redact_records, redact_series, redact_text
from .placeholders import HASH_HEX_CHARS, PLACEHOLDER_KINDS, SECRET_PLACEHOLDER

__all__ = [
    "plain_one", "plain_text",
    "find_pii", "pii_mask", "redact_records", "redact_series", "redact_text",
    "HASH_HEX_CHARS", "PLACEHOLDER_KINDS", "SECRET_PLACEHOLDER",
]
