"""Lifecycle pass: every tier rule over 1M memories in 10k scopes, then the same pass when only 1 %
of the memories changed (new memories and uses since the previous run).

Each measurement runs in a fresh child process (so peak RSS is its own). The lake is built once
per run by ingest (not timed). Target (issue 4): < 30 s for the 1M pass on this machine, and the
1 % pass clearly cheaper than the full one.

    python benchmarks/lifecycle.py [--memories 1000000] [--scopes 10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
AS_OF = datetime(2026, 11, 30)


def generate(path: Path, memories: int, scopes: int, *, offset: int = 0, start_days: int = 120) -> None:
    """Memories spread over scopes and tiers; ages up to `start_days`, so every rule has work."""
    i = pl.int_range(offset, offset + memories, eager=True)
    frame = pl.DataFrame({"i": i}).with_columns(
        scope=(pl.col("i") * 7919) % scopes,
        created=pl.col("i") % (start_days * 24),   # hours before AS_OF
        idle=(pl.col("i") * 31) % (start_days * 24),
    ).with_columns(
        id=pl.format("b{}", pl.col("i")),
        tenant=pl.format("tenant-{}", pl.col("scope") % 20),
        agent_id=pl.format("agent-{}", pl.col("scope") % 7),
        user_id=pl.format("user-{}", pl.col("scope")),
        tier=pl.lit(pl.Series(["working", "working", "short_term", "short_term", "short_term", "long_term",
                               "long_term", "important"])).gather(pl.col("i") % 8),
        content=pl.format("benchmark memory {} about topic {}", pl.col("i"), pl.col("i") % 97),
        importance=((pl.col("i") * 13) % 101) / 100,
        reference_count=(pl.col("i") % 5),
        created_at=(pl.lit(AS_OF) - pl.duration(hours=pl.col("created"))).dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        last_accessed_at=(pl.lit(AS_OF) - pl.duration(hours=pl.min_horizontal("created", "idle")))
        .dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
        expires_at=pl.when(pl.col("i") % 50 == 0).then(
            (pl.lit(AS_OF) + pl.duration(days=(pl.col("i") % 21) - 10)).dt.strftime("%Y-%m-%dT%H:%M:%SZ")),
    ).drop("i", "scope", "created", "idle")
    frame.write_ndjson(path)


def child(mode: str, lake_dir: str, memories: int, scopes: int) -> None:
    from memory_lake import Lake
    from memory_lake.maintain import apply_events
    from memory_lake.maintain import enforce_tiers

    lake = Lake.open(lake_dir, create=True)
    if mode == "full":
        started = time.perf_counter()
        report = enforce_tiers(lake, AS_OF, run_id="bench-full")
    else:  # 1 % changed since the full pass: new memories and uses, one day later
        later = AS_OF + timedelta(days=1)
        changed = memories // 100
        snapshot = Path(lake_dir).parent / "changed.jsonl"
        generate(snapshot, changed // 2, scopes, offset=memories, start_days=1)
        events = pl.DataFrame({"n": pl.int_range(0, changed - changed // 2, eager=True)}).select(
            ts=pl.lit("2026-11-30T12:00:00Z"), tenant=pl.format("tenant-{}", ((pl.col("n") * 7919 * 97) % scopes) % 20),
            event=pl.lit("reference"), memory_id=pl.format("b{}", (pl.col("n") * 97) % memories))
        events.write_ndjson(lake.inbox / "uses.events.jsonl")
        lake.ingest([snapshot], as_of=later)
        apply_events(lake, later)
        started = time.perf_counter()
        report = enforce_tiers(lake, later, run_id="bench-incremental")
    wall = time.perf_counter() - started
    print(json.dumps({"wall_s": round(wall, 2), "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                      "moves": report.counts}))


def run_child(*args: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--scopes", type=int, default=10_000)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, lake_dir, memories, scopes = args.child
        child(mode, lake_dir, int(memories), int(scopes))
        return
    with tempfile.TemporaryDirectory(prefix="bench-lifecycle-") as tmp:
        from memory_lake import Lake

        snapshot = Path(tmp) / "memories.jsonl"
        generate(snapshot, args.memories, args.scopes)
        started = time.perf_counter()
        lake = Lake.open(Path(tmp) / "lake", create=True)
        lake.ingest([snapshot], as_of=AS_OF)
        print(f"built a lake of {args.memories} memories in {args.scopes} scopes in {time.perf_counter() - started:.1f} s",
              flush=True)
        full = run_child("full", str(lake.root), str(args.memories), str(args.scopes))
        incremental = run_child("incremental", str(lake.root), str(args.memories), str(args.scopes))
    result = {"memories": args.memories, "scopes": args.scopes, "full": full, "one_percent": incremental,
              "ratio_one_percent_vs_full": round(incremental["wall_s"] / full["wall_s"], 3)}
    print(json.dumps(result, indent=1))
    print(f"\nfull pass: {full['wall_s']} s, peak {full['peak_mb']} MB | 1 % changed: {incremental['wall_s']} s, "
          f"peak {incremental['peak_mb']} MB | ratio {result['ratio_one_percent_vs_full']}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "lifecycle.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
