"""Issue 35.1: a scope that makes a maintenance step raise is recorded, skipped, and the run goes on
for every other scope; the run publishes the rest and ends degraded (exit 5, a Completed state
named Degraded under Prefect), and the report, the CLI and the webhook body name the scope."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from memory_lake import Lake
from memory_lake.cli import main
# summarize (summaries/step.py) reads make_summary: patch it there
from memory_lake.maintain.summaries import step as summaries_module
from memory_lake.maintain import summarize
from memory_lake.maintain.summaries import UNREACHABLE_TOKENS, key_fact_coverage
from memory_lake.observe import run_nightly_steps
from memory_lake.observe.notify import run_payload

from ..conftest import AS_OF, rows, write_jsonl
from ..maintain.conversation import build_conversation

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "locomo" / "locomo10.json"
# no embedding model: the steps under test do not need one, and the test stays in the edit loop
NO_MODELS = '[search]\nmodel = "none"\nmultilingual_model = "none"\n'


def _conversation(tenant: str, user: str) -> list[dict]:
    """A scope whose short-term memories are a long planning conversation: worth a summary."""
    return [{"id": f"{tenant}-t{k:02d}", "tenant": tenant, "agent_id": "bot", "user_id": user, "tier": "short_term",
             "content": t["content"], "created_at": (AS_OF - timedelta(days=12 - k)).isoformat() + "Z"}
            for k, t in enumerate(build_conversation(turns=12, filler=8))]


@pytest.fixture
def two_tenants(tmp_path) -> Lake:
    lake = Lake.init(tmp_path / "lake")
    (lake.root / "memory-lake.toml").write_text(NO_MODELS, encoding="utf-8")
    write_jsonl(lake.inbox / "a.jsonl", _conversation("acme", "alice") + _conversation("globex", "gina"))
    return Lake.open(lake.root)


def _raise_for(tenant: str, monkeypatch) -> None:
    """An injected failure: making the summary of `tenant`'s scope raises (a stand-in for text the
    summariser cannot handle; the real one, fixed, is the LoCoMo test below)."""
    real = summaries_module.make_summary

    def make_summary(item, policy, max_tokens=None):
        if item.key["tenant"] == tenant:
            raise OverflowError("cannot convert float infinity to integer")
        return real(item, policy, max_tokens)

    monkeypatch.setattr(summaries_module, "make_summary", make_summary)


def test_a_scope_whose_summary_raises_is_skipped_and_the_run_publishes_the_rest_degraded(two_tenants, monkeypatch,
                                                                                          tmp_path):
    lake = two_tenants
    _raise_for("globex", monkeypatch)
    summary = run_nightly_steps(lake, AS_OF, tmp_path / "reports")

    assert summary["status"] == "degraded" and summary["publish"]["status"] == "published"
    (error,) = summary["errors"]
    traceback_file = f"logs/step-errors/{summary['run_id']}/summarize-1.txt"
    assert error == {"step": "summarize", "tenant": "globex", "agent_id": "bot", "user_id": "gina", "session_id": None,
                     "item": "scope summary", "error": "OverflowError: cannot convert float infinity to integer",
                     "traceback_file": traceback_file}
    assert "in make_summary" in (lake.root / traceback_file).read_text(encoding="utf-8")
    assert rows(lake, "SELECT * EXCLUDE (as_of) FROM step_errors") == [
        {"run_id": summary["run_id"], "step": "summarize", "tenant": "globex", "agent_id": "bot", "user_id": "gina",
         "session_id": None, "item": "scope summary", "error": "OverflowError: cannot convert float infinity to integer",
         "traceback_file": traceback_file}]
    assert summary["steps"]["summarize"]["summary"] == (
        "2 keys, 0 unchanged, 1 regenerated, 1 published, 0 failed, 0 skipped, 0 fits budget, 0 archived; "
        "1 skipped after an error (scope globex/bot/gina (scope summary): OverflowError: cannot convert float "
        "infinity to integer)")
    # the other tenant's summary is published; the failed one is not, and is tried again next run
    published = pl.read_parquet(lake.exports / "CURRENT" / "memories.parquet")
    assert published.group_by("tenant", "type").len().sort("tenant", "type").rows() == [
        ("acme", "other", 12), ("acme", "summary", 1), ("globex", "other", 12)]
    assert rows(lake, "SELECT tenant, status FROM summary_state ORDER BY tenant") == [
        {"tenant": "acme", "status": "published"}]
    # the report names the step, the scope and the error, and where the traceback is
    page = Path(summary["report"]).read_text(encoding="utf-8")
    assert "Skipped after an error" in page and "globex/bot/gina" in page and traceback_file in page
    assert "degraded" in page
    # the webhook body: the outcome and the scope, the error's kind only (a message may quote data)
    body = run_payload(lake, AS_OF, summary["run_id"],
                       [{"name": "summarize", "counts": {}, "details": {}, "errors": summary["errors"]}])
    assert body["outcome"] == "degraded" and body["step_errors"] == [
        {"step": "summarize", "tenant": "globex", "agent_id": "bot", "user_id": "gina", "session_id": None,
         "error": "OverflowError"}]

    # the next run, with the failure gone, summarises the skipped scope: nothing was lost
    monkeypatch.undo()
    again = run_nightly_steps(lake, AS_OF + timedelta(days=1), tmp_path / "reports")
    assert again["status"] == "ok" and "errors" not in again
    assert rows(lake, "SELECT tenant, status FROM summary_state ORDER BY tenant") == [
        {"tenant": "acme", "status": "published"}, {"tenant": "globex", "status": "published"}]


def test_a_whole_step_that_raises_is_skipped_and_the_cli_exits_5_naming_it(two_tenants, monkeypatch, capsys):
    import memory_lake.maintain as maintain

    def broken(*args, **kwargs):
        raise RuntimeError("entity table unreadable")

    monkeypatch.setattr(maintain, "extract_entities", broken)
    code = main(["--lake", str(two_tenants.root), "run", "nightly", "--no-prefect", "--as-of", "2026-11-30T00:00:00Z"])
    out, err = capsys.readouterr()
    assert code == 5, err
    assert "run nightly-20261130T000000" in out and "): degraded in" in out
    assert ("step extract_entities skipped the whole step: RuntimeError: entity table unreadable; the rest of the run "
            "went on (traceback: logs/step-errors/") in err
    assert "published v1" in out  # the rest was published
    assert rows(two_tenants, "SELECT step, tenant, error FROM step_errors") == [
        {"step": "extract_entities", "tenant": None, "error": "RuntimeError: entity table unreadable"}]
    assert rows(two_tenants, "SELECT status FROM runs") == [{"status": "degraded"}]


def test_a_failure_outside_the_maintenance_steps_still_fails_the_run(two_tenants, monkeypatch):
    import memory_lake.publish as publish

    def stage_export(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(publish, "stage_export", stage_export)
    with pytest.raises(Exception, match="failed in step stage_export: RuntimeError: disk full"):
        run_nightly_steps(two_tenants, AS_OF)
    assert rows(two_tenants, "SELECT status FROM runs") == [{"status": "failed"}]
    assert not (two_tenants.exports / "CURRENT").exists()


LOCOMO_CRASH = (0, "session_6")  # conversation 0, the session whose turn quotes "Charlotte's Web"


def _locomo_session() -> list[str]:
    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo is read from {LOCOMO} (../shared/benchmarks/locomo): not here")
    conversation = json.loads(LOCOMO.read_text(encoding="utf-8"))[LOCOMO_CRASH[0]]["conversation"]
    return [f"{turn['speaker']}: {turn['text']}" for turn in conversation[LOCOMO_CRASH[1]]]


def test_the_locomo_session_that_stopped_every_night_is_skipped_with_the_reason(tmp_path):
    """Observed: every nightly run failed in summarize with OverflowError (a key fact, the book
    title, held by no whole sentence cost infinitely many tokens, and math.ceil(inf) raised)."""
    turns = _locomo_session()
    coverage = key_fact_coverage(turns)
    assert coverage.least_tokens(0.9) == UNREACHABLE_TOKENS
    lake = Lake.init(tmp_path / "lake")
    (lake.root / "memory-lake.toml").write_text(NO_MODELS + "[summaries]\nmax_tokens = 100\n", encoding="utf-8")
    lake = Lake.open(lake.root)
    write_jsonl(lake.inbox / "locomo.jsonl", [
        {"id": f"conv0-s6-{n:02d}", "tenant": "locomo", "agent_id": "chat", "user_id": "conv-0", "session_id": "session_6",
         "tier": "short_term", "content": text, "created_at": (AS_OF - timedelta(minutes=60 - n)).isoformat() + "Z"}
        for n, text in enumerate(turns)])
    lake.ingest(as_of=AS_OF)
    report = summarize(lake, AS_OF)
    assert report.errors == []
    (skipped,) = [s for s in report.details["skipped"] if s["session_id"] == "session_6"]
    assert skipped["reason"].startswith("the 16 memories of session session_6 hold key facts that no whole "
                                        "sentence of them holds")


def test_a_scope_whose_entities_raise_is_left_unread_and_the_others_are_extracted(tmp_path, monkeypatch):
    # extract_mentions (entities/extract.py) reads _english_mentions: patch it there
    from memory_lake.maintain.entities import extract as entities_module
    from memory_lake.maintain import extract_entities

    lake = Lake.init(tmp_path / "lake")
    write_jsonl(lake.inbox / "a.jsonl", [
        {"id": "a1", "tenant": "acme", "agent_id": "bot", "user_id": "alice", "content": "Alice met Priya in Berlin."},
        {"id": "b1", "tenant": "acme", "agent_id": "bot", "user_id": "bruno", "content": "Bruno flew to Zanzibar."}])
    lake.ingest(as_of=AS_OF)
    real = entities_module._english_mentions

    def english_mentions(sentence, *args):
        if "Zanzibar" in sentence:  # an injected failure on one scope's text
            raise ValueError("unreadable sentence")
        return real(sentence, *args)

    monkeypatch.setattr(entities_module, "_english_mentions", english_mentions)
    report = extract_entities(lake, AS_OF)
    assert [{k: e[k] for k in ("step", "tenant", "agent_id", "user_id", "item", "error")} for e in report.errors] == [
        {"step": "extract_entities", "tenant": "acme", "agent_id": "bot", "user_id": "bruno", "item": "1 memory",
         "error": "ValueError: unreadable sentence"}]
    assert rows(lake, "SELECT memory_id FROM entity_extractions ORDER BY 1") == [{"memory_id": "a1"}]
    assert {r["name"] for r in rows(lake, "SELECT name FROM entities")} >= {"Alice", "Priya"}
    monkeypatch.undo()  # the next run reads the scope left out
    again = extract_entities(lake, AS_OF + timedelta(days=1))
    assert again.errors == [] and again.counts["memories_read"] == 1
    assert rows(lake, "SELECT memory_id FROM entity_extractions ORDER BY 1") == [{"memory_id": "a1"}, {"memory_id": "b1"}]


def _pairs_lake(tmp_path) -> Lake:
    """Two scopes, each with a near-duplicate pair (report / reports) a dedup run merges."""
    lake = Lake.init(tmp_path / "lake")
    (lake.root / "memory-lake.toml").write_text(NO_MODELS, encoding="utf-8")
    write_jsonl(lake.inbox / "a.jsonl", [
        {"id": f"{who}{n}", "tenant": "acme", "agent_id": "bot", "user_id": who, "tier": "long_term",
         "content": f"{name} prefers the quarterly report{'' if n == 1 else 's'} as a PDF attachment",
         "created_at": f"2026-11-0{n}T00:00:00Z"}
        for who, name in (("alice", "Alice"), ("bruno", "Bruno")) for n in (1, 2)])
    lake = Lake.open(lake.root)
    lake.ingest(as_of=AS_OF)
    return lake


def _scope_errors(errors) -> list[dict]:
    return [{k: e[k] for k in ("step", "tenant", "agent_id", "user_id", "item", "error")} for e in errors]


def test_a_pair_the_dedup_guard_cannot_read_is_kept_apart_and_the_other_scope_merges(tmp_path, monkeypatch):
    from memory_lake.maintain import dedup as dedup_step
    # the guard is called by `find_duplicates`, which looks `contradiction` up in the clustering module
    dedup_module = __import__("memory_lake.maintain.dedup.clustering", fromlist=["contradiction"])

    lake = _pairs_lake(tmp_path)
    real = dedup_module.contradiction

    def contradiction(a, b, *args, **kwargs):
        if "Bruno" in a:  # an injected failure on one scope's text
            raise RecursionError("maximum recursion depth exceeded")
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(dedup_module, "contradiction", contradiction)
    report = dedup_step(lake, AS_OF)
    assert _scope_errors(report.errors) == [
        {"step": "dedup", "tenant": "acme", "agent_id": "bot", "user_id": "bruno", "item": "memories bruno1 and bruno2",
         "error": "RecursionError: maximum recursion depth exceeded"}]
    assert rows(lake, "SELECT id, status, merged_into FROM memories ORDER BY id") == [
        {"id": "alice1", "status": "active", "merged_into": None},
        {"id": "alice2", "status": "merged", "merged_into": "alice1"},
        {"id": "bruno1", "status": "active", "merged_into": None},
        {"id": "bruno2", "status": "active", "merged_into": None}]
    assert rows(lake, "SELECT count(*) AS n FROM conflicts") == [{"n": 0}]  # kept apart, never filed


def test_a_scope_that_makes_the_dedup_plan_raise_is_left_out_and_the_others_merge(tmp_path, monkeypatch):
    from memory_lake.maintain import dedup as dedup_step
    # the plan of every scope is made by `_isolated_plan`, which looks `find_duplicates` up in the step module
    dedup_module = __import__("memory_lake.maintain.dedup.step", fromlist=["find_duplicates"])

    lake = _pairs_lake(tmp_path)
    real = dedup_module.find_duplicates

    def find_duplicates(frame, *args, **kwargs):
        if "bruno" in frame["user_id"].to_list():
            raise MemoryError("the near pass ran out of memory")
        return real(frame, *args, **kwargs)

    monkeypatch.setattr(dedup_module, "find_duplicates", find_duplicates)
    report = dedup_step(lake, AS_OF)
    assert _scope_errors(report.errors) == [
        {"step": "dedup", "tenant": "acme", "agent_id": "bot", "user_id": "bruno", "item": "2 memories",
         "error": "MemoryError: the near pass ran out of memory"}]
    assert report.counts["merged"] == 1
    assert [r["id"] for r in rows(lake, "SELECT id FROM memories WHERE status = 'merged'")] == ["alice2"]


def test_a_scope_whose_health_raises_is_left_out_of_the_scopes_and_the_run_is_degraded(tmp_path, monkeypatch):
    from memory_lake.observe import health as health_module

    lake = _pairs_lake(tmp_path)
    real = health_module._metrics

    def metrics(row, *args, **kwargs):
        if row.get("user_id") == "bruno":
            raise ZeroDivisionError("division by zero")
        return real(row, *args, **kwargs)

    monkeypatch.setattr(health_module, "_metrics", metrics)
    summary = run_nightly_steps(lake, AS_OF, tmp_path / "reports")
    assert summary["status"] == "degraded" and summary["publish"]["status"] == "published"
    assert _scope_errors(summary["errors"]) == [
        {"step": "snapshot_health", "tenant": "acme", "agent_id": "bot", "user_id": "bruno", "item": "scope metrics",
         "error": "ZeroDivisionError: division by zero"}]
    assert rows(lake, "SELECT level, user_id FROM health_snapshots ORDER BY level, user_id") == [
        {"level": "overall", "user_id": None}, {"level": "scope", "user_id": "alice"},
        {"level": "tenant", "user_id": None}]


def test_a_text_the_tokeniser_cannot_take_is_left_unindexed_and_tried_again(tmp_path, monkeypatch):
    from memory_lake.search import indexing

    lake = _pairs_lake(tmp_path)
    real = indexing.term_counts

    def term_counts(hashes, texts):
        if any("Bruno" in t for t in texts):
            raise UnicodeError("cannot segment")
        return real(hashes, texts)

    monkeypatch.setattr(indexing, "term_counts", term_counts)
    report = lake.index(as_of=AS_OF)
    assert _scope_errors(report.errors) == [
        {"step": "index", "tenant": "acme", "agent_id": "bot", "user_id": "bruno", "item": f"tokenising memory bruno{n}",
         "error": "UnicodeError: cannot segment"} for n in (1, 2)]
    assert report.counts["tokenized"] == 2
    assert lake.search("quarterly report", tenant="acme", user="alice", mode="keyword")[0]["id"] in ("alice1", "alice2")
    monkeypatch.undo()
    assert lake.index(as_of=AS_OF).counts["tokenized"] == 2  # the two left out, now


def test_a_scope_whose_context_pack_raises_is_published_with_a_pack_that_says_so(tmp_path, monkeypatch):
    from memory_lake.publish import export as export_module

    lake = _pairs_lake(tmp_path)
    real = export_module._context_pack

    def context_pack(header, *args, **kwargs):
        if header["user_id"] == "bruno" and args and args[0]:
            raise KeyError("conflict_with")
        return real(header, *args, **kwargs)

    monkeypatch.setattr(export_module, "_context_pack", context_pack)
    summary = run_nightly_steps(lake, AS_OF, tmp_path / "reports")
    assert summary["status"] == "degraded" and summary["publish"]["status"] == "published"
    assert _scope_errors(summary["errors"]) == [
        {"step": "stage_export", "tenant": "acme", "agent_id": "bot", "user_id": "bruno", "item": "context.md",
         "error": "KeyError: 'conflict_with'"}]
    scopes = lake.exports / "CURRENT" / "scopes" / "acme" / "bot"
    assert "could not be built tonight" in (scopes / "bruno" / "context.md").read_text(encoding="utf-8")
    assert "could not be built" not in (scopes / "alice" / "context.md").read_text(encoding="utf-8")
    bruno = json.loads((scopes / "bruno" / "memory.json").read_text(encoding="utf-8"))
    assert [m["id"] for m in bruno["memories"]] == ["bruno1"]


def test_compress_conversation_keeps_the_turns_when_its_summary_fails_the_gate():
    """Issue 35.4, from LoCoMo conversation 1, session 1 (the one with "Lost my job as a banker"):
    in 200 tokens the summary of its older turns fails its gate (a key fact, a book title, dropped);
    it used to replace them all the same. The turns stay verbatim and the note says why."""
    from memory_lake.maintain import compress_conversation

    if not LOCOMO.exists():
        pytest.skip(f"LoCoMo is read from {LOCOMO} (../shared/benchmarks/locomo): not here")
    session = json.loads(LOCOMO.read_text(encoding="utf-8"))[1]["conversation"]["session_1"]
    turns = [{"role": t["speaker"], "content": t["text"]} for t in session]
    compressed = compress_conversation(turns, max_tokens=200)
    assert compressed.result is not None and not compressed.result.passed
    assert compressed.summary == "" and compressed.recent == turns
    assert compressed.context == "\n\n".join(f"{t['role']}: {t['content']}" for t in turns) + "\n"
    assert compressed.note.startswith("kept every turn whole: the summary of turns 1-23 failed its gate (retention ")
    assert compressed.note.endswith(f"the context takes {compressed.context_tokens} tokens, over max_tokens=200")
    assert "Lost my job as a banker" in compressed.context


def test_under_prefect_a_degraded_run_is_a_completed_state_named_degraded(prefect_harness, two_tenants, monkeypatch):
    import memory_lake.maintain as maintain
    from flows.nightly import nightly

    def extract_entities(*args, **kwargs):
        raise RuntimeError("entity table unreadable")

    monkeypatch.setattr(maintain, "extract_entities", extract_entities)
    state = nightly(str(two_tenants.root), as_of="2026-11-30T00:00:00Z", return_state=True)
    assert (state.type.value, state.name) == ("COMPLETED", "Degraded")
    assert state.message.endswith("DEGRADED: published v1; 1 skipped after an error (see Step errors)")
    summary = state.result()
    assert summary["status"] == "degraded" and summary["errors"][0]["step"] == "extract_entities"


def test_a_forget_queued_while_the_run_holds_the_lake_is_applied_before_it_stages(tmp_path):
    """Issue 35.6: a forget queued during a run (the lake held, so it waits in inbox/decisions) was
    published by that very run. It is applied before the export is staged."""
    from memory_lake.maintain import queue_decision
    from memory_lake.observe import STEP_LISTENERS

    lake = _pairs_lake(tmp_path)

    def forget_during_the_run(event, name, result):
        if (event, name) == ("start", "summarize"):  # what `memory-lake forget` does while a run holds the lake
            queue_decision(lake, {"kind": "forget", "ids": ["bruno1", "bruno2"], "tenant": None, "agent": None,
                                  "user": None, "operator": "user", "reason": "asked to be forgotten",
                                  "requested_at": "2026-11-30T00:00:00Z"}, AS_OF)

    STEP_LISTENERS.append(forget_during_the_run)
    try:
        summary = run_nightly_steps(lake, AS_OF, tmp_path / "reports")
    finally:
        STEP_LISTENERS.remove(forget_during_the_run)
    assert summary["status"] == "ok" and summary["publish"]["status"] == "published"
    assert "queued during the run" in summary["steps"]["stage_export"]["summary"]
    published = pl.read_parquet(lake.exports / "CURRENT" / "memories.parquet")
    assert sorted(published["id"].to_list()) == ["alice1"]  # alice2 merged into it; bruno's forgotten
    assert "bruno" not in json.dumps(sorted(p.name for p in (lake.exports / "CURRENT" / "scopes" / "acme" / "bot")
                                                .iterdir()))
    assert rows(lake, "SELECT id, status FROM memories WHERE id LIKE 'bruno%' ORDER BY id") == [
        {"id": "bruno1", "status": "deleted"}, {"id": "bruno2", "status": "deleted"}]
