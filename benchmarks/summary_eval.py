"""The summary evaluator's detection rate on an injected set written blind (by someone who had not
read the evaluator): good summaries, the same summaries with a false fact injected (a changed
number, date, name, an invented decision ...), and with key facts deleted.

    python benchmarks/summary_eval.py [SET.jsonl]
    # default tests/data/summary_eval_blind.jsonl (how it was written: tests/data/blind_notes/)

One item per line: ``{"id", "lang", "source": [...], "summary": md, "injections": [{"kind", "summary",
"detail"}], "deletions": [{"kind", "summary", "removed"}]}``.

Prints per half and language: how many good summaries pass (all four thresholds, and each metric
alone), the share of injections whose accuracy falls below the threshold (detected) and the share
of deletions whose retention falls below the threshold. The set is split by item number: odd items
(en-01, zh-03 ...) are the development half, the only ones looked at while fixing the evaluator's
rules; even items are the held-out test half, so the test figures measure rules not fitted to them. Acceptance (issue 15): ≥ 95 % of injections detected per language;
deletions drop retention below the threshold. The set is for measuring, never for tuning the rules.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from memory_lake import Policy, evaluate_summary

ROOT = Path(__file__).resolve().parents[1]
BLIND_COPY = ROOT / "tests" / "data" / "summary_eval_blind.jsonl"


def default_path() -> Path:
    return BLIND_COPY


def half_of(item_id: str) -> str:
    """The half an item belongs to: odd item numbers (en-01, zh-03) are the development half the
    rules were diagnosed on, even ones the held-out test half."""
    digits = "".join(ch for ch in item_id.rsplit("-", 1)[-1] if ch.isdigit())
    return "development" if digits and int(digits) % 2 else "test"


def _pct(hit: int, total: int) -> str:
    return f"{hit}/{total} ({100 * hit / total:.1f} %)" if total else "-"


def main(path: Path) -> dict:
    policy = Policy().summaries
    items, bad = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError:
            bad += 1
    # load jieba and MiniLM before the clock starts (the first cosine loads the model)
    evaluate_summary(["Alice chose Redis.", "李娜决定采用Redis。"], "- Bob chose MySQL.\n- 王芳决定采用MySQL。", policy)
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])   # (half, what, lang) -> [hit, total]
    misses: list[str] = []
    started, scored = time.perf_counter(), 0

    def count(item: dict, what: str, hit: bool) -> None:
        for half in (half_of(item["id"]), "all"):
            counts[(half, what, item.get("lang", "?"))][0] += hit
            counts[(half, what, item.get("lang", "?"))][1] += 1

    for item in items:
        source = item["source"]
        good = evaluate_summary(source, item["summary"], policy)
        scored += 1
        count(item, "good: all four", good.passed)
        for metric in ("retention", "accuracy", "compression", "readability"):
            count(item, f"good: {metric}", metric not in good.failed)
        if not good.passed:
            misses.append(f"good {item['id']} ({half_of(item['id'])}): failed {good.failed}; "
                          f"missing {good.missing_facts[:3]}, unsupported {good.unsupported_statements[:2]}")
        for injection in item.get("injections", []):
            score = evaluate_summary(source, injection["summary"], policy)
            scored += 1
            hit = score.accuracy < policy.min_accuracy
            count(item, "injection detected", hit)
            if not hit:
                misses.append(f"injection {item['id']} ({half_of(item['id'])}, {injection['kind']}): "
                              f"{injection.get('detail')}")
        for deletion in item.get("deletions", []):
            score = evaluate_summary(source, deletion["summary"], policy)
            scored += 1
            hit = score.retention < policy.min_retention
            count(item, "deletion detected", hit)
            if not hit:
                misses.append(f"deletion {item['id']} ({half_of(item['id'])}): retention {score.retention}, "
                              f"removed {deletion.get('removed')}")
    elapsed = time.perf_counter() - started

    print(f"{path}: {len(items)} items ({bad} unreadable lines), {scored} summaries scored in {elapsed:.1f} s "
          f"({scored / elapsed:.1f} per second)")
    print(f"thresholds: accuracy < {policy.min_accuracy} detects an injection, retention < {policy.min_retention} "
          f"a deletion; halves by item number: odd = development, even = test")
    langs = sorted({k[2] for k in counts})
    whats = ["good: all four", "good: retention", "good: accuracy", "good: compression", "good: readability",
             "injection detected", "deletion detected"]
    result: dict[str, dict] = {}
    for half in ("development", "test", "all"):
        print(f"\n{half} half" if half != "all" else "\nall items")
        for what in whats:
            cells = []
            for lang in langs:
                hit, total = counts[(half, what, lang)]
                result.setdefault(half, {}).setdefault(what, {})[lang] = hit / total if total else None
                cells.append(f"{lang} {_pct(hit, total):>16}")
            print(f"  {what:20} " + "   ".join(cells))
    if misses:
        print(f"\nnot detected or not passing ({len(misses)}):")
        for miss in misses:
            print(f"  {miss}")
    return result


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="The summary evaluator's detection rate on an injected set "
                                     "written blind.")
    parser.add_argument("target", nargs="?", type=Path, default=None,
                        help=f"the injected set to score (default: {default_path()})")
    target = parser.parse_args().target or default_path()
    if not target.exists():
        sys.exit(f"error: {target}: no such file (pass the injected set's path)")
    main(target)
