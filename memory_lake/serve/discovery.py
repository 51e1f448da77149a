"""How a `memory-lake search` or `context` finds a running `memory-lake serve` for its lake (issue
38.5), so the command answers in milliseconds instead of loading the model itself.

`serve` writes ``<lake>/.serve.json`` (url, pid; never the token) when it listens and removes it
when it stops. A command reads it, checks that the pid is alive and asks the server, with a short
timeout; any failure (no file, a dead pid, a refused connection, a server error) returns None and
the command answers in-process as before. Standard library only: the command pays nothing for it.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

SERVE_FILE = ".serve.json"
# A server that does not answer within this is treated as absent (the command answers itself).
ASK_TIMEOUT_S = 10.0


def announce(root: Path, url: str) -> Path:
    """Write ``<lake>/.serve.json`` for this process (replaced whole)."""
    path = Path(root) / SERVE_FILE
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"url": url, "pid": os.getpid()}), encoding="utf-8")
    os.replace(tmp, path)
    return path


def withdraw(root: Path) -> None:
    """Remove ``.serve.json`` if this process wrote it."""
    path = Path(root) / SERVE_FILE
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def running_server(root: Path) -> str | None:
    """The URL of a live `serve` process for the lake at `root`, or None."""
    try:
        found = json.loads((Path(root) / SERVE_FILE).read_text(encoding="utf-8"))
        pid, url = int(found["pid"]), str(found["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's
    return url if url.startswith(("http://127.", "http://localhost", "http://[::1]")) else None


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
    except (OSError, ValueError, urllib.error.URLError):
        return None
