"""Forget and the report: DESIGN "Forget reaches everything" for the summaries, and "A summary that
fails stays unpublished; the previous one is kept and an alert is raised" (seed 000 "自动摘要生成与质量评估").

Forgetting a source forgets every summary that ever drew on it (their text holds it: ingest's
``SUMMARIES_OF_SQL``); the ``summary_state`` scrubber blanks the missing facts and unsupported
statements of every state row that drew on a forgotten memory, and its hash, so the next run
summarises again from what is left. `failed_summaries` lists the keys whose latest attempt failed
the gate, for the report; `scrub_summary_report` blanks the same pieces of text in a report already
written.
"""

from __future__ import annotations

import html
import re
from typing import Any, Iterable

from ...store import register_scrubber
from .plan import _KEY


@register_scrubber("summary_state")
def _scrub_summary_state(con) -> None:
    # Missing facts and unsupported statements are pieces of the sources' text: a state row that
    # drew on a forgotten memory (or whose summary was forgotten) loses them, and its hash, so the
    # next run summarises what is left. Touches only this table (replayed on exported copies).
    con.execute("""UPDATE summary_state SET missing_facts = []::VARCHAR[], unsupported_statements = []::VARCHAR[],
                          source_hash = '', fallback = NULL
                   WHERE list_has_any(source_ids, (SELECT coalesce(list(id), []::VARCHAR[]) FROM forget_ids))
                      OR summary_id IN (SELECT id FROM forget_ids)""")


# SUMMARIES_OF_SQL (ingest.forget): the summaries a forget takes along with their sources.


def failed_summaries(con) -> list[dict[str, Any]]:
    """The keys whose latest summary attempt failed the gate (for the report): key, scores,
    failed thresholds, missing facts, unsupported statements, source ids and whether an older
    summary is still published."""
    if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'summary_state'").fetchone()[0]:
        return []
    return con.execute(
        f"""SELECT {', '.join(_KEY)}, summary_id, method, fallback, retention, compression, readability, accuracy,
                   failed, missing_facts, unsupported_statements, source_ids, as_of
            FROM summary_state WHERE status = 'failed' ORDER BY {', '.join(_KEY)}""").pl().to_dicts()


_FAILURE_ROW = re.compile(r'<tr data-sources="([^"]*)">(.*?)</tr>', re.DOTALL)


def scrub_summary_report(page: str, ids: Iterable[str]) -> str:
    """A report's summary section without the missing facts and unsupported statements of the
    failures that drew on a forgotten memory (their cells become ``[forgotten]``)."""
    from ...store import FORGOTTEN

    gone = set(ids)
    start = page.find('<section id="summaries">')
    end = page.find("</section>", start)
    if start < 0 or end < 0:
        return page

    def scrub(match: re.Match) -> str:
        if not gone & set(html.unescape(match.group(1)).split()):
            return match.group(0)
        cells = re.findall(r"<td[^>]*>.*?</td>", match.group(2), re.DOTALL)
        cells = cells[:-2] + [f"<td>{FORGOTTEN}</td>", f"<td>{FORGOTTEN}</td>"]
        return f'<tr data-sources="{match.group(1)}">{"".join(cells)}</tr>'

    return page[:start] + _FAILURE_ROW.sub(scrub, page[start:end]) + page[end:]
