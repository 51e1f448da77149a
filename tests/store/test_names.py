"""Known names: an unknown tenant, agent, user or id is an InputError that suggests the known ones,
from the library as from the CLI (issue 11 item 8)."""

from __future__ import annotations

import pytest

from memory_lake import InputError
from memory_lake.store.names import check_ids, check_scope

from ..conftest import AS_OF, rows, write_jsonl


@pytest.fixture
def scoped(lake, tmp_path):
    write_jsonl(tmp_path / "s.jsonl", [
        {"id": "pref-1", "tenant": "acme", "agent_id": "support-bot", "user_id": "alice", "content": "likes tea"},
        {"id": "note-1", "tenant": "globex", "content": "hello"}])
    lake.ingest([tmp_path / "s.jsonl"], as_of=AS_OF)
    return lake


@pytest.mark.models
def test_lake_search_with_an_unknown_tenant_raises(scoped):
    with pytest.raises(InputError) as caught:
        scoped.search("tea", tenant="nosuch")
    assert str(caught.value) == "unknown tenant 'nosuch': known tenants: acme, globex"
    assert list(scoped.events.glob("searches-*.jsonl")) == []  # nothing searched, nothing logged
    assert [r.id for r in scoped.search("tea", tenant="acme", user="alice")] == ["pref-1"]


def test_lake_methods_check_their_names(scoped):
    cases = [
        (lambda: scoped.health(tenant="acmee"), "unknown tenant 'acmee': did you mean 'acme'? known tenants: acme, globex"),
        (lambda: scoped.conflicts(tenant="nosuch"), "unknown tenant 'nosuch': known tenants: acme, globex"),
        (lambda: scoped.unmerge("pref-2"), "unknown memory id 'pref-2' (did you mean 'pref-1'?); the lake holds 2 memories: "
                                           'see `memory-lake sql "SELECT id, tenant, content FROM memories"`'),
        (lambda: scoped.edit("pref-2", content="x"), "unknown memory id 'pref-2' (did you mean 'pref-1'?); the lake holds "
                                                     '2 memories: see `memory-lake sql "SELECT id, tenant, content FROM memories"`'),
        (lambda: scoped.resolve_conflict("c-1", "lake"),
         "unknown conflict id 'c-1'; the lake holds 0 conflicts: see `memory-lake conflicts list --all`"),
    ]
    for call, message in cases:
        with pytest.raises(InputError) as caught:
            call()
        assert str(caught.value) == message
    assert rows(scoped, "SELECT id, version FROM memories ORDER BY id") == [{"id": "note-1", "version": 1},
                                                                           {"id": "pref-1", "version": 1}]


def test_scope_levels_are_checked_within_the_scope_before_them(scoped):
    check_scope(scoped, "acme", "support-bot", "alice")
    check_scope(scoped, None)
    with pytest.raises(InputError, match=r"^unknown agent 'support-bot': no memory in tenant 'globex' names any agent$"):
        check_scope(scoped, "globex", "support-bot")
    with pytest.raises(InputError, match=r"^unknown user 'bob': known users in tenant 'acme', agent 'support-bot': alice$"):
        check_scope(scoped, "acme", "support-bot", "bob")


def test_many_known_names_are_listed_briefly(lake, tmp_path):
    write_jsonl(tmp_path / "s.jsonl", [{"tenant": f"tenant-{n:02}", "content": "x"} for n in range(12)])
    lake.ingest([tmp_path / "s.jsonl"], as_of=AS_OF)
    with pytest.raises(InputError) as caught:
        check_scope(lake, "tenant-1")
    assert str(caught.value) == ("unknown tenant 'tenant-1': did you mean 'tenant-11', 'tenant-10', 'tenant-01'? known "
                                 "tenants: tenant-00, tenant-01, tenant-02, tenant-03, tenant-04, … (12 in all)")
    with pytest.raises(InputError, match=r"^unknown memory ids 'a', 'b', 'c' and 1 more; the lake holds 12 memories"):
        check_ids(lake, ["d", "c", "b", "a"])


def test_nothing_is_checked_while_another_process_runs(scoped):
    # the published version may lag the run: a queued decision or a published answer says so itself
    with scoped.writer(purpose="nightly run"):
        check_scope(scoped, "nosuch")
        check_ids(scoped, ["nosuch"])
