"""Serving commands: `serve` (the HTTP API) and `mcp` (the MCP server). FastAPI, uvicorn and the
MCP SDK are imported when one of them runs, never for `--help`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import LakeOpt, _options

HostOpt = Annotated[str, typer.Option(help="Address to bind; another than 127.0.0.1 / localhost needs --token.")]
TokenOpt = Annotated[Optional[str], typer.Option(
    "--token", envvar="MEMORY_LAKE_TOKEN", show_envvar=True, show_default=False,
    help="A secret every request must carry as 'Authorization: Bearer TOKEN' (required off localhost).")]


def serve(
    ctx: typer.Context,
    host: HostOpt = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    token: TokenOpt = None,
    lake: LakeOpt = None,
) -> None:
    """Serve the lake's published version over HTTP (FastAPI; OpenAPI docs at /docs): search,
    context, scopes, memories, entities, changes, health, and remember (written to the inbox).
    A new publish is picked up without a restart; searches are logged as the CLI's are. Runs until
    interrupted (Ctrl-C)."""
    opts = _options(ctx, lake, False)
    from ..serve import run_http

    run_http(opts.lake, host=host, port=port, token=token)


def mcp(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option("--http", help="Streamable HTTP at http://HOST:PORT/mcp instead of stdio.")] = False,
    host: HostOpt = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on with --http.")] = 8766,
    token: TokenOpt = None,
    lake: LakeOpt = None,
) -> None:
    """Serve the lake's published version as an MCP server (stdio by default, for Claude Desktop
    and any MCP client): tools search_memory, get_context, list_entities, recent_changes and
    remember; every published scope's context pack as a resource."""
    opts = _options(ctx, lake, False)
    from ..serve import run_mcp

    run_mcp(opts.lake, http=http, host=host, port=port, token=token)
