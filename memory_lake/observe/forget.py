"""Forget in HTML reports already written (seed 003; DESIGN "Forget reaches everything"): the
``reports`` file scrubber, registered with `memory_lake.store.registry` and run by
`memory_lake.ingest.forget`'s ``scrub_files``, and ``record_report``, which remembers where reports
were written so that a later forget finds them (reports live outside the lake).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from ..store import FORGOTTEN, REPORT_FOLDERS, FileScrub, atomic_write, register_file_scrubber


# A conflict row of reports written before reports left memory text out: id, kind, memory, field,
# two values (escaped text: no "<"), operator, time.
_VALUE_ROW = re.compile(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>"
                        r"<td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td></tr>")


def record_report(lake, path: Path) -> None:
    """Remember the folder of a report just written (idempotent), so a later forget reaches it."""
    registry = lake.root / REPORT_FOLDERS
    folder = str(Path(path).resolve().parent)
    known = registry.read_text(encoding="utf-8").splitlines() if registry.is_file() else []
    if folder not in known:
        atomic_write(registry, "".join(f"{line}\n" for line in [*known, folder]).encode("utf-8"))


@register_file_scrubber("reports")
def _scrub_reports(job: FileScrub) -> list[str]:
    """Take a forgotten memory's text out of HTML reports already written.

    A report shows conflicts by id, kind and field, never their values; reports written before
    that showed the two values of each conflict. In those, the row of every conflict on a
    forgotten memory (either side of a contradiction) keeps its ids and loses its values
    (``[forgotten]``). The folders are those reports were written to (``record_report``) and those
    nightly runs recorded; paths are returned as they are (reports live outside the lake). A failed
    summary's missing facts and unsupported statements go the same way (``summaries.scrub_summary_report``).
    """
    lake, con = job.lake, job.con
    conflicts = {c for (c,) in con.execute(
        "SELECT conflict_id FROM conflicts WHERE memory_id IN (SELECT unnest($ids::VARCHAR[])) "
        "OR other_memory_id IN (SELECT unnest($ids::VARCHAR[]))", {"ids": job.ids}).fetchall()}
    from ..maintain import scrub_summary_report

    registry = lake.root / REPORT_FOLDERS
    folders = set(registry.read_text(encoding="utf-8").splitlines()) if registry.is_file() else set()
    folders |= {str(Path(p).parent) for (p,) in con.execute(
        "SELECT DISTINCT json_extract_string(report, '$.report') FROM runs WHERE kind = 'nightly'").fetchall() if p}
    rewritten = []
    for folder in sorted(folders):
        for path in report_pages(Path(folder)):
            original = path.read_text(encoding="utf-8")
            page = scrub_summary_report(original, job.ids)  # a failed summary's missing facts
            start = page.find('<section id="conflicts">')
            end = page.find("</section>", start)
            if conflicts and start >= 0 and end >= 0:
                section = _VALUE_ROW.sub(lambda m: (
                    m.group(0) if html.unescape(m.group(1)) not in conflicts else
                    "<tr>" + "".join(f"<td>{m.group(k)}</td>" for k in (1, 2, 3, 4))
                    + f"<td>{FORGOTTEN}</td><td>{FORGOTTEN}</td>"
                    + "".join(f"<td>{m.group(k)}</td>" for k in (5, 6)) + "</tr>"), page[start:end])
                page = page[:start] + section + page[end:]
            if page != original:
                atomic_write(path, page.encode("utf-8"))
                rewritten.append(str(path))
    return rewritten


def report_pages(folder: Path) -> list[Path]:
    """The report pages in a folder reports were written to: ``health-<date>.html`` (before issue
    40), ``latest.html``, and the run pages of a ``<date>`` folder (or of the date folders in it)."""
    if not folder.is_dir():
        return []
    pages = sorted(folder.glob("health-*.html")) + sorted(folder.glob("latest.html"))
    pages += sorted(p for p in folder.glob("*/*.html") if re.match(r"^\d{4}-\d{2}-\d{2}$", p.parent.name))
    if re.match(r"^\d{4}-\d{2}-\d{2}$", folder.name):
        pages += sorted(folder.glob("*.html"))
    return list(dict.fromkeys(pages))
