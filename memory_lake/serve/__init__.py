"""The query service (issue 38): the lake's published version for agents outside Python, as an
HTTP API (`memory-lake serve`, FastAPI + uvicorn) and an MCP server (`memory-lake mcp`, the
official `mcp` SDK), both answering through `core.Service`, so they return the same data.

It sits at the top, beside `api` and `cli`: it imports `api` and the stages, nothing imports it
but the CLI. FastAPI, uvicorn and the MCP SDK are imported only when a name below is first used
(``memory_lake.serve.run_http`` ...), so neither `memory-lake --help` nor ``import
memory_lake.serve`` pays for them.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this package that defines it
_LAZY = {
    "Service": "core", "PublishedLake": "core", "NothingPublished": "core",
    "create_app": "http", "run_http": "http", "serve_in_thread": "http",
    "create_mcp": "mcp", "run_mcp": "mcp",
    "ask": "discovery", "announce": "discovery", "withdraw": "discovery", "running_server": "discovery",
}

__all__ = ["Service", "PublishedLake", "NothingPublished", "create_app", "run_http", "serve_in_thread",
           "create_mcp", "run_mcp", "ask", "announce", "withdraw", "running_server"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value
