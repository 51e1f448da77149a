"""Dedup's smaller rules, each at its boundary: Chinese numerals read as amounts, a label at the very
start of a text, a one-character change, the share of words kept by a substitution, LSH candidates,
the policy's passes and paraphrase window honoured, the unmerge outcome and its queued decision, and
WordNet lookups (curly apostrophes, the most frequent sense of a word with two base forms)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import polars as pl

from memory_lake.text import lexicon
from memory_lake.maintain.dedup import (CHANGED_VALUE, _counted, _crossed, _fixed_expressions, _normalise, _numbers, _opposed,
                                        _relation, _single_character_change, contradiction, find_duplicates, semantic_pairs,
                                        substitution_pairs)
from memory_lake.store.policy import Policy

from ..conftest import AS_OF, ASCII_LOCALE, code_env, held_by_another_process, rows, write_jsonl


def _values(text: str) -> list[tuple[float, bool]]:
    return [(n.value, n.identifier) for n in _numbers(_normalise(text))]


def test_chinese_numerals_are_read_as_their_amounts():
    """A unit ends its digit: 三十 is 30 (not 31), 一百 100, 两万 20000, 三十五 35; so 三十 and
    三十一 are two numbers (queued), while 三十 and 30 are the same one."""
    numerals = {"三十": 30, "一百": 100, "两万": 20000, "三十五": 35, "三十一": 31, "十": 10, "十万": 100000,
                "两万五千": 25000, "一亿五千万": 150000000, "三百零五": 305, "一千零一": 1001, "二零二六": 2026,
                "万": 10000, "半": 0.5}
    assert {t: _values(f"会议室能坐{t}人") for t in numerals} == {t: [(float(v), False)] for t, v in numerals.items()}
    assert contradiction("会议室能坐三十人", "会议室能坐三十一人") == "number"
    assert contradiction("会议室能坐30人", "会议室能坐三十人") is None


def test_a_label_at_the_very_start_of_a_text_makes_an_identifier():
    """`#42` opening a text is ticket 42 (two tickets: kept apart), `42` alone is an amount (queued)."""
    assert [_values(t) for t in ("#42 is broken", "v2 is out", "7 cats sleep here", "-5 degrees outside",
                                 "twenty people came", "ticket 88 is closed", "订单5512已发货")] == [
        [(42.0, True)], [(2.0, True)], [(7.0, False)], [(-5.0, False)], [(20.0, False)], [(88.0, True)],
        [(5512.0, True)]]
    assert contradiction("#42 is broken", "#43 is broken") == "identifier"
    assert contradiction("42 is broken", "43 is broken") == "number"


def test_a_single_character_change_is_found_at_any_place():
    """The same place, one character: at the end (采光好 / 采光差), at the start (好吃 / 难吃), in
    the middle (很好看 / 很难看); not two characters for one, nor Latin words."""
    assert [_single_character_change(x, y) for x, y in [
        ("采光好", "采光差"), ("好吃", "难吃"), ("很好看", "很难看"), ("很好", "非常好"), ("good", "bad")]] == [
        True, True, True, False, False]


def test_a_substitution_scores_the_share_of_words_the_longer_text_keeps():
    """"turned down" / "declined": five words against four, one stretch replaced, 1 - 1/5 whichever
    text comes first."""
    for texts in (["she turned down the offer", "she declined the offer"],
                  ["she declined the offer", "she turned down the offer"]):
        frame = pl.DataFrame({"row": [0, 1], "scope": [1, 1], "text": texts})
        assert substitution_pairs(frame).to_dicts() == [{"a": 0, "b": 1, "score": 0.8}]


def test_semantic_candidates_come_from_shared_buckets_never_all_pairs():
    """Rows are compared only when an LSH band puts them in one bucket: v and -v never share one,
    so even a threshold below any cosine pairs only the two copies of v."""
    v = np.ones(8, dtype=np.float32) / np.sqrt(8)
    v[::2] *= -1
    frame = pl.DataFrame({"row": [0, 1, 2], "scope": [1, 1, 1], "type": ["fact"] * 3, "tags": [[], [], []]},
                         schema_overrides={"tags": pl.List(pl.String)})
    found = semantic_pairs(frame, np.stack([v, v, -v]), threshold=-2.0)
    assert [(r["a"], r["b"], round(r["score"], 6)) for r in found.to_dicts()] == [(0, 1, 1.0)]


def _frame(texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame([{"id": f"m{i}", "tenant": "t", "agent_id": "bot", "user_id": "u", "type": "fact", "tags": [],
                          "content": text, "importance": 0.5, "created_at": AS_OF, "covered": True}
                         for i, text in enumerate(texts)], schema_overrides={"tags": pl.List(pl.String)})


def test_only_the_exact_pass_runs_when_the_policy_says_so():
    """passes = ["exact"], no vectors: the copy that differs only in case and punctuation merges,
    the near copy does not, and the exact pair is the one candidate."""
    policy = Policy().with_overrides({"dedup": {"passes": ["exact"]}})
    plan = find_duplicates(_frame(["User prefers dark mode", "user prefers DARK mode!",
                                   "Note: user prefers dark mode"]), None, policy)
    assert plan.merges.select("canonical", "member", "pass").to_dicts() == [
        {"canonical": "m0", "member": "m1", "pass": "exact"}]
    assert (plan.contradictions.height, plan.candidates) == (0, 1)


def test_the_judge_reads_a_replaced_word_with_the_policys_window():
    """`close` is asked about the replaced words with `paraphrase_window` words each side: one word
    of context with a window of 1 (for the pair, and again for the cluster), and its yes merges the pair."""
    asked = []

    def close(x: str, y: str) -> bool:
        asked.append((x, y))
        return True

    policy = Policy().with_overrides({"dedup": {"paraphrase_window": 1, "passes": ["exact", "near"]}})
    plan = find_duplicates(_frame(["the team keeps its spare laptops in the blue cupboard downstairs",
                                   "the team keeps its spare laptops in the blue wardrobe downstairs"]),
                           None, policy, close=close)
    assert asked == [("blue cupboard downstairs", "blue wardrobe downstairs")] * 2
    assert plan.merges.select("member", "pass").to_dicts() == [{"member": "m1", "pass": "near"}]


def _merged(lake, tmp_path):
    base = {"tenant": "acme", "agent_id": "bot", "user_id": "alice", "type": "preference"}
    lake.ingest([write_jsonl(tmp_path / "m.jsonl", [
        {**base, "id": "a1", "content": "User prefers dark mode in the editor", "created_at": "2026-11-01T00:00:00Z"},
        {**base, "id": "a2", "content": "user prefers DARK mode in the editor!", "importance": 0.6,
         "created_at": "2026-11-05T00:00:00Z"}])], as_of=AS_OF)
    before = rows(lake, "SELECT * FROM memories ORDER BY id")
    from memory_lake.maintain.dedup import dedup

    assert dedup(lake, AS_OF).counts["merged"] == 1
    return before


def test_unmerge_returns_its_cluster_restored_ids_and_run(lake, tmp_path):
    from memory_lake.maintain.dedup import unmerge

    before = _merged(lake, tmp_path)
    (cluster,) = rows(lake, "SELECT cluster_id FROM dedup_merges")
    result = unmerge(lake, "a2", operator="ops", as_of=AS_OF, run_id="run-unmerge-1")
    assert result == {"cluster": cluster["cluster_id"], "canonical_id": "a2", "restored": ["a2", "a1"],
                      "run_id": "run-unmerge-1"}
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == before
    assert rows(lake, "SELECT memory_id, operator, run_id FROM memory_history WHERE change = 'unmerge' "
                      "ORDER BY memory_id") == [{"memory_id": m, "operator": "ops", "run_id": "run-unmerge-1"}
                                                for m in ("a1", "a2")]


def test_a_queued_unmerge_keeps_its_operator(lake, tmp_path):
    """While another process holds the lake the unmerge is queued with who asked; the next run
    applies it in that operator's name."""
    from memory_lake.maintain.decisions import apply_decisions
    from memory_lake.maintain.dedup import unmerge

    before = _merged(lake, tmp_path)
    with held_by_another_process(lake):
        queued = unmerge(lake, "a2", operator="ops", as_of=AS_OF)
    decision = json.loads(Path(queued["queued"]).read_text(encoding="utf-8"))
    assert {k: decision[k] for k in ("kind", "canonical_id", "operator")} == {
        "kind": "unmerge", "canonical_id": "a2", "operator": "ops"}
    assert apply_decisions(lake, AS_OF).counts["applied"] == 1
    assert rows(lake, "SELECT * FROM memories ORDER BY id") == before
    assert rows(lake, "SELECT memory_id, operator FROM memory_history WHERE change = 'unmerge' ORDER BY memory_id") == [
        {"memory_id": "a1", "operator": "ops"}, {"memory_id": "a2", "operator": "ops"}]


def test_wordnet_reads_a_curly_apostrophe_as_a_straight_one():
    """"o’clock" as typed on a phone is WordNet's "o'clock"."""
    assert lexicon._english_synsets(("o’clock",)) == lexicon._english_synsets(("o'clock",)) == {("adv", 197182): 0}


def test_a_sense_reached_through_two_base_forms_keeps_its_best_rank():
    """"battle-axes" is the plural of "battle-ax" and of "battle-axe", which list the same two
    senses in opposite orders: each is the most frequent sense of one of them (rank 0)."""
    assert lexicon._english_synsets(("battle-axes",)) == {("noun", 9844356): 0, ("noun", 2811468): 0}


def test_two_items_that_changed_places_are_named_as_written():
    """What one stretch takes out comes back inside another: the two items, Chinese joined without
    spaces (as the text writes them), English with them."""
    assert _crossed([(("火车",), ("飞", "机")), (("坐", "飞机"), ("坐", "火车"))]) == ("火车", "飞机")
    assert _crossed([(("train",), ("night", "bus")), (("by", "night", "bus"), ("by", "train"))]) == ("train", "night bus")
    assert _crossed([(("火车",), ("飞机",)), (("坐", "高铁"), ("坐", "轮船"))]) is None
    # what one stretch puts in comes from another, but what it takes out does not come back: no swap
    assert _crossed([(("火车",), ("飞机",)), (("坐", "飞机"), ("坐", "轮船"))]) is None


def test_a_negating_prefix_opposes_two_words_in_either_order():
    assert _opposed(["locked"], ["unlocked"]) == "antonym locked/unlocked"
    assert _opposed(["nonsmoking"], ["smoking"]) == "antonym nonsmoking/smoking"
    assert _opposed(["un"], ["unun"]) is None                   # what the prefix negates is too short
    assert _opposed(["locked"], ["relocked"]) is None


def test_wordnet_near_synonyms_are_synonyms():
    """Two adjectives of one "similar to" cluster (short / brief), a verb and its verb-group or
    narrow hypernym neighbour (prefer / like: "like" has 4 verbs under it): synonyms, with the link
    as the reason. A broad hypernym (walk, with dozens of verbs under it: stroll, limp, march) is
    not: those are ways of walking, and the models decide."""
    assert lexicon.synonyms(("short",), ("brief",)) == "wordnet adj 01436003 ~ 01436432"
    assert lexicon.synonyms(("prefers",), ("likes",)) == "wordnet verb 01826498 ~ 01777210"
    assert lexicon.synonyms(("lives",), ("resides",)) == "wordnet verb 02649830 ~ 02648639"
    assert lexicon.synonyms(("walk",), ("stroll",)) is None
    assert lexicon.synonyms(("walk",), ("limp",)) is None
    assert lexicon.synonyms(("talk",), ("whisper",)) is None
    assert lexicon.synonyms(("violin",), ("cello",)) is None
    # through CC-CEDICT: 运动 "move" is the broad hypernym of 游泳 "swim" (blind set F's near miss)
    assert lexicon.synonyms(("喜欢",), ("偏爱",)) == "cedict 喜欢/偏爱 -> wordnet verb 01777210 ~ 01826498"
    assert lexicon.synonyms(("运动",), ("游泳",)) is None


def test_a_new_number_is_new_detail_whatever_the_models_say():
    """Found merged in blind set G: the second memory adds a price. A number only one text has is
    a new fact (kept apart, not a contradiction); the same number on both sides is not."""
    close = lambda x, y: True  # noqa: E731 - the models' verdict does not matter here
    assert contradiction("User bought a used Honda Civic last spring.",
                         "User bought a used Honda Civic last spring for £6,000.", close=close) == CHANGED_VALUE
    assert contradiction("User runs in the park.", "User runs 5 km in the park.", close=close) == CHANGED_VALUE
    assert contradiction("User bought a used Honda Civic for £6,000.",
                         "User purchased a used Honda Civic for £6,000.", close=close) is None


@pytest.mark.process  # starts a process (the subject here)
def test_the_dictionaries_are_read_as_utf8_whatever_the_locale():
    """A nightly run under a plain ASCII locale (cron's POSIX, no UTF-8 mode) reads Cilin and
    CC-CEDICT as this process does. Also read here, so `make mutate` runs this test for them."""
    script = ("import sys; from memory_lake.text import lexicon\n"
              "assert sys.flags.utf8_mode == 0\n"
              "print(len(lexicon._cilin()), len(lexicon._all_cilin_codes()), len(lexicon._cedict()))\n")
    env = code_env(**ASCII_LOCALE)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, encoding="utf-8")
    assert (done.returncode, done.stderr) == (0, "")
    here = f"{len(lexicon._cilin())} {len(lexicon._all_cilin_codes())} {len(lexicon._cedict())}"
    assert done.stdout.strip() == here and int(here.split()[0]) > 10_000


def test_given_vectors_alone_the_semantic_pass_compares_the_memories_the_model_covers():
    """A library caller that passes vectors (no per-model spaces): the pass runs over the covered
    memories that have a vector, at semantic_cosine; an uncovered memory with the same vector and
    one without a vector stay out."""
    frame = _frame(["The user likes hiking", "User loves going hiking", "用户喜欢徒步", "User enjoys hiking trips"])
    frame = frame.with_columns(covered=pl.Series([True, True, False, True]))
    unit = np.ones(8, dtype=np.float32) / np.sqrt(8)
    vectors = {"m0": unit, "m1": unit, "m2": unit}                 # m3: no vector yet
    plan = find_duplicates(frame, vectors, Policy().with_overrides({"dedup": {"passes": ["semantic"]}}), close=None)
    assert plan.merges.select("canonical", "member", "pass").to_dicts() == [
        {"canonical": "m0", "member": "m1", "pass": "semantic"}]


def test_an_english_verb_is_read_with_the_particles_both_texts_have_after_it():
    """"came across" / "ran across": the replaced stretches are "came" / "ran", which WordNet does
    not link; read with the shared particle, they share a synset (find, come across)."""
    assert _relation(("came",), ("ran",), ("across", "an")) == ("synonym", "wordnet verb 02023107")
    assert _relation(("came",), ("ran",), ()) is None
    assert _relation(("came",), ("ran",), ("an", "across")) is None      # not a particle after it
    close = lambda x, y: False  # noqa: E731 - the dictionaries decide, not the models
    assert contradiction("User came across an old diary in the attic.",
                         "User ran across an old diary in the attic.", close=close) is None
    assert contradiction("User came home late.", "User ran home late.", close=close) == CHANGED_VALUE


def test_compound_nouns_and_hyphenated_words_are_looked_up_as_wordnet_writes_them():
    """A compound takes its plural on its last word (hot dogs -> hot_dog); two words from one
    hyphenated word are also read joined (e-mail, tightfisted)."""
    assert lexicon.relation(("hot", "dogs"), ("frankfurters",)) == ("synonym", "wordnet noun 07676602")
    assert lexicon.relation(("e", "mail"), ("email",)) == ("synonym", "wordnet noun 06279326")
    assert lexicon.relation(("tight", "fisted"), ("stingy",))[0] == "synonym"
    assert lexicon._bases("hot_dogs", "noun") == {"hot_dog"}
    assert lexicon._bases("called_off", "verb") == {"call_off"}


def test_a_cedict_sense_with_two_glosses_gives_each_unless_it_names_a_place():
    """CC-CEDICT writes some senses as "wife's mother, mother-in-law": each gloss is a sense; a
    capitalised gloss ("Kyōto, Japan") is a name and stays whole."""
    table = lexicon._cedict()
    assert {"wife's mother", "mother-in-law"} <= table["岳母"]
    assert "japan" not in table["京都"]


def test_numerals_and_negations_inside_one_fixed_expression_for_another_are_not_values():
    """一团糟 / 乱七八糟 and 忐忑不安 / 七上八下: the numerals and 不 belong to the idioms, so
    neither a number nor a negation keeps the pair apart (the models judge the two idioms). An idiom
    against a plain word keeps its negation: 满不在乎 / 很在乎 say opposite things."""
    assert _fixed_expressions("用户三天两头加班") == frozenset({"三天两头"})
    assert _fixed_expressions("用户的房间乱七八糟") == frozenset({"乱七八糟"})
    assert _fixed_expressions("用户加班三天") == frozenset()
    close = lambda x, y: True  # noqa: E731 - the models' verdict is not what is tested
    assert contradiction("用户的房间一团糟", "用户的房间乱七八糟", close=close) is None
    assert contradiction("考试前用户心里忐忑不安", "考试前用户心里七上八下", close=close) is None
    assert contradiction("用户对这事满不在乎", "用户对这事很在乎", close=close) == "negation"
    assert contradiction("用户一天喝三杯水", "用户一天喝两杯水", close=close) == "number"


@pytest.mark.parametrize(("a", "b", "why"), [
    ("User read all of the reports.", "User read most of the reports.", "quantity all/most"),
    ("User can skip the weekly sync.", "User must skip the weekly sync.", "obligation can/must"),
    ("User often works from home on Fridays.", "User never works from home on Fridays.", "negation"),  # first
    ("User usually cycles to the office.", "User always cycles to the office.", "frequency usually/always"),
    ("用户通常坐地铁上班", "用户总是坐地铁上班", "frequency 通常/总是"),
    ("User parks below the office.", "User parks above the office.", "opposite below/above"),
    ("User signed in to the portal.", "User signed out to the portal.", "opposite in/out"),
])
def test_a_graded_function_word_of_another_degree_is_a_contradiction(a, b, why):
    """Stop words to search, but a memory that swaps "all" for "most", "can" for "must" or "in" for
    "out" states another fact (blind word set: 14 such pairs were merged)."""
    assert contradiction(a, b, close=lambda x, y: True) == why


def test_one_degree_said_another_way_and_phrasal_verbs_of_one_sense_are_rewordings():
    close = lambda x, y: True  # noqa: E731 - the models' verdict is not what is tested
    assert contradiction("User often works late.", "User frequently works late.", close=close) is None
    assert contradiction("报销单应当在月底前提交", "报销单应该在月底前提交", close=close) is None
    # fill in / fill out a form: one sense in WordNet, not opposite particles
    assert contradiction("User must fill in the form.", "User must fill out the form.", close=close) is None


def test_a_rare_shared_sense_does_not_make_two_items_of_one_kind_synonyms():
    """WordNet puts rabbit and hare in one synset only as meat, minute and hour only as distances;
    their frequent senses are two animals, two units: not synonyms. Words that share their most
    frequent sense stay synonyms (couch / sofa, jumper / sweater)."""
    assert lexicon.relation(("rabbit",), ("hare",)) is None
    assert lexicon.relation(("minutes",), ("hours",)) is None
    assert lexicon.relation(("couch",), ("sofa",)) == ("synonym", "wordnet noun 04256520")
    assert lexicon.relation(("jumper",), ("sweater",)) == ("synonym", "wordnet noun 04370048")


def test_cilin_noun_groups_count_for_words_of_one_sense_that_cc_cedict_does_not_part():
    """Cilin's people and things groups are read for words on one synonym line only, unless
    CC-CEDICT reads them as two things: 早饭 / 早餐, 玉米 / 苞米 (CC-CEDICT lacks 苞米); not 丈夫 /
    女婿 (女婿 is on two lines), not 包子 / 馒头 ("steamed stuffed bun" / "steamed bun")."""
    assert lexicon.relation(("早饭",), ("早餐",)) == ("synonym", "cilin 早饭/早餐 Da18B06")
    assert lexicon.relation(("玉米",), ("苞米",)) == ("synonym", "cilin 玉米/苞米 Bh05A10")
    assert lexicon.relation(("丈夫",), ("女婿",)) is None
    assert lexicon.relation(("包子",), ("馒头",)) is None
    # CC-CEDICT glosses 岳母 (wife's mother) and 婆婆 (husband's mother) alike; Cilin parts them
    assert lexicon.relation(("岳母",), ("婆婆",)) is None
    assert lexicon.relation(("丈母娘",), ("岳母",)) == ("synonym", "cilin 丈母娘/岳母 Ah07B03")


def test_one_unit_for_another_after_the_same_number_is_a_contradiction():
    """Blind set H merged both: the models read "23 pounds" and "23 kilos" alike, and jieba cuts
    一百二十斤 as one word. One unit written two ways (元 / 块) is the same amount."""
    close = lambda x, y: True  # noqa: E731 - the models' verdict is not what is tested
    assert contradiction("User's bag weighed 20 pounds.", "User's bag weighed 20 kilos.", close=close) == \
        "unit pounds/kilos"
    assert contradiction("用户的体重是一百二十斤。", "用户的体重是一百二十公斤。", close=close) == "unit 斤/公斤"
    # not queued as another unit (a one-character change keeps it apart, as any such change)
    assert contradiction("用户每月房租三千元。", "用户每月房租三千块。", close=close) == CHANGED_VALUE


def test_two_dictionary_words_one_letter_apart_are_not_a_typo():
    """hotel / hostel: two words WordNet knows with no sense in common are two words, so the guard
    reads the replacement (the models and the dictionaries decide); a misspelling (recieve), a
    spelling variant that shares a synset (colour / color) or a word WordNet does not hold (from,
    a preposition) leaves the slip rule as it was."""
    assert (lexicon.two_words("hotel", "hostel"), lexicon.two_words("form", "from")) == (True, False)
    assert (lexicon.two_words("recieve", "receive"), lexicon.two_words("colour", "color")) == (False, False)
    assert contradiction("User booked a hotel in Porto.", "User booked a hostel in Porto.",
                         close=lambda x, y: False) == CHANGED_VALUE
    assert contradiction("User will recieve the parcel on Friday.", "User will receive the parcel on Friday.",
                         close=lambda x, y: False) is None


def test_a_determiner_is_set_aside_and_a_shared_head_noun_read_with_its_modifier():
    """"a cash machine" is looked up as cash_machine; "savings bank" / "piggy bank" only when WordNet
    lists both compounds and they share a sense (here they do not: kept apart)."""
    assert lexicon.relation(("a", "cash", "machine"), ("an", "atm")) == ("synonym", "wordnet noun 02977058")
    assert _relation(("current",), ("checking",), ("account", "with")) == ("synonym", "wordnet noun 13363970")
    assert _relation(("red",), ("blue",), ("car",)) is None                 # red_car is no compound
    assert _relation(("savings",), ("piggy",), ("bank",)) is None
    assert lexicon.is_lemma("checking_accounts") and not lexicon.is_lemma("red_car")


def test_two_values_of_one_attribute_are_two_items_of_one_kind():
    """warm / hot and cool / cold head two WordNet clusters that are values of one attribute
    (temperature): the models put them close, the dictionaries keep them apart. Heads of two
    attributes (sad / unhappy) and one cluster (big / large) are not such a pair."""
    assert lexicon.same_kind(("warm",), ("hot",)) == "wordnet adjectives 02529264 and 01247240, values of 05011790"
    assert lexicon.same_kind(("cool",), ("cold",)) is not None
    assert lexicon.same_kind(("sad",), ("unhappy",)) is None
    assert lexicon.same_kind(("big",), ("large",)) is None
    assert contradiction("User likes warm showers.", "User likes hot showers.", close=lambda x, y: True) == \
        CHANGED_VALUE


def test_a_negation_character_inside_a_word_that_negates_nothing_is_not_a_negation():
    """The word-pair set queued 非常 / 十分 and 几乎 / 差不多 as negations: every 非, 别, 不 was
    counted, also inside 非常 ("very"), 特别 ("especially"), 差不多 ("almost"). A word negates when
    the main sense of one of its CC-CEDICT entries does (不是: "fault" and "no, is not")."""
    assert [w for w in ("非常", "特别", "差不多", "别人", "未来", "了不起") if lexicon.negating(w)] == []
    assert [w for w in ("不", "别", "没有", "不要", "无法", "不是", "从不", "不行", "不及格", "没用", "不舒服")
            if not lexicon.negating(w)] == []
    close = lambda x, y: True  # noqa: E731 - the models' verdict is not what is tested
    assert contradiction("用户非常喜欢这部电影。", "用户十分喜欢这部电影。", close=close) is None
    assert contradiction("用户很关心未来的工作。", "用户很关心将来的工作。", close=close) is None
    # real negations are still counted, a lexical one (不是, 不行) too
    assert contradiction("高远是素食者。", "高远不是素食者。", close=close) == "negation"
    assert contradiction("用户说周末可以。", "用户说周末不行。", close=close) == "negation"
    assert contradiction("用户特别喜欢猫。", "用户特别不喜欢猫。", close=close) == "negation"
    # a word that only looks negation-free is judged as a word: an antonym is still one
    assert contradiction("用户和同事的看法不同。", "用户和同事的看法相同。", close=close) == "antonym 不同/相同"


def test_a_quantity_in_chinese_words_added_or_dropped_is_new_detail():
    """Blind set I merged 在上小学三年级 / 在上小学: a dropped 三年级 (jieba tags it neither noun
    nor numeral) counted as no detail, while a dropped "3rd grade" in digits did."""
    close = lambda x, y: True  # noqa: E731
    assert contradiction("用户的孩子在上小学三年级。", "用户的孩子在上小学。", close=close) == CHANGED_VALUE
    assert contradiction("用户去成都出差，要待三天。", "用户去成都出差。", close=close) == CHANGED_VALUE
    # a dictionary word that only holds a numeral states no quantity (十分 "very", 万一 "in case")
    assert [w for w in ("三年级", "两千块", "六岁", "十分", "万一", "千万", "一起") if _counted(w)] == ["三年级", "两千块", "六岁"]


def test_a_stretch_of_up_to_three_words_replaced_by_one_is_a_candidate():
    """"out of work" / "unemployed": three words against one. The near pass misses such short
    pairs, so the substitution pass blanks stretches of one to three words; four replaced words
    are left to the other passes."""
    three = pl.DataFrame({"row": [0, 1], "scope": [1, 1],
                          "text": ["user has been unemployed since june", "user has been out of work since june"]})
    assert substitution_pairs(three).to_dicts() == [{"a": 0, "b": 1, "score": 0.875}]
    four = pl.DataFrame({"row": [0, 1], "scope": [1, 1],
                         "text": ["user has been unemployed since june", "user has been without a steady job since june"]})
    assert substitution_pairs(four).height == 0


@pytest.mark.parametrize(("a", "b", "moved"), [
    ("用户的丈夫比她大五岁", "用户比她丈夫大五岁", "丈夫"),
    ("用户的哥哥比她高", "用户比她哥哥高", "哥哥"),
])
def test_two_sides_of_a_comparison_changing_places_is_a_contradiction(a, b, moved):
    """Who is older flips; the pronoun on the other side (她) is no content word, so `_swap`'s
    "a word stays between them" never held (blind set J merged the first)."""
    assert contradiction(a, b, close=lambda x, y: True) == f"comparison: {moved} moved across 比"
    assert contradiction("用户的丈夫比她大五岁", "用户的丈夫比她大五岁。") is None


@pytest.mark.parametrize(("a", "b", "expected"), [
    # a negation inside one dictionary word equal to the other side's word: a rewording
    ("用户大一时高数不及格，后来重修才过", "用户大一时高数挂科，后来重修才过", None),   # 不及格 / 挂科 "fail"
    ("用户说不用客气", "用户说甭客气", None),                                           # 甭 "contraction of 不用"
    ("用户说周末可以", "用户说周末不行", "negation"),     # 可以 "not bad" ~ 不行 "be no good": WordNet only
    # a negation beside a word is still a negation, whatever the verb
    ("User learned the software", "User did not learn the software", "negation"),
    ("用户喜欢香菜", "用户不喜欢香菜", "negation"),
    ("用户有车", "用户没有车", "negation"),
])
def test_a_negation_inside_a_word_the_dictionary_equates_is_no_negation(a, b, expected):
    assert contradiction(a, b, close=lambda x, y: True) == expected
    assert contradiction(b, a, close=lambda x, y: True) == expected


@pytest.mark.parametrize(("a", "b"), [
    ("User reads a lot of fiction", "User reads a lot of crime fiction"),
    ("User buys milk every week", "User buys oat milk every week"),
    ("用户中午吃了鱼", "用户中午吃了鲫鱼"),
    ("用户炖了萝卜排骨汤", "用户炖了胡萝卜排骨汤"),        # jieba tags 胡萝卜 "carrot" a name (nr)
])
def test_a_noun_put_before_a_noun_names_a_narrower_thing(a, b):
    """More specific, not a rewording (blind set J merged the first); the models put it close."""
    assert contradiction(a, b, close=lambda x, y: True) == CHANGED_VALUE
    assert contradiction(b, a, close=lambda x, y: True) == CHANGED_VALUE


@pytest.mark.parametrize(("a", "b"), [
    ("User bought a car", "User bought a new car"),                  # an adjective: the thresholds decide
    ("用户已经预订了下周六的餐厅", "用户已经订了下周六的餐厅"),           # 预订 / 订: verbs, not a narrower thing
    ("用户打算下周去修手机", "用户打算下周去维修手机"),
])
def test_an_adjective_or_a_verb_ending_in_the_other_is_no_narrower_thing(a, b):
    assert contradiction(a, b, close=lambda x, y: True) is None


def test_chinese_abbreviations_acronyms_and_clippings_are_short_forms():
    assert lexicon.relation(("网上", "购物"), ("网购",)) == ("synonym", "abbreviation 网购/网上购物")
    assert lexicon.relation(("高速铁路",), ("高铁",)) == ("synonym", "abbreviation 高铁/高速铁路")   # 高速 + 铁路
    assert lexicon.relation(("南京大学",), ("南大",))[0] == "synonym"          # CC-CEDICT lists it too
    assert lexicon.relation(("汽车", "保险"), ("车险",)) == ("synonym", "abbreviation 车险/汽车保险")  # 车 of 汽车 (C)
    assert lexicon.relation(("human", "resources"), ("hr",)) == ("synonym", "acronym hr/human resources")
    assert lexicon.relation(("app",), ("application",)) == ("synonym", "clipping app/application")
    assert lexicon.relation(("sci", "fi"), ("science", "fiction"))[0] == "synonym"
    # not short forms: a word inside the long form, parts that are no words, clippings WordNet knows
    assert lexicon.relation(("手机壳",), ("手机",)) is None
    assert lexicon.relation(("打", "羽毛球"), ("打球",)) is None            # 打羽 / 毛球 are no words
    assert lexicon.relation(("car",), ("carpet",)) is None
    assert lexicon.relation(("pen",), ("penguin",)) is None


def test_an_aspect_particle_inside_a_verb_is_set_aside_in_a_lookup():
    assert lexicon.relation(("当过兵",), ("参过", "军")) == ("synonym", "cilin 当兵/参军 Hj22C01")


def test_a_wider_word_for_one_thing_lifts_the_one_character_veto():
    """室友 "roommate" / 舍友 "dormitory roommate": one character apart, but CC-CEDICT names one by
    the other's head word, so the models judge the pair; 表哥 / 堂哥 (two cousins) stay apart."""
    assert lexicon.head_sense("室友", "舍友") and not lexicon.head_sense("表哥", "堂哥")
    # an animal, a plant or a food named with a modifier is a kind of its own: 草鱼 "grass carp" is
    # no 鲤鱼 "carp", 花椒 "Sichuan pepper" no 胡椒 "pepper" (the word set merged both)
    assert not lexicon.head_sense("鲤鱼", "草鱼") and not lexicon.head_sense("花椒", "胡椒")
    assert lexicon.natural_kind("carp") and not lexicon.natural_kind("roommate")
    assert contradiction("用户和大学室友还保持着联系", "用户和大学舍友还保持着联系", close=lambda x, y: True) is None
    assert contradiction("用户的表哥在深圳工作", "用户的堂哥在深圳工作", close=lambda x, y: True) == CHANGED_VALUE


def test_a_clause_of_its_own_is_a_new_fact_a_clause_reworded_in_place_is_not():
    """"在银行工作，经常出差" adds a clause whose one fact-bearing word (出差) the other text lacks:
    blind set K merged it. A clause whose word is replaced in place (特别累 / 特别乏) is judged
    like any replaced word."""
    assert contradiction("用户的丈夫在银行工作，经常出差。", "用户的丈夫在银行工作。", close=lambda x, y: True) == CHANGED_VALUE
    assert contradiction("用户在杭州工作，住在滨江。", "用户在杭州工作。", close=lambda x, y: True) == CHANGED_VALUE
    assert contradiction("用户对花粉过敏，春天出门必须戴口罩", "用户对花粉过敏，春天出门必须戴口罩。") is None


def test_an_intensifier_is_set_aside_when_a_chinese_stretch_is_looked_up():
    assert lexicon.relation(("一毛不拔",), ("非常", "吝啬")) == ("synonym", "cilin 一毛不拔/吝啬 Ee35D01")


@pytest.mark.parametrize(("x", "y"), [("考上", "考取"), ("报销", "报账")])
def test_two_chinese_verbs_whose_senses_say_the_same_are_synonyms(x, y):
    """考取 "to pass an entrance exam" inside 考上 "to pass a university entrance exam"."""
    assert lexicon.relation((x,), (y,))[0] == "synonym"


@pytest.mark.parametrize(("x", "y"), [("包子", "馒头"), ("弹钢琴", "玩"), ("买", "卖")])
def test_a_shorter_noun_gloss_or_one_shared_verb_is_not_a_synonym(x, y):
    """馒头 "steamed bun" is inside 包子 "steamed stuffed bun", but nouns are not read this way;
    "play" alone inside "play the piano" is not enough; 买 / 卖 stay antonyms."""
    assert (lexicon.relation((x,), (y,)) or ("none",))[0] != "synonym"


def test_a_numeral_inside_a_word_the_dictionary_equates_is_no_value():
    """总共 / 一共 "altogether" was read as a changed identifier (一 = 1; blind set L); 一起 /
    一块儿 "together" and 两个 / 俩 likewise. A numeral beside its measure word still counts."""
    assert contradiction("用户这次云南之行总共花了八千元", "用户这次云南之行一共花了八千元", close=lambda x, y: True) is None
    assert contradiction("用户每周六和丈夫一起去买菜", "用户每周六和丈夫一块儿去买菜", close=lambda x, y: True) is None
    assert contradiction("用户和朋友一起去了三次杭州", "用户和朋友一起去了四次杭州") == "number"
    assert contradiction("用户买了一本书", "用户买了两本书", close=lambda x, y: True) == "number"


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("User does strength training several times a week", "User does strength training three times a week",
     CHANGED_VALUE),                                    # a number where there was none: more specific (L)
    ("用户每周去几次健身房", "用户每周去三次健身房", CHANGED_VALUE),
    ("User swims twice a week", "User swims two times a week", None),   # a number on both sides
])
def test_a_number_given_where_there_was_none_is_new_detail(a, b, expected):
    assert contradiction(a, b, close=lambda x, y: True) == expected


def test_hyphenated_phrases_and_plural_clippings_are_looked_up():
    assert lexicon.relation(("outdated",), ("out", "of", "date"))[0] == "synonym"      # WordNet's out-of-date
    assert lexicon.relation(("carbs",), ("carbohydrates",)) == ("synonym", "clipping carb/carbohydrate")
    assert lexicon.relation(("cars",), ("carpets",)) is None


def test_a_numeral_belongs_to_the_word_jieba_cuts_around_it():
    """Blind set N: 周六一定 was read as 61 (周六's 六 run on into 一定 "certainly") and 五十八千克
    as 58,000 (千 of the unit 千克), so 肯定 / 一定 and 公斤 / 千克 were queued as changed numbers."""
    assert _values("用户周六一定会去参加同学聚会") == [(6.0, False)]
    assert _values("用户现在的体重是五十八千克") == [(58.0, False)]
    assert _values("用户一直很忙") == []
    assert _values("用户的孩子在上小学三年级") == [(3.0, False)]          # a numeral with its measure
    assert _values("会议室能坐二零二六人") == [(2026.0, False)]         # jieba cuts 坐二零 / 二六
    assert contradiction("用户周六肯定会去参加同学聚会", "用户周六一定会去参加同学聚会", close=lambda x, y: True) is None
    assert contradiction("用户现在的体重是五十八公斤", "用户现在的体重是五十八千克", close=lambda x, y: True) is None
    assert contradiction("用户现在的体重是五十八公斤", "用户现在的体重是五十八斤") == "unit 公斤/斤"
    assert contradiction("用户周六一定会去", "用户周日一定会去") == "date"


def test_an_english_unit_is_any_wordnet_unit_of_measurement():
    """Blind set N merged "60 inches wide" / "60 centimetres wide": centimetre was missing from
    the unit list. WordNet files every unit under "unit of measurement"; a cup (a container first)
    or a foot (a body part first) is read by its most frequent sense."""
    assert contradiction("User's new fridge is 60 inches wide", "User's new fridge is 60 centimetres wide",
                         close=lambda x, y: True) == "unit inches/centimetres"
    assert contradiction("The field is 3 hectares", "The field is 3 acres", close=lambda x, y: True) == "unit hectares/acres"
    assert [lexicon.is_unit(w) for w in ("inches", "centimetres", "kilos", "cup", "foot", "bag")] == [
        True, True, True, False, False, False]


def test_a_single_character_in_one_cilin_group_lets_the_models_judge():
    """赚点 / 挣点 and 腰疼 / 腰痛 differ in one character, which alone no model can judge (筷子 /
    勺子 reach cosine 1.0); a Cilin synonym group holding both characters lifts that veto, and
    the models then decide in the sentence. Two characters of one kind stay apart."""
    assert lexicon.one_group("赚点", "挣点") and lexicon.one_group("腰疼", "腰痛")
    assert not lexicon.one_group("筷子", "勺子") and not lexicon.one_group("很好", "很差")
    assert contradiction("用户想多赚点钱给儿子交学费", "用户想多挣点钱给儿子交学费", close=lambda x, y: True) is None
    assert contradiction("用户想多赚点钱给儿子交学费", "用户想多挣点钱给儿子交学费", close=lambda x, y: False) == CHANGED_VALUE
    assert contradiction("用户向服务员要了一双筷子", "用户向服务员要了一双勺子", close=lambda x, y: True) == CHANGED_VALUE


def test_a_name_both_texts_have_is_not_a_changed_entity():
    """每个月攒 / 每个月存: jieba cut 月存 as one word in b, so 月 (a time word, an entity) stood
    among the replaced words of a although b names it too."""
    assert contradiction("用户每个月攒两千块钱给孩子当教育基金", "用户每个月存两千块钱给孩子当教育基金",
                         close=lambda x, y: True) is None
    assert contradiction("用户每个月给张伟两千块钱", "用户每个月给李娜两千块钱", close=lambda x, y: True) == CHANGED_VALUE


def test_a_stop_word_stretch_the_dictionary_equates_is_a_replacement():
    """"do it yourself" (all stop words) against DIY was read as a new word DIY: new detail."""
    assert contradiction("User spends most weekends on do-it-yourself projects", "User spends most weekends on DIY projects",
                         close=lambda x, y: False) is None
    assert contradiction("User works at a bank", "User works at Lloyds Bank", close=lambda x, y: True) == CHANGED_VALUE


@pytest.mark.parametrize(("a", "b"), [("用户去年在郊区买了房。", "用户去年在郊区买了房，还买了一辆车。"),
                                      ("用户吃芒果会过敏，吃菠萝也会。", "用户吃芒果会过敏。"),
                                      ("用户的丈夫在银行工作，经常出差", "用户的丈夫在银行工作")])
def test_an_extra_clause_that_names_a_new_thing_is_a_new_fact(a, b):
    """Blind set P merged both first pairs: the new clause shares a verb (买, 吃) with the other
    text, and the rule wanted none of its words there. A mostly new clause, or one naming a new
    thing, is a new fact."""
    assert contradiction(a, b, close=lambda x, y: True) == CHANGED_VALUE


@pytest.mark.parametrize(("a", "b"), [
    ("用户的伯父在老家种地", "用户的大伯在老家种地"),       # jieba tags 伯父 a name (nr)
    ("用户喜欢吃海鲜", "用户爱吃海鲜"),                     # 海鲜 tagged nr
    ("用户去年晋升了", "用户去年升职了"),                   # 晋升 tagged nr
    ("用户的电脑经常卡死", "用户的电脑经常死机"),           # 卡死 tagged nr
])
def test_a_common_word_jieba_tags_as_a_name_is_no_entity(a, b):
    """Blind sets merged none of these: jieba's dictionary tags these common words as names or
    places, and a changed name keeps a pair apart. CC-CEDICT writes a common word's first sense in
    lower case ("uncle", "seafood"), a name's in capitals; only the latter counts."""
    assert lexicon.common_word("伯父") and lexicon.common_word("海鲜") and not lexicon.common_word("张伟")
    assert contradiction(a, b, close=lambda x, y: True) is None
    assert contradiction("用户每个月给张伟两千块钱", "用户每个月给李娜两千块钱", close=lambda x, y: True) == CHANGED_VALUE


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("User booked a one-way ticket to Lisbon", "User booked a single ticket to Lisbon", None),
    ("User's team is tight-knit", "User's team is close-knit", None),
    ("The outage hit eu-west", "The outage hit us-east", CHANGED_VALUE),            # a code: an entity
    ("User restarted prod-db-2", "User restarted prod-db-3", "identifier"),
])
def test_a_hyphenated_word_is_an_entity_only_when_it_reads_as_a_code(a, b, expected):
    """one-way (WordNet lists it whole) and tight-knit (two words WordNet knows) are words;
    eu-west (no word "eu") and prod-db-2 are codes, and a changed code keeps the pair apart."""
    assert contradiction(a, b, close=lambda x, y: True) == expected


def test_a_connective_replacing_another_is_no_new_item_a_word_inside_a_hyphenated_word_is():
    """"due to" / "because of" and "prior to" / "before" replace one connective by another (the
    rule "a new item brought by a preposition is new detail" fired on them); "great-" in
    great-grandfather changes who is meant."""
    assert contradiction("The flight was delayed due to fog", "The flight was delayed because of fog",
                         close=lambda x, y: True) is None
    assert contradiction("Back up the files prior to the upgrade", "Back up the files before the upgrade",
                         close=lambda x, y: True) is None
    assert contradiction("User's grandfather was a miner", "User's great-grandfather was a miner",
                         close=lambda x, y: True) == CHANGED_VALUE


def test_two_nouns_that_share_a_sense_are_not_two_kinds():
    """child / baby: WordNet files a sense of baby under child (and one sense of each is the same
    thing), so they are not two kinds of one thing (like violin / cello) and the models judge them."""
    assert lexicon.same_kind(("child",), ("baby",)) is None
    assert lexicon.same_kind(("violin",), ("cello",))
    assert contradiction("User's child starts school in May", "User's baby starts school in May",
                         close=lambda x, y: True) is None


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("用户把会议改到了周五", "用户把会议调到了周五", None),            # 改到 / 调到: two verbs
    ("用户下班后打车回家", "用户下班后叫车回家", None),                # 打车 / 叫车
    ("用户的工资涨了", "用户的工资降了", "antonym 涨/降"),
    ("用户上周买了一辆车", "用户上周卖了一辆车", "antonym 买/卖"),
])
def test_two_verbs_one_character_apart_are_judged_unless_the_characters_are_opposites(a, b, expected):
    """One changed character alone keeps a pair apart (筷子 / 勺子 reach cosine 1.0); two verbs of
    two or more characters whose changed characters are no antonyms are left to the models."""
    assert contradiction(a, b, close=lambda x, y: True) == expected


def test_a_hyphenated_word_that_holds_a_numeral_is_no_number():
    """one-way is a word (WordNet lists it), "three times a week" states a number."""
    assert contradiction("User booked a one-way ticket", "User booked a single ticket", close=lambda x, y: True) is None
    assert contradiction("User goes there three times a week", "User goes there every week",
                         close=lambda x, y: True) == CHANGED_VALUE


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("User rarely eats breakfast", "User eats breakfast", "frequency rarely/-"),     # merged before
    ("用户很少吃早饭", "用户吃早饭", "frequency rarely/-"),
    ("User always eats breakfast", "User usually eats breakfast", "frequency always/usually"),
    ("User almost never eats breakfast", "User rarely eats breakfast", None),        # one degree
    ("User hardly ever drinks", "User seldom drinks", None),
    ("User never eats breakfast", "User doesn't eat breakfast", None),               # two negations
    ("User never drinks", "User rarely drinks", "negation"),
])
def test_a_low_frequency_stated_by_one_text_changes_the_fact(a, b, expected):
    """"rarely" added to a habit says the opposite of the habit; "almost never" and "hardly ever"
    are rarely, not negations (a negation after "almost" is not counted)."""
    assert contradiction(a, b, close=lambda x, y: True) == expected


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("用户在图书馆工作", "用户在大学的图书馆工作", CHANGED_VALUE),         # 大学: a common noun
    ("User is studying", "User is studying chemistry", CHANGED_VALUE),           # a noun first
    ("User reads a novel every month", "User reads a crime novel every month", CHANGED_VALUE),
    ("用户买了一台平板", "用户买了一台平板电脑", None),                     # 平板电脑 is one word
    ("Reminder: meeting at 3pm", "meeting at 3pm", None),                        # a heading
    ("User bought a car", "User bought a new car", None),                        # an adjective
])
def test_one_inserted_word_that_names_a_new_thing_is_new_detail(a, b, expected):
    """Blind sets merged "works in a library" / "works in a university library": one new noun
    names a thing the other text does not (a noun first in WordNet's sense counts, a Chinese common
    noun of two or more characters), unless it only completes one dictionary word with its
    neighbour or is a heading before a colon."""
    assert lexicon.noun_first("chemistry") and not lexicon.noun_first("modern")
    assert contradiction(a, b, close=lambda x, y: True) == expected
    assert contradiction(b, a, close=lambda x, y: True) == expected


def test_accents_on_latin_letters_are_set_aside():
    """résumé was cut into "r" and "sum" (blind set D kept CV / résumé apart); without its accents
    it is WordNet's resume, a synonym of CV. A changed name stays a changed name."""
    assert _normalise("Résumé at the Café, naïve Zoë, 市 场 部") == "resume at the cafe, naive zoe, 市场部"
    assert contradiction("User is updating his CV", "User is updating his résumé", close=lambda x, y: False) is None
    assert contradiction("User met José at the café", "User met Jose at the cafe", close=lambda x, y: False) is None
    assert contradiction("User met José at the café", "User met Josh at the café", close=lambda x, y: True) == CHANGED_VALUE


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("User doesn't like crowded beaches", "User dislikes crowded beaches", None),     # blind set O
    ("User isn't happy with her new job", "User is unhappy with her new job", None),
    ("用户不喜欢吃香菜", "用户讨厌吃香菜", None),
    ("User likes crowded beaches", "User dislikes crowded beaches", "antonym like/dislike"),
    ("User doesn't like crowded beaches", "User likes crowded beaches", "negation"),
    ("User doesn't dislike crowded beaches", "User dislikes crowded beaches", "negation"),
    ("用户不喜欢吃香菜", "用户喜欢吃香菜", "negation"),
    ("User isn't happy", "User is sad", "negation"),                  # sad is no antonym of happy in WordNet
])
def test_a_negated_word_against_its_antonym_says_the_same(a, b, expected):
    """The negation of a word is its opposite: "doesn't like" / "dislikes" (WordNet's antonym
    link; 喜欢 / 讨厌 through CC-CEDICT) is one fact. The models never get to judge it: the
    negation count and the antonym kept every such pair apart."""
    assert contradiction(a, b, close=lambda x, y: True) == expected


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("User lives with her cousin in Manchester", "User lives with her aunt in Manchester", CHANGED_VALUE),
    ("User's grandfather taught him to fish", "User's uncle taught him to fish", CHANGED_VALUE),
    ("用户每年春节都去舅舅家拜年", "用户每年春节都去姑姑家拜年", CHANGED_VALUE),
    ("用户的钢琴是跟姑姑学的。", "用户的钢琴是跟表姐学的。", CHANGED_VALUE),
    ("User's dad is a doctor", "User's father is a doctor", None),          # dad is under father
    ("User's husband is a doctor", "User's spouse is a doctor", None),      # husband is a spouse
    ("用户的外公一辈子都在村里种地", "用户的姥爷一辈子都在村里种地", None),      # one Cilin line: one person
])
def test_two_different_relatives_are_two_people(a, b, expected):
    """Relatives are a closed set of people and the models put any two close (cousin / aunt 0.91,
    舅舅 / 姑姑 0.92), so two relatives neither of which is the other's wider word keep a pair
    apart even when the models would merge it; mum / mother, 外公 / 姥爷 remain one person."""
    assert contradiction(a, b, close=lambda x, y: True) == expected


def test_relatives_are_read_from_wordnet_and_cilin():
    assert lexicon.same_kind(("aunt",), ("grandmother",)).startswith("relatives ")
    assert lexicon.same_kind(("叔叔",), ("舅舅",)).startswith("relatives cilin 叔叔/舅舅")
    assert lexicon.same_kind(("mother",), ("mum",)) is None
    assert lexicon.same_kind(("teacher",), ("aunt",)) is None               # only one is a relative


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("用户从来不吃香菜，觉得味道太冲。", "用户向来不吃香菜，觉得味道太冲。", None),  # 从来不 吃 / 向来 不吃
    ("他从不喝酒", "他一向不喝酒", None),
    ("用户从来不吃香菜", "用户向来吃香菜", "negation"),                        # the negation is gone
    ("他从来不喝酒", "他一直喝酒", "negation"),
    ("船沉没了", "船没沉", "negation"),                                          # 沉没 "to sink" is no negation
])
def test_a_negation_cut_into_another_word_is_read_as_a_word_of_its_own(a, b, expected):
    """jieba cuts 从来不吃 as 从来不 / 吃 and 向来不吃 as 向来 / 不吃: looked up whole, 从来不
    "never" against 向来 "always" were antonyms. With the negation a word of its own, what is left
    is 从来 / 向来, and CC-CEDICT's 从来 "never (if used in negative sentence)" is the meaning of
    从来不, not of 从来 (issue 17's blind set Q queued the pair as an antonym)."""
    assert contradiction(a, b, close=lambda x, y: True) == expected


def test_a_sense_cedict_gives_only_beside_a_negation_is_not_the_words_own():
    found = lexicon.relation(("从来",), ("向来",))
    assert not found or found[0] != "antonym"
    assert lexicon.relation(("总是",), ("从不",))[0] == "antonym"      # always / never still are


def test_words_that_only_moved_leave_the_other_sides_words_inserted():
    """"在上小学" / "在实验小学上四年级": the diff pairs 小学 with 四年级 after 小学 moved; 四年级 is an
    inserted quantity (new detail), not a word replaced by one the other text also has."""
    assert contradiction("用户的孩子在上小学。", "用户的孩子在实验小学上四年级。",
                         close=lambda x, y: True) == CHANGED_VALUE
    assert contradiction("用户的孩子在上小学。", "用户的孩子在上小学。", close=lambda x, y: True) is None
