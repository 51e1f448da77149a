"""Search: the index step (embeddings, term counts), the tokeniser and BM25, the per-scope index,
the read-only hybrid search, and the context pack built on it."""

from .context import ContextPack, build_context, scope_pack
from .embeddings import ModelUnavailable, encode, load_model
from .embeddings import models as embedding_models
from .indexing import index
from .query import NOTE_NO_INDEX, SearchResult, SearchResults, search
from .scopeindex import SCOPES
from .tokens import count_tokens, count_tokens_many
from .textsearch import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS, tokenize
from .textsearch import _jieba as jieba_segmenter

__all__ = [
    "ContextPack", "build_context", "scope_pack",
    "ModelUnavailable", "encode", "load_model", "embedding_models",
    "index",
    "NOTE_NO_INDEX", "SearchResult", "SearchResults", "search",
    "SCOPES",
    "count_tokens", "count_tokens_many",
    "CHINESE_STOP_WORDS", "ENGLISH_STOP_WORDS", "tokenize", "jieba_segmenter",
]
