"""Tests for memory_lake.demo.generator: the deterministic demo snapshots and what DemoData says about them.

The checks re-derive everything from the written files (parsing lines, recomputing check digits with
validators written independently of the generator), so DemoData cannot merely agree with itself.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_lake.demo.generator import DEMO_AS_OF, MALFORMED_REASONS, DemoData, generate_demo

ACCEPTED_TIERS = {
    "working": "working",
    "short_term": "short_term", "short-term": "short_term", "shortTerm": "short_term",
    "long_term": "long_term", "long-term": "long_term",
    "important": "important",
}
TYPES = {"preference", "decision", "fact", "lesson", "event", "todo", "summary", "other"}
TIMESTAMP_FIELDS = ("created_at", "updated_at", "last_accessed_at", "expires_at")
MAX_CONTENT_BYTES = 64 * 1024
ISO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
HAN = re.compile(r"[\u4e00-\u9fff]")
EXPECTED_FILES = [
    "0001-acme-support.jsonl",
    "0002-globex-ops.jsonl",
    "0003-zhongke-assistant.jsonl",
    "0004-acme-support-edits.jsonl",
    "0005-orchestrator-save.json",
    "0006-acme-late-sync.jsonl",
    "0007-support-conversations.jsonl",  # hand-written, the same for every seed
]
CONVERSATIONS_FILE = EXPECTED_FILES[-1]


# --- independent validators ------------------------------------------------------------------------


def resident_id_valid(value: str) -> bool:
    """GB 11643 resident ID: ISO 7064 MOD 11-2 over all 18 characters sums to 1, and a real birth date."""
    if not re.fullmatch(r"\d{17}[\dX]", value):
        return False
    digits = [int(c) for c in value[:17]] + [10 if value[17] == "X" else int(value[17])]
    if sum(d * pow(2, 17 - i, 11) for i, d in enumerate(digits)) % 11 != 1:
        return False
    try:
        date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    return True


def luhn_valid(value: str) -> bool:
    """Luhn check over the digits of `value` (spaces allowed between groups)."""
    digits = [int(c) for c in value if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return len(digits) >= 13 and total % 10 == 0


def test_validators_know_good_from_bad() -> None:
    # Published examples: the GB 11643 sample ID and the classic Visa test number.
    assert resident_id_valid("11010519491231002X")
    assert not resident_id_valid("110105194912310021")
    assert luhn_valid("4111 1111 1111 1111")
    assert not luhn_valid("4111111111111112")


# --- reading the files back ------------------------------------------------------------------------


def problems(rec: dict[str, Any]) -> set[str]:
    """The quarantine reasons a record would earn on its own (without file or lake context)."""
    found = set()
    if not str(rec.get("tenant", "")).strip():
        found.add("missing tenant")
    if not rec.get("deleted") and not str(rec.get("content", "")).strip():
        found.add("missing content")
    if "tier" in rec and rec["tier"] not in ACCEPTED_TIERS:
        found.add("unknown tier")
    for name in TIMESTAMP_FIELDS:
        if name in rec and not (isinstance(rec[name], str) and ISO_Z.fullmatch(rec[name])):
            found.add("bad timestamp")
    if "importance" in rec and not isinstance(rec["importance"], (int, float)):
        found.add("wrong type")
    if len(str(rec.get("content", "")).encode("utf-8")) > MAX_CONTENT_BYTES:
        found.add("content too large")
    return found


def jsonl_lines(demo: DemoData) -> list[tuple[str, int, str]]:
    """(file name, 1-based line, raw text) for every JSON Lines line."""
    out = []
    for path in demo.files:
        if path.suffix == ".jsonl":
            text = path.read_text(encoding="utf-8")
            assert text.endswith("\n")
            out += [(path.name, i, raw) for i, raw in enumerate(text.splitlines(), start=1)]
    return out


def save_document(demo: DemoData) -> dict[str, Any]:
    (path,) = [p for p in demo.files if p.suffix == ".json"]
    return json.loads(path.read_text(encoding="utf-8"))


def good_records(demo: DemoData) -> list[dict[str, Any]]:
    """Records that should land as memories: good JSONL lines plus save records with their defaults
    (not the malformed lines, nor the write that ends in the conflict queue)."""
    bad = {(name, line) for name, line, _ in demo.malformed + demo.conflicts}
    recs = []
    for name, number, raw in jsonl_lines(demo):
        if (name, number) in bad:
            continue
        rec = json.loads(raw)
        if not rec.get("deleted"):
            recs.append(rec)
    doc = save_document(demo)
    defaults = {k: doc[k] for k in ("tenant", "agent_id", "user_id")}
    recs += [defaults | rec for rec in doc["memories"]]
    return recs


def scope_of(rec: dict[str, Any]) -> tuple[str, str, str]:
    return rec["tenant"], rec.get("agent_id", ""), rec.get("user_id", "")


def tier_of(rec: dict[str, Any]) -> str:
    if rec.get("important"):
        return "important"
    return ACCEPTED_TIERS[rec.get("tier", "short_term")]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoData:
    return generate_demo(tmp_path_factory.mktemp("lake") / "inbox", seed=7)


# --- determinism and files -------------------------------------------------------------------------


def test_same_seed_writes_identical_bytes(tmp_path: Path) -> None:
    first = generate_demo(tmp_path / "a", seed=7)
    second = generate_demo(tmp_path / "b", seed=7)
    assert [p.name for p in first.files] == [p.name for p in second.files]
    for a, b in zip(first.files, second.files):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert first == DemoData(**{**second.__dict__, "files": first.files})


def test_other_seed_writes_other_data(tmp_path: Path) -> None:
    seven = generate_demo(tmp_path / "a", seed=7)
    eight = generate_demo(tmp_path / "b", seed=8)
    assert [p.name for p in seven.files] == [p.name for p in eight.files]
    pairs = [(a, b) for a, b in zip(seven.files, eight.files) if a.name != CONVERSATIONS_FILE]
    assert len(pairs) == 6 and all(a.read_bytes() != b.read_bytes() for a, b in pairs)
    # the conversations are written by hand: no randomness, and the seeded files do not depend on them
    assert (tmp_path / "a" / CONVERSATIONS_FILE).read_bytes() == (tmp_path / "b" / CONVERSATIONS_FILE).read_bytes()
    assert seven.planted_pii != eight.planted_pii


def test_files_are_named_in_ingest_order_and_written_atomically(tmp_path: Path) -> None:
    inbox = tmp_path / "not" / "yet" / "inbox"
    demo = generate_demo(inbox, seed=3)
    assert [p.name for p in demo.files] == EXPECTED_FILES
    assert all(p.parent == inbox for p in demo.files)
    assert sorted(p.name for p in inbox.iterdir()) == EXPECTED_FILES  # no *.tmp left behind
    assert demo.as_of == DEMO_AS_OF
    assert demo.tenants == ["acme", "globex", "zhongke"]


def test_regenerating_into_the_same_inbox_replaces_the_files(tmp_path: Path) -> None:
    first = generate_demo(tmp_path, seed=5)
    before = [p.read_bytes() for p in first.files]
    second = generate_demo(tmp_path, seed=5)
    assert [p.read_bytes() for p in second.files] == before


# --- malformed lines -------------------------------------------------------------------------------


def test_one_malformed_line_per_reason(demo: DemoData) -> None:
    assert sorted(reason for _, _, reason in demo.malformed) == sorted(MALFORMED_REASONS)
    assert set(MALFORMED_REASONS) == {
        "bad JSON", "missing content", "missing tenant", "unknown tier", "bad timestamp",
        "wrong type", "content too large", "duplicate id in file",
    }


def test_each_malformed_line_is_there_and_bad_only_in_its_way(demo: DemoData) -> None:
    lines = {(name, number): raw for name, number, raw in jsonl_lines(demo)}
    malformed_at = {(f, n) for f, n, _ in demo.malformed}
    for name, number, reason in demo.malformed:
        raw = lines[(name, number)]
        if reason == "bad JSON":
            with pytest.raises(json.JSONDecodeError):
                json.loads(raw)
            continue
        rec = json.loads(raw)
        assert isinstance(rec, dict)
        if reason == "duplicate id in file":
            assert problems(rec) == set()
            earlier = [json.loads(lines[(name, n)]) for n in range(1, number) if (name, n) not in malformed_at]
            assert rec["id"] in {e.get("id") for e in earlier}
        else:
            assert problems(rec) == {reason}, (name, number, reason)
    specific = {reason: json.loads(lines[(n, l)]) for n, l, reason in demo.malformed if reason != "bad JSON"}
    assert specific["unknown tier"]["tier"] == "forever"
    assert specific["bad timestamp"]["created_at"] == "yesterday"
    assert specific["wrong type"]["importance"] == "high"


def test_valid_lines_are_objects_with_tenant_and_content(demo: DemoData) -> None:
    bad = {(name, line) for name, line, _ in demo.malformed}
    forgets = 0
    for name, number, raw in jsonl_lines(demo):
        if (name, number) in bad:
            continue
        rec = json.loads(raw)
        assert isinstance(rec, dict)
        assert problems(rec) == set(), (name, number)
        if rec.get("deleted"):
            forgets += 1
            assert set(rec) >= {"id", "tenant"}
        else:
            assert rec["tenant"] and rec["content"]
            assert rec.get("type", "other") in TYPES
    assert forgets == 1


def test_good_lines_counts_every_landing_record(demo: DemoData) -> None:
    recs = good_records(demo)
    assert demo.good_lines == len(recs)
    # The demo's size: one update (the edit) among the records, the rest new memories.
    assert 600 <= len(recs) - 1 <= 1200


# --- content coverage ------------------------------------------------------------------------------


def test_every_tier_spelling_and_type_appears(demo: DemoData) -> None:
    recs = good_records(demo)
    jsonl_recs = [r for r in recs if r.get("type") in TYPES]  # save records carry the tier in `type`
    assert {r["tier"] for r in jsonl_recs if "tier" in r} == set(ACCEPTED_TIERS)
    assert any("tier" not in r and not r.get("important") for r in jsonl_recs)  # default tier
    assert any(r.get("important") is True and r.get("tier") == "important" for r in jsonl_recs)
    assert any(r.get("important") is True and r.get("tier") != "important" for r in jsonl_recs)
    assert {r["type"] for r in jsonl_recs} == TYPES
    save_tiers = {m["type"] for m in save_document(demo)["memories"]}
    assert save_tiers == {"working", "short-term", "long-term", "important"}


def test_both_languages_appear_and_zhongke_is_mostly_chinese(demo: DemoData) -> None:
    by_tenant: dict[str, Counter] = defaultdict(Counter)
    for rec in good_records(demo):
        by_tenant[rec["tenant"]]["zh" if HAN.search(rec["content"]) else "en"] += 1
    for tenant in demo.tenants:
        assert by_tenant[tenant]["zh"] > 0 and by_tenant[tenant]["en"] > 0, tenant
    assert by_tenant["zhongke"]["zh"] > 3 * by_tenant["zhongke"]["en"]
    assert by_tenant["acme"]["en"] > by_tenant["acme"]["zh"]


def test_a_scope_overflows_working_and_short_term(demo: DemoData) -> None:
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for rec in good_records(demo):
        if rec.get("type") in TYPES:  # save records carry the tier in `type`
            counts[scope_of(rec)][tier_of(rec)] += 1
    assert any(c["working"] > 20 for c in counts.values())
    assert any(c["short_term"] > 100 for c in counts.values())


def test_timestamps_sit_in_the_window_with_stale_and_expiring_items(demo: DemoData) -> None:
    start = DEMO_AS_OF - timedelta(days=90)
    idle_days, expiry = [], []
    for rec in good_records(demo):
        for name in ("created_at", "updated_at", "last_accessed_at"):
            if name in rec:
                assert start <= datetime.fromisoformat(rec[name]) <= DEMO_AS_OF, (name, rec[name])
        if "created_at" in rec and "updated_at" in rec:
            assert rec["created_at"] <= rec["updated_at"]
        if "last_accessed_at" in rec:
            assert rec["created_at"] <= rec["last_accessed_at"]
            idle_days.append((DEMO_AS_OF - datetime.fromisoformat(rec["last_accessed_at"])).days)
            assert isinstance(rec["access_count"], int) and isinstance(rec["reference_count"], int)
        if "expires_at" in rec:
            expiry.append(datetime.fromisoformat(rec["expires_at"]))
    assert len(idle_days) > 400
    assert any(d > 60 for d in idle_days)
    assert any(7 < d <= 60 for d in idle_days)
    assert any(d < 7 for d in idle_days)
    assert any(e < DEMO_AS_OF for e in expiry) and any(e > DEMO_AS_OF for e in expiry)


def test_unknown_extra_fields_are_present(demo: DemoData) -> None:
    known = {"id", "tenant", "agent_id", "user_id", "context_id", "session_id", "tier", "type", "content",
             "summary", "tags", "importance", "source", "created_at", "updated_at", "last_accessed_at",
             "access_count", "reference_count", "expires_at", "version", "important", "deleted",
             "operator", "trace_id", "reason", "persist"}
    extras = Counter(k for rec in good_records(demo) for k in rec if k not in known)
    assert extras["channel"] > 0
    assert len(extras) >= 2


def test_planted_duplicates_and_contradictions_share_a_scope(demo: DemoData) -> None:
    by_content: dict[str, set] = defaultdict(set)
    for rec in good_records(demo):
        by_content[rec["content"]].add(scope_of(rec))
    groups = [
        ["Refund requests above $500 need manager approval."] * 2,
        ["Deploys are frozen from Dec 20 to Jan 3 every year."] * 2,
        ["数据库备份每天凌晨两点执行。"] * 2,
        ["The customer wants invoices sent on the 1st of each month.",
         "the customer wants invoices sent on the 1st of each month",
         "The customer wants invoices to be sent on the first of each month."],
        ["用户每周三下午开周会。", "用户每周三下午开周会", "用户每周三下午要开周会。"],
        ["User prefers dark mode", "User prefers light mode"],
        ["Meeting at 3pm on Friday with the procurement team.", "Meeting at 4pm on Friday with the procurement team."],
        ["User likes coffee in the morning.", "User does not like coffee in the morning."],
        ["用户喜欢深色模式", "用户喜欢浅色模式"],
        ["用户喜欢喝咖啡，不加糖。", "用户不喜欢喝咖啡，不加糖。"],
    ]
    for group in groups:
        scopes = set.union(*(by_content[text] for text in group))
        assert len(scopes) == 1, group
    counts = Counter(rec["content"] for rec in good_records(demo))
    assert counts["Refund requests above $500 need manager approval."] == 3  # two ids, then a third file
    assert counts["Deploys are frozen from Dec 20 to Jan 3 every year."] == 2
    freeze = [r for r in good_records(demo) if r["content"].startswith("Deploys are frozen")]
    assert sorted("id" in r for r in freeze) == [False, True]  # one copy leaves its id to the ingest


# --- edit, conflicting late write and forget ------------------------------------------------------------------


def test_edited_memory_is_created_then_edited_at_version_1(demo: DemoData) -> None:
    order = [p.name for p in demo.files]
    hits = sorted((order.index(name), name, number, json.loads(raw)) for name, number, raw in jsonl_lines(demo)
                  if demo.edited_id in raw)
    assert len(hits) == 3
    (_, _, _, created), (_, edit_file, edit_line, edit), (_, stale_file, stale_line, stale) = hits
    assert len({created_file for created_file, *_ in hits}) == 3  # three different files
    assert "version" not in created
    assert edit["version"] == 1 and stale["version"] == 1
    assert len({created["content"], edit["content"], stale["content"]}) == 3
    assert created["tags"] != edit["tags"] and stale["tags"] == created["tags"]
    assert "dark theme" in created["content"] and "light theme" in edit["content"]
    assert demo.conflicts == [(stale_file, stale_line, "content")]
    assert order.index(stale_file) > order.index(edit_file)
    assert all((n, l) != (edit_file, edit_line) for n, l, _ in demo.malformed)
    assert scope_of(created) == scope_of(edit) == scope_of(stale)
    assert stale["updated_at"] > edit["updated_at"]  # only the version can reject the late write


def test_forget_request_targets_an_earlier_ordinary_memory(demo: DemoData) -> None:
    order = [p.name for p in demo.files]
    hits = [(order.index(name), json.loads(raw)) for name, _, raw in jsonl_lines(demo)
            if demo.forgotten_id in raw]
    assert len(hits) == 2
    (created_at_file, created), (forget_at_file, forget) = sorted(hits, key=lambda h: h[0])
    assert created_at_file < forget_at_file
    assert forget == {"id": demo.forgotten_id, "tenant": created["tenant"], "deleted": True,
                      "operator": "user", "reason": "user asked"}
    assert tier_of(created) != "important" and not created.get("important")


# --- PII -------------------------------------------------------------------------------------------


def test_planted_pii_appears_in_the_files(demo: DemoData) -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in demo.files)
    assert len(set(demo.planted_pii)) == len(demo.planted_pii)
    for value in demo.planted_pii:
        assert value in text, value
    pii = demo.planted_pii
    assert any(re.fullmatch(r"1[3-9]\d{9}", v) for v in pii)
    assert "+44 20 7946 0958" in pii
    assert sum(bool(re.fullmatch(r"[\w.]+@[\w.]+\.[a-z]+", v)) for v in pii) >= 2
    assert any(re.fullmatch(r"sk-[A-Za-z0-9]{20,}", v) for v in pii)
    assert any(re.fullmatch(r"AKIA[A-Z0-9]{16}", v) for v in pii)
    assert any(f"Bearer {v}" in text for v in pii)
    assert any(f"password: {v}" in text for v in pii)
    assert any(f"密码：{v}" in text for v in pii)


def test_planted_ids_and_cards_have_valid_check_digits(demo: DemoData) -> None:
    ids = [v for v in demo.planted_pii if re.fullmatch(r"\d{17}[\dX]", v)]
    cards = [v for v in demo.planted_pii if re.fullmatch(r"\d{16}|\d{4}( \d{4}){3}", v)]
    assert ids and all(resident_id_valid(v) for v in ids)
    assert len(cards) >= 2 and all(luhn_valid(v) for v in cards)


def test_pii_sits_in_content_in_an_extra_field_and_in_a_bad_line(demo: DemoData) -> None:
    pii = set(demo.planted_pii)
    recs = good_records(demo)
    assert any(any(v in rec["content"] for v in pii) for rec in recs)
    in_extra = [k for rec in recs for k, v in rec.items()
                if k not in ("content",) and isinstance(v, str) and v in pii]
    assert in_extra
    (bad_line,) = [raw for name, number, raw in jsonl_lines(demo)
                   if (name, number, "bad JSON") in set(demo.malformed)]
    assert any(v in bad_line for v in pii)  # the quarantine must redact raw text too


@pytest.mark.parametrize("seed", [0, 1, 42, 2026])
def test_other_seeds_keep_the_contract(tmp_path: Path, seed: int) -> None:
    demo = generate_demo(tmp_path, seed=seed)
    test_one_malformed_line_per_reason(demo)
    test_each_malformed_line_is_there_and_bad_only_in_its_way(demo)
    test_valid_lines_are_objects_with_tenant_and_content(demo)
    test_good_lines_counts_every_landing_record(demo)
    test_every_tier_spelling_and_type_appears(demo)
    test_planted_ids_and_cards_have_valid_check_digits(demo)
    test_planted_pii_appears_in_the_files(demo)
