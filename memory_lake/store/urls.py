"""The URLs the lake calls out to (the end-of-run webhook, the LLM summariser): http(s) with a host
that is not link-local (169.254.0.0/16, fe80::/10: where cloud metadata services answer, and hand
out credentials). A refused URL is an InputError (exit 2) that names the setting, never the URL: a
hook's path or a URL's query can hold a secret."""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse

from .errors import InputError

LINK_LOCAL = "a link-local address (169.254.0.0/16 or fe80::/10)"


def check_url(url: str, what: str, *, setting: str = "", secret: str = "a URL can hold a secret") -> None:
    """Raise InputError unless `url` is http(s) with a host (and a numeric port, if any) that is not
    a link-local address. Messages name `what` (with `setting`, where it is set, when the URL is
    no URL) and say why the URL is not shown (`secret`)."""
    parts, host = None, None
    if isinstance(url, str):
        try:
            parts = urllib.parse.urlsplit(url)
            host = parts.hostname
            parts.port  # noqa: B018 - a bad port raises here
        except ValueError:
            parts = None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        where = f" ({setting})" if setting else ""
        raise InputError(f"{what}{where} is not an http(s) URL with a host; it is not printed, as {secret}")
    if is_link_local(host):
        raise InputError(f"{what} points at {LINK_LOCAL}: refused")


def check_resolved_host(url: str, what: str) -> None:
    """Raise InputError when the host of `url` (checked by `check_url`) resolves to a link-local
    address: a name is refused as its address would be. OSError when the name does not resolve."""
    host = urllib.parse.urlsplit(url).hostname
    if any(is_link_local(info[4][0]) for info in socket.getaddrinfo(host, None)):
        raise InputError(f"{what}'s host resolves to a link-local address: refused")


def is_link_local(host: str) -> bool:
    """Whether `host` is a link-local IP address (a name is not: see `check_resolved_host`)."""
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:169.254.169.254 is the IPv4 address
    return (mapped or address).is_link_local
