"""The figures an answer step may compute with, as compact numbered lines: the statement facts printed in the
passages it reads, and the figures their text prints.

A table passage flattened to text is where a small model copies the wrong column or drops a digit. The facts
read at ingest hold the same cells with their row, period, scale and unit, so the answer step is given them as
lines (``F3 [2] Revenues | FY2022 | 7,003 (USD millions)``); a figure the text prints outside a statement table
("we operated 838 stores") is a line too, with the words around it (``F9 [4] text: …we operated [838] stores…
| 838``). A numeric answer names the lines its formula uses (:mod:`engine.answer.fact_formula`) and the engine
fills their values: no model types a digit. A written answer quotes the facts.

Only lines a question can use are listed, within a budget: facts of the years it asks for (and the year before,
for changes) and printed figures, whose row or words share a word or a metric with the question.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from engine.facts.figures import PrintedFigure, figures_of
from engine.intent.wordlists import item_words
from engine.records import Passage, QueryIntent, StoredFact
from engine.store.library import Library
from engine.vocab.lexicon import find_metrics

__all__ = ["FactLine", "passage_facts", "passage_figures", "passage_lines", "render_fact_lines"]



@dataclass(frozen=True)
class FactLine:
    """One line as a prompt numbers it (``id`` from 1), with the passage (numbered from 1) printing it: a
    statement fact (``stored``) or a figure of the passage's text (``figure``)."""

    id: int
    passage_id: int
    stored: StoredFact | None = None
    figure: PrintedFigure | None = None

    @property
    def value(self) -> float:
        """The value a formula takes: scaled to units (USD, shares, a count), a percent as printed."""
        return self.stored.fact.scaled_value if self.stored else self._figure.scaled_value

    @property
    def unit(self) -> str:
        return self.stored.fact.unit if self.stored else self._figure.unit

    @property
    def scale(self) -> str | None:
        return self.stored.fact.scale if self.stored else self._figure.scale

    @property
    def fiscal_year(self) -> int | None:
        """The fiscal year of a fact's column; None for a figure of the text (its sentence says which)."""
        return self.stored.fact.period.fiscal_year if self.stored else None

    @property
    def period(self) -> str:
        return self.stored.fact.period.label if self.stored else "as the text says"

    @property
    def words(self) -> str:
        """What the line shows of its figure: a fact's row, a printed figure's surrounding words."""
        if self.stored:
            return f"{self.stored.fact.parent} {self.stored.fact.row}"
        return self._figure.context

    @property
    def names(self) -> str:
        """What the figure is of: a fact's row, the words of a printed figure's own clause (a row's label)."""
        return self.words if self.stored else self._figure.clause

    @property
    def _figure(self) -> PrintedFigure:
        assert self.figure is not None
        return self.figure

    def render(self) -> str:
        if self.stored is None:
            f = self._figure
            unit = {"USD/share": "USD per share", "%": "percent"}.get(f.unit, f.unit) + (f" {f.scale}" if f.scale else "")
            return f"F{self.id} [{self.passage_id}] text: {f.context} | {f.printed} ({unit})"
        fact = self.stored.fact
        unit = {"USD/share": "USD per share"}.get(fact.unit, fact.unit)
        scale = f" {fact.scale}" if fact.scale and fact.unit in ("USD", "shares") else ""
        return f"F{self.id} [{self.passage_id}] {fact.row} | {fact.period.label} | {fact.printed} ({unit}{scale})"


def _score(s: StoredFact, words: set[str], metrics: set[str]) -> int:
    """How much of the question a fact's row names: a metric of the question (2), each shared word (1)."""
    f = s.fact
    row = f"{f.parent} {f.label}"
    return 2 * len(set(find_metrics(row)) & metrics) + len(item_words(row) & words)


def passage_facts(library: Library, passages: Sequence[Passage], intent: QueryIntent,
                  limit: int) -> tuple[FactLine, ...]:
    """The facts printed inside ``passages`` that the question can use, at most ``limit``, numbered in passage
    and reading order. A fact counts when its period is a fiscal year the question asks for or the year before
    (any year when it asks for none) and its row shares a metric or a word with the question; the same value of
    the same row and period printed twice (a statement and its comparative) is listed once.

    A column whose headers print a year but not the period's length is a fiscal year in an annual report; in an
    interim report or a release it may be a quarter or a year to date, so such a fact is not listed for a
    question that names its years (it would answer another period's question)."""
    if limit <= 0 or not passages:
        return ()
    years = set(intent.fiscal_years) | {y - 1 for y in intent.fiscal_years}
    words, metrics = set(intent.item_words), set(intent.metrics)
    scored: list[tuple[int, int, StoredFact]] = []
    seen: set[tuple[str, str, float]] = set()
    annual = {f.id: f.identity.form == "10-K" for f in library.filings(sorted({p.chunk.filing_id for p in passages}))}
    for pid, p in enumerate(passages, start=1):
        c = p.chunk
        for s in library.facts(filing_ids=[c.filing_id], page_index=c.page_index):
            f = s.fact
            if s.chunk_id != c.id or (years and f.period.fiscal_year not in years):
                continue
            if years and f.period.months is None and not annual[c.filing_id]:
                continue  # a year of unstated length in an interim report: the asked year's figure or not
            key = (f.row.lower(), f.period.label, round(f.scaled_value, 6))
            score = _score(s, words, metrics)
            if score and key not in seen:
                seen.add(key)
                scored.append((score, pid, s))
    best = sorted(scored, key=lambda x: -x[0])[:limit]
    ordered = sorted(best, key=lambda x: (x[1], x[2].fact.char_start))
    return tuple(FactLine(i, pid, s) for i, (_, pid, s) in enumerate(ordered, start=1))


def passage_figures(passages: Sequence[Passage], intent: QueryIntent, limit: int, listed: Sequence[FactLine] = (),
                    cells: Collection[tuple[int, float]] = ()) -> tuple[FactLine, ...]:
    """The figures the passages' text prints that the question can use, at most ``limit``, numbered after
    ``listed`` (the facts already listed), those whose words share the most with the question first, then in
    passage and reading order (a small model reads a long list from the top). A figure counts when the words
    around it share a word or a metric with the question, and it is not a statement cell: one of ``listed`` or of
    ``cells`` ((passage id, value as printed) of every fact the passages print — a cell of a year the facts were
    not listed for stays unlisted, not offered again as text)."""
    if limit <= 0 or not passages:
        return ()
    words, metrics = set(intent.item_words), set(intent.metrics)
    facts = {(line.passage_id, round(line.stored.fact.value, 6)) for line in listed if line.stored}
    facts |= {(pid, round(v, 6)) for pid, v in cells}
    scored: list[tuple[int, int, int, PrintedFigure]] = []
    for pid, p in enumerate(passages, start=1):
        for at, figure in figures_of(p.prompt_text()):
            if (pid, round(figure.value, 6)) in facts:
                continue
            score = 2 * len(set(find_metrics(figure.context)) & metrics) + len(item_words(figure.context) & words)
            if score:
                scored.append((score, pid, at, figure))
    ordered = sorted(scored, key=lambda x: (-x[0], x[1], x[2]))[:limit]
    return tuple(FactLine(i, pid, figure=f) for i, (_, pid, _, f) in enumerate(ordered, start=len(listed) + 1))


def passage_lines(library: Library, passages: Sequence[Passage], intent: QueryIntent, limit: int, *,
                  facts: bool = True) -> tuple[FactLine, ...]:
    """The lines an answer step is given: the statement facts (when ``facts``), then the printed figures in what
    the budget leaves, and in a third of it more at least (a figure only the text states is always offered)."""
    listed = passage_facts(library, passages, intent, limit) if facts else ()
    cells: set[tuple[int, float]] = set()
    if facts:
        for pid, p in enumerate(passages, start=1):
            c = p.chunk
            cells |= {(pid, s.fact.value) for s in library.facts(filing_ids=[c.filing_id], page_index=c.page_index)
                      if s.chunk_id == c.id}
    return listed + passage_figures(passages, intent, max(limit - len(listed), limit // 3), listed, cells)


def fenced(title: str, lines: Sequence[str]) -> str:
    """Lines a prompt shows as quoted data under a title ("" when there are none); a fence inside is broken."""
    if not lines:
        return ""
    body = "\n".join(lines).replace("<<<", "< < <").replace(">>>", "> > >")
    return f"{title}:\n<<<\n{body}\n>>>"


def render_fact_lines(lines: Sequence[FactLine]) -> str:
    """The block an answer prompt shows after its passages ("" when there are none)."""
    return fenced("Figures of these passages (id, [passage], then a statement fact's row | period | value as "
                  "printed, or a figure of the text in its words: `text: …[figure]… | figure`)",
                  [line.render() for line in lines])
