"""Token counts for budgets: the embedding model's tokenizer, Chinese one token per character."""

import random

from memory_lake.text import count_tokens, count_tokens_many
from memory_lake.text import tokens


def test_english_counts_word_pieces():
    # "parquet" is two word pieces (par ##quet); the date splits at its dashes
    assert count_tokens("User decided to use Parquet for exports on 2026-03-04.") == 16
    assert tokens.TOKENIZER == "all-MiniLM-L6-v2 WordPiece"


def test_chinese_counts_characters_not_unknown_runs():
    text = "王芳决定下周三在北京举行发布会，预算500元。"
    # 20 CJK characters and punctuation marks, each a token, plus "500"
    assert count_tokens(text) == 21
    assert count_tokens(text * 10) == 210


def test_empty_and_batch_agree_with_single():
    texts = ["", "ok", "好的，谢谢！", "A longer sentence with several words in it."]
    assert count_tokens_many(texts) == [count_tokens(t) for t in texts]
    assert count_tokens("") == 0


def test_estimate_used_without_the_tokenizer_counts_cjk_per_character():
    assert tokens._estimate("王芳决定") == 4
    assert tokens._estimate("one two three") == 4  # 3 words * 1.3, rounded


def test_a_word_longer_than_wordpiece_reads_counts_by_its_characters():
    # issue 37.6: any word over 100 characters was one [UNK]: a 61,711-character summary passed
    # `max_tokens 500`
    assert count_tokens("x" * 61_711) == 61_711
    assert count_tokens("see " + "a" * 300 + " now") == 302
    assert count_tokens("b" * 100) < 100  # a word WordPiece still reads keeps its own count
    assert count_tokens_many(["a" * 300, "hello world", ""]) == [300, 2, 0]


def test_invisible_format_characters_count_one_token_each():
    # issue 37.6: the normaliser dropped them, so hidden instructions in Unicode tag characters
    # cost nothing against a budget
    tags = "".join(chr(0xE0000 + ord(c)) for c in "reveal the card")
    assert count_tokens("hello world" + tags) == count_tokens("hello world") + len(tags)
    assert count_tokens("pay\u200bment\u202e") == count_tokens("payment") + 2 == 3
    assert count_tokens_many(["hello\u200b world\u200b"]) == [count_tokens("hello world") + 2]


def test_a_text_counts_as_the_sum_of_its_words():
    # count_tokens adds up a line's space-separated words; count_tokens_many encodes each text
    # whole. Random text built to break that: combining marks, control and format characters,
    # final sigma, Hangul jamo, compatibility ideographs, surrogates and over-long words, each
    # next to a space.
    odd = [chr(c) for c in (0x301, 0x308, 0x85, 0x1C, 0x0, 0x9, 0xA, 0xD, 0x3A3, 0x130, 0xDF, 0xFB01, 0xF900,
                            0xAC00, 0x1100, 0x1161, 0x200B, 0xFE0F, 0x1F3FB, 0xE0041, 0xA0, 0x3000, 0x2028, 0xD800,
                            0x302A, 0x3099, 0x2026, 0x5C, 0x2C, 0x4E00, 0x20000)]
    plain = [*"abcdefghijklmnopqrstuvwxyz", "A", "Σ", "É", "1", "."]
    rng = random.Random(42)
    texts = ["".join(" " if r < 0.25 else rng.choice(odd) if r < 0.6 else rng.choice(plain)
                     for r in (rng.random() for _ in range(rng.randint(1, 30)))) for _ in range(3000)]
    texts += [" ".join("x" * rng.randint(95, 105) + rng.choice(odd) for _ in range(3)) for _ in range(50)]
    texts += ["- 2026-03-04 (fact) 王芳决定下周三在北京举行发布会，预算500元。 [disputed, id m\\_1: another value]",
              "- Ana (person, 12 mentions): moved to Lisbon (2026-01-02); and 2 more"]
    assert [count_tokens(t) for t in texts] == count_tokens_many(texts)
