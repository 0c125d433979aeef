"""Query intent: hand-written questions per field (no benchmark questions, no hit rates)."""

from __future__ import annotations

import json

import pytest

from engine.intent import IssuerRef, QueryIntent, find_metrics, parse_intent, period_labels

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


# --- periods as analysts write them (own wording, made-up companies) -------------------------------------
@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("What was Vandelay Industries' FY2019 revenue?", (2019,)),
        ("How much did Globex spend on R&D in fiscal 2019?", (2019,)),
        ("What did Hooli earn in fiscal year 2019?", (2019,)),
        ("What was Initech's FY19 operating income?", (2019,)),
        ("What was Initech's FY 19 operating income?", (2019,)),
        ("What did Hooli earn in fiscal '19?", (2019,)),
        ("What did Hooli earn in FY'19?", (2019,)),
        ("What were Acme's net sales for the year ended December 31, 2019?", (2019,)),
        ("For the fiscal year ended September 28, 2019, what was Acme's capex?", (2019,)),
        ("Did Oscorp's revenue in 1999 exceed 1998?", (1998, 1999)),
        ("What were Soylent's dividends in 2020, 2021 and 2022?", (2020, 2021, 2022)),
        ("What were Nakatomi's revenues in FY2017, FY2018, and FY2019?", (2017, 2018, 2019)),
    ],
)
def test_years_in_many_notations(question: str, years: tuple[int, ...]) -> None:
    it = intent(question)
    assert it.fiscal_years == years
    assert period_labels(it) == [str(y) for y in years]


@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("How did Stark Industries' margins develop from 2017 through 2019?", (2017, 2018, 2019)),
        ("What was Wayne Enterprises' average revenue over FY2016–FY2018?", (2016, 2017, 2018)),
        ("What was Wayne Enterprises' average revenue over FY16-FY18?", (2016, 2017, 2018)),
        ("Sum Cyberdyne's buybacks for fiscal 2018 to fiscal 2020.", (2018, 2019, 2020)),
        # two named years that are not a range: the endpoints only
        ("How did Tyrell's debt move between fiscal 2020 and fiscal 2022?", (2020, 2022)),
        ("How much did Gringotts earn in 2018 versus 2016?", (2016, 2018)),
    ],
)
def test_year_ranges_are_inclusive_and_pairs_are_endpoints(question: str, years: tuple[int, ...]) -> None:
    assert intent(question).fiscal_years == years


@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("Did Umbrella report $2,019 million of revenue in 2020?", (2020,)),
        ("Was Umbrella's capex 2019 million or $ 2019?", ()),
        ("Did Massive Dynamic grow 2019% or 2018.5 points, with 2,020 stores?", ()),
        ("Was Aperture's revenue 2021 billion yen in FY2022?", (2022,)),
        ("Is account 12019 or 20191 the larger one?", ()),
    ],
)
def test_amounts_are_not_years(question: str, years: tuple[int, ...]) -> None:
    assert intent(question).fiscal_years == years


@pytest.mark.parametrize(
    ("question", "labels"),
    [
        ("What was Hooli's revenue in Q3 FY2021?", ["2021Q3"]),
        ("What was Hooli's revenue in 3Q 2021?", ["2021Q3"]),
        ("What was Hooli's revenue in 3Q21?", ["2021Q3"]),
        ("What was Hooli's revenue in the third quarter of 2021?", ["2021Q3"]),
        ("What was Hooli's revenue for the three months ended September 30, 2021?", ["2021Q3"]),
        ("What was Hooli's revenue in 2021Q1?", ["2021Q1"]),
        ("What was Hooli's revenue in FY21 Q1?", ["2021Q1"]),
        ("What was Hooli's revenue in the 1st quarter of fiscal '21?", ["2021Q1"]),
        ("How did Pied Piper's Q1 2022 revenue compare with Q4 2021?", ["2021Q4", "2022Q1"]),
        ("What did Pied Piper hold in the first half of 2022?", ["2022Q2"]),
        ("What did Pied Piper hold for the six months ended June 30, 2022?", ["2022Q2"]),
        ("How did Q2 2022 sales at Globex change year-over-year?", ["2021Q2", "2022Q2"]),
        ("How did Q1 2023 sales at Globex change quarter over quarter?", ["2022Q4", "2023Q1"]),
    ],
)
def test_quarters_in_many_notations_and_the_quarter_they_imply(question: str, labels: list[str]) -> None:
    it = intent(question)
    assert period_labels(it) == labels
    assert it.fiscal_years == tuple(sorted({int(label[:4]) for label in labels}))
    assert "10-Q" in it.forms


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


@pytest.mark.parametrize(
    ("question", "quarters", "months"),
    [
        ("What was revenue for the first nine months of 2023?", ("2023Q3",), 9),
        ("What was year-to-date revenue through the third quarter of 2023?", ("2023Q3",), 9),
        ("What was YTD revenue in Q2 2023?", ("2023Q2",), 6),
        ("What was revenue for the nine months ended September 30, 2023?", ("2023Q3",), 9),
        ("What was revenue in H1 2023?", ("2023Q2",), 6),
        ("What was revenue in Q3 2023?", ("2023Q3",), 0),
        ("What was YTD revenue in Q1 2023?", ("2023Q1",), 0),  # a first quarter's year to date is the quarter
    ],
)
def test_a_year_to_date_is_read_with_the_quarter_that_reports_it(question: str, quarters: tuple[str, ...],
                                                                 months: int) -> None:
    it = intent(question)
    assert (it.quarters, it.ytd_months) == (quarters, months)


QUARTER_RUNS = [
    ("What was the effective tax rate in each of the last four quarters?", 4),
    ("How has inventory moved over the past three quarters?", 3),
    ("Show gross margin for the trailing 2 quarters.", 2),
    ("List operating income for the three most recent 10-Qs.", 3),
    ("What is the effective tax rate in these quarters and how does it compare across the periods?", -1),
    ("How does R&D in the most recent quarter compare to previous quarters?", -1),
    ("What was revenue in each quarter of 2023?", -1),
    ("Give me gross margin quarter by quarter.", -1),
    ("How did gross margin move across all of the quarterly reports?", -1),
    # one quarter, or a year to date, is no run
    ("What was revenue in the previous quarter?", 0),
    ("What was revenue in the first two quarters of 2023?", 0),
    ("What was revenue in Q3 2023 compared to Q2 2023?", 0),
]
YEAR_RUNS = [
    ("What was the operating margin in each of the last three fiscal years?", 3),
    ("Show free cash flow over the past 3 years.", 3),
    ("List net income for the two most recent fiscal years.", 2),
    ("How has gross margin moved over the previous five years?", 5),
    ("Give me capital expenditures year by year.", -1),
    ("What was net income for each year from 2020 to 2022?", -1),
    ("What was revenue in each of these years?", -1),
    ("How has revenue changed since FY2021?", -1),
    ("What has happened to gross margin since 2020?", -1),
    # one year, a year-over-year change, an N-year computation, or quarters: no run of years
    ("What was revenue last year?", 0),
    ("What was the year-over-year change in revenue in FY2023?", 0),
    ("What is the 3-year revenue CAGR as of FY2023?", 0),
    ("What was revenue in each of the last four quarters?", 0),
    ("Has revenue grown since the acquisition?", 0),
]


@pytest.mark.parametrize(("question", "run", "unit"), [(q, n, "quarter") for q, n in QUARTER_RUNS]
                         + [(q, n, "year") for q, n in YEAR_RUNS])
def test_a_run_of_periods_not_named_is_read_with_its_count(question: str, run: int, unit: str) -> None:
    """"The last four quarters", "these quarters", "the last three fiscal years", "year by year", "since FY2021":
    the reader claims the words as a period (nothing is left unread) and says how many of the latest quarters or
    years are asked; the company check names them."""
    from engine.intent.reader import read_plan
    from engine.vocab.catalogue import load_catalogue

    it = intent(question)
    assert (it.quarter_run if unit == "quarter" else it.year_run) == run
    if run:
        every = f"since FY{it.since}" if it.since else f"each {unit}"
        assert (f"latest {run} {unit}s" if run > 0 else every) in it.temporal
        assert read_plan(it, load_catalogue()).status == "complete", question


def test_period_labels_separate_annual_from_quarterly_periods() -> None:
    assert period_labels(intent("What was FY2018 capex?")) == ["2018"]
    quarterly = intent("What was revenue in Q2 2023?")
    assert quarterly.fiscal_years == (2023,) and period_labels(quarterly) == ["2023Q2"]
    assert period_labels(intent("Did cash drop between FY2023 and Q2 of FY2024?")) == ["2023", "2024Q2"]
    # a hand-made intent without annual_years derives them from fiscal_years
    hand_made = QueryIntent("q", fiscal_years=(2022, 2023), quarters=("2023Q1",))
    assert period_labels(hand_made) == ["2022", "2023Q1"]


@pytest.mark.parametrize(("question", "years", "quarters"), [
    # the annual report named says where to look; the period asked is the other one
    ("In Best Buy's 10-K for 2023, what was net earnings for the fiscal year ended January 30, 2021?", (2021,), ()),
    ("In Best Buy's FY2023 10-K, what was net income in FY2021?", (2021,), ()),
    ("According to the 2022 annual report, what was Apple's revenue in FY2020?", (2020,), ()),
    ("In the FY2022 10-K, what was revenue in Q4 2021?", (2021,), ("2021Q4",)),
    # the report's year alone is the year asked
    ("According to the 2022 10-K, what was Apple's revenue?", (2022,), ()),
    ("What was revenue in FY2022 according to the 10-K for fiscal 2022?", (2022,), ()),
    ("In the 2022 annual report, what was revenue in the fourth quarter?", (2022,), ("2022Q4",)),
])
def test_the_year_of_an_annual_report_named_is_where_to_look(question: str, years: tuple, quarters: tuple) -> None:
    it = intent(question)
    assert (it.fiscal_years, it.quarters) == (years, quarters)


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
        ("What is EBITDA, i.e. operating income plus D&A?",
         ("ebitda", "operating income", "depreciation and amortization")),
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
    assert find_metrics(text) == ("free cash flow", "sg&a", "research and development", "long-term debt")


def test_conjuncts_sharing_one_head_are_each_a_metric() -> None:
    from engine.vocab.lexicon import metric_spans

    text = "Among operations, investing, and financing activities, which brought in the most cash flow?"
    assert metric_spans(text)[:3] == [("cash from operations", 6, 16), ("cash from investing", 18, 27),
                                      ("cash from financing", 33, 42)]
    assert find_metrics("investing or financing cash flows") == ("cash from investing", "cash from financing")
    assert find_metrics("operating activities") == ()  # a single one, named without "cash": no mention


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
        # the noun before the verb heads what is asked: changes and programs are described, not counted
        ("What production rate changes is Boeing forecasting for FY2023?", False),
        ("What share repurchase programs did Nike authorize in FY2022?", False),
        ("What changes in debt and interest obligations did Amazon disclose in the Q1 2023 10-Q?", False),
        ("What plans for capital spending has Boeing announced?", False),
        ("What changes in revenue were there in FY2022?", False),
        ("What was the change in revenue in FY2022?", True),
        ("What share of revenue came from services in FY2022?", True),
        ("What was the production rate of the 787 in 2022?", True),
    ],
)
def test_numeric_versus_textual_and_yes_no(question: str, numeric: bool) -> None:
    assert intent(question).numeric is numeric


@pytest.mark.parametrize(("question", "number"), [
    ("Acme FY2023 revenue?", True), ("What was Acme's cash coverage?", True),
    # a described thing is asked in words, whatever metric it is of
    ("What changes in debt and interest obligations did Amazon disclose in the Q1 2023 10-Q?", False),
    ("What production rate changes is Boeing forecasting for FY2023?", False),
    ("Why did revenue fall?", False), ("Did Acme pay a dividend?", False),
])
def test_whether_a_question_whose_metric_was_read_asks_its_value(question: str, number: bool) -> None:
    from engine.intent.reader import asks_a_number

    assert asks_a_number(intent(question)) is number


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


@pytest.mark.parametrize(
    ("question", "dimension"),
    [
        ("What is the amount of the gain from the separation of the business?", "amount"),
        ("By how much did the company increase its revolving credit agreement?", "amount"),
        ("What was FY2018 capex (in USD millions)?", "amount"),
        ("What is the quantity of restructuring costs in FY2022?", "amount"),
        ("By how much did revenue grow in FY2022, in percent?", "ratio"),
        ("What is the FY2019 inventory turnover?", "ratio"),
        ("What is the gross margin in FY2022?", "ratio"),
        ("What share of revenue came from services, as a % of the total?", "ratio"),
        ("What was the quick ratio at the end of FY2021?", "ratio"),
        ("What was the largest segment's revenue in FY2022?", None),
    ],
)
def test_the_dimension_a_question_asks(question: str, dimension: str | None) -> None:
    from engine.intent.units import asked_dimension

    assert asked_dimension(question, intent(question).unit_hint) == dimension


def test_keywords_drop_stopwords_and_instruction_scaffolding() -> None:
    it = intent(
        "What is Nike's FY2019 long-term debt? Please answer the question using the balance sheet, and give "
        "the answer in USD millions."
    )
    # (the company named says whose filings are read: inside them its name is on every page, and no keyword)
    assert it.keywords == ("2019", "long", "term", "debt", "balance", "sheet")
    assert "sg&a" in intent("How did SG&A and the 10-K compare?").keywords
    assert "10-k" in intent("How did SG&A and the 10-K compare?").keywords


@pytest.mark.parametrize(
    ("question", "words"),
    [
        # these words were stop words only because a benchmark's template says "information provided",
        # "details shown", "line items", "base your judgment", "financial metric providers", "agreement"
        ("What does Item 1A of Globex's 10-K say about access to its revolving credit agreement?",
         ("item", "1a", "access", "agreement")),
        ("What does the segment information show about the regulated utility's rate base?",
         ("segment", "information", "show", "rate", "base")),
        ("How much of Hooli's revenue came from internet providers and public sector customers?",
         ("internet", "providers", "public", "sector")),
        ("Which line of the financial services segment reported an impairment?",
         ("line", "financial", "services", "impairment")),
    ],
)
def test_keywords_keep_content_words_a_template_also_uses(question: str, words: tuple[str, ...]) -> None:
    keywords = intent(question).keywords
    assert all(w in keywords for w in words), keywords


def test_intent_is_json_ready_and_parsing_is_deterministic() -> None:
    question = "How did Amazon's Q2 2023 operating margin compare with Q2 2022 (in percent)?"
    first, second = intent(question), intent(question)
    assert first == second
    from engine.trace import to_json

    data = json.loads(json.dumps(to_json(first)))
    assert data["issuers"] == ["AMZN", "AMAZON"] and data["quarters"] == ["2022Q2", "2023Q2"]
    assert data["comparison"] is True and data["metrics"] == ["operating margin"]


# --- issuer nicknames -----------------------------------------------------------------------------------
def test_a_nickname_matches_only_as_a_listed_alias() -> None:
    bare = [IssuerRef("MERIDIAN", ("MERIDIAN LOGISTICS", "MLG")), IssuerRef("ALLX", ("ALL",))]
    # no rule turns a ticker into a nickname ("MlG" from MLG, "AlL" from ALL): the library lists nicknames
    assert parse_intent("Are MlG's FY2022 margins improving?", bare).issuers == ()
    assert parse_intent("Is AlL's combined ratio improving?", bare).issuers == ()
    assert parse_intent("Did all segments grow in 2022?", bare).issuers == ()
    listed = [IssuerRef("JOHNSON", ("JOHNSON & JOHNSON", "JNJ", "JnJ")),
              IssuerRef("GLOBEX", ("Globex Corp", "Gbx"))]
    assert parse_intent("Are JnJ's FY2022 margins improving?", listed).issuers == ("JOHNSON",)
    assert parse_intent("Did Gbx beat JNJ on margins?", listed).issuers == ("GLOBEX", "JOHNSON")


def test_a_name_joined_by_and_is_also_said_by_its_initials() -> None:
    refs = [IssuerRef("HALE", ("Hale & Dorsey Inc.", "HDX")), IssuerRef("BRIGHTON", ("Brighton and Moss Corp",)),
            IssuerRef("RIVET", ("Rivet Dynamics",))]
    for q in ("What was H&D's FY2021 revenue?", "Did H & D grow?", "Is HnD profitable?", "Did Hale & Dorsey grow?"):
        assert parse_intent(q, refs).issuers == ("HALE",), q
    assert parse_intent("What did B&M pay in dividends?", refs).issuers == ("BRIGHTON",)
    # lowercase initials, other letters, or a one-company name are not initials of a name
    for q in ("Is hnd profitable?", "What were R&D costs?", "Did the P&L improve?", "Is RD growing?"):
        assert parse_intent(q, refs).issuers == (), q


@pytest.mark.parametrize(("question", "one"), [
    ("What is the amount of the gain the company recorded on the sale of its division in FY2023?", True),
    ("How much did the company pay in cash dividends in FY2021 (in USD millions)?", True),
    ("By how much did the company increase its revolving credit facility in 2023?", False),
    ("What is the total amount the company may borrow under its credit agreements?", False),
    ("How much did operating income change between FY2021 and FY2022?", False),
    ("What is the company's FY2022 gross margin?", False),  # a ratio
    ("What were the company's revenues in FY2022?", False),  # no amount asked in words: the formula path
])
def test_a_question_asking_one_reported_figure(question: str, one: bool) -> None:
    from engine.intent.units import asks_one_figure

    assert asks_one_figure(question, parse_intent(question).unit_hint) is one


def test_total_liabilities_and_equity_is_the_balance_sheet_total_not_total_liabilities() -> None:
    """The balance sheet's second total ("Total liabilities and shareholders' equity") equals total assets; read
    as "total liabilities" it made a generated question's facts answer total liabilities (3M 2022: 31,685 for a
    passage printing 46,455)."""
    from engine.vocab.lexicon import find_metrics, metric_named_by

    for text in ("What is the total liabilities and equity for 3M Company in fiscal 2022?",
                 "Total liabilities and shareholders' equity", "Total liabilities & stockholders equity"):
        assert find_metrics(text) == ("total assets",)
    assert metric_named_by("Total liabilities and equity") == "total assets"
    assert find_metrics("What were total liabilities in 2022?") == ("total liabilities",)


def test_issuers_are_matched_alike_when_only_the_candidates_by_first_letters_are_tried(monkeypatch) -> None:
    """match_issuers tries only the companies one of whose names starts (first three letters) in the question: a
    library of thousands of companies costs a question what a few cost. It finds what trying every company finds,
    among thousands of look-alike names too."""
    from engine.intent import issuers as mod

    library = list(LIBRARY) + [IssuerRef(f"Z{i:04d}", (f"{w} {v} Holdings Inc.", f"Z{i:04d}"))
                               for i, (w, v) in enumerate((w, v) for w in ("Amazonia", "Johnsonville", "Costa",
                                                                               "Nikesh", "Lockwood", "American")
                                                          for v in ("Water", "Express", "Semiconductor", "Company"))]
    questions = [
        "What did 3M's segments earn in 2020?", "How large was MMM's backlog?", "Did Nike's margin expand in 2021?",
        "How did Johnson and Johnson fund the Kenvue split?", "What did J&J and P & G spend?", "Was JnJ's debt up?",
        "Compare Amazon.com and AMZN revenue", "Does American Express have positive working capital?",
        "What is AMERICANWATERWORKS capex?", "Is ON Semiconductor growing? What about IT and ALL?",
        "on it all a cost", "Costco's membership fees", "Lockheed's backlog in FY2022",
        "The Coca-Cola Company's KO dividend", "What is Amazonia Water's revenue vs Costa Express?",
        "Did American Semiconductor Holdings beat Lockwood Company?", "z0003 and Z0004 and Z0019", "",
    ]
    fast = [mod.match_issuers(q, library) for q in questions]
    monkeypatch.setattr(mod, "_candidates", lambda question, issuers: list(range(len(issuers))))
    assert fast == [mod.match_issuers(q, library) for q in questions]
    assert any(keys for keys, _ in fast)  # the questions do name companies


@pytest.mark.parametrize(("question", "expected"), [
    ("What was Johnson Controls' revenue in FY2022?", ("JCI",)),
    ("How did Johnson & Johnson fund the Kenvue split?", ("JOHNSON",)),
    ("What did Northwind Housewares Technologies, Inc. earn in 2023?", ("NRTH",)),
    ("What did Northwind earn in 2023?", ("NRTH", "NWAN")),  # said by the first word alone: either
    ("Compare Northwind Analytics with Johnson Controls", ("NWAN", "JCI")),
])
def test_where_company_names_overlap_the_longest_name_said_wins(question: str, expected: tuple) -> None:
    refs = [IssuerRef("JOHNSON", ("Johnson & Johnson", "JNJ")), IssuerRef("JCI", ("Johnson Controls, Inc.",)),
            IssuerRef("NRTH", ("Northwind Housewares Technologies, Inc.",)),
            IssuerRef("NWAN", ("Northwind Analytics Inc.",))]
    assert parse_intent(question, refs).issuers == expected


@pytest.mark.parametrize(("question", "any_of"), [
    ("Were there any significant acquisitions or divestitures reported by ACME in Q2 2023?",
     ("acquisitions", "divestitures")),
    ("Did ACME have any share buyback activity in Q2 2023?", ("buyback",)),
    ("Has ACME announced any spin-offs?", ("spin-offs",)),
    ("Did ACME make any divestitures during the quarter?", ("divestitures",)),
    ("Is ACME a party to any lawsuits?", ("lawsuits",)),
    ("Were there any layoffs or restructuring actions at ACME in 2023?", ("layoffs", "restructuring")),
    ("What was ACME's revenue in FY2022?", ()),  # asks no "any"
    ("Did ACME's revenue grow in any quarter of 2022?", ()),  # "any" of a period, no subject named
])
def test_what_a_question_asks_whether_there_was_any_of_is_read_in_its_own_words(question: str,
                                                                                 any_of: tuple) -> None:
    assert parse_intent(question).any_of == any_of


@pytest.mark.parametrize(("question", "ongoing"), [
    ("Has ACME reported any materially important ongoing legal battles from FY2022?", True),
    ("Are there any pending lawsuits against ACME in 2023?", True),
    ("Did ACME make any acquisitions in 2023?", False),
    ("Did ACME open any new stores in Q2 2023?", False),
])
def test_what_still_stands_in_a_period_is_asked_whenever_it_began(question: str, ongoing: bool) -> None:
    """"Any ongoing legal battles in FY2022": lawsuits over a 2018 accident are told with the accident's day, which
    does not put them before the period (the pipeline sets no period start for such a question)."""
    from engine.intent.shape import if_any_vocab

    assert bool(if_any_vocab().ongoing.search(question)) is ongoing
