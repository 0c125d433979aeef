"""Numbers from statement facts: the metric catalogue, the sufficiency check and the answer computed without a
model, on the demo corpus (whose true values the generator wrote) through the real pipeline."""

from __future__ import annotations

import itertools
import re

from pathlib import Path

import pytest

from engine.errors import EngineError
from engine.records import FactsPayload
from engine.vocab.catalogue import Term, formula_terms, load_catalogue, python_formula


def truth(demo_truth: list[dict], ticker: str, metric: str, year: int) -> float:
    """A value as the ticker's 10-K for ``year`` or the next one prints it (the comparative column)."""
    for doc_year in (year, year + 1):
        for t in demo_truth:
            if (t["doc_name"] == f"{ticker}_{doc_year}_10K" and t["metric"] == metric
                    and t["fiscal_year_column"] == str(year)):
                return float(t["value"])
    raise KeyError((ticker, metric, year))


@pytest.fixture(scope="module")
def pipeline(ingested_demo, embedder):  # noqa: ANN001, ANN201
    from engine.pipeline import Models, build_pipeline

    library, settings, _ = ingested_demo
    return build_pipeline(settings, library, Models(embedder))  # no chat model: the facts path needs none


def ask(pipeline, question: str):  # noqa: ANN001, ANN201
    run = pipeline.run(question, store=False)
    facts = [t.payload for t in run.traces if isinstance(t.payload, FactsPayload)]
    return run, facts[0] if facts else None


def test_a_catalogue_formula_reads_its_terms() -> None:
    assert python_formula("365 * avg(inventory) / cost_of_revenue") == (
        "365 * ((inventory + inventory_1) / 2) / cost_of_revenue")
    assert python_formula("revenue / avg(total_assets)", 1) == "revenue_1 / ((total_assets_1 + total_assets_2) / 2)"
    assert set(formula_terms("cost_of_revenue / avg(inventory)")) == {
        Term("cost_of_revenue"), Term("inventory"), Term("inventory", 1)}
    catalogue = load_catalogue()
    # a metric written over another metric: its formulas written out, one per formula of the metric it names
    assert catalogue.metrics["gross margin"].source == ("{gross profit} / revenue * 100",)
    assert catalogue.metrics["gross margin"].formulas == (
        "(gross_profit) / revenue * 100", "(revenue - (cost_of_revenue)) / revenue * 100",
        "(revenue - (cost_of_products + cost_of_services)) / revenue * 100")


def test_a_catalogue_naming_an_unknown_concept_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "metrics.toml"
    bad.write_text('[items.x]\nconcepts = ["NoSuchConcept"]\nkind = "instant"\nstatement = "balance sheet"\n'
                   'words = "x"\n', encoding="utf-8")
    with pytest.raises(EngineError, match="NoSuchConcept"):
        load_catalogue(bad)


def test_a_turnovers_days_must_be_a_metric_in_days(tmp_path: Path) -> None:
    bad = tmp_path / "metrics.toml"
    bad.write_text('[items.x]\nconcepts = ["InventoryNet"]\nkind = "instant"\nstatement = "balance sheet"\n'
                   'words = "x"\n[metrics.turns]\nformulas = ["x / x"]\nunit = "ratio"\nwords = "t"\n'
                   'in_days = "turns"\n', encoding="utf-8")
    with pytest.raises(EngineError, match="no metric in days"):
        load_catalogue(bad)


def test_an_averaged_balance_is_computed_from_the_facts_without_a_model(pipeline, demo_truth) -> None:  # noqa: ANN001
    run, facts = ask(pipeline, "What is Harborview Therapeutics' FY2023 inventory turnover ratio? "
                               "Round your answer to two decimal places.")
    expected = truth(demo_truth, "HRBR", "Cost of revenue", 2023) / (
        (truth(demo_truth, "HRBR", "Inventories", 2023) + truth(demo_truth, "HRBR", "Inventories", 2022)) / 2)
    assert run.status == "answered" and run.llm_calls == 0
    assert run.answer.method == "facts" and run.answer.value == pytest.approx(expected)
    assert run.answer.text == f"{expected:.2f}"
    assert facts is not None and not facts.gaps
    assert {(i.variable, i.period) for i in facts.inputs} == {
        ("cost_of_revenue", "FY2023"), ("inventory", "as of 2023-12-31"), ("inventory_1", "as of 2022-12-31")}
    assert all(i.doc_name.startswith("HRBR_") and i.chunk_id is not None for i in facts.inputs)
    assert {c.doc_name for c in run.answer.citations} <= {i.doc_name for i in facts.inputs}


@pytest.mark.parametrize(("question", "expected"), [
    ("What is Harborview Therapeutics' year-over-year change in revenue from FY2022 to FY2023 "
     "(in units of percents and round to one decimal place)?",
     lambda t: (t("Total revenue", 2023) / t("Total revenue", 2022) - 1) * 100),
    ("What is Harborview Therapeutics' 2 year total revenue CAGR from FY2021 to FY2023 (in percent)?",
     lambda t: ((t("Total revenue", 2023) / t("Total revenue", 2021)) ** 0.5 - 1) * 100),
    ("What is the FY2021 - FY2023 3 year average of capex as a % of revenue for Harborview Therapeutics?",
     lambda t: sum(abs(t("Capital expenditures", y)) / t("Total revenue", y) for y in (2021, 2022, 2023)) / 3 * 100),
    ("What is Harborview Therapeutics' FY2022 free cash flow in USD billions?",
     lambda t: (t("Net cash provided by operating activities", 2022) - abs(t("Capital expenditures", 2022))) / 1000),
])
def test_growth_cagr_averages_and_scale(pipeline, demo_truth, question, expected) -> None:  # noqa: ANN001
    run, facts = ask(pipeline, question)
    want = expected(lambda metric, year: truth(demo_truth, "HRBR", metric, year))
    assert run.status == "answered" and run.llm_calls == 0, run.answer.text
    assert run.answer.value == pytest.approx(want)


def test_a_change_between_two_years_is_their_difference_with_both_values(pipeline, demo_truth) -> None:  # noqa: ANN001
    """"How much did X change between FY A and FY B": the difference, in percentage points for a rate and in the
    asked scale for an amount, followed by the two values it is taken between; no model call."""
    def t(metric: str, year: int) -> float:
        return truth(demo_truth, "HRBR", metric, year)

    margin = {y: t("Operating income", y) / t("Total revenue", y) * 100 for y in (2022, 2023)}
    run, facts = ask(pipeline, "How much did Harborview Therapeutics' operating margin change between FY2022 and "
                               "FY2023?")
    assert run.status == "answered" and run.llm_calls == 0 and facts is not None and facts.mode == "change"
    assert run.answer.value == pytest.approx(margin[2023] - margin[2022]) and run.answer.unit == "percentage points"
    assert run.answer.text == (f"{margin[2023] - margin[2022]:.2f} percentage points (from {margin[2022]:.2f}% in "
                               f"FY2022 to {margin[2023]:.2f}% in FY2023)")
    run, _ = ask(pipeline, "By how much did Harborview Therapeutics' total revenue increase from FY2022 to FY2023, "
                           "in USD billions?")
    assert run.answer.value == pytest.approx((t("Total revenue", 2023) - t("Total revenue", 2022)) / 1000)
    assert run.answer.unit == "USD billions" and "in FY2022 to" in run.answer.text


def test_change_words_inside_a_definition_do_not_ask_for_a_change(ingested_demo) -> None:  # noqa: ANN001
    from engine.answer.from_facts import plan_metric
    from engine.intent import parse_intent
    from engine.pipeline import issuer_refs
    from engine.vocab.catalogue import load_catalogue

    library, _, _ = ingested_demo
    q = ("What is Harborview Therapeutics' FY2023 inventory turnover? Inventory turnover is defined as cost of "
         "revenue divided by the average of inventories at the end of FY2022 and FY2023, whether they increased or not.")
    plan = plan_metric(parse_intent(q.split(", whether")[0] + ".", issuer_refs(library)), library, load_catalogue())
    assert plan is not None and plan.mode == "value"
    # an aside the reader has no words for is not skipped over: the reading names it, and no number is computed
    from engine.intent.reader import read_plan

    assert plan_metric(parse_intent(q, issuer_refs(library)), library, load_catalogue()) is None
    unread = read_plan(parse_intent(q, issuer_refs(library)), load_catalogue(), issuer_refs(library))
    assert unread.status == "unread" and "whether" in " ".join(unread.unread)


def test_a_missing_input_ends_not_answerable_and_names_it(pipeline) -> None:  # noqa: ANN001
    """Kingsley's FY2021 return on assets averages its total assets at the end of FY2020, which no loaded filing
    prints: no number, and the answer says which input is missing."""
    run, facts = ask(pipeline, "What is KNGS's FY2021 return on assets (ROA)? Answer as a percent.")
    assert run.status == "not_answerable" and run.llm_calls == 0
    assert facts is not None and facts.gaps == ("KNGS FY2020 year-end total assets",)
    assert "missing KNGS FY2020 year-end total assets" in run.answer.text


def quarter_truth(demo_truth: list[dict], doc_name: str, metric: str, column: str) -> float:
    return float(next(t["value"] for t in demo_truth if t["doc_name"] == doc_name and t["metric"] == metric
                      and t["column_label"] == column))


def test_a_quarter_is_read_from_its_own_10q_three_months_and_balance(pipeline, demo_truth) -> None:  # noqa: ANN001
    """A quarter asked: flows over the three months to the date its 10-Q's cover states, balances at that date,
    with no model call; an average over two year-ends is no quarter's metric (the model-written path answers)."""
    doc, months, at = "HRBR_2023Q2_10Q", "Three Months Ended June 30, 2023", "June 30, 2023"
    op = quarter_truth(demo_truth, doc, "Operating income", months)
    revenue = quarter_truth(demo_truth, doc, "Total revenue", months)
    run, facts = ask(pipeline, "What was Harborview Therapeutics' operating margin in Q2 FY2023?")
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts"
    assert run.answer.value == pytest.approx(op / revenue * 100)
    assert {i.period for i in facts.inputs} == {"3M to 2023-06-30"}
    assert "3 months to 2023-06-30" in facts.formula
    run, facts = ask(pipeline, "What were Harborview Therapeutics' total current assets at the end of Q2 FY2023, "
                               "in USD millions?")
    assert run.status == "answered" and run.answer.value == pytest.approx(
        quarter_truth(demo_truth, doc, "Total current assets", at))
    assert [i.period for i in facts.inputs] == ["as of 2023-06-30"]
    from dataclasses import replace

    from engine.answer.from_facts import plan_metric
    from engine.intent import parse_intent

    company = run.traces[0].payload.intent.issuers  # as the intent stage resolved it
    intent = replace(parse_intent("What is Harborview Therapeutics' inventory turnover ratio in Q2 FY2023?"),
                     issuers=company)
    assert plan_metric(intent, pipeline.library, load_catalogue()) is None  # averaged balances: not a quarter's
    margin = replace(parse_intent("What was Harborview Therapeutics' operating margin in Q2 FY2023?"),
                     issuers=company)
    assert plan_metric(margin, pipeline.library, load_catalogue()).quarter_end == "2023-06-30"
    assert plan_metric(replace(margin, quarters=("2021Q2",), fiscal_years=(2021,)), pipeline.library,
                       load_catalogue()) is None  # no 10-Q of that quarter loaded


@pytest.mark.parametrize("question", [
    "What was Harborview Therapeutics' total domestic revenue in FY2023?",
    "What was Harborview Therapeutics' revenue in Europe in FY2023?",
    "What was the operating income of Harborview Therapeutics' Diagnostics segment in FY2023?",
])
def test_a_segment_or_region_is_not_answered_with_the_consolidated_figure(pipeline, question) -> None:  # noqa: ANN001
    """The statement facts are the whole company's: a part of it ("domestic", a region, a segment) is not read from
    them (a generated question's "total domestic revenue" had taken consolidated revenue)."""
    run, facts = ask(pipeline, question)
    assert facts is None and run.answer.method != "facts"


def test_a_currency_named_as_us_dollars_is_not_a_region(pipeline, demo_truth) -> None:  # noqa: ANN001
    run, _ = ask(pipeline, "What was Harborview Therapeutics' total revenue in FY2023, in U.S. dollars millions?")
    assert run.answer.method == "facts" and run.answer.value == pytest.approx(truth(demo_truth, "HRBR", "Total revenue", 2023))


@pytest.mark.parametrize("question", [
    "What was Harborview Therapeutics' core operating income in FY2023?",
    "What was Harborview Therapeutics' adjusted operating income in FY2023?",
    "What was Harborview Therapeutics' non-GAAP operating income in FY2023?",
])
def test_a_company_defined_measure_is_not_read_as_the_gaap_line(pipeline, question) -> None:  # noqa: ANN001
    """"Core operating loss" is the company's own (non-GAAP) measure: a generated question on Boeing's had taken
    the GAAP loss from operations. The facts path leaves it to the passages."""
    run, facts = ask(pipeline, question)
    assert facts is None and run.answer.method != "facts"


def test_a_choice_among_listed_amounts_is_read_from_the_facts(pipeline, demo_truth) -> None:  # noqa: ANN001
    """"Which of these amounts is the largest / smallest": each listed amount from the facts (signed: an outflow
    is below an inflow), the winner named last with its value, no model call."""
    op = truth(demo_truth, "HRBR", "Net cash provided by operating activities", 2023)
    inv = truth(demo_truth, "HRBR", "Net cash used in investing activities", 2023)
    for question, largest in (
            ("Among operating and investing activities, which brought in the most cash for Harborview "
             "Therapeutics in FY2023?", True),
            ("Which was smaller for Harborview Therapeutics in FY2023: cash provided by operating activities or "
             "cash used in investing activities?", False)):
        run, facts = ask(pipeline, question)
        assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
        assert facts is not None and facts.mode == "choice" and not facts.gaps
        assert {i.variable for i in facts.inputs} == {"operating_cash_flow", "investing_cash_flow"}
        values = {i.variable: i.value for i in facts.inputs}
        assert values["operating_cash_flow"] / 1e6 == pytest.approx(op)
        assert abs(values["investing_cash_flow"]) / 1e6 == pytest.approx(abs(inv))
        winner = (max if largest else min)(values, key=lambda k: values[k])
        words = {"operating_cash_flow": "operating activities", "investing_cash_flow": "investing activities"}
        assert run.answer.value == pytest.approx(values[winner] / 1e6)
        conclusion = run.answer.text.rsplit(". The ", 1)[1]
        assert conclusion.startswith("largest" if largest else "smallest") and words[winner] in conclusion


@pytest.mark.parametrize(("question", "largest", "years"), [
    ("In which year between FY2021 and FY2023 was Harborview Therapeutics' total revenue the highest?", True,
     (2021, 2022, 2023)),
    ("Which year had the lower operating margin for Harborview Therapeutics, FY2022 or FY2023?", False, (2022, 2023)),
    ("Was Harborview Therapeutics' net income higher in FY2022 or in FY2023?", True, (2022, 2023)),
])
def test_a_choice_among_years_computes_the_metric_for_each(pipeline, demo_truth, question, largest,
                                                           years) -> None:  # noqa: ANN001
    """"Which year had the higher X": the metric computed from the facts for every year asked (each year of a span
    written "between A and B"), the year with the largest (smallest) value named last, no model call."""
    metric = ("Total revenue" if "revenue" in question and "margin" not in question else
              "Net income" if "net income" in question else None)
    values = {y: truth(demo_truth, "HRBR", metric, y) if metric else
              truth(demo_truth, "HRBR", "Operating income", y) / truth(demo_truth, "HRBR", "Total revenue", y) * 100
              for y in years}
    run, facts = ask(pipeline, question)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    assert facts is not None and facts.mode == "choice" and not facts.gaps
    winner = (max if largest else min)(values, key=lambda y: values[y])
    assert run.answer.value == pytest.approx(values[winner], rel=1e-6)
    conclusion = run.answer.text.rsplit(". The ", 1)[1]
    assert conclusion.startswith(f"{'largest' if largest else 'smallest'}: FY{winner}")
    assert all(f"FY{y}" in run.answer.text for y in years)


def _judged(t, metric: str, y: int) -> float:  # noqa: ANN001
    """The demo generator's value of a judged metric (formulas written here, not read from the catalogue)."""
    return {"gross margin": lambda: t("Gross profit", y) / t("Total revenue", y) * 100,
            "operating margin": lambda: t("Operating income", y) / t("Total revenue", y) * 100,
            "net income": lambda: t("Net income", y),
            "quick ratio": lambda: (t("Cash and cash equivalents", y) + t("Accounts receivable", y))
            / t("Total current liabilities", y),
            "current ratio": lambda: t("Total current assets", y) / t("Total current liabilities", y),
            "working capital": lambda: t("Total current assets", y) - t("Total current liabilities", y),
            "net margin": lambda: t("Net income", y) / t("Total revenue", y) * 100}[metric]()


@pytest.mark.parametrize(("question", "metric", "test"), [
    ("Does Harborview Therapeutics have an improving gross margin profile as of FY2023?", "gross margin", "up"),
    ("Did Harborview Therapeutics' operating margin decline in FY2023?", "operating margin", "down"),
    ("Has Harborview Therapeutics grown its net income between FY2022 and FY2023?", "net income", "up"),
    ("Is Harborview Therapeutics' net income declining in FY2023?", "net income", "down"),
    ("Did Harborview Therapeutics' net margin increase in FY2023 compared to FY2022?", "net margin", "up"),
    ("Does Harborview Therapeutics have a reasonably healthy liquidity profile based on its quick ratio for FY2023?",
     "quick ratio", (">=", 1.0)),
    ("Is Harborview Therapeutics' current ratio above 3.5 in FY2023?", "current ratio", (">=", 3.5)),
    ("Does Harborview Therapeutics have positive working capital based on FY2023 data?", "working capital",
     (">", 0.0)),
])
def test_a_judgement_is_computed_from_the_facts_with_its_values_and_its_test(pipeline, demo_truth, question, metric,
                                                                            test) -> None:  # noqa: ANN001
    """A yes/no question judging a metric ("improving", "declining", "healthy", "above 3.5") is answered from the
    facts without a model call: the side follows from the values the generator printed, and the sentence gives
    the values and the test (improving: higher than the year before; healthy: the bar judgements.toml states)."""
    def t(row: str, y: int) -> float:
        return truth(demo_truth, "HRBR", row, y)

    new, old = _judged(t, metric, 2023), _judged(t, metric, 2022)
    relation = {">=": "at or above", ">": "above"}
    yes = new > old if test == "up" else new < old if test == "down" else (
        new >= test[1] if test[0] == ">=" else new > test[1])
    run, facts = ask(pipeline, question)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    text = run.answer.text
    assert text.startswith("Yes: " if yes else "No: ") and "the test: '" in text, text
    if isinstance(test, str):
        assert run.answer.value == pytest.approx(new - old, rel=1e-6, abs=1e-6)
        assert "FY2022" in text and "FY2023" in text and ("higher" if test == "up" else "lower") in text
    else:
        assert run.answer.value == pytest.approx(new, rel=1e-6)  # an amount in USD millions, as the truth
        assert f"{relation[test[0]]} {test[1]:g}" in text


@pytest.mark.parametrize(("question", "quality"), [
    ("Is Harborview Therapeutics a capital-intensive business based on FY2023 data?", "capital"),
    ("Would you call Harborview Therapeutics an asset-heavy company in FY2023?", "capital"),
    ("Are Harborview Therapeutics' FY2023 financials those of a fast-growing company?", "growth"),
    ("Is Harborview Therapeutics a high-growth business, with growth above 5% in FY2023?", "growth>5"),
    ("Was Harborview Therapeutics profitable in FY2023?", "profit"),
    ("Was Harborview Therapeutics loss-making in FY2023?", "loss"),
])
def test_a_quality_names_its_own_metric_and_bar(pipeline, demo_truth, question, quality) -> None:  # noqa: ANN001
    """"Capital-intensive", "high growth", "profitable": a quality of the company that names no metric is measured
    by the metric and bar judgements.toml states for it (a bar the question writes wins), computed from the
    facts, the side, the value and the test said."""
    def t(row: str, y: int) -> float:
        return truth(demo_truth, "HRBR", row, y)

    value, test, bar = {
        "capital": (abs(t("Capital expenditures", 2023)) / t("Total revenue", 2023) * 100, ">=", 10.0),
        "growth": ((t("Total revenue", 2023) / t("Total revenue", 2022) - 1) * 100, ">=", 15.0),
        "growth>5": ((t("Total revenue", 2023) / t("Total revenue", 2022) - 1) * 100, ">=", 5.0),
        "profit": (t("Net income", 2023), ">", 0.0),
        "loss": (t("Net income", 2023), "<", 0.0),
    }[quality]
    yes = value >= bar if test == ">=" else value > bar if test == ">" else value < bar
    run, _ = ask(pipeline, question)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    assert run.answer.value == pytest.approx(value, rel=1e-6)
    text = run.answer.text
    assert text.startswith("Yes: " if yes else "No: ") and f"{bar:g}" in text.split("the test:")[1], text


@pytest.mark.parametrize(("question", "band", "years"), [
    (("Are Harborview Therapeutics' gross margins historically consistent (not fluctuating more than roughly 2% "
      "each year)?"), 2.0, (2021, 2022, 2023)),
    ("Has Harborview Therapeutics kept a stable gross margin between FY2021 and FY2023, within 0.5%?", 0.5,
     (2021, 2022, 2023)),
    ("Is Harborview Therapeutics' revenue steady as of FY2023?", 10.0, (2021, 2022, 2023)),
])
def test_stability_is_every_yearly_move_within_a_band(pipeline, demo_truth, question, band, years) -> None:  # noqa: ANN001
    """"Consistent", "stable", "steady": the metric in each year (none named: the latest 10-K's and the two before,
    said), every yearly move within the band the question writes or judgements.toml states (points of a rate,
    percent of an amount)."""
    def t(row: str, y: int) -> float:
        return truth(demo_truth, "HRBR", row, y)

    rate = "margin" in question
    each = [t("Gross profit", y) / t("Total revenue", y) * 100 if rate else t("Total revenue", y) for y in years]
    moves = [abs(b - a) if rate else abs(b / a - 1) * 100 for a, b in itertools.pairwise(each)]
    run, _ = ask(pipeline, question)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    assert run.answer.value == pytest.approx(max(moves), rel=1e-6)
    text = run.answer.text
    assert text.startswith("Yes: " if max(moves) <= band else "No: "), text
    assert all(f"FY{y}" in text for y in years) and f"within {band:g}" in text, text
    if "FY20" not in question:
        assert "no period named: read as FY2023" in run.answer.reason


@pytest.mark.parametrize("question", [
    "Did Harborview Therapeutics' operating margin increase or decrease in FY2023?",
    "Did Harborview Therapeutics' long-term debt rise or fall between FY2022 and FY2023?",
])
def test_increase_or_decrease_is_answered_with_the_direction(pipeline, demo_truth, question) -> None:  # noqa: ANN001
    def t(row: str, y: int) -> float:
        return truth(demo_truth, "HRBR", row, y)

    if "margin" in question:
        new, old = (t("Operating income", y) / t("Total revenue", y) * 100 for y in (2023, 2022))
    else:
        new, old = t("Long-term debt", 2023), t("Long-term debt", 2022)
    run, _ = ask(pipeline, question)
    assert run.status == "answered" and run.llm_calls == 0, run.answer.text
    assert run.answer.text.startswith("Increased: " if new > old else "Decreased: "), run.answer.text
    assert run.answer.value == pytest.approx(new - old, rel=1e-6)


def test_total_debt_is_its_long_term_current_and_short_term_parts(pipeline, demo_truth) -> None:  # noqa: ANN001
    """"Has it increased its debt": total debt (long-term debt, its current portion and short-term borrowings; a
    part the balance sheet does not print is none), not one row."""
    def t(row: str, y: int) -> float:
        return truth(demo_truth, "HRBR", row, y)

    run, _ = ask(pipeline, "Has Harborview Therapeutics increased its debt on balance sheet between FY2022 and FY2023?")
    new, old = t("Long-term debt", 2023), t("Long-term debt", 2022)  # the demo prints no other debt row
    assert run.status == "answered" and run.answer.method == "facts", run.answer.text
    assert run.answer.text.startswith("Yes: " if new > old else "No: ") and "debt" in run.answer.text
    assert run.answer.value == pytest.approx(new - old, rel=1e-6)


def test_a_level_judged_without_a_stated_bar_is_not_judged_from_the_facts(pipeline) -> None:  # noqa: ANN001
    """"A healthy gross margin": no bar is stated for gross margin, so the engine does not decide it (the words are
    left unread and the question goes to the written answer)."""
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan

    plan = read_plan(parse_intent("Does Harborview Therapeutics have a healthy gross margin in FY2023?"),
                     load_catalogue())
    assert plan.status == "unread" and plan.unread == ("healthy",) and "states no bar" in plan.note


@pytest.mark.parametrize(("question", "expected"), [
    ("Among operations, investing, and financing activities, which brought in the most (or lost the least) cash "
     "for Acme in FY2023?", (("cash from operations", "cash from investing", "cash from financing"), True)),
    ("Which is lower for Acme in FY2022, capital expenditures or dividends?",
     (("capital expenditures", "dividends"), False)),
    # a loss: the one furthest below zero
    ("Among operations, investing, and financing activities, which lost the most cash flow for Acme in FY2023?",
     (("cash from operations", "cash from investing", "cash from financing"), False)),
    # not a choice among listed amounts: one amount related to another, a choice of years or segments, one amount
    ("In which fiscal year was revenue higher than cost of goods sold for Acme?", None),
    ("Which year had the higher revenue and net income for Acme?", None),
    ("Which segment had the highest revenue and operating income for Acme in FY2023?", None),
    ("Which of Acme's quarters had the highest revenue in FY2023?", None),
    ("Did Acme's revenue or its net income grow more in FY2023?", None),
])
def test_which_questions_that_choose_among_listed_amounts(question, expected) -> None:  # noqa: ANN001
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan

    plan = read_plan(parse_intent(question), load_catalogue())
    got = (tuple(o.name for o in plan.tree.args), plan.choice == "largest") if plan.choice else None
    assert got == expected


def _ingested(tmp_path: Path, embedder):
    """The filings written under ``tmp_path / "f"`` ingested into a library at ``tmp_path / "lib"``, indexed."""
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.settings import Settings
    from engine.store import Library

    settings = Settings(home=tmp_path / "lib", ingest={"workers": 1})
    library = Library(settings.home)
    ingest(library, [tmp_path / "f"], settings)
    sync_indexes(library, settings, embedder)
    return library, settings


def test_a_metric_the_company_does_not_report_is_said_so_and_an_undecided_judgement_gets_no_verdict(
        tmp_path, embedder) -> None:  # noqa: ANN001
    """A bank's income statement prints no cost of revenue and no gross profit: "does it have an improving gross
    margin?" is answered that gross margin is not a meaningful measure for it, with the statement's page and rows,
    without a model call; so is "what drove its gross margin change". A company whose filing prints only the year
    asked has no change the facts can compute: no number, no side; with a chat model, the written answer quotes
    the filing and a sentence that says yes or no is refused."""
    from engine.pipeline import Models, build_pipeline
    from tests.engine.test_identity import add_table_page, write_cover_pdf

    bank = [("Consolidated Statements of Income", "", ""), ("(in millions)", "2023", "2022"),
            ("Net interest income", "5,210", "4,870"), ("Card fees", "1,130", "1,090"),
            ("Noninterest income", "900", "900"), ("Total net revenue", "7,240", "6,860"),
            ("Provision for credit losses", "410", "350"), ("Compensation and benefits", "2,320", "2,200"),
            ("Noninterest expense", "1,800", "1,780"), ("Income before income taxes", "2,710", "2,530"),
            ("Net income", "2,080", "1,950")]
    aero = [("Consolidated Statements of Operations", "", ""), ("(in millions)", "2023", ""),  # one year printed
            ("Sales of products", "8,100", ""), ("Sales of services", "1,900", ""), ("Total revenues", "10,000", ""),
            ("Cost of products", "(7,200)", ""), ("Cost of services", "(1,500)", ""),
            ("Research and development expense", "(300)", ""), ("Operating income", "1,000", ""),
            ("Income before income taxes", "950", ""), ("Net income", "760", "")]
    for doc, name, rows in (("ACMEBANK", "ACME BANK CORP", bank), ("ACMEAERO", "ACME AERO CORP", aero)):
        add_table_page(write_cover_pdf(tmp_path / "f" / f"{doc}_2023_10K.pdf", name=name, form="10-K",
                                       period_text="December 31, 2023"), rows)
    library, settings = _ingested(tmp_path, embedder)
    pipeline = build_pipeline(settings, library, Models(embedder))
    for question in ("Does Acme Bank have an improving gross margin profile as of FY2023?",
                     "What drove the gross margin change of Acme Bank in FY2023?"):
        run, _ = ask(pipeline, question)
        assert run.status == "answered" and run.answer.value is None and run.llm_calls == 0, run.answer
        text = run.answer.text
        assert text.startswith("Gross margin is not a meaningful measure for ACME BANK CORP as it reports"), text
        assert "prints no such line" in text and "Net interest income" in text and "p. 3" in text, text
        assert run.answer.citations and run.answer.citations[0].page_index == 2
    run, _ = ask(pipeline, "Has Acme Bank's net income grown between FY2022 and FY2023?")  # printed: judged
    assert run.answer.text.startswith("Yes: net income rose by 130 USD millions"), run.answer.text
    run, _ = ask(pipeline, "Does Acme Aero have an improving gross margin profile as of FY2023?")
    assert run.status == "not_answerable" and run.answer.value is None and run.llm_calls == 0, run.answer
    assert "missing" in run.answer.text and "meaningful" not in run.answer.text

    from tests.engine.scripted import ScriptedChat

    def script(purpose, messages, n):  # noqa: ANN001
        assert purpose == "quotes"  # the written answer: quoted evidence and one synthesis from it
        first = re.search(r"\[1\][^\n]*\n<<<\n(.*?)\n>>>", messages[-1]["content"], re.S).group(1)
        return {"sentences": [{"text": "Yes, the gross margin improved.", "quotes": [1]},
                              {"text": first[:200].rsplit(" ", 1)[0], "quotes": [1]}], "insufficient": False}

    with_model = build_pipeline(settings, library, Models(embedder, ScriptedChat(script)))
    run, _ = ask(with_model, "Does Acme Aero have an improving gross margin profile as of FY2023?")
    assert run.status == "answered" and run.answer.method == "quotes" and run.answer.quotes, run.answer
    assert not run.answer.text.lower().startswith(("yes", "no")) and run.answer.text.endswith("[1]"), run.answer.text
    assert run.answer.reason.startswith("the facts could not decide it: missing ")
    assert "a yes or no that the statement facts could not compute" in run.answer.reason


@pytest.mark.parametrize("asked", ["in its most recent 10-Q", "in the latest quarter"])
def test_the_latest_quarter_is_the_latest_10q_loaded_and_the_answer_says_which(pipeline, demo_truth, asked) -> None:  # noqa: ANN001
    quarters = sorted({f["period"] for f in demo_truth if f["ticker"] == "HRBR" and f["form"] == "10-Q"})
    latest = quarters[-1]

    def value(metric: str) -> float:
        return next(f["value"] for f in demo_truth if f["doc_name"] == f"HRBR_{latest}_10Q" and f["metric"] == metric
                    and f["fiscal_year_column"] == latest[:4] and f["column_label"].startswith("Three Months"))

    run, facts = ask(pipeline, f"What was Harborview Therapeutics' gross margin {asked}?")
    assert facts is not None and run.status == "answered" and run.llm_calls == 0, run.answer
    assert run.answer.value == pytest.approx(100 * value("Gross profit") / value("Total revenue"), rel=1e-6)
    assert f"read as {latest}; HRBR_{latest}_10Q is the latest 10-Q loaded" in run.answer.reason


@pytest.mark.parametrize(("question", "quarter", "what"), [
    ("Did Harborview Therapeutics' gross margin increase in Q3 of FY2023 compared to Q3 of FY2022?", "2023Q3", "up"),
    ("By what percent did Harborview Therapeutics' revenue grow in Q3 2023 year over year?", "2023Q3", "growth"),
    ("How much did Harborview Therapeutics' operating income change in Q2 2023 versus Q2 2022?", "2023Q2",
     "change"),
])
def test_a_quarter_against_the_same_quarter_a_year_before(pipeline, demo_truth, question, quarter, what) -> None:  # noqa: ANN001
    """A quarter compared with the same quarter a year before: both read from the quarter's own 10-Q (its
    comparative column), the three months of each, said as such."""
    def q(metric: str, year: str) -> float:
        return next(float(f["value"]) for f in demo_truth if f["doc_name"] == f"HRBR_{quarter}_10Q"
                    and f["metric"] == metric and f["fiscal_year_column"] == year
                    and f["column_label"].startswith("Three Months"))

    this, last = quarter[:4], str(int(quarter[:4]) - 1)
    run, _ = ask(pipeline, question)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    if what == "up":
        new, old = (100 * q("Gross profit", y) / q("Total revenue", y) for y in (this, last))
        assert run.answer.value == pytest.approx(new - old, rel=1e-6)
        assert run.answer.text.startswith("Yes: " if new > old else "No: ")
        assert f"the same 3 months of FY{last}" in run.answer.text, run.answer.text
    elif what == "growth":
        assert run.answer.value == pytest.approx((q("Total revenue", this) / q("Total revenue", last) - 1) * 100,
                                                 rel=1e-6)
    else:
        assert run.answer.value == pytest.approx(q("Operating income", this) - q("Operating income", last), rel=1e-6)


def _printing(n: int, doc: str, page: int, title: str, statement: str, value: float, year: int = 2020):  # noqa: ANN202
    from engine.records import ColumnPeriod, StatementFact, StoredFact

    return StoredFact(n, {"X_2020_10K": 1, "X_2021_10K": 2}[doc], doc, None, StatementFact(
        page, statement, title, "Inventories", "Current assets", False, 0, ColumnPeriod(str(year), year, None, 0),
        f"{value:,.0f}", value, "millions", "USD", 0, 5, concept="InventoryNet"))


def test_the_primary_statement_is_preferred_to_a_summary_table_and_the_input_says_why() -> None:
    """The same inventory printed by an MD&A summary table that the reader took for a balance sheet, by the balance
    sheet itself, and by the next year's balance sheet: the year's own balance sheet is taken, and the input says
    so and where else the figure is printed; a summary table is taken only when no statement prints it, and says
    that too."""
    from engine.answer.from_facts import pick

    item = load_catalogue().items["inventory"]
    years = {1: 2020, 2: 2021}
    summary = _printing(1, "X_2020_10K", 42, "Balance sheet and working capital measures are provided below",
                        "balance sheet", 2438)
    sheet = _printing(2, "X_2020_10K", 71, "Consolidated Balance Sheets  X Incorporated and Subsidiary Companies",
                      "balance sheet", 2438)
    later = _printing(3, "X_2021_10K", 66, "CONSOLIDATED BALANCE SHEETS (In millions)", "balance sheet", 2438)
    fact, ambiguous, why = pick([summary, later, sheet], item, 2020, years)
    assert fact is sheet and not ambiguous
    assert why.startswith("the balance sheet itself") and "p. 43" in why and "p. 67" in why
    # the year's own report prints it only in the summary table: the next report's balance sheet is taken
    fact, _, why = pick([summary, later], item, 2020, years)
    assert fact is later and "comparative column" in why and "only in a summary table" in why
    # no statement prints it at all: the summary table, said to be one
    fact, _, why = pick([summary], item, 2020, years)
    assert fact is summary and why == ""  # the only printing: nothing to choose between
    note = _printing(4, "X_2020_10K", 90, "NOTE 7. Supplemental Balance Sheet Information", "balance sheet", 2438)
    fact, _, why = pick([note, summary], item, 2020, years)
    assert fact in (note, summary) and "no primary statement prints it" in why


def test_the_annual_report_the_question_names_is_the_one_read() -> None:
    """"In X's FY2021 10-K, what were inventories at the end of FY2020?": the FY2021 report's comparative column is
    read (as it prints the year: a restated figure is that report's), said so; unnamed, the year's own report; the
    reader takes the named report's year from the wordings analysts write."""
    from engine.answer.from_facts import pick
    from engine.intent.periods import asked_periods

    item = load_catalogue().items["inventory"]
    years = {1: 2020, 2: 2021}
    own = _printing(1, "X_2020_10K", 71, "Consolidated Balance Sheets", "balance sheet", 2438)
    restated = _printing(2, "X_2021_10K", 66, "CONSOLIDATED BALANCE SHEETS (In millions)", "balance sheet", 2450)
    assert pick([own, restated], item, 2020, years)[0] is own
    fact, ambiguous, why = pick([own, restated], item, 2020, years, 2021)
    assert fact is restated and not ambiguous and "the FY2021 report the question names" in why, why
    for asked in ("In X's 10-K for 2021, what were inventories at the end of FY2020?",
                  "According to the FY2021 10-K, what were X's inventories in fiscal 2020?",
                  "What did X's 2021 annual report print as inventories for 2020?"):
        periods = asked_periods(asked)
        assert (periods.annual, periods.report_year) == ((2020,), 2021), (asked, periods)
    assert asked_periods("What were X's inventories at the end of FY2020?").report_year == 0


def test_the_consolidated_statement_is_taken_over_the_parent_companys_own() -> None:
    """A bank holding company prints its parent company's condensed statements too (Schedule I): the same line,
    another value. The consolidated statement's is the company's; the parent's is only mentioned."""
    from engine.answer.from_facts import pick

    item = load_catalogue().items["inventory"]
    sheet = _printing(1, "X_2020_10K", 71, "CONSOLIDATED BALANCE SHEETS", "balance sheet", 2438)
    for title in ("PARENT COMPANY – CONDENSED BALANCE SHEETS", "Condensed Financial Information of Registrant",
                  "Condensed Balance Sheets (Parent Company Only)"):
        parent = _printing(2, "X_2020_10K", 150, title, "balance sheet", 12)
        fact, ambiguous, why = pick([parent, sheet], item, 2020, {1: 2020})
        assert fact is sheet and not ambiguous, title
        assert "other values printed for it: 12 on" in why
        fact, _, why = pick([parent], item, 2020, {1: 2020})
        assert fact is parent  # the only printing


def test_a_subsidiarys_statement_in_the_mdna_gives_way_to_the_consolidated_one() -> None:
    """A manufacturer's MD&A prints its finance subsidiary's "Financial Position" (total assets 1,954) on a page
    before the consolidated statement (137,100): both read as balance sheets of the year's own report; the
    consolidated one is the company's."""
    from engine.answer.from_facts import pick

    item = load_catalogue().items["inventory"]
    sub = _printing(1, "X_2020_10K", 41, "Financial Position", "balance sheet", 1954)
    sheet = _printing(2, "X_2020_10K", 56, "Consolidated Statements of Financial Position", "balance sheet", 137100)
    fact, ambiguous, _ = pick([sub, sheet], item, 2020, {1: 2020})
    assert fact is sheet and not ambiguous
    # neither titled consolidated: two values of one rank stay ambiguous (no guess)
    other = _printing(3, "X_2020_10K", 57, "Statements of Financial Position", "balance sheet", 137100)
    fact, ambiguous, _ = pick([sub, other], item, 2020, {1: 2020})
    assert fact is None and len(ambiguous) == 2


def test_the_net_income_attributable_to_the_company_is_its_net_income() -> None:
    """An income statement prints "Net income (loss)" 1,208 (with the noncontrolling interests' share), then "Net
    income (loss) attributable to <the company>" 1,254: both map to net income; the company's own is taken and the
    input says why. A row attributable to noncontrolling interests is never it."""
    from engine.answer.from_facts import pick
    from engine.records import ColumnPeriod, StatementFact, StoredFact

    def printing(n: int, label: str, value: float) -> StoredFact:
        return StoredFact(n, 1, "X_2021_10K", None, StatementFact(
            64, "income statement", "CONSOLIDATED STATEMENTS OF OPERATIONS", label, "", False, 0,
            ColumnPeriod("2021", 2021, None, 12), f"{value:,.0f}", value, "millions", "USD", 0, 5,
            concept="NetIncomeLoss"))

    item = load_catalogue().items["net_income"]
    total, own = printing(1, "Net income (loss)", 1208), printing(2, "Net income (loss) attributable to Acme Corp", 1254)
    fact, ambiguous, why = pick([total, own], item, 2021, {1: 2021})
    assert fact is own and not ambiguous and "attributable to the company" in why, why
    minority = printing(3, "Net income attributable to noncontrolling interests", -46)
    fact, ambiguous, _ = pick([total, minority], item, 2021, {1: 2021})
    assert fact is None and len(ambiguous) == 2
    # the equity the company names as its own, beside the total with noncontrolling interests
    equity = load_catalogue().items["equity"]
    whole, named = printing(4, "Total shareholders’ equity", 71315), printing(5, "Total Acme shareholders’ equity", 71015)
    assert pick([whole, named], equity, 2021, {1: 2021})[0] is named
    # a receivable printed gross, then net of its allowance: the net line
    receivables = load_catalogue().items["receivables"]
    gross, net = printing(6, "Accounts receivable", 25332), printing(7, "Accounts receivable, net", 24506)
    fact, _, why = pick([gross, net], receivables, 2021, {1: 2021})
    assert fact is net and "net of its allowance" in why


def test_a_row_that_prints_the_expense_in_parentheses_is_read_with_its_sign_turned() -> None:
    """Boeing prints "Income tax (expense)/benefit  (31)", Intel "(Provision for) benefit from taxes": an expense in
    parentheses. The provision for income taxes is 31, the same figure the tax note prints as "Provision for income
    taxes  31" (one value, not two), and a benefit printed positive is a negative provision."""
    from engine.answer.from_facts import amount, pick
    from engine.records import ColumnPeriod, StatementFact, StoredFact
    from engine.vocab.concepts import concept_for

    def printing(n: int, label: str, statement: str, value: float) -> StoredFact:
        return StoredFact(n, 1, "X_2022_10K", None, StatementFact(
            50 + n, statement, "CONSOLIDATED STATEMENTS OF OPERATIONS", label, "", False, 0,
            ColumnPeriod("2022", 2022, None, 0), f"({-value:,.0f})" if value < 0 else f"{value:,.0f}", value,
            "millions", "USD", 0, 5, concept=concept_for(label, "", statement)))

    item = load_catalogue().items["income_tax"]
    boeing = printing(1, "Income tax (expense)/benefit", "income statement", -31)
    note = printing(2, "Provision for income taxes", "table", 31)
    assert boeing.fact.concept == note.fact.concept == "IncomeTaxExpenseBenefit"
    fact, ambiguous, why = pick([note, boeing], item, 2022, {1: 2022})
    assert fact is boeing and not ambiguous and "other values" not in why
    assert amount(boeing) == amount(note) == 31e6
    intel = printing(3, "(Provision for) benefit from taxes", "income statement", 362)  # a benefit
    assert amount(intel) == -362e6
    # printed the concept's own way round: as printed
    assert amount(printing(4, "Provision for (benefit from) income taxes", "income statement", -12)) == -12e6


def _release_pdf(path: Path, company: str, caption: str, rows: list[tuple[str, str, str]]) -> None:
    """An earnings release's statement of earnings: the quarter named by a caption, no period end printed."""
    import pymupdf

    from tests.engine.pdfs import statement_page

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), f"{company} Reports Second-Quarter 2023 Results", fontsize=11)
    statement_page(doc, (f"{company} and Subsidiaries", "Condensed Consolidated Statement of Earnings",
                         "(Unaudited; in Millions)"), ("2023", "2022"), rows, (330, 450), caption)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)


def test_a_quarter_with_no_10q_loaded_is_read_from_its_earnings_release(tmp_path: Path, embedder) -> None:
    """A quarter asked of a company whose 10-Q of it is not loaded: its earnings release's statements print the
    quarter (a caption, no period end) beside the same quarter a year before; both are read from the release, and
    the answer says so. A quarter with neither a 10-Q nor a release is not computed."""
    from engine.answer.from_facts import plan_metric
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from engine.store import Library

    folder = tmp_path / "filings"
    _release_pdf(folder / "QUILLON_2023Q2_EARNINGS.pdf", "Quillon Brands Inc.", "SECOND QUARTER",
                 [("Sales to customers", "25,530", "24,020"), ("Cost of products sold", "8,212", "7,919"),
                  ("Gross profit", "17,318", "16,101"), ("Net earnings", "5,144", "4,814")])
    home = tmp_path / "lib"
    settings = Settings(home=home)
    with Library(home) as library:
        assert [e.status for e in ingest(library, [folder], settings).events] == ["added"]
        sync_indexes(library, settings, embedder)
        pipeline = build_pipeline(settings, library, Models(embedder))
        run, facts = ask(pipeline, "Did Quillon's net earnings as a percent of sales increase in Q2 of FY2023 "
                                   "compared to Q2 of FY2022?")
        assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
        new, old = 5144 / 25530 * 100, 4814 / 24020 * 100
        assert run.answer.value == pytest.approx(new - old, rel=1e-6)
        assert run.answer.text.startswith("Yes: "), run.answer.text
        assert "Q2 FY2023" in run.answer.text and "the same 3 months of FY2022" in run.answer.text
        assert {i.doc_name for i in facts.inputs} == {"QUILLON_2023Q2_EARNINGS"}
        assert "earnings release" in facts.formula
        run, _ = ask(pipeline, "What was Quillon's gross profit in Q2 2023, in USD millions?")
        assert run.answer.method == "facts" and run.answer.value == pytest.approx(17318), run.answer.text
        plan = plan_metric(run.traces[0].payload.intent, library, load_catalogue())
        assert plan is not None and plan.release_ids and plan.quarter_end is None
        run, _ = ask(pipeline, "What was Quillon's gross profit in Q3 2023, in USD millions?")
        assert run.answer.method != "facts" or run.answer.value is None  # no filing of that quarter


@pytest.mark.parametrize("question", [
    "What was Harborview Therapeutics' gross margin in FY2023, and what did management say drove it?",
    "How much was Harborview Therapeutics' gross margin for fiscal 2023 and why did it change?",
])
def test_a_number_and_a_question_in_words_about_it_are_answered_each_in_its_own_way(ingested_demo, embedder,
                                                                                     demo_truth, question) -> None:
    """A compound question is not refused whole for its second half: the number's clause is computed from the
    statement facts (its inputs kept), the rest answered from quoted sentences; without a chat model the number
    still stands and the answer says what was not answered."""
    from engine.pipeline import Models, build_pipeline
    from tests.engine.scripted import ScriptedChat

    library, settings, _ = ingested_demo
    margin = truth(demo_truth, "HRBR", "Gross profit", 2023) / truth(demo_truth, "HRBR", "Total revenue", 2023) * 100
    chat = ScriptedChat(lambda purpose, messages, n: {
        "sentences": [{"text": "Management names the drivers in the quoted sentences.", "quotes": [1]}],
        "insufficient": False})
    run = build_pipeline(settings, library, Models(embedder, chat)).run(question, store=False)
    a = run.answer
    assert a.status == "answered" and a.method == "facts+quotes", (a.text, a.reason)
    assert a.value == pytest.approx(margin) and a.inputs and a.quotes
    number, words = a.text.split("\n\n", 1)
    assert "gross margin" in number.lower() and "[1]" in words
    assert [p for p, _ in chat.calls] and all(p != "plan" for p, _ in chat.calls)  # the model read no formula
    alone = build_pipeline(settings, library, Models(embedder)).run(question, store=False).answer
    assert alone.status == "answered" and alone.value == pytest.approx(margin)
    assert "is not answered" in alone.text and "chat model" in alone.text


def test_the_written_half_does_not_state_the_number_again_with_another_figure(ingested_demo, embedder,
                                                                               demo_truth) -> None:
    """The number of a compound question is computed from the facts; a synthesis sentence that names the same metric
    with another figure (a quote's figure of another period or scope) is refused and said so, while the sentences
    about the rest stand, and so does the computed figure restated or a move of the metric."""
    from engine.pipeline import Models, build_pipeline
    from tests.engine.scripted import ScriptedChat

    library, settings, _ = ingested_demo
    margin = truth(demo_truth, "HRBR", "Gross profit", 2023) / truth(demo_truth, "HRBR", "Total revenue", 2023) * 100
    wrong = f"Harborview's gross margin was {margin + 7.3:.1f}% for the year."
    chat = ScriptedChat(lambda purpose, messages, n: {
        "sentences": [{"text": wrong, "quotes": [1]},
                      {"text": "Growth was driven primarily by increased patient starts.", "quotes": [1]}],
        "insufficient": False})
    question = "What was Harborview Therapeutics' gross margin in FY2023, and what did management say drove it?"
    a = build_pipeline(settings, library, Models(embedder, chat)).run(question, store=False).answer
    assert a.status == "answered" and a.value == pytest.approx(margin), (a.text, a.reason)
    words = a.text.split("\n\n", 1)[1]
    assert words.startswith("Growth was driven primarily by increased patient starts. [1]"), (a.text, a.reason)
    assert f"{margin + 7.3:.1f}%" not in words, a.text
    assert f"it states {margin + 7.3:.1f}% for gross margin" in a.reason and f"{margin:.2f}%" in a.reason, a.reason


def test_a_second_amount_is_not_a_second_question() -> None:
    from engine.intent.shape import compound_parts

    assert compound_parts("What was Acme's gross margin in FY2023, and what did management say drove it?") == (
        "What was Acme's gross margin in FY2023?", "what did management say drove it?")
    assert compound_parts("What was the effective tax rate of Acme in Q3 2023 and how does it compare to the "
                          "previous quarters?") == ("What was the effective tax rate of Acme in Q3 2023?",
                                                    "how does it compare to the previous quarters?")
    for one in ("What is Acme's FY2022 revenue, and net income?",
                ("What was Acme's revenue in FY2022 and how much did it grow?"),
                "What drove Acme's gross margin change in FY2022?", "Has Acme increased its debt?"):
        assert compound_parts(one) is None, one


def _hrbr_quarters(demo_truth: list[dict]) -> list[str]:
    return sorted({f["period"] for f in demo_truth if f["ticker"] == "HRBR" and f["form"] == "10-Q"})


@pytest.mark.parametrize("asked", [
    "What was Harborview Therapeutics' gross margin in each of the last {n} quarters?",
    "How has Harborview Therapeutics' gross margin moved over the past {n} quarters?",
    "Give me Harborview Therapeutics' gross margin for the {n} most recent 10-Qs.",
])
def test_a_run_of_quarters_is_each_quarter_computed_side_by_side(pipeline, demo_truth, asked) -> None:  # noqa: ANN001
    """"The last N quarters" names no quarter: they are the company's latest N loaded 10-Qs, each computed from its
    own three months, listed oldest first with its page, and the move from the first to the last; no model call."""
    quarters = _hrbr_quarters(demo_truth)[-3:]
    words = {3: "three"}
    run, _ = ask(pipeline, asked.format(n=words[len(quarters)]))
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    assert f"read as {', '.join(quarters)}" in run.answer.reason
    margins = []
    for quarter in quarters:
        def q(metric: str, quarter: str = quarter) -> float:
            return next(float(f["value"]) for f in demo_truth if f["doc_name"] == f"HRBR_{quarter}_10Q"
                        and f["metric"] == metric and f["fiscal_year_column"] == quarter[:4]
                        and f["column_label"].startswith("Three Months"))
        margins.append(100 * q("Gross profit") / q("Total revenue"))
        line = next(x for x in run.answer.text.splitlines() if x.startswith(f"- {quarter} "))
        assert f"{margins[-1]:.2f}%" in line, line
    assert f"{margins[-1] - margins[0]:+.2f} percentage points" in run.answer.text
    assert len({(c.doc_name, c.page_index) for c in run.answer.citations}) == len(quarters)
    assert {c.doc_name for c in run.answer.citations} == {f"HRBR_{q}_10Q" for q in quarters}


@pytest.mark.parametrize("asked", [
    "What was Harborview Therapeutics' operating margin in each of the last three fiscal years?",
    "Show Harborview Therapeutics' operating margin over the past 3 years.",
    "What was Harborview Therapeutics' operating margin in FY2021, FY2022 and FY2023?",
    "Give me Harborview Therapeutics' operating margin for each year from 2021 to 2023.",
    "How has Harborview Therapeutics' operating margin changed over the last three years?",
])
def test_a_run_of_years_is_each_year_computed_side_by_side(pipeline, demo_truth, asked) -> None:  # noqa: ANN001
    """"The last three fiscal years" names no year: they end at the company's latest loaded 10-K; named years (a
    list, a range "each year from … to …") are read as written. Each year is computed from its annual report's
    facts (an earlier year from the comparative column of the next 10-K), listed oldest first with its page, then
    the move from the first to the last; no model call, no year left out for being one of three."""
    years = (2021, 2022, 2023)
    run, _ = ask(pipeline, asked)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    assert run.answer.text.startswith("Operating margin, year by year:"), run.answer.text
    margins = []
    for year in years:
        margins.append(100 * truth(demo_truth, "HRBR", "Operating income", year)
                       / truth(demo_truth, "HRBR", "Total revenue", year))
        line = next(x for x in run.answer.text.splitlines() if x.startswith(f"- FY{year}:"))
        assert f"{margins[-1]:.2f}%" in line and "[" in line, line
    assert f"From FY2021 to FY2023:" in run.answer.text
    assert f"{margins[-1] - margins[0]:+.2f} percentage points" in run.answer.text
    assert {c.doc_name for c in run.answer.citations} <= {"HRBR_2022_10K", "HRBR_2023_10K"}


@pytest.mark.parametrize(("asked", "start"), [
    ("How has Harborview Therapeutics' revenue changed since FY2021?", 2021),
    ("What has happened to Harborview Therapeutics' revenue since 2022?", 2022),
    ("How much has Harborview Therapeutics' revenue grown since fiscal 2021?", 2021),
])
def test_since_a_year_is_a_run_to_the_latest_annual_report(pipeline, demo_truth, asked, start) -> None:  # noqa: ANN001
    """"Since FY2021" runs from that year to the company's latest loaded 10-K: each year's figure, then the move
    from the year named to the latest (not the change over one year, not a model's words)."""
    run, _ = ask(pipeline, asked)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer.text
    assert f"since FY{start}: read as " in run.answer.reason and "FY2023" in run.answer.reason
    first, last = truth(demo_truth, "HRBR", "Total revenue", start), truth(demo_truth, "HRBR", "Total revenue", 2023)
    assert f"From FY{start} to FY2023: {first:,.0f} USD millions to {last:,.0f} USD millions" in run.answer.text
    assert f"({(last - first) / first * 100:+.1f}%)" in run.answer.text, run.answer.text


def test_a_year_of_the_run_no_filing_reports_is_said_and_the_others_stand(pipeline, demo_truth) -> None:  # noqa: ANN001
    run, _ = ask(pipeline, "What was Harborview Therapeutics' revenue in each of the last four fiscal years?")
    assert run.status == "answered" and run.llm_calls == 0, run.answer.text
    assert "read as FY2020, FY2021, FY2022, FY2023" in run.answer.reason, run.answer.reason
    lines = run.answer.text.splitlines()
    assert any(x.startswith("- FY2020: not computed") for x in lines), run.answer.text
    for year in (2021, 2022, 2023):
        value = truth(demo_truth, "HRBR", "Total revenue", year)
        assert any(x.startswith(f"- FY{year}:") and f"{value:,.0f}" in x for x in lines), run.answer.text


def test_a_balance_across_these_quarters_is_read_at_each_quarter_end(pipeline, demo_truth) -> None:  # noqa: ANN001
    quarters = _hrbr_quarters(demo_truth)
    run, _ = ask(pipeline, "How have Harborview Therapeutics' inventories changed across these quarters?")
    assert run.status == "answered" and run.llm_calls == 0, run.answer.text
    taken = quarters[-4:]
    for quarter in taken:
        value = next(float(f["value"]) for f in demo_truth if f["doc_name"] == f"HRBR_{quarter}_10Q"
                     and f["metric"] == "Inventories" and f["fiscal_year_column"] == quarter[:4])
        line = next(x for x in run.answer.text.splitlines() if x.startswith(f"- {quarter} "))
        assert f"{value:,.0f} USD millions" in line and "as of" in line, line


def test_a_quarters_cash_flow_is_its_10qs_year_to_date_said_as_such(pipeline, demo_truth) -> None:  # noqa: ANN001
    """A 10-Q prints its cash flow statement from the start of the fiscal year: the quarter's operating cash flow
    asked is the nine months its Q3 10-Q prints, and the answer says so (never a gap, never another period)."""
    quarter = next(q for q in reversed(_hrbr_quarters(demo_truth)) if q.endswith("Q3"))
    nine = next(float(f["value"]) for f in demo_truth if f["doc_name"] == f"HRBR_{quarter}_10Q"
                and f["metric"] == "Net cash provided by operating activities"
                and f["fiscal_year_column"] == quarter[:4])
    run, facts = ask(pipeline, f"What was Harborview Therapeutics' cash flow from operations as reported in its "
                               f"Q3 {quarter[:4]} 10-Q?")
    assert run.status == "answered" and run.llm_calls == 0, run.answer.text
    assert run.answer.value == pytest.approx(nine)
    assert {i.period for i in facts.inputs} == {f"9M to {quarter[:4]}-09-30"}
    assert "for the 9 months to" in run.answer.reason and "year to date" in run.answer.reason
    # the income statement prints the quarter's three months: a margin stays the quarter's
    run, facts = ask(pipeline, f"What was Harborview Therapeutics' operating margin in Q3 {quarter[:4]}?")
    assert {i.period for i in facts.inputs} == {f"3M to {quarter[:4]}-09-30"} and "year to date" not in run.answer.reason


def test_a_run_whose_quarters_cannot_be_computed_says_so_for_each(pipeline, demo_truth) -> None:  # noqa: ANN001
    """An average of balances over two year-ends is no quarter's metric: each quarter is listed as not computed,
    and no number stands for the run."""
    quarters = _hrbr_quarters(demo_truth)[-2:]
    run, _ = ask(pipeline, "What was Harborview Therapeutics' inventory turnover in each of the last two quarters?")
    assert run.status == "not_answerable" and run.answer.value is None and run.llm_calls == 0, run.answer.text
    for quarter in quarters:
        assert any(x.startswith(f"- {quarter}: not computed") for x in run.answer.text.splitlines()), run.answer.text
    assert "0 of the 2 quarters could be computed" in run.answer.reason


def test_a_written_question_of_the_latest_10q_against_past_quarters_reads_that_10q(pipeline, demo_truth) -> None:  # noqa: ANN001
    """"What drove the gross margin change in the latest 10-Q relative to past quarters": the latest 10-Q's own text
    tells the change; the run of quarters is for a number set side by side."""
    from dataclasses import replace

    from engine.intent import parse_intent
    from engine.retrieval.companies import resolve_latest

    latest = _hrbr_quarters(demo_truth)[-1]
    company = ask(pipeline, "What was Harborview Therapeutics' gross margin in FY2023?")[0].traces[0].payload.intent.issuers
    written = replace(parse_intent("What factors changed Harborview Therapeutics' gross margin in the latest 10-Q "
                                   "relative to past quarters?"), issuers=company)
    assert not written.numeric and resolve_latest(written, pipeline.library)[0].quarters == (latest,)
    number = replace(parse_intent("How did Harborview Therapeutics' gross margin in the latest 10-Q compare to past "
                                  "quarters?"), issuers=company)
    assert len(resolve_latest(number, pipeline.library)[0].quarters) > 1


def test_per_share_lines_share_counts_and_balance_lines_are_read_in_their_own_unit(tmp_path: Path, embedder) -> None:
    """Earnings per share (diluted unless the question says basic), an amount per share (over the weighted-average
    diluted shares), goodwill and stock-based compensation are computed from the statements' rows, no model call;
    each row counts only in its own unit: a per-share line is no amount, a share count no dollars, and a label's
    bracketed aside of per-share rates ("Dividends declared ($2.585 per share)") leaves its row an amount."""
    from engine.pipeline import Models, build_pipeline
    from tests.engine.test_identity import add_table_page, write_cover_pdf

    income = [("Consolidated Statements of Operations", "", ""),
              ("(In millions, except per share amounts)", "2023", "2022"),
              ("Net sales", "12,400", "11,000"), ("Cost of sales", "7,100", "6,500"),
              ("Operating income", "2,300", "1,900"), ("Net income", "1,640", "1,320"),
              ("Earnings per share:", "", ""), ("Basic", "4.10", "3.30"), ("Diluted", "4.00", "3.25"),
              ("Shares used in computing earnings per share:", "", ""), ("Basic", "400", "400"),
              ("Diluted", "410", "406")]
    balance = [("Consolidated Balance Sheets", "", ""), ("(In millions)", "2023", "2022"),
               ("Cash and cash equivalents", "900", "800"), ("Total current assets", "4,000", "3,600"),
               ("Goodwill", "2,750", "2,600"), ("Total assets", "15,000", "14,100"),
               ("Total current liabilities", "2,900", "2,700"), ("Total shareholders' equity", "6,000", "5,400")]
    cash = [("Consolidated Statements of Cash Flows", "", ""), ("(In millions)", "2023", "2022"),
            ("Net income", "1,640", "1,320"), ("Stock-based compensation", "210", "180"),
            ("Net cash provided by operating activities", "2,400", "2,000"),
            ("Dividends declared ($1.20 and $1.00 per share)", "(480)", "(400)")]
    path = write_cover_pdf(tmp_path / "f" / "PERLA_2023_10K.pdf", name="PERLA HOLDINGS INC", form="10-K",
                           period_text="December 31, 2023")
    for rows in (income, balance, cash):
        add_table_page(path, rows)
    # a count of shares printed with no scale the reader finds: "410" shares is no company's count
    unscaled = [("Consolidated Statements of Operations", "", ""), ("", "2023", "2022"), ("Net sales", "12,400", "11,000"),
                ("Net income", "1,640", "1,320"), ("Weighted-average diluted shares", "410", "406")]
    add_table_page(write_cover_pdf(tmp_path / "f" / "ZEPHYR_2023_10K.pdf", name="ZEPHYR MOTORS INC", form="10-K",
                                   period_text="December 31, 2023"), unscaled)
    library, settings = _ingested(tmp_path, embedder)
    units = {(s.fact.label, s.fact.unit) for s in library.facts(fiscal_year=2023)}
    assert ("Dividends declared ($1.20 and $1.00 per share)", "USD") in units, units
    pipeline = build_pipeline(settings, library, Models(embedder))
    for question, want in (("What was Perla's diluted EPS in FY2023?", 4.00),
                           ("How much did Perla Holdings earn per diluted share in FY2023?", 4.00),
                           ("What were Perla's basic earnings per share for fiscal 2023?", 4.10),
                           ("What was Perla's revenue per share in FY2023?", 12400 / 410),
                           ("By how much did Perla's EPS grow from FY2022 to FY2023, in percent?",
                            (4.00 / 3.25 - 1) * 100),
                           ("How much goodwill did Perla carry at the end of FY2023, in USD millions?", 2750),
                           ("What was Perla's stock-based compensation in FY2023, in USD millions?", 210)):
        run, _ = ask(pipeline, question)
        assert run.status == "answered" and run.answer.method == "facts" and run.llm_calls == 0, (question, run.answer)
        assert run.answer.value == pytest.approx(want, rel=1e-3), (question, run.answer.text)
    run, _ = ask(pipeline, "What was Perla's diluted EPS in FY2023?")
    assert run.answer.unit == "USD/share" and run.answer.text.startswith("4"), run.answer.text
    run, _ = ask(pipeline, "What was Zephyr Motors' revenue per share in FY2023?")
    assert run.status != "answered" and run.answer.value is None, run.answer.text


def test_a_quarterly_reports_balance_is_a_year_end_figure_only_at_the_fiscal_year_end() -> None:
    """Microsoft's fiscal year ends on June 30; its first-quarter 10-Q prints "Short-term debt" at September 30, 2023
    (25,808) beside June 30, 2023 (0), both in calendar 2023: only the June column is a FY2023 year-end figure (a
    52/53-week year's end moves by days, not months)."""
    from engine.answer.from_facts import _at_year_end
    from engine.records import ColumnPeriod, StatementFact, StoredFact

    def column(end: str, value: float) -> StoredFact:
        return StoredFact(1, 9, "X_2023Q3_10Q", None, StatementFact(
            4, "balance sheet", "BALANCE SHEETS", "Short-term debt", "", False, 0,
            ColumnPeriod(end, 2023, end, 0), f"{value:,.0f}", value, "millions", "USD", 0, 5))

    assert not _at_year_end(column("2023-09-30", 25808), "06-30")
    assert _at_year_end(column("2023-06-30", 0), "06-30")
    assert _at_year_end(column("2024-02-03", 1), "01-28") and _at_year_end(column("2023-01-02", 1), "12-31")
    assert _at_year_end(column("2023-09-30", 1), "")  # (no year end known: nothing to tell by)
