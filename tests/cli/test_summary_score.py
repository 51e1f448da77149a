"""`memory-lake summary-score`: text and JSON Lines sources, bad lines, exit codes, the --json shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_lake.cli import main

from ..maintain.test_evaluate import SOURCE_EN, SOURCE_ZH, SUMMARY_EN, SUMMARY_ZH, THRESHOLDS

KEYS = ["retention", "compression", "readability", "accuracy", "passed", "thresholds", "missing_facts",
        "unsupported_statements", "source_tokens", "summary_tokens", "skipped_lines"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_text_source_that_passes_prints_the_scores_and_exits_0(tmp_path, capsys):
    (tmp_path / "source.txt").write_text("\n".join(SOURCE_EN), encoding="utf-8")
    (tmp_path / "summary.md").write_text(SUMMARY_EN, encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(tmp_path / "source.txt"),
                         "--summary", str(tmp_path / "summary.md"))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "summary-score: passed"
    assert [line.split()[0] for line in lines[1:6]] == ["retention", "compression", "readability", "accuracy",
                                                        "max_tokens"]
    assert all(line.split()[-1] == "ok" for line in lines[1:6])
    assert lines[1].split()[1:] == ["1.00", ">=", "0.90", "ok"]
    assert lines[-2:] == ["missing facts: none (every key fact of the source is in the summary)",
                          "unsupported statements: none (every statement is backed by a source sentence)"]


def test_json_lines_source_with_bad_lines_skips_and_names_them(tmp_path, capsys):
    good = [json.dumps({"content": text, "id": n}, ensure_ascii=False) for n, text in enumerate(SOURCE_ZH)]
    lines = good[:3] + ["{not json", "[1, 2]", json.dumps({"text": "no content field"})] + good[3:]
    (tmp_path / "source.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    changed = SUMMARY_ZH.replace("降到320毫秒", "降到220毫秒")
    (tmp_path / "summary.md").write_text(changed, encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(tmp_path / "source.jsonl"),
                         "--summary", str(tmp_path / "summary.md"), "--json")
    assert code == 1
    data = json.loads(out)
    assert list(data) == KEYS
    assert {k: v for k, v in data.items() if k not in ("compression", "source_tokens", "summary_tokens", "retention",
                                                       "accuracy")} == {
        "readability": 1.0, "passed": False, "thresholds": THRESHOLDS, "missing_facts": ["number: 320"],
        "unsupported_statements": ["缓存改造后延迟从850毫秒降到220毫秒（王芳）。"],
        "skipped_lines": [{"line": 4, "reason": "not valid JSON (Expecting property name enclosed in double quotes)"},
                          {"line": 5, "reason": "not a JSON object"},
                          {"line": 6, "reason": "no string field 'content'"}],
    }
    assert data["accuracy"] == round(6 / 7, 4) and data["retention"] < 1.0 and data["compression"] >= 3.0
    assert err.strip() == (f"note: skipped 3 bad line(s) of {tmp_path / 'source.jsonl'}: line 4: not valid JSON "
                           "(Expecting property name enclosed in double quotes); line 5: not a JSON object; "
                           "line 6: no string field 'content'")


@pytest.mark.models
def test_failing_summary_exits_1_and_lists_what_failed(tmp_path, capsys):
    (tmp_path / "source.txt").write_text("\n".join(SOURCE_EN), encoding="utf-8")
    summary = SUMMARY_EN.replace("- Bob needs to write the rollback plan by Friday.\n", "")
    (tmp_path / "summary.md").write_text(summary + "- Decided to cancel the mobile app release.\n", encoding="utf-8")
    code, out, _ = run(capsys, "summary-score", "--source", str(tmp_path / "source.txt"),
                       "--summary", str(tmp_path / "summary.md"))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "summary-score: FAILED (retention, accuracy)"
    assert lines[-6:] == ["missing facts (3):", "  - name: Bob",
                          "  - todo: Alice: Bob needs to write the rollback plan by Friday.", "  - date: Friday",
                          "unsupported statements (1):", "  - Decided to cancel the mobile app release."]


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    (tmp_path / "summary.md").write_text(SUMMARY_EN, encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(tmp_path / "missing.txt"),
                         "--summary", str(tmp_path / "summary.md"))
    assert (code, out, err) == (2, "", f"error: --source {tmp_path / 'missing.txt'}: no such file\n")
    (tmp_path / "source.txt").write_text("\n".join(SOURCE_EN), encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(tmp_path / "source.txt"),
                         "--summary", str(tmp_path / "nope.md"), "--json")
    assert (code, out, err) == (2, "", f"error: --summary {tmp_path / 'nope.md'}: no such file\n")
    (tmp_path / "bad.jsonl").write_text("{broken\n", encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(tmp_path / "bad.jsonl"),
                         "--summary", str(tmp_path / "summary.md"))
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == f"error: --source {tmp_path / 'bad.jsonl'}: no source text to score against " \
                                   "(1 bad line(s) skipped)"
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    code, _, err = run(capsys, "summary-score", "--source", str(tmp_path / "latin1.txt"),
                       "--summary", str(tmp_path / "summary.md"))
    assert code == 2 and err.startswith(f"error: --source {tmp_path / 'latin1.txt'}: not UTF-8 text")


def test_max_tokens_option_is_a_threshold(tmp_path, capsys):
    (tmp_path / "source.txt").write_text("\n".join(SOURCE_EN), encoding="utf-8")
    (tmp_path / "summary.md").write_text(SUMMARY_EN, encoding="utf-8")
    code, out, _ = run(capsys, "summary-score", "--source", str(tmp_path / "source.txt"),
                       "--summary", str(tmp_path / "summary.md"), "--max-tokens", "50", "--json")
    data = json.loads(out)
    assert (code, data["passed"], data["thresholds"]["max_tokens"]) == (1, False, 50)
    assert data["summary_tokens"] > 50


@pytest.mark.process  # starts a process (the subject here)
def test_console_script_help_names_the_exit_codes(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "memory_lake.cli", "summary-score", "--help"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0
    assert ("Exit 0 when the summary passes every threshold, 1 when one fails, 2 for bad input"
            in " ".join(done.stdout.split()))


def test_json_lines_nested_too_deeply_are_skipped_lines_not_a_crash(tmp_path, capsys):
    # issue 37.8: a line nested 10,000 levels deep ended the command with "unexpected RecursionError", exit 1
    deep_array = "[" * 10_000 + "]" * 10_000
    deep_object = '{"a":' * 10_000 + "1" + "}" * 10_000
    deep_extra = '{"content": "Alice: hello", "extra": ' + deep_array + "}"
    huge_number = '{"content": "Alice: hello", "n": ' + "1" * 5000 + "}"
    good = [json.dumps({"content": text}) for text in SOURCE_EN]
    source = tmp_path / "source.jsonl"
    source.write_text("\n".join([deep_array, *good[:2], deep_object, deep_extra, huge_number, *good[2:]]) + "\n",
                      encoding="utf-8")
    (tmp_path / "summary.md").write_text(SUMMARY_EN, encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(source), "--summary", str(tmp_path / "summary.md"),
                         "--json")
    deep = "too deeply nested to read (more levels of [ or { than the JSON reader follows)"
    digits = "not valid JSON (Exceeds the limit (4300 digits) for integer string conversion)"
    assert code == 0
    assert json.loads(out)["skipped_lines"] == [{"line": 1, "reason": deep}, {"line": 4, "reason": deep},
                                                {"line": 5, "reason": deep}, {"line": 6, "reason": digits}]
    assert err == (f"note: skipped 4 bad line(s) of {source}: line 1: {deep}; line 4: {deep}; line 5: {deep}; "
                   f"line 6: {digits}\n")

    source.write_text(deep_object + "\n", encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(source), "--summary", str(tmp_path / "summary.md"))
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"note: skipped 1 bad line(s) of {source}: line 1: {deep}",
                                f"error: --source {source}: no source text to score against (1 bad line(s) skipped)"]

    # as a summary line it is a statement like any other: unsupported, scored in one pass over it
    (tmp_path / "source.txt").write_text("\n".join(SOURCE_EN), encoding="utf-8")
    (tmp_path / "summary.md").write_text(SUMMARY_EN + f"- {deep_object}\n- {deep_array}\n", encoding="utf-8")
    code, out, err = run(capsys, "summary-score", "--source", str(tmp_path / "source.txt"),
                         "--summary", str(tmp_path / "summary.md"), "--json")
    data = json.loads(out)
    assert (code, err, data["passed"], data["accuracy"] < THRESHOLDS["accuracy"]) == (1, "", False, True)
    assert [s[:10] for s in data["unsupported_statements"]] == ['{"a":{"a":']
