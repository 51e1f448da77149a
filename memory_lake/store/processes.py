"""Helper processes for a step's work on the machine's other cores (issue 42): `spawn_pool`.

A night's heavy Python work runs in one thread while the other cores wait. Where that work splits
into pieces whose result does not depend on who computes them (the contradiction guard's verdicts,
a scope's context pack), a step hands some pieces to helpers from `spawn_pool`:

* spawned, not forked: a forked copy of a process that has run torch can hang;
* started while ``__main__`` shows no file (`main_hidden`): a spawned process runs the parent's
  ``__main__`` again otherwise (a script up to the line that started the helpers: an ingest, a
  lock it would wait for);
* each watches the process that started it and ends when that one is gone (a crash, an
  operator's kill -9) instead of holding its memory for ever.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

# A helper checks this often whether the process that started it still runs.
PARENT_CHECK_SECONDS = 1.0


def spawn_pool(count: int, initializer: Callable[..., None] | None = None,
               initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """A pool of `count` spawned helpers, all started before this returns; each runs
    ``initializer(*initargs)`` first (a module-level function, pickled by name)."""
    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start, initargs=(os.getpid(), initializer, initargs))
    with main_hidden():  # each submit starts a helper while none is idle
        for _ in range(count):
            pool.submit(_ready)
    return pool


@contextlib.contextmanager
def main_hidden():
    """``__main__`` without its file and module name while helpers start (module docstring)."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved_file, saved_spec = main.__dict__.get("__file__"), getattr(main, "__spec__", None)
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__spec__ = saved_spec
        if saved_file is not None:
            main.__file__ = saved_file


def _ready() -> None:
    """A helper's first task: it is started."""


def _start(parent: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="memory-lake-parent-watch", daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


__all__ = ["PARENT_CHECK_SECONDS", "main_hidden", "spawn_pool"]
