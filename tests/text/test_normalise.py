"""normalise_contents (the Series form ingest uses for ids and hashes) gives what normalise_content does."""

import polars as pl

from memory_lake.text import normalise_content, normalise_contents


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
