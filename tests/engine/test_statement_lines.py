"""Statement lines as filings print them, read for the questions analysts ask of them (engine.answer.from_facts,
engine.answer.parts, engine.intent.reader), on a generated 10-K: an interest expense printed as an outflow "(400)"
and named "Interest and debt expense"; a balance sheet that prints no "Total liabilities" row and calls its debt
"Short-term debt obligations" and "Long-Term Debt Obligations"; a segment note whose total is "Segment operating
(loss)/profit"; a cash flow statement that prints depreciation and the amortization of intangibles apart. Every expected
figure is the arithmetic of the rows written here."""

from __future__ import annotations

import pytest

CO = "Epsilon Works"
REVENUE, SGA = (9000, 8000), (2000, 1700)
SEGMENTS = {"Aerostructures": (-300, 100), "Defense Systems": (1500, 1300), "Field Services": (800, 700)}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, embedder):
    from tests.engine.test_identity import add_table_page
    from tests.engine.test_parts import _pipeline_of, _ten_k

    tmp = tmp_path_factory.mktemp("lines")
    pdf = _ten_k(tmp, "EPSILON", "EPSILON WORKS INC")
    add_table_page(pdf, [("Item 8. Financial Statements and Supplementary Data", "", ""),
                         ("Consolidated Statements of Operations", "", ""), ("(in millions)", "2023", "2022"),
                         ("Revenue", f"{REVENUE[0]:,}", f"{REVENUE[1]:,}"), ("Cost of sales", "(5,000)", "(4,600)"),
                         ("Selling, general and administrative", f"({SGA[0]:,})", f"({SGA[1]:,})"),
                         ("Operating income", "2,000", "1,700"), ("Interest and debt expense", "(400)", "(380)"),
                         ("Income before income taxes", "1,600", "1,320"), ("Net income", "1,200", "1,000")])
    add_table_page(pdf, [("Consolidated Balance Sheets", "", ""), ("(in millions)", "2023", "2022"),
                         ("Cash and cash equivalents", "1,000", "900"), ("Total current assets", "6,000", "5,600"),
                         ("Total assets", "20,000", "19,000"), ("Short-term debt obligations", "500", "450"),
                         ("Total current liabilities", "3,400", "3,300"), ("Long-Term Debt Obligations", "6,000", "6,100"),
                         ("Other liabilities", "2,100", "2,000"), ("Total stockholders' equity", "8,400", "7,500"),
                         ("Noncontrolling interests", "100", "100"),
                         ("Total liabilities and equity", "20,000", "19,000")])
    add_table_page(pdf, [("Consolidated Statements of Cash Flows", "", ""), ("(in millions)", "2023", "2022"),
                         ("Net income", "1,200", "1,000"), ("Depreciation", "600", "560"),
                         ("Amortization of purchased intangibles", "100", "90"),
                         ("Net cash provided by operating activities", "2,500", "2,200"),
                         ("Capital expenditures", "(900)", "(800)"),
                         ("Net cash used in investing activities", "(950)", "(820)")])
    rows = [("Note 15 - Segment information", "", ""), ("Earnings from operations by segment", "", ""),
            ("(in millions)", "2023", "2022")]
    rows += [(name, f"({-v[0]:,})" if v[0] < 0 else f"{v[0]:,}", f"{v[1]:,}") for name, v in SEGMENTS.items()]
    rows += [("Segment operating (loss)/profit", "2,000", "2,100")]
    add_table_page(pdf, rows)
    return _pipeline_of(tmp, embedder)


@pytest.mark.parametrize(("question", "value"), [
    # an expense printed in parentheses is its size: a coverage above zero, an interest paid that is no negative
    (f"What was {CO}'s interest coverage ratio in FY2023?", 2000 / 400),
    (f"How much did {CO} pay in interest in FY2023?", 400.0),
    # no "Total liabilities" row: the total of liabilities and equity less the equity and the noncontrolling interests
    (f"What were {CO}'s total liabilities at the end of FY2023?", 20000 - 8400 - 100),
    (f"What were {CO}'s total liabilities as a multiple of equity at the end of FY2023?", (20000 - 8400 - 100) / 8400),
    # total debt is both its lines, whatever the filing calls them
    (f"What was {CO}'s debt load at the end of FY2023?", 500 + 6000),
    # a bare noun that is the whole of what is asked names its line
    (f"What proportion of {CO}'s total assets was cash at the end of FY2023?", 1000 / 20000 * 100),
    (f"How big was {CO}'s cash pile at the end of FY2023?", 1000.0),
    (f"How much money did {CO} make in FY2023?", 1200.0),
    # D&A printed in two lines: their sum
    (f"What was {CO}'s EBITDA in FY2023?", 2000 + 600 + 100),
    # two moves set against each other: the two growths, in percent
    (f"How much faster did {CO}'s SG&A grow than its revenue in FY2023?",
     (SGA[0] / SGA[1] - 1) * 100 - (REVENUE[0] / REVENUE[1] - 1) * 100),
])
def test_lines_as_printed_give_the_asked_figure(pipeline, question: str, value: float) -> None:
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", (question, run.answer)
    assert run.answer.value == pytest.approx(value, rel=1e-4), (question, run.answer.text)
    if "faster" in question:  # one rate less another: in percentage points, not percent
        assert run.answer.text.endswith("percentage points") and "%" not in run.answer.text, run.answer.text


@pytest.mark.parametrize(("question", "side"), [
    (f"Did {CO}'s SG&A grow faster than its revenue in FY2023?", "Yes"),
    (f"Did {CO}'s revenue grow faster than its SG&A in FY2023?", "No"),
    (f"Did {CO}'s SG&A grow slower than its revenue in FY2023?", "No"),
    (f"Did {CO}'s interest expense grow faster than its revenue in FY2023?", "No"),
    (f"Did {CO}'s capex outpace its depreciation and amortization in FY2023?", "Yes"),
    # a bar written beside a word of a level ("comfortable") is the bar judged: coverage 5.0
    (f"Is {CO}'s interest coverage comfortable, above 6x, in FY2023?", "No"),
    (f"Is {CO}'s interest coverage comfortable, above 4x, in FY2023?", "Yes"),
])
def test_a_move_set_against_another_metrics_move_is_judged_on_both(pipeline, question: str, side: str) -> None:
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0, (question, run.answer)
    assert run.answer.text.startswith(f"{side}:"), (question, run.answer.text)


def test_a_segment_total_that_prints_its_signs_alternative_names_its_amount(pipeline) -> None:
    """"Segment operating (loss)/profit" is the total of the segments' operating income; "earned the most" names a
    profit and no amount: the parts' operating income."""
    run = pipeline.run(f"Which of {CO}'s segments earned the most in FY2023?", store=False)
    assert run.status == "answered" and run.answer.method == "facts", run.answer
    assert run.answer.text.startswith("Defense Systems: ") and run.answer.value == pytest.approx(1500.0), run.answer.text
    run = pipeline.run(f"Which of {CO}'s segments lost the most money in FY2023?", store=False)
    assert run.answer.text.startswith("Aerostructures: ") and run.answer.value == pytest.approx(-300.0), run.answer.text


@pytest.mark.parametrize(("question", "status"), [
    # beside a word not read, a bare noun names nothing: the written answer reads the filing
    (f"What were the cash proceeds {CO} received from the sale of its division in FY2023?", "none"),
    (f"Does {CO} hold any private equity investments?", "none"),
    (f"What is {CO}'s net interest margin in FY2023?", "none"),
    (f"What proportion of {CO}'s total assets was cash at the end of FY2023?", "complete"),
    # "how does it make money" asks of its business, not of its profit; a loss per share is no net income
    (f"How does {CO} make money?", "none"),
    (f"How much did {CO} lose per share in FY2023?", "none"),
    (f"How much did {CO} lose in FY2023?", "complete"),
])
def test_a_bare_noun_is_a_metric_only_when_it_is_all_that_is_asked(question: str, status: str) -> None:
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan
    from engine.vocab.catalogue import load_catalogue

    assert read_plan(parse_intent(question), load_catalogue()).status == status, question


def test_a_complementary_row_names_its_line_at_its_head() -> None:
    """A row found on a retrieved page fills a missing line only when its label names the line at its head: "Other
    operating expenses" is no total of operating expenses (Coca-Cola's SG&A note), "Boeing Capital interest
    expense" no interest expense of the company."""
    from engine.answer.from_facts import _heads

    assert _heads("Other operating expenses") == ()
    assert _heads("Boeing Capital interest expense") == ()
    assert _heads("Total net sales") == ("revenue",)
    assert _heads("Less: Cost of sales") == ("cost of goods sold",)
    assert _heads("Capital expenditures, net of construction payable") == ("capital expenditures",)


@pytest.mark.parametrize(("question", "side", "worst"), [
    # a level asked of every year of a span: each year's value, the worst of them decides
    (f"Was {CO} profitable in every year from FY2022 to FY2023?", "Yes", 1000.0),
    (f"Was {CO}'s revenue above $8.5 billion in each year from FY2022 to FY2023?", "No", 8000.0),
    (f"Has {CO}'s interest expense been below 500 in every year from FY2022 to FY2023?", "Yes", 400.0),
])
def test_a_level_asked_of_every_year_is_judged_on_each(pipeline, question: str, side: str, worst: float) -> None:
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0, (question, run.answer)
    assert run.answer.text.startswith(f"{side}:") and "FY2022" in run.answer.text, run.answer.text
    assert run.answer.value == pytest.approx(worst), run.answer.text
