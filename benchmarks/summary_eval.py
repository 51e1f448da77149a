"""The summary evaluator's detection rate on an injected set written blind (by someone who had not
read the evaluator): good summaries, the same summaries with a false fact injected (a changed
number, date, name, an invented decision ...), and with key facts deleted.

    python benchmarks/summary_eval.py [SET.jsonl]
    # default tests/data/summary_eval_blind.jsonl, else /work/blind/summary15/summary_eval.jsonl

One item per line: ``{"id", "lang", "source": [...], "summary": md, "injections": [{"kind", "summary",
"detail"}], "deletions": [{"kind", "summary", "removed"}]}``.

Prints per language and kind: the share of injections whose accuracy falls below the threshold
(detected), the share of deletions whose retention falls below the threshold, and how many good
summaries pass (all four thresholds, and accuracy + retention alone, since a short item may not
reach the compression floor). Acceptance (issue 15): ≥ 95 % of injections detected per language;
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
BLIND_ORIGINAL = Path("/work/blind/summary15/summary_eval.jsonl")


def default_path() -> Path:
    return BLIND_COPY if BLIND_COPY.exists() else BLIND_ORIGINAL


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
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])   # (what, lang, kind) -> [hit, total]
    misses: list[str] = []
    started, scored = time.perf_counter(), 0
    for item in items:
        lang, source = item.get("lang", "?"), item["source"]
        good = evaluate_summary(source, item["summary"], policy)
        scored += 1
        counts[("good_pass", lang, "all")][0] += good.passed
        counts[("good_pass", lang, "all")][1] += 1
        ok = good.accuracy >= policy.min_accuracy and good.retention >= policy.min_retention
        counts[("good_ok", lang, "all")][0] += ok
        counts[("good_ok", lang, "all")][1] += 1
        if not ok:
            misses.append(f"good {item['id']} ({lang}): retention {good.retention}, accuracy {good.accuracy}; "
                          f"missing {good.missing_facts[:3]}, unsupported {good.unsupported_statements[:2]}")
        for injection in item.get("injections", []):
            score = evaluate_summary(source, injection["summary"], policy)
            scored += 1
            hit = score.accuracy < policy.min_accuracy
            counts[("injection", lang, injection["kind"])][0] += hit
            counts[("injection", lang, injection["kind"])][1] += 1
            if not hit:
                misses.append(f"injection {item['id']} ({lang}, {injection['kind']}): {injection.get('detail')}")
        for deletion in item.get("deletions", []):
            score = evaluate_summary(source, deletion["summary"], policy)
            scored += 1
            hit = score.retention < policy.min_retention
            counts[("deletion", lang, deletion["kind"])][0] += hit
            counts[("deletion", lang, deletion["kind"])][1] += 1
            if not hit:
                misses.append(f"deletion {item['id']} ({lang}, {deletion['kind']}): retention {score.retention}, "
                              f"removed {deletion.get('removed')}")
    elapsed = time.perf_counter() - started

    print(f"{path}: {len(items)} items ({bad} unreadable lines), {scored} summaries scored in {elapsed:.1f} s "
          f"({scored / elapsed:.1f} per second)")
    print(f"thresholds: accuracy < {policy.min_accuracy} detects an injection, retention < {policy.min_retention} "
          f"a deletion")
    result: dict[str, dict] = {}
    for what, title in (("injection", "injections detected (accuracy below threshold)"),
                        ("deletion", "deletions detected (retention below threshold)"),
                        ("good_pass", "good summaries passing all thresholds"),
                        ("good_ok", "good summaries with accuracy and retention at threshold")):
        print(f"\n{title}")
        for lang in sorted({k[1] for k in counts if k[0] == what}):
            kinds = sorted(k[2] for k in counts if k[0] == what and k[1] == lang)
            hit = sum(counts[(what, lang, kind)][0] for kind in kinds)
            total = sum(counts[(what, lang, kind)][1] for kind in kinds)
            result.setdefault(what, {})[lang] = hit / total if total else None
            print(f"  {lang:3} all          {_pct(hit, total)}")
            if kinds != ["all"]:
                for kind in kinds:
                    print(f"  {lang:3} {kind:12} {_pct(*counts[(what, lang, kind)])}")
    if misses:
        print(f"\nnot detected or not passing ({len(misses)}):")
        for miss in misses:
            print(f"  {miss}")
    return result


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else default_path()
    if not target.exists():
        sys.exit(f"error: {target}: no such file (pass the injected set's path)")
    main(target)
