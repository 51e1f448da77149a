"""The transcript rules (issue 41.3, ``memory_lake.text.judge``) against the blind labels.

``tests/data/transcripts/blind_labels.json`` labels 340 real chat messages of the MemoryBank
evaluation data (170 English, 170 Chinese; 150 user and 20 assistant turns each), written from the
messages' meaning by someone who saw no rule. The labels hold no text: each points into
``/work/shared/benchmarks/memorybank`` (``data[user]["history"][date][turn][side]``, see the README
next to the labels), resolved here at run time and checked against the label's ``text_sha256``.
The rules were written and frozen before this set was opened; it is measured, never tuned to.

Printed, per language (all turns, user turns, assistant turns; with and without the labels marked
``ambiguous``):

* precision, recall and F1 of ``worthy``;
* kind agreement on the true positives: the label's kind (``fact_about_person`` and ``other_fact``
  both read as ``fact``) equal to the judged kind;
* importance agreement on the true positives: the label says ``high`` exactly when the judged
  importance would consolidate (``> 0.7``, seed 002);

and throughput: ``judge`` calls a second over the resolved messages, repeated, in one process.

    .venv/bin/python benchmarks/transcript_rules.py [--repeat N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_lake.text import judge  # noqa: E402
from memory_lake.text import worthy  # noqa: E402

LABELS = ROOT / "tests" / "data" / "transcripts" / "blind_labels.json"
MEMORYBANK = Path("/work/shared/benchmarks/memorybank")
# the labels' kinds in judge's words (the rest are never worthy kinds of judge)
KIND_OF_LABEL = {"preference": "preference", "decision": "decision", "commitment": "commitment",
                 "fact_about_person": "fact", "other_fact": "fact", "event": "event"}
CONSOLIDATES = 0.7  # seed 002: importance > 0.7 moves to long-term memory


def resolve(labels_path: Path = LABELS, mb: Path = MEMORYBANK) -> list[dict]:
    """Each label with the message text it points to (README "Finding a message")."""
    spec = json.loads(labels_path.read_text(encoding="utf-8"))
    cache: dict[str, dict] = {}
    out = []
    for lab in spec["labels"]:
        if lab["file"] not in cache:
            cache[lab["file"]] = json.loads((mb / lab["file"]).read_text(encoding="utf-8"))
        data, loc = cache[lab["file"]], lab["locator"]
        if list(data)[loc["user_index"]] != loc["user"]:
            raise SystemExit(f"{lab['file']}: user {loc['user']!r} is not at position {loc['user_index']}")
        text = data[loc["user"]]["history"][loc["date"]][loc["turn"]][loc["side"]]
        if hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] != lab["text_sha256"]:
            raise SystemExit(f"{lab['file']}: the text at {loc} changed (sha256 differs from the label's)")
        out.append({**lab, "text": text})
    return out


def scores(rows: list[dict]) -> dict:
    """Precision / recall / F1 of worthy, and kind / importance agreement on the true positives."""
    tp = [r for r in rows if r["worthy"] and r["judged"].worthy]
    fp = sum(1 for r in rows if not r["worthy"] and r["judged"].worthy)
    fn = sum(1 for r in rows if r["worthy"] and not r["judged"].worthy)
    p = len(tp) / (len(tp) + fp) if tp or fp else float("nan")
    rc = len(tp) / (len(tp) + fn) if tp or fn else float("nan")
    f1 = 2 * p * rc / (p + rc) if tp else 0.0
    kind = sum(1 for r in tp if KIND_OF_LABEL.get(r["kind"]) == r["judged"].kind)
    importance = sum(1 for r in tp if (r["importance"] == "high") == (r["judged"].importance > CONSOLIDATES))
    return {"n": len(rows), "labelled worthy": sum(1 for r in rows if r["worthy"]), "judged worthy": len(tp) + fp,
            "tp": len(tp), "fp": fp, "fn": fn, "precision": p, "recall": rc, "f1": f1,
            "kind agreement": kind / len(tp) if tp else float("nan"),
            "importance agreement": importance / len(tp) if tp else float("nan")}


def _f(x: float, width: int) -> str:
    return f"{'n/a':>{width}}" if x != x else f"{x:>{width}.3f}"  # n/a: nothing to divide by


def table(rows: list[dict]) -> list[str]:
    lines = [f"{'set':<38} {'n':>4} {'worthy':>6} {'judged':>6} {'tp':>4} {'fp':>4} {'fn':>4} "
             f"{'precision':>9} {'recall':>7} {'F1':>6} {'kind':>6} {'import.':>7}"]
    for lang in ("en", "zh"):
        for who in ("all", "user", "assistant"):
            for ambiguous in (True, False):
                chosen = [r for r in rows if r["lang"] == lang and (who == "all" or r["role"] == who)
                          and (ambiguous or not r.get("ambiguous"))]
                s = scores(chosen)
                name = f"{lang} {who} turns" + ("" if ambiguous else ", without ambiguous")
                lines.append(f"{name:<38} {s['n']:>4} {s['labelled worthy']:>6} {s['judged worthy']:>6} {s['tp']:>4} "
                             f"{s['fp']:>4} {s['fn']:>4} {_f(s['precision'], 9)} {_f(s['recall'], 7)} "
                             f"{_f(s['f1'] if s['tp'] + s['fp'] + s['fn'] else float('nan'), 6)} "
                             f"{_f(s['kind agreement'], 6)} {_f(s['importance agreement'], 7)}")
    return lines


def throughput(rows: list[dict], repeat: int) -> float:
    messages = [(r["text"], r["role"]) for r in rows]
    judge("warm up")  # compiles the rules once
    start = time.perf_counter()
    for _ in range(repeat):
        for text, role in messages:
            judge(text, role)
    return repeat * len(messages) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=300, help="passes over the messages for the throughput")
    args = parser.parse_args(argv)
    if not LABELS.exists() or not MEMORYBANK.exists():
        print(f"skipped: needs {LABELS.relative_to(ROOT)} and {MEMORYBANK} (the MemoryBank evaluation data)")
        return 0
    rows = resolve()
    for row in rows:
        row["judged"] = judge(row["text"], row["role"])
    rules = hashlib.sha256(Path(worthy.__file__).read_bytes()).hexdigest()
    print(f"transcript rules: memory_lake/text/worthy.py sha256 {rules[:16]}; "
          f"{len(worthy.EN_RULES)} English and {len(worthy.ZH_RULES)} Chinese rules")
    print(f"blind labels: {len(rows)} messages of MemoryBank ({LABELS.relative_to(ROOT)})\n")
    print("\n".join(table(rows)))
    print("\nkind: on the true positives, the label's kind (fact_about_person / other_fact as fact) is the judged "
          "kind;\nimport.: on the true positives, label 'high' exactly when the judged importance is > "
          f"{CONSOLIDATES} (seed 002 consolidates it);\nn/a: no message labelled or judged worthy in that set "
          "(all of its messages agree: none is worthy)")
    rate = throughput(rows, args.repeat)
    print(f"\nthroughput: {rate:,.0f} messages/s ({args.repeat} passes over the {len(rows)} messages, one process, "
          f"mean {sum(len(r['text']) for r in rows) / len(rows):.0f} characters)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
