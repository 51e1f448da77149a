"""The snapshot contract: spellings, types, defaults and the reason of every bad record."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_lake.ingest.snapshot import KNOWN_KEYS, MAX_DEPTH, MAX_INTEGER

from ..conftest import AS_OF, copy_lake, rows, write_jsonl


def land(lake, tmp_path, records, **kwargs):
    lake.ingest([write_jsonl(tmp_path / "s.jsonl", records, **kwargs)], as_of=AS_OF)
    return rows(lake, "SELECT id, tenant, agent_id, user_id, context_id, session_id, tier, type, tags, importance, "
                      "created_at, updated_at, last_accessed_at, access_count, reference_count, expires_at, "
                      "version, status, operator, extra FROM memories ORDER BY id")


@pytest.mark.parametrize("spelling, tier", [
    ("working", "working"), ("short-term", "short_term"), ("short_term", "short_term"),
    ("shortTerm", "short_term"), ("Short Term", "short_term"), ("long-term", "long_term"),
    ("LONG_TERM", "long_term"), ("longTerm", "long_term"), ("important", "important"),
])
def test_tier_spellings(lake, tmp_path, spelling, tier):
    (row,) = land(lake, tmp_path, [{"id": "m", "tenant": "t", "content": "c", "tier": spelling}])
    assert row["tier"] == tier


def test_camel_case_keys_numbers_as_ids_and_timestamp_forms(lake, tmp_path):
    (row,) = land(lake, tmp_path, [{
        "id": 42, "tenant": "t", "agentId": "bot", "userId": 7, "contextId": "ctx", "sessionId": "s1",
        "content": "c", "type": "Preferences", "tags": "single", "importance": 1,
        "createdAt": "2026-11-01T10:00:00+08:00", "updatedAt": 1794700800, "lastAccessedAt": "2026-11-02",
        "accessCount": 3, "referenceCount": 2.0, "expiresAt": "2027-01-01T00:00:00Z", "important": True,
    }])
    assert row == {
        "id": "42", "tenant": "t", "agent_id": "bot", "user_id": "7", "context_id": "ctx", "session_id": "s1",
        "tier": "important", "type": "preference", "tags": ["single"], "importance": 1.0,
        "created_at": datetime(2026, 11, 1, 2), "updated_at": datetime(2026, 11, 15),
        "last_accessed_at": datetime(2026, 11, 2), "access_count": 3, "reference_count": 2,
        "expires_at": datetime(2027, 1, 1), "version": 1, "status": "active", "operator": "agent", "extra": None,
    }


def test_unknown_fields_go_to_extra_sorted_and_nulls_are_absent(lake, tmp_path):
    (row,) = land(lake, tmp_path, [{"id": "m", "tenant": "t", "content": "c", "zeta": {"a": [1, 2]},
                                    "alpha": "x", "gone": None, "summary": None}])
    assert row["extra"] == '{"alpha":"x","zeta":{"a":[1,2]}}'


def test_unknown_fields_are_found_however_the_line_spells_its_keys(lake, tmp_path):
    """Which records hold unknown keys is judged from a count of the line's keys (snapshot.parse_records):
    spaces and tabs around a colon, an escaped key name and a known key holding null still leave every
    unknown key in `extra`, and a record with none gets none."""
    lines = ['{"id" : "a" ,\t"tenant"\t:\t"t", "content" :  "c",  "custom"   : 1}',
             '{"id":"b","tenant":"t","content":"c","\\u0063olor":"red","summary":null}',
             '{"id":"c","tenant":"t","content":"say \\"x\\": y","summary":null}',
             '{"id":"d","tenant":"t","content":"c","nested":{"k":{"deeper":true}}}']
    got = {row["id"]: row["extra"] for row in land(lake, tmp_path, lines)}
    assert got == {"a": '{"custom":1}', "b": '{"color":"red"}', "c": None, "d": '{"nested":{"k":{"deeper":true}}}'}


def test_timestamps_before_creation_are_lifted_to_it(lake, tmp_path):
    (row,) = land(lake, tmp_path, [{"id": "m", "tenant": "t", "content": "c", "created_at": "2026-11-10T00:00:00Z",
                                    "updated_at": "2026-11-01T00:00:00Z"}])
    assert (row["updated_at"], row["last_accessed_at"]) == (datetime(2026, 11, 10), datetime(2026, 11, 10))


BAD = [
    ('{"tenant": "t", "content": "c", "tier": 3}', "wrong type", "tier must be text"),
    ('{"tenant": "t", "content": ["c"]}', "wrong type", "content must be text"),
    ('{"tenant": "t", "content": "c", "type": "musing"}', "unknown type", "type musing"),
    ('{"tenant": "t", "content": "c", "status": "lost"}', "unknown status", "status lost"),
    ('{"tenant": "t", "content": "c", "operator": "robot"}', "unknown operator", "operator robot"),
    ('{"tenant": "t", "content": "c", "version": 0}', "out of range", "version 0 is outside 1..9007199254740991"),
    ('{"tenant": "t", "content": "c", "version": 1.5}', "wrong type", "version must be an integer"),
    ('{"tenant": "t", "content": "c", "access_count": -1}', "out of range", "access_count -1 is outside 0..9007199254740991"),
    ('{"tenant": "t", "content": "c", "deleted": "yes"}', "wrong type", "deleted must be true or false"),
    ('{"tenant": "t", "content": "c", "expires_at": "soon"}', "bad timestamp", 'expires_at: "soon"'),
    ('{"tenant": "t", "deleted": true}', "missing id", "a forget request needs the id"),
    ('{"tenant": "  ", "content": "c"}', "missing tenant", "tenant is empty"),
    ('{"tenant": "t", "content": "   "}', "missing content", "content is required"),
    ('{"tenant": {"name": "t"}, "content": "c"}', "wrong type", "tenant must be text"),
    ('"just a string"', "bad JSON", "not a JSON object"),
]


def test_every_bad_record_gets_its_reason_and_detail(lake, tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [text for text, _, _ in BAD])
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert report["quarantined"] == len(BAD)
    got = rows(lake, "SELECT line, reason, detail FROM quarantine ORDER BY line")
    assert got == [{"line": i, "reason": r, "detail": d} for i, (_, r, d) in enumerate(BAD, start=1)]


def test_duplicate_id_in_one_file_quarantines_the_later_line(lake, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "x", "tenant": "t", "content": "first"},
                                              {"tenant": "t", "content": "Same  TEXT"},
                                              {"id": "x", "tenant": "t", "content": "second"},
                                              {"tenant": "t", "content": "same text"}])
    lake.ingest([path], as_of=AS_OF)
    assert rows(lake, "SELECT content FROM memories ORDER BY content") == [{"content": "Same  TEXT"}, {"content": "first"}]
    got = rows(lake, "SELECT line, reason, detail FROM quarantine ORDER BY line")
    assert [(g["line"], g["reason"]) for g in got] == [(3, "duplicate id in file"), (4, "duplicate memory in file")]
    assert got[0]["detail"] == "id x first seen on line 1"
    # no id on either line: the user gave no id to repeat, so the reason names the repeated memory
    assert got[1]["detail"] == "same tenant, agent, user and text as line 2 (no id given: the id is derived from them)"


def test_content_limit_is_configurable(tmp_path):
    from memory_lake import Lake

    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "memory-lake.toml").write_text("[ingest]\nmax_content_bytes = 10\n")
    lake = Lake.open(tmp_path / "lake", create=True)
    path = write_jsonl(tmp_path / "s.jsonl", [{"tenant": "t", "content": "0123456789"},
                                              {"tenant": "t", "content": "中文十个字节"}])
    lake.ingest([path], as_of=AS_OF)
    assert rows(lake, "SELECT line, reason, detail FROM quarantine") == [
        {"line": 2, "reason": "content too large", "detail": "18 bytes > 10"}]


# ---------------------------------------------------------------- strict JSON (issue 11 item 6)
def test_trailing_comma_is_bad_json_like_any_other(lake, tmp_path):
    path = write_jsonl(tmp_path / "comma.jsonl", [
        '{"id": "m-comma", "tenant": "t", "content": "c", "operator": "agent",}',
        '{"id": "m-list", "tenant": "t", "content": "c", "tags": ["a",]}',
        '{"id": "m-nan", "tenant": "t", "content": "c", "importance": NaN}',
        '{"id": "m-inf", "tenant": "t", "content": "c", "score": -Infinity}',
        '{"id": "m-ok", "tenant": "t", "content": "a comma, ] and NaN inside a string are fine",}'[:-2] + "}",
    ])
    report = lake.ingest([path], as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (1, 4)
    assert rows(lake, "SELECT line, reason, detail, memory_id FROM quarantine ORDER BY line") == [
        {"line": 1, "reason": "bad JSON", "detail": "not valid JSON: a trailing comma", "memory_id": None},
        {"line": 2, "reason": "bad JSON", "detail": "not valid JSON: a trailing comma", "memory_id": None},
        {"line": 3, "reason": "bad JSON", "detail": "not valid JSON: NaN and Infinity are not JSON numbers",
         "memory_id": None},
        {"line": 4, "reason": "bad JSON", "detail": "not valid JSON: NaN and Infinity are not JSON numbers",
         "memory_id": None},
    ]
    assert rows(lake, "SELECT id, content FROM memories") == [
        {"id": "m-ok", "content": "a comma, ] and NaN inside a string are fine"}]


def test_save_file_with_a_trailing_comma_is_one_bad_json_record(lake):
    text = ('{"tenant": "acme", "agent_id": "orchestrator",\n "memories": [\n'
            '  {"id": "s-1", "content": "first", "operator": "agent",},\n  {"id": "s-2", "content": "second"}\n]}\n')
    (lake.inbox / "save.json").write_text(text, encoding="utf-8")
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (0, 1)
    (row,) = rows(lake, "SELECT file, line, reason, detail, raw FROM quarantine")
    assert row == {"file": "save.json", "line": 1, "reason": "bad JSON", "detail": "not valid JSON: a trailing comma",
                   "raw": text.strip().replace("\n", " ")}
    assert not (lake.inbox / "save.json").exists()


# ---------------------------------------------------------------- ranges (issue 12 item 1)
NESTED_127 = "[" * 127 + "]" * 127
OUT_OF_RANGE = [
    # (field and value as written, reason, detail)
    ('"created_at": 1e13', "out of range",
     "created_at 10000000000000.0 is outside 1970-01-01..9999-12-31 (a number is read as epoch seconds)"),
    ('"expires_at": 1e15', "out of range",
     "expires_at 1000000000000000.0 is outside 1970-01-01..9999-12-31 (a number is read as epoch seconds)"),
    ('"created_at": 1764460800000', "out of range",
     "created_at 1764460800000 is outside 1970-01-01..9999-12-31 (a number is read as epoch seconds)"),
    ('"updated_at": 1764460800000000', "out of range",
     "updated_at 1764460800000000 is outside 1970-01-01..9999-12-31 (a number is read as epoch seconds)"),
    ('"version": 1e19', "out of range", "version 10000000000000000000.0 is outside 1..9007199254740991"),
    ('"version": 1e400', "out of range", "version 1e400 is outside 1..9007199254740991"),
    ('"access_count": 1e19', "out of range", "access_count 10000000000000000000.0 is outside 0..9007199254740991"),
    ('"reference_count": -1e300', "out of range", "reference_count -1e300 is outside 0..9007199254740991"),
    ('"extra": ' + NESTED_127, "too deeply nested", "nested deeper than 64 levels"),
    ('"content": ' + NESTED_127, "too deeply nested", "nested deeper than 64 levels"),
    ('"created_at": "infinity"', "out of range", 'created_at "infinity" is outside 1970-01-01..9999-12-31'),
    ('"last_accessed_at": "1969-12-31T23:59:59Z"', "out of range",
     'last_accessed_at "1969-12-31T23:59:59Z" is outside 1970-01-01..9999-12-31'),
    ('"expires_at": "9999-12-31T23:00:00-05:00"', "out of range",
     'expires_at "9999-12-31T23:00:00-05:00" is outside 1970-01-01..9999-12-31'),
    ('"version": 9007199254740992', "out of range", "version 9007199254740992 is outside 1..9007199254740991"),
    ('"importance": 1e400', "out of range", "importance 1e400 is outside 0..1"),
]


def test_out_of_range_values_are_quarantined_and_the_rest_of_the_file_lands(tmp_path, capsys):
    """Each value used to abort ingest and the nightly with exit 1, leaving the file in the inbox
    in front of every later file; a millisecond epoch landed as year 57883 and broke search and
    `sql SELECT *`."""
    from memory_lake import Lake
    from memory_lake.cli import main

    lake = Lake.init(tmp_path / "lake")
    lines = [f'{{"id": "bad-{i}", "tenant": "t", "content": "bad value {i}", {field}}}'
             for i, (field, _, _) in enumerate(OUT_OF_RANGE)]
    lines.insert(3, '{"id": "good-1", "tenant": "t", "content": "good memory about coffee", "created_at": 1764460800}')
    write_jsonl(lake.inbox / "0001.jsonl", lines)
    write_jsonl(lake.inbox / "0002.jsonl", [{"id": "good-2", "tenant": "t", "content": "later memory about coffee"}])

    assert main(["--lake", str(lake.root), "--json", "ingest", "--as-of", "2026-11-30T00:00:00Z"]) == 0
    capsys.readouterr()

    assert sorted(p.name for p in lake.inbox.glob("*.jsonl")) == []
    expected = [(reason, detail) for _, reason, detail in OUT_OF_RANGE]
    got = rows(lake, "SELECT line, memory_id, reason, detail FROM quarantine ORDER BY line")
    assert [(g["reason"], g["detail"]) for g in got] == expected
    assert [g["line"] for g in got] == [n for n in range(1, len(lines) + 1) if n != 4]
    # a record whose JSON was read names its id; one refused before parsing cannot
    assert [g["memory_id"] for g in got] == [f"bad-{i}" if reason != "too deeply nested" else None
                                             for i, (_, reason, _) in enumerate(OUT_OF_RANGE)]
    assert rows(lake, "SELECT id, created_at FROM memories ORDER BY id") == [
        {"id": "good-1", "created_at": datetime(2025, 11, 30)}, {"id": "good-2", "created_at": AS_OF}]
    # everything stored reads back: SQL over every column, search
    assert main(["--lake", str(lake.root), "--json", "sql", "SELECT * FROM memories"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert main(["--lake", str(lake.root), "--json", "search", "coffee", "--tenant", "t", "--mode", "keyword"]) == 0
    assert "good-1" in capsys.readouterr().out


def test_the_edges_of_every_range_land(lake, tmp_path):
    nested_64 = "[" * 63 + "]" * 63  # the record itself is level 1
    path = write_jsonl(tmp_path / "edges.jsonl", [
        '{"id": "low", "tenant": "t", "content": "c", "created_at": "1970-01-01T00:00:00Z", "updated_at": 0, '
        '"version": 1, "access_count": 0, "reference_count": 0, "importance": 0, "deep": ' + nested_64 + '}',
        '{"id": "high", "tenant": "t", "content": "c", "created_at": 253402300799, '
        '"expires_at": "9999-12-31T23:59:59.999999Z", "version": 9007199254740991, "access_count": 9007199254740991, '
        '"reference_count": 9.007199254740991e15, "importance": 1}',
        '{"id": "deeper", "tenant": "t", "content": "c", "deep": [' + nested_64 + ']}',
    ])
    # a day before the last second of year 9999: an event time there is at the edge of the horizon too
    report = lake.ingest([path], as_of=datetime(9999, 12, 30, 23, 59, 59)).as_dict()
    assert (report["ingested"], report["quarantined"]) == (2, 1)
    assert rows(lake, "SELECT id, created_at, expires_at, version, access_count, reference_count, importance "
                      "FROM memories ORDER BY id") == [
        {"id": "high", "created_at": datetime(9999, 12, 31, 23, 59, 59), "expires_at": datetime(9999, 12, 31, 23, 59, 59, 999999),
         "version": 9007199254740991, "access_count": 9007199254740991, "reference_count": 9007199254740991,
         "importance": 1.0},
        {"id": "low", "created_at": datetime(1970, 1, 1), "expires_at": None, "version": 1, "access_count": 0,
         "reference_count": 0, "importance": 0.0},
    ]
    assert rows(lake, "SELECT line, reason FROM quarantine") == [{"line": 3, "reason": "too deeply nested"}]


# ---------------------------------------------------------------- property: nothing aborts a run
# Values are raw JSON texts, so that NaN/Infinity literals, 1e400 and deep nesting can be written.
# Each invalid record carries exactly one bad value, so its reason is known. Integers stay at most
# ten digits (plus the range edges): a longer number can look like a phone or card number, which
# the redaction replaces by a placeholder text before validation (a text/redact matter).
TEXT = st.text(max_size=30)
HUGE_TEXT = st.integers(70_000, 200_000).map(lambda n: "x" * n)
SMALL_INT = st.integers(-(10**10) + 1, 10**10 - 1)
NUMBER = SMALL_INT | st.floats(allow_nan=False, allow_infinity=False)
NON_FINITE = st.sampled_from(["NaN", "Infinity", "-Infinity"])
HUGE_NUMBER = st.sampled_from(["1e400", "-1e400", "1e19", "-1e300", "1" * 60])
HORIZON = AS_OF + timedelta(hours=24)  # the default [ingest] future_horizon_h
HORIZON_EPOCH = int(HORIZON.replace(tzinfo=timezone.utc).timestamp())
ANY_JSON = st.recursive(st.none() | st.booleans() | NUMBER | TEXT,
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                        max_leaves=10)


def dump(value, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def deep(depth: int) -> st.SearchStrategy[str]:
    return st.sampled_from(["[", '{"k": ']).map(lambda opener: opener * depth + "1" + ("]" if opener == "[" else "}") * depth)


def valid_values(name: str) -> st.SearchStrategy:
    """Values a field accepts (written with json.dumps)."""
    if name in ("agent_id", "user_id", "context_id", "session_id", "trace_id"):
        return TEXT | SMALL_INT
    if name in ("summary", "source", "reason"):
        return TEXT | HUGE_TEXT
    if name == "tier":
        return st.sampled_from(["working", "short-term", "Long Term", "important", "longTerm"])
    if name == "type":
        return st.sampled_from(["preference", "Preferences", "fact", "todo", "other", "long-term"])
    if name == "status":
        return st.sampled_from(["active", "dormant", "archived"])
    if name == "operator":
        return st.sampled_from(["user", "agent", "system"])
    if name == "tags":
        return TEXT | st.lists(TEXT, max_size=4)
    if name == "importance":
        return st.floats(0, 1) | st.sampled_from([0, 1])
    if name in ("created_at", "updated_at", "last_accessed_at", "expires_at"):
        # an event time at most a day after as_of ([ingest] future_horizon_h); a deadline any time
        last = (HORIZON, HORIZON_EPOCH) if name != "expires_at" else (datetime(9999, 12, 31, 23, 59, 59, 999999),
                                                                      9_999_999_999)
        stamps = st.datetimes(datetime(1970, 1, 1), last[0])
        return (stamps.map(lambda d: d.isoformat() + "Z") | stamps.map(datetime.isoformat)
                | st.integers(0, last[1]) | st.floats(0, last[1]))
    if name in ("version", "access_count", "reference_count"):
        low = 1 if name == "version" else 0
        return st.integers(low, 10**10 - 1) | st.sampled_from([MAX_INTEGER, float(low), float(MAX_INTEGER)])
    if name == "important":
        return st.booleans()
    raise AssertionError(name)


class Raw(str):
    """JSON text written as is."""


def invalid_values(name: str) -> st.SearchStrategy[tuple[object, str]]:
    """(value, reason) that a field refuses."""
    raw = lambda s: s.map(Raw)  # noqa: E731
    common = st.one_of(raw(NON_FINITE).map(lambda v: (v, "bad JSON")),
                       raw(deep(MAX_DEPTH)).map(lambda v: (v, "too deeply nested")))
    structures = st.lists(ANY_JSON, max_size=2) | st.dictionaries(TEXT, ANY_JSON, max_size=2)
    if name in ("agent_id", "user_id", "context_id", "session_id", "trace_id", "summary", "source", "reason"):
        wrong = structures | st.booleans() | (NUMBER if name in ("summary", "source", "reason") else st.nothing())
        return common | wrong.map(lambda v: (v, "wrong type"))
    if name in ("tier", "type", "status", "operator"):
        return common | TEXT.map(lambda t: ("zz " + t, f"unknown {name}")) | (structures | NUMBER).map(lambda v: (v, "wrong type"))
    if name == "tags":
        return common | (st.lists(NUMBER | st.booleans(), min_size=1, max_size=3) | NUMBER).map(lambda v: (v, "wrong type"))
    if name == "importance":
        outside = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not 0 <= x <= 1)
        return (common | outside.map(lambda v: (v, "out of range")) | raw(HUGE_NUMBER).map(lambda v: (v, "out of range"))
                | (TEXT | structures | st.booleans()).map(lambda v: (v, "wrong type")))
    if name in ("created_at", "updated_at", "last_accessed_at", "expires_at"):
        early = st.datetimes(datetime(1, 1, 1), datetime(1969, 12, 31, 23, 59, 59)).map(lambda d: d.isoformat() + "Z")
        late = st.integers(253402300800, 10**10 * 10**10) | st.integers(-(10**10), -1)
        after = (st.datetimes(HORIZON + timedelta(seconds=1), datetime(9999, 12, 31, 23, 59, 59))
                 .map(lambda d: d.isoformat() + "Z") | st.integers(HORIZON_EPOCH + 1, 9_999_999_999))
        future = after.map(lambda v: (v, "future timestamp")) if name != "expires_at" else st.nothing()
        return (common | (early | late | raw(HUGE_NUMBER)).map(lambda v: (v, "out of range")) | future
                | (st.sampled_from(["soon", "yesterday", "2026-13-01", ""]) | structures | st.booleans())
                .map(lambda v: (v, "bad timestamp")))
    if name in ("version", "access_count", "reference_count"):
        low = 1 if name == "version" else 0
        fractional = st.floats(-1e9, 1e9).filter(lambda x: not x.is_integer())
        outside = st.integers(max_value=low - 1) | st.integers(min_value=MAX_INTEGER + 1)
        return (common | (outside | raw(HUGE_NUMBER)).map(lambda v: (v, "out of range"))
                | (fractional | TEXT | structures | st.booleans()).map(lambda v: (v, "wrong type")))
    if name == "important":
        return common | (TEXT | NUMBER | structures).map(lambda v: (v, "wrong type"))
    if name == "content":
        return common | HUGE_TEXT.map(lambda v: (v, "content too large")) | st.just(("   ", "missing content")) | (
            structures | st.booleans()).map(lambda v: (v, "wrong type"))
    if name == "tenant":
        return common | st.sampled_from([None, "  "]).map(lambda v: (v, "missing tenant")) | (
            structures | st.booleans()).map(lambda v: (v, "wrong type"))
    if name == "unknown":
        return common
    raise AssertionError(name)


FIELDS = ("agent_id", "user_id", "context_id", "session_id", "trace_id", "summary", "source", "reason", "tier", "type",
          "status", "operator", "tags", "importance", "created_at", "updated_at", "last_accessed_at", "expires_at",
          "version", "access_count", "reference_count", "important")
UNKNOWN_KEY = TEXT.filter(lambda k: k not in KNOWN_KEYS)


@st.composite
def record(draw, number: int) -> tuple[str, str | None]:
    """One JSON line and the reason it must be quarantined for (None: it must land)."""
    fields: dict[str, object] = {"tenant": draw(st.sampled_from(["acme", "租户", "t 1"])),
                                 "content": f"memory {number}: " + draw(TEXT)}
    for name in draw(st.lists(st.sampled_from(FIELDS), unique=True, max_size=8)):
        fields[name] = draw(valid_values(name))
    for key in draw(st.lists(UNKNOWN_KEY, unique=True, max_size=3)):
        fields[key] = draw(ANY_JSON | HUGE_TEXT | st.just(10**400))
    reason = None
    if draw(st.booleans()):
        name = draw(st.sampled_from((*FIELDS, "content", "tenant", "unknown")))
        value, reason = draw(invalid_values(name))
        if name == "unknown":
            name = draw(UNKNOWN_KEY.filter(lambda k: k not in fields))
        fields[name] = value
        if name == "tenant" and value is None:
            del fields["tenant"]
    ascii_only = draw(st.booleans())
    body = ", ".join(f"{dump(k, ascii_only)}: {v if isinstance(v, Raw) else dump(v, ascii_only)}" for k, v in fields.items())
    return "{" + body + "}", reason


@st.composite
def snapshot(draw) -> list[tuple[str, str | None]]:
    lines = [draw(record(n)) for n in range(draw(st.integers(1, 12)))]
    if draw(st.booleans()):  # a line broken as a whole
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, (draw(st.sampled_from(['{"tenant": "acme", "content": "trailing",}', "[1, 2]", "{not json",
                                                  '"just text"'])), "bad JSON"))
    return lines


@pytest.mark.slow  # 25-40 s: Hypothesis examples, each a whole lake
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(snapshot())
def test_random_values_never_abort_ingest_and_land_or_quarantine_exactly(new_lake_dir, lines):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        lake = copy_lake(new_lake_dir, Path(tmp) / "lake")  # a new lake of its own (a copy: 0.1 s less than creating it)
        path = write_jsonl(lake.inbox / "random.jsonl", [text for text, _ in lines])
        report = lake.ingest(as_of=AS_OF).as_dict()

        expected = {n: reason for n, (_, reason) in enumerate(lines, start=1) if reason}
        with lake.reading() as (con, _, _):  # one connection for the three reads
            got = {r["line"]: r["reason"] for r in con.execute("SELECT line, reason FROM quarantine").pl().to_dicts()}
            assert got == expected
            assert report["ingested"] == len(lines) - len(expected)
            assert not path.exists()
            # every stored value reads back, through SQL and search
            assert len(con.execute("SELECT * FROM memories").pl().to_dicts()) == report["ingested"]
            con.execute("SELECT * FROM memory_history").pl().to_dicts()
        for (tenant,) in lake.sql("SELECT DISTINCT tenant FROM memories").iter_rows():
            lake.search("memory", tenant=tenant, mode="keyword")


@pytest.mark.parametrize("memories", ['{"id": "x2", "content": "a fact"}', '"a fact"', "null", "7"])
def test_save_file_whose_memories_is_not_a_list_says_so(lake, memories):
    """Finding 12: a save file's `memories` that is no list is one record of the wrong type,
    not a record missing its content."""
    text = '{"tenant": "t1", "memories": ' + memories + '}'
    (lake.inbox / "save.json").write_text(text + "\n", encoding="utf-8")
    report = lake.ingest(as_of=AS_OF).as_dict()
    assert (report["ingested"], report["quarantined"]) == (0, 1)
    assert rows(lake, "SELECT file, line, reason, detail, tenant, raw FROM quarantine") == [
        {"file": "save.json", "line": 1, "reason": "wrong type", "detail": "memories must be a list of records",
         "tenant": None, "raw": text}]


def test_a_record_with_neither_tenant_nor_content_is_told_it_may_not_be_a_memory(tmp_path):
    from memory_lake import Lake

    lake = Lake.init(tmp_path / "lake")
    write_jsonl(lake.inbox / "raw.jsonl", [
        json.dumps({"sample_id": "conv-26", "conversation": {"speaker_a": "Caroline"}, "qa": []}),  # a raw chat dataset
        json.dumps({"content": "no tenant here"}),
        json.dumps({"tenant": "acme", "content": "lands"}),
    ])
    lake.ingest(as_of=AS_OF)
    assert rows(lake, "SELECT line, reason, detail FROM quarantine ORDER BY line") == [
        {"line": 1, "reason": "missing tenant", "detail": "tenant is required, and the record has no content either, "
         "so it may not be a memory: `memory-lake ingest --help` lists the formats read (chat transcripts, Mem0, Letta "
         "and Zep exports) and --tenant"},
        {"line": 2, "reason": "missing tenant", "detail": "tenant is required"},
    ]
    assert rows(lake, "SELECT content FROM memories") == [{"content": "lands"}]
