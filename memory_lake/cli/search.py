"""Search commands: index and search."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from ..store import write_wait_s
from .common import AsOfOpt, JsonOpt, LakeOpt, _open, _options, _show, err, out, progress_on_stderr


def index(ctx: typer.Context, as_of: AsOfOpt = None, lake: LakeOpt = None, json_out: JsonOpt = False) -> None:
    """Index new or changed memories: keyword postings and embeddings, once per content hash (and
    model); a model change re-embeds, a new tokenizer version re-tokenises."""
    opts = _options(ctx, lake, json_out)
    with progress_on_stderr("index", "texts") as on_progress:
        report = _open(opts).index(as_of=as_of, on_progress=on_progress, wait_s=write_wait_s())
    _show(opts, report.as_dict(), lambda: out.print(f"index: {report.summary}" + (
        f" ({report.details['note']})" if report.details.get("note") else "")))


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (English or Chinese).")],
    tenant: Annotated[str, typer.Option(help="Tenant (required).")],
    agent: Annotated[Optional[str], typer.Option(help="Only this agent's memories.")] = None,
    user: Annotated[Optional[str], typer.Option(help="Only this user's memories.")] = None,
    mode: Annotated[str, typer.Option(help="keyword | semantic | hybrid.")] = "hybrid",
    limit: Annotated[int, typer.Option(help="How many results.")] = 10,
    tier: Annotated[Optional[str], typer.Option(help="Only this tier.")] = None,
    type_: Annotated[Optional[str], typer.Option("--type", help="Only this type.")] = None,
    source: Annotated[Optional[str], typer.Option(help="Only this source.")] = None,
    tag: Annotated[Optional[str], typer.Option(help="Only memories with this tag.")] = None,
    context: Annotated[Optional[str], typer.Option(help="Only this context_id.")] = None,
    since: Annotated[Optional[str], typer.Option(help="Created at or after (ISO 8601).")] = None,
    until: Annotated[Optional[str], typer.Option(help="Created before (ISO 8601).")] = None,
    include_inactive: Annotated[bool, typer.Option("--include-inactive", help="Also dormant, archived and merged memories (marked in the tier column; shown, not woken).")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Show each score part.")] = False,
    lake: LakeOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Search a scope (read-only; logged to events/ for the hit rate). An unknown tenant, agent or
    user is an error that names the known ones."""
    opts = _options(ctx, lake, json_out)
    if not query.strip():
        from ..store import InputError

        raise InputError('the query is empty: give the words to look for, e.g. memory-lake search "dark mode" '
                         "--tenant acme")
    results = None
    if not any((include_inactive, explain, tier, type_, source, tag, context, since, until)):
        results = _served(opts, query, tenant=tenant, agent=agent, user=user, mode=mode, k=limit)
    if results is None:
        results = _open(opts).search(query, tenant=tenant, agent=agent, user=user, mode=mode, limit=limit,
                                     include_inactive=include_inactive, explain=explain, tier=tier, type=type_,
                                     source=source, tag=tag, context=context, since=since, until=until)
    _show(opts, results.as_dict(), lambda: _print_search(results, explain))


def _served(opts, query: str, **params):
    """The answer of a `memory-lake serve` running for this lake (issue 38.5: no model to load here),
    as SearchResults with a note saying so; None when none runs or it could not answer (the
    search then runs here, and says what went wrong itself)."""
    from ..serve import ask
    from ..search import SearchResult, SearchResults
    from ..store import resolve_lake_dir

    data = ask(resolve_lake_dir(opts.lake), "/v1/search", {"query": query, **params})
    if data is None:
        return None
    from datetime import datetime

    def one(r: dict):
        created = r.get("created_at")
        created = datetime.fromisoformat(created.replace("Z", "+00:00")).replace(tzinfo=None) if created else None
        return SearchResult(**{**{k: v for k, v in r.items() if k != "parts"}, "created_at": created})

    note = f"answered by memory-lake serve from published {data.get('version')}"
    return SearchResults([one(r) for r in data["results"]], search_id=data["search_id"], mode_used=data["mode_used"],
                         notes=[*data.get("notes", []), note], query=query)


# Results print as a table on a terminal at least TABLE_MIN_WIDTH wide that leaves the content
# MIN_CONTENT_WIDTH columns; else (80 columns, piped) each result is a block: a header line, then
# its content. The choice rests on the width, so every search in one terminal looks the same.
TABLE_MIN_WIDTH = 100
MIN_CONTENT_WIDTH = 20


def _shown(content: str | None) -> str:
    """A memory's text as a result shows it: a long memory by its start."""
    content = content or ""
    return content if len(content) <= 280 else content[:279] + "…"


def _tier(r) -> str:
    """The tier, with the status of a memory an include_inactive search found resting."""
    return f"{r.tier or '-'} ({r.status})" if r.resting else (r.tier or "")


def _print_footer(results) -> None:
    """The count, the resting results, then the other side of each result's conflict."""
    from rich.text import Text

    # a served search (issue 38.5) does not say how many it read
    out.print(f"{len(results)} result(s)" + (f" of {results.searched} memories searched" if results.searched else ""))
    resting = [r for r in results if r.resting]
    if resting:
        kinds = sorted({r.status for r in resting})
        out.print(Text(f"{len(resting)} of them {'is' if len(resting) == 1 else 'are'} {' or '.join(kinds)} "
                       "(marked in the tier): this search does not make them active again; "
                       "`memory-lake restore ID...` does" + (", and a merged one comes back by `memory-lake unmerge` on the memory it was merged into"
                                                             if "merged" in kinds else "")))
    for r in results:
        if r.conflict:
            other = f"contradicts {', '.join(r.conflict_with)}" if r.conflict_with else "has an open conflict"
            out.print(Text(f"! {r.id} {other} (memory-lake conflicts list)"))


def _print_blocks(results, scopes) -> None:
    """One result per block: rank, full id, score, tier and type, scope, then the content on its own
    line (not folded into a narrow column; a terminal wraps it)."""
    from rich.text import Text

    out.print(Text(f"search {results.search_id} ({results.mode_used})"))
    for rank, (r, scope) in enumerate(zip(results, scopes), start=1):
        mark = "  !" if r.conflict else ""
        out.print(Text(f"{rank:>2}. {r.id}  score {r.score:.3f}  {_tier(r) or '-'} / {r.type or '-'}  "
                       f"{' / '.join(scope)}{mark}"))
        out.print(Text("    " + _shown(r.content)))
    _print_footer(results)


def _print_search(results, explain: bool) -> None:
    """Search results for people: one row per memory with its full id (never folded: it is pasted
    into other commands), scope, tier, type, score, a conflict mark and the content (which wraps);
    the other side of each conflict below; with `explain`, every score part and the weights.
    Every cell is plain text (`Text`), so content such as ``[/x]`` is printed, not parsed as markup."""
    from rich import box
    from rich.text import Text

    def print_parts() -> None:
        """The parts of each score (raw and scaled to 0..1) and the weights that summed them."""
        parts = [r.parts or {} for r in results]
        semantic = any("semantic" in p for p in parts)
        table = Table(title="score parts (raw -> scaled)", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False,
                      title_justify="left")
        table.add_column("id", no_wrap=True)
        table.add_column("keyword", justify="right", no_wrap=True)
        if semantic:
            for name in ("semantic (cos)", "recency", "importance"):
                table.add_column(name, justify="right", no_wrap=True)
        table.add_column("score", justify="right", no_wrap=True)
        for r, p in zip(results, parts):
            row = [Text(r.id), f"{p.get('keyword', 0.0):.3f} -> {p.get('keyword_norm', 0.0):.3f}"]
            if semantic:
                row += [f"{p.get('semantic', 0.0):.3f} -> {p.get('semantic_norm', 0.0):.3f}",
                        f"{p.get('recency', 0.0):.3f}", f"{p.get('importance', 0.0):.3f}"]
            table.add_row(*row, f"{r.score:.3f}")
        out.print(table)
        weights = parts[0].get("weights")
        if weights:
            out.print("score = " + " + ".join(f"{w:g} x {name}" for name, w in weights.items())
                      + " (keyword and semantic scaled over the scope)")
        else:
            scaled = "semantic" if results.mode_used == "semantic" else "keyword"
            out.print(f"score = {scaled} scaled over the scope ({results.mode_used} mode ranks by it alone)")

    notes = list(results.notes)
    if not results:
        # the last note says why nothing came back; the others are context (busy, degraded)
        for note in notes[:-1]:
            err.print(f"note: {note}", markup=False)
        out.print(Text(f"0 results: {notes[-1]}" if notes else "0 results"))
        return
    for note in notes:
        err.print(f"note: {note}", markup=False)
    scopes = [(r.tenant or "-", r.agent_id or "-", r.user_id or "-") for r in results]
    id_width = max(len(r.id) for r in results)
    fixed = id_width + max(len(_tier(r)) for r in results) + max(len(r.type or "") for r in results) + 14
    scope_width = max(len(" / ".join(s)) for s in scopes)
    narrow_scope = max(len(p) for s in scopes for p in s) + 2
    if out.width < TABLE_MIN_WIDTH or out.width - fixed - min(scope_width, narrow_scope) < MIN_CONTENT_WIDTH:
        _print_blocks(results, scopes)             # a table at 80 columns left the content a few letters wide
        if explain:
            print_parts()
        return
    table = Table(title=Text(f"search {results.search_id} ({results.mode_used})"), box=box.SIMPLE_HEAD,
                  padding=(0, 1, 0, 0), pad_edge=False, title_justify="left")
    table.add_column("id", no_wrap=True, min_width=id_width)
    # On a narrow terminal the scope goes on three lines (tenant, agent, user), leaving the width to content.
    table.add_column("scope", overflow="fold", max_width=(
        None if out.width - fixed - scope_width >= 40 else max(len(p) for s in scopes for p in s) + 2))
    table.add_column("tier", overflow="fold")
    table.add_column("type", overflow="fold")
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("!", no_wrap=True)
    table.add_column("content", overflow="fold")
    for r, scope in zip(results, scopes):
        table.add_row(Text(r.id), Text(" / ".join(scope)), Text(_tier(r)), Text(r.type or ""), f"{r.score:.3f}",
                      "!" if r.conflict else "", Text(_shown(r.content)))
    out.print(table)
    _print_footer(results)
    if explain:
        print_parts()
