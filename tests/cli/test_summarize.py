"""`memory-lake summarize`: one entry per scope summarised, readable output, empty results say why, a
read that never waits for a run."""

from __future__ import annotations

import json
from datetime import timedelta

from memory_lake.cli import main

from ..conftest import AS_OF, held_by_another_process, rows, write_jsonl
from ..maintain.test_summaries import _turn_memories


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_summarize_json_human_and_empty(lake, tmp_path, capsys):
    session = [dict(m, id=f"s{k}", session_id="sess-1", user_id="carol", tier="long_term")
               for k, m in enumerate(_turn_memories())]
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", _turn_memories() + session + [
        {"id": "tiny", "tenant": "acme", "agent_id": "bot", "user_id": "bob", "content": "Bob decided to use Kafka."}])],
        as_of=AS_OF)
    code, out, _ = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--json")
    assert code == 0
    data = json.loads(out)
    assert [(s["tenant"], s["agent_id"], s["user_id"], s["session_id"]) for s in data["scopes"]] == [
        ("acme", "bot", "alice", None), ("acme", "bot", "carol", "sess-1")]
    for entry in data["scopes"]:
        assert set(entry["scores"]) == {"retention", "compression", "readability", "accuracy"}
        assert entry["passed"] is True and entry["missing_facts"] == [] and entry["summary"].startswith("# Summary")
    assert data["skipped"][0]["user_id"] == "bob" and "nothing to compress" in data["skipped"][0]["reason"]
    assert rows(lake, "SELECT count(*) AS n FROM memories WHERE type = 'summary'") == [{"n": 0}]  # a preview

    code, out, _ = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--user", "alice")
    assert code == 0
    assert out.startswith("== acme / bot / alice, short-term memory: passed\n# Summary of short-term memory")
    assert "-- retention 1.00, compression" in out

    code, out, _ = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--user", "bob")
    assert code == 0 and out.endswith(  # short sources are one line, not one line each
        "== 0 session(s) and 1 scope(s) skipped: their memories already fit the token budget, nothing to compress "
        "(--json lists each)\n")
    code, out, _ = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--user", "bob", "--json")
    assert code == 0 and json.loads(out)["scopes"] == []
    assert json.loads(out)["note"].startswith("nothing to summarise: every scope asked for fits within the budget")
    code, out, err = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--user", "bobby")
    assert code == 2 and "unknown user 'bobby'" in err
    code, out, err = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--max-tokens", "0")
    assert code == 2 and "max_tokens must be a positive number" in err


def test_summarize_reads_the_published_version_while_a_run_holds_the_lake(lake, tmp_path, capsys):
    from memory_lake.publish import publish

    lake.ingest([write_jsonl(tmp_path / "a.jsonl", _turn_memories())], as_of=AS_OF)
    publish(lake, AS_OF + timedelta(minutes=1))
    with held_by_another_process(lake):
        code, out, err = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--json")
    assert code == 0 and "answered from published v1" in err
    assert [s["user_id"] for s in json.loads(out)["scopes"]] == ["alice"]


def test_summarize_says_why_a_scope_of_dense_facts_is_skipped(lake, tmp_path, capsys):
    dense = [{"id": f"d{k}", "tenant": "acme", "agent_id": "bot", "user_id": "dora", "type": "decision",
              "content": f"We decided to give team {k} a quota of {k * 37 + 11} GB on host{k}."} for k in range(60)]
    lake.ingest([write_jsonl(tmp_path / "d.jsonl", dense)], as_of=AS_OF)
    code, out, _ = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme", "--json")
    assert code == 0
    data = json.loads(out)
    (skipped,) = data["skipped"]
    assert data["scopes"] == [] and data["note"].startswith("nothing summarised: no summary of the scopes asked for")
    assert {k: skipped[k] for k in ("user_id", "session_id", "status", "sources")} == {
        "user_id": "dora", "session_id": None, "status": "skipped", "sources": 60}
    assert skipped["reason"].startswith(f"60 short-term memories are already dense facts ({skipped['key_facts']} key "
                                        f"facts in {skipped['source_tokens']} tokens): keeping 90 % of them takes at least")
    assert skipped["reason"].endswith("so any summary would drop facts; agents read them directly")
    code, out, _ = run(capsys, "--lake", str(lake.root), "summarize", "--tenant", "acme")
    assert out.endswith(f"== acme / bot / dora, short-term memory: skipped: {skipped['reason']}\n")
