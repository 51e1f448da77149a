"""How a `memory-lake search` or `context` finds a running `memory-lake serve` for its lake (issue
38.5), so the command answers in milliseconds instead of loading the model itself.

`serve` adds itself to ``<lake>/.serve.json`` (url, pid, whether it requires a token; never the
token) when it listens and removes its entry when it stops. A command reads it, checks that the pid is alive and asks the server, with a short
timeout; any failure (no file, a dead pid, a refused connection, a server error) returns None and
the command answers in-process as before. Standard library only: the command pays nothing for it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from collections.abc import Iterator
from typing import Any

SERVE_FILE = ".serve.json"
# A server that does not answer within this is treated as absent (the command answers itself).
ASK_TIMEOUT_S = 10.0


@contextlib.contextmanager
def _servers(root: Path, exclusive: bool) -> Iterator[list[dict[str, Any]]]:
    """The live servers listed in ``<lake>/.serve.json`` (dead pids dropped), under a lock on the
    file; with `exclusive`, the list as the block leaves it is written back (the file removed when
    it is empty). Each server writes and removes its own entry, so two servers of one lake (two
    ports) are both found, and the one that stops first does not hide the other."""
    path = Path(root) / SERVE_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT if exclusive else os.O_RDONLY, 0o644)
    except OSError:
        yield []
        return
    with os.fdopen(fd, "r+" if exclusive else "r", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            found = json.loads(handle.read() or "{}")
        except ValueError:
            found = {}
        listed = found.get("servers", [found] if "pid" in found else []) if isinstance(found, dict) else []
        servers = [s for s in listed if isinstance(s, dict) and _alive(s.get("pid"))]
        yield servers
        if exclusive:
            handle.seek(0)
            handle.truncate()
            if servers:
                handle.write(json.dumps({"servers": servers}))
                handle.flush()
            else:
                path.unlink(missing_ok=True)


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def announce(root: Path, url: str, token: bool = False) -> Path:
    """Add this process's server (`url`; `token`: whether it requires one) to ``<lake>/.serve.json``."""
    with _servers(root, exclusive=True) as servers:
        servers[:] = [s for s in servers if s.get("pid") != os.getpid()]
        servers.append({"url": url, "pid": os.getpid(), "token": bool(token)})
    return Path(root) / SERVE_FILE


def withdraw(root: Path) -> None:
    """Remove this process's entry from ``.serve.json`` (the file goes with the last entry)."""
    if not (Path(root) / SERVE_FILE).exists():
        return
    with _servers(root, exclusive=True) as servers:
        servers[:] = [s for s in servers if s.get("pid") != os.getpid()]


def running_server(root: Path) -> str | None:
    """The URL of a live `serve` process on this machine for the lake at `root` (the first one
    that started), or None."""
    with _servers(root, exclusive=False) as servers:
        for server in servers:
            url = str(server.get("url", ""))
            if url.startswith(("http://127.", "http://localhost", "http://[::1]")):
                return url
    return None


def ask(root: Path, path: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """GET `path` of the lake's running server with `params` (None values left out); its JSON, or
    None when there is no server or it did not answer with 200."""
    url = running_server(root)
    if url is None:
        return None
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    request = urllib.request.Request(f"{url}{path}?{query}")
    token = os.environ.get("MEMORY_LAKE_TOKEN")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=ASK_TIMEOUT_S) as response:
            if response.status != 200:
                return None
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            print(f"memory-lake serve runs for this lake at {url} but requires its token "
                  f"({'MEMORY_LAKE_TOKEN is not the one it takes' if token else 'set MEMORY_LAKE_TOKEN to use it'}); "
                  "answering here instead (slower: the models load in this command)", file=sys.stderr)
        return None
    except (OSError, ValueError, urllib.error.URLError):
        return None
