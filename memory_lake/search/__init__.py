"""Search: the index step (embeddings, term counts), BM25, the per-scope index, the read-only hybrid
search, and the context pack built on it. Tokens and embedding models come from `memory_lake.text`."""

from .context import ENTITY_FIELDS, RECENT_LIMIT, ContextPack, build_context, markdown_text, pack_head, scope_pack
from .indexing import index
from .query import NOTE_NO_INDEX, SearchResult, SearchResults, search
from .scopeindex import SCOPES

__all__ = [
    "ENTITY_FIELDS", "RECENT_LIMIT", "ContextPack", "build_context", "markdown_text", "pack_head", "scope_pack",
    "index",
    "NOTE_NO_INDEX", "SearchResult", "SearchResults", "search",
    "SCOPES",
]
