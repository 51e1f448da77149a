"""The language layer, below every stage: how the lake reads text.

Tokenising (English words lightly stemmed, Chinese segmented by jieba, stop words), token counts
for budgets, normalisation (the form two contents are the same in), PII and secret redaction, the
offline lexicons (WordNet, CC-CEDICT, Cilin, British/American English) and the embedding models
with their per-process cache. Ingest, maintain and search all read text through this package; it
imports nothing of memory_lake but `store`.
"""

from . import lexicon
from .lexicon import NEGATION_CHARACTERS, cedict_name, common_word, is_chinese_word
from .models import (PACKAGED_MODEL, USE_MODEL, Embedded, ModelUnavailable, SentenceTransformerProvider, coverage_first,
                     encode, get_provider, load_model, model_scripts, script_class)
from .models import models as embedding_models
from .names import COMPOUND_SURNAMES, SURNAMES
from .normalise import beyond_ascii, normalise_content, normalise_contents
from .redact import pii_mask, redact_records, redact_text
from .normalise import plain_one as without_hidden_characters
from .tokenize import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS, TOKENIZER_VERSION, term_counts, tokenize
from .tokenize import _jieba as jieba_segmenter
from .tokens import count_tokens, count_tokens_many
from .worthy import Judgement, judge

__all__ = [
    "lexicon", "NEGATION_CHARACTERS", "cedict_name", "common_word", "is_chinese_word",
    "PACKAGED_MODEL", "USE_MODEL", "Embedded", "ModelUnavailable", "SentenceTransformerProvider", "coverage_first",
    "encode", "get_provider", "load_model", "model_scripts", "script_class", "embedding_models",
    "COMPOUND_SURNAMES", "SURNAMES",
    "beyond_ascii", "normalise_content", "normalise_contents",
    "pii_mask", "redact_records", "redact_text", "without_hidden_characters",
    "CHINESE_STOP_WORDS", "ENGLISH_STOP_WORDS", "TOKENIZER_VERSION", "term_counts", "tokenize", "jieba_segmenter",
    "count_tokens", "count_tokens_many",
    "Judgement", "judge",
]
