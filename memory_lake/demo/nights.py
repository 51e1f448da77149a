"""The demo's later nights: follow-up snapshots for night 2, 3, ... (`generate_night`).

Night 1 is `generate_demo`, dated `DEMO_AS_OF`; night n is dated `night_as_of(n)`, a day later per
night, and its files are what the agents wrote during the day before that night's run: new memories
in most scopes (working memories among them, so capacities rise), an exact duplicate and a near
(punctuation-only) duplicate of memories written the night before (dedup merges them), an edit of an
earlier memory followed by a late sync from a second device that read the version before the edit
(a conflict), a user's forget request, two malformed lines (quarantine), a planted e-mail address and
phone number (redaction), follow-ups to the support conversations on the nights that have them, and
Chinese throughout zhongke's files. Night 2 also brings one input in each other system's shape (a
Mem0, Letta and Zep export, a hot-memory tree, a chat transcript: ``formats.py``).

What a night builds on (the record it edits, the texts it repeats, the memory it forgets) was
written by the night before. To know it without reading the lake, `generate_night` replays the
earlier nights in memory, writing nothing; the replay also reserves every earlier text, so only the
planted duplicates are duplicates. Nothing reads the clock, and the same seed writes byte-identical
files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..store import Policy
from .generator import DEMO_AS_OF, _first_night_files, write_lines
from .formats import FORMATS_NIGHT, write_formats
from .records import _Builder, _iso, _MONTHS_EN, _Scope, _WEEKDAYS_ZH
from .scenario import (
    DEMO_TENANTS,
    _ACME_ALICE,
    _ACME_BOB,
    _ACME_CAROL,
    _ACME_DAVE,
    _ACME_SALES_ALICE,
    _GLOBEX_ERIN,
    _GLOBEX_FRANK,
    _GLOBEX_GRACE,
    _GLOBEX_HEIDI,
    _Line,
    _ZK_LILEI,
    _ZK_LIUYANG,
    _ZK_WANGFANG,
    _ZK_ZHANGWEI,
    _insert_spread,
)

__all__ = ["MAX_NIGHTS", "NightData", "generate_night", "last_nightly_as_of", "night_as_of"]

# Night n's files are named "<n-1 as two digits><two digits>-...", so that they sort after the
# nights before it; two digits hold nights up to 100.
MAX_NIGHTS = 100

# New memories an ordinary day brings per scope: tier -> (fewest, most).
_DAY_OF_WRITES: list[tuple[_Scope, dict[str, tuple[int, int]]]] = [
    (_ACME_ALICE, {"working": (3, 5), "short_term": (2, 4)}),
    (_ACME_BOB, {"working": (1, 3), "short_term": (2, 3), "long_term": (0, 1)}),
    (_ACME_CAROL, {"working": (1, 2), "short_term": (1, 3)}),
    (_ACME_SALES_ALICE, {"working": (1, 2), "short_term": (1, 2)}),
    (_ACME_DAVE, {"working": (2, 4), "short_term": (1, 3)}),
    (_GLOBEX_ERIN, {"working": (2, 4), "short_term": (2, 4), "important": (0, 1)}),
    (_GLOBEX_FRANK, {"working": (1, 3), "short_term": (1, 3)}),
    (_GLOBEX_GRACE, {"working": (1, 3), "short_term": (2, 3), "long_term": (0, 1)}),
    (_GLOBEX_HEIDI, {"working": (1, 2), "short_term": (1, 2)}),
    (_ZK_WANGFANG, {"working": (2, 4), "short_term": (2, 4)}),
    (_ZK_LILEI, {"working": (1, 3), "short_term": (1, 3)}),
    (_ZK_ZHANGWEI, {"working": (2, 3), "short_term": (2, 3), "important": (0, 1)}),
    (_ZK_LIUYANG, {"working": (1, 2), "short_term": (1, 2)}),
]

# Consolidation moves a short-term memory more important than this (the policy's default); see _ordinary.
_CONSOLIDATE_ABOVE = Policy().tiers.consolidate_importance

_SCOPES = {(s.tenant, s.agent_id, s.user_id): s for s, _ in _DAY_OF_WRITES}

# Each night plants two malformed lines, taking the next two reasons of this rotation (the reasons
# a whole line can earn on its own; night 1 plants every reason once).
_NIGHT_BAD = ("bad JSON", "missing content", "missing tenant", "unknown tier", "bad timestamp", "wrong type")

# The support conversations of night 1 (data/conversations.json) go on: what happened the next days.
# night -> (tenant, agent_id, user_id, id, content)
_FOLLOW_UPS: dict[int, list[tuple[str, str, str, str, str]]] = {
    2: [("acme", "support-bot", "u-nina", "acme-nina-followup-1",
         "Marcus Bell approved the refund of $1,240 for invoice INV-7731 on Nov 30; it goes back to the Visa card."),
        ("zhongke", "kefu-bot", "u-chenjing", "zk-chenjing-followup-1",
         "陈静已提供新的收货地址，仓库11月30日寄出了新打印机。")],
    3: [("acme", "support-bot", "u-nina", "acme-nina-followup-2",
         "Nina sent the new VAT number on Dec 1, ahead of the Dec 5 deadline."),
        ("zhongke", "kefu-bot", "u-chenjing", "zk-chenjing-followup-2",
         "赵磊师傅12月1日上门安装了新打印机，旧机器已拆走。")],
}

# Night 1's memories that night 2 builds on (planted with fixed ids in scenario.py).
_FIRST_EXACT_ID = "globex-dup-freeze-a"
_FIRST_NEAR_ID = "zk-near-weekly-c"
_FIRST_EDIT_ID = "acme-dup-refund-a"
_FIRST_EDIT_TEXTS = ("Refund requests above $1,000 need manager approval.",
                     "Refund requests above $750 need manager approval.")
_FIRST_FORGET = ("acme", "acme-meeting-3pm")


@dataclass(frozen=True)
class NightData:
    """What `generate_night` wrote for one night and what a correct pipeline should make of it.

    night: the night (2 or later); as_of: its date, `night_as_of(night)`.
    files: snapshot paths in ingest order (sorted by name, after every earlier night's).
    planted_pii: every raw PII value, exactly as it appears in the files.
    malformed: (file name, 1-based line, expected quarantine reason) for each bad line.
    conflicts: (file name, 1-based line, field) for the late write that must end in the conflict
        queue (based on the version before `edited_id`'s edit).
    duplicates: (new id, id of the earlier memory it repeats): an exact and a near duplicate.
    edited_id: the earlier memory this night edits (sent with the version it was read at, 1).
    forgotten_id: the earlier memory a user asks to forget.
    good_lines: records that should land as memories or updates (not malformed, conflict or forget lines).
    tenants: the tenants present in the files.
    formats: on night `formats.FORMATS_NIGHT`, the inputs in other systems' shapes (format -> file,
        or the hot-memory tree's folder), each in an inbox folder named for its scope; {} otherwise.
    """

    night: int
    files: list[Path]
    as_of: datetime
    planted_pii: list[str]
    malformed: list[tuple[str, int, str]]
    conflicts: list[tuple[str, int, str]]
    duplicates: list[tuple[str, str]]
    edited_id: str
    forgotten_id: str
    good_lines: int
    tenants: list[str]
    formats: dict[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class _Anchors:
    """What one night leaves for the next to build on: records as they were written."""

    exact: dict[str, Any]  # repeated word for word under a new id
    near: dict[str, Any]  # repeated with its final punctuation changed
    edit: dict[str, Any]  # edited, then written again by a device that read it before the edit
    edit_texts: tuple[str, str]  # (the edit's content, the late device's content)
    forget: tuple[str, str]  # (tenant, id) a user asks to forget


def night_as_of(night: int) -> datetime:
    """The date of demo night `night` (1 = `DEMO_AS_OF`, each later night a day after the one before)."""
    if isinstance(night, bool) or not isinstance(night, int) or not 1 <= night <= MAX_NIGHTS:
        raise ValueError(f"night must be a whole number from 1 to {MAX_NIGHTS}, not {night!r}")
    return DEMO_AS_OF + timedelta(days=night - 1)


def last_nightly_as_of(lake) -> datetime | None:
    """The as_of of `lake`'s latest nightly run that did not fail (UTC), or None before the first.
    A demo night dated before it is not run: that would be a backfill, re-ageing and re-measuring
    a lake that has already moved on."""
    frame = lake.read("SELECT max(as_of) AS latest FROM runs WHERE kind = 'nightly' AND status <> 'failed'").frame
    latest = frame["latest"][0] if frame.height else None
    if latest is None:
        return None
    return latest.replace(tzinfo=timezone.utc) if latest.tzinfo is None else latest.astimezone(timezone.utc)


def generate_night(inbox: Path, night: int, seed: int = 7) -> NightData:
    """Write demo night `night`'s follow-up snapshots into `inbox` (created if missing).

    `night` is 2 or later (night 1 is `generate_demo`), at most `MAX_NIGHTS`; the files are dated
    `night_as_of(night)` and build on what the earlier nights of the same `seed` wrote, so they
    belong in a lake that has had those nights. The same seed and night write byte-identical files;
    no clock is read. Each file is written to `<name>.tmp` and then renamed (the inbox convention),
    and the names sort after every earlier night's ("0101-..." for night 2). Returns a `NightData`.
    """
    if isinstance(night, bool) or not isinstance(night, int) or not 2 <= night <= MAX_NIGHTS:
        raise ValueError(f"night must be a whole number from 2 to {MAX_NIGHTS} (night 1 is generate_demo), not {night!r}")
    inbox = Path(inbox)
    inbox.mkdir(parents=True, exist_ok=True)
    b, files, meta = _replay(seed, night)

    written, malformed, conflicts, good = write_lines(inbox, files, _NIGHT_BAD)
    formats = write_formats(inbox, b.as_of) if night == FORMATS_NIGHT else {}
    return NightData(
        night=night, files=sorted(written, key=lambda p: p.name), as_of=b.as_of, planted_pii=list(b.pii),
        malformed=sorted(malformed), conflicts=conflicts, duplicates=meta["duplicates"],
        edited_id=meta["edited_id"], forgotten_id=meta["forgotten_id"], good_lines=good, tenants=list(DEMO_TENANTS),
        formats=formats,
    )


# --- the replay -------------------------------------------------------------------------------------


def _replay(seed: int, night: int) -> tuple[_Builder, list[tuple[str, list[_Line]]], dict[str, Any]]:
    """Night `night`'s builder, files and planted ids, after generating every earlier night in memory."""
    first = _Builder(seed, DEMO_AS_OF)
    jsonl, _save = _first_night_files(first)
    records = {line.payload["id"]: line.payload for _, lines in jsonl for line in lines
               if isinstance(line.payload, dict) and "id" in line.payload}
    anchors = _Anchors(exact=records[_FIRST_EXACT_ID], near=records[_FIRST_NEAR_ID], edit=records[_FIRST_EDIT_ID],
                       edit_texts=_FIRST_EDIT_TEXTS, forget=_FIRST_FORGET)
    for n in range(2, night + 1):
        # A stream of its own per night: night n's files do not change when a later night is added.
        b = _Builder(f"{seed}/night-{n}", night_as_of(n))
        b.ids, b.seen = first.ids, first.seen  # every earlier id and text stays taken
        files, meta, anchors = _night_files(b, n, anchors)
    return b, files, meta


def _written_today(b: _Builder) -> dict[str, Any]:
    """Timestamps and counters of a memory written during the day before the night's run."""
    r = b.rng
    created = b.ago(r.uniform(0.05, 0.95))
    used = r.random() < 0.6
    last = created + timedelta(seconds=int(r.uniform(0, (b.as_of - created).total_seconds()))) if used else created
    return {"created_at": created, "updated_at": created, "last_accessed_at": last,
            "access_count": r.randint(1, 4) if used else 0, "reference_count": r.choice([0, 0, 1]) if used else 0}


def _day_of_writes(b: _Builder) -> list[dict[str, Any]]:
    r = b.rng
    recs = []
    for scope, counts in _DAY_OF_WRITES:
        tiers = [tier for tier, (low, high) in counts.items() for _ in range(r.randint(low, high))]
        r.shuffle(tiers)
        recs += [b.record(scope, tier=tier, activity=_written_today(b)) for tier in tiers]
    return recs


def _scope_of(rec: dict[str, Any]) -> _Scope:
    return _SCOPES[(rec["tenant"], rec["agent_id"], rec["user_id"])]


def _again(b: _Builder, original: dict[str, Any], memory_id: str, content: str) -> dict[str, Any]:
    """`original`'s text learned again today in the same scope, under a new id."""
    return _ordinary(b, b.record(_scope_of(original), tier="short_term", mtype=original["type"], content=content,
                                 memory_id=b.claim_id(memory_id), activity=_written_today(b),
                                 zh=any("\u4e00" <= ch <= "\u9fff" for ch in content)))


def _ordinary(b: _Builder, rec: dict[str, Any]) -> dict[str, Any]:
    """`rec` made too unimportant for consolidation, as a planted duplicate and the memory it repeats
    must be: a merge gives the kept memory the older creation time and the higher importance of the
    two, and the tier rules run before dedup, so an important pair would be moved by the next run at
    the same as_of - and a rerun of the demo's last night would change the lake."""
    rec["importance"] = round(b.rng.uniform(0.2, _CONSOLIDATE_ABOVE), 2)
    return rec


def _near_text(text: str) -> str:
    """The same words with the final punctuation changed (a full stop dropped, or one added)."""
    for stop in ("。", "."):
        if text.endswith(stop):
            return text[: -len(stop)]
    return text + ("。" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else ".")


def _write_of(b: _Builder, original: dict[str, Any], content: str, updated_days_ago: float) -> dict[str, Any]:
    """An agent's write of `original` based on version 1, the fields it read sent back unchanged."""
    rec = {"id": original["id"], "tenant": original["tenant"], "agent_id": original["agent_id"],
           "user_id": original["user_id"]}
    rec.update({k: original[k] for k in ("tier", "type") if k in original})
    rec["content"] = content
    if "tags" in original:
        rec["tags"] = list(original["tags"])
    rec.update(created_at=original["created_at"], updated_at=_iso(b.ago(updated_days_ago)), version=1, operator="agent")
    return rec


def _malformed(b: _Builder, reason: str, zh: bool) -> _Line:
    """A line that earns `reason` in the quarantine, as an agent's bug would write it."""
    scope = _ZK_LILEI if zh else _GLOBEX_GRACE
    rec = b.record(scope, tier="short_term", zh=zh, activity=_written_today(b))
    if reason == "bad JSON":  # a write cut off mid-record
        text = json.dumps(rec, ensure_ascii=False)
        return _Line(text[: text.index('"content"') + 20], reason)
    if reason == "missing content":
        del rec["content"]
    elif reason == "missing tenant":
        del rec["tenant"]
    elif reason == "unknown tier":
        rec["tier"] = "永久" if zh else "forever"
    elif reason == "bad timestamp":
        rec["created_at"] = "昨天下午" if zh else "yesterday afternoon"
    elif reason == "wrong type":
        rec["importance"] = "很高" if zh else "high"
    return _Line(rec, reason)


def _night_files(b: _Builder, night: int, prior: _Anchors
                 ) -> tuple[list[tuple[str, list[_Line]]], dict[str, Any], _Anchors]:
    """Night `night`'s files (name, lines), what it planted, and what it leaves for the next night."""
    r = b.rng
    recs = _day_of_writes(b)
    for tenant, agent, user, memory_id, text in _FOLLOW_UPS.get(night, []):
        scope = _Scope(tenant, agent, user, "", 0.0)
        recs.append(b.record(scope, tier="short_term", mtype="event", content=text, memory_id=b.claim_id(memory_id),
                             activity=_written_today(b), zh=tenant == "zhongke", tags=["follow-up"]))

    # Duplicates of what the night before wrote.
    exact_id, near_id = f"{prior.exact['tenant']}-n{night}-exact-again", f"{prior.near['tenant']}-n{night}-near-again"
    recs.append(_again(b, prior.exact, exact_id, prior.exact["content"]))
    recs.append(_again(b, prior.near, near_id, _near_text(prior.near["content"])))

    # PII for the redactor: an e-mail address in English, a mobile number in Chinese.
    email = b.plant(f"carol.{b.token(5, 'abcdefghijklmnopqrstuvwxyz')}@example.com")
    recs.append(b.record(_ACME_CAROL, tier="short_term", mtype="preference", zh=False, activity=_written_today(b),
                         content=f"Carol asked for contract drafts to go to {email} rather than the shared inbox."))
    mobile = b.cn_mobile()
    recs.append(b.record(_ZK_LILEI, tier="short_term", mtype="fact", zh=True, activity=_written_today(b),
                         content=f"客户换了新手机号{mobile}，工作日上午方便接听。"))

    # What the next night builds on, written today with fixed ids.
    start = b.as_of + timedelta(days=7)
    weekday = _WEEKDAYS_ZH[night % len(_WEEKDAYS_ZH)]
    other_day = _WEEKDAYS_ZH[(night + 2) % len(_WEEKDAYS_ZH)]
    since = f"从{start.month}月{start.day}日起，研发周会"
    appointment = b.as_of + timedelta(days=3)
    nxt = _Anchors(
        exact=_ordinary(b, b.record(_ACME_BOB, tier="short_term", mtype="fact", zh=False, activity=_written_today(b),
                                    memory_id=b.claim_id(f"acme-n{night}-bob-note"))),
        near=_ordinary(b, b.record(_ZK_WANGFANG, tier="short_term", mtype="preference", zh=True,
                                   activity=_written_today(b), memory_id=b.claim_id(f"zhongke-n{night}-wangfang-note"))),
        edit=b.record(_ZK_ZHANGWEI, tier="short_term", mtype="decision", zh=True, activity=_written_today(b),
                      memory_id=b.claim_id(f"zhongke-n{night}-weekly-sync"), tags=["会议"],
                      content=f"{since}定在每{weekday}上午十点，地点在三楼会议室。"),
        edit_texts=(f"{since}改到每{weekday}下午三点，地点在三楼会议室。", f"{since}改到每{other_day}上午十点，地点在二楼会议室。"),
        forget=("globex", f"globex-n{night}-heidi-appointment"),
    )
    recs += [nxt.exact, nxt.near, nxt.edit]
    recs.append(b.record(_GLOBEX_HEIDI, tier="short_term", mtype="event", zh=False, activity=_written_today(b),
                         memory_id=b.claim_id(nxt.forget[1]),
                         content=f"Heidi has a hospital appointment on {_MONTHS_EN[appointment.month - 1]} "
                                 f"{appointment.day} and will be offline that afternoon."))

    r.shuffle(recs)
    by_tenant = {tenant: [_Line(rec) for rec in recs if rec["tenant"] == tenant] for tenant in DEMO_TENANTS}
    first_bad, second_bad = (_NIGHT_BAD[(2 * (night - 2) + k) % len(_NIGHT_BAD)] for k in range(2))
    _insert_spread(r, by_tenant["globex"], [_malformed(b, first_bad, zh=False)])
    _insert_spread(r, by_tenant["zhongke"], [_malformed(b, second_bad, zh=True)])

    # The edit of the night before's memory, a user's forget, and the agent's other writes of the day.
    edit_scope = _scope_of(prior.edit)
    edits = [_Line(b.record(edit_scope, tier="short_term", activity=_written_today(b))) for _ in range(3)]
    edits.insert(r.randrange(1, len(edits) + 1), _Line(_write_of(b, prior.edit, prior.edit_texts[0], 0.4)))
    tenant, forgotten = prior.forget
    edits.insert(r.randrange(1, len(edits) + 1),
                 _Line({"id": forgotten, "tenant": tenant, "deleted": True, "operator": "user", "reason": "user asked"},
                       "forget"))
    # A second device read the memory before the edit and syncs late, changing the same field to
    # another value: its newer timestamp loses to the version, and the conflict queue gets both.
    late = [_Line(b.record(edit_scope, tier="short_term", activity=_written_today(b))) for _ in range(3)]
    late.insert(r.randrange(1, len(late) + 1), _Line(_write_of(b, prior.edit, prior.edit_texts[1], 0.1), "conflict"))

    prefix = f"{night - 1:02d}"
    files = [
        (f"{prefix}01-acme-support.jsonl", by_tenant["acme"]),
        (f"{prefix}02-globex-ops.jsonl", by_tenant["globex"]),
        (f"{prefix}03-zhongke-assistant.jsonl", by_tenant["zhongke"]),
        (f"{prefix}04-edits.jsonl", edits),
        (f"{prefix}05-late-sync.jsonl", late),
    ]
    meta = {"duplicates": [(exact_id, prior.exact["id"]), (near_id, prior.near["id"])],
            "edited_id": prior.edit["id"], "forgotten_id": forgotten}
    return files, meta, nxt
