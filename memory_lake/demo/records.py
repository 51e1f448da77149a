"""The seeded record builder of the demo: word lists and sentence templates (``data/``), tier
spellings, check digits for planted identifiers, and `_Builder`, which holds the random stream and
makes generated memory records for a scope.

Nothing here reads the clock: every timestamp is placed relative to the `as_of` the builder is given.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from itertools import cycle
from pathlib import Path
from typing import Any, Iterator


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


# --- the builder ------------------------------------------------------------------------------------


class _Builder:
    """Holds the random stream and the bookkeeping shared by all files of one demo."""

    def __init__(self, seed: int | str, as_of: datetime) -> None:
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
