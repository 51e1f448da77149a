"""Wall-clock deadlines for calls to other machines (issue 37.7): a socket timeout bounds each read,
not the whole exchange, so a peer that sends one byte every two seconds would hold a run (and its
write lock) for as long as it likes. The webhook and the LLM summariser call through `within`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def within(call: Callable[[], T], seconds: float) -> T:
    """`call()`'s result, or TimeoutError once `seconds` of wall-clock time have passed, whatever the
    peer does: a socket timeout bounds each read, not the whole answer (an endpoint that sends one
    byte every 2 s never trips it). The call goes on in a daemon thread and is abandoned."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    worker = threading.Thread(target=run, name="memory-lake-deadline", daemon=True)
    worker.start()
    worker.join(max(0.0, seconds) + 0.1)  # a silent peer trips the socket's own timeout first
    if worker.is_alive():
        raise TimeoutError(f"timed out: no whole answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
