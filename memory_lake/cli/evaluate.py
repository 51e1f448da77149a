"""The summary-score command: the summary evaluator on any source and summary files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..store import InputError, Policy
from .common import JsonOpt, SetOpt, _options, _show, err, out, parse_overrides

# Exit code of a summary that misses a threshold (bad input is InputError's 2).
EXIT_FAILED = 1
TOO_DEEP = "too deeply nested to read (more levels of [ or { than the JSON reader follows)"


def read_source(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """The source texts of `path` and the lines skipped, as ``{"line", "reason"}``.

    JSON Lines (a ``.jsonl`` / ``.ndjson`` name, or a first non-blank line that starts with ``{``):
    the string ``content`` of each line; a line that is not a JSON object with a string ``content``
    (bad JSON, nested too deeply to read, a number too long to hold) is skipped and reported, never
    fatal. Any other file is text: one source text per paragraph
    (blank-line separated); the evaluator splits lines and sentences itself."""
    if not path.is_file():
        raise InputError(f"--source {path}: " + ("a folder; give one file" if path.is_dir() else "no such file"))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"--source {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"--source {path}: cannot be read ({exc.strerror})") from None
    lines = text.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if path.suffix.lower() not in (".jsonl", ".ndjson") and not first.startswith("{"):
        return [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()], []
    texts, skipped = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append({"line": number, "reason": f"not valid JSON ({exc.msg})"})
            continue
        except RecursionError:  # the reader recurses per level: a line nested thousands deep ends it
            skipped.append({"line": number, "reason": TOO_DEEP})
            continue
        except ValueError as exc:  # valid JSON Python will not hold: an integer of more than 4300 digits
            skipped.append({"line": number, "reason": f"not valid JSON ({str(exc).split(':')[0]})"})
            continue
        content = record.get("content") if isinstance(record, dict) else None
        if not isinstance(record, dict):
            skipped.append({"line": number, "reason": "not a JSON object"})
        elif not isinstance(content, str):
            skipped.append({"line": number, "reason": "no string field 'content'"})
        elif content.strip():
            texts.append(content)
    return texts, skipped


def summary_score(
    ctx: typer.Context,
    source: Annotated[Path, typer.Option("--source", help="The source: a text file (lines or paragraphs) or JSON "
                                         "Lines with a 'content' field per line.", show_default=False)],
    summary: Annotated[Path, typer.Option("--summary", help="The summary, a Markdown file.", show_default=False)],
    max_tokens: Annotated[Optional[int], typer.Option("--max-tokens", help="The summary's token budget "
                                                      "(default [summaries] max_tokens, 500).")] = None,
    set_: SetOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score a summary against its source: retention, compression, readability and accuracy
    against the [summaries] thresholds, with the source's key facts the summary lost and the
    summary's statements the source does not support. Needs no lake.

    Exit 0 when the summary passes every threshold, 1 when one fails, 2 for bad input (a missing
    or unreadable file). Bad JSON Lines are skipped and listed (`skipped_lines`)."""
    from ..maintain import evaluate_summary

    opts = _options(ctx, None, json_out)
    overrides = parse_overrides(set_) or {}
    if max_tokens is not None:
        overrides.setdefault("summaries", {})["max_tokens"] = max_tokens
    policy = Policy().with_overrides(overrides) if overrides else Policy()
    texts, skipped = read_source(source)
    if skipped:
        err.print(f"note: skipped {len(skipped)} bad line(s) of {source}: "
                  + "; ".join(f"line {s['line']}: {s['reason']}" for s in skipped))
    if not summary.is_file():
        raise InputError(f"--summary {summary}: " + ("a folder; give one file" if summary.is_dir() else "no such file"))
    try:
        markdown = summary.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"--summary {summary}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not texts:
        why = f" ({len(skipped)} bad line(s) skipped)" if skipped else ""
        raise InputError(f"--source {source}: no source text to score against{why}")
    score = evaluate_summary(texts, markdown, policy.summaries, model=policy.search.model)
    data = {**score.as_dict(), "skipped_lines": skipped}

    def human() -> None:
        verdict = "passed" if score.passed else f"FAILED ({', '.join(score.failed)})"
        out.print(f"summary-score: {verdict}")
        rows = [("retention", f"{score.retention:.2f}", f">= {score.thresholds['retention']:.2f}"),
                ("compression", f"{score.compression:.1f}x", f">= {score.thresholds['compression']:.1f}x"),
                ("readability", f"{score.readability:.2f}", f">= {score.thresholds['readability']:.2f}"),
                ("accuracy", f"{score.accuracy:.2f}", f">= {score.thresholds['accuracy']:.2f}"),
                ("max_tokens", str(score.summary_tokens), f"<= {score.thresholds['max_tokens']}")]
        for name, value, limit in rows:
            out.print(f"  {name:12} {value:>7}  {limit:9}  {'fail' if name in score.failed else 'ok'}")
        out.print(f"  tokens: source {score.source_tokens}, summary {score.summary_tokens}")
        out.print(f"missing facts ({len(score.missing_facts)}):" if score.missing_facts
                  else "missing facts: none (every key fact of the source is in the summary)")
        for fact in score.missing_facts:
            out.print(f"  - {fact}")
        out.print(f"unsupported statements ({len(score.unsupported_statements)}):" if score.unsupported_statements
                  else "unsupported statements: none (every statement is backed by a source sentence)")
        for statement in score.unsupported_statements:
            out.print(f"  - {statement}")

    _show(opts, data, human)
    if not score.passed:
        raise typer.Exit(EXIT_FAILED)
