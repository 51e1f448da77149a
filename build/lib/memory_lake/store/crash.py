"""Crash points: named places where a test kills the process as a power cut would.

A process whose environment sets ``MEMORY_LAKE_CRASH_AT`` to a point's name SIGKILLs itself when it
reaches that point, so no ``finally`` or ``atexit`` runs. Tests use it to show that a run killed
anywhere re-runs to the state of an uninterrupted run (tests/test_crash_safety.py). Without the
variable a crash point does nothing.
"""

from __future__ import annotations

import os
import signal

CRASH_AT_ENV = "MEMORY_LAKE_CRASH_AT"


def crash_point(name: str) -> None:
    """SIGKILL this process when ``MEMORY_LAKE_CRASH_AT`` equals `name`."""
    if os.environ.get(CRASH_AT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
