"""Numbers from statement facts: a numeric question answered by the engine from the facts read at ingest, so
no model copies a digit.

:func:`plan_metric` resolves what the question asks for: the company's filings, the fiscal year, the catalogue
metric (:mod:`engine.vocab.catalogue`), and whether it asks for a growth rate. :func:`gather` is the
sufficiency check: for every (line item, fiscal year) a formula needs it finds the candidate facts and picks one
only when the choice is unambiguous (see :func:`pick`); what it cannot fill is a :class:`Gap`, named as the
analyst would ("3M FY2017 year-end inventories"). :func:`compute` runs the formula over the picked facts in the restricted
evaluator, scales the result as the question asks and returns the answer with every input (row, period, printed
value, scale, filing, page).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from itertools import product

from engine.answer.evaluator import ProgramFailed, ProgramRejected, run_program
from engine.answer.generate import NOT_ANSWERABLE
from engine.facts.tables import parent_only, primary_statement
from engine.intent.reader import asks_a_number, dimension_of, plan_words, read_plan
from engine.pages import cite
from engine.records import (
    AnswerResult,
    Citation,
    Computation,
    FactInputRef,
    FactsPayload,
    Filing,
    PlanNode,
    QueryIntent,
    StoredFact,
    annual_reports,
)
from engine.store.library import Library
from engine.vocab.catalogue import (
    Catalogue,
    LineItem,
    Metric,
    Term,
    formula_terms,
    python_formula,
    variable,
)
from engine.vocab.concepts import names_the_parent, printed_negated
from engine.vocab.lexicon import metric_spans
from engine.vocab.numbers import SCALE_FACTORS
from engine.wording import format_value

__all__ = ["FactInput", "FactPlan", "Gap", "Gathered", "compiled", "compute", "facts_answer", "facts_payload",
           "gap_facts", "gap_query", "gather", "not_reported", "pick", "plan_metric", "year_before"]

CHOSEN = "the model's choice among the rows printed"  # FactInput.found_by of a row the model chose


@dataclass(frozen=True)
class FactPlan:
    """What a numeric question asks of the facts."""

    company: str  # the issuer key
    filing_ids: tuple[int, ...]
    fiscal_year: int  # the latest year asked
    metric: Metric
    # value | growth (over ``span`` years, in %) | change (the difference over ``span`` years: an amount, or
    # percentage points of a rate) | cagr | average (of the metric over the years) | choice | series (the metric
    # in each of the ``span`` + 1 years; its value is the largest yearly move: points of a rate, else percent)
    mode: str = "value"
    span: int = 0  # years between the first year asked and ``fiscal_year``
    annual_years: dict[int, int] = field(default_factory=dict)  # filing id -> fiscal year, for its 10-Ks
    # A quarter asked ("Q2 FY2024"): the date its 10-Q's cover states as the period's end, and the months a flow
    # is read over (3, or 6/9 for "H1"/"nine months"); balances are read at that date. None: a fiscal year.
    quarter_end: str | None = None
    flow_months: int = 12
    # A quarter asked of a company with no 10-Q of it loaded, read from its earnings releases of that quarter
    # ("2023Q2"): their own columns of the quarter's months, the year asked and the year before (a release prints
    # no period end, so ``quarter_end`` is None)
    release_ids: tuple[int, ...] = ()
    quarter: str = ""
    # mode "choice": which of these amounts (``metric`` is the first) is the largest, or the smallest
    options: tuple[Metric, ...] = ()
    largest: bool = True
    # a yes/no question's judgement (MetricPlan.judge, .bar, .criterion): "up"/"down" of the change computed
    # ("either": which way), ">=", "<=", ">", "<" of the value against ``bar``, "band": every yearly move of a
    # series within ``bar``
    judge: str = ""
    bar: float | None = None
    criterion: str = ""
    note: str = ""  # what the answer must say of how the period was read (a 10-Q's year to date for its quarter)
    report_year: int = 0  # the annual report the question names ("in its FY2023 10-K"): its printings come first
    year_end: str = ""  # the company's fiscal year end ("06-30"), as its annual reports' covers state it

    @property
    def quarterly(self) -> bool:
        """A quarter (or its year to date) asked, not a fiscal year."""
        return self.quarter_end is not None or bool(self.release_ids)

    @property
    def period(self) -> str:
        """"FY2022", "FY2024 (3 months to 2023-07-29)", or "Q2 FY2023 (3 months, its earnings release)"."""
        if self.release_ids:
            return f"{self.quarter[4:]} FY{self.fiscal_year} ({self.flow_months} months, its earnings release)"
        if self.quarter_end is None:
            return f"FY{self.fiscal_year}"
        return f"FY{self.fiscal_year} ({self.flow_months} months to {self.quarter_end})"


@dataclass(frozen=True)
class FactInput:
    """One value of the formula: the term it fills and the fact it was read from."""

    term: Term
    item: LineItem
    fact: StoredFact | None  # None: an optional item the statement does not print (taken as 0)
    value: float  # in USD (scaled), sign as the formula takes it
    found_by: str = ""  # how the fact was chosen when its concept alone did not decide it
    why: str = ""  # why this printing over the line's others (from_facts.pick)

    def ref(self) -> FactInputRef:
        """The input as the trace and the answer record it."""
        s = self.fact
        if s is None:
            return FactInputRef(variable(self.term), self.item.words, None, value=self.value)
        f = s.fact
        return FactInputRef(variable(self.term), self.item.words, s.id, s.doc_name, f.page_index, s.chunk_id,
                            f.row, f.period.label, f.printed, f.scale, self.value, self.found_by,
                            s.printed_folio, self.why)


@dataclass(frozen=True)
class Gap:
    """A value the formula needs that the facts do not give unambiguously."""

    term: Term
    item: LineItem
    fiscal_year: int
    candidates: tuple[StoredFact, ...] = ()  # distinct values found: the choice is ambiguous
    period_end: str | None = None  # a quarter's end (FactPlan.quarter_end); None: the fiscal year's
    flow_months: int = 12
    quarter: str = ""  # a quarter read from its earnings release ("Q2"; FactPlan.release_ids)

    @property
    def when(self) -> str:
        """"FY2017 year-end", "FY2018", "as of 2023-07-29", "3 months to 2023-07-29", "Q2 FY2023 (3 months)"."""
        if self.quarter:
            return f"{self.quarter} FY{self.fiscal_year}" + (
                " quarter-end" if self.item.kind == "instant" else f" ({self.flow_months} months)")
        if self.period_end is not None:
            return (f"as of {self.period_end}" if self.item.kind == "instant"
                    else f"{self.flow_months} months to {self.period_end}")
        return f"FY{self.fiscal_year}" + (" year-end" if self.item.kind == "instant" else "")

    def describe(self, company: str) -> str:
        when = self.when
        doubt = f" ({len(self.candidates)} different values printed)" if self.candidates else ""
        return f"{company} {when} {self.item.words}{doubt}"


@dataclass
class Gathered:
    formula: str = ""  # the formula whose inputs were all found ("" when none)
    inputs: list[FactInput] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)  # of the first formula, when none could be filled
    parts: list[Gathered] = field(default_factory=list)  # a choice: each option's own, in the plan's order


def plan_metric(intent: QueryIntent, library: Library, catalogue: Catalogue, *,
                written: bool = False) -> FactPlan | None:
    """The plan for a numeric question about one company's fiscal year (or quarter), from the question reader's
    complete metric plan (:func:`engine.intent.reader.read_plan`; ``intent.plan`` when the pipeline read it
    already), or None when the question is not one the statement facts answer (the reader's status says why).
    ``written``: the plan of the metric a written question is about ("what drove the gross margin change"), to
    check that the company reports it (:func:`not_reported`)."""
    read = intent.plan if intent.plan is not None else read_plan(intent, catalogue)
    if read.status != "complete" or read.tree is None or len({q[4:] for q in intent.quarters}) > 1:
        return None  # (one quarter, or the same quarter of several years: "Q2 FY2023 against Q2 FY2022")
    if not asks_a_number(intent) and not read.choice and not read.judge and not written:
        return None
    years = sorted(set(intent.annual_years if intent.annual_years is not None else intent.fiscal_years))
    if intent.quarters:
        years = sorted({int(q[:4]) for q in intent.quarters})
    if not years:
        return None
    span = years[-1] - years[0]
    tree, mode = read.tree, "value"
    options: tuple[Metric, ...] = ()
    if read.choice and tree.backs:  # which of the years asked has the largest (smallest) value of one metric
        inner = tree.args[0]
        each = dimension_of(inner, catalogue).unit or read.unit
        words = plan_words(inner, catalogue)
        options = tuple(Metric(f"FY{years[-1] - b}", compiled(inner, b), each, f"FY{years[-1] - b} {words}")
                        for b in tree.backs)
        metric, mode = options[0], "choice"
    elif read.choice:
        options = tuple(Metric(o.name, compiled(o), "USD", catalogue.metrics[o.name].words) for o in tree.args)
        metric, mode = options[0], "choice"
    else:
        serial = read.judge in ("band", "rising", "falling") or read.judge.startswith("every")
        if serial and tree.kind == "average" and tree.backs == tuple(range(len(tree.backs))):
            mode, span, inner = "series", len(tree.backs) - 1, tree.args[0]
        elif tree.kind in ("change", "growth", "cagr") and tree.backs[0] == 0 and tree.backs[1] > 0:
            mode, span, inner = tree.kind, tree.backs[1], tree.args[0]
        elif tree.kind == "average" and tree.backs == tuple(range(len(tree.backs))) and len(tree.backs) > 2:
            mode, span, inner = "average", len(tree.backs) - 1, tree.args[0]
        else:
            inner = tree
        unit = read.unit if mode in ("value", "average", "change", "series") else dimension_of(inner, catalogue).unit
        name = inner.name if inner.kind == "metric" else "the question's metric"
        if mode == "value" and unit == "percent" and inner.kind == "sub" and all(
                dimension_of(a, catalogue).unit == "percent" for a in inner.args):
            unit = "percentage points"  # one rate less another ("SG&A growth less revenue growth"): in points
        metric = Metric(name, compiled(inner), unit or read.unit, plan_words(inner, catalogue))
        reach = max((t.back for f in metric.formulas for t in formula_terms(f)), default=0)
        if mode == "value" and span and reach < span:
            if len(years) != 2:
                return None  # one value asked at three or more years: a table of values, not one computation
            mode = "change"  # one value at two periods set side by side ("X in FY2022 compared to FY2021"): its
            # change, which the answer states with both values
    # one company, possibly filed under two keys ("AMAZON", "AMZN")
    filings = library.filings_of_companies(intent.issuers)
    registrants = {re.sub(r"[^a-z]", "", f.identity.registrant.lower()) for f in filings if f.identity.registrant}
    if not filings or (len(intent.issuers) > 1 and len(registrants) != 1):
        return None  # two companies named (not one under two keys): not one company's metric
    annual = annual_reports(filings)
    largest = read.choice != "smallest"
    if not intent.quarters:
        ends = Counter(f.identity.period_end[5:] for f in filings if f.id in annual and f.identity.period_end)
        return FactPlan(intent.issuers[0], tuple(f.id for f in filings), years[-1], metric, mode, span, annual,
                        options=options, largest=largest, judge=read.judge, bar=read.bar,
                        criterion=read.criterion, report_year=intent.report_year,
                        year_end=ends.most_common(1)[0][0] if ends else "")
    # a quarter: read at the end its own 10-Q's cover states (fiscal quarters end on the company's dates); the same
    # quarter a year before (a change, a growth) from that 10-Q's comparative column
    quarter = max(intent.quarters)
    tenq = {f.id: f.identity.period_end for f in filings
            if f.identity.period == quarter and f.identity.form == "10-Q" and f.identity.period_end}
    same = mode in ("value", "choice") and all(any(all(t.back == 0 for t in formula_terms(f)) for f in m.formulas)
                                               for m in options or (metric,))
    yoy = mode in ("change", "growth") and span == 1 and all(
        catalogue.items[t.item].kind == "duration" and (t.back == 0 or mode != "value")
        for f in metric.formulas for t in formula_terms(f))
    if not (same or yoy):
        return None  # an average or balances over quarters: not read here
    if len(set(tenq.values())) == 1:
        end = next(iter(tenq.values()))
        months, note = read.flow_months or 3, ""
        if not read.flow_months and (ytd := _to_date_only(library, tuple(tenq), end, options or (metric,), catalogue)):
            months, note = ytd, (f"the {quarter} 10-Q prints its {ytd_statements(options or (metric,), catalogue)} "
                                 f"for the {ytd} months to {end} only (year to date, as 10-Qs do): the figure is "
                                 f"of those {ytd} months, not of the quarter's 3")
        return FactPlan(intent.issuers[0], tuple(f.id for f in filings), years[-1], metric, mode, span,
                        dict.fromkeys(tenq, years[-1]), quarter_end=end, flow_months=months, options=options,
                        largest=largest, judge=read.judge, bar=read.bar, criterion=read.criterion, note=note)
    # no 10-Q of that quarter: its earnings releases, whose statements print the quarter beside the year before's
    releases = tuple(f.id for f in filings if f.identity.period == quarter and f.identity.form == "EARNINGS")
    if tenq or not releases:
        return None  # no filing of that quarter loaded, or its 10-Qs state two ends
    return FactPlan(intent.issuers[0], tuple(f.id for f in filings), years[-1], metric, mode, span,
                    dict.fromkeys(releases, years[-1]), flow_months=read.flow_months or 3, options=options,
                    largest=largest, judge=read.judge, bar=read.bar, criterion=read.criterion,
                    release_ids=releases, quarter=quarter)


_ANCHORS = {"balance sheet": "Assets", "cash flows": "NetCashProvidedByUsedInOperatingActivities",
            "income statement": "Revenues"}  # a row every such statement prints: it tells which columns were read


def _flow_statements(metrics: Sequence[Metric], catalogue: Catalogue) -> set[str]:
    return {catalogue.items[t.item].statement for m in metrics for f in m.formulas for t in formula_terms(f)
            if catalogue.items[t.item].kind == "duration"}


def ytd_statements(metrics: Sequence[Metric], catalogue: Catalogue) -> str:
    """The statements of the metrics' flows, as named in an answer ("cash flows")."""
    return " and ".join(sorted(_flow_statements(metrics, catalogue)))


def _to_date_only(library: Library, tenq: Sequence[int], end: str, metrics: Sequence[Metric],
                  catalogue: Catalogue) -> int:
    """The months of the year to date a quarter's 10-Q prints a flow of the metrics over, where one of their
    statements prints no column of the quarter's 3 months (a 10-Q's cash flow statement runs from the start of
    the fiscal year: "Nine Months Ended June 25, 2022"); 0 where each prints the quarter. Every flow of the answer
    is then read over those months, so a ratio does not set nine months against three."""
    longest = 0
    for statement in _flow_statements(metrics, catalogue):
        anchor = _ANCHORS.get(statement)
        if anchor is None:
            continue
        printed = {s.fact.period.months for s in library.facts(filing_ids=list(tenq), concepts=[anchor], end=end,
                                                                trailing=False)}
        if 3 not in printed and (longer := [m for m in printed if m and 3 < m < 12]):
            longest = max(longest, *longer)
    return longest


_MAX_FORMULAS = 8  # alternatives of one plan (a metric with two formulas inside another with two: four)


def compiled(node: PlanNode, back: int = 0) -> tuple[str, ...]:
    """A plan tree as formulas over line items at years back (``inventory_1``: a year before), one per choice of
    its metrics' formulas, in the catalogue's order; what :func:`gather` fills and :func:`compute` runs."""
    k = node.kind
    if k == "item":
        return (variable(Term(node.name, back)),)
    if k == "number":
        return (repr(node.value),)
    if k == "metric":
        return tuple(dict.fromkeys(f for a in node.args for f in compiled(a, back)))[:_MAX_FORMULAS]
    if k in ("add", "sub", "mul", "div"):
        op = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[k]
        return tuple(f"({a} {op} {b})" for a, b in product(compiled(node.args[0], back),
                                                             compiled(node.args[1], back)))[:_MAX_FORMULAS]
    if k == "percent":
        return tuple(f"({a}) * 100" for a in compiled(node.args[0], back))
    if k == "at":
        return compiled(node.args[0], back + node.backs[0])
    at = [compiled(node.args[0], back + b) for b in node.backs]
    if k == "average":
        return tuple(f"(({' + '.join(xs)}) / {len(xs)})" for xs in product(*at))[:_MAX_FORMULAS]
    span = node.backs[-1] - node.backs[0]
    forms = {"change": "({0} - {1})", "growth": "(({0}) / ({1}) - 1) * 100",
             "cagr": f"((({{0}}) / ({{1}})) ** (1 / {span}) - 1) * 100"}
    if k in forms:
        return tuple(forms[k].format(a, b) for a, b in product(at[0], at[-1]))[:_MAX_FORMULAS]
    raise ValueError(f"a plan node of kind {k!r} cannot be computed")


def gather(plan: FactPlan, library: Library, catalogue: Catalogue, *,
           chosen: dict[Term, StoredFact] | None = None,
           found: dict[Term, list[StoredFact]] | None = None) -> Gathered:
    """The sufficiency check: the first formula of the metric whose every term is found, with its inputs; else
    the gaps of the formula that came closest.

    Args:
        chosen: The fact that fills a term, chosen among its candidates (by the model, see
            :mod:`engine.answer.choose`); it is taken as it is.
        found: Candidates of a term the company's facts of its concepts lack, found by a complementary round
            among the rows of the pages it retrieved (:func:`gap_facts`).
    """
    if plan.mode == "choice":  # each option as its own value; the gaps of all
        parts = [gather(replace(plan, metric=o, mode="value", options=()), library, catalogue, chosen=chosen,
                        found=found) for o in plan.options]
        if any(p.gaps for p in parts):
            return Gathered("", [], [g for p in parts for g in p.gaps], parts)
        inputs = list({i.term: i for p in parts for i in p.inputs}.values())
        return Gathered("choice", inputs, [], parts)
    chosen, found = chosen or {}, found or {}
    best: Gathered | None = None
    for formula in plan.metric.formulas:
        if plan.quarterly and any(t.back for t in formula_terms(formula)):
            continue  # an average of balances over two year-ends: not a quarter's
        terms = tuple(dict.fromkeys(t for back in _backs(plan) for t in formula_terms(formula, back)))
        got = Gathered(formula)
        for term in terms:
            item = catalogue.items[term.item]
            year = plan.fiscal_year - term.back
            if term in chosen:
                got.inputs.append(FactInput(term, item, chosen[term], _value(chosen[term], item), CHOSEN))
                continue
            facts = _candidates(library, plan, item, year)
            how = ""
            if not facts and found.get(term):
                facts, how = found[term], "found by a complementary retrieval"
            fact, ambiguous, why = pick(facts, item, year, plan.annual_years, plan.report_year)
            if fact is not None and printed_negated(fact.fact.label, fact.fact.concept):
                why = "; ".join(w for w in (why, f"the row “{fact.fact.label}” prints {item.words} in parentheses: "
                                                  f"{fact.fact.printed} is read with its sign turned") if w)
            if fact is not None:
                got.inputs.append(FactInput(term, item, fact, _value(fact, item), how, why))
            elif item.optional and not ambiguous and _statement_read(library, plan, item, year):
                got.inputs.append(FactInput(term, item, None, 0.0))
            else:
                got.gaps.append(Gap(term, item, year, tuple(ambiguous), plan.quarter_end, plan.flow_months,
                                    plan.quarter[4:] if plan.release_ids else ""))
        if not got.gaps:
            return got
        if best is None or len(got.gaps) < len(best.gaps):
            best = got
    assert best is not None
    return Gathered("", [], best.gaps)


def gap_query(gaps: Sequence[Gap], company_name: str) -> str:
    """HiREC's complementary question built from what is missing: company, line items, statement, periods."""
    parts = []
    for g in gaps:
        when = (f"{g.quarter} {g.fiscal_year} quarter" if g.quarter else
                f"fiscal year {g.fiscal_year}" + (" year end" if g.item.kind == "instant" else "")
                if g.period_end is None else f"quarter ended {g.period_end}")
        parts.append(f"{g.item.words} {when} ({g.item.statement})")
    return f"{company_name} " + "; ".join(dict.fromkeys(parts))


def gap_facts(library: Library, gap: Gap, pages: Sequence[tuple[int, int]],
              names: Sequence[str] = ()) -> list[StoredFact]:
    """Rows on the retrieved pages (filing id, page index) that print the gap's line item for its period, in
    USD, of any concept (the rows the concept reading missed): a label that names the item as the intent
    lexicon knows it (``names``: its metrics, "Capital expenditures, net of construction payable" is capital
    expenditures), or holds every word of the item as filings print it."""
    words = set(re.findall(r"[a-z0-9]{2,}", gap.item.words.lower()))
    out: list[StoredFact] = []
    for filing_id, page_index in dict.fromkeys(pages):
        for s in library.facts(filing_ids=[filing_id], page_index=page_index, fiscal_year=gap.fiscal_year,
                               months=_months(gap.item, gap.flow_months), end=gap.period_end, trailing=False):
            label = s.fact.label
            if _in_unit(s, gap.item) and (set(_heads(label)) & set(names)
                                         or words <= set(re.findall(r"[a-z0-9]{2,}", label.lower()))):
                out.append(s)
    return out


# words a label may start with before the line it names ("Total net sales", "Less: cost of sales")
_LEAD = re.compile(r"^(?:\W|total\b|net\b|consolidated\b|less\b|add\b|plus\b|deduct\b)+", re.IGNORECASE)


def _heads(label: str) -> tuple[str, ...]:
    """The metrics a row's label is a line of: one the lexicon names at the label's head ("Capital expenditures, net
    of construction payable"), not inside it: "Other operating expenses" is no total of operating expenses,
    "Boeing Capital interest expense" not the company's interest expense."""
    return tuple(name for name, a, _ in metric_spans(label) if a == 0 or _LEAD.fullmatch(label[:a]))


def _backs(plan: FactPlan) -> tuple[int, ...]:
    """The years (back from the latest asked) the metric is computed for."""
    if plan.mode in ("growth", "cagr", "change"):
        return (0, plan.span)
    if plan.mode in ("average", "series"):
        return tuple(range(plan.span + 1))
    return (0,)


def _months(item: LineItem, flow_months: int = 12) -> list[int]:
    """A balance is read at the period's end (an instant), a flow over the period (the fiscal year's 12 months,
    or a quarter's 3 or year-to-date months)."""
    return [0] if item.kind == "instant" else [flow_months]


def _candidates(library: Library, plan: FactPlan, item: LineItem, year: int) -> list[StoredFact]:
    filings, end = list(plan.filing_ids), plan.quarter_end
    fiscal_year: int | None = year
    if plan.release_ids:  # the quarter's release: its column of the year asked, and of the year before
        filings = list(plan.release_ids)
    elif plan.quarter_end is not None:  # a quarter: its 10-Q's columns, known by the date they end, not by a year
        # (a column's year is its calendar year: Apple's fiscal Q1 2024 ends on 2023-12-30)
        fiscal_year = None
        if year != plan.fiscal_year:  # the same quarter a year before: the 10-Q's comparative column
            filings, end = list(plan.annual_years), None
    for concept in item.concepts:  # the first concept the company's statements print
        found = [s for s in library.facts(filing_ids=filings, concepts=[concept], fiscal_year=fiscal_year,
                                          months=_months(item, plan.flow_months), end=end, trailing=False)
                 if _in_unit(s, item) and (end is not None or fiscal_year is not None
                                              or year_before(s.fact.period.end, plan.quarter_end))
                 and (plan.quarterly or s.filing_id in plan.annual_years or _at_year_end(s, plan.year_end))]
        if found:
            return found
    return []


def _at_year_end(s: StoredFact, year_end: str) -> bool:
    """Whether a fact of a report other than an annual one (a 10-Q's column) ends at the company's fiscal year end
    ("06-30"; a week either way for a 52/53-week year): a 10-Q's column is dated by its calendar year, so Microsoft's
    September 30, 2023 balance is no FY2023 year-end figure, its June 30, 2023 comparative column is."""
    end = s.fact.period.end
    if not end or not year_end:
        return True  # (no date to tell by)
    try:
        at = date.fromisoformat(end)
        target = date(at.year, int(year_end[:2]), int(year_end[3:5]))
    except ValueError:
        return True
    return any(abs((at - target.replace(year=target.year + k)).days) <= 7 for k in (-1, 0, 1))


# a count of shares printed without a scale below this is printed in a scale the reader did not find ("5,601" under
# a page's "(millions, except per common share data)"): no registrant's weighted-average count is that small
_FEWEST_SHARES = 1e6


def _in_unit(s: StoredFact, item: LineItem) -> bool:
    """Whether a fact is printed in the item's unit (and, a count of shares, with a scale it can be read in)."""
    return s.fact.unit == item.unit and not (item.unit == "shares" and s.fact.scale is None
                                             and abs(s.fact.value) < _FEWEST_SHARES)


def year_before(end: str | None, quarter_end: str | None) -> bool:
    """Whether a column ending ``end`` is the same quarter a year before the one ending ``quarter_end`` (fiscal
    quarters end on a weekday: 52- and 53-week years move the day by up to a week)."""
    if end is None or quarter_end is None:
        return False
    return 357 <= (date.fromisoformat(quarter_end) - date.fromisoformat(end)).days <= 373


def _statement_read(library: Library, plan: FactPlan, item: LineItem, year: int) -> bool:
    """Whether the company's statement the item belongs on was read for that date (so a row it lacks is absent,
    not missed): its total assets (a balance sheet) or its net cash from operations (a cash-flow statement)."""
    anchor = _ANCHORS.get(item.statement, "Revenues")
    return bool(library.facts(filing_ids=list(plan.release_ids or plan.filing_ids), concepts=[anchor],
                              fiscal_year=None if plan.quarter_end else year,
                              months=_months(item, plan.flow_months), end=plan.quarter_end,
                              trailing=False,
                              limit=1))


def _rank(s: StoredFact, item: LineItem, year: int, filing_years: dict[int, int], report: int = 0
          ) -> tuple[int, ...]:
    """Better first: on the item's own statement, the consolidated company's rather than the parent company's alone
    (Schedule I), high confidence, printed in the primary statement under its own heading rather than a summary
    table that prints the same line (an MD&A's "Balance sheet and working capital measures"), from the annual
    report of that very fiscal year (the figure as first reported), then the next year's (its comparative
    column); where the question names an annual report (``report``: its fiscal year), that report's printing first
    (as it prints the year: restated or not); last, a statement titled consolidated rather than one that is not
    (a subsidiary's "Financial Position" in the MD&A: Boeing Capital's total assets beside Boeing's)."""
    fy = filing_years.get(s.filing_id)
    own = 0 if fy == year else 1 if fy == year + 1 else 2
    if report:
        own = 0 if fy == report else own + 1
    return (0 if s.fact.statement == item.statement else 1, 1 if parent_only(s.fact.title) else 0,
            0 if s.fact.confidence == "high" else 1, 0 if primary_statement(s.fact.title) else 1, own,
            0 if _CONSOLIDATED.search(s.fact.title) else 1)


_CONSOLIDATED = re.compile(r"\bconsolidated\b", re.IGNORECASE)


def pick(facts: Sequence[StoredFact], item: LineItem, year: int, filing_years: dict[int, int] | None = None,
         report: int = 0) -> tuple[StoredFact | None, list[StoredFact], str]:
    """The fact that fills an item for a fiscal year: of the best-ranked candidates (see :func:`_rank`), the one
    value they all print, or the one their total rows print, and why it was taken over the other printings
    ("" when it is the only one). Different values in the best rank (two rows of one statement mapped to the
    concept) are ambiguous: (None, one fact per value, "")."""
    if not facts:
        return None, [], ""
    years = filing_years or {}
    ranks = [_rank(s, item, year, years, report) for s in facts]
    top = min(ranks)
    best = [s for s, r in zip(facts, ranks) if r == top]
    values: dict[float, StoredFact] = {}
    for s in best:
        values.setdefault(round(_value(s, item), 2), s)
    if len(values) == 1:
        chosen = next((s for s in best if s.fact.is_total), best[0])
        return chosen, [], _why(chosen, facts, item, year, years, "", report)
    totals = [s for s in best if s.fact.is_total]
    if len({round(_value(s, item), 2) for s in totals}) == 1:
        return totals[0], [], _why(totals[0], facts, item, year, years, "the total row among rows of other values",
                                   report)
    owners = [s for s in best if names_the_parent(s.fact.label)]
    if len({round(_value(s, item), 2) for s in owners}) == 1:  # "Net income (loss)" 1,208 above "Net income (loss)
        # attributable to MGM Resorts International" 1,254, "Total shareholders' equity" beside "Total CVS Health
        # shareholders' equity": the company's own, not the total with its noncontrolling interests' share
        return owners[0], [], _why(owners[0], facts, item, year, years, "the row attributable to the company, not "
                                   "the consolidated total that includes noncontrolling interests", report)
    netted = [s for s in best if _NETTED.search(s.fact.label)]
    if len({round(_value(s, item), 2) for s in netted}) == 1 and len(netted) < len(best):  # "Accounts receivable" 25,332
        # above "Accounts receivable, net" 24,506: the line net of its allowance, as the balance sheet carries it
        return netted[0], [], _why(netted[0], facts, item, year, years, "the row net of its allowance, not the gross "
                                   "amount printed above it", report)
    return None, list(values.values()), ""


_NETTED = re.compile(r",?\s+net\s*$", re.IGNORECASE)


def _why(chosen: StoredFact, facts: Sequence[StoredFact], item: LineItem, year: int, filing_years: dict[int, int],
         lead: str, report: int = 0) -> str:
    """Why ``chosen`` fills the item rather than another printing of it, as an analyst checks it: which table it
    is (the primary statement, or a summary table when no statement prints it), which filing (the year's own
    report, or the next one's comparative column), and where else the figure is printed."""
    f = chosen.fact
    fy = filing_years.get(chosen.filing_id)
    if f.statement == item.statement and primary_statement(f.title) and not parent_only(f.title):
        where = f"the {item.statement} itself"
    elif f.statement == item.statement:
        where = f"a table read as the {item.statement} (\"{_short(f.title)}\"): no primary statement prints it"
    else:
        where = f"a table, \"{_short(f.title)}\": no {item.statement} row prints it"
    if fy is not None and fy != year and fy == report:
        where += f", from the FY{fy} report the question names (its comparative column)"
    elif fy is not None and fy != year:
        own = any(filing_years.get(s.filing_id) == year for s in facts)
        where += (f", from the FY{fy} report's comparative column (the FY{year} report prints it only in a summary "
                  "table)" if own else f", from the FY{fy} report's comparative column (no FY{year} report prints it)")
    here = (chosen.doc_name, f.page_index)
    others = {(s.doc_name, s.fact.page_index): s for s in facts  # the same period's printings elsewhere
              if (s.doc_name, s.fact.page_index) != here and s.fact.period.end == f.period.end}
    same = [s for s in others.values() if round(amount(s), 2) == round(amount(chosen), 2)]
    differ = [s for s in others.values() if round(amount(s), 2) != round(amount(chosen), 2)]
    if not same and not differ and not lead:
        return ""
    parts = [lead] if lead else []
    parts.append(where)
    if same:
        parts.append("the same figure is also printed on " + ", ".join(
            f"{cite(s.doc_name, s.fact.page_index, s.printed_folio)} (\"{_short(s.fact.title)}\")" for s in same[:3])
            + (f" and {len(same) - 3} more" if len(same) > 3 else ""))
    if differ:
        parts.append("other values printed for it: " + ", ".join(
            f"{s.fact.printed} on {cite(s.doc_name, s.fact.page_index, s.printed_folio)}" for s in differ[:3]))
    return "; ".join(parts)


def _short(title: str, width: int = 60) -> str:
    title = " ".join(title.split()) or "untitled"
    return title if len(title) <= width else title[: width - 1].rstrip() + "…"


def amount(s: StoredFact) -> float:
    """A fact's amount in its concept's sense: a row that prints the concept's opposite as positive ("Income tax
    (expense)/benefit") has its sign turned (:func:`~engine.vocab.concepts.printed_negated`)."""
    return -s.fact.scaled_value if printed_negated(s.fact.label, s.fact.concept) else s.fact.scaled_value


def _value(s: StoredFact, item: LineItem) -> float:
    value = amount(s)
    return abs(value) if item.magnitude else value


@dataclass(frozen=True)
class Computed:
    value: float  # in the answer's unit and scale
    unit: str  # "USD millions", "percent", "ratio", "days"
    program: str
    text: str  # the answer as the analyst reads it


def compute(plan: FactPlan, got: Gathered, unit_hint: str | None, decimals: int | None) -> Computed:
    """Run the gathered formula in the restricted evaluator and express the result as the question asks.

    Raises:
        ProgramFailed: the formula cannot be computed from these values (a division by zero).
    """
    at = {back: f"({python_formula(got.formula, back)})" for back in _backs(plan)}
    if plan.mode == "growth":
        expression = f"({at[0]} / {at[plan.span]} - 1) * 100"
    elif plan.mode == "cagr":
        expression = f"(({at[0]} / {at[plan.span]}) ** (1 / {plan.span}) - 1) * 100"
    elif plan.mode == "average":
        expression = f"({' + '.join(at.values())}) / {len(at)}"
    elif plan.mode == "change":
        expression = f"{at[0]} - {at[plan.span]}"
    elif plan.mode == "series" and plan.judge.startswith("every"):  # a level in every year: the worst year's value
        # (the lowest against "above", the highest against "below")
        expression = f"{'min' if '>' in plan.judge else 'max'}([{', '.join(at.values())}])"
    elif plan.mode == "series":  # the largest yearly move: in points of a rate, in percent of anything else; a
        # direction asked of every year: the smallest rise ("rising") or the smallest fall ("falling"), signed
        signed = plan.judge in ("rising", "falling")
        move = ("{0} - {1}" if plan.metric.unit == "percent" else "(({0}) / ({1}) - 1) * 100")
        if not signed:
            move = f"abs({move})"
        moves = ", ".join(move.format(at[b], at[b + 1]) for b in range(plan.span))
        expression = f"{'max' if plan.judge != 'rising' else 'min'}([{moves}])"
    else:
        expression = at[0]
    lines = [f"    {variable(i.term)} = {i.value!r}" for i in got.inputs]

    def run(expr: str) -> tuple[str, float]:
        program = "def solution():\n" + "\n".join(lines) + f"\n    return {expr}\n"
        try:
            value = run_program(program).value
        except ProgramRejected as exc:  # the catalogue's own formula: a bug, not the question's fault
            raise ProgramFailed(str(exc)) from exc
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProgramFailed(f"the formula gave {value!r}, not a number")
        return program, float(value)

    unit = "percent" if plan.mode in ("growth", "cagr", "series") else plan.metric.unit  # (series: a move's)
    scale = (unit_hint or "").removeprefix("USD ").strip()
    if scale not in SCALE_FACTORS:
        scale = "millions"

    def shown(value: float, unit: str = unit) -> tuple[float, str, str]:
        """A value as the answer states it: an amount in the scale asked (else USD millions)."""
        shown_unit = unit
        if unit == "USD":
            value, shown_unit = value / SCALE_FACTORS[scale], f"USD {scale}"
        return value, shown_unit, format_value(value, None if shown_unit == "ratio" else shown_unit, decimals)

    program, raw = run(expression)
    value, shown_unit, text = shown(raw)
    if plan.mode == "change":  # the difference, then the two values it is taken between
        (_, new), (_, old) = run(at[0]), run(at[plan.span])
        if unit == "percent":
            shown_unit, text = "percentage points", f"{value:.{2 if decimals is None else decimals}f} percentage points"
        text += f" (from {shown(old)[2]} in {_when(plan, plan.span)} to {shown(new)[2]} in {_when(plan, 0)})"
    if plan.mode == "series":  # each year's value, then the largest move between two of them
        years = [f"FY{plan.fiscal_year - b} {shown(run(at[b])[1], plan.metric.unit)[2]}"
                 for b in reversed(range(plan.span + 1))]
        moved = "percentage points" if plan.metric.unit == "percent" else "percent"
        shown_unit = "percentage points" if plan.metric.unit == "percent" else "percent"
        places = 2 if decimals is None else decimals
        if plan.judge.startswith("every"):  # each year's level; the worst of them decides, in the answer's scale
            value, shown_unit, said = shown(value, plan.metric.unit)
            text = f"{', '.join(years)}; the {'lowest' if '>' in plan.judge else 'highest'} {said}"
        elif plan.judge in ("rising", "falling"):  # every yearly move, signed (the series' own move)
            each = [run(move.format(at[b], at[b + 1]))[1] for b in reversed(range(plan.span))]
            text = f"{', '.join(years)}; the yearly moves {', '.join(f'{m:+.{places}f}' for m in each)} {moved}"
        else:
            text = f"{', '.join(years)}; the largest yearly move {value:.{places}f} {moved}"
    return Computed(value, shown_unit, program, text)


def _when(plan: FactPlan, back: int) -> str:
    """"FY2022"; of a quarter, "the 3 months to 2023-09-30" (or "of Q2 FY2023", from its release) and, a year
    before, "the same 3 months of FY2022"."""
    if plan.release_ids and back == 0:
        return f"the {plan.flow_months} months of {plan.quarter[4:]} FY{plan.fiscal_year}"
    if not plan.quarterly:
        return f"FY{plan.fiscal_year - back}"
    if back == 0:
        return f"the {plan.flow_months} months to {plan.quarter_end}"
    return f"the same {plan.flow_months} months of FY{plan.fiscal_year - back}"


def _choose(plan: FactPlan, got: Gathered, intent: QueryIntent) -> Computed:
    """A choice among amounts: each computed as its own value (signed: an outflow is below an inflow), the
    largest or smallest named last, with its value (the conclusion), after the others'."""
    values = [compute(replace(plan, metric=o, mode="value", options=()), part, intent.unit_hint, intent.decimals)
              for o, part in zip(plan.options, got.parts)]
    pick_ = (max if plan.largest else min)(range(len(values)), key=lambda k: values[k].value)
    others = "; ".join(f"{plan.options[k].words}: {values[k].text}" for k in range(len(values)) if k != pick_)
    which = "largest" if plan.largest else "smallest"
    text = f"{others[:1].upper()}{others[1:]}. The {which}: {plan.options[pick_].words}, {values[pick_].text}"
    program = "\n".join(f"# {o.words}\n{v.program}" for o, v in zip(plan.options, values))
    return Computed(values[pick_].value, values[pick_].unit, program, text)


def _passes(value: float, test: str, bar: float) -> bool:
    """Whether ``value`` passes a level's test (">=", "<=", ">", "<") against ``bar``."""
    return {">=": value >= bar, "<=": value <= bar, ">": value > bar, "<": value < bar}[test]


def _judged(plan: FactPlan, c: Computed) -> Computed:
    """A yes/no judgement stated with its values and its test: "Yes: gross margin rose by 1.30 percentage points
    (from 30.20% in FY2022 to 31.50% in FY2023); the test: 'improving' read as gross margin higher than the year
    before." The value stays the metric's computed one (the change, or the level)."""
    v = c.value
    moved = "rose by " if v > 0 else "fell by " if v < 0 else "was unchanged: "
    if plan.judge == "either":  # "did it increase or decrease": the direction is the answer, not a yes or a no
        side = "Increased" if v > 0 else "Decreased" if v < 0 else "Unchanged"
        said = f"{plan.metric.words} {moved}{c.text.removeprefix('-')}"
        return replace(c, text=f"{side}: {said}; the test: {plan.criterion}.")
    if plan.judge in ("up", "down"):
        ok = v > 0 if plan.judge == "up" else v < 0
        said = f"{plan.metric.words} {moved}{c.text.removeprefix('-')}"
    elif plan.judge == "band":
        assert plan.bar is not None
        ok = v <= plan.bar + 1e-9
        said = f"{plan.metric.words}: {c.text}"
    elif plan.judge in ("rising", "falling"):  # every yearly move in the direction: the smallest one decides
        ok = v > 0 if plan.judge == "rising" else v < 0
        said = f"{plan.metric.words}: {c.text}"
    elif plan.judge.startswith("every"):  # the level in every year: the worst year decides
        assert plan.bar is not None
        ok = _passes(v, plan.judge.removeprefix("every"), plan.bar)
        said = f"{plan.metric.words}: {c.text}"
    else:
        assert plan.bar is not None
        ok = _passes(v, plan.judge, plan.bar)
        what = {"growth": f"{plan.metric.words} growth over {plan.span} year(s)",
                "cagr": f"{plan.metric.words} compound annual growth over {plan.span} years"}.get(plan.mode,
                                                                                              plan.metric.words)
        said = f"{what} was {c.text} in {plan.period}"
    return replace(c, text=f"{'Yes' if ok else 'No'}: {said}; the test: {plan.criterion}.")


def not_reported(plan: FactPlan, library: Library, catalogue: Catalogue) -> AnswerResult | None:
    """The answer when the metric does not fit how the company reports, or None: every formula of the metric needs
    a line (``printed_as`` in the catalogue) that the company's statement of the asked year, read with at least
    ``_READ_ROWS`` rows, prints under no label ("gross margin" of a bank: no cost of sales, no gross profit). Said
    with the statement's page and some of its rows, so the analyst sees what it reports instead."""
    if plan.mode == "choice" or plan.quarterly:
        return None
    read: dict[tuple[str, str, int], list[StoredFact]] = {}

    def statement_rows(item: LineItem, year: int) -> list[StoredFact]:
        """The rows of the item's statement in the year's own annual report (read once per statement and year)."""
        key = (item.statement, item.kind, year)
        if key not in read:
            read[key] = [s for s in library.facts(filing_ids=list(plan.filing_ids), fiscal_year=year,
                                                  months=_months(item), trailing=False)
                         if s.fact.statement == item.statement and plan.annual_years.get(s.filing_id) == year]
        return read[key]

    absent: dict[str, tuple[LineItem, int]] = {}
    for formula in plan.metric.formulas:
        lacking = None
        for back in _backs(plan):
            for term in formula_terms(formula, back):
                item = catalogue.items[term.item]
                year = plan.fiscal_year - term.back
                if item.printed_as is None or item.optional:
                    continue
                rows = statement_rows(item, year)
                labels = {s.fact.label for s in rows}
                if len(labels) < _READ_ROWS or any(item.printed_as.search(label) for label in labels) or any(
                        s.fact.concept in item.concepts for s in rows):
                    continue
                lacking = (item, year)
                break
            if lacking:
                break
        if lacking is None:
            return None  # a formula whose lines the statements do print (or that cannot be told)
        absent.setdefault(lacking[0].name, lacking)
    items = list(absent.values())
    item, year = items[0]
    rows = statement_rows(item, year)
    by_page: dict[tuple[int, int], list[StoredFact]] = {}
    for r in rows:
        by_page.setdefault((r.filing_id, r.fact.page_index), []).append(r)
    page_rows = max(by_page.values(), key=lambda rs: len({r.fact.label for r in rs}))
    first = page_rows[0]
    shown = list(dict.fromkeys(r.fact.label for r in sorted(page_rows, key=lambda r: not r.fact.is_total)))
    who = next((f.identity.registrant for f in library.filings([first.filing_id]) if f.identity.registrant),
               plan.company)
    lines = " or ".join(i.words for i, _ in items)
    text = (f"{plan.metric.name[:1].upper()}{plan.metric.name[1:]} is not a meaningful measure for {who} "
            f"as it reports: it needs {lines}, and its {item.statement} for FY{year} "
            f"({cite(first.doc_name, first.fact.page_index, first.printed_folio)}) prints no such line. Its rows "
            f"include: "
            f"{'; '.join(shown[:8])}{' …' if len(shown) > 8 else ''}.")
    cited = (Citation(1, first.chunk_id, first.doc_name, first.fact.page_index, first.fact.row,
                      first.printed_folio),) if first.chunk_id is not None else ()
    return AnswerResult("answered", text, method="facts", citations=cited,
                        reason=f"not reported: {who}'s {item.statement} prints no {lines}")


_READ_ROWS = 8  # a statement read with fewer rows may be a summary or a misread table: no absence is claimed


def _listing(words: Sequence[str]) -> str:
    """"a, b and c"."""
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def facts_payload(plan: FactPlan, got: Gathered, query: str = "") -> FactsPayload:
    """The trace of one sufficiency check: every input found and every gap still open."""
    what = {"value": plan.metric.words, "growth": f"the change in {plan.metric.words} over {plan.span} year(s)",
            "change": f"the difference in {plan.metric.words} between {_when(plan, plan.span)} and "
                      f"{_when(plan, 0)}",
            "cagr": f"the compound annual growth of {plan.metric.words} over {plan.span} years",
            "average": f"the {plan.span + 1}-year average of {plan.metric.words}",
            "series": f"{plan.metric.words} in each year from FY{plan.fiscal_year - plan.span} to FY{plan.fiscal_year}",
            "choice": f"which of {_listing([o.words for o in plan.options])} is the "
                      f"{'largest' if plan.largest else 'smallest'}"}[plan.mode]
    if plan.release_ids:
        what += (f" for {plan.quarter[4:]} FY{plan.fiscal_year} ({plan.flow_months} months), from its earnings "
                 "release (no 10-Q of the quarter is loaded)")
    elif plan.quarter_end is not None:
        what += f" for the {plan.flow_months} months to {plan.quarter_end}"
    return FactsPayload(plan.company, plan.fiscal_year, plan.metric.name, plan.mode, what,
                        tuple(i.ref() for i in got.inputs), tuple(g.describe(plan.company) for g in got.gaps), query)


def facts_answer(plan: FactPlan, got: Gathered, intent: QueryIntent) -> AnswerResult:
    """The answer the sufficiency check gives: computed from the facts when every input is found, else not
    answerable, naming what is missing (never a number the engine cannot trace to a cell)."""
    payload = facts_payload(plan, got)
    refs, gaps, what = payload.inputs, payload.gaps, payload.formula
    if gaps:
        text = f"{NOT_ANSWERABLE}: missing {'; '.join(gaps)}"
        return AnswerResult("not_answerable", text, method="facts", reason=f"missing {'; '.join(gaps)}")
    try:
        if plan.mode == "choice":
            c = _choose(plan, got, intent)
        else:
            c = compute(plan, got, intent.unit_hint, intent.decimals)
        if plan.judge:
            c = _judged(plan, c)
    except ProgramFailed as exc:
        return AnswerResult("not_answerable", f"{NOT_ANSWERABLE}: {exc}", method="facts", reason=str(exc))
    citations: list[Citation] = []
    for ref in refs:
        if ref.fact_id is not None and ref.chunk_id is not None and all(
                (x.doc_name, x.page_index) != (ref.doc_name, ref.page_index) for x in citations):
            citations.append(Citation(len(citations) + 1, ref.chunk_id, ref.doc_name, ref.page_index, ref.row,
                                      ref.printed_folio))
    inputs = "\n".join(f"- {ref.variable} = {ref.item}: {ref.describe()}" for ref in refs)
    model = any(i.found_by == CHOSEN for i in got.inputs)
    how = "the model choosing rows, the engine computing" if model else "without a model call"
    return AnswerResult(
        "answered", c.text, c.value, c.unit, method="facts", citations=tuple(citations), program=c.program,
        reason=plan.note,
        computed=Computation(c.value, {ref.variable: ref.value for ref in refs}), inputs=refs,
        reasoning=f"{plan.company} {plan.period}: {what}, computed from statement facts {how}.\n{inputs}")
