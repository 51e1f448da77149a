"""Tests for memory_lake.demo.nights: the later nights' follow-up snapshots (`generate_night`), their
dates (`night_as_of`), and what a lake makes of them after three nights (the session's `three_nights`).

The file checks read the written lines back; the lake checks look for each planted thing where the
pipeline must have put it, so NightData cannot merely agree with itself.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memory_lake.demo import (DEMO_AS_OF, MAX_NIGHTS, NightData, demo_searches, generate_demo, generate_night,
                              last_nightly_as_of, night_as_of)
from memory_lake.demo.formats import FORMAT_MEMORIES
from memory_lake.observe.runs import run_nightly_steps
from memory_lake.store import resolve_as_of

from ..conftest import copy_lake
from .test_demo import problems

# the lake of three nights (the session's `three_nights`) is built once, on the notebooks' worker: the
# tests that use it join the xdist group "notebooks" by tests/conftest.py (GROUP_FIXTURES), except the
# one that also needs Prefect's API, which joins "prefect" (a module-wide group here started a second
# Prefect API for it)

NIGHT_FILES = ["01-acme-support.jsonl", "02-globex-ops.jsonl", "03-zhongke-assistant.jsonl", "04-edits.jsonl",
               "05-late-sync.jsonl"]


def lines_of(data: NightData) -> list[tuple[str, int, str]]:
    """(file name, 1-based line, raw text) for every line the night wrote."""
    out = []
    for path in data.files:
        text = path.read_text(encoding="utf-8")
        assert text.endswith("\n")
        out += [(path.name, i, raw) for i, raw in enumerate(text.splitlines(), start=1)]
    return out


def records_of(paths: list[Path]) -> list[tuple[str, int, dict[str, Any]]]:
    """(file name, line, record) for every line that parses to an object (JSON Lines files only)."""
    out = []
    for path in paths:
        if path.suffix != ".jsonl":
            continue
        for i, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append((path.name, i, rec))
    return out


def normalised(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


@pytest.fixture(scope="module")
def inbox_of_three(tmp_path_factory) -> tuple[Path, dict[int, Any]]:
    """Nights 1-4 of seed 7 written into one inbox (files only, no lake)."""
    inbox = tmp_path_factory.mktemp("nights-files")
    return inbox, {1: generate_demo(inbox, seed=7), **{n: generate_night(inbox, n, seed=7) for n in (2, 3, 4)}}


# --- dates and arguments -----------------------------------------------------------------------------


def test_night_as_of_counts_days_from_the_demo_date() -> None:
    assert [night_as_of(n) for n in (1, 2, 3)] == [DEMO_AS_OF, DEMO_AS_OF + timedelta(days=1),
                                                   DEMO_AS_OF + timedelta(days=2)]
    assert night_as_of(3) == datetime(2026, 12, 2, tzinfo=timezone.utc)
    for bad in (0, MAX_NIGHTS + 1, True, "2", 2.0):
        with pytest.raises(ValueError, match="night must be a whole number from 1 to 100"):
            night_as_of(bad)


@pytest.mark.parametrize("night", [1, 0, MAX_NIGHTS + 1])
def test_generate_night_refuses_the_first_night_and_nights_out_of_range(tmp_path: Path, night: int) -> None:
    with pytest.raises(ValueError, match=r"from 2 to 100 \(night 1 is generate_demo\)"):
        generate_night(tmp_path, night)
    assert list(tmp_path.iterdir()) == []


# --- the files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("night", [2, 3])
def test_same_seed_writes_identical_bytes(tmp_path: Path, night: int) -> None:
    a = generate_night(tmp_path / "a", night, seed=7)
    b = generate_night(tmp_path / "b", night, seed=7)
    assert [p.name for p in a.files] == [p.name for p in b.files]
    assert [p.read_bytes() for p in a.files] == [p.read_bytes() for p in b.files]
    assert {**a.__dict__, "files": None, "formats": None} == {**b.__dict__, "files": None, "formats": None}
    assert {k: p.relative_to(tmp_path / "a") for k, p in a.formats.items()} == {
        k: p.relative_to(tmp_path / "b") for k, p in b.formats.items()}
    tree = sorted(f.relative_to(tmp_path / "a") for f in (tmp_path / "a").rglob("*") if f.is_file())
    assert [(tmp_path / "a" / f).read_bytes() for f in tree] == [(tmp_path / "b" / f).read_bytes() for f in tree]
    assert sorted(a.formats) == (["hottree", "letta", "mem0", "transcript", "zep"] if night == 2 else [])


def test_other_seed_writes_other_data_with_the_same_plan(tmp_path: Path) -> None:
    a = generate_night(tmp_path / "a", 2, seed=7)
    b = generate_night(tmp_path / "b", 2, seed=8)
    assert [p.read_bytes() for p in a.files] != [p.read_bytes() for p in b.files]
    assert (a.duplicates, a.edited_id, a.forgotten_id) == (b.duplicates, b.edited_id, b.forgotten_id)
    assert [reason for _, _, reason in a.malformed] == [reason for _, _, reason in b.malformed]


def test_files_sort_after_the_earlier_nights_and_are_written_atomically(inbox_of_three) -> None:
    inbox, nights = inbox_of_three
    assert [p.name for p in nights[2].files] == ["01" + name for name in NIGHT_FILES]
    assert [p.name for p in nights[3].files] == ["02" + name for name in NIGHT_FILES]
    in_order = [p.name for n in (1, 2, 3, 4) for p in nights[n].files] + [
        "tenant=acme", "tenant=globex", "tenant=zhongke"]  # night 2's other formats, in folders named for their scope
    assert sorted(os.listdir(inbox)) == in_order  # sorted name order is ingest order; no .tmp left


def test_what_each_night_plants(inbox_of_three) -> None:
    _, nights = inbox_of_three
    planted = {n: (d.night, d.as_of, d.duplicates, d.edited_id, d.forgotten_id, d.malformed, d.conflicts, d.tenants)
               for n, d in nights.items() if n > 1}
    assert planted == {
        2: (2, datetime(2026, 12, 1, tzinfo=timezone.utc),
            [("globex-n2-exact-again", "globex-dup-freeze-a"), ("zhongke-n2-near-again", "zk-near-weekly-c")],
            "acme-dup-refund-a", "acme-meeting-3pm",
            [("0102-globex-ops.jsonl", 2, "bad JSON"), ("0103-zhongke-assistant.jsonl", 7, "missing content")],
            [("0105-late-sync.jsonl", 4, "content")], ["acme", "globex", "zhongke"]),
        3: (3, datetime(2026, 12, 2, tzinfo=timezone.utc),
            [("acme-n3-exact-again", "acme-n2-bob-note"), ("zhongke-n3-near-again", "zhongke-n2-wangfang-note")],
            "zhongke-n2-weekly-sync", "globex-n2-heidi-appointment",
            [("0202-globex-ops.jsonl", 17, "missing tenant"), ("0203-zhongke-assistant.jsonl", 7, "unknown tier")],
            [("0205-late-sync.jsonl", 2, "content")], ["acme", "globex", "zhongke"]),
        4: (4, datetime(2026, 12, 3, tzinfo=timezone.utc),
            [("acme-n4-exact-again", "acme-n3-bob-note"), ("zhongke-n4-near-again", "zhongke-n3-wangfang-note")],
            "zhongke-n3-weekly-sync", "globex-n3-heidi-appointment",
            [("0302-globex-ops.jsonl", 16, "bad timestamp"), ("0303-zhongke-assistant.jsonl", 2, "wrong type")],
            [("0305-late-sync.jsonl", 4, "content")], ["acme", "globex", "zhongke"]),
    }


def test_each_malformed_line_is_bad_only_in_its_way(inbox_of_three) -> None:
    _, nights = inbox_of_three
    for night in (2, 3, 4):
        data = nights[night]
        bad = {(name, line): reason for name, line, reason in data.malformed}
        for name, number, raw in lines_of(data):
            reason = bad.get((name, number))
            if reason == "bad JSON":
                with pytest.raises(ValueError):
                    json.loads(raw)
                continue
            found = problems(json.loads(raw))
            assert found == ({reason} if reason else set()), (name, number, found)
    # over nights 2-4 every reason a line can earn on its own is planted once
    assert sorted(r for n in (2, 3, 4) for _, _, r in nights[n].malformed) == sorted(
        ["bad JSON", "missing content", "missing tenant", "unknown tier", "bad timestamp", "wrong type"])


def test_good_lines_counts_every_landing_record(inbox_of_three) -> None:
    _, nights = inbox_of_three
    for night in (2, 3, 4):
        data = nights[night]
        skip = {(name, line) for name, line, _ in data.malformed + data.conflicts}
        good = [rec for name, line, rec in records_of(data.files) if (name, line) not in skip and not rec.get("deleted")]
        assert len(good) == data.good_lines
        assert 60 <= data.good_lines <= 100  # a day of writes, not a second demo


def test_memories_are_written_during_the_day_before_their_night(inbox_of_three) -> None:
    _, nights = inbox_of_three
    for night in (2, 3, 4):
        data = nights[night]
        day = (data.as_of - timedelta(days=1)).strftime("%Y-%m-%dT"), data.as_of.strftime("%Y-%m-%dT00:00:00Z")
        writes = [rec for _, _, rec in records_of(data.files) if "created_at" in rec and "tenant" in rec
                  and rec.get("version") is None and rec["created_at"] not in ("yesterday afternoon", "昨天下午")]
        assert writes and all(day[0] <= rec["created_at"] < day[1] for rec in writes)
        assert all(rec["last_accessed_at"] < day[1] for rec in writes if "last_accessed_at" in rec)
        zh = [rec for rec in writes if rec["tenant"] == "zhongke"]
        assert sum(any("\u4e00" <= ch <= "\u9fff" for ch in rec.get("content", "")) for rec in zh) >= 0.7 * len(zh)
        tiers = [rec.get("tier") for rec in writes]
        assert tiers.count("working") >= 13  # every scope's working memory grows


def test_the_edit_and_the_late_write_name_an_earlier_memory_at_version_1(inbox_of_three) -> None:
    inbox, nights = inbox_of_three
    for night in (2, 3, 4):
        data = nights[night]
        earlier = {rec["id"]: rec for n in range(1, night) for _, _, rec in records_of(nights[n].files) if "id" in rec}
        original = earlier[data.edited_id]
        writes = [(name, line, rec) for name, line, rec in records_of(data.files) if rec.get("id") == data.edited_id]
        (edit_file, _, edit), (late_file, late_line, late) = writes
        assert (edit_file, (late_file, late_line, "content")) == (data.files[3].name, data.conflicts[0])
        scope = ("tenant", "agent_id", "user_id", "created_at")
        assert [edit[k] for k in scope] == [late[k] for k in scope] == [original[k] for k in scope]
        assert edit["version"] == late["version"] == 1 and edit["operator"] == late["operator"] == "agent"
        assert len({original["content"], edit["content"], late["content"]}) == 3
        assert edit["updated_at"] < late["updated_at"] < data.as_of.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_forget_request_names_a_memory_of_an_earlier_night(inbox_of_three) -> None:
    _, nights = inbox_of_three
    for night in (2, 3, 4):
        data = nights[night]
        earlier = {rec["id"]: rec for n in range(1, night) for _, _, rec in records_of(nights[n].files) if "id" in rec}
        forgets = [rec for _, _, rec in records_of(data.files) if rec.get("deleted")]
        assert forgets == [{"id": data.forgotten_id, "tenant": earlier[data.forgotten_id]["tenant"], "deleted": True,
                            "operator": "user", "reason": "user asked"}]


def test_only_the_planted_duplicates_repeat_an_earlier_text(inbox_of_three) -> None:
    """The replay reserves every earlier text: a later night repeats one (in the same scope) only
    where it plants a duplicate, and each planted duplicate repeats the memory it names."""
    _, nights = inbox_of_three
    seen: dict[tuple, set[str]] = defaultdict(set)
    for _, _, rec in records_of(nights[1].files):
        if "content" in rec and "tenant" in rec:
            seen[(rec["tenant"], rec.get("agent_id"), rec.get("user_id"), normalised(rec["content"]))].add(rec.get("id"))
    for night in (2, 3, 4):
        data = nights[night]
        planted = dict(data.duplicates)
        repeats = {}
        for _, _, rec in records_of(data.files):
            if "content" not in rec or "tenant" not in rec or rec.get("id") == data.edited_id:
                continue
            key = (rec["tenant"], rec.get("agent_id"), rec.get("user_id"), normalised(rec["content"]))
            if seen[key]:
                repeats[rec.get("id")] = seen[key]
            seen[key].add(rec.get("id"))
        assert sorted(repeats) == sorted(planted)
        assert all(planted[dup] in ids for dup, ids in repeats.items())


def test_planted_pii_appears_in_the_files(inbox_of_three) -> None:
    _, nights = inbox_of_three
    for night in (2, 3, 4):
        text = "".join(p.read_text(encoding="utf-8") for p in nights[night].files)
        assert len(nights[night].planted_pii) == 2 and all(value in text for value in nights[night].planted_pii)


# --- the lake after three nights (built once per session: about a minute and a half) ---------------


def table(lake_root: Path, query: str, params: list | None = None) -> list[tuple]:
    import duckdb

    with duckdb.connect(str(lake_root / "lake.duckdb"), read_only=True) as con:
        return con.execute(query, params or []).fetchall()


def day(night: int) -> datetime:
    return resolve_as_of(night_as_of(night))


@pytest.mark.slow
def test_three_nightly_runs_on_three_dates_publish_v1_to_v3(three_nights) -> None:
    root = three_nights.root
    assert table(root, "SELECT kind, as_of, status FROM runs ORDER BY as_of") == [
        ("nightly", day(1), "ok"), ("nightly", day(2), "ok"), ("nightly", day(3), "ok")]
    assert [three_nights.runs[n]["publish"]["version"] for n in (1, 2, 3)] == ["v1", "v2", "v3"]
    assert sorted(os.listdir(root / "exports")) == ["CURRENT", "v1", "v2", "v3"]
    assert os.readlink(root / "exports" / "CURRENT").endswith("v3")
    assert table(root, "SELECT DISTINCT as_of FROM health_snapshots ORDER BY 1") == [(day(1),), (day(2),), (day(3),)]
    assert sorted(p.name for p in (root.parent / "reports").glob("*.html")) == ["index.html", "latest.html"]
    assert sorted(p.relative_to(root.parent / "reports").as_posix() for p in (root.parent / "reports").glob("*/*.html")) == [
        f"{day(n):%Y-%m-%d}/{three_nights.runs[n]['run_id']}.html" for n in (1, 2, 3)]


@pytest.mark.slow
def test_the_health_figures_move_from_night_to_night(three_nights) -> None:
    rows = table(three_nights.root, "SELECT metrics FROM health_snapshots WHERE level = 'overall' ORDER BY as_of")
    overall = [json.loads(m) for (m,) in rows]
    hit = [(h["last_7d"], h.get("searches_7d")) for h in (m["hit_rate"] for m in overall)]
    assert hit == [(None, None), (0.6667, 6), (0.7857, 14)]  # 4 of 6 searches hit on day 1, 7 of 8 on day 2
    working = [m["capacity"]["working"]["used"] for m in overall]
    total = [m["total"] for m in overall]
    assert working[0] < working[1] < working[2] and total[0] < total[1] < total[2]
    assert [m["conflicts"]["open"] for m in overall] == sorted({m["conflicts"]["open"] for m in overall})
    quarantined = table(three_nights.root, "SELECT as_of, count(*) FROM quarantine GROUP BY 1 ORDER BY 1")
    assert quarantined == [(day(1), 8), (day(2), 2), (day(3), 2)]


@pytest.mark.slow
def test_what_each_night_planted_lands(three_nights, tmp_path) -> None:
    root = three_nights.root
    for night, data in three_nights.later.items():
        run_id = three_nights.runs[night]["run_id"]
        # the duplicates are merged into one cluster with the memory they repeat (or its canonical)
        for dup, original in data.duplicates:
            clusters = table(root, "SELECT canonical_id, list(member_id) FROM dedup_merges WHERE run_id = ? "
                                   "AND unmerged_at IS NULL AND (canonical_id = ? OR list_contains(?, member_id)) "
                                   "GROUP BY 1", [run_id, dup, [dup]])
            assert len(clusters) == 1, (dup, clusters)
            canonical, members = clusters[0]
            earlier = {original} | {c for (c,) in table(root, "SELECT merged_into FROM memories WHERE id = ?", [original])}
            assert earlier & ({canonical} | set(members)), (dup, original, clusters)
        # the edit is applied (version 2), the late write waits in the conflict queue
        again = generate_night(tmp_path / str(night), night, seed=7)  # the ingested files left the inbox
        edit = next(rec for _, _, rec in records_of(again.files[3:4]) if rec.get("id") == data.edited_id)
        assert table(root, "SELECT content, version, status FROM memories WHERE id = ?", [data.edited_id]) == [
            (edit["content"], 2, "conflicted")]
        ((name, line, _),) = data.conflicts
        assert table(root, "SELECT kind, status, field, source_file, source_line, run_id FROM conflicts "
                           "WHERE memory_id = ?", [data.edited_id]) == [("write", "open", "content", name, line, run_id)]
        # the forgotten memory is a tombstone
        assert table(root, "SELECT status, content FROM memories WHERE id = ?", [data.forgotten_id]) == [("deleted", "")]
        # every malformed line, and nothing else of the night, is quarantined
        assert sorted(table(root, "SELECT file, line, reason FROM quarantine WHERE run_id = ?", [run_id])) == data.malformed
        # the planted PII never reaches the lake's memories
        for value in data.planted_pii:
            assert table(root, "SELECT count(*) FROM memories WHERE contains(content, ?)", [value]) == [(0,)]
        counts = three_nights.runs[night]["steps"]["ingest_inbox"]["counts"]
        # night 2 also brings one input of each other format, each landing whole (a tree is a unit per memory)
        others = FORMAT_MEMORIES if night == 2 else {}
        assert (counts["files"], counts["ingested"] + counts["updated"], counts["forgotten"], counts["quarantined"]) == (
            5 + len(others) + (1 if others else 0), data.good_lines + sum(others.values()), 1, 2)
        assert dict(table(root, "SELECT format, sum(ingested)::INT FROM ingested_files WHERE run_id = ? AND format "
                                "<> 'jsonl' GROUP BY 1", [run_id])) == others
        assert counts.get("skipped, not memories", 0) == (6 if others else 0)  # Letta's deleted one, 5 chat turns


@pytest.mark.slow
def test_rerunning_the_last_night_changes_nothing(three_nights, tmp_path) -> None:
    """`memory-lake demo` run again runs its last night again: the day's searches are not made
    twice, the same files are known by their hash, and the run at the same as_of changes nothing."""
    lake = copy_lake(three_nights.root, tmp_path / "lake")
    # the health snapshot of the night is written again, naming the run that wrote it
    state = """SELECT (SELECT list(m ORDER BY id) FROM memories m),
                      (SELECT list((as_of, level, tenant, agent_id, user_id, metrics::VARCHAR)
                                    ORDER BY as_of, level, tenant, agent_id, user_id)
                       FROM health_snapshots),
                      (SELECT count(*) FROM retrieval_log), (SELECT count(*) FROM quarantine),
                      (SELECT list(c ORDER BY conflict_id) FROM conflicts c), (SELECT count(*) FROM dedup_merges),
                      (SELECT count(*) FROM memory_history), (SELECT count(*) FROM cleanup_log)"""
    before = table(lake.root, state)
    assert last_nightly_as_of(lake) == night_as_of(3)
    assert demo_searches(lake, 2).already_logged
    generate_night(lake.inbox, 3, seed=7)
    summary = run_nightly_steps(lake, day(3), reports_dir=tmp_path / "reports")
    assert summary["publish"]["status"] == "unchanged"
    assert summary["steps"]["ingest_inbox"]["counts"]["ingested"] == 0
    assert table(lake.root, state) == before
    assert sorted(os.listdir(lake.root / "exports")) == ["CURRENT", "v1", "v2", "v3"]


@pytest.mark.slow
def test_the_demo_command_again_skips_the_nights_passed_and_changes_nothing(three_nights, prefect_harness, capsys,
                                                                          tmp_path) -> None:
    from memory_lake.cli import main

    root = tmp_path / "lake"
    shutil.copytree(three_nights.root, root, symlinks=True)
    memories = table(root, "SELECT list(m ORDER BY id) FROM memories m")
    code = main(["--lake", str(root), "--json", "demo", "--reports", str(tmp_path / "reports")])
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert code == 0
    skipped = ("skipped: the lake's last nightly run is dated 2026-12-02, and a demo night never runs before it "
               "(that would re-age a lake that has moved on)")
    assert result["nights"][:2] == [{"night": 1, "as_of": "2026-11-30T00:00:00Z", "skipped": skipped},
                                    {"night": 2, "as_of": "2026-12-01T00:00:00Z", "skipped": skipped}]
    third = result["nights"][2]
    assert {k: v for k, v in third.items() if k != "run"} == {
        "night": 3, "as_of": "2026-12-02T00:00:00Z", "generated_files": 5,
        "searches": {"as_of": "2026-12-01T12:00:00Z", "searches": 0, "with_results": 0, "already_logged": True}}
    assert third["run"]["publish"]["status"] == "unchanged" and result["run"] == third["run"]
    assert (result["as_of"], result["generated_files"]) == ("2026-12-02T00:00:00Z", 5)
    assert captured.err.splitlines()[:3] == [
        f"night 1 of 3 (2026-11-30): {skipped}", f"night 2 of 3 (2026-12-01): {skipped}",
        "night 3 of 3 (2026-12-02): the searches of 2026-12-01 were logged before (not made again); 5 snapshot "
        "file(s) written to inbox/; the nightly run:"]
    assert table(root, "SELECT list(m ORDER BY id) FROM memories m") == memories
    assert sorted(os.listdir(root / "exports")) == ["CURRENT", "v1", "v2", "v3"]
