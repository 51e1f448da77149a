"""The demo's world and what each snapshot file holds: the tenants, their agents and users (scopes),
the planted duplicates, contradictions, PII, malformed lines, the edit, the forget request and the
late conflicting sync, and the hand-written support conversations (``data/conversations.json``).

Each `_file_*` function returns the lines of one JSON Lines file, drawing on the shared `_Builder`
in the order `generate_demo` calls them (the order is part of what a seed means).
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .records import _DATA_DIR, _Builder, _Scope, _TYPE_WEIGHTS, _iso

# Comfortably above the ingest's 64 KB content limit whichever way a KB is counted.
_OVERSIZED_CONTENT_BYTES = 70_000

_CONVERSATIONS: list[dict[str, Any]] = json.loads(
    (_DATA_DIR / "conversations.json").read_text(encoding="utf-8"))["conversations"]
# The agent read each conversation back recently, so the short-term idle rule leaves it in place.
_CONVERSATION_READ_AT = "2026-11-29T09:00:00Z"


@dataclass
class _Line:
    """One line of a JSON Lines file: a record (or raw text) and how the pipeline should treat it."""

    payload: dict[str, Any] | str
    kind: str = "good"  # good | forget | conflict | a reason from generator.MALFORMED_REASONS


def _insert_spread(rng: random.Random, lines: list[_Line], bad: list[_Line]) -> None:
    # Bad lines go into distinct, seeded positions, never the first line, so the quarantine has to
    # cope with them mid-file rather than only at its start.
    positions = sorted(rng.sample(range(1, len(lines)), len(bad)))
    for offset, (pos, line) in enumerate(zip(positions, bad)):
        lines.insert(pos + offset, line)


_ACME = ("acme", 0.15)
_GLOBEX = ("globex", 0.25)
_ZHONGKE = ("zhongke", 0.88)
# The tenants the demo writes: `memory-lake demo` refuses a lake that holds any other (real data).
DEMO_TENANTS = (_ACME[0], _GLOBEX[0], _ZHONGKE[0])


def _scope(tenant: tuple[str, float], agent_id: str, user_id: str, name: str) -> _Scope:
    return _Scope(tenant[0], agent_id, user_id, name, tenant[1])


_ACME_ALICE = _scope(_ACME, "support-bot", "u-alice", "Alice")
_ACME_BOB = _scope(_ACME, "support-bot", "u-bob", "Bob")
_ACME_CAROL = _scope(_ACME, "support-bot", "u-carol", "Carol")
_ACME_SALES_ALICE = _scope(_ACME, "sales-assistant", "u-alice", "Alice")
_ACME_DAVE = _scope(_ACME, "sales-assistant", "u-dave", "Dave")
_GLOBEX_ERIN = _scope(_GLOBEX, "ops-agent", "u-erin", "Erin")
_GLOBEX_FRANK = _scope(_GLOBEX, "ops-agent", "u-frank", "Frank")
_GLOBEX_GRACE = _scope(_GLOBEX, "research-agent", "u-grace", "Grace")
_GLOBEX_HEIDI = _scope(_GLOBEX, "research-agent", "u-heidi", "Heidi")
_ZK_WANGFANG = _scope(_ZHONGKE, "kefu-bot", "u-wangfang", "王芳")
_ZK_LILEI = _scope(_ZHONGKE, "kefu-bot", "u-lilei", "李雷")
_ZK_ZHANGWEI = _scope(_ZHONGKE, "yanfa-assistant", "u-zhangwei", "张伟")
_ZK_LIUYANG = _scope(_ZHONGKE, "yanfa-assistant", "u-liuyang", "刘洋")
_ZK_ORCHESTRATOR = _scope(_ZHONGKE, "memory-orchestrator", "u-wangfang", "王芳")

_EDITED_ID = "acme-bob-console-theme"
_FORGOTTEN_ID = "acme-carol-family-note"
_EDIT_TAGS_BEFORE = ["ui", "dark-theme"]
_EDIT_TAGS_AFTER = ["ui", "light-theme"]


def _planted_pairs(b: _Builder, scope: _Scope, pairs: list[tuple[str, str, str, str]]) -> list[dict[str, Any]]:
    """Records with fixed ids and texts (duplicates, contradictions): (id, type, tier, content)."""
    return [
        b.record(scope, tier=tier, mtype=mtype, content=text, memory_id=b.claim_id(mid),
                 zh=any("\u4e00" <= ch <= "\u9fff" for ch in text))
        for mid, mtype, tier, text in pairs
    ]


def _stale_long_term(b: _Builder, scope: _Scope, n: int, zh: bool) -> list[dict[str, Any]]:
    """Long-term memories written 61-89 days ago and never read since (the 60-day dormancy rule)."""
    out = []
    for _ in range(n):
        created = b.ago(b.rng.uniform(61, 89))
        act = {"created_at": created, "updated_at": created, "last_accessed_at": created,
               "access_count": 0, "reference_count": 0}
        out.append(b.record(scope, tier="long_term", mtype="fact", zh=zh, activity=act))
    return out


def _expiring(b: _Builder, scope: _Scope, zh: bool) -> list[dict[str, Any]]:
    """Two todos whose `expires_at` has passed at DEMO_AS_OF and two that have not."""
    out = []
    for days_after_as_of in (-12, -2, 5, 40):
        created = b.ago(b.rng.uniform(20, 30))
        act = {"created_at": created, "updated_at": created, "last_accessed_at": b.ago(1),
               "access_count": 3, "reference_count": 1}
        out.append(b.record(scope, tier="short_term", mtype="todo", zh=zh, activity=act,
                            expires_at=b.as_of + timedelta(days=days_after_as_of)))
    return out


def _file_acme(b: _Builder) -> list[_Line]:
    r = b.rng
    recs: list[dict[str, Any]] = []
    # The scope that overflows: more than 20 working and more than 100 short_term items.
    recs += b.batch(_ACME_ALICE, {"working": 26, "short_term": 118, "long_term": 30, "important": 4})
    recs += b.mixed(_ACME_BOB, 38)
    recs += b.mixed(_ACME_CAROL, 34)
    recs += b.mixed(_ACME_SALES_ALICE, 30)
    recs += b.mixed(_ACME_DAVE, 38)
    recs += _stale_long_term(b, _ACME_CAROL, 3, zh=False)
    recs += _expiring(b, _ACME_DAVE, zh=False)

    edited = b.record(
        _ACME_BOB, tier="long_term", mtype="preference", zh=False, memory_id=b.claim_id(_EDITED_ID),
        content="Bob wants the support console in dark theme with compact tables.",
        tags=list(_EDIT_TAGS_BEFORE),
        activity={"created_at": b.ago(40), "updated_at": b.ago(40), "last_accessed_at": b.ago(2),
                  "access_count": 12, "reference_count": 3},
    )
    forgotten = b.record(
        _ACME_CAROL, tier="long_term", mtype="fact", zh=False, memory_id=b.claim_id(_FORGOTTEN_ID),
        content="Carol mentioned her daughter Emma starts primary school in September.",
        activity={"created_at": b.ago(33), "updated_at": b.ago(33), "last_accessed_at": b.ago(9),
                  "access_count": 2, "reference_count": 0},
    )
    recs += [edited, forgotten]

    recs += _planted_pairs(b, _ACME_ALICE, [
        # exact duplicates under different ids
        ("acme-dup-refund-a", "decision", "long_term", "Refund requests above $500 need manager approval."),
        ("acme-dup-refund-b", "decision", "short_term", "Refund requests above $500 need manager approval."),
        # near duplicates: case and punctuation, then a small rewording
        ("acme-near-invoice-a", "preference", "long_term", "The customer wants invoices sent on the 1st of each month."),
        ("acme-near-invoice-b", "preference", "short_term", "the customer wants invoices sent on the 1st of each month"),
        ("acme-near-invoice-c", "preference", "short_term", "The customer wants invoices to be sent on the first of each month."),
    ])
    recs += _planted_pairs(b, _ACME_DAVE, [
        ("acme-pref-dark-mode", "preference", "long_term", "User prefers dark mode"),
        ("acme-pref-light-mode", "preference", "short_term", "User prefers light mode"),
        ("acme-meeting-3pm", "event", "short_term", "Meeting at 3pm on Friday with the procurement team."),
        ("acme-meeting-4pm", "event", "short_term", "Meeting at 4pm on Friday with the procurement team."),
    ])

    # PII and secrets in content, and in an extra field.
    mobile = b.cn_mobile()
    email = b.plant("alice.chen@example.com")
    card = b.card_number("4", grouped=False)
    sk_key = b.plant("sk-" + b.token(40))
    bearer = b.plant(b.token(36))
    recs += [
        b.record(_ACME_ALICE, tier="short_term", mtype="fact", zh=False,
                 content=f"Customer callback number is {mobile}; prefers calls after 6pm.",
                 extra={"customer_email": email}),
        b.record(_ACME_ALICE, tier="working", mtype="event", zh=False,
                 content=f"Customer pasted card {card} in chat to pay the overdue invoice; told them not to share card numbers."),
        b.record(_ACME_BOB, tier="long_term", mtype="lesson", zh=False,
                 content=f"The staging integration was configured with key {sk_key} - rotate keys found in tickets."),
        b.record(_ACME_SALES_ALICE, tier="short_term", mtype="fact", zh=False,
                 content=f"Webhook calls to the CRM must send the header Authorization: Bearer {bearer}"),
    ]
    r.shuffle(recs)
    return [_Line(rec) for rec in recs]


def _file_globex(b: _Builder) -> list[_Line]:
    r = b.rng
    recs: list[dict[str, Any]] = []
    recs += b.mixed(_GLOBEX_ERIN, 68)
    recs += b.mixed(_GLOBEX_FRANK, 50)
    recs += b.mixed(_GLOBEX_GRACE, 58)
    recs += b.mixed(_GLOBEX_HEIDI, 44)
    recs += _stale_long_term(b, _GLOBEX_GRACE, 3, zh=False)
    recs += _expiring(b, _GLOBEX_ERIN, zh=False)
    recs += _planted_pairs(b, _GLOBEX_FRANK, [
        ("globex-coffee-likes", "preference", "long_term", "User likes coffee in the morning."),
        ("globex-coffee-dislikes", "preference", "short_term", "User does not like coffee in the morning."),
    ])
    # An exact duplicate where one copy has an id and the other has none (the ingest derives it).
    dup_text = "Deploys are frozen from Dec 20 to Jan 3 every year."
    recs.append(b.record(_GLOBEX_ERIN, tier="long_term", mtype="decision", zh=False, content=dup_text,
                         memory_id=b.claim_id("globex-dup-freeze-a")))
    recs.append(b.record(_GLOBEX_ERIN, tier="short_term", mtype="decision", zh=False, content=dup_text,
                         with_id=False))

    aws = b.plant("AKIA" + b.token(16, string.ascii_uppercase + string.digits))
    uk_phone = b.plant("+44 20 7946 0958")
    password = b.plant(b.token(4) + "#" + b.token(7))
    card = b.card_number("5", grouped=True)
    on_call = b.cn_mobile()
    recs += [
        b.record(_GLOBEX_ERIN, tier="important", mtype="lesson", zh=False,
                 content=f"AWS access key {aws} was committed to the deploy repo; it was revoked, scan before every push."),
        b.record(_GLOBEX_FRANK, tier="long_term", mtype="fact", zh=False,
                 content=f"The London office desk phone is {uk_phone}, staffed 9-5 UK time."),
        b.record(_GLOBEX_FRANK, tier="working", mtype="other", zh=False,
                 content=f"Shared staging login for the vendor demo, password: {password} (rotate after Friday)"),
        b.record(_GLOBEX_GRACE, tier="short_term", mtype="event", zh=False,
                 content=f"Procurement paid the research dataset licence with card {card} on the company account."),
        b.record(_GLOBEX_HEIDI, tier="short_term", mtype="fact", zh=False,
                 content="Escalate data pipeline incidents to the on-call engineer by phone.",
                 extra={"on_call_phone": on_call, "channel": "slack"}),
    ]
    r.shuffle(recs)
    lines = [_Line(rec) for rec in recs]

    leak = b.plant("ops.lead@globex.example.com")
    truncated = json.dumps(
        {"id": b.new_id(), "tenant": "globex", "agent_id": "ops-agent", "user_id": "u-erin",
         "type": "fact", "content": f"Escalations for the storage outage go to {leak} and then the SRE pager"},
        ensure_ascii=False,
    )
    # A write cut off mid-string, as a crashed agent would leave it.
    bad_json = truncated[: truncated.index(" and then")]
    no_content = b.record(_GLOBEX_GRACE, tier="short_term", mtype="fact", zh=False)
    del no_content["content"]
    no_tenant = b.record(_GLOBEX_HEIDI, tier="short_term", mtype="todo", zh=False)
    del no_tenant["tenant"]
    bad_tier = b.record(_GLOBEX_ERIN, tier="long_term", mtype="decision", zh=False)
    bad_tier["tier"] = "forever"
    _insert_spread(r, lines, [
        _Line(bad_json, "bad JSON"),
        _Line(no_content, "missing content"),
        _Line(no_tenant, "missing tenant"),
        _Line(bad_tier, "unknown tier"),
    ])
    return lines


def _file_zhongke(b: _Builder) -> list[_Line]:
    r = b.rng
    recs: list[dict[str, Any]] = []
    recs += b.mixed(_ZK_WANGFANG, 78)
    recs += b.mixed(_ZK_LILEI, 54)
    recs += b.mixed(_ZK_ZHANGWEI, 58)
    recs += b.mixed(_ZK_LIUYANG, 44)
    recs += _stale_long_term(b, _ZK_ZHANGWEI, 3, zh=True)
    recs += _expiring(b, _ZK_LILEI, zh=True)
    recs += _planted_pairs(b, _ZK_WANGFANG, [
        ("zk-theme-dark", "preference", "long_term", "用户喜欢深色模式"),
        ("zk-theme-light", "preference", "short_term", "用户喜欢浅色模式"),
        ("zk-coffee-likes", "preference", "long_term", "用户喜欢喝咖啡，不加糖。"),
        ("zk-coffee-dislikes", "preference", "short_term", "用户不喜欢喝咖啡，不加糖。"),
        ("zk-near-weekly-a", "event", "long_term", "用户每周三下午开周会。"),
        ("zk-near-weekly-b", "event", "short_term", "用户每周三下午开周会"),
        ("zk-near-weekly-c", "event", "short_term", "用户每周三下午要开周会。"),
    ])
    recs += _planted_pairs(b, _ZK_ZHANGWEI, [
        ("zk-dup-backup-a", "fact", "long_term", "数据库备份每天凌晨两点执行。"),
        ("zk-dup-backup-b", "fact", "long_term", "数据库备份每天凌晨两点执行。"),
    ])

    rid = b.resident_id()
    mobile_punct = b.cn_mobile()
    mobile_bare = b.cn_mobile()
    zh_password = b.plant("Zk" + b.token(8))
    email = b.plant("wang.fang@zhongke.example.cn")
    recs += [
        b.record(_ZK_WANGFANG, tier="important", mtype="fact", zh=True,
                 content=f"用户身份证号：{rid}，仅用于开具增值税专用发票的实名认证。"),
        b.record(_ZK_WANGFANG, tier="short_term", mtype="todo", zh=True,
                 content=f"回访客户，联系电话：{mobile_punct}，工作日下午方便接听。",
                 extra={"contact_email": email}),
        # No separator between the Chinese text and the number, as people usually write it.
        b.record(_ZK_LILEI, tier="working", mtype="fact", zh=True,
                 content=f"客户手机号{mobile_bare}已验证，可以发送短信通知。"),
        b.record(_ZK_LIUYANG, tier="short_term", mtype="other", zh=True,
                 content=f"测试环境数据库账号 admin，密码：{zh_password}，下周轮换。"),
    ]
    r.shuffle(recs)
    lines = [_Line(rec) for rec in recs]

    bad_ts = b.record(_ZK_LILEI, tier="short_term", mtype="event", zh=True)
    bad_ts["created_at"] = "yesterday"
    wrong_type = b.record(_ZK_ZHANGWEI, tier="long_term", mtype="decision", zh=True)
    wrong_type["importance"] = "high"
    log_line = "2026-11-02T10:00:00Z INFO 同步任务心跳正常 sync worker heartbeat ok\n"
    huge = b.record(_ZK_LIUYANG, tier="short_term", mtype="other", zh=True,
                    content="用户粘贴的完整日志：\n" + log_line * (_OVERSIZED_CONTENT_BYTES // len(log_line.encode()) + 1))
    _insert_spread(r, lines, [
        _Line(bad_ts, "bad timestamp"),
        _Line(wrong_type, "wrong type"),
        _Line(huge, "content too large"),
    ])
    # The duplicate repeats the id of a generated memory earlier in the same file.
    pos = r.randrange(len(lines) // 2, len(lines))
    candidates = [
        line.payload for line in lines[:pos]
        if line.kind == "good" and isinstance(line.payload, dict)
        and str(line.payload.get("id", "")).startswith("mem-")
        and line.payload["user_id"] == _ZK_LILEI.user_id
    ]
    original = r.choice(candidates)
    dup = b.record(_ZK_LILEI, tier="short_term", zh=True, memory_id=original["id"])
    lines.insert(pos, _Line(dup, "duplicate id in file"))
    return lines


def _file_acme_edits(b: _Builder, edited: dict[str, Any]) -> list[_Line]:
    r = b.rng
    recs: list[dict[str, Any]] = []
    recs += b.batch(_ACME_ALICE, {"working": 4, "short_term": 8, "long_term": 2})
    recs += b.mixed(_ACME_BOB, 8)
    # The same fact learned again in a later session, under a new id.
    recs.append(b.record(_ACME_ALICE, tier="short_term", mtype="decision", zh=False,
                         content="Refund requests above $500 need manager approval.",
                         memory_id=b.claim_id("acme-dup-refund-c")))
    r.shuffle(recs)
    lines = [_Line(rec) for rec in recs]

    # Bob switches theme: the agent sends the id it read, with the version it read (1).
    edit = {
        "id": _EDITED_ID, "tenant": edited["tenant"], "agent_id": edited["agent_id"],
        "user_id": edited["user_id"], "tier": edited["tier"], "type": "preference",
        "content": "Bob wants the support console in light theme with compact tables.",
        "tags": list(_EDIT_TAGS_AFTER), "created_at": edited["created_at"],
        "updated_at": _iso(b.ago(10)), "version": 1, "operator": "agent",
        "session_id": f"sess-{b.hex(10)}",
    }
    forget = {"id": _FORGOTTEN_ID, "tenant": "acme", "deleted": True, "operator": "user",
              "reason": "user asked"}
    lines.insert(r.randrange(1, len(lines)), _Line(edit))
    lines.insert(r.randrange(1, len(lines)), _Line(forget, "forget"))
    return lines


def _save_orchestrator(b: _Builder) -> dict[str, Any]:
    """A memory-orchestrator `save` document: the tier travels in `type`, scope fields are defaults."""
    r = b.rng
    scope = _ZK_ORCHESTRATOR
    memories: list[dict[str, Any]] = []
    seeded = [
        # The seed document's own examples.
        ("long-term", "用户喜欢喝咖啡，不加糖，每周三下午喝奶茶"),
        ("important", "用户是项目负责人，最终决策权在用户"),
    ]
    plan = seeded + [(t, None) for t in
                     ["working"] * 3 + ["short-term"] * 5 + ["long-term"] * 4 + ["important"] * 2]
    for i, (tier, text) in enumerate(plan):
        if text is None:
            text, _ = b.content(scope, r.choice(list(_TYPE_WEIGHTS)), zh=r.random() < 0.85)
        else:
            b.reserve(scope, text)
        rec: dict[str, Any] = {}
        if i % 3 != 2:
            rec["id"] = f"orch-{b.hex(8)}"
        rec["type"] = tier
        rec["content"] = text
        rec["persist"] = tier != "working"
        memories.append(rec)
    phone = b.cn_mobile()
    # One record overrides the file's default user: the save holds two users' memories.
    override = _Scope(scope.tenant, scope.agent_id, "u-lilei", "李雷", scope.zh_share)
    b.reserve(override, f"李雷的手机号是 {phone}，紧急情况可直接联系。")
    memories.append({"id": f"orch-{b.hex(8)}", "user_id": "u-lilei", "type": "important",
                     "content": f"李雷的手机号是 {phone}，紧急情况可直接联系。", "persist": True})
    r.shuffle(memories)
    return {"version": "1.0", "tenant": scope.tenant, "agent_id": scope.agent_id,
            "user_id": scope.user_id, "memories": memories}


def _file_acme_late_sync(b: _Builder, edited: dict[str, Any]) -> list[_Line]:
    r = b.rng
    recs = b.mixed(_ACME_DAVE, 10) + b.mixed(_ACME_CAROL, 6)
    lines = [_Line(rec) for rec in recs]
    # A second device read version 1 before the theme edit and syncs late, changing the same field
    # (content) to another value: seed 000's conflict. The lake keeps the edit, the memory is marked
    # conflicted and the queue gets both values. Its timestamp is newer on purpose, so that only the
    # version (not last-writer-wins) decides.
    stale = {
        "id": _EDITED_ID, "tenant": edited["tenant"], "agent_id": edited["agent_id"],
        "user_id": edited["user_id"], "tier": edited["tier"], "type": "preference",
        "content": "Bob wants the support console in high-contrast theme with compact tables.",
        "tags": list(_EDIT_TAGS_BEFORE), "updated_at": _iso(b.ago(3)), "version": 1, "operator": "agent",
    }
    lines.insert(r.randrange(1, len(lines)), _Line(stale, "conflict"))
    return lines


def _file_conversations() -> list[_Line]:
    """The hand-written support conversations, a record per turn: fixed ids, one session each,
    a turn every few minutes from the conversation's start. Uses no randomness, so the other files
    are the same with or without it."""
    lines = []
    for conv in _CONVERSATIONS:
        start = datetime.fromisoformat(conv["start"].replace("Z", "+00:00"))
        for k, turn in enumerate(conv["turns"], start=1):
            lines.append(_Line({
                "id": f"{conv['id_prefix']}-{k:02d}", "tenant": conv["tenant"], "agent_id": conv["agent_id"],
                "user_id": conv["user_id"], "session_id": conv["session_id"], "tier": "short_term",
                "type": "other", "content": turn["content"], "source": "chat", "role": turn["role"],
                "created_at": _iso(start + timedelta(minutes=conv["minutes_per_turn"] * (k - 1))),
                "last_accessed_at": _CONVERSATION_READ_AT, "access_count": 1, "reference_count": 0}))
    return lines
