"""The context pack (issue 16, seed 002 buildContext): sections, dates, dispute marks shown in
pairs, the token budget (English and Chinese), the drop order, the latest summary, reads while
another process holds the lake, and the published context.md."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from memory_lake.maintain.dedup import dedup
from memory_lake.maintain.entities import extract_entities
from memory_lake.publish.export import publish
from memory_lake.text import count_tokens
from memory_lake.search.context import scope_pack

from ..conftest import AS_OF, held_by_another_process, write_jsonl

EN = {"important": "Contract renewal with Initech is due on {d}.",
      "long": "The billing service runs in region {n} and Priya owns its deploys.",
      "short": "Alice asked about invoice {n} and wants a reply by email.",
      "working": "Alice is drafting note {n} about webhook retries."}
ZH = {"important": "与华信科技的合同在{d}到期，必须续签。",
      "long": "计费系统部署在第{n}区，王芳负责发布。",
      "short": "张伟询问了第{n}号发票，希望邮件回复。",
      "working": "张伟正在起草关于消息推送的第{n}份笔记。"}


def fill(lake, tmp_path, texts, user="u1"):
    """A scope with 6 important, 30 long-term, 30 short-term and 10 working memories (one a day)
    and a summary; enough to pass any budget tested here."""
    records = []
    day = AS_OF - timedelta(days=90)
    for tier, count in (("important", 6), ("long_term", 30), ("short_term", 30), ("working", 10)):
        key = {"important": "important", "long_term": "long", "short_term": "short", "working": "working"}[tier]
        for n in range(count):
            day += timedelta(hours=20)
            records.append({"id": f"{tier}-{n:02d}", "tenant": "acme", "agent_id": "bot", "user_id": user,
                            "tier": tier, "type": "fact", "importance": 0.5 + n / 100,
                            "content": texts[key].format(n=n + 1, d=f"2027-0{n % 9 + 1}-1{n % 9}"),
                            "created_at": day.strftime("%Y-%m-%dT%H:%M:%SZ")})
    # the lake's own summaries (operator system, as the summarize step writes them): since issue 37.5
    # an agent's memory typed summary is not the pack's latest summary
    records.append({"id": "summary-old", "tenant": "acme", "agent_id": "bot", "user_id": user, "tier": "long_term",
                    "type": "summary", "operator": "system", "content": "Old summary.", "created_at": "2026-09-01T00:00:00Z"})
    records.append({"id": "summary-new", "tenant": "acme", "agent_id": "bot", "user_id": user, "tier": "long_term",
                    "type": "summary", "operator": "system", "content": "会话摘要：续签合同与发票。" if texts is ZH else "Summary: renewals and invoices.",
                    "created_at": "2026-11-20T00:00:00Z"})
    lake.ingest([write_jsonl(tmp_path / f"{user}.jsonl", records)], as_of=AS_OF)
    extract_entities(lake, AS_OF)


@pytest.mark.models
@pytest.mark.parametrize("texts,query", [(EN, "Who owns the billing service?"), (ZH, "计费系统谁负责")],
                         ids=["english", "chinese"])
@pytest.mark.parametrize("budget", [200, 500, 2000])
def test_the_pack_stays_within_its_budget_and_drops_from_the_bottom(lake, tmp_path, texts, query, budget):
    fill(lake, tmp_path, texts)
    pack = lake.build_context(query, tenant="acme", agent="bot", user="u1", max_tokens=budget, as_of=AS_OF)
    assert 0 < pack.tokens <= budget
    assert count_tokens(pack.markdown) == pack.tokens
    if budget < 2000:
        assert pack.dropped > 0 and pack.notes == [f"{pack.dropped} line(s) left out to stay within {budget} tokens"]
    names = [s["name"] for s in pack.sections]
    assert names[0] == "important"
    # every memory line is dated
    for section in pack.sections:
        if section["name"] != "entities":
            assert all(re.match(r"- \d{4}-\d\d-\d\d \(\w+\) ", line) for line in section["lines"])
    # the drop order: a section is present only if every section kept before it is complete
    important = [line for s in pack.sections if s["name"] == "important" for line in s["lines"]]
    if "recent" in names or "summary" in names:
        assert len(important) == 6
    if budget == 2000:
        assert names == ["important", "summary", "relevant", "entities", "recent"]
        (summary,) = [s["lines"] for s in pack.sections if s["name"] == "summary"]
        assert summary == ["- 2026-11-20 (summary) " + ("会话摘要：续签合同与发票。" if texts is ZH else
                                                         "Summary: renewals and invoices.")]
    if budget == 200:
        assert "recent" not in names


@pytest.mark.models
def test_important_lines_are_never_dropped_while_a_recent_one_stays(lake, tmp_path):
    fill(lake, tmp_path, EN)
    for budget in range(40, 1400, 60):
        pack = lake.build_context("invoice", tenant="acme", agent="bot", user="u1", max_tokens=budget, as_of=AS_OF)
        kept = {s["name"]: len(s["lines"]) for s in pack.sections}
        assert pack.tokens <= budget
        if kept.get("recent"):
            assert kept.get("important") == 6 and kept.get("summary") == 1


@pytest.mark.models
def test_a_small_pack_whole(lake, tmp_path):
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        {"id": "pin", "tenant": "acme", "user_id": "u1", "tier": "important", "type": "fact",
         "content": "Alice is allergic to peanuts.", "created_at": "2026-09-01T00:00:00Z"},
        {"id": "old", "tenant": "acme", "user_id": "u1", "tier": "long_term", "type": "fact",
         "content": "Alice lives in Paris.", "created_at": "2026-10-01T00:00:00Z"},
        {"id": "new", "tenant": "acme", "user_id": "u1", "tier": "long_term", "type": "fact",
         "content": "Alice lives in Berlin.", "created_at": "2026-11-01T00:00:00Z"},
        {"id": "now", "tenant": "acme", "user_id": "u1", "tier": "working", "type": "todo",
         "content": "Book a table for Friday.", "created_at": "2026-11-29T00:00:00Z"},
    ])], as_of=AS_OF)
    extract_entities(lake, AS_OF)
    pack = lake.build_context("Where does Alice live?", tenant="acme", user="u1", as_of=AS_OF)
    assert pack.markdown == (
        "# Memory context: acme / (all) / u1\n\nAs of 2026-11-30T00:00:00Z.\nQuery: Where does Alice live?\n\n"
        "## Important\n\n- 2026-09-01 (fact) Alice is allergic to peanuts.\n\n"
        "## Relevant memories\n\n- 2026-11-01 (fact) Alice lives in Berlin.\n- 2026-10-01 (fact) Alice lives in Paris.\n\n"
        "## Known entities\n\n"
        "- Alice (person, 3 mentions): Alice lives in Berlin. (2026-11-01); Alice is allergic to peanuts. (2026-09-01)\n"
        "- Berlin (place, 1 mention): Alice lives in Berlin. (2026-11-01)\n"
        "- Paris (place, 1 mention): Alice lives in Paris. (2026-10-01)\n\n"
        "## Recent\n\n- 2026-11-29 (todo) Book a table for Friday.\n")
    assert (pack.tokens, pack.max_tokens, pack.dropped, pack.notes) == (count_tokens(pack.markdown), 2000, 0, [])


@pytest.mark.models
def test_disputed_memories_are_marked_and_shown_with_their_other_side(lake, tmp_path):
    base = {"tenant": "acme", "agent_id": "bot", "user_id": "u1", "type": "preference", "tier": "short_term"}
    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        {**base, "id": "dark", "content": "User prefers dark mode in the editor", "created_at": "2026-11-01T00:00:00Z"},
        {**base, "id": "light", "content": "User prefers light mode in the editor", "created_at": "2026-10-01T00:00:00Z",
         "tier": "long_term"},
        *[{**base, "id": f"r{i}", "content": f"Recent note number {i}", "created_at": f"2026-11-2{i}T00:00:00Z"}
          for i in range(1, 9)],
    ])], as_of=AS_OF)
    assert dedup(lake, AS_OF).counts["contradictions_filed"] == 1
    pack = lake.build_context("recent note", tenant="acme", agent="bot", user="u1", as_of=AS_OF)
    lines = pack.markdown.splitlines()
    dark = lines.index("- 2026-11-01 (preference) User prefers dark mode in the editor "
                       "[disputed, id dark: contradicts light; waits for a user's decision]")
    # the long-term side, never offered as recent, is printed right below it, marked too
    assert lines[dark + 1] == ("- 2026-10-01 (preference) User prefers light mode in the editor "
                               "[disputed, id light: contradicts dark; waits for a user's decision]")
    assert sum("User prefers" in line for line in lines) == 2
    # a budget that holds every line but the other side holds neither side
    small = lake.build_context("recent note", tenant="acme", agent="bot", user="u1", as_of=AS_OF,
                               max_tokens=pack.tokens - count_tokens(lines[dark + 1]) + 1)
    assert "dark mode" not in small.markdown and "light mode" not in small.markdown
    assert sum(line.startswith("- 2026-11-2") for line in small.markdown.splitlines()) == 8


@pytest.mark.models
def test_the_pack_reads_the_published_version_while_another_process_holds_the_lake(lake, tmp_path):
    fill(lake, tmp_path, EN)
    publish(lake, AS_OF)
    live = lake.build_context("billing", tenant="acme", agent="bot", user="u1", max_tokens=500, as_of=AS_OF)
    with held_by_another_process(lake):
        busy = lake.build_context("billing", tenant="acme", agent="bot", user="u1", max_tokens=500, as_of=AS_OF)
    assert busy.markdown == live.markdown
    assert busy.notes[0].startswith("the lake is busy (a run holds it); answered from published v1")


def test_an_empty_scope_and_a_bad_budget(lake, tmp_path):
    from memory_lake.store import InputError

    lake.ingest([write_jsonl(tmp_path / "a.jsonl", [
        {"id": "gone", "tenant": "acme", "user_id": "u1", "content": "archived", "status": "archived"}])], as_of=AS_OF)
    pack = lake.build_context("anything", tenant="acme", user="u1", as_of=AS_OF)
    assert pack.notes == ["no active memory in tenant acme, user u1: the pack has nothing to show"]
    assert pack.sections == [] and pack.markdown.startswith("# Memory context: acme / (all) / u1")
    with pytest.raises(InputError, match="must be a positive integer"):
        lake.build_context("anything", tenant="acme", max_tokens=0)
    with pytest.raises(InputError, match="unknown user 'u9'"):
        lake.build_context("anything", tenant="acme", user="u9")


def test_a_budget_below_the_heading_gives_an_empty_pack_and_says_so():
    pack = scope_pack({"tenant": "acme", "agent_id": None, "user_id": "u1", "as_of": "2026-11-30T00:00:00Z"},
                      [{"id": "a", "tier": "important", "type": "fact", "content": "x", "status": "active",
                        "created_at": "2026-11-01T00:00:00Z"}], [], max_tokens=5)
    assert (pack.markdown, pack.tokens, pack.sections) == ("", 0, [])
    assert pack.notes[-1].startswith("the budget of 5 tokens is smaller than the pack's heading")


@pytest.mark.parametrize("texts", [EN, ZH], ids=["english", "chinese"])
def test_published_context_md_is_the_pack_without_a_query(lake, tmp_path, texts):
    fill(lake, tmp_path, texts)
    publish(lake, AS_OF)
    context = (lake.exports / "v1" / "scopes" / "acme" / "bot" / "u1" / "context.md").read_text()
    assert count_tokens(context) <= 2000
    headings = [line for line in context.splitlines() if line.startswith("## ")]
    assert headings == ["## Important", "## Latest summary", "## Known entities", "## Recent"]
    assert "Old summary." not in context and "long_term-" not in context
    memory_json = json.loads((lake.exports / "v1" / "scopes" / "acme" / "bot" / "u1" / "memory.json").read_text())
    assert len(memory_json["memories"]) == 78  # the full list stays in memory.json


def test_a_long_line_is_shortened_at_a_word_boundary_and_the_notes_say_so():
    """A line longer than a quarter of the budget is shortened; "Postgres" was cut to "Pos…" and
    the notes only counted lines left out (a stranger's trial)."""
    header = {"tenant": "acme", "agent_id": None, "user_id": "u1", "as_of": "2026-11-30T00:00:00Z"}
    long_en = ("The order service moves to PostgreSQL on December 15 and Zhang San owns the migration, "
               "with a rollback plan reviewed by the platform team")
    records = [{"id": "a", "tier": "important", "type": "decision", "content": long_en, "status": "active",
                "created_at": "2026-11-01T00:00:00Z"},
               {"id": "b", "tier": "important", "type": "decision", "content": "我们决定12月15日把订单服务迁移到PostgreSQL",
                "status": "active", "created_at": "2026-11-02T00:00:00Z"}]
    pack = scope_pack(header, records, [], max_tokens=80)
    lines = pack.sections[0]["lines"]
    assert len(lines) == 2 and all(line.endswith("…") for line in lines)
    english = next(line for line in lines if "order service" in line)
    chinese = next(line for line in lines if "订单" in line or "我们决定" in line)
    # each cut ends on a whole word or between Chinese characters, never inside "PostgreSQL" or "12"
    assert english[:-1].split()[-1] in long_en.split()
    assert not chinese[:-1].endswith(("Pos", "Postgre", "我们决定1"))
    assert all(count_tokens(line) <= 20 for line in lines)
    assert pack.notes[-1] == ("2 line(s) shortened (…) to a quarter of the budget, 20 tokens: a larger max_tokens "
                              "keeps them whole")
    assert not any("shortened" in n for n in scope_pack(header, records, [], max_tokens=2000).notes)
