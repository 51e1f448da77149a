"""Rules of the summary evaluator that the mutation sample of issue 34 showed untested. Each test
calls ``extract_facts``, ``split_sentences``, ``summary_statements`` or ``evaluate_summary``
directly on a few sentences (no lake)."""

from __future__ import annotations

from memory_lake.maintain.evaluate import evaluate_summary, extract_facts, split_sentences, summary_statements


def facts(texts):
    return [(f.kind, f.key, f.text, f.grade) for f in extract_facts(texts)]


def test_a_mixed_case_word_opening_a_sentence_is_a_name():
    """GitHub (two capitals) is a name even where the capital tells nothing (the sentence start)."""
    assert facts(["GitHub hosts the repo."]) == [("name", "github", "GitHub", "hard")]
    assert facts(["Hosting is free."]) == []


def test_a_label_on_two_lines_is_a_speaker_whose_name_makes_no_sentence_informative():
    """'Anna:' starts two lines: it says who speaks, so "we decided ..." holds no hard fact and its
    decision is conversation, not a key fact."""
    assert facts(["Anna: we decided to use the new parser.", "Anna: it works."]) == [("name", "anna", "Anna", "hard")]


def test_a_date_keeps_its_year_month_and_day():
    assert facts(["The launch is on 2026-03-04."]) == [("date", ("d", 2026, 3, 4), "2026-03-04", "hard")]
    assert facts(["我们在2026年3月4日开会。"]) == [("date", ("d", 2026, 3, 4), "2026年3月4日", "hard")]


def test_an_hour_with_pm_is_read_on_the_24_hour_clock():
    (time,) = extract_facts(["The call is at 10pm."])
    assert (time.kind, time.key, time.grade) == ("time", (22, 0, False), "hard")


def test_an_english_number_word_is_a_soft_number():
    assert facts(["Alice hired three engineers in 2026."]) == [("number", "3", "three", "soft"),
                                                              ("number", "2026", "2026", "hard")]


def test_a_chinese_person_reference_is_a_hard_name_that_makes_its_decision_a_key_fact():
    """老周 (old Zhou) is a person reference jieba's tags miss: a hard fact, so the sentence is
    informative and its decision is a key fact."""
    assert facts(["老周决定采用新方案。"]) == [
        ("decision", frozenset({"老周", "决定", "采用", "新", "方案"}), "老周决定采用新方案。", "hard"),
        ("name", "老周", "老周", "hard")]


def test_a_tagged_chinese_place_is_a_soft_name_in_an_informative_sentence():
    """浦东新区 (jieba: ns, not a person tag) needs no family name to be a name."""
    assert facts(["她在2026年去了浦东新区。"]) == [("number", "2026", "2026", "hard"),
                                               ("name", "浦东新区", "浦东新区", "soft")]


def test_a_title_after_other_words_does_not_end_a_sentence():
    assert split_sentences("We met Dr. Smith at St. Mary's. He was kind.") == [
        "We met Dr. Smith at St. Mary's.", "He was kind."]


def test_statements_are_read_without_markup():
    statements, headings, lines = summary_statements(
        "Decisions of the **quarterly** team review:\n- **Alice** moved to `Berlin` in __May__.")
    assert [(s.shown, s.text, s.list_item, s.line) for s in statements] == [
        ("**Alice** moved to `Berlin` in __May__.", "Alice moved to Berlin in May.", True, 1)]
    # a short line ending in ":" is a heading once its markup is gone (39 characters, at most 40)
    assert (headings, lines) == (["Decisions of the quarterly team review"], [(1, True, 1)])


def test_an_acronym_stands_for_the_initials_of_source_words():
    score = evaluate_summary(["Alice ran a personal best of 42 minutes."], "- Alice ran a PB of 42 minutes.")
    assert (score.accuracy, score.unsupported_statements) == (1.0, [])


def test_a_statement_sharing_half_of_a_negated_clause_does_not_conflict_with_it():
    """"did not renew the contract": the statement shares one of the two words the negation covers
    (contract), not more than half, so it does not contradict the source."""
    score = evaluate_summary(["Alice did not renew the contract."], "- The contract is with Alice.")
    assert (score.accuracy, score.unsupported_statements) == (1.0, [])


def test_a_statement_that_drops_a_chinese_negation_is_unsupported():
    """不喜欢喝咖啡 negates 喜欢 / 喝咖啡 / 咖啡; the statement states two of the three."""
    score = evaluate_summary(["王芳不喜欢喝咖啡。"], "- 王芳喜欢咖啡。")
    assert (score.accuracy, score.unsupported_statements) == (0.0, ["王芳喜欢咖啡。"])


def test_scores_are_rounded_to_four_decimals():
    source = ["Alice moved to Berlin in 2026.", "Bob stays in Paris.", "Carol joined Acme in May."]
    score = evaluate_summary(source, "# Decisions\n\n- Alice moved to Berlin in 2026.\nBob stays in Paris.\n"
                                     "Carol joined Acme in May.")
    # headings 0.15 + list items 0.25 x 1/3 + one fact per line 0.25 + sections 0.15 + line length 0.20
    assert (score.retention, score.readability, score.accuracy) == (1.0, 0.8333, 1.0)
