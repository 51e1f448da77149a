"""text.normalise: the Series form of normalise_content ingest uses for ids and hashes, the ASCII test, the plain form."""

import polars as pl

from memory_lake.text import beyond_ascii, normalise_content, normalise_contents
from memory_lake.text.normalise import plain_text


def test_series_form_equals_the_expression_on_every_kind_of_text():
    texts = pl.Series("content", ["Hello  World ", "ＡＢＣ　全角", None, "", "Straße İstanbul ﬁ", "用户喜欢喝咖啡，不加糖",
                                  " \t x\n y ", "café", "cafe\u0301", "Ⅻ ㎏ ½", "plain ascii only"])
    expected = ["hello world", "abc 全角", None, "", "straße i̇stanbul fi", "用户喜欢喝咖啡,不加糖", "x y", "café", "café",
                "xii kg 1⁄2", "plain ascii only"]

    got = normalise_contents(texts)

    assert got.to_list() == expected
    assert got.name == "content"
    assert got.equals(pl.select(normalise_content(pl.lit(texts))).to_series())


def test_all_ascii_and_all_null():
    assert normalise_contents(pl.Series("c", ["A  B", " c "])).to_list() == ["a b", "c"]
    assert normalise_contents(pl.Series("c", [None, None], dtype=pl.String)).to_list() == [None, None]


def test_beyond_ascii_keeps_the_texts_with_any_character_past_u007f():
    texts = pl.Series("t", ["plain", None, "soft\u00adhyphen", "", "全角", "tab\tand ~", "no\u2011break"])

    assert beyond_ascii(texts).to_list() == ["soft\u00adhyphen", "全角", "no\u2011break"]


def test_plain_text_folds_only_what_is_there():
    texts = pl.Series("t", ["plain ascii", None, "zero\u200bwidth", "no\u00a0break", "minus\u2212one", "中文，全角"])

    assert plain_text(texts).to_list() == ["plain ascii", None, "zerowidth", "no break", "minus-one", "中文，全角"]
    ascii_only = pl.Series("t", ["a b", "c-d"])
    assert plain_text(ascii_only) is ascii_only  # nothing to fold: the same Series back
