"""Query intent: hand-written questions per field, plus generic properties over the dev questions."""

from __future__ import annotations

import json
import re

import pytest

from engine.intent import IssuerRef, QueryIntent, find_metrics, parse_intent, period_labels
from tests.conftest import needs_shared

LIBRARY = (
    IssuerRef("AMZN", ("Amazon.com, Inc.", "AMZN")),
    IssuerRef("AMAZON", ("AMAZON.COM, INC.",)),
    IssuerRef("3M", ("3M COMPANY", "MMM", "3M")),
    IssuerRef("NIKE", ()),
    IssuerRef("JOHNSON", ("Johnson & Johnson", "JnJ", "JNJ")),
    IssuerRef("COCACOLA", ("The Coca-Cola Company", "KO")),
    IssuerRef("LOCKHEEDMARTIN", ("Lockheed Martin Corporation", "LMT")),
    IssuerRef("AMERICANEXPRESS", ("American Express Company", "AXP")),
    IssuerRef("AMERICANWATERWORKS", ("American Water Works Company, Inc.", "AWK")),
    IssuerRef("ON", ("ON Semiconductor Corporation", "ON")),
    IssuerRef("IT", ("Gartner, Inc.", "IT")),
    IssuerRef("ALL", ("The Allstate Corporation", "ALL")),
    IssuerRef("A", ("Agilent Technologies, Inc.", "A")),
    IssuerRef("COST", ("Costco Wholesale Corporation", "COST")),
)


def intent(question: str, **kw) -> QueryIntent:
    return parse_intent(question, LIBRARY, **kw)


# --- issuers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did 3M's segments earn in 2020?", ("3M",)),
        ("How large was MMM's backlog?", ("3M",)),
        ("Did Nike's gross margin expand in fiscal 2021?", ("NIKE",)),
        ("How did Johnson and Johnson fund the Kenvue split?", ("JOHNSON",)),
        ("Is JnJ more leveraged than the Coca-Cola Co.?", ("JOHNSON", "COCACOLA")),
        ("What backlog did Lockheed report?", ("LOCKHEEDMARTIN",)),
        ("How big is Lockheed Martin Corp's order book?", ("LOCKHEEDMARTIN",)),
        ("What did American Express' card fees bring in?", ("AMERICANEXPRESS",)),
        ("Compare American Water Works's capex with Costco's.", ("AMERICANWATERWORKS", "COST")),
    ],
)
def test_issuers_by_name_alias_possessive_and_suffix(question: str, expected: tuple[str, ...]) -> None:
    assert intent(question).issuers == expected


def test_two_library_keys_sharing_a_name_both_match_but_count_as_one_company() -> None:
    it = intent("What was Amazon's operating income in 2019?")
    assert it.issuers == ("AMZN", "AMAZON")
    assert not it.comparison  # one company mentioned, not two


def test_issuers_come_in_order_of_mention() -> None:
    assert intent("Did Costco grow faster than Nike and 3M?").issuers == ("COST", "NIKE", "3M")


def test_tickers_that_are_common_words_do_not_match_prose() -> None:
    question = "Based on all of it, is a cost cut on the table? Cost of sales rose."
    assert intent(question).issuers == ()
    assert intent("How did ON and IT compare with ALL in 2022?").issuers == ("ON", "IT", "ALL")


def test_single_letter_ticker_never_matches() -> None:
    assert intent("What was A's revenue? A big year.").issuers == ()


# --- fiscal years ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("What was FY2018 revenue?", (2018,)),
        ("What was FY 2018 revenue?", (2018,)),
        ("What was FY18 revenue?", (2018,)),
        ("What was revenue in fiscal 2018?", (2018,)),
        ("What was revenue in fiscal year 2018?", (2018,)),
        ("How much cash was returned in 2022?", (2022,)),
        ("What were dividends in 2019 and 2020?", (2019, 2020)),
        ("Sum net income from FY2019 to FY2021.", (2019, 2020, 2021)),
        ("What is the FY2016 - FY2018 average capex?", (2016, 2017, 2018)),
        ("How did debt change between 2019 and 2021?", (2019, 2021)),
        ("Did the firm hire 2,019 people, spend $2019 million, or 2018.5 units?", ()),
        ("Was revenue 2020 million in FY21?", (2021,)),
    ],
)
def test_fiscal_years_in_all_forms(question: str, years: tuple[int, ...]) -> None:
    assert intent(question).fiscal_years == years


def test_year_over_year_on_one_year_adds_the_prior_year() -> None:
    assert intent("What was the FY2019 YoY change in net sales?").fiscal_years == (2018, 2019)
    assert intent("How did revenue grow year-over-year in fiscal 2021?").fiscal_years == (2020, 2021)


def test_n_year_average_ending_in_one_year_adds_the_earlier_years() -> None:
    assert intent("What is the 3 year average EBITDA margin as of FY2020?").fiscal_years == (2018, 2019, 2020)


def test_relative_years_need_today_year() -> None:
    assert intent("What was capex last year?").fiscal_years == ()
    assert intent("What was capex last year?", today_year=2024).fiscal_years == (2023,)
    assert intent("What was capex in FY2020?", today_year=2024).fiscal_years == (2020,)


# --- quarters and period labels ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "quarters"),
    [
        ("What was gross margin in Q2 2023?", ("2023Q2",)),
        ("What was gross margin in the second quarter of fiscal 2023?", ("2023Q2",)),
        ("What was gross margin for the quarter ended June 30, 2023?", ("2023Q2",)),
        ("Did cash fall in Q2 of FY2024?", ("2024Q2",)),
        ("As of FY2023Q1, what was guidance?", ("2023Q1",)),
        ("What were 3Q22 bookings?", ("2022Q3",)),
        ("What were Q1'23 bookings?", ("2023Q1",)),
        ("What were Q4 FY23 bookings?", ("2023Q4",)),
        ("What did the company hold in H1 FY2023?", ("2023Q2",)),
        ("In Q3, how much stock was repurchased in 2022?", ("2022Q3",)),
        ("How did Q2 2023 revenue compare QoQ?", ("2023Q1", "2023Q2")),
    ],
)
def test_quarters(question: str, quarters: tuple[str, ...]) -> None:
    assert intent(question).quarters == quarters


def test_period_labels_separate_annual_from_quarterly_periods() -> None:
    assert period_labels(intent("What was FY2018 capex?")) == ["2018"]
    quarterly = intent("What was revenue in Q2 2023?")
    assert quarterly.fiscal_years == (2023,) and period_labels(quarterly) == ["2023Q2"]
    assert period_labels(intent("Did cash drop between FY2023 and Q2 of FY2024?")) == ["2023", "2024Q2"]
    # a hand-made intent without annual_years derives them from fiscal_years
    assert period_labels(QueryIntent("q", fiscal_years=(2022, 2023), quarters=("2023Q1",))) == ["2022", "2023Q1"]


# --- forms ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "forms"),
    [
        ("What risks does the 2022 annual report list?", ("10-K",)),
        ("What does the 10-K say about leases?", ("10-K",)),
        ("How did margins move across these 10-Qs?", ("10-Q",)),
        ("What did the quarterly filing say about debt?", ("10-Q",)),
        ("What was revenue in Q2 2023?", ("10-Q",)),
        ("What was revenue in Q4 2023?", ()),
        ("What did the 8-K filed in May announce?", ("8-K",)),
        ("What guidance did the Q1 2023 earnings release give?", ("EARNINGS", "10-Q")),
        ("What were net earnings in FY2020?", ()),
    ],
)
def test_forms(question: str, forms: tuple[str, ...]) -> None:
    assert intent(question).forms == forms


# --- metrics -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "metrics"),
    [
        ("How much went to purchases of property, plant and equipment?", ("capital expenditures",)),
        ("What was the top line in 2021?", ("revenue",)),
        ("What is net PP&E at year end?", ("property plant and equipment",)),
        ("What was cost of sales?", ("cost of goods sold",)),
        ("What was the net profit margin?", ("net profit margin",)),
        ("What were net earnings?", ("net income",)),
        ("How much cash was provided by operating activities?", ("cash from operations",)),
        ("What is EBITDA, i.e. operating income plus D&A?", ("ebitda", "operating income", "depreciation and amortization")),
        ("What is the quick ratio and the current ratio?", ("quick ratio", "current ratio")),
        ("How much did buybacks and dividends total?", ("share repurchases", "dividends")),
        ("What was diluted EPS and the effective tax rate?", ("earnings per share", "effective tax rate")),
        ("What were accounts receivable, accounts payable and inventories?",
         ("accounts receivable", "accounts payable", "inventory")),
        ("Use the cash flow statement and the balance sheet.", ()),
    ],
)
def test_metrics_with_synonyms(question: str, metrics: tuple[str, ...]) -> None:
    assert intent(question).metrics == metrics


def test_find_metrics_also_reads_filing_text() -> None:
    text = "Free cash flow rose; SG&A and research and development fell, while long-term debt was flat."
    assert find_metrics(text) == ("free cash flow", "sg&a", "research and development", "debt")


# --- question shape -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "numeric"),
    [
        ("What is the FY2021 free cash flow of 3M?", True),
        ("How much did Nike spend on advertising in 2020?", True),
        ("What percentage of revenue came from services?", True),
        ("In the Q1 2023 10-Q, what was the gross margin?", True),
        ("Using only the balance sheet, what is the current ratio for FY2019?", True),
        ("Why did operating margin fall in FY2022?", False),
        ("What drove the change in gross margin?", False),
        ("Which segment grew fastest in 2021?", False),
        ("Describe the main risk factors.", False),
        ("What are the primary products the company sells?", False),
        ("Did Nike pay dividends in FY2022?", False),
        ("Is 3M's quick ratio above one in Q2 2023?", False),
        ("What was R&D spend in Q1 2023, and which projects were prioritised?", True),
    ],
)
def test_numeric_versus_textual_and_yes_no(question: str, numeric: bool) -> None:
    assert intent(question).numeric is numeric


@pytest.mark.parametrize(
    ("question", "comparison"),
    [
        ("What was the year-over-year change in revenue?", True),
        ("How does FY2022 operating income compare to FY2021?", True),
        ("Did inventory increase or decrease in 2023?", True),
        ("Was the ETR different between FY2021 and FY2022?", True),
        ("Is Nike bigger than Costco by revenue?", True),
        ("What was FY2020 net income?", False),
        ("What were major acquisitions in FY2021 and FY2022?", False),
    ],
)
def test_comparison(question: str, comparison: bool) -> None:
    assert intent(question).comparison is comparison


@pytest.mark.parametrize(
    ("question", "calc"),
    [
        ("What is the FY2019 inventory turnover ratio?", True),
        ("What is capex as a % of revenue in FY2018?", True),
        ("What is the 2 year revenue CAGR from FY2020 to FY2022?", True),
        ("What is working capital? Define working capital as current assets less current liabilities.", True),
        ("What was total assets at the end of FY2021?", False),
        ("What drove the operating margin change in FY2022?", False),
    ],
)
def test_needs_calculation(question: str, calc: bool) -> None:
    assert intent(question).needs_calculation is calc


@pytest.mark.parametrize(
    ("question", "unit", "decimals"),
    [
        ("What was FY2018 capex (in USD millions)?", "USD millions", None),
        ("How much cash did it hold? Answer in USD billions.", "USD billions", None),
        ("What was revenue in $ thousands?", "USD thousands", None),
        ("What is the YoY change? Answer in units of percents and round to one decimal place.", "percent", 1),
        ("What is the asset turnover ratio? Round your answer to two decimal places.", "ratio", 2),
        ("What is EPS, rounded to the nearest whole number?", None, 0),
        ("Why did SG&A as a percent of sales fall?", None, None),  # no number expected, so no unit
    ],
)
def test_unit_and_decimals_hints(question: str, unit: str | None, decimals: int | None) -> None:
    it = intent(question)
    assert (it.unit_hint, it.decimals) == (unit, decimals)


def test_keywords_drop_stopwords_and_instruction_scaffolding() -> None:
    it = intent(
        "What is Nike's FY2019 long-term debt? Give a response to the question by relying on the details "
        "shown in the balance sheet. Answer in USD millions."
    )
    assert it.keywords == ("nike", "2019", "long", "term", "debt", "balance", "sheet")
    assert "sg&a" in intent("How did SG&A and the 10-K compare?").keywords
    assert "10-k" in intent("How did SG&A and the 10-K compare?").keywords


def test_to_dict_is_json_ready_and_parsing_is_deterministic() -> None:
    question = "How did Amazon's Q2 2023 operating margin compare with Q2 2022 (in percent)?"
    first, second = intent(question), intent(question)
    assert first == second
    data = json.loads(json.dumps(first.to_dict()))
    assert data["issuers"] == ["AMZN", "AMAZON"] and data["quarters"] == ["2022Q2", "2023Q2"]
    assert data["comparison"] is True and data["metrics"] == ["operating margin"]


# --- the real dev questions: generic properties only ---------------------------------------------------
@pytest.mark.shared
def test_dev_questions_parse_and_find_their_years() -> None:
    path = needs_shared("eval", "financebench_dev.jsonl")
    questions = [json.loads(line)["question"] for line in path.open() if line.strip()]
    with_year = found = 0
    for question in questions:
        it = parse_intent(question, LIBRARY)
        json.dumps(it.to_dict())
        if re.search(r"(?<!\d)(?:19|20)\d\d(?!\d)", question):
            with_year += 1
            found += bool(it.fiscal_years)
    assert with_year and found / with_year >= 0.8


def test_mixed_case_three_letter_ticker_nickname():
    from engine.intent import IssuerRef, parse_intent

    refs = [IssuerRef("JOHNSON", ("JOHNSON & JOHNSON", "JNJ")), IssuerRef("ALLX", ("ALL",))]
    assert parse_intent("Are JnJ's FY2022 margins improving?", refs).issuers == ("JOHNSON",)
    assert parse_intent("Did all segments grow in 2022?", refs).issuers == ()
