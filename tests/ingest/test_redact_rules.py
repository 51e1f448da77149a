"""Redaction edges the first mutation sample of issue 19 showed untested (written after that
sample; the next sample of the redact rule measures them without bias): the last octet value an
IPv4 address may hold, and a mainland mobile written with its country code but no separators."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from memory_lake.text.redact import redact_text

SALT = b"test-salt"


def tag(kind: str, normalised: str) -> str:
    return f"[{kind}:{hmac.new(SALT, normalised.encode('utf-8'), hashlib.sha256).hexdigest()[:8]}]"


@pytest.mark.parametrize(("text", "expected"), [
    ("from 255.255.255.255 at night", f"from {tag('IP', '255.255.255.255')} at night"),
    ("from 256.10.10.10 at night", "from 256.10.10.10 at night"),          # 256 is no octet: not an address
    ("from 10.0.0.256 at night", "from 10.0.0.256 at night"),
])
def test_an_ipv4_octet_goes_up_to_255(text, expected):
    assert redact_text(text, SALT) == expected


def test_a_mobile_with_its_country_code_and_no_separators_is_the_same_phone():
    assert redact_text("call 8613812345678 or 13812345678", SALT) == f"call {tag('PHONE', '13812345678')} or " \
                                                                   f"{tag('PHONE', '13812345678')}"
