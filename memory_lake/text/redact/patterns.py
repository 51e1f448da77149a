r"""The regular expressions of every kind, run by Polars (the Rust regex crate) over whole Series.

Secrets (PEM keys, prefixed tokens, JWTs, bearer tokens, values behind password and key labels)
are replaced by pattern alone, with ``_SECRET_RULES`` in order. E-mail addresses, IP addresses,
AWS secret keys and digit runs are only candidates here: ``validate`` decides which of them hold
PII. Each kind has a cheap prefilter, so the full patterns run on few rows.
"""

from __future__ import annotations

import re

from .placeholders import SECRET_PLACEHOLDER

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
# Said instead of labelled: "my password is hunter2", "密码是 hunter2", "口令为 123456". Only password
# words and the three key names take "is", 是 or 为 (not "pass", "token" or "secret": "my pass is in
# the car", "the secret is less sugar" are no secrets).
_PASSWORD_SAID_VALUE = (
    r"(?i)((?:[A-Za-z0-9_-]*(?:password|passwd|pwd)[A-Za-z0-9_-]*|api[ _-]?key|access[ _-]?key|secret[ _-]?key"
    + r"""|密码|口令)(?:\s+is(?:\s*[:：]\s*|\s+)|\s*[是为]\s*[:：]?\s*)(?:\\?["'])?)"""
    + r"(?:\[SECRET\]|" + _SECRET_TEXT_VALUE + ")"
)
# The JSON keys whose whole value is secret (json_repair, when a row is rebuilt from its JSON).
_PASSWORD_KEY = re.compile("(?i)" + _PASSWORD_LABEL)

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
    (_PASSWORD_SAID_VALUE, "${1}" + SECRET_PLACEHOLDER),
)
# An AWS secret access key has no prefix: a run of exactly 40 base64 characters mixing upper
# case, lower case and digits (checked in Python, see validate._aws_secret_hits); hex digests (lower case
# only), longer base64 and paths ("/" at an end, or "//") are not.
_AWS_SECRET_RUN = r"(?:" + _JSON_ESCAPE + r")?[A-Za-z0-9/+]{40,}"
_AWS_SECRET_RUN_PREFILTER = r"[A-Za-z0-9/+]{40}"

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
# What a row holds when `validate._ip_hits` can accept one of its candidates: a dotted quad has a
# part of 1-3 digits between two dots; an IPv6 address has "::" or seven colons with at most four
# hex digits between each two. A timestamp's "10:00:00" or a float's "0.3", in nearly every record,
# sends no row to the regex. Three scans: one alternation of the three is slower.
_IP_PREFILTER = (r"[0-9]\.[0-9]{1,3}\.[0-9]", "::", ":" + "[0-9A-Fa-f]{0,4}:" * 6)

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

# A JSON \uXXXX escape (a value hidden behind escapes is looked for with them decoded).
_UNICODE_ESCAPE = r"\\u[0-9A-Fa-f]{4}"
