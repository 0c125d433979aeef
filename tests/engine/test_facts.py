"""Statement facts read from page text: every true value of the demo corpus, the table shapes real filings
print, tables the reader must refuse, and a few known values of the real shared corpus."""

from __future__ import annotations

import pytest

from engine.facts.tables import extract_facts, extract_page_facts, fiscal_year_of
from engine.records import StatementFact
from tests.conftest import needs_shared


def facts_of(text: str, label: str) -> list[StatementFact]:
    return [f for f in extract_page_facts(text, 0) if f.label == label]


def by_period(facts: list[StatementFact]) -> dict[str, float]:
    return {f.period.label: f.value for f in facts}


def test_every_true_value_of_the_demo_corpus_comes_back_as_a_fact(ingested_demo, demo_truth) -> None:  # noqa: ANN001
    """PDF and SEC-HTML demo filings, 10-K and 10-Q: the right label, period (fiscal year and duration, or the
    balance sheet's instant), value and scale for every value the generator printed."""
    library, _, _ = ingested_demo
    pages: dict[tuple[str, int], list[StatementFact]] = {}
    missing = []
    for t in demo_truth:
        key = (t["doc_name"], t["page_index"])
        if key not in pages:
            filing = library.filing_by_doc_name(t["doc_name"])
            pages[key] = extract_page_facts(library.page_text(filing.id, t["page_index"]), t["page_index"])
        column = t["column_label"].lower()
        months = 0 if t["statement"] == "balance_sheet" else next(
            m for word, m in (("three", 3), ("six", 6), ("nine", 9), ("year", 12)) if word in column)
        per_share = t["unit"] == "USD per share"
        hits = [f for f in pages[key] if f.label == t["metric"] and f.period.fiscal_year == int(t["fiscal_year_column"])
                and f.period.months == months and f.value == t["value"] and f.confidence == "high"
                and f.scale == (None if per_share else "millions") and f.unit == ("USD/share" if per_share else "USD")]
        if len(hits) != 1:
            missing.append((t["doc_name"], t["metric"], t["column_label"]))
    assert not missing, f"{len(missing)} of {len(demo_truth)} true values not read: {missing[:5]}"
    assert {f.statement for fs in pages.values() for f in fs} == {"income statement", "balance sheet", "cash flows"}


THREE_YEARS = """3M Company and Subsidiaries
Consolidated Statement of Cash Flows
Years ended December 31

(Millions)  2018  2017  2016
Cash Flows from Operating Activities
Net income including noncontrolling interest  $  5,363  $  4,869  $  5,058
Adjustments to reconcile net income including noncontrolling interest to net cash
provided by operating activities
Depreciation and amortization  1,488  1,544  1,474
Cash Flows from Investing Activities
Purchases of property, plant and equipment (PP&E)  (1,577)  (1,373)  (1,420)
Proceeds from sale of PP&E and other assets  262  49  58
Acquisitions, net of cash acquired  13  (2,023)  —
Net cash provided by (used in) investing activities  222  (3,086)  (1,403)
"""


def test_a_three_year_cash_flow_statement() -> None:
    capex = facts_of(THREE_YEARS, "Purchases of property, plant and equipment (PP&E)")
    assert by_period(capex) == {"FY2018": -1577, "FY2017": -1373, "FY2016": -1420}  # parentheses: negative
    assert {(f.statement, f.scale, f.unit, f.parent) for f in capex} == {
        ("cash flows", "millions", "USD", "Cash Flows from Investing Activities")}
    assert capex[0].scaled_value == -1_577_000_000 and capex[0].period.end == "2018-12-31"
    assert by_period(facts_of(THREE_YEARS, "Acquisitions, net of cash acquired"))["FY2016"] == 0  # a dash: nil
    # a heading broken over two lines is one parent
    (dep,) = [f for f in facts_of(THREE_YEARS, "Depreciation and amortization") if f.period.fiscal_year == 2018]
    assert dep.parent.endswith("to net cash provided by operating activities")
    totals = [f.label for f in extract_page_facts(THREE_YEARS, 0) if f.is_total]
    assert set(totals) == {"Net cash provided by (used in) investing activities"}


BALANCE_SHEET = """CONSOLIDATED BALANCE SHEETS
($ in millions)
February 2, 2019  February 3, 2018
Current assets
Cash and cash equivalents  $  1,980  $  1,101
Merchandise inventories  5,409  5,209
Total current assets  9,549  9,829
Current liabilities
Accounts payable  $  5,257  $  4,873
"""


def test_a_balance_sheet_of_a_52_53_week_retailer() -> None:
    inv = facts_of(BALANCE_SHEET, "Merchandise inventories")
    assert {(f.period.end, f.period.months, f.period.fiscal_year) for f in inv} == {
        ("2019-02-02", 0, 2019), ("2018-02-03", 0, 2018)}
    assert by_period(inv) == {"as of 2019-02-02": 5409, "as of 2018-02-03": 5209}
    assert {f.parent for f in inv} == {"Current assets"} and inv[0].statement == "balance sheet"
    assert facts_of(BALANCE_SHEET, "Accounts payable")[0].parent == "Current liabilities"
    assert facts_of(BALANCE_SHEET, "Total current assets")[0].is_total
    # a fiscal year ending in the first days of January is the year before's (a 52/53-week year)
    assert fiscal_year_of(2021, 1, 2) == 2020 and fiscal_year_of(2019, 2, 2) == 2019 and fiscal_year_of(2019, 12, 31) == 2019


def test_a_bare_year_over_the_columns_names_the_fiscal_year() -> None:
    """"2022" under "At January 1, 2023 and January 2, 2022" is fiscal 2022 (a 52/53-week year that ended on
    January 1, 2023), not a balance at January 1, 2022; a whole date in the prose over a table ("as of January 1,
    2020") does not date its "Year Ended December 31," columns."""
    sheet = ("CONSOLIDATED BALANCE SHEETS\nAt January 1, 2023 and January 2, 2022\n(Dollars in Millions)\n"
             "2022  2021\nInventories  12,483  10,387\nTotal assets  $  187,378  182,018\n")
    assert {(f.period.fiscal_year, f.period.end) for f in facts_of(sheet, "Inventories")} == {
        (2022, "2023-01-01"), (2021, "2022-01-02")}
    pro_forma = ("The pro forma information assumes the acquisition had occurred as of January 1, 2020.\n"
                 "Year Ended December 31,\n2021  2020\n(In thousands)\nNet revenues  $  10,153,603  $  5,456,763\n")
    assert {(f.period.fiscal_year, f.period.end) for f in facts_of(pro_forma, "Net revenues")} == {
        (2021, "2021-12-31"), (2020, "2020-12-31")}
    # a month and day printed over the years (the 10-Q layout above) still complete calendar dates
    stub = "Balance Sheets\n(In thousands)\nJanuary 1,  July 2,\n2023  2022\nCash  $  5  $  4\n"
    assert [f.period.end for f in facts_of(stub, "Cash")] == ["2023-01-01", "2022-07-02"]


QUARTER = """CONDENSED CONSOLIDATED STATEMENTS OF INCOME
(In thousands, except per share data)
Three Months Ended  Nine Months Ended
September 30,  September 30,
2023  2022  2023  2022
Net revenues  $  812,340  $  790,002  $  2,401,556  $  2,285,300
Gross margin  41.2%  39.8%  40.6%  39.9%
Diluted earnings per share  $  1.12  $  0.98  $  3.21  $  2.75
Weighted-average diluted shares  102,345  104,001  102,977  104,455
"""


def test_a_quarterly_table_of_three_and_nine_months() -> None:
    rev = facts_of(QUARTER, "Net revenues")
    assert [(f.period.months, f.period.fiscal_year, f.period.end, f.value) for f in rev] == [
        (3, 2023, "2023-09-30", 812340), (3, 2022, "2022-09-30", 790002),
        (9, 2023, "2023-09-30", 2401556), (9, 2022, "2022-09-30", 2285300)]
    assert {f.scale for f in rev} == {"thousands"} and rev[0].statement == "income statement"
    eps = facts_of(QUARTER, "Diluted earnings per share")
    assert {(f.unit, f.scale) for f in eps} == {("USD/share", None)} and eps[2].value == 3.21
    margin = facts_of(QUARTER, "Gross margin")
    assert {(f.unit, f.scale) for f in margin} == {("%", None)} and margin[0].value == 41.2
    shares = facts_of(QUARTER, "Weighted-average diluted shares")
    assert {(f.unit, f.scale) for f in shares} == {("shares", "thousands")}


def test_a_table_split_over_two_pages_reads_its_headers_on_each_page() -> None:
    first = "CONSOLIDATED STATEMENTS OF OPERATIONS\n(In millions)\nYear Ended December 31,\n2023  2022\nRevenue  $  500  $  450\n"
    second = "CONSOLIDATED STATEMENTS OF OPERATIONS (continued)\n(In millions)\nYear Ended December 31,\n2023  2022\n" \
             "Net income  $  60  $  55\n"
    assert by_period(facts_of(first, "Revenue")) == {"FY2023": 500, "FY2022": 450}
    assert by_period(facts_of(second, "Net income")) == {"FY2023": 60, "FY2022": 55}


def test_a_page_opening_with_another_statements_heading_does_not_take_the_previous_pages_columns() -> None:
    """The cash flows end at a page's foot; the next page opens with the equity statement, whose columns are its
    components (share capital, retained earnings …), not the years: its rows are not the cash flows' years."""
    flows = ("Riverbend plc and Subsidiaries\nConsolidated Statements of Cash Flows\n($ in millions)\n"
             "Years ended June 30,  2022  2021  2020\nNet income  $  805  $  939  $  612\n"
             "Depreciation and amortization  570  590  601\nNet cash provided by operating activities  1,530  1,461  "
             "1,383\n")
    equity = ("Riverbend plc and Subsidiaries\nConsolidated Statements of Equity\n($ in millions, except per share data)\n"
              "Ordinary  Paid-In  Retained\nShares  Capital  Earnings  Total\n"
              "Balance as of June 30, 2019  $  16  $  6,008  $  324  $  6,348\nNet income  612  4  616\n"
              "Share buyback/cancellations  —  (537)  (537)\n")
    facts = extract_facts([flows, equity], form="10-K")
    assert by_period([f for f in facts if f.label == "Net income" and f.page_index == 0]) == \
        {"FY2022": 805, "FY2021": 939, "FY2020": 612}
    assert not [f for f in facts if f.page_index == 1 and f.statement == "cash flows"]
    # a page that goes on with rows keeps the table it continues (low confidence without a "continued" mark)
    rest = "Purchases of property and equipment  (450)  (420)  (400)\n"
    assert by_period([f for f in extract_facts([flows, rest], form="10-K") if f.page_index == 1]) == \
        {"FY2022": -450, "FY2021": -420, "FY2020": -400}


def test_a_release_prints_each_periods_amount_beside_its_share_of_sales() -> None:
    """"Amount  to Sales  Amount  to Sales  (Decrease)" under "2023  2022  Percent": each period's amount is the
    first of its two cells; the quarter the caption names is three months; a row of the amounts and the change alone
    (per share) takes its first cells; a caption in the label column of that line shifts nothing."""
    release = ("Condensed Consolidated Statement of Earnings\n(Unaudited; in Millions Except Per Share Figures)  SECOND "
               "QUARTER\n\n2023  2022  Percent\nPercent  Percent  Increase\nAmount  to Sales  Amount  to Sales  "
               "(Decrease)\nSales to customers  $  25,530  100.0  $  24,020  100.0  6.3\nNet earnings  $  5,144  20.1  "
               "$  4,814  20.0  6.9\n\nNet earnings per share (Diluted)  $  1.96  $  1.80  8.9\n")
    sales = facts_of(release, "Sales to customers")
    assert {(f.period.fiscal_year, f.period.months, f.value) for f in sales} == {(2023, 3, 25530.0), (2022, 3, 24020.0)}
    assert {f.value for f in facts_of(release, "Net earnings")} == {5144.0, 4814.0}
    assert {f.value for f in facts_of(release, "Net earnings per share (Diluted)")} == {1.96, 1.80}
    assert not facts_of(release, "Percent Percent Increase") and all(not f.parent for f in sales)
    tenq = ("Three Months Ended  Nine Months Ended\nQ3 2022  Q3 2021  YTD 2022  YTD 2021\n"
            "(In Millions)  Amount  % of Revenue  Amount  % of Revenue  Amount  % of Revenue  Amount  % of Revenue\n"
            "Net revenue  $  15,338  100.0 %  $  19,192  100.0 %  $  49,012  100.0 %  $  58,496  100.0 %\n")
    assert [(f.period.months, f.value) for f in facts_of(tenq, "Net revenue")] == [
        (3, 15338.0), (3, 19192.0), (9, 49012.0), (9, 58496.0)]


def test_what_the_reader_refuses() -> None:
    # rows before any column header, and a row whose cells do not match the header's columns: no facts
    assert extract_page_facts("Revenue  $  500  $  450\n", 0) == []
    assert facts_of("(In millions)\nYear Ended December 31,\n2023  2022\nRevenue  500  450  12\n", "Revenue") == []
    # prose with a year is no column header
    text = "Our results for the year ended December 31, 2023 improved compared with the prior year in every segment.\n" \
           "Revenue  500  450\n"
    assert extract_page_facts(text, 0) == []
    # a header that does not say what its columns measure: facts marked low confidence, period "not stated"
    (a, b) = facts_of("Selected data\n(In millions)\n2023  2022\nBacklog  1,200  1,100\n", "Backlog")
    assert (a.confidence, a.period.months, a.period.label) == ("low", None, "2023 (period not stated)")
    # a contractual-obligations table: its columns are ranges and totals, not one period each
    text = "Contractual obligations\nYears ending December 31,\n(In millions)  2018  2019-2020  2021-2022  Thereafter  Total\n" \
           "Interest payments  1,200  2,300  2,100  9,800  15,400\n"
    assert {(f.confidence, f.period.months) for f in facts_of(text, "Interest payments")} == {("low", None)}
    dated = text.replace("(In millions)  2018", "June 30,  2018")  # a date over the first column only: still ranges
    assert {(f.confidence, f.period.months) for f in facts_of(dated, "Interest payments")} == {("low", None)}


@pytest.mark.shared
def test_known_values_of_real_filings() -> None:
    from engine.ingest.pdf import read_pdf_pages

    def facts(doc: str, page: int) -> list[StatementFact]:
        issuer = doc.split("_")[0]
        pages, _ = read_pdf_pages(str(needs_shared("corpus", "filings", issuer, "10-K", f"{doc}.pdf")))
        return extract_page_facts(pages[page], page)

    cash = facts("3M_2018_10K", 59)
    capex = {f.period.label: f.value for f in cash if f.label.startswith("Purchases of property, plant and equipment")}
    assert capex == {"FY2018": -1577, "FY2017": -1373, "FY2016": -1420}
    assert {f.scale for f in cash} == {"millions"}
    balance = facts("BESTBUY_2019_10K", 51)
    inv = {f.period.label: f.value for f in balance if f.label == "Merchandise inventories"}
    assert inv == {"as of 2019-02-02": 5409, "as of 2018-02-03": 5209}
    income = facts("AMAZON_2019_10K", 37)
    assert {f.period.label: f.value for f in income if f.label == "Net income"} == {
        "FY2017": 3033, "FY2018": 10073, "FY2019": 11588}


def test_column_groups_tell_repeated_periods_apart() -> None:
    text = ("The components of net periodic benefit cost were as follows:\n"
            "Pension  Other Postretirement Benefits\n"
            "Years ended December 31,  2018  2017  2016  2018  2017  2016\n"
            "Expected return on plan assets  (4,009)  (3,847)  (3,999)  (8)  (7)  (8)\n")
    got = facts_of(text, "Expected return on plan assets")
    assert [(f.period.label, f.value, f.confidence) for f in got[2:4]] == [
        ("Pension · FY2016", -3999, "high"), ("Other Postretirement Benefits · FY2018", -8, "high")]
    # groups that do not divide the columns: the repeated periods cannot be told apart, so no fact is sure
    vague = text.replace("Pension  Other Postretirement Benefits", "Pension Plans  U.S.  International  Other")
    assert {f.confidence for f in facts_of(vague, "Expected return on plan assets")} == {"low"}


def test_how_cells_and_rows_are_printed() -> None:
    text = ("Consolidated Statements of Operations\nYears ended December 31,\n2022  2021  2020\n"
            "(Dollars in millions)\n"  # the scale printed under the years
            "Net loss attributable to shareholders  ($4,935)  ($4,202)  ($11,873)\n"
            "Gain on sale of business, net of cash conveyed  (a)  —  (6)  (8,254)\n"  # a footnote letter cell
            "Gross margin percentage  10.48 %  11.13 %  11.20 %\n"
            "Ratio of earnings to fixed charges  3.5  3.7  7.2\n"
            "Revenues\nCasino  2,871  6,517  5,753\nRooms  830  2,322  2,212\n3,701  8,839  7,965\n"
            "Shares used in computing earnings per share\nBasic  453  457  462\n"
            # a negative whose closing parenthesis the page's text set apart
            "Net cash used in investing  (22,680  (30,311  (27,577\n")
    facts = extract_page_facts(text, 0)
    assert [f.value for f in facts if f.label == "Net cash used in investing"] == [-22680, -30311, -27577]
    loss = [f for f in facts if f.label.startswith("Net loss")]
    assert [(f.value, f.scale) for f in loss] == [(-4935, "millions"), (-4202, "millions"), (-11873, "millions")]
    assert [f.value for f in facts if f.label.startswith("Gain on sale")] == [0, -6, -8254]
    assert {(f.unit, f.value) for f in facts if f.label == "Gross margin percentage" and f.column == 0} == {("%", 10.48)}
    assert {f.unit for f in facts if f.label.startswith("Ratio")} == {"ratio"}
    total = [f for f in facts if f.label == "Revenues (unlabeled total)"]
    assert [(f.value, f.is_total, f.parent) for f in total] == [(3701, True, "Revenues"), (8839, True, "Revenues"),
                                                                (7965, True, "Revenues")]
    assert {(f.unit, f.scale) for f in facts if f.label == "Basic"} == {("shares", "millions")}


def test_a_total_closes_its_heading_and_a_note_is_no_statement() -> None:
    text = ("CONSOLIDATED BALANCE SHEETS\n(In millions)\nDecember 31,  2023  2022\nCurrent assets:\n"
            "Cash  100  90\nInventories  50  40\nTotal current assets  150  130\nGoodwill  70  70\n")
    assert {f.parent for f in facts_of(text, "Goodwill")} == {""}
    assert {f.parent for f in facts_of(text, "Inventories")} == {"Current assets"}
    note = ("The following amounts are included in our consolidated balance sheets:\n(In millions)\n"
            "December 31,  2023  2022\nContract assets  12  10\n")
    assert {(f.statement, f.period.months) for f in facts_of(note, "Contract assets")} == {("table", 0)}


def test_each_column_takes_its_own_date_and_the_header_lines_say_the_duration() -> None:
    sheet = ("Condensed Consolidated Balance Sheets\n(In thousands)\nJuly 29,  January 28,  July 30,\n"
             "2023  2023  2022\nCash and cash equivalents  $  388,627  $  737,877  $  434,226\n")
    assert [f.period.label for f in facts_of(sheet, "Cash and cash equivalents")] == [
        "as of 2023-07-29", "as of 2023-01-28", "as of 2022-07-30"]
    note = ("Summarized financial information for the three and six months ending March 31, 2023 and 2022, is as "
            "follows:\nThree Months Ended  Six Months Ended\nMarch 31,  March 31,  March 31,  March 31,\n"
            "(MILLIONS)  2023  2022  2023  2022\nCost of sales  (1,392)  (1,322)  (2,888)  (2,634)\n")
    assert [(f.period.label, f.confidence) for f in facts_of(note, "Cost of sales")] == [
        ("3M to 2023-03-31", "high"), ("3M to 2022-03-31", "high"), ("6M to 2023-03-31", "high"),
        ("6M to 2022-03-31", "high")]
    # dates alone over a note's columns: balances or fiscal years? Not stated, so not guessed
    dated = "Equity award compensation cost was (in millions):\nDecember 28, 2019  December 29, 2018\n" \
            "After-tax compensation cost  $  37  $  26\n"
    assert {f.confidence for f in facts_of(dated, "After-tax compensation cost")} == {"low"}


def test_a_label_broken_over_two_lines_that_ends_in_years() -> None:
    text = ("Consolidated Statements of Cash Flows\n(In millions)\nFor the Years Ended December 31,\n2021  2020  2019\n"
            "Proceeds from stock plans, net of taxes paid of $18, $17 and $11 in\n"
            "2021, 2020 and 2019, respectively  (1)  9  15\nIncome/(loss) before income tax expense/\n"
            "(benefit)  3,831  8,917  5,786\n")
    facts = extract_page_facts(text, 0)
    assert {f.label for f in facts} == {
        "Proceeds from stock plans, net of taxes paid of $18, $17 and $11 in 2021, 2020 and 2019, respectively",
        "Income/(loss) before income tax expense/ (benefit)"}
    assert {(f.period.label, f.confidence) for f in facts if f.value == 9} == {("FY2020", "high")}


def test_units_from_headings_and_the_words_above_a_table() -> None:
    per_share = ("SELECTED FINANCIAL DATA\n(In millions except per share amounts)\n2015  2014  2013\n"
                 "Net income (loss) per share\nBasic\nContinuing operations  $  (0.84)  $  (0.53)  $  (0.11)\n")
    assert {(f.unit, f.scale) for f in facts_of(per_share, "Continuing operations")} == {("USD/share", None)}
    caption = ("For the Quarters Ended\n(Amounts in millions, except per share data)\n"
               "December 31, 2018  September 30, 2018\nNet income  685  260\n")
    assert {(f.unit, f.scale) for f in facts_of(caption, "Net income")} == {("USD", "millions")}
    share = ("The following table sets forth our results of operations as a percentage of revenue.\n"
             "Three Months Ended\nOctober 29,  October 30,\n2023  2022\nTotal operating expenses  16.5  43.4\n")
    assert {(f.unit, f.scale) for f in facts_of(share, "Total operating expenses")} == {("%", None)}


def test_share_counts_take_the_scale_the_caption_gives_them() -> None:
    """A caption's exceptions split the scales of amounts and shares; a heading's own "(000's)" wins; the filing's
    last printed scale reaches money in a table that prints none, never its share counts or other counts."""
    excepted = ("CONSOLIDATED STATEMENTS OF INCOME\n(In thousands, except share and per share data)\n"
                "Years Ended December 31,\n2019  2018\nNet income  $  12,345  $  11,000\n"
                "Weighted average shares outstanding  45,678,901  44,000,000\nDiluted earnings per share  $  0.27  $  0.25\n")
    facts = extract_page_facts(excepted, 0)
    assert {(f.label, f.unit, f.scale) for f in facts} == {
        ("Net income", "USD", "thousands"), ("Weighted average shares outstanding", "shares", None),
        ("Diluted earnings per share", "USD/share", None)}
    same = excepted.replace("(In thousands, except share and per share data)", "(In millions, except per share data)")
    assert {f.scale for f in extract_page_facts(same, 0) if f.unit == "shares"} == {"millions"}
    heading = ("CONSOLIDATED STATEMENTS OF INCOME\n(amounts in millions, except per share data)\n"
               "52 Weeks Ended\nAugust 30, 2020  September 1, 2019\nShares used in calculation (000's)\n"
               "Basic  441,255  439,755\nDiluted  443,901  442,923\n")
    assert {(f.label, f.parent, f.unit, f.scale) for f in extract_page_facts(heading, 0)} == {
        ("Basic", "Shares used in calculation (000's)", "shares", "thousands"),
        ("Diluted", "Shares used in calculation (000's)", "shares", "thousands")}
    pages = ["Selected data\n(In millions)\nYears Ended December 31,\n2019  2018\nRevenue  $  100  $  90\n",
             "Key metrics\nYears Ended December 31,\n2019  2018\nNumber of employees  1,200  1,100\n"
             "Weighted-average shares  20  19\nOperating expenses  50  45\n"]
    later = [f for f in extract_facts(pages, form="10-K") if f.page_index == 1]
    assert {(f.label, f.unit, f.scale) for f in later} == {
        ("Number of employees", "count", None), ("Weighted-average shares", "shares", None),
        ("Operating expenses", "USD", "millions")}


def test_a_quarterly_reports_twelve_month_column_is_trailing_not_a_fiscal_year() -> None:
    page = ("Supplemental Cash Flow Information\n(in millions)\nThree Months Ended  Twelve Months Ended\n"
            "September 30,  September 30,\n2021  2022  2021  2022\nCash paid for interest  121  88  535  404\n")
    quarterly = {f.period.label: f.value for f in extract_facts([page], form="10-Q")}
    assert quarterly == {"3M to 2021-09-30": 121, "3M to 2022-09-30": 88, "TTM to 2021-09-30": 535,
                         "TTM to 2022-09-30": 404}
    # an annual report's fourth quarter beside its year: the twelve months are the fiscal year
    annual = {f.period.label for f in extract_facts([page.replace("September 30", "December 31")], form="10-K")}
    assert annual == {"3M to 2021-12-31", "3M to 2022-12-31", "FY2021", "FY2022"}


def test_words_in_a_caption_state_no_duration() -> None:
    """"(calendar year)" describes a maturity column: the balances under "March 31, 2023  June 30, 2022" are no
    fiscal years."""
    page = ("The components of debt were as follows:\n"
            "Maturities  Stated Interest  Effective Interest  March 31,  June 30,\n"
            "(In millions, issuance by calendar year)  (calendar year)  Rate  Rate  2023  2022\n"
            "Premium on debt exchange  (5,112)  (5,191)\n")
    assert {f.period.months for f in extract_page_facts(page, 0)} == {None}


def test_a_paragraph_ends_a_table() -> None:
    page = ("CONSOLIDATED STATEMENTS OF OPERATIONS\n(Amounts in millions)\nFor the Years Ended December 31,\n"
            "2019  2018\nNet revenues  6,489  7,500\n"
            "The total expected pre-tax restructuring charges related to the restructuring plan by segment, inclusive "
            "of amounts already incurred, are presented below (amounts\nin millions):\nTotal Expected Charges\n"
            "Activision  $  25\nBlizzard  105\n")
    assert {f.label for f in extract_page_facts(page, 0)} == {"Net revenues"}


def test_the_filing_scale_is_the_one_it_prints_most() -> None:
    """A table that prints no scale takes the filing's usual one, not the last one printed (a credit facility's
    "In Billions" two pages before)."""
    pages = ["Fiscal Year\nIn Millions  2021  2020\nNet sales  $  18,127.0  $  17,626.6\n",
             "Fiscal Year\nIn Millions  2021  2020\nOperating profit  $  3,144.8  $  2,953.9\n",
             "In Billions  Facility Amount  Borrowed Amount\n",
             "Our adjusted operating profit growth is calculated as follows:\nFiscal Year\n2021  2020\n"
             "Investment activity, net  (76.4)  8.4\n"]
    assert {f.scale for f in extract_facts(pages, form="10-K") if f.page_index == 3} == {"millions"}


def test_an_unlabeled_row_that_does_not_add_up_to_its_heading_is_the_tables_total() -> None:
    page = ("(MILLIONS)  2023  2022\nFair value hedges:\nInterest rate contracts  (45)  (66)\nHedged item  45  66\n"
            "Not designated as hedges:\nForeign exchange contracts  99  (394)\n$  47  $  1,432\n"
            "Revenues:\nProduct  10  8\nService  5  4\n15  12\n")
    labels = {(f.parent, f.label) for f in extract_page_facts(page, 0) if f.label.endswith("(unlabeled total)")}
    assert labels == {("", "Total (unlabeled total)"), ("Revenues", "Revenues (unlabeled total)")}


def test_the_adjustments_of_an_earnings_per_share_reconciliation_are_per_share() -> None:
    page = ("Following are the reconciliations of our GAAP measures to our non-GAAP measures:\n(In millions)\n"
            "Three Months Ended\nSep 30, 2023  Oct 1, 2022\nGross margin percentage  42.5 %  42.6 %\n"
            "Acquisition-related adjustments  2.1 %  2.2 %\n"
            "Earnings (loss) per share attributable to Intel—diluted  $  0.07  $  0.25\n"
            "Share-based compensation  0.18  0.19\nRestructuring and other charges  0.19  0.16\n"
            "Net income  $  297  $  1,019\nShare-based compensation  850  780\n")
    units = {(f.label, f.value, f.unit, f.scale) for f in extract_page_facts(page, 0) if f.period.end == "2022-10-01"}
    assert units == {("Gross margin percentage", 42.6, "%", None), ("Acquisition-related adjustments", 2.2, "%", None),
                     ("Earnings (loss) per share attributable to Intel—diluted", 0.25, "USD/share", None),
                     ("Share-based compensation", 0.19, "USD/share", None),
                     ("Restructuring and other charges", 0.16, "USD/share", None),
                     ("Net income", 1019, "USD", "millions"), ("Share-based compensation", 780, "USD", "millions")}


def test_a_long_label_broken_over_two_lines_is_no_paragraph() -> None:
    page = ("Consolidated Condensed Balance Sheets\n(In Millions; Unaudited)  Jul 1, 2023  Dec 31, 2022\n"
            "Stockholders’ equity:\nCommon stock and capital in excess of par value, 4,188 issued and outstanding "
            "(4,137 issued and outstanding as of December\n31, 2022)  34,330  31,580\nRetained earnings  67,231  70,405\n")
    assert {f.label for f in extract_page_facts(page, 0) if f.value in (34330, 67231)} == {
        "Common stock and capital in excess of par value, 4,188 issued and outstanding (4,137 issued and outstanding "
        "as of December 31, 2022)", "Retained earnings"}


def test_a_table_introduced_as_per_share_amounts_prints_them_per_share() -> None:
    page = ("Presented in the table below is the per share cash dividends paid for the years ended December 31:\n"
            "2019  2018  2017\nDecember  $  0.50  $  0.455  $  0.415\n")
    assert {(f.unit, f.scale) for f in extract_page_facts(page, 0)} == {("USD/share", None)}
    notes = ("The computation of basic and diluted earnings per share was as follows:\n2019  2018\n"
             "Net income  1,234  1,100\nDiluted earnings per share  2.10  1.90\n")
    assert {(f.label, f.unit) for f in extract_page_facts(notes, 0)} == {
        ("Net income", "USD"), ("Diluted earnings per share", "USD/share")}


def test_a_tables_printed_heading_is_its_statement_name_not_its_column_header():
    from engine.facts.tables import printed_heading

    page = ("Table of Contents\nACME Corp and Subsidiaries\nCONSOLIDATED BALANCE SHEETS\n(In millions)\n"
            "December 31,  2023  2022\nCurrent assets:\nCash  1,200  950\nInventories  300  280\n")
    assert printed_heading(page, page.index("Cash  1,200")) == ("balance sheet", "CONSOLIDATED BALANCE SHEETS")
    note = ("The table below shows revenue by segment.\n\nSegment Information\nYear ended December 31,\n"
            "(In millions)  2023  2022\nAmericas  500  450\nEurope  300  280\n")
    assert printed_heading(note, note.index("Americas")) == ("table", "Segment Information")
    bare = "for the years presented.\n\nYear ended December 31,\n(In millions)  2023  2022\nAmericas  500  450\n"
    assert printed_heading(bare, bare.index("Americas")) == ("table", "")  # a column header is no heading



def test_a_table_of_another_entitys_figures_gives_the_company_no_facts() -> None:
    """Amazon's 10-Q prints Rivian's revenues "as disclosed in its most recent SEC filings"; a note prints an equity
    method investee's results or the guarantors' alone: none is the company's own line. The company's own table on
    the same page is read."""
    rivian = ("Required summarized financial information of Rivian as disclosed in its most recent SEC filings is as "
              "follows (in millions):\n\nYear Ended  Year Ended\nDecember 31, 2021  December 31, 2022\n"
              "Revenues  $  55 $  1,658\nGross profit  (465)  (3,123)\n")
    investees = ("Summarized financial information of our equity method investees:\n2023  2022\n"
                 "Revenues  4,100  3,900\nNet income  310  280\n")
    own = "\nInventories\nDecember 31,\n(In millions)  2023  2022\nFinished goods  1,200  1,100\n"
    assert [f.label for f in extract_page_facts(rivian + own, 0)] == ["Finished goods"] * 2
    assert extract_page_facts(investees, 0) == []
    closed = ("Deed of Cross Guarantee\nConsolidated Statements of Income\n($ in millions)\n"
              "For the years ended June 30,  2023  2022\nNet sales  $  377 $  391\n")
    assert extract_page_facts(closed, 0) == []


def test_an_annual_reports_exhibit_99_pages_give_the_company_no_facts() -> None:
    """A 10-K files an investee's financial statements as Exhibit 99.3 ("CityCenter Holdings, LLC — Consolidated
    Balance Sheets"): none of its figures is the company's; the company's own balance sheet before it is read. An
    8-K's Exhibit 99.1 is the company's own release: read."""
    from engine.facts.tables import extract_facts

    own = "CONSOLIDATED BALANCE SHEETS\n(In thousands)\n2018  2017\nAccounts receivable, net  657,206  542,924\n"
    other = ("Exhibit 99.3\n\nCITYCENTER HOLDINGS, LLC\nCONSOLIDATED BALANCE SHEETS\n(In thousands)\n2018  2017\n"
             "Accounts receivable, net  144,797  114,345\n")
    read = extract_facts([own, other], form="10-K")
    assert {f.printed for f in read} == {"657,206", "542,924"} and {f.page_index for f in read} == {0}
    release = "Exhibit 99.1\n\nCONSOLIDATED BALANCE SHEETS\n(In thousands)\n2018  2017\nInventories  18,651  17,743\n"
    assert {f.printed for f in extract_facts([release], form="8-K")} == {"18,651", "17,743"}
