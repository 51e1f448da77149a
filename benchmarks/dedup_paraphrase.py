"""Dedup on the blind paraphrase set of issue 17: are real paraphrases merged, in English and in
Chinese, while no contradiction is?

The set was written by someone who had not read the dedup code: ``{"a", "b", "label":
paraphrase|contradiction|near_miss|unrelated, "lang", "kind"}`` per line, read from
``tests/data/dedup_pairs_blind_zh17.jsonl`` (how it was written: tests/data/blind_notes/zh17_sets.md).
Each pair goes into its own scope, then the real nightly steps run (ingest, index with both
models, dedup), and each pair is classed: merged, queued as a contradiction, or kept apart.

Printed: per language and label the outcome counts, per language and kind of paraphrase the
share merged; and the headline figures of issue 17: one-word paraphrases merged per language
(a pair is one-word when the two word sequences differ in exactly one replaced stretch of at most
two words each, by the same word reading dedup uses), contradictions merged (must be 0),
precision of the merges (paraphrases among everything merged, must be >= 0.98). It then runs
``benchmarks/dedup_blind.py`` on the older blind set (``tests/data/dedup_pairs_blind.jsonl``),
whose contradictions must stay unmerged too. The sets are measured, never tuned to.

    python benchmarks/dedup_paraphrase.py [PAIRS.jsonl]
"""

from __future__ import annotations

import difflib
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


# Three sets, each written blind by a helper who never read the code (tests/data/blind_notes/):
# the first was used while the dictionaries were built; "b" and "c" were each measured once blind
# (figures in docs/EMBEDDINGS.md), then their failures were read and general defects fixed.
SOURCES = [ROOT / "tests" / "data" / f"dedup_pairs_blind_{name}.jsonl"
           for name in ("zh17", "zh17b", "zh17c", "zh17d", "zh17e", "zh17f", "zh17g", "zh17h", "zh17i", "zh17j", "zh17k", "zh17l", "zh17m", "zh17n", "zh17o", "zh17p", "zh17q")]
LABELS = ("paraphrase", "contradiction", "near_miss", "unrelated")


def one_word(a: str, b: str) -> bool:
    """The two texts differ by one replaced stretch of at most two words on each side."""
    from memory_lake.maintain.dedup import _normalise, _phrase_words

    sa, sb = _phrase_words(_normalise(a)), _phrase_words(_normalise(b))
    ops = [op for op in difflib.SequenceMatcher(a=sa, b=sb, autojunk=False).get_opcodes() if op[0] != "equal"]
    return len(ops) == 1 and ops[0][0] == "replace" and ops[0][2] - ops[0][1] <= 2 and ops[0][4] - ops[0][3] <= 2


from dedup_blind import outcomes  # noqa: E402  (each pair in its own scope, the real dedup step)


def main(path: Path | None) -> dict:
    path = path or next((p for p in SOURCES if p.exists()), None)
    if path is None:
        print("no blind paraphrase set found (tests/data/dedup_pairs_blind_zh17.jsonl)")
        return {}
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    got = outcomes(pairs)
    table = Counter((p["lang"], p["label"], g) for p, g in zip(pairs, got))
    langs = sorted({p["lang"] for p in pairs})
    print(f"{path}: {len(pairs)} pairs")
    print(f"{'lang':4} {'label':13} {'merged':>7} {'queued':>7} {'apart':>7}")
    for lang in langs:
        for label in LABELS:
            row = [table[(lang, label, g)] for g in ("merged", "queued", "apart")]
            if sum(row):
                print(f"{lang:4} {label:13} {row[0]:7} {row[1]:7} {row[2]:7}")
    kinds = Counter((p["lang"], p.get("kind", ""), g == "merged") for p, g in zip(pairs, got) if p["label"] == "paraphrase")
    print("paraphrases merged per kind:")
    for lang, kind in sorted({(l, k) for l, k, _ in kinds}):
        merged, total = kinds[(lang, kind, True)], kinds[(lang, kind, True)] + kinds[(lang, kind, False)]
        print(f"  {lang} {kind or '-':28} {merged}/{total}")
    figures: dict = {}
    for lang in langs:
        words = [g == "merged" for p, g in zip(pairs, got)
                 if p["lang"] == lang and p["label"] == "paraphrase" and one_word(p["a"], p["b"])]
        every = [g == "merged" for p, g in zip(pairs, got) if p["lang"] == lang and p["label"] == "paraphrase"]
        figures[f"one_word_paraphrases_merged_{lang}"] = round(sum(words) / len(words), 3) if words else None
        figures[f"one_word_paraphrases_{lang}"] = len(words)
        figures[f"paraphrases_merged_{lang}"] = round(sum(every) / len(every), 3) if every else None
    merged = [p for p, g in zip(pairs, got) if g == "merged"]
    figures["contradictions_merged"] = sum(p["label"] == "contradiction" for p in merged)
    figures["near_misses_merged"] = sum(p["label"] == "near_miss" for p in merged)
    figures["unrelated_merged"] = sum(p["label"] == "unrelated" for p in merged)
    figures["precision"] = round(sum(p["label"] == "paraphrase" for p in merged) / len(merged), 3) if merged else None
    contradictions = [g for p, g in zip(pairs, got) if p["label"] == "contradiction"]
    figures["contradictions_queued"] = round(contradictions.count("queued") / len(contradictions), 3) if contradictions else None
    print(json.dumps(figures))
    wrong = [(p, g) for p, g in zip(pairs, got) if (p["label"] == "paraphrase") != (g == "merged")]
    if wrong:
        print("pairs decided against their label:")
        for p, g in wrong:
            print(f"  [{p['lang']} {p['label']} {p.get('kind', '')}] {g}: {p['a']!r} / {p['b']!r}")
    return figures


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Dedup on the blind paraphrase sets of issue 17: one-word "
                                     "paraphrases merged per language, contradictions merged, precision.")
    parser.add_argument("pairs", nargs="?", type=Path,
                        help="one JSON Lines set of pairs (default: every tests/data/dedup_pairs_blind_zh17*.jsonl)")
    args = parser.parse_args()
    if args.pairs is not None and not args.pairs.is_file():
        parser.error(f"no such file: {args.pairs}")
    for source in [args.pairs] if args.pairs else [s for s in SOURCES if s.exists()]:
        main(source)
    import dedup_blind

    dedup_blind.main(ROOT / "tests" / "data" / "dedup_pairs_blind.jsonl")
