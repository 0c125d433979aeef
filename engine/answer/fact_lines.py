"""The statement facts printed in the passages an answer step reads, as compact numbered lines.

A table passage flattened to text is where a small model copies the wrong column or drops a digit. The facts
read at ingest hold the same cells with their row, period, scale and unit, so the answer step is also given
them as lines (``F3 [2] Revenues | FY2022 | 7,003 USD millions``): a textual answer quotes exact figures, and a
numeric one names the facts its formula uses (:mod:`engine.answer.fact_formula`) instead of typing digits.

Only the facts a question can use are listed, within a budget: those of the years it asks for (and the year
before, for changes), whose row shares a word or a metric with the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.intent.lexicon import find_metrics
from engine.records import Passage, QueryIntent, StoredFact
from engine.store.library import Library

__all__ = ["FactLine", "passage_facts", "render_fact_lines"]

_WORD = re.compile(r"[a-z]{3,}")
# words of a question that name no line item
_STOP = frozenset("""the and for what was were are has have had did does its their this that with from total
amount value company companys fiscal year years fy based using year-end end ended ending per cent percent
percentage usd millions billions thousands dollars round answer give response question statement statements
shown details relying calculate calculated compute computed between change ratio rate""".split())


@dataclass(frozen=True)
class FactLine:
    """One fact as a prompt numbers it (``id`` from 1), with the passage (numbered from 1) printing it."""

    id: int
    passage_id: int
    stored: StoredFact

    def render(self) -> str:
        f = self.stored.fact
        unit = {"USD/share": "USD per share"}.get(f.unit, f.unit)
        scale = f" {f.scale}" if f.scale and f.unit in ("USD", "shares") else ""
        return f"F{self.id} [{self.passage_id}] {f.row} | {f.period.label} | {f.printed} ({unit}{scale})"


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _score(s: StoredFact, words: set[str], metrics: set[str]) -> int:
    """How much of the question a fact's row names: a metric of the question (2), each shared word (1)."""
    f = s.fact
    row = f"{f.parent} {f.label}"
    return 2 * len(set(find_metrics(row)) & metrics) + len(_words(row) & words)


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
    words, metrics = _words(intent.question), set(intent.metrics)
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


def fenced(title: str, lines: Sequence[str]) -> str:
    """Lines a prompt shows as quoted data under a title ("" when there are none); a fence inside is broken."""
    if not lines:
        return ""
    body = "\n".join(lines).replace("<<<", "< < <").replace(">>>", "> > >")
    return f"{title}:\n<<<\n{body}\n>>>"


def render_fact_lines(lines: Sequence[FactLine]) -> str:
    """The block an answer prompt shows after its passages ("" when there are none)."""
    return fenced("Facts read from the statement tables of these passages (id, [passage], row | period | value as "
                  "printed)", [line.render() for line in lines])
