"""The guard on more than one core (issue 42): `GuardHelpers` and `prejudge`.

A cold night at 1M memories asks the contradiction guard about 550k candidate pairs, about a
millisecond each in one Python thread, while the machine's other core waits: the guard was 93 % of
the cold dedup step. A verdict depends only on the two texts, the judge of rewordings and its
window, so who computes it does not change it: `prejudge` hands chunks of a batch's unjudged pairs
to helper processes and judges the others itself, and the plan then reads the verdicts from there.
A pair a helper could not judge (it raised, or the helper died) is left to the plan, which judges it
again and records its error as it always did.

Helpers start only when a batch has at least ``HELPER_MIN_PAIRS`` unjudged pairs (a warm night, the
demo and the tests judge a few hundred and never start one), from ``store.spawn_pool`` (spawned:
a forked copy of a process that has run torch can hang), one per core beyond the first up to
``[dedup] guard_processes`` (0: the cores). Each helper loads the dictionaries and the models itself, once a
step, about 20 s of its own time while the step goes on without it.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ProcessPoolExecutor, wait

from ...store import Policy, spawn_pool


# A batch with fewer unjudged pairs than this is judged in this process alone.
HELPER_MIN_PAIRS = 4_000
# Pairs per chunk handed to a helper (about a second of a helper's work).
CHUNK_PAIRS = 1_000
# A helper's verdict for a pair it raised on: the plan judges that pair again itself.
RAISED = "\x00raised"


def guard_processes(policy: Policy) -> int:
    """How many processes judge pairs: ``[dedup] guard_processes``, or the cores when it is 0."""
    wanted = policy.dedup.guard_processes
    return wanted if wanted > 0 else (os.cpu_count() or 1)


class GuardHelpers:
    """Helper processes for one dedup step, started at the first batch that needs them and shut
    down by `close` (a `with` block)."""

    def __init__(self, policy: Policy, window: int):
        self.policy, self.window = policy, window
        self.count = guard_processes(policy) - 1
        self.judged = 0  # pairs the helpers judged this step
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> "GuardHelpers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = spawn_pool(self.count, _start, (self.policy, self.window))
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def prejudge(pairs: list[tuple[str, str]], judge_here, helpers: GuardHelpers | None) -> dict[tuple[str, str], str | None]:
    """Verdicts of the text pairs `pairs` (distinct), chunk by chunk: up to two chunks in flight per
    helper, the rest judged here by `judge_here(a, b)`. A pair that raised here or in a helper, or
    whose helper failed, is left out (the caller judges it again and records the error)."""
    verdicts: dict[tuple[str, str], str | None] = {}
    if helpers is None or helpers.count < 1 or len(pairs) < HELPER_MIN_PAIRS:
        return verdicts
    chunks = [pairs[i:i + CHUNK_PAIRS] for i in range(0, len(pairs), CHUNK_PAIRS)]
    in_flight: dict[Future, list[tuple[str, str]]] = {}

    def collect(done) -> None:
        for future in done:
            chunk = in_flight.pop(future)
            try:
                found = future.result()
            except Exception:
                continue  # a helper that died: its pairs are judged by the caller
            kept = {pair: why for pair, why in zip(chunk, found) if why != RAISED}
            verdicts.update(kept)
            helpers.judged += len(kept)

    started = True
    while chunks:
        if started and len(in_flight) < 2 * helpers.count:
            chunk = chunks.pop()  # helpers take from the end, this process from the front
            try:
                in_flight[helpers.pool.submit(_judge_chunk, chunk)] = chunk
            except Exception:  # no helper could start (a broken pool): this process judges alone
                chunks.append(chunk)
                started = False
            continue
        for a, b in chunks.pop(0):
            try:
                verdicts[(a, b)] = judge_here(a, b)
            except Exception:
                pass  # judged again by the caller, which records the error
        collect([f for f in in_flight if f.done()])
    collect(wait(in_flight, return_when="ALL_COMPLETED").done if in_flight else ())
    return verdicts


_HELPER: dict = {}


def _start(policy: Policy, window: int) -> None:
    """A helper's start (after ``store.spawn_pool``'s watch on the step's process): the judge of
    rewordings for `policy`, vectors kept for the step."""
    from .guard import closeness

    _HELPER.update(judge=closeness(policy), window=window)


def _judge_chunk(chunk: list[tuple[str, str]]) -> list[str | None]:
    from .guard import contradiction

    out = []
    for a, b in chunk:
        try:
            out.append(contradiction(a, b, _HELPER["judge"], _HELPER["window"]))
        except Exception:
            out.append(RAISED)
    return out


__all__ = ["CHUNK_PAIRS", "HELPER_MIN_PAIRS", "GuardHelpers", "guard_processes", "prejudge"]
