"""The summary evaluator against two swaps that kept every word count (issue 37.8): an antonym of a
source word (likes -> dislikes, 增加 -> 减少) and another currency for the same amount (50 dollars ->
50 euros, 6480元 -> 6480美元). Each swapped statement is unsupported and names itself; the same
summary without the swap stays supported, and so do the ways of writing one currency.

The cases were written before the evaluator's rules were read; they are common opposites and the
usual currency names and signs, not the blind set's sentences."""

from __future__ import annotations

import pytest

from memory_lake import evaluate_summary

# (source sentences, a faithful summary line, the same line with one word swapped)
ANTONYMS_EN = [
    (["2026-03-02 Note: the user likes coffee in the morning, with oat milk."],
     "The user likes coffee in the morning, with oat milk.", "The user dislikes coffee in the morning, with oat milk."),
    (["Alice: I love the new dashboard design, the charts are much clearer."],
     "Alice loves the new dashboard design.", "Alice hates the new dashboard design."),
    (["Bob: I always review the pull requests before the release on Friday."],
     "Bob always reviews the pull requests before the release on Friday.",
     "Bob never reviews the pull requests before the release on Friday."),
    (["Carol: traffic increased by 20% after the spring launch."],
     "Traffic increased by 20% after the spring launch.", "Traffic decreased by 20% after the spring launch."),
    (["Dan: the landlord accepted our offer for the flat on Elm Street."],
     "The landlord accepted our offer for the flat on Elm Street.",
     "The landlord rejected our offer for the flat on Elm Street."),
    (["Erin: pets are allowed in the building, the contract says so."],
     "Pets are allowed in the building.", "Pets are forbidden in the building."),
]
ANTONYMS_ZH = [
    (["2026-03-02 记录：用户喜欢早上喝咖啡，加燕麦奶。"], "用户喜欢早上喝咖啡，加燕麦奶。", "用户讨厌早上喝咖啡，加燕麦奶。"),
    (["王芳：这个月的订单量增加了20%。"], "本月订单量增加了20%（王芳）。", "本月订单量减少了20%（王芳）。"),
    (["张伟：房东接受了我们的报价。"], "房东接受了我们的报价（张伟）。", "房东拒绝了我们的报价（张伟）。"),
    (["李娜：公寓里允许养猫。"], "公寓里允许养猫（李娜）。", "公寓里禁止养猫（李娜）。"),
]
CURRENCIES = [
    (["Bob: the course costs 50 dollars per person."], "The course costs 50 dollars per person.",
     "The course costs 50 euros per person."),
    (["Bob: the course costs $50 per person."], "The course costs $50 per person.", "The course costs €50 per person."),
    (["Ana: the hotel is £120 a night, breakfast included."], "The hotel is £120 a night, breakfast included.",
     "The hotel is ¥120 a night, breakfast included."),
    (["Ana: the deposit is 300 EUR, paid on 2026-05-02."], "Deposit 300 EUR, paid on 2026-05-02.",
     "Deposit 300 USD, paid on 2026-05-02."),
    (["2026-04-15 机票已订：四张共6480元。"], "机票已订：四张共6480元。", "机票已订：四张共6480美元。"),
    (["王芳：酒店每晚120欧元，含早餐。"], "酒店每晚120欧元，含早餐。", "酒店每晚120元，含早餐。"),
]
# One currency written several ways: no swap.
SAME_CURRENCY = [
    (["Bob: the course costs 50 dollars per person."], "The course costs $50 per person."),
    (["Bob: the course costs $50 per person."], "The course costs 50 USD per person."),
    (["Ana: the deposit is 300 euros."], "Deposit: €300."),
    (["2026-04-15 机票已订：四张共6480元。"], "机票四张共¥6480。"),
    (["王芳：酒店每晚120欧元，含早餐。"], "酒店每晚€120，含早餐。"),
    (["王芳：预算是3000美元。"], "预算3000美元（$3000）。"),
]


@pytest.mark.parametrize(("source", "faithful", "swapped"), ANTONYMS_EN + ANTONYMS_ZH,
                         ids=[s.split()[1] if " " in s else s[:6] for _, _, s in ANTONYMS_EN + ANTONYMS_ZH])
def test_an_antonym_of_a_source_word_is_a_contradiction(source, faithful, swapped):
    assert evaluate_summary(source, f"- {faithful}\n").unsupported_statements == []
    score = evaluate_summary(source, f"- {swapped}\n")
    assert (score.accuracy, score.unsupported_statements) == (0.0, [swapped])


@pytest.mark.parametrize(("source", "faithful", "swapped"), CURRENCIES, ids=[s for _, _, s in CURRENCIES])
def test_the_same_amount_in_another_currency_is_unsupported(source, faithful, swapped):
    assert evaluate_summary(source, f"- {faithful}\n").unsupported_statements == []
    score = evaluate_summary(source, f"- {swapped}\n")
    assert (score.accuracy, score.unsupported_statements) == (0.0, [swapped])


@pytest.mark.parametrize(("source", "summary"), SAME_CURRENCY, ids=[s for _, s in SAME_CURRENCY])
def test_one_currency_written_another_way_is_supported(source, summary):
    assert evaluate_summary(source, f"- {summary}\n").unsupported_statements == []


def test_a_swap_in_a_longer_summary_drops_accuracy_below_the_threshold():
    from .test_evaluate import SOURCE_EN, SOURCE_ZH, SUMMARY_EN, SUMMARY_ZH, THRESHOLDS

    for source, summary, old, new in [
        (SOURCE_EN, SUMMARY_EN, "Budget is 120000 dollars", "Budget is 120000 euros"),
        (SOURCE_EN, SUMMARY_EN, "Latency dropped from 850 ms", "Latency rose from 850 ms"),
        (SOURCE_ZH, SUMMARY_ZH, "预算12万元", "预算12万美元"),
        (SOURCE_ZH, SUMMARY_ZH, "延迟从850毫秒降到320毫秒", "延迟从850毫秒升到320毫秒"),
    ]:
        assert evaluate_summary(source, summary).accuracy == 1.0
        score = evaluate_summary(source, summary.replace(old, new))
        assert score.accuracy < THRESHOLDS["accuracy"], new
        assert [s for s in score.unsupported_statements if new in s] == score.unsupported_statements != [], new


@pytest.mark.models  # the second source sentence is close enough in words to be asked of MiniLM
def test_both_words_of_a_pair_in_the_source_are_no_contradiction():
    source = ["Sam: I like the new office but dislike the open desks, and I never work there on Mondays."]
    summary = "- Sam likes the new office but dislikes the open desks; never works there on Mondays.\n"
    assert evaluate_summary(source, summary).unsupported_statements == []
    # an antonym in another claim of the source does not support the swap in this one
    source = ["Sam: I like the new office.", "Sam: I dislike commuting there on Mondays."]
    assert evaluate_summary(source, "- Sam dislikes the new office.\n").accuracy == 0.0


def test_a_negated_opposite_says_the_same():
    for source, summary in [(["2026-03-02 Note: the user dislikes coffee."], "The user does not like coffee."),
                            (["2026-03-02 记录：用户讨厌早上喝咖啡，加燕麦奶也不行。"], "用户不喜欢早上喝咖啡，加燕麦奶也不行。")]:
        assert evaluate_summary(source, f"- {summary}\n", model="none").unsupported_statements == []
        assert evaluate_summary(source, f"- {summary.replace('not like', 'not dislike').replace('不喜欢', '不讨厌')}\n",
                                model="none").accuracy == 0.0
