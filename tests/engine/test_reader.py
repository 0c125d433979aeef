"""The question reader (engine.intent.reader): a suite of questions generated from the demo corpus — every catalogue
metric the demo statements can give × value / change / growth / average / CAGR / "% of" / defined-in-question, each
in several wordings an analyst types — answered through the real facts path and checked against the generator's own
values (the formulas below are written here, not read from the catalogue). Questions the statements cannot answer
must be refused, never answered with a number. Also: unit algebra, nested definitions, a definition overriding one
leaf only."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable

import pytest

from engine.records import PlanNode
from engine.vocab.catalogue import load_catalogue
from tests.engine.test_from_facts import truth

CO = "Harborview Therapeutics"
T = Callable[[str, int], float]

# metric -> (wordings an analyst uses, its value from the generator's rows, its kind)
# kind: "flow" (an amount over the year), "balance" (at year end), "rate" (a percentage), "ratio", "days";
# "avg" marks metrics that average two year-ends (no 3-year average: FY2020 is not printed)
METRICS: dict[str, tuple[tuple[str, ...], Callable[[T, int], float], str]] = {
    "revenue": (("revenue", "total revenue", "net sales", "top line"), lambda t, y: t("Total revenue", y), "flow"),
    "cogs": (("cost of revenue", "COGS", "cost of sales"), lambda t, y: t("Cost of revenue", y), "flow"),
    "gross profit": (("gross profit",), lambda t, y: t("Gross profit", y), "flow"),
    "operating income": (("operating income", "income from operations", "operating profit"),
                         lambda t, y: t("Operating income", y), "flow"),
    "net income": (("net income", "net earnings", "bottom line"), lambda t, y: t("Net income", y), "flow"),
    "capex": (("capex", "capital expenditures", "capital spending"), lambda t, y: abs(t("Capital expenditures", y)),
              "flow"),
    "d&a": (("D&A", "depreciation and amortization"), lambda t, y: t("Depreciation and amortization", y), "flow"),
    "ocf": (("cash from operations", "operating cash flow", "net cash provided by operating activities"),
            lambda t, y: t("Net cash provided by operating activities", y), "flow"),
    "dividends": (("dividends paid", "cash dividends"), lambda t, y: abs(t("Dividends paid", y)), "flow"),
    "inventory": (("inventory", "inventories"), lambda t, y: t("Inventories", y), "balance"),
    "receivables": (("accounts receivable", "net AR", "receivables"), lambda t, y: t("Accounts receivable", y),
                    "balance"),
    "total assets": (("total assets",), lambda t, y: t("Total assets", y), "balance"),
    "equity": (("shareholders' equity", "stockholders' equity"), lambda t, y: t("Total shareholders' equity", y),
               "balance"),
    "fcf": (("free cash flow", "FCF"), lambda t, y: t("Net cash provided by operating activities", y)
            - abs(t("Capital expenditures", y)), "flow"),
    "fcf conversion": (("free cash flow conversion", "FCF conversion"), lambda t, y: (
        t("Net cash provided by operating activities", y) - abs(t("Capital expenditures", y))) / t("Net income", y)
        * 100, "rate"),
    "sg&a": (("SG&A", "selling, general and administrative expense", "selling, general & administrative costs"),
             lambda t, y: t("Selling general and administrative", y), "flow"),
    "ebit": (("EBIT", "earnings before interest and taxes"), lambda t, y: t("Operating income", y), "flow"),
    "ebitda": (("EBITDA",), lambda t, y: t("Operating income", y) + t("Depreciation and amortization", y), "flow"),
    "working capital": (("working capital",), lambda t, y: t("Total current assets", y)
                        - t("Total current liabilities", y), "balance"),
    "gross margin": (("gross margin", "gross profit margin"), lambda t, y: t("Gross profit", y)
                     / t("Total revenue", y) * 100, "rate"),
    "operating margin": (("operating margin", "operating profit margin", "EBIT margin"),
                         lambda t, y: t("Operating income", y) / t("Total revenue", y) * 100, "rate"),
    "net margin": (("net profit margin", "net margin"), lambda t, y: t("Net income", y) / t("Total revenue", y) * 100,
                   "rate"),
    "ebitda margin": (("EBITDA margin",), lambda t, y: (t("Operating income", y) + t("Depreciation and amortization", y))
                      / t("Total revenue", y) * 100, "rate"),
    "tax rate": (("effective tax rate",), lambda t, y: t("Provision for income taxes", y)
                 / t("Income before income taxes", y) * 100, "rate"),
    "current ratio": (("current ratio", "working capital ratio"), lambda t, y: t("Total current assets", y)
                      / t("Total current liabilities", y), "ratio"),
    "quick ratio": (("quick ratio", "acid test ratio"), lambda t, y: (t("Cash and cash equivalents", y)
                    + t("Accounts receivable", y)) / t("Total current liabilities", y), "ratio"),
    "cash ratio": (("cash ratio",), lambda t, y: t("Cash and cash equivalents", y) / t("Total current liabilities", y),
                   "ratio"),
    "debt to equity": (("debt to equity ratio", "debt-to-equity"), lambda t, y: t("Long-term debt", y)
                       / t("Total shareholders' equity", y), "ratio"),
    "debt to capital": (("debt to capital ratio", "debt-to-capitalization"), lambda t, y: t("Long-term debt", y)
                        / (t("Long-term debt", y) + t("Total shareholders' equity", y)), "ratio"),
    "capitalization": (("total capitalization",), lambda t, y: t("Long-term debt", y)
                       + t("Total shareholders' equity", y), "balance"),
    "pretax income": (("pre-tax income", "income before taxes", "earnings before income taxes"),
                      lambda t, y: t("Income before income taxes", y), "flow"),
    "ocf ratio": (("operating cash flow ratio",), lambda t, y: t("Net cash provided by operating activities", y)
                  / t("Total current liabilities", y), "ratio"),
    "interest coverage": (("interest coverage ratio", "times interest earned"), lambda t, y: t("Operating income", y)
                          / t("Interest expense", y), "ratio"),
    "operating leverage": (("operating leverage", "degree of operating leverage"), lambda t, y: (
        t("Operating income", y) / t("Operating income", y - 1) - 1) / (t("Total revenue", y) / t("Total revenue", y - 1)
                                                                        - 1), "avg"),
    "payout": (("dividend payout ratio", "payout ratio"), lambda t, y: abs(t("Dividends paid", y)) / t("Net income", y)
               * 100, "rate"),
    "retention": (("retention ratio", "plowback ratio"), lambda t, y: 1 - abs(t("Dividends paid", y))
                  / t("Net income", y), "ratio"),
    "inventory turnover": (("inventory turnover", "inventory turns"), lambda t, y: t("Cost of revenue", y)
                           / ((t("Inventories", y) + t("Inventories", y - 1)) / 2), "avg"),
    "asset turnover": (("asset turnover", "total asset turnover"), lambda t, y: t("Total revenue", y)
                       / ((t("Total assets", y) + t("Total assets", y - 1)) / 2), "avg"),
    "dio": (("days inventory outstanding", "DIO"), lambda t, y: 365 * (t("Inventories", y) + t("Inventories", y - 1))
            / 2 / t("Cost of revenue", y), "avg"),
    "dso": (("days sales outstanding", "DSO", "days of sales outstanding"), lambda t, y: 365 * (t("Accounts receivable", y)
            + t("Accounts receivable", y - 1)) / 2 / t("Total revenue", y), "avg"),
    "eps": (("diluted EPS", "earnings per share", "EPS", "diluted earnings per share"),
            lambda t, y: t("Diluted EPS", y), "flow"),
    "roa": (("return on assets", "ROA"), lambda t, y: t("Net income", y) / ((t("Total assets", y)
            + t("Total assets", y - 1)) / 2) * 100, "avg"),
    "roe": (("return on equity", "ROE"), lambda t, y: t("Net income", y) / ((t("Total shareholders' equity", y)
            + t("Total shareholders' equity", y - 1)) / 2) * 100, "avg"),
}

VALUE = ("What is {co}'s FY{y} {m}?", "What was the {m} of {co} in fiscal {y}?", "{co} FY{y} {m}?",
         "Calculate {co}'s {m} for FY{y}.")
CHANGE = ("How much did {co}'s {m} change from FY{p} to FY{y}?", "What is the change in {co}'s {m} between FY{p} and "
          "FY{y}?", "How did {co}'s {m} trend from FY{p} to FY{y}?")
# a metric named in two pieces around the question's frame ("how much cash did X generate from operations")
SPLIT = ("How much cash did {co} generate from operations in FY{y}?",
         "How much cash did it generate from operating activities in FY{y}, for {co}?")
# one metric at two periods set side by side: its change, stated with both values
COMPARE = ("How does {co}'s {m} in FY{y} compare to FY{p}?", "What was {co}'s {m} in FY{y} compared with FY{p}?",
           "{co}'s {m}: FY{y} versus FY{p}?", "How did {co}'s FY{y} {m} compare with its FY{p} {m}?",
           "How did {co}'s FY{y} {m} stack up against FY{p}?")
GROWTH = ("What was {co}'s {m} growth from FY{p} to FY{y}?", "By what percent did {co}'s {m} change between FY{p} "
          "and FY{y}?", "What is the year-over-year change in {m} for {co} in FY{y}, in percent?")
AVERAGE = ("What is the FY2021 - FY2023 3 year average {m} for {co}?",
           "What was {co}'s average {m} over FY2021 to FY2023?")
CAGR = ("What is {co}'s 2 year {m} CAGR from FY2021 to FY2023?",
        "What was the compound annual growth rate of {co}'s {m} from FY2021 to FY2023?")
SHARE = ("What is {co}'s FY{y} {a} as a % of {b}?", "What was {a} as a percentage of {b} for {co} in FY{y}?",
         "{co}: FY{y} {a} over {b}, in percent?", "What was {co}'s {a} as a share of {b} in FY{y}?",
         "{co}'s {a} as a proportion of {b}, FY{y}?",
         # the whole named first, the part after it
         "What percentage of {co}'s FY{y} {b} was {a}?", "What share of {co}'s FY{y} {b} went to {a}?",
         "What proportion of its FY{y} {b} did {co} convert into {a}?")
# two metrics named after "the difference", "the gap": the first less the second
DIFFERENCE = ("What is the difference between {co}'s FY{y} {a} and {b}?",
              "What was the gap between {a} and {b} for {co} in FY{y}?",
              "Calculate the difference between {a} and {b} at {co} in fiscal {y}.")
# by how much one amount exceeds or falls short of another, the larger ({b}) named first or second
EXCEED = ("By how much did {co}'s FY{y} {b} exceed its {a}?", "How much more {b} than {a} did {co} report in FY{y}?",
          "How much higher was {co}'s {b} than its {a} in FY{y}?", "In fiscal {y}, how much did {co}'s {b} surpass its "
          "{a}?", "How much lower was {co}'s {a} than its {b} in FY{y}?",
          "By how much did {co}'s {a} fall short of its {b} in FY{y}?", "How much less {a} than {b} did {co} have in "
          "FY{y}?")
# one metric at two periods: its change
EXCEED_YEARS = ("How much higher was {co}'s {m} in FY{y} than in FY{p}?", "By how much did {co}'s FY{y} {m} exceed "
                "its FY{p} {m}?", "How much more {m} did {co} report in FY{y} than in FY{p}?")
DEFINED = ("Define cash coverage as {a} divided by {b}. What was {co}'s FY{y} cash coverage?",
           "What is {co}'s FY{y} cash coverage, defined as {a} / {b}?",
           "What is {co}'s FY{y} cash coverage (cash coverage = {a} over {b})?",
           "Work out {co}'s FY{y} cash coverage, i.e. {a} divided by {b}.")
PAIRS = (("capex", "revenue"), ("d&a", "revenue"), ("dividends", "net income"), ("ocf", "net income"),
         ("inventory", "total assets"), ("receivables", "revenue"), ("gross profit", "revenue"))
# clauses that only say where to look, written before the question (the metric is not in them)
FRAMES = ("Working only from the income statement and the balance sheet, {q}",
          "With reference to the cash flow statement, {q}",
          "Going by what the statement of financial position shows, {q}",
          "If you rely on the P&L statement alone, {q}")
REFUSED = ("What is {co}'s FY2023 customer churn rate?", "What was {co}'s same-store sales growth in FY2023?",
           "What is {co}'s FY2023 adjusted EBITDA?", "What was {co}'s FY2023 segment revenue?",
           "What is {co}'s FY2023 capex per employee?", "What was {co}'s FY2023 revenue in Europe?",
           "What is {co}'s FY2023 net AR turnover multiple?", "What is {co}'s FY2023 adjusted operating margin?",
           "What is {co}'s FY2019 total revenue?", "What is {co}'s FY2023 days payable outstanding?",
           "What is {co}'s FY2023 cash conversion cycle?", "What was {co}'s FY2023 revenue per share?")


def _cases() -> list[tuple[str, str, str, Callable[[T], float] | None]]:
    """(operation, metric, question, expected value from the generator's rows or None for a refusal)."""
    out: list[tuple[str, str, str, Callable[[T], float] | None]] = []
    for key, (words, f, kind) in METRICS.items():
        for n, w in enumerate(words):
            for k, tpl in enumerate(VALUE):
                if (n + k) % 2 == 0 or len(words) == 1:
                    out.append(("value", key, tpl.format(co=CO, y=2023, m=w), lambda t, f=f: f(t, 2023)))
            if kind == "rate" and n == 0:  # the unit said as an aside
                out.append(("value", key, f"What is {CO}'s FY2023 {w} (as a %)?", lambda t, f=f: f(t, 2023)))
            if kind in ("flow", "balance", "rate", "ratio", "avg") and n == 0:
                for tpl in CHANGE:
                    out.append(("change", key, tpl.format(co=CO, p=2022, y=2023, m=w),
                                lambda t, f=f: f(t, 2023) - f(t, 2022)))
            if kind in ("flow", "balance", "rate", "ratio") and n < 2:
                tpl = COMPARE[(len(out) + n) % len(COMPARE)]
                p = 2021 if kind == "flow" and n else 2022  # (FY2021: two years apart)
                out.append(("compare", key, tpl.format(co=CO, p=p, y=2023, m=w),
                            lambda t, f=f, p=p: f(t, 2023) - f(t, p)))
            if kind in ("flow", "balance") and n < 2:
                tpl = GROWTH[n % len(GROWTH)] if n else GROWTH[2]
                out.append(("growth", key, tpl.format(co=CO, p=2022, y=2023, m=w),
                            lambda t, f=f: (f(t, 2023) / f(t, 2022) - 1) * 100))
            if kind in ("flow", "rate", "ratio") and n < 2 and key not in ("current ratio", "quick ratio"):
                out.append(("average", key, AVERAGE[n].format(co=CO, m=w),
                            lambda t, f=f: sum(f(t, y) for y in (2021, 2022, 2023)) / 3))
            if kind == "flow" and n == 0 and key not in ("fcf",):
                for tpl in CAGR:
                    out.append(("cagr", key, tpl.format(co=CO, m=w),
                                lambda t, f=f: ((f(t, 2023) / f(t, 2021)) ** 0.5 - 1) * 100))
    for k, key in enumerate(("revenue", "operating income", "capex", "inventory", "sg&a")):
        words, f, _ = METRICS[key]
        out.append(("exceed", key, EXCEED_YEARS[k % len(EXCEED_YEARS)].format(co=CO, m=words[0], y=2023, p=2022),
                    lambda t, f=f: f(t, 2023) - f(t, 2022)))
    out += [("value", "ocf", tpl.format(co=CO, y=2023), lambda t: METRICS["ocf"][1](t, 2023)) for tpl in SPLIT]
    for a, b in PAIRS:
        fa, fb = METRICS[a][1], METRICS[b][1]
        for k, tpl in enumerate(SHARE):
            out.append(("share", f"{a}/{b}", tpl.format(co=CO, y=2023, a=METRICS[a][0][k % len(METRICS[a][0])],
                                                         b=METRICS[b][0][0]),
                        lambda t, fa=fa, fb=fb: fa(t, 2023) / fb(t, 2023) * 100))
        for k, tpl in enumerate(DIFFERENCE):
            out.append(("difference", f"{a}-{b}", tpl.format(co=CO, y=2023, a=METRICS[a][0][k % len(METRICS[a][0])],
                                                             b=METRICS[b][0][0]),
                        lambda t, fa=fa, fb=fb: fa(t, 2023) - fb(t, 2023)))
        for k, tpl in enumerate(EXCEED):
            if (k + len(out)) % 2:
                continue
            out.append(("exceed", f"{b}-{a}", tpl.format(co=CO, y=2023, a=METRICS[a][0][k % len(METRICS[a][0])],
                                                         b=METRICS[b][0][0]),
                        lambda t, fa=fa, fb=fb: fb(t, 2023) - fa(t, 2023)))
        for k, tpl in enumerate(DEFINED):
            out.append(("defined", f"{a}/{b}", tpl.format(co=CO, y=2023, a=METRICS[a][0][0], b=METRICS[b][0][-1]),
                        lambda t, fa=fa, fb=fb: fa(t, 2023) / fb(t, 2023)))
    asked = [c for c in out if c[2].split()[0] in ("What", "How", "Calculate", "By")]
    for k, (_, key, question, f) in enumerate(asked[::5]):
        out.append(("framed", key, FRAMES[k % len(FRAMES)].format(q=question[0].lower() + question[1:]), f))
    out += [("refused", "", tpl.format(co=CO), None) for tpl in REFUSED]
    return out


CASES = _cases()


# analysts' words for what the catalogue computes, each in a wording no other test writes: the plan the reader makes
# of it, in words (nothing left unread)
ANALYST_WORDS = (
    ("Compute Acme's inventory days for FY2023.", "days inventory outstanding"),
    ("What were Acme's receivable days in FY2023?", "days sales outstanding"),
    ("How many times did Acme turn over its inventory in FY2023?", "inventory turnover"),
    ("How much cash did Acme have on hand at the end of 2023?", "cash and equivalents"),
    ("How much did Acme pay its shareholders in dividends in FY2023?", "dividends"),
    ("How much did Acme spend on research in 2023 relative to its sales?", "(research and development / revenue)"),
    ("What was Acme's revenue per share in FY2023?", "(revenue / diluted shares)"),
    ("What was Acme's free cash flow per diluted share in FY2023?", "(free cash flow / diluted shares)"),
    ("What was Acme's basic EPS in FY2023?", "basic earnings per share"),
    ("What were Acme's earnings per share, diluted, in FY2023?", "earnings per share"),
    ("What was Acme's cash burn in FY2023?", "cash burn"),
    ("How much cash did Acme burn through in FY2023?", "cash burn"),
    ("How much stock comp did Acme expense in FY2023?", "stock-based compensation"),
    ("Was Acme's gross margin north of 45% in FY2023?", "gross margin"),
    ("How large was Acme's goodwill balance at the end of FY2023?", "goodwill"),
    ("Did Acme's gross margin get better or worse in FY2023?", "change in gross margin over 1 year(s)"),
    ("Is Acme profitable on an operating basis in FY2023?", "operating income"),
    ("How much goodwill did Acme carry at the end of FY2023?", "goodwill"),
    ("What were Acme's capital expenditures as a share of sales in FY2023?",
     "(capital expenditures / revenue) × 100"),
    # the part named after the whole, asked "how much of", or what it "became"
    ("How much of Acme's FY2023 operating cash flow went to dividends?", "(dividends / cash from operations) × 100"),
    ("What fraction of Acme's FY2023 revenue became operating income?", "(operating income / revenue) × 100"),
    ("How much of an increase in revenue did Acme see in FY2023?", "change in revenue over 1 year(s)"),
    # the speed of a move is an amount's growth; a percentage's move stays in points
    ("How fast did Acme's revenue grow in FY2023?", "growth of revenue over 1 year(s), %"),
    ("At what pace did Acme's capex rise in FY2023?", "growth of capital expenditures over 1 year(s), %"),
    ("How quickly did Acme's gross margin expand in FY2023?", "change in gross margin over 1 year(s)"),
    # "X intensity": the amount as a percentage of revenue; a quality's measure asked as a value
    ("What was Acme's capex intensity in FY2023?", "(capital expenditures / revenue) × 100"),
    ("What was Acme's R&D intensity in FY2023?", "(research and development / revenue) × 100"),
    ("What was Acme's capital intensity in FY2023?", "(capital expenditures / revenue) × 100"),
    ("How many times did Acme turn its inventory in FY2023?", "inventory turnover"),
    ("How did Acme's long-term debt evolve from FY2022 to FY2023?", "change in long-term debt over 1 year(s)"),
    # an aspect word frames the metric named
    ("How leveraged was Acme in FY2023 on a net debt to EBITDA basis?", "(net debt / ebitda)"),
    ("How liquid was Acme in FY2023 based on its quick ratio?", "quick ratio"),
    ("How much net interest income did Acme report in FY2023?", "net interest income"),
    # verbs of spending, of a part a line takes of a whole; a balance "outstanding", a "position", a "budget"
    ("How much did Acme pour into capex in FY2023?", "capital expenditures"),
    ("What share of Acme's FY2023 revenue was eaten up by depreciation?",
     "(depreciation and amortization / revenue) × 100"),
    ("How much debt did Acme have outstanding at the end of FY2023?", "debt"),
    ("What was Acme's working capital position at the end of FY2023?", "working capital"),
    ("How big was Acme's R&D budget in FY2023?", "research and development"),
    ("How much did Acme earn per share on a diluted basis in FY2023?", "earnings per share"),
    ("What were Acme's selling and administrative expenses in FY2023?", "sg&a"),
    # a turnover asked in days is the days metric
    ("How many days did it take Acme to sell its inventory in FY2023?", "days inventory outstanding"),
    ("How many times did Acme sell through its inventory in FY2023?", "inventory turnover"),
    ("What percentage of Acme's FY2023 revenue was left as free cash flow?", "(free cash flow / revenue) × 100"),
    ("What were Acme's total liabilities as a multiple of total equity at the end of FY2023?",
     "(total liabilities / shareholders equity)"),
    ("How much did Acme's revenue recover in FY2023?", "change in revenue over 1 year(s)"),
    ("How heavily did Acme invest in capex in FY2023?", "capital expenditures"),
    # "how many times" a cover is the one as a multiple of the other, not by how much it exceeds
    ("How many times over did Acme's operating income cover its interest expense in FY2023?",
     "(operating income / interest expense)"),
    # a dash between spaces is a minus (in a word it is none)
    ("What was Acme's FY2023 revenue - cost of sales?", "(revenue - cost of goods sold)"),
    ("What was Acme's FY2023 debt-to-equity ratio?", "debt to equity"),
)


@pytest.mark.parametrize(("question", "words"), ANALYST_WORDS)
def test_analyst_words_read_as_the_metric_they_name(question: str, words: str) -> None:
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan

    plan = read_plan(parse_intent(question), load_catalogue())
    assert (plan.status, plan.words, plan.unread) == ("complete", words, ()), plan


def test_advertising_is_not_read_as_the_sales_and_marketing_line() -> None:
    """Advertising is a figure of the notes, not the "Sales and marketing" line (salaries, commissions and more):
    not a metric the catalogue computes, so the filing's text answers it."""
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan

    assert read_plan(parse_intent("What were Acme's advertising costs in FY2023?"), load_catalogue()).status == "outside"
    assert read_plan(parse_intent("What did Acme spend on sales and marketing in FY2023?"),
                     load_catalogue()).words == "sales and marketing"


def test_the_suite_is_large_and_covers_every_operation() -> None:
    ops = Counter(op for op, *_ in CASES)
    assert len(CASES) >= 300 and set(ops) == {"value", "change", "compare", "growth", "average", "cagr", "share",
                                              "defined", "difference", "exceed", "framed", "refused"}


@pytest.fixture(scope="module")
def pipeline(ingested_demo, embedder):  # noqa: ANN001, ANN201
    from engine.pipeline import Models, build_pipeline

    library, settings, _ = ingested_demo
    return build_pipeline(settings, library, Models(embedder))  # no chat model: the reader and the facts path


def test_generated_questions_are_read_and_computed_or_refused(pipeline, demo_truth, capsys) -> None:  # noqa: ANN001
    """Every generated question: the right number (within 0.5 % for the rounding of printed figures), or no number
    at all. The per-operation figures are printed (``pytest -s``); a wrong number fails the test outright."""
    def t(metric: str, year: int) -> float:
        return truth(demo_truth, "HRBR", metric, year)

    tally: dict[str, Counter[str]] = {}
    wrong: list[str] = []
    abstained: list[str] = []
    for op, metric, question, expected in CASES:
        run = pipeline.run(question, store=False)
        c = tally.setdefault(op, Counter())
        given = run.status == "answered" and run.answer.value is not None
        assert run.llm_calls == 0, question
        if expected is None:
            c["refused right" if not given else "answered wrongly"] += 1
            if given:
                wrong.append(f"{question} -> {run.answer.text} (should be refused)")
            continue
        want = expected(t)
        if not given:
            c["abstained"] += 1
            abstained.append(f"{question} -> {run.answer.text[:160]}")
        elif run.answer.value == pytest.approx(want, rel=5e-3, abs=1e-6):
            c["right"] += 1
        else:
            c["wrong"] += 1
            wrong.append(f"{question} -> {run.answer.text}, want {want:.4f}")
    with capsys.disabled():
        for op, c in tally.items():
            print(f"reader suite {op:8s} {dict(c)}")
        print("abstained:", *abstained, sep="\n  ")
    assert not wrong, "\n".join(wrong)
    answerable = sum(sum(c.values()) for op, c in tally.items() if op != "refused")
    right = sum(c["right"] for c in tally.values())
    assert right >= 0.8 * answerable, {op: dict(c) for op, c in tally.items()}


# --- judgements: a yes/no question's test computed from the facts ----------------------------------------------

# (template, test) — test: "up" / "down" (the change over the year), "either" (which way), "band" (every yearly move
# over FY2021-FY2023 within the band: points of a rate, percent of anything else), (">=", bar) a bar written
UP_DOWN = (("Did {co}'s {m} improve in FY{y}?", "up"), ("Has {co}'s {m} grown between FY{p} and FY{y}?", "up"),
           ("Was there an increase in {co}'s {m} in FY{y} compared to FY{p}?", "up"),
           ("Did {co} see its {m} rise in FY{y}?", "up"), ("Has {co}'s {m} declined in FY{y}?", "down"),
           ("Did {co}'s {m} drop between FY{p} and FY{y}?", "down"), ("Is {co}'s {m} shrinking as of FY{y}?", "down"),
           ("Did {co}'s {m} go up or down in FY{y}?", "either"),
           ("Did {co}'s {m} increase or decrease from FY{p} to FY{y}?", "either"),
           # the metric set against the other period the question names
           ("Was {co}'s {m} higher in FY{y} than in FY{p}?", "up"), ("Did {co}'s FY{y} {m} beat FY{p}?", "up"),
           ("Did {co}'s {m} in FY{y} exceed its FY{p} level?", "up"), ("Was {co}'s FY{y} {m} ahead of FY{p}?", "up"),
           ("Did {co}'s {m} in FY{y} fall short of FY{p}?", "down"), ("Was {co}'s FY{y} {m} lower than in FY{p}?",
                                                                     "down"),
           ("Was {co}'s FY{y} {m} higher than a year earlier?", "up"),
           ("Did {co} report more {m} in FY{y} than in FY{p}?", "up"),
           # a number, then a yes/no question of it
           ("What was {co}'s {m} in FY{y}, and did it outpace FY{p}?", "up"),
           ("What was {co}'s {m} in FY{y} and was it below FY{p}?", "down"))
# a direction asked of every year: every yearly move over FY2021-FY2023 that way (the smallest rise, the largest fall)
EVERY = (("Has {co}'s {m} grown every year from FY2021 to FY2023?", "rising"),
         ("Has {co}'s {m} declined in each of the last two years?", "falling"),
         ("Did {co}'s {m} rise steadily from FY2021 to FY2023?", "rising"),
         ("Has {co}'s {m} fallen consistently between FY2021 and FY2023?", "falling"))
STABLE = (("Was {co}'s {m} stable from FY2021 to FY2023?", None),
          ("Has {co}'s {m} been consistent between FY2021 and FY2023, not moving more than {b}% a year?", "b"),
          ("Did {co} keep a steady {m} over FY2021-FY2023, within {b}%?", "b"))
LEVELS = (("Is {co}'s FY{y} {m} above {b}?", ">="), ("Was {co}'s {m} below {b} in FY{y}?", "<="),
          ("Did {co}'s {m} exceed {b} in fiscal {y}?", ">="))
QUALITIES = (("Is {co} a capital-intensive business based on FY{y} data?", "capex/revenue >= 10"),
             ("Would you describe {co} as asset-heavy in FY{y}?", "capex/revenue >= 10"),
             ("Are {co}'s FY{y} financials those of a high-growth company?", "growth >= 15"),
             ("Is {co} a fast-growing company, with growth above 5% in FY{y}?", "growth >= 5"),
             ("Was {co} profitable in FY{y}?", "net income > 0"), ("Was {co} loss-making in FY{y}?", "net income < 0"),
             ("Did {co} post a net loss in FY{y}?", "net income < 0"), ("Was {co} in the black in FY{y}?",
                                                                         "net income > 0"),
             ("Did {co} swing to a loss in FY{y}?", "net income < 0"),
             ("Did {co} return to profitability in fiscal {y}?", "net income > 0"),
             ("Did {co}'s operating income turn negative in FY{y}?", "operating income < 0"),
             # one amount against another: by how much it exceeds it, against zero
             ("Did {co}'s operating cash flow exceed its net income in FY{y}?", "ocf-net income > 0"),
             ("Was {co}'s net income lower than its operating income in FY{y}?", "operating-net income > 0"),
             # a yes/no of one amount: was any reported
             ("Has {co} paid dividends to its shareholders in FY{y}?", "dividends > 0"),
             ("Did {co} have any long-term debt at the end of FY{y}?", "debt > 0"),
             ("Did {co} spend anything on capex in fiscal {y}?", "capex > 0"))
JUDGED_METRICS = ("revenue", "operating income", "net income", "inventory", "gross margin", "operating margin",
                  "net margin", "current ratio", "quick ratio", "debt to equity", "interest coverage", "roe",
                  "fcf conversion")


def _judged_cases() -> list[tuple[str, Callable[[T], tuple[float, str]]]]:
    """(question, the expected value and answer's first word from the generator's rows)."""
    out: list[tuple[str, Callable[[T], tuple[float, str]]]] = []
    y, p = 2023, 2022
    for n, key in enumerate(JUDGED_METRICS):
        words, f, kind = METRICS[key]
        w = words[n % len(words)]
        for k, (tpl, test) in enumerate(UP_DOWN):
            if (n + k) % 3:
                continue

            def direction(t: T, f=f, test=test) -> tuple[float, str]:  # noqa: ANN001
                d = f(t, y) - f(t, p)
                side = ("Increased" if d > 0 else "Decreased") if test == "either" else \
                    ("Yes" if (d > 0) == (test == "up") else "No")
                return d, side

            out.append((tpl.format(co=CO, m=w, y=y, p=p), direction))
        for k, (tpl, test) in enumerate(EVERY):
            if (n + k) % 3 or kind == "avg":
                continue

            def every(t: T, f=f, kind=kind, test=test) -> tuple[float, str]:  # noqa: ANN001
                v = [f(t, year) for year in (2021, 2022, 2023)]
                moves = [b - a if kind == "rate" else (b / a - 1) * 100 for a, b in itertools.pairwise(v)]
                edge = min(moves) if test == "rising" else max(moves)
                return edge, "Yes" if (edge > 0 if test == "rising" else edge < 0) else "No"

            out.append((tpl.format(co=CO, m=w), every))
        for k, (tpl, written) in enumerate(STABLE):
            if (n + k) % 2 or kind == "avg":  # (an average of two year-ends needs FY2020: not printed)
                continue
            band = {"rate": 1.0, "ratio": 5.0}.get(kind, 8.0) if written else (2.0 if kind == "rate" else 10.0)

            def stable(t: T, f=f, kind=kind, band=band) -> tuple[float, str]:  # noqa: ANN001
                v = [f(t, year) for year in (2021, 2022, 2023)]
                moves = [abs(b - a) if kind == "rate" else abs(b / a - 1) * 100 for a, b in itertools.pairwise(v)]
                return max(moves), "Yes" if max(moves) <= band else "No"

            out.append((tpl.format(co=CO, m=w, b=f"{band:g}"), stable))
        if kind in ("ratio", "rate"):
            for k, (tpl, test) in enumerate(LEVELS):
                if (n + k) % 2:
                    continue

                def level(t: T, f=f) -> tuple[float, str]:  # noqa: ANN001
                    return f(t, y), "No"  # the bar below is one the value misses

                bar_for = (lambda t, f=f, test=test: round(f(t, y) * (1.1 if test == ">=" else 0.9), 2))
                out.append((tpl, (level, bar_for, w)))  # type: ignore[arg-type]  (formatted in the test)
    for tpl, test in QUALITIES:
        def quality(t: T, test=test) -> tuple[float, str]:  # noqa: ANN001
            name, op, bar = test.rsplit(" ", 2)
            v = {"capex/revenue": lambda: abs(t("Capital expenditures", y)) / t("Total revenue", y) * 100,
                 "growth": lambda: (t("Total revenue", y) / t("Total revenue", p) - 1) * 100,
                 "net income": lambda: t("Net income", y), "operating income": lambda: t("Operating income", y),
                 "dividends": lambda: abs(t("Dividends paid", y)),
                 "ocf-net income": lambda: t("Net cash provided by operating activities", y) - t("Net income", y),
                 "operating-net income": lambda: t("Operating income", y) - t("Net income", y),
                 "debt": lambda: t("Long-term debt", y), "capex": lambda: abs(t("Capital expenditures", y))}[name]()
            ok = {">=": v >= float(bar), ">": v > float(bar), "<": v < float(bar)}[op]
            return v, "Yes" if ok else "No"

        out.append((tpl.format(co=CO, y=y), quality))
    return out


def test_generated_judgements_are_computed_with_their_side(pipeline, demo_truth, capsys) -> None:  # noqa: ANN001
    """Yes/no judgements of a metric, in the wordings analysts use (a direction, "increase or decrease", stability
    with and without a band written, a level against a bar written, a quality of the company), generated over the
    demo's metrics: the value the test is put to and the side are the generator's, or no side at all. A wrong side
    fails the test outright."""
    def t(metric: str, year: int) -> float:
        return truth(demo_truth, "HRBR", metric, year)

    tally: Counter[str] = Counter()
    wrong: list[str] = []
    abstained: list[str] = []
    cases = _judged_cases()
    assert len(cases) >= 40
    for question, expected in cases:
        if isinstance(expected, tuple):  # a level: the bar is set from the truth so that the value misses it
            f, bar_for, w = expected
            question = question.format(co=CO, m=w, y=2023, b=f"{bar_for(t):g}")
            want, side = f(t)
        else:
            want, side = expected(t)
        run = pipeline.run(question, store=False)
        assert run.llm_calls == 0, question
        if run.status != "answered" or run.answer.value is None:
            tally["abstained"] += 1
            abstained.append(f"{question} -> {run.answer.text[:160]}")
        elif run.answer.value == pytest.approx(want, rel=5e-3, abs=1e-6) and run.answer.text.startswith(f"{side}:"):
            tally["right"] += 1
        else:
            tally["wrong"] += 1
            wrong.append(f"{question} -> {run.answer.text}, want {side} {want:.4f}")
    with capsys.disabled():
        print(f"judgement suite {dict(tally)}")
        print("abstained:", *abstained, sep="\n  ")
    assert not wrong, "\n".join(wrong)
    assert tally["right"] >= 0.8 * len(cases), dict(tally)


# --- units by dimensional analysis, definitions -------------------------------------------------------------


def _plan(question: str):  # noqa: ANN202
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan

    return read_plan(parse_intent(question), load_catalogue())


@pytest.mark.parametrize(("tree", "unit"), [
    (PlanNode("div", args=(PlanNode("item", "revenue"), PlanNode("item", "total_assets"))), "ratio"),
    (PlanNode("percent", args=(PlanNode("div", args=(PlanNode("item", "revenue"), PlanNode("item", "cash"))),)),
     "percent"),
    (PlanNode("div", args=(PlanNode("mul", args=(PlanNode("number", value=365.0), PlanNode("item", "inventory"))),
                           PlanNode("item", "cost_of_revenue"))), "days"),
    (PlanNode("sub", args=(PlanNode("item", "revenue"), PlanNode("item", "cost_of_revenue"))), "USD"),
    (PlanNode("sub", args=(PlanNode("number", value=1.0), PlanNode("div", args=(PlanNode("item", "cash"),
                                                                                  PlanNode("item", "revenue"))))),
     "ratio"),
    (PlanNode("mul", args=(PlanNode("item", "cash"), PlanNode("item", "revenue"))), None),  # USD²: no answer's unit
])
def test_units_follow_the_expression(tree: PlanNode, unit: str | None) -> None:
    from engine.intent.reader import dimension_of

    assert dimension_of(tree, load_catalogue()).unit == unit


def test_an_amount_added_to_a_ratio_has_no_unit() -> None:
    from engine.intent.reader import DimensionError, dimension_of

    with pytest.raises(DimensionError):
        dimension_of(PlanNode("add", args=(PlanNode("item", "cash"), PlanNode("metric", "current ratio", (
            PlanNode("div", args=(PlanNode("item", "current_assets"), PlanNode("item", "current_liabilities"))),)))),
                     load_catalogue())


def test_every_catalogue_metric_has_the_unit_its_formula_makes() -> None:
    from engine.intent.reader import dimension_of, metric_node

    catalogue = load_catalogue()
    for name, metric in catalogue.metrics.items():
        assert dimension_of(metric_node(name, catalogue, {}), catalogue).unit == metric.unit, name


def test_a_ratio_asked_in_usd_millions_is_stated_as_a_ratio() -> None:
    plan = _plan("Define working capital ratio as total current assets divided by total current liabilities. What "
                 "is Acme's FY2020 working capital ratio in USD millions?")
    assert plan.status == "complete" and plan.unit == "ratio" and "USD millions" in plan.note


def test_a_definition_overrides_one_leaf_inside_a_catalogue_metric() -> None:
    """CCC = DIO + DSO − DPO from the catalogue; the question's DPO replaces the catalogue's DPO there only."""
    from engine.answer.from_facts import compiled

    plan = _plan("What was Acme's FY2023 cash conversion cycle? DPO is defined as 365 * average accounts payable / "
                 "(COGS + change in inventory).")
    assert plan.status == "complete" and plan.unit == "days"
    formula = compiled(plan.tree)[0]  # (the others: the cost of sales printed in two lines)
    assert "(cost_of_revenue + (inventory - inventory_1))" in formula  # the question's DPO
    assert formula.count("cost_of_revenue") == 2 and "receivables" in formula  # DIO and DSO as the catalogue's


def test_nested_definitions_are_read_in_order() -> None:
    from engine.answer.from_facts import compiled

    plan = _plan("What is Acme's FY2023 cash cycle score? Cash cycle score is defined as turns plus margin. Turns is "
                 "defined as revenue / total assets. Margin is defined as operating income / revenue.")
    assert plan.status == "complete" and plan.unit == "ratio", plan
    assert compiled(plan.tree) == ("((revenue / total_assets) + (operating_income / revenue))",)


def test_a_definition_fills_the_margin_it_names() -> None:
    from engine.answer.from_facts import compiled

    plan = _plan("What is the FY2021 - FY2023 3 year average unadjusted EBITDA % margin for Acme? Define unadjusted "
                 "EBITDA as unadjusted operating income + D&A + interest expense.")
    assert plan.status == "complete" and plan.unit == "percent" and plan.tree.kind == "average"
    assert plan.tree.backs == (0, 1, 2)
    assert all("interest_expense" in f for f in compiled(plan.tree))


@pytest.mark.parametrize(("question", "words"), [
    (("What was Acme's interest coverage ratio using FY2023 operating income as the numerator and interest expense "
      "as the denominator?"), "interest coverage ratio [as defined: (operating income / interest expense)]"),
    ("What was Acme's FY2023 interest coverage, with interest expense as the denominator and EBITDA as the numerator?",
     "interest coverage ratio [as defined: (ebitda / interest expense)]"),
    (("What was Acme's FY2023 current ratio (total current assets in the numerator, total current liabilities in "
      "the denominator)?"), "current ratio [as defined: (current assets / current liabilities)]"),
])
def test_a_ratio_written_by_its_roles_defines_the_asked_metric(question: str, words: str) -> None:
    plan = _plan(question)
    assert (plan.status, plan.words) == ("complete", words), plan


@pytest.mark.parametrize(("question", "words", "judge"), [
    ("Has Acme's leverage, measured by debt to equity, gone up in FY2023?",
     "change in leverage [as defined: debt to equity] over 1 year(s)", "up"),
    ("Did Acme's liquidity, measured by the current ratio, improve in FY2023?",
     "change in liquidity [as defined: current ratio] over 1 year(s)", "up"),
    # the question opens after the definition: the name it defines is the asked metric, as before
    ("Acme's cash conversion cycle, defined as DIO plus DSO minus DPO, what was it in FY2023?",
     ("Acme cash conversion cycle [as defined: ((days inventory outstanding + days sales outstanding) - days payable "
      "outstanding)]"), ""),
])
def test_a_definition_between_commas_defines_the_name_before_it(question: str, words: str, judge: str) -> None:
    plan = _plan(question)
    assert (plan.status, plan.words, plan.judge) == ("complete", words, judge), plan


def test_a_lexicon_form_that_looks_ahead_is_refused(tmp_path, monkeypatch) -> None:
    """The lexicon measures and orders its forms by their groups; a lookaround is none (it had hung the reader)."""
    from engine.errors import EngineError
    from engine.vocab import lexicon

    (tmp_path / "lexicon.toml").write_text('[[metric]]\nname = "x"\nforms = "equity(?! method)"\n', encoding="utf-8")
    monkeypatch.setattr(lexicon, "RESOURCES_DIR", tmp_path)
    with pytest.raises(EngineError, match="look ahead or behind"):
        lexicon._load_metrics()


def test_a_company_measure_in_a_definition_is_no_statement_metric() -> None:
    """"Using FY2023 Adjusted EBIT as the numerator": the company's own measure, which the statements do not give —
    the plan says so (the written answer reads the filing), never the GAAP EBIT in its place."""
    plan = _plan("What was Acme's interest coverage ratio using FY2023 Adjusted EBIT as the numerator and annual "
                 "interest expense as the denominator?")
    assert plan.status == "scope" and "Adjusted" in plan.scope, plan


def test_a_definition_ends_where_the_question_opens() -> None:
    """A definition written as an aside before the question ("…, defined as A plus B, what was …") is the
    expression up to the comma that opens the question: the rest is the asked phrase, not part of the definition."""
    from engine.answer.from_facts import compiled

    plan = _plan("Using the cash conversion cycle (CCC), defined as DIO plus DSO minus DPO, what was Acme's CCC in "
                 "FY2023?")
    assert plan.status == "complete" and plan.unit == "days" and plan.definitions == (
        "defined as DIO plus DSO minus DPO",), plan
    plan = _plan("With DSO defined as 365 times average receivables over revenue, how many days was Acme's DSO in "
                 "FY2023?")
    assert plan.status == "complete" and plan.unit == "days", plan
    (formula,) = compiled(plan.tree)
    assert "365" in formula and "receivables" in formula and "revenue" in formula


@pytest.mark.parametrize(("question", "months"), [
    ("What was Acme's year-to-date revenue through the third quarter of 2023?", 9),
    ("What was Acme's revenue for the first nine months of 2023?", 9),
    ("What was Acme's YTD revenue as of Q3 2023?", 9),
    ("What was Acme's revenue for the six months ended June 30, 2023?", 6),
    ("What was Acme's revenue in the first half of 2023?", 6),
    ("What was Acme's Q3 2023 revenue?", 0),
])
def test_a_year_to_date_is_a_period_not_a_word_of_the_metric(question: str, months: int) -> None:
    plan = _plan(question)
    assert plan.status == "complete" and not plan.unread and plan.flow_months == months, plan


@pytest.mark.parametrize(("question", "read"), [
    ("What is Acme's FY2023 revenue churn retention multiple?", False),
    ("What is Acme's FY2023 EBITDA to customer ratio?", False),
    ("What was Acme's FY2023 retention ratio (using total cash dividends paid and total assets)?", False),
    # question words, where-to-look clauses and unit asides are frame, not words of the metric
    ("Roughly how many times has Acme sold its inventory in FY2023? Calculate the inventory turnover ratio.", True),
    ("Using the balance sheet and the P&L statement, what is the FY2023 asset turnover ratio for Acme?", True),
    ("What is Acme's FY2023 net profit margin (as a percentage)?", True),
    ("What is the quantity of restructuring costs directly outlined in Acme's income statements for FY2023?", True),
    # instructions and the verbs of a share ("work out", "convert into"); a definition after "i.e."
    ("Using the income statement, work out Acme's FY2023 EBITDA margin (EBITDA = operating income + D&A).", True),
    ("What proportion of its FY2023 revenue did Acme convert into free cash flow?", True),
    ("Give me the dividend payout ratio for Acme in FY2023, i.e. dividends divided by net income.", True),
    ("What was Acme's total debt to equity at the end of FY2023?", True),
    ("How much did Acme spend on restructuring charges, as explicitly stated, in FY2023?", True),
    # the verbs of spending on a line ("invested in R&D"), and "levels" of a balance
    ("How much has Acme invested in research and development in FY2023?", True),
    ("What were Acme's inventory levels at the end of FY2023?", True),
    # a question word whose longer form lost its span to the metric ("how many days" beside "days of inventory")
    ("How many days of inventory did Acme hold in FY2023?", True),
    ("What was Acme's FY2023 gross profit per dollar of revenue?", True),
    ("How much did Acme return to shareholders in FY2023?", True),
    ("What was Acme's long-term debt to total capitalization at the end of FY2023?", True),
    # the verbs of a share and of earning ("represent", "make up", "make"), a line item's longer name
    ("What percent of Acme's FY2023 revenue did its net income represent?", True),
    ("What proportion of total assets did inventory make up for Acme in FY2023?", True),
    ("How much net income did Acme make in FY2023?", True),
    ("What were Acme's research, development and engineering expenses in FY2023?", True),
    # an aspect word on the metric is no frame ("SG&A efficiency" is not the SG&A expense); asked "how", it is
    ("What was Acme's SG&A efficiency in FY2023?", False),
    ("How leveraged was Acme at the end of FY2023 on a debt to equity basis?", True),
    # verbs of a share and of a move, a balance named by its heap
    ("What share of Acme's FY2023 revenue did R&D absorb?", True),
    ("How much did Acme's inventories swell in FY2023?", True),
    ("What was Acme's debt load at the end of FY2023?", True),
    ("How much did Acme pay in interest in FY2023?", True),
    ("How much operating cash flow did Acme produce in FY2023?", True),
    ("How much free cash flow did Acme throw off in FY2023?", True),
    # an analyst's shorthand and requests: "rev", "FYE", "I need … please", a closing "based on"
    ("Give me Acme's rev YoY growth for FY23.", True),
    ("What were Acme's total assets at FYE 2023?", True),
    ("I need Acme's net margin for fiscal 2023, please.", True),
    ("What's the payout ratio for Acme in FY2023 based on dividends paid?", True),
    ("What was Acme's return on assets in FY2023 based on revenue?", False),  # (revenue is no input of it)
    # a verb of profit or loss with no metric named: net income; with a word not read, nothing
    ("How much did Acme lose in FY2023?", True),
    ("How much did Acme earn in FY2023?", True),
    ("How much did Acme earn from iPhone sales in FY2023?", False),
    ("By how much did Acme's operating income outpace its net income in FY2023?", True),
    # a move compared with another metric's, but the other side is a year: not composed (no number for half of it)
    ("Did Acme's revenue grow faster in FY2023 than in FY2022?", False),
])
def test_a_metric_is_read_whole_or_gets_no_number_and_says_what_was_not_read(question: str, read: bool) -> None:
    from engine.intent.reader import unread_answer

    plan = _plan(question)
    if read:
        assert plan.status == "complete" and not plan.unread, plan
        return
    assert plan.status == "unread", plan
    answer = unread_answer(plan)
    assert answer.status == "not_answerable" and answer.value is None and "could not read" in answer.text


@pytest.mark.parametrize(("question", "inputs"), [
    ("How much cash did Acme return to shareholders through dividends and buybacks in FY2023?",
     {"dividends_paid", "share_repurchases"}),
    ("How much cash did Acme pay out to its shareholders in FY2023?", {"dividends_paid", "share_repurchases"}),
    ("How much did Acme return to shareholders via dividends in FY2023?", {"dividends_paid"}),
    ("How much did Acme return to its shareholders in the form of share buybacks in FY2023?", {"share_repurchases"}),
    ("How much did Acme pay out to shareholders as dividends in FY2023?", {"dividends_paid"}),
])
def test_the_parts_named_after_a_metric_are_what_is_summed(question: str, inputs: set[str]) -> None:
    """"Returned to shareholders through dividends": the parts named after the metric, each a part of it, are the
    amount asked (all of them: the metric); a part that is not of it leaves the question without a number."""
    from engine.answer.from_facts import compiled

    plan = _plan(question)
    assert plan.status == "complete" and not plan.unread, plan
    (formula,) = compiled(plan.tree)
    assert set(re.findall(r"[a-z_]+", formula)) == inputs, formula
    wrong = _plan("How much did Acme return to shareholders through capital expenditures in FY2023?")
    assert wrong.status == "unread" and "which it is not" in wrong.note, wrong


@pytest.mark.parametrize("question", ["What was Acme's revenue YoY growth in FY2023?",
                                      "What was Acme's YoY revenue growth in FY2023?",
                                      "What was Acme's year-over-year revenue growth in FY2023?"])
def test_a_growth_said_twice_is_one_growth(question: str) -> None:
    """"Revenue YoY growth": "YoY" and "growth" both say it; one growth of revenue, not the growth of its growth."""
    plan = _plan(question)
    assert plan.status == "complete" and plan.tree is not None, plan
    assert plan.tree.kind == "growth" and plan.tree.args[0].kind == "metric", plan.tree


def test_the_markets_value_of_the_shares_is_no_balance_sheet_amount() -> None:
    assert _plan("What was Acme's market capitalization at the end of FY2023?").status == "none"
    assert _plan("What was Acme's market cap at the end of FY2023?").status == "none"
    assert _plan("What was Acme's total capitalization at the end of FY2023?").status == "complete"


@pytest.mark.parametrize(("question", "judge", "bar"), [
    ("Is Acme's FY2023 current ratio above 1?", ">=", 1.0),  # ("1" is also the grammar's ONE)
    ("Was Acme's current ratio under one in FY2023?", "<=", 1.0),
    ("Did Acme's FY2023 revenue exceed its FY2022 revenue?", "up", None),
    ("Did Acme's operating margin widen in FY2023?", "up", None),
    ("Did Acme's gross margin narrow in FY2023?", "down", None),
    ("Has Acme's inventory built up in FY2023?", "up", None),
    # "cover": the one less the other, not below zero
    ("Did Acme's free cash flow cover its dividends in FY2023?", ">", 0.0),
    # a word of a direction and of an excess: another metric after it asks the excess, the same one the direction
    ("Did Acme's capex outpace its depreciation in FY2023?", ">", 0.0),
    ("Did Acme's FY2023 revenue surpass its FY2022 revenue?", "up", None),
    # a size written after a direction is the move's: an amount's growth, at or above (a fall: at or below minus it)
    ("Did Acme grow net income by more than 10% in FY2023?", ">=", 10.0),
    ("Did Acme's revenue fall by more than 5% in FY2023?", "<=", -5.0),
    ("Did Acme lose money in FY2023?", "<", 0.0),
    ("Did Acme's inventory turnover slow down in FY2023?", "down", None),
    # a comparison word with no second period is no direction: "above" what?
    ("Is Acme's FY2023 current ratio above average?", "", None),
])
def test_a_comparison_reads_a_bar_or_the_other_period_never_a_guess(question: str, judge: str,
                                                                     bar: float | None) -> None:
    plan = _plan(question)
    assert plan.judge == judge and plan.bar == bar, plan
    if judge:
        assert plan.status == "complete", plan
    if " by " in question:
        assert plan.tree is not None and plan.tree.kind == "growth", plan.tree


def test_a_multiple_of_the_earlier_value_is_judged_by_the_growth(pipeline, demo_truth) -> None:
    """"Did its revenue double", "more than triple", "less than double", "was it halved": the growth from the
    earlier year against (factor − 1) × 100, stated with the value; the side is the generator's figures'."""
    growth = (truth(demo_truth, "HRBR", "Total revenue", 2023) / truth(demo_truth, "HRBR", "Total revenue", 2022)
              - 1) * 100
    for question, test, bar in ((f"Did {CO}'s revenue double in FY2023?", ">=", 100.0),
                                (f"Did {CO}'s revenue more than triple in FY2023?", ">=", 200.0),
                                (f"Did {CO}'s revenue less than double in FY2023?", "<", 100.0),
                                (f"Was {CO}'s revenue halved in FY2023?", "<=", -50.0)):
        run = pipeline.run(question, store=False)
        assert run.status == "answered" and run.llm_calls == 0, (question, run.answer)
        assert run.answer.value == pytest.approx(growth, rel=1e-4), run.answer.text
        yes = {">=": growth >= bar, "<": growth < bar, "<=": growth <= bar}[test]
        assert run.answer.text.startswith("Yes" if yes else "No"), (question, run.answer.text)
        assert f" {bar:g}%" in run.answer.text and "times the earlier" in run.answer.text, run.answer.text


def test_an_amount_written_with_its_scale_is_that_many_dollars(pipeline, demo_truth) -> None:
    """"Did its revenue top $X billion", "above 1.2bn", "revenue minus $500 million": the number is read in the scale
    written after it (the answer's amounts are in USD millions), so a bar in billions is not compared as millions;
    comparatives with no other side ("did it take on more debt") are against the year before."""
    revenue = truth(demo_truth, "HRBR", "Total revenue", 2023)  # USD millions
    above, below = (revenue * 1.1) / 1000, (revenue * 0.9) / 1000  # in billions
    for bar, yes in ((above, False), (below, True)):
        for question in (f"Did {CO}'s FY2023 revenue top ${bar:.3f} billion?",
                         f"Was {CO}'s revenue above {bar:.3f}bn in FY2023?"):
            run = pipeline.run(question, store=False)
            assert run.status == "answered" and run.llm_calls == 0, (question, run.answer)
            assert run.answer.text.startswith("Yes" if yes else "No"), (question, run.answer.text)
            stated = run.answer.text.split("at or above ")[1]
            assert stated.split(" ", 1)[1].startswith("USD millions"), run.answer.text
            assert float(stated.split(" ")[0].replace(",", "")) == pytest.approx(bar * 1000, rel=1e-4), stated
    run = pipeline.run(f"What was {CO}'s FY2023 revenue minus $500 million?", store=False)
    assert run.answer.value == pytest.approx(revenue - 500, rel=1e-4), run.answer.text
    for question, side in ((f"Did {CO} book less revenue in FY2023?", "down"),
                           (f"Did {CO} take on more inventory in FY2023?", "up")):
        from engine.intent import parse_intent
        from engine.intent.reader import read_plan

        assert read_plan(parse_intent(question), load_catalogue()).judge == side, question
