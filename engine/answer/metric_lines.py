"""Catalogue metrics computed from the statement facts for a textual or mixed question ("Does Adobe have an
improving operating margin profile as of FY2022?", "How does Boeing's effective tax rate in FY2022 compare to
FY2021?"): the engine does the arithmetic the chain-of-thought answer would otherwise do (a 1.5B model divides
6,098 by 17,606 and writes 6.098 %), and the answer step quotes the results.

For each company the question names and each catalogue metric it names, the metric is computed for every fiscal
year it asks for and the year before the first (a trend or a comparison needs it), each with the same
sufficiency check as a numeric answer from facts (:func:`engine.answer.from_facts.gather`): a metric with an
input missing or ambiguous is left out, never guessed. A figure of the answer that equals a computed value counts
as grounded (the inputs are cells of the statements, named in the line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.answer.evaluator import ProgramFailed
from engine.answer.fact_lines import fenced
from engine.answer.from_facts import FactPlan, compute, gather
from engine.pages import cite
from engine.records import FactInputRef, QueryIntent, annual_reports
from engine.store.library import Library
from engine.vocab.catalogue import Catalogue, Metric

__all__ = ["MetricLine", "computed_metrics", "render_metric_lines"]


@dataclass(frozen=True)
class MetricLine:
    """One metric of one company and fiscal year, computed from the facts, as a prompt numbers it (M1, M2 …)."""

    id: int
    company: str
    metric: str
    period: str
    value: float  # in ``unit`` (percent, ratio, days, USD millions …)
    unit: str
    text: str  # the value as the answer should state it ("34.60%")
    inputs: tuple[str, ...]  # "Operating income 6,098 millions (ADOBE_2022_10K p. 54)"

    def render(self) -> str:
        return f"M{self.id} {self.company} | {self.metric} | {self.period} | {self.text} = " + "; ".join(self.inputs)


def _metrics(intent: QueryIntent, catalogue: Catalogue) -> list[Metric]:
    """The catalogue metrics the question names: the one the numeric path would read, then each other named one."""
    out: dict[str, Metric] = {}
    combined = catalogue.metric_for(intent.metrics, relative=intent.share, margin=intent.margin)
    if combined is not None:
        out[combined.name] = combined
    for name in intent.metrics:
        if name in catalogue.metrics:
            out.setdefault(name, catalogue.metrics[name])
    return list(out.values())


def computed_metrics(library: Library, intent: QueryIntent, catalogue: Catalogue,
                     limit: int = 8) -> tuple[MetricLine, ...]:
    """The metrics a question names, computed for its companies and fiscal years (and the year before); () for a
    question about a quarter, about no company, or that names no year or no catalogue metric."""
    years = sorted(set(intent.annual_years if intent.annual_years is not None else intent.fiscal_years))
    metrics = _metrics(intent, catalogue)
    if intent.quarters or not intent.issuers or not years or not metrics or limit <= 0:
        return ()
    years = [years[0] - 1, *years]
    lines: list[MetricLine] = []
    for issuer in intent.issuers:
        filings = library.filings_of_companies([issuer])
        annual = annual_reports(filings)
        name = next((f.identity.registrant for f in filings if f.identity.registrant), issuer)
        for metric in metrics:
            before: MetricLine | None = None
            for year in years:
                plan = FactPlan(issuer, tuple(f.id for f in filings), year, metric, "value", 0, annual)
                got = gather(plan, library, catalogue)
                if got.gaps:
                    before = None
                    continue
                try:
                    c = compute(plan, got, None, None)
                except ProgramFailed:
                    before = None
                    continue
                inputs = tuple(_input(i.ref()) for i in got.inputs)
                line = MetricLine(len(lines) + 1, name, metric.words, plan.period, c.value, c.unit, c.text, inputs)
                lines.append(line)
                if before is not None:  # the change from the year before, stated (a small model swaps the years)
                    lines.append(_change(len(lines) + 1, before, line))
                before = line
                if len(lines) >= limit:
                    return tuple(lines[:limit])
    return tuple(lines)


def _change(number: int, a: MetricLine, b: MetricLine) -> MetricLine:
    """The change of a metric from one year's line to the next year's: its difference (percentage points for a
    rate) and its direction."""
    delta = b.value - a.value
    unit = "percentage points" if a.unit == "percent" else a.unit
    direction = "an increase" if delta > 0 else "a decrease" if delta < 0 else "no change"
    amount = f"{delta:+,.2f}" if unit != "ratio" else f"{delta:+.4f}"
    text = f"{amount} {unit} ({direction})" if unit != "ratio" else f"{amount} ({direction})"
    return MetricLine(number, a.company, a.metric, f"{a.period} → {b.period}", delta, unit, text,
                      (f"M{b.id} − M{a.id}",))


def _input(ref: FactInputRef) -> str:
    """An input as a metric line names it: "Operating income 6,098 millions (ADOBE_2022_10K p. 54)"."""
    if ref.fact_id is None:
        return f"{ref.item} 0 (not printed on the statement)"
    scale = f" {ref.scale}" if ref.scale else ""
    row = ref.row.rsplit(" › ", 1)[-1]
    return f"{row} {ref.printed}{scale} ({cite(ref.doc_name, ref.page_index, ref.printed_folio)})"


def render_metric_lines(lines: Sequence[MetricLine]) -> str:
    """The block an answer prompt shows after the passages' facts ("" when there are none)."""
    return fenced("Metrics the engine computed from the statement facts (exact; state these values as they are, do "
                  "not recompute them; each names the statement cells it was computed from)",
                  [line.render() for line in lines])
