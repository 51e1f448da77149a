"""Deterministic demo snapshots for memory-lake.

`generate_demo(inbox, seed)` writes a handful of agent memory snapshots into a lake's inbox: JSON Lines
files from three tenants plus one memory-orchestrator save file. The data is built to exercise every
later step on realistic-looking memory: tier capacities (a scope over 20 working and over 100
short_term items), staleness and expiry, exact and near duplicates (English and Chinese),
contradictions, PII and secrets for the redactor, malformed rows for the quarantine, an optimistic
version edit followed by a conflicting late write, a forget request, and two long support
conversations written by hand (English and Chinese, ``data/conversations.json``: one session each,
a turn per short-term memory) for the summariser.

Only the standard library is used, and nothing reads the clock: the same seed gives byte-identical
files, and every timestamp is placed relative to `DEMO_AS_OF`.
"""

from __future__ import annotations

import json
import os
import random
import string
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from itertools import cycle
from pathlib import Path
from typing import Any, Iterator

__all__ = ["DEMO_AS_OF", "DEMO_WINDOW_DAYS", "MALFORMED_REASONS", "DemoData", "generate_demo"]

DEMO_AS_OF = datetime(2026, 11, 30, 0, 0, tzinfo=timezone.utc)
# Every created/updated/accessed timestamp falls inside this window before DEMO_AS_OF.
DEMO_WINDOW_DAYS = 90

# The quarantine reasons this generator plants, one line each (the ingest's vocabulary).
MALFORMED_REASONS = (
    "bad JSON",
    "missing content",
    "missing tenant",
    "unknown tier",
    "bad timestamp",
    "wrong type",
    "content too large",
    "duplicate id in file",
)

# Comfortably above the ingest's 64 KB content limit whichever way a KB is counted.
_OVERSIZED_CONTENT_BYTES = 70_000


@dataclass(frozen=True)
class DemoData:
    """What `generate_demo` wrote and what a correct pipeline should make of it.

    files: snapshot paths in the order they must be ingested (sorted by name).
    as_of: the instant the data was generated for (`DEMO_AS_OF`).
    planted_pii: every raw PII or secret value, exactly as it appears in the files.
    malformed: (file name, 1-based line, expected quarantine reason) for each bad line.
    conflicts: (file name, 1-based line, field) for each write that must end in the conflict queue
        (the late sync based on version 1 of the edited memory).
    edited_id: the memory created in one file and edited (with `version: 1`) in a later one.
    forgotten_id: the memory a later file asks to forget.
    good_lines: records that should land as memories or updates: JSON Lines records plus the save
        file's records, excluding malformed, stale and forget lines.
    tenants: the tenants present in the data.
    """

    files: list[Path]
    as_of: datetime
    planted_pii: list[str]
    malformed: list[tuple[str, int, str]]
    conflicts: list[tuple[str, int, str]]
    edited_id: str
    forgotten_id: str
    good_lines: int
    tenants: list[str]


@dataclass(frozen=True)
class _Scope:
    tenant: str
    agent_id: str
    user_id: str
    name: str  # how memories refer to the user
    zh_share: float  # fraction of generated memories written in Chinese


# --- vocabulary and sentence templates for generated content (data files beside this module) ----

_DATA_DIR = Path(__file__).parent / "data"
_VOCABULARY: dict[str, list[str]] = json.loads((_DATA_DIR / "vocabulary.json").read_text(encoding="utf-8"))
_TEMPLATES: dict[str, dict[str, list[str]]] = json.loads((_DATA_DIR / "templates.json").read_text(encoding="utf-8"))
_CONVERSATIONS: list[dict[str, Any]] = json.loads(
    (_DATA_DIR / "conversations.json").read_text(encoding="utf-8"))["conversations"]
# The agent read each conversation back recently, so the short-term idle rule leaves it in place.
_CONVERSATION_READ_AT = "2026-11-29T09:00:00Z"
_TOPICS_EN = _VOCABULARY["topics_en"]
_TOPICS_ZH = _VOCABULARY["topics_zh"]
_CHANNELS_EN = _VOCABULARY["channels_en"]
_CHANNELS_ZH = _VOCABULARY["channels_zh"]
_STYLES_EN = _VOCABULARY["styles_en"]
_STYLES_ZH = _VOCABULARY["styles_zh"]
_WEEKDAYS_EN = _VOCABULARY["weekdays_en"]
_WEEKDAYS_ZH = _VOCABULARY["weekdays_zh"]
_REPORTS_EN = _VOCABULARY["reports_en"]
_REPORTS_ZH = _VOCABULARY["reports_zh"]
_FORMATS = _VOCABULARY["formats"]
_SYSTEMS_EN = _VOCABULARY["systems_en"]
_SYSTEMS_ZH = _VOCABULARY["systems_zh"]
_VERBS_EN = _VOCABULARY["verbs_en"]
_VERBS_ZH = _VOCABULARY["verbs_zh"]
_TECH = _VOCABULARY["tech"]
_COMPONENTS_EN = _VOCABULARY["components_en"]
_COMPONENTS_ZH = _VOCABULARY["components_zh"]
_TEAMS_EN = _VOCABULARY["teams_en"]
_TEAMS_ZH = _VOCABULARY["teams_zh"]
_PLANS = _VOCABULARY["plans"]
_REGIONS_EN = _VOCABULARY["regions_en"]
_REGIONS_ZH = _VOCABULARY["regions_zh"]
_CITIES_EN = _VOCABULARY["cities_en"]
_CITIES_ZH = _VOCABULARY["cities_zh"]
_PEOPLE_EN = _VOCABULARY["people_en"]
_PEOPLE_ZH = _VOCABULARY["people_zh"]
_COMPANIES_EN = _VOCABULARY["companies_en"]
_COMPANIES_ZH = _VOCABULARY["companies_zh"]
_LESSONS_EN = _VOCABULARY["lessons_en"]
_LESSONS_ZH = _VOCABULARY["lessons_zh"]
_EVENTS_EN = _VOCABULARY["events_en"]
_EVENTS_ZH = _VOCABULARY["events_zh"]
_OUTCOMES_EN = _VOCABULARY["outcomes_en"]
_OUTCOMES_ZH = _VOCABULARY["outcomes_zh"]
_TODOS_EN = _VOCABULARY["todos_en"]
_TODOS_ZH = _VOCABULARY["todos_zh"]
_MISC_EN = _VOCABULARY["misc_en"]
_MISC_ZH = _VOCABULARY["misc_zh"]
_MONTHS_EN = _VOCABULARY["months_en"]
_TEMPLATES_EN: dict[str, list[str]] = _TEMPLATES["en"]
_TEMPLATES_ZH: dict[str, list[str]] = _TEMPLATES["zh"]

_TYPE_WEIGHTS = {
    "preference": 20, "decision": 15, "fact": 20, "lesson": 10,
    "event": 12, "todo": 13, "summary": 5, "other": 5,
}
_TYPE_ZH = {
    "preference": "偏好", "decision": "决策", "fact": "事实", "lesson": "经验",
    "event": "事件", "todo": "待办", "summary": "摘要", "other": "备注",
}
_SOURCES = ["chat", "email", "meeting", "ticket", "api", "manual"]
_EXTRA_CHANNELS = ["slack", "email", "wechat", "teams", "web"]

# Accepted spellings of each tier, used in rotation so every spelling appears whatever the seed.
# None leaves the field out, which the ingest reads as the default tier short_term.
_TIER_SPELLINGS: dict[str, list[str | None]] = {
    "working": ["working"],
    "short_term": ["short_term", "short-term", "shortTerm", None],
    "long_term": ["long_term", "long-term"],
}
# How an important memory is marked: tier, the `important` flag, or both.
_IMPORTANT_MARKS: list[tuple[str | None, bool | None]] = [
    ("important", True), ("important", None), (None, True), ("long-term", True),
]

_RID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]


# --- check digits for planted identifiers ---------------------------------------------------------


def _resident_id_check_char(first17: str) -> str:
    """ISO 7064 MOD 11-2 check character of a Chinese resident ID (GB 11643)."""
    total = sum(int(d) * w for d, w in zip(first17, _RID_WEIGHTS))
    return "10X98765432"[total % 11]


def _luhn_check_digit(payload: str) -> str:
    """Luhn check digit to append to `payload` (the digits of a card number without it)."""
    total = 0
    # Counting from the right of the payload, every first, third, ... digit is doubled, because the
    # appended check digit will take the undoubled rightmost place.
    for i, ch in enumerate(reversed(payload)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _normalised(text: str) -> str:
    # Stricter than any plausible ingest normalisation, so generated memories never collide by
    # accident; only the planted duplicates are duplicates.
    return "".join(ch for ch in text.casefold() if ch.isalnum())


# --- the generator ----------------------------------------------------------------------------------


class _Builder:
    """Holds the random stream and the bookkeeping shared by all files of one demo."""

    def __init__(self, seed: int, as_of: datetime) -> None:
        self.rng = random.Random(seed)
        self.as_of = as_of
        self.ids: set[str] = set()
        self.seen: set[tuple[str, str, str, str]] = set()
        self.pii: list[str] = []
        self.tier_spelling: dict[str, Iterator[str | None]] = {
            tier: cycle(spellings) for tier, spellings in _TIER_SPELLINGS.items()
        }
        self.important_mark = cycle(_IMPORTANT_MARKS)

    # identifiers and time

    def new_id(self) -> str:
        while True:
            candidate = f"mem-{self.rng.getrandbits(48):012x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def claim_id(self, memory_id: str) -> str:
        assert memory_id not in self.ids, memory_id
        self.ids.add(memory_id)
        return memory_id

    def ago(self, days: float) -> datetime:
        # Whole seconds keep the ISO strings short and the arithmetic exact.
        return self.as_of - timedelta(seconds=int(days * 86400))

    def hex(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def token(self, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def date_text(self, zh: bool) -> str:
        d = self.ago(self.rng.uniform(-30, 60))
        return f"{d.month}月{d.day}日" if zh else f"{_MONTHS_EN[d.month - 1]} {d.day}"

    # planted PII values (recorded as they are made, so the list is complete by construction)

    def plant(self, value: str) -> str:
        self.pii.append(value)
        return value

    def cn_mobile(self) -> str:
        return self.plant(self.rng.choice(["138", "139", "186", "150"]) + self.token(8, string.digits))

    def resident_id(self) -> str:
        region = self.rng.choice(["110105", "310104", "440305", "330106", "510107"])
        birth = date(1965, 1, 1) + timedelta(days=self.rng.randrange(35 * 365))
        first17 = region + birth.strftime("%Y%m%d") + self.token(3, string.digits)
        return self.plant(first17 + _resident_id_check_char(first17))

    def card_number(self, prefix: str, grouped: bool) -> str:
        payload = prefix + self.token(15 - len(prefix), string.digits)
        number = payload + _luhn_check_digit(payload)
        if grouped:
            number = " ".join(number[i:i + 4] for i in range(0, 16, 4))
        return self.plant(number)

    # content

    def content(self, scope: _Scope, mtype: str, zh: bool) -> tuple[str, str | None]:
        """A memory text for `scope` that no other memory of the scope shares, and its topic."""
        r = self.rng
        templates = (_TEMPLATES_ZH if zh else _TEMPLATES_EN)[mtype]
        topics = _TOPICS_ZH if zh else _TOPICS_EN
        for _ in range(200):
            topic, topic2 = r.sample(topics, 2)
            fmt, fmt2 = r.sample(_FORMATS, 2)
            event = r.choice(_EVENTS_ZH if zh else _EVENTS_EN)
            slots = {
                "user": scope.name, "topic": topic, "topic2": topic2,
                "channel": r.choice(_CHANNELS_ZH if zh else _CHANNELS_EN),
                "style": r.choice(_STYLES_ZH if zh else _STYLES_EN),
                "weekday": r.choice(_WEEKDAYS_ZH if zh else _WEEKDAYS_EN),
                "report": r.choice(_REPORTS_ZH if zh else _REPORTS_EN),
                "format": fmt, "format2": fmt2,
                "verb": r.choice(_VERBS_ZH if zh else _VERBS_EN),
                "system": r.choice(_SYSTEMS_ZH if zh else _SYSTEMS_EN),
                "date": self.date_text(zh),
                "tech": r.choice(_TECH),
                "component": r.choice(_COMPONENTS_ZH if zh else _COMPONENTS_EN),
                "team": r.choice(_TEAMS_ZH if zh else _TEAMS_EN),
                "company": r.choice(_COMPANIES_ZH if zh else _COMPANIES_EN),
                "n": r.randint(5, 480), "plan": r.choice(_PLANS),
                "region": r.choice(_REGIONS_ZH if zh else _REGIONS_EN),
                "city": r.choice(_CITIES_ZH if zh else _CITIES_EN),
                "person": r.choice(_PEOPLE_ZH if zh else _PEOPLE_EN),
                "lesson": r.choice(_LESSONS_ZH if zh else _LESSONS_EN),
                "event": event, "event_lc": event if zh else event[0].lower() + event[1:],
                "outcome": r.choice(_OUTCOMES_ZH if zh else _OUTCOMES_EN),
                "todo": r.choice(_TODOS_ZH if zh else _TODOS_EN),
                "misc": r.choice(_MISC_ZH if zh else _MISC_EN),
            }
            template = r.choice(templates)
            text = template.format(**slots)
            if self.reserve(scope, text):
                # Tags and summaries name the topic only when the text is about it.
                return text, (topic if "{topic}" in template else None)
        raise RuntimeError(f"template space exhausted for {scope} {mtype}")

    def reserve(self, scope: _Scope, text: str) -> bool:
        key = (scope.tenant, scope.agent_id, scope.user_id, _normalised(text))
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def activity(self, tier: str) -> dict[str, Any]:
        """Timestamps and counters typical of a memory in `tier` (tier rules act on these later)."""
        r = self.rng
        age = {
            "working": (0.05, 3.0), "short_term": (0.5, 35.0),
            "long_term": (5.0, 89.5), "important": (1.0, 89.5),
        }[tier]
        age_days = r.uniform(*age)
        created = self.ago(age_days)
        roll = r.random()
        if tier == "working" or roll < 0.45:
            idle = r.uniform(0, min(age_days, 6.5))  # recently used
        elif roll < 0.80:
            idle = r.uniform(min(age_days, 7.5), min(age_days, 59.0))  # idle for over a week
        else:
            idle = age_days  # never accessed since it was written
        last = max(created, self.ago(idle))
        never = last == created
        return {
            "created_at": created,
            "updated_at": min(last, created + timedelta(seconds=r.randint(0, 3 * 86400))),
            "last_accessed_at": last,
            "access_count": 0 if never else r.randint(1, 40),
            "reference_count": 0 if never else r.choice([0, 0, 0, 1, 1, 2, 3, 5]),
        }

    def record(
        self,
        scope: _Scope,
        *,
        tier: str,
        mtype: str | None = None,
        zh: bool | None = None,
        content: str | None = None,
        memory_id: str | None = None,
        with_id: bool | None = None,
        activity: dict[str, Any] | None = None,
        expires_at: datetime | None = None,
        extra: dict[str, Any] | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """One snapshot record. Optional fields are present on some records only, as in real
        snapshots; fields the caller gives are always written."""
        r = self.rng
        mtype = mtype or r.choices(list(_TYPE_WEIGHTS), weights=list(_TYPE_WEIGHTS.values()))[0]
        zh = (r.random() < scope.zh_share) if zh is None else zh
        topic = None
        if content is None:
            content, topic = self.content(scope, mtype, zh)
        else:
            self.reserve(scope, content)
        act = activity or self.activity(tier)

        if tier == "important":
            spelled, flag = next(self.important_mark)
        else:
            spelled, flag = next(self.tier_spelling[tier]), None

        rec: dict[str, Any] = {}
        if memory_id is not None:
            rec["id"] = memory_id
        elif with_id if with_id is not None else r.random() < 0.65:
            rec["id"] = self.new_id()
        rec.update(tenant=scope.tenant, agent_id=scope.agent_id, user_id=scope.user_id)
        if r.random() < 0.5:
            rec["context_id"] = r.choice(["ticket", "proj", "case", "thread"]) + f"-{r.randint(100, 9999)}"
        if r.random() < 0.7:
            rec["session_id"] = f"sess-{self.hex(10)}"
        if spelled is not None:
            rec["tier"] = spelled
        rec["type"] = mtype
        rec["content"] = content
        if topic is not None and r.random() < 0.2:
            rec["summary"] = f"关于{topic}的{_TYPE_ZH[mtype]}" if zh else f"{mtype} about {topic}"
        if tags is not None:
            rec["tags"] = tags
        elif r.random() < 0.85:
            rec["tags"] = [mtype] + ([topic] if topic else []) + (["zh"] if zh else [])
        if tier == "important":
            rec["importance"] = round(r.uniform(0.85, 1.0), 2)
        elif r.random() < 0.8:
            rec["importance"] = round(r.uniform(0.1, 0.95), 2)
        if r.random() < 0.8:
            rec["source"] = "chat" if tier == "working" else r.choice(_SOURCES)
        rec["created_at"] = _iso(act["created_at"])
        if r.random() < 0.5:
            rec["updated_at"] = _iso(act["updated_at"])
        # Counters on most records; the rest fall back to last_accessed_at = created_at.
        if activity is not None or r.random() < 0.75:
            rec["last_accessed_at"] = _iso(act["last_accessed_at"])
            rec["access_count"] = act["access_count"]
            rec["reference_count"] = act["reference_count"]
        if expires_at is None and mtype in ("todo", "event") and r.random() < 0.35:
            # Some deadlines have passed at DEMO_AS_OF, others have not.
            expires_at = act["created_at"] + timedelta(days=r.uniform(3, 60))
        if expires_at is not None:
            rec["expires_at"] = _iso(expires_at)
        if flag is not None:
            rec["important"] = flag
        if r.random() < 0.4:
            rec["operator"] = "user" if r.random() < 0.25 else "agent"
        if r.random() < 0.3:
            rec["trace_id"] = self.hex(32)
        if r.random() < 0.15:
            rec["channel"] = r.choice(_EXTRA_CHANNELS)
        if extra:
            rec.update(extra)
        return rec

    def batch(self, scope: _Scope, counts: dict[str, int]) -> list[dict[str, Any]]:
        """Generated memories for one scope, `counts` per tier, in a shuffled (but seeded) order."""
        tiers = [tier for tier, n in counts.items() for _ in range(n)]
        self.rng.shuffle(tiers)
        return [self.record(scope, tier=tier) for tier in tiers]

    def mixed(self, scope: _Scope, n: int) -> list[dict[str, Any]]:
        """`n` memories for a scope with a typical tier mix."""
        tiers = self.rng.choices(
            ["working", "short_term", "long_term", "important"], weights=[15, 45, 32, 8], k=n
        )
        return [self.record(scope, tier=tier) for tier in tiers]


# --- files -------------------------------------------------------------------------------------------


@dataclass
class _Line:
    """One line of a JSON Lines file: a record (or raw text) and how the pipeline should treat it."""

    payload: dict[str, Any] | str
    kind: str = "good"  # good | forget | a reason from MALFORMED_REASONS


def _insert_spread(rng: random.Random, lines: list[_Line], bad: list[_Line]) -> None:
    # Bad lines go into distinct, seeded positions, never the first line, so the quarantine has to
    # cope with them mid-file rather than only at its start.
    positions = sorted(rng.sample(range(1, len(lines)), len(bad)))
    for offset, (pos, line) in enumerate(zip(positions, bad)):
        lines.insert(pos + offset, line)


def _dump(line: _Line) -> str:
    if isinstance(line.payload, str):
        return line.payload
    return json.dumps(line.payload, ensure_ascii=False)


def _write_atomic(path: Path, text: str) -> None:
    # The inbox convention: a reader never sees a half-written snapshot.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(text.encode("utf-8"))
    os.replace(tmp, path)


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


def generate_demo(inbox: Path, seed: int = 7) -> DemoData:
    """Write the demo snapshots into `inbox` (created if missing) and describe what was planted.

    The same seed writes byte-identical files; no clock is read (timestamps are relative to
    `DEMO_AS_OF`). Files are named so that sorted name order is ingest order, and each is written
    to `<name>.tmp` first and then renamed, as the inbox convention requires.
    Returns a `DemoData` with the files, the planted PII values, the malformed lines with their
    expected quarantine reasons, the edited and forgotten ids and the number of good records.
    """
    inbox = Path(inbox)
    inbox.mkdir(parents=True, exist_ok=True)
    b = _Builder(seed, DEMO_AS_OF)

    acme = _file_acme(b)
    edited = next(line.payload for line in acme
                  if isinstance(line.payload, dict) and line.payload.get("id") == _EDITED_ID)
    jsonl: list[tuple[str, list[_Line]]] = [
        ("0001-acme-support.jsonl", acme),
        ("0002-globex-ops.jsonl", _file_globex(b)),
        ("0003-zhongke-assistant.jsonl", _file_zhongke(b)),
        ("0004-acme-support-edits.jsonl", _file_acme_edits(b, edited)),
    ]
    save_name, save_doc = "0005-orchestrator-save.json", _save_orchestrator(b)
    late = ("0006-acme-late-sync.jsonl", _file_acme_late_sync(b, edited))
    jsonl.append(late)
    jsonl.append(("0007-support-conversations.jsonl", _file_conversations()))

    files: list[Path] = []
    malformed: list[tuple[str, int, str]] = []
    conflicts: list[tuple[str, int, str]] = []
    good = len(save_doc["memories"])
    for name, lines in jsonl:
        for number, line in enumerate(lines, start=1):
            if line.kind in MALFORMED_REASONS:
                malformed.append((name, number, line.kind))
            elif line.kind == "conflict":
                conflicts.append((name, number, "content"))
            elif line.kind == "good":
                good += 1
        path = inbox / name
        _write_atomic(path, "".join(_dump(line) + "\n" for line in lines))
        files.append(path)
    save_path = inbox / save_name
    _write_atomic(save_path, json.dumps(save_doc, ensure_ascii=False, indent=2) + "\n")
    files.append(save_path)

    return DemoData(
        files=sorted(files, key=lambda p: p.name),
        as_of=DEMO_AS_OF,
        planted_pii=list(b.pii),
        malformed=sorted(malformed),
        conflicts=conflicts,
        edited_id=_EDITED_ID,
        forgotten_id=_FORGOTTEN_ID,
        good_lines=good,
        tenants=["acme", "globex", "zhongke"],
    )
