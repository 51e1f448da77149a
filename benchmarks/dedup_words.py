"""Dedup's guard on single replaced words, from a blind word-pair set: would one word replaced by
another in a sentence be merged as a rewording, or kept apart?

The set (``tests/data/dedup_words_blind.jsonl``, written by a helper who never read the code:
tests/data/blind_notes/words1.md) holds 700 pairs per language: synonyms (should merge: plain,
colloquial, regional, formal, phrasal verbs, idioms, clippings), two items of one kind
(``same_kind``: colours, relatives, foods, seats ... and neighbours on a scale), antonyms, a word
and a narrower one (``narrower``), and associated words (``related``). Each pair comes with a
sentence using x; the second text puts y in its place. The guard (``dedup.contradiction`` with
the embedding models of the default policy) then says merged, queued (a contradiction) or apart.

Printed per language and label: merged / queued / apart, and the headline figures: synonyms
merged (recall), and merges of everything that is not a synonym (same_kind and antonym must stay
at 0). With ``--why`` the decisions against the label are listed. The set is for measuring, never
for tuning: no word of it may be added to a rule list.

    python benchmarks/dedup_words.py [--why] [PAIRS.jsonl]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT = ROOT / "tests" / "data" / "dedup_words_blind.jsonl"
LABELS = ("synonym", "same_kind", "antonym", "narrower", "related")


def substituted(context: str, x: str, y: str) -> str | None:
    """The context with its first `x` replaced by `y` (None when `x` is not in it)."""
    at = context.find(x)
    if at < 0:
        lowered = context.lower().find(x.lower())
        if lowered < 0:
            return None
        at = lowered
    return context[:at] + y + context[at + len(x):]


def main(path: Path, why: bool) -> dict:
    dedup = importlib.import_module("memory_lake.maintain.dedup")
    from memory_lake.store.policy import Policy

    close = dedup.closeness(Policy())
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    table, wrong, skipped = Counter(), [], 0
    for p in pairs:
        b = substituted(p["context"], p["x"], p["y"])
        if b is None or b == p["context"]:
            skipped += 1
            continue
        reason = dedup.contradiction(p["context"], b, close)
        got = "merged" if reason is None else "queued" if reason not in dedup.DIFFERENT else "apart"
        table[(p["lang"], p["label"], got)] += 1
        if (p["label"] == "synonym") != (got == "merged"):
            wrong.append((p, got, reason))
    print(f"{path.name}: {len(pairs)} pairs ({skipped} skipped: x not in its context)")
    print(f"{'lang':4} {'label':10} {'merged':>7} {'queued':>7} {'apart':>7}")
    figures: dict = {}
    for lang in sorted({p["lang"] for p in pairs}):
        for label in LABELS:
            row = [table[(lang, label, g)] for g in ("merged", "queued", "apart")]
            if sum(row):
                print(f"{lang:4} {label:10} {row[0]:7} {row[1]:7} {row[2]:7}")
                figures[f"{label}_merged_{lang}"] = round(row[0] / sum(row), 3)
    print(json.dumps(figures))
    if why:
        for p, got, reason in wrong:
            print(f"  [{p['lang']} {p['label']} {p['category']}] {got} ({reason}): {p['x']} / {p['y']} | {p['context']}")
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="?", type=Path, default=DEFAULT,
                        help=f"JSON Lines of {{x, y, label, lang, category, context}} (default {DEFAULT.relative_to(ROOT)})")
    parser.add_argument("--why", action="store_true", help="list the decisions against the label")
    args = parser.parse_args()
    if not args.pairs.is_file():
        parser.error(f"no such pair file: {args.pairs}")
    main(args.pairs, args.why)
