"""The tokeniser (English stop words and stemming, Chinese segmentation, placeholders) and BM25."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import pytest

from memory_lake.search.bm25 import BM25_B, BM25_K1, bm25_scores
from memory_lake.text.tokenize import CHINESE_STOP_WORDS, ENGLISH_STOP_WORDS, stem, tokenize


def test_english_stop_words_and_stemming():
    assert tokenize("The users were running quickly") == ["user", "run", "quickli"]
    assert tokenize("It is what it is, and that's all.") == []
    assert tokenize("Alice PREFERS dark-mode; she preferred it") == ["alic", "prefer", "dark", "mod", "prefer"]


@pytest.mark.parametrize(
    "forms, stemmed",
    [
        (["user", "users"], "user"),
        (["run", "runs", "running"], "run"),
        (["stop", "stops", "stopped", "stopping"], "stop"),
        (["fall", "falls", "falling"], "fall"),  # l, s, z keep their double letter
        (["miss", "misses", "missed", "missing"], "miss"),
        (["make", "makes", "making"], "mak"),
        (["use", "uses", "used", "using"], "us"),
        (["query", "queries"], "queri"),
        (["try", "tries", "tried"], "tri"),
        (["class", "classes"], "class"),
        (["box", "boxes"], "box"),
        (["match", "matches"], "match"),
        (["need", "needs"], "ne"),
        (["play", "plays", "played", "playing"], "play"),
    ],
)
def test_stemming_folds_inflections(forms, stemmed):
    assert {stem(form) for form in forms} == {stemmed}


def test_stemming_is_conservative():
    # Words ending in -us / -is / -ss are not plurals; short words and stems without a vowel stay.
    assert [stem(w) for w in ["status", "analysis", "bus", "is", "sing", "bring", "shed", "red"]] == [
        "status", "analysis", "bus", "is", "sing", "bring", "shed", "red"]
    # Derivations are not folded, and only ASCII letter words are stemmed.
    assert [stem(w) for w in ["preference", "prefer", "gpt4s", "cafés"]] == ["preferenc", "prefer", "gpt4s", "cafés"]


def test_words_split_on_everything_but_letters_and_digits():
    assert tokenize("context_id=ctx-42 v2.5 e-mail") == ["context", "id", "ctx", "42", "v2", "5", "e", "mail"]
    # NFKC folds full-width forms; casefold folds ß.
    assert tokenize("ＡＢＣ１２３ Straße STRASSE") == ["abc123", "strass", "strass"]
    assert tokenize("") == []
    assert tokenize("  ,.;!?  ") == []


def test_placeholders_stay_one_token():
    text = "Call [PHONE:3f2a9c1d] or write to [EMAIL:AB12CD34], id [ID_CN:0a1b2c3d]; key [SECRET]"
    assert tokenize(text) == ["call", "phone:3f2a9c1d", "writ", "email:ab12cd34", "id", "id_cn:0a1b2c3d", "key", "secret"]
    assert tokenize("电话[PHONE:3f2a9c1d]") == ["电话", "phone:3f2a9c1d"]


def test_chinese_is_segmented_and_stop_words_dropped():
    assert tokenize("用户喜欢喝咖啡") == ["用户", "喜欢", "咖啡", "喝咖啡"]
    assert tokenize("项目截止日期是下周五") == ["项目", "截止", "日期", "下", "周五"]
    assert tokenize("我们的一个项目，也在进行吗？") == ["项目", "进行"]
    assert tokenize("用户偏好深色模式 (dark mode)") == ["用户", "偏好", "深色", "模式", "dark", "mod"]
    assert tokenize("AI助手") == ["ai", "助手"]


def test_a_word_missing_from_jiebas_dictionary_is_cut_alike_in_every_text():
    # jieba's HMM would join an unknown word to its neighbours, differently in each sentence
    # (年会定 / 年会, 拿铁要 / 拿铁): a question and its answer would share no token
    assert tokenize("拿铁要加什么奶") == ["拿", "铁", "要", "加", "奶"]
    assert tokenize("每天下午要一杯燕麦拿铁") == ["每天", "下午", "要", "一杯", "燕麦", "拿", "铁"]
    assert tokenize("公司年会定在明年") == ["公司", "年", "会", "定", "明年"]
    assert tokenize("年会什么时候在哪里办") == ["年", "会", "办"]


def test_stop_word_lists():
    assert 140 <= len(ENGLISH_STOP_WORDS) <= 200
    assert {"the", "and", "were", "is", "of"} <= ENGLISH_STOP_WORDS
    assert {"的", "了", "是", "一个", "我们", "，", "。"} <= CHINESE_STOP_WORDS


@pytest.mark.process  # starts a process (the subject here)
def test_jieba_prints_nothing_and_caches_in_a_temp_folder(tmp_path):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    code = "from memory_lake.text import tokenize; print(tokenize('用户喜欢喝咖啡'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "['用户', '喜欢', '咖啡', '喝咖啡']\n", "")
    cache_dirs = [p.name for p in tmp_path.iterdir()]
    assert cache_dirs == [f"memory-lake-jieba-{os.getuid()}"]
    assert [p.name for p in (tmp_path / cache_dirs[0]).iterdir()] == ["jieba.cache"]


def _bm25_by_hand(query, docs, k1=BM25_K1, b=BM25_B):
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    scores = []
    for doc in docs:
        total = 0.0
        for term in dict.fromkeys(query):
            df = sum(term in d for d in docs)
            tf = doc.count(term)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(total)
    return scores


def test_bm25_scores_by_hand():
    docs = [["a", "b", "c"], ["a", "a", "d"], ["e"], ["b", "c", "c", "c", "a"], []]
    # a: df 3 of 5; c: df 2; avgdl 12/5. Doc 0: dl 3, tf(a) = tf(c) = 1.
    idf_a, idf_c = math.log(1 + 2.5 / 3.5), math.log(1 + 3.5 / 2.5)
    norm0 = 1.2 * (0.25 + 0.75 * 3 / 2.4)
    doc0 = idf_a * 2.2 / (1 + norm0) + idf_c * 2.2 / (1 + norm0)
    scores = bm25_scores(["a", "c", "zz", "a"], docs)
    assert scores[0] == pytest.approx(doc0, rel=1e-12)
    assert scores == pytest.approx(_bm25_by_hand(["a", "c"], docs), rel=1e-12)
    assert [round(s, 4) for s in scores] == [1.2832, 0.6924, 0.0, 1.49, 0.0]


def test_bm25_edge_cases():
    assert bm25_scores(["a"], []) == []
    assert bm25_scores([], [["a"], ["b"]]) == [0.0, 0.0]
    assert bm25_scores(["a"], [[], []]) == [0.0, 0.0]
    assert bm25_scores(["zz"], [["a"], ["b"]]) == [0.0, 0.0]
    # Equal documents score exactly alike, so a tie is never decided by float noise.
    same = ["x", "y", "z", "y"]
    scores = bm25_scores(["z", "y", "x"], [same, ["q"], list(reversed(same)), same])
    assert scores[0] == scores[2] == scores[3] > 0


def test_bm25_agrees_with_bm25s_lucene():
    bm25s = pytest.importorskip("bm25s")
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(40)]
    docs = [[rng.choice(vocab[: rng.randint(5, 40)]) for _ in range(rng.randint(1, 30))] for _ in range(60)]
    query = ["w1", "w3", "w17", "w30"]
    retriever = bm25s.BM25(method="lucene", k1=BM25_K1, b=BM25_B)
    retriever.index(docs, show_progress=False)
    reference = retriever.get_scores(query)
    # bm25s follows Lucene >= 8, which drops the constant (k1 + 1) factor; ranking is the same.
    assert bm25_scores(query, docs) == pytest.approx([float(s) * (BM25_K1 + 1) for s in reference], rel=1e-5)
