"""The inbox helpers' edges that mutation testing found untested (issue 19): dates and bad values
in `write_snapshot`, and a manual edit's time, operator and refusals, as whole outputs."""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, datetime

import pytest

from memory_lake import write_snapshot
from memory_lake.ingest.inbox import edit_memory
from memory_lake.store.errors import InputError, LakeNotFound

from ..conftest import AS_OF, rows, write_jsonl


def test_dates_are_written_as_iso_text(lake):
    path = write_snapshot([{"tenant": "acme", "content": "renew the certificate", "created_at": datetime(2026, 11, 2, 8, 30),
                            "extra_day": date(2026, 12, 24)}], lake.root, name="dates")
    assert path.name == "dates.jsonl"
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == [
        {"tenant": "acme", "content": "renew the certificate", "created_at": "2026-11-02T08:30:00Z",
         "extra_day": "2026-12-24"}]


def test_a_value_json_cannot_write_leaves_no_file(lake):
    with pytest.raises(TypeError) as error:
        write_snapshot([{"tenant": "acme", "content": "tags as a set", "tags": {"a"}}], lake.root, name="bad")
    assert str(error.value) == "set is not JSON serialisable"
    assert [p.name for p in lake.inbox.iterdir() if p.is_file()] == []  # nothing half-written is left


def test_an_edit_is_a_users_write_at_the_given_time(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"id": "m-1", "tenant": "acme", "content": "old text",
                                                      "created_at": "2026-11-01T00:00:00Z"}])], as_of=AS_OF)
    when = datetime(2026, 12, 3, 9, 15)
    result = edit_memory(lake, "m-1", {"content": "new text"}, as_of=when)  # no operator given: a user
    assert {k: result[k] for k in ("memory_id", "base_version", "version", "status", "updated", "conflicted")} == {
        "memory_id": "m-1", "base_version": 1, "version": 2, "status": "active", "updated": 1, "conflicted": 0}
    assert rows(lake, "SELECT content, version, operator, updated_at FROM memories") == [
        {"content": "new text", "version": 2, "operator": "user", "updated_at": when}]
    assert rows(lake, "SELECT change, operator, as_of FROM memory_history WHERE version = 2") == [
        {"change": "update", "operator": "user", "as_of": when}]
    assert re.fullmatch(r"edit-[0-9a-f]{12}", result["trace_id"])
    assert rows(lake, "SELECT trace_id FROM memories") == [{"trace_id": result["trace_id"]}]
    # an agent may edit too, through the same path; the edit changes what it names and nothing else
    (before,) = rows(lake, "SELECT * FROM memories")
    agent = edit_memory(lake, "m-1", {"importance": "0.7"}, operator="agent", as_of=AS_OF)
    assert (agent["version"], agent["updated"]) == (3, 1)
    assert rows(lake, "SELECT * FROM memories") == [{**before, "importance": 0.7, "operator": "agent", "version": 3,
                                                     "trace_id": agent["trace_id"]}]  # updated_at never goes back


def test_edits_that_are_refused_say_what_to_do(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"id": "m-1", "tenant": "acme", "content": "text"}])], as_of=AS_OF)
    with pytest.raises(InputError) as error:
        edit_memory(lake, "m-1", {"status": "archived", "version": "9"}, as_of=AS_OF)
    assert str(error.value) == ("cannot edit status, version: editable fields are content, summary, tags, "
                                "importance, tier, type, expires_at, context_id")
    with pytest.raises(InputError) as error:
        edit_memory(lake, "m-1", {}, as_of=AS_OF)
    assert str(error.value) == "nothing to edit: give --set field=value"
    with pytest.raises(InputError) as error:
        edit_memory(lake, "m-1", {"content": "x"}, operator="system", as_of=AS_OF)
    assert str(error.value) == "operator must be user or agent, not 'system'"
    with pytest.raises(InputError) as error:
        edit_memory(lake, "nope", {"content": "x"}, as_of=AS_OF)
    assert str(error.value) == "no memory 'nope'"
    for name, extra in (("m2.jsonl", {}), ("gone.jsonl", {"version": 1, "deleted": True})):
        lake.ingest([write_jsonl(tmp_path / name, [{"id": "m-2", "tenant": "acme", "content": "forget me", **extra}])],
                    as_of=AS_OF)
    with pytest.raises(InputError) as error:
        edit_memory(lake, "m-2", {"content": "back"}, as_of=AS_OF)
    assert str(error.value) == "memory m-2 is deleted"
    assert list(lake.inbox.glob("*.jsonl")) == []  # a refused edit writes no snapshot
    assert rows(lake, "SELECT content, version FROM memories WHERE id = 'm-1'") == [{"content": "text", "version": 1}]


def test_a_snapshot_lands_in_the_inbox_under_its_final_name(lake, tmp_path):
    import re

    named = write_snapshot([{"tenant": "acme", "content": "用户喜欢喝咖啡"}], lake.root, name="from-agent.jsonl")
    assert named == lake.inbox / "from-agent.jsonl"  # the suffix is not doubled
    assert named.read_bytes() == '{"tenant": "acme", "content": "用户喜欢喝咖啡"}\n'.encode("utf-8")  # UTF-8, not \\u escapes
    unnamed = write_snapshot([{"tenant": "acme", "content": "second"}], lake.root)
    assert unnamed.parent == lake.inbox and re.fullmatch(r"\d{8}T\d{12}-[0-9a-f]{12}\.jsonl", unnamed.name)
    assert sorted(p.name for p in lake.inbox.iterdir() if p.is_file()) == sorted([named.name, unnamed.name])
    # the lake's inbox folder itself is the same target, not a folder inside it
    direct = write_snapshot([{"tenant": "acme", "content": "third"}], lake.inbox, name="direct")
    assert direct == lake.inbox / "direct.jsonl" and not (lake.inbox / "inbox").exists()
    # a lake whose inbox folder was removed gets it back
    shutil.move(lake.inbox, lake.root.parent / "moved-inbox")
    again = write_snapshot([{"tenant": "acme", "content": "after the move"}], lake.root, name="again")
    assert again == lake.inbox / "again.jsonl" and again.is_file()
    for path in (lake.root.parent / "moved-inbox").glob("*.jsonl"):
        shutil.move(path, lake.inbox)
    assert lake.ingest(as_of=AS_OF).as_dict()["ingested"] == 4


@pytest.mark.parametrize("where", ["nolake", "nolake/inbox", "empty-folder", "empty-folder/inbox"])
def test_a_snapshot_to_a_path_with_no_lake_is_refused_and_creates_nothing(tmp_path, where):
    (tmp_path / "empty-folder").mkdir()
    target = tmp_path / where
    lake_dir = target.parent if target.name == "inbox" else target
    with pytest.raises(LakeNotFound) as error:
        write_snapshot([{"id": "x", "tenant": "t", "content": "c"}], target)
    assert str(error.value) == (
        f"no lake at {lake_dir}: create one with `memory-lake init --lake {lake_dir}`, "
        f"or give write_snapshot an existing lake's folder or its inbox folder")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["empty-folder"]


def test_a_snapshot_to_a_relative_lake_path_names_the_whole_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LakeNotFound, match=f"^no lake at {re.escape(str(tmp_path / 'lake'))}: "):
        write_snapshot([{"tenant": "acme", "content": "c"}], "lake")
    assert list(tmp_path.iterdir()) == []


def test_one_record_as_a_dict_is_a_snapshot_of_one_memory(lake):
    one = write_snapshot({"id": "x", "tenant": "acme", "content": "a single memory"}, lake.root, name="one")
    assert one.read_text(encoding="utf-8") == '{"id": "x", "tenant": "acme", "content": "a single memory"}\n'
    assert lake.ingest(as_of=AS_OF).as_dict()["ingested"] == 1
    assert rows(lake, "SELECT id, content FROM memories") == [{"id": "x", "content": "a single memory"}]


@pytest.mark.parametrize(("records", "got"), [
    ("remember this", "str"),
    (["remember this"], "list whose item #0 is str"),
    ([{"tenant": "acme", "content": "ok"}, [("tenant", "acme")]], "list whose item #1 is list"),
    (7, "int"),
])
def test_records_that_are_not_a_list_of_dicts_are_refused_clearly(lake, records, got):
    with pytest.raises(TypeError) as error:
        write_snapshot(records, lake.root, name="bad")
    assert str(error.value) == (f"write_snapshot wants a list of records (dicts, one per memory) or one record as "
                                f"a dict; got {got}")
    assert list(lake.inbox.glob("*.jsonl")) == [] and [p for p in lake.inbox.iterdir() if p.is_file()] == []


@pytest.mark.parametrize(("changes", "expected"), [
    ({"tags": "ui, theme ,, dark"}, {"tags": ["dark", "theme", "ui"]}),
    ({"tags": '["b", "a"]'}, {"tags": ["a", "b"]}),
    ({"importance": "0.25", "tier": "Long-term", "type": "preference"},
     {"importance": 0.25, "tier": "long_term", "type": "preference"}),
    ({"summary": "short", "context_id": "ctx-9", "expires_at": "2027-01-01T00:00:00Z"},
     {"summary": "short", "context_id": "ctx-9", "expires_at": datetime(2027, 1, 1)}),
])
def test_an_edit_writes_the_typed_values(lake, tmp_path, changes, expected):
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [{"id": "m-1", "tenant": "acme", "content": "text",
                                                      "tags": ["old"]}])], as_of=AS_OF)
    result = edit_memory(lake, "m-1", changes, as_of=AS_OF)
    assert (result["version"], result["updated"], result["quarantined"]) == (2, 1, 0)
    assert rows(lake, f"SELECT {', '.join(expected)} FROM memories") == [expected]


def test_one_json_line_per_record_and_an_empty_snapshot_is_empty(lake):
    two = write_snapshot([{"tenant": "acme", "content": "one"}, {"tenant": "acme", "content": "two"}], lake.root,
                         name="two")
    assert two.read_text(encoding="utf-8") == ('{"tenant": "acme", "content": "one"}\n'
                                               '{"tenant": "acme", "content": "two"}\n')
    empty = write_snapshot([], lake.root, name="empty")
    assert empty.read_bytes() == b""
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert (report["files"], report["ingested"], report["quarantined"]) == (2, 2, 0)
    # an empty file carries nothing: reported as empty and removed, never "already ingested" (every
    # empty file has one hash, so a second one read as a repeat of the first)
    assert [(f["status"], f["records"]) for f in report["per_file"]] == [("empty", 0), ("ingested", 2)]
    assert (report["files_empty"], report["files_skipped"]) == (1, 0) and not empty.exists()
    again = write_snapshot([], lake.root, name="another-empty")
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert (report["files_empty"], report["files_skipped"], again.exists()) == (1, 0, False)
