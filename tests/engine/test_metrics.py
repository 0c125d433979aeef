"""Hand-computed cases for engine.eval.metrics."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from engine.eval.metrics import (
    EvidenceSpan,
    ParsedNumber,
    answer_matches,
    average_precision_at_k,
    chunk_grade,
    document_recall_at_k,
    extract_numbers,
    locate_span,
    mrr_at_k,
    ndcg_at_k,
    numbers_match,
    numbers_near,
    page_precision,
    page_recall_at_k,
    parse_number,
    percentile,
)

# ---------------------------------------------------------------------------------------------- retrieval
RETRIEVED = [("A", 1), ("A", 1), ("A", 2), ("B", 0)]  # two chunks of page A/1
GOLD = {("A", 1), ("B", 0)}


@pytest.mark.parametrize(("k", "expected"), [(1, 0.5), (2, 0.5), (3, 0.5), (4, 1.0), (50, 1.0)])
def test_page_recall_counts_duplicate_pages_once(k: int, expected: float) -> None:
    assert page_recall_at_k(RETRIEVED, GOLD, k) == expected


def test_page_recall_page_numbers_must_match_exactly() -> None:
    assert page_recall_at_k([("A", 0), ("B", 1)], GOLD, 10) == 0.0


def test_page_precision_dedups_retrieved_pages() -> None:
    # unique retrieved: A/1, A/2, B/0 -> 2 of 3 are gold
    assert page_precision(RETRIEVED, GOLD) == pytest.approx(2 / 3)
    assert page_precision([], GOLD) == 0.0


def test_document_recall() -> None:
    docs = ["AAPL_2023Q3_10Q", "AAPL_2023Q3_10Q", "MSFT_2023Q3_10Q", "NVDA_2023Q3_10Q"]
    gold = {"MSFT_2023Q3_10Q", "AMZN_2023Q3_10Q"}
    assert document_recall_at_k(docs, gold, 2) == 0.0
    assert document_recall_at_k(docs, gold, 3) == 0.5


def test_recall_rejects_empty_gold_and_bad_k() -> None:
    with pytest.raises(ValueError, match="gold"):
        page_recall_at_k(RETRIEVED, set(), 5)
    with pytest.raises(ValueError, match="k must be positive"):
        document_recall_at_k(["A"], {"A"}, 0)


# ------------------------------------------------------------------------------------------------ ranking
def test_ndcg_graded_hand_computed() -> None:
    # ranked [2, 0, 1], candidates [2, 1, 1, 0, 0], k = 3, linear gain:
    #   DCG  = 2/log2(2) + 0/log2(3) + 1/log2(4) = 2 + 0 + 0.5 = 2.5
    #   IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4) = 2 + 0.63093 + 0.5 = 3.13093
    #   nDCG = 2.5 / 3.13093 = 0.79848
    assert ndcg_at_k([2, 0, 1], [2, 1, 1, 0, 0], 3) == pytest.approx(0.79848, abs=1e-5)
    # exponential gain 2^g - 1: DCG = 3 + 0 + 0.5 = 3.5; IDCG = 3 + 0.63093 + 0.5 = 4.13093 -> 0.84727
    assert ndcg_at_k([2, 0, 1], [2, 1, 1, 0, 0], 3, gain="exponential") == pytest.approx(0.84727, abs=1e-5)


def test_ndcg_cutoff_and_edges() -> None:
    # k = 1: only rank 1 counts; ranked 1 vs ideal 2 -> 0.5
    assert ndcg_at_k([1, 2], [2, 1], 1) == 0.5
    assert ndcg_at_k([2, 1, 0], [0, 1, 2], 10) == 1.0  # ideal order, list shorter than k
    assert ndcg_at_k([0, 0], [0, 0, 0], 10) == 0.0  # nothing relevant anywhere
    # relevant candidate never retrieved: DCG 0 -> 0.0
    assert ndcg_at_k([0, 0], [0, 0, 2], 10) == 0.0


def test_average_precision_hand_computed() -> None:
    # relevant at ranks 1 and 3 (grade 2 counts as relevant like grade 1): (1/1 + 2/3) / 2 = 0.8333
    assert average_precision_at_k([1, 0, 2, 0, 0], 5) == pytest.approx(5 / 6)
    # 4 relevant overall, k = 3: normaliser min(3, 4) = 3 -> (1 + 2/3) / 3
    assert average_precision_at_k([1, 0, 2], 3, n_relevant=4) == pytest.approx(5 / 9)
    # cut at k = 2 with 3 relevant in the list: P@2 = 1/2 over min(2, 3) = 2 -> 0.25
    assert average_precision_at_k([0, 1, 1, 1], 2) == 0.25
    # a perfect top-k scores 1.0 even when more relevant items exist than k
    assert average_precision_at_k([1, 1], 2, n_relevant=7) == 1.0


def test_average_precision_and_mrr_without_relevant_are_zero() -> None:
    assert average_precision_at_k([0, 0, 0], 10) == 0.0
    assert average_precision_at_k([], 10) == 0.0
    assert average_precision_at_k([0, 0], 10, n_relevant=2) == 0.0
    assert mrr_at_k([0, 0, 0], 10) == 0.0
    assert mrr_at_k([], 10) == 0.0


def test_mrr_hand_computed() -> None:
    assert mrr_at_k([0, 0, 1, 2], 10) == pytest.approx(1 / 3)
    assert mrr_at_k([0, 0, 1], 2) == 0.0  # first relevant past the cutoff
    assert mrr_at_k([2], 1) == 1.0


def test_chunk_grade() -> None:
    ev = [EvidenceSpan("D", 3, 100, 200), EvidenceSpan("D", 7, 0, 50)]
    assert chunk_grade("D", 3, 150, 300, ev) == 2  # overlaps
    assert chunk_grade("D", 3, 0, 101, ev) == 2  # one shared character
    assert chunk_grade("D", 3, 200, 300, ev) == 1  # touches the end only: half-open ranges
    assert chunk_grade("D", 7, 60, 90, ev) == 1  # other chunk of a gold page
    assert chunk_grade("D", 4, 100, 200, ev) == 0  # other page
    assert chunk_grade("E", 3, 100, 200, ev) == 0  # other document


# ------------------------------------------------------------------------------------------ locate_span
def test_locate_span_exact() -> None:
    page = "Item 7. Revenue was $5,000 million."
    assert locate_span(page, "Revenue was") == (8, 19)


def test_locate_span_differing_whitespace_maps_to_original_offsets() -> None:
    page = "Header\nTotal   revenue\nwas  $5,000\n million in 2022."
    start, end = locate_span(page, "Total revenue was $5,000 million") or (-1, -1)
    assert (start, end) == (7, page.index("million") + len("million"))
    assert page[start:end] == "Total   revenue\nwas  $5,000\n million"
    # evidence with its own newlines and padding
    assert locate_span(page, "  revenue\nwas $5,000 ") == (15, page.index("$5,000") + 6)


def test_locate_span_line_break_inside_word_and_missing() -> None:
    page = "Operating inc\nome rose 4%"
    assert locate_span(page, "Operating income rose") == (0, page.index("rose") + 4)
    assert locate_span(page, "net income fell") is None
    assert locate_span(page, "   ") is None


# ---------------------------------------------------------------------------------------------- numbers
@pytest.mark.parametrize(
    ("text", "value", "decimals", "is_percent", "scale"),
    [
        ("3.86", "3.86", 2, False, None),
        ("18,210", "18210", 0, False, None),
        ("$1,577 million", "1577", 0, False, "million"),
        ("-14.0%", "-14.0", 1, True, None),
        ("(123)", "-123", 0, False, None),
        ("$(1,234.5)", "-1234.5", 1, False, None),
        ("\u22125", "-5", 0, False, None),  # unicode minus
        ("-$1561M", "-1561", 0, False, "million"),
        ("$1.8 bn", "1.8", 1, False, "billion"),
        ("$ 1.6Bn", "1.6", 1, False, "billion"),
        ("USD 1,577", "1577", 0, False, None),
        ("25k", "25", 0, False, "thousand"),
        ("1.2 billion", "1.2", 1, False, "billion"),
        ("2 trillion", "2", 0, False, "trillion"),
        ("3.1 mn", "3.1", 1, False, "million"),
        ("5 percent", "5", 0, True, None),
        ("$1577.00.", "1577.00", 2, False, None),
        ("0.0", "0.0", 1, False, None),
    ],
)
def test_parse_number(text: str, value: str, decimals: int, is_percent: bool, scale: str | None) -> None:
    assert parse_number(text) == ParsedNumber(Decimal(value), decimals, is_percent, scale)


@pytest.mark.parametrize("text", ["abc", "", "12 apples", "FY2022", "1.2.3", "(123", "3.8 and 4"])
def test_parse_number_rejects_non_numbers(text: str) -> None:
    assert parse_number(text) is None


def test_scaled_value() -> None:
    assert (parse_number("1.2 billion") or ParsedNumber(Decimal(0), 0)).scaled == Decimal("1200000000")


def test_extract_numbers_skips_identifiers() -> None:
    nums = extract_numbers("3M's FY2022 10-K: Q2 revenue of $1.8 bn, up 5% (COVID-19 aside), 737 jets")
    assert [(n.value, n.scale, n.is_percent) for n in nums] == [
        (Decimal("1.8"), "billion", False),
        (Decimal("5"), None, True),
        (Decimal("737"), None, False),
    ]
    # in prose a bracketed amount is an aside, not an accounting negative, unless written "$(...)"
    assert [n.value for n in extract_numbers("cash ($1.8 bn) vs $(2.0)")] == [Decimal("1.8"), Decimal("-2.0")]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("3.86", "3.8"),  # truncation
        ("3.86", "3.9"),  # half-up
        ("18,210", "18210"),
        ("$1,577 million", "1577"),  # bare side read in millions
        ("$1.577 billion", "1,577"),
        ("1.2 billion", "1,200 million"),
        ("-14.0%", "-0.14"),  # percent vs fraction
        ("46%", "46"),  # HiREC Table 7: "46%" vs "46" is correct
        ("(123)", "-123"),
        ("0", "0.0"),
        ("$1577.00", "1577"),
        ("-2.55", "-2.6"),  # half-up is symmetric about zero
        ("-2.55", "-2.5"),  # truncation toward zero
        (3.86, "3.8"),  # floats keep their repr's decimals
        (0.5, 0.5),
    ],
)
def test_numbers_match(a: str | float, b: str | float) -> None:
    assert numbers_match(a, b)
    assert numbers_match(b, a)  # symmetric


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("3.84", "3.9"),
        ("65.1", "651"),
        ("3.86", "3.7"),
        ("123", "-123"),
        ("1.2 billion", "1.2 million"),  # both scales explicit: no re-reading
        ("14%", "0.15"),
        ("1577", "1578"),
        ("about 3.8", "3.8"),  # not a single number
    ],
)
def test_numbers_do_not_match(a: str, b: str) -> None:
    assert not numbers_match(a, b)
    assert not numbers_match(b, a)


@pytest.mark.parametrize(
    ("predicted", "gold", "near"),
    [
        ("8.74", "$8.70", True),  # the gold rounded to a tenth: 0.46 % off, a strict miss
        ("8.74", "$8.60", False),  # 1.6 % off
        ("$1,229 million", "$1.24 billion", True),  # scale words applied before the tolerance: 0.9 % off
        ("22.9%", "0.23", True),  # a percentage read as a fraction, 0.4 % off
        ("0.4", "0.0", False),  # a gold of 0 is met only exactly
        ("-3.01", "-3.70", False),
    ],
)
def test_numbers_near_forgives_only_the_golds_rounding(predicted: str, gold: str, near: bool) -> None:
    assert numbers_near(predicted, gold) is near
    r = answer_matches(predicted, gold)
    assert (r.correct, r.near) == (numbers_match(predicted, gold), near)


def test_answer_matches_numeric_gold() -> None:
    r = answer_matches("$1,577 million", "$1577.00")
    assert (r.correct, r.method) == (True, "numeric")
    assert answer_matches("The ratio is 0.96.", "0.96").correct is True
    assert answer_matches("I could not find it.", "0.96").correct is False


def test_answer_matches_uses_the_final_number_of_the_prediction() -> None:
    gold = "1577"
    # the gold appears as an intermediate number but the conclusion is 300: no match
    miss = answer_matches("Revenue was $1,577 million and capex was $300 million.", gold)
    assert miss.correct is False and miss.predicted_number is not None
    assert miss.predicted_number.value == Decimal("300")
    hit = answer_matches("Cash from ops 2,000 minus capex 423 gives 1,577 in FY2022.", gold)
    assert hit.correct is True  # "FY2022" is an identifier, not the final number
    # an answer-first prediction: the number it leads with is its answer
    assert answer_matches("1,577. Computed as 2,000 - 423.", gold).correct is True
    assert answer_matches("300. Revenue was 1,577.", gold).correct is False


def test_answer_matches_gold_prose() -> None:
    assert answer_matches("$1.577 billion", "The capex was $1,577 million.").correct is True
    gold = "36%. The answer here assumes FY2023 refers to the 12 months ended Jan 28, 2023"
    r = answer_matches("36.2%", gold)
    assert r.correct is True  # leading number of the gold, later sentences are caveats
    # sign carried by words in the gold ("shrunk"): the judge decides
    r = answer_matches("-0.9%", "The consumer segment shrunk by 0.9% organically.")
    assert (r.correct, r.method) == (None, "judge")
    assert answer_matches("1.2%", "The consumer segment shrunk by 0.9% organically.").correct is False


@pytest.mark.parametrize(
    "gold",
    [
        "Yes, one customer accounted for 16% of consolidated net revenue",
        "Data Center",
        "Effective tax rate in FY2022 was 0.62%, compared to  -14.76% in FY2021.",
        "Growth came from 16% more stores. The answer assumes FY2023 ends on January 28, 2023.",
    ],
)
def test_answer_matches_textual_gold_needs_judge(gold: str) -> None:
    r = answer_matches("16%", gold)
    assert (r.correct, r.method, r.gold_number) == (None, "judge", None)


# ------------------------------------------------------------------------------------------- percentile
def test_percentile_hand_computed_and_like_numpy() -> None:
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)  # pos = 3 * 0.95 = 2.85
    assert percentile([7.0], 95) == 7.0
    values = [0.31, 0.12, 2.5, 0.9, 1.7, 0.44, 0.05]
    for q in (0, 5, 50, 90, 95, 99, 100):
        assert math.isclose(percentile(values, q), float(np.percentile(values, q)))
    with pytest.raises(ValueError):
        percentile([], 50)
