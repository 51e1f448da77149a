"""Token counts for budgets: the embedding model's tokenizer, Chinese one token per character."""

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
