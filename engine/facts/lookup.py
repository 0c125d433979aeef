"""Find stored statement facts: by company, period, page and what the row is called.

A label is found three ways, fused by reciprocal rank: its words (SQLite FTS5 over label, parent heading and
table title, Porter-stemmed: "expenditure" finds "Expenditures"), its meaning (the library's embedder over the
distinct labels that pass the filters, so "capital expenditure" finds "Purchases of property, plant and
equipment"), and its us-gaap concept (:func:`engine.vocab.concepts.concept_of_query`): rows of the concept the
query names come first, then the fusion of the other two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from engine.models.base import Embedder
from engine.pages import cite
from engine.records import StoredFact
from engine.retrieval.fusion import rrf
from engine.retrieval.search import MetadataFilter, filter_filings
from engine.store.library import Library
from engine.vocab.concepts import concept_of_query

_FY = re.compile(r"^(?:FY|fiscal\s*)?((?:19|20)\d\d)$", re.IGNORECASE)
_DATE = re.compile(r"^((?:19|20)\d\d)-(\d\d)-(\d\d)$")
_WORD = re.compile(r"[A-Za-z0-9]{2,}")
MAX_LABELS = 4000  # distinct labels embedded for one search; more and the search says it kept to the words


@dataclass(frozen=True)
class FactFilter:
    """Which facts a search looks at; None: any."""

    company: str | None = None  # issuer key, ticker or part of the registrant's name ("3M", "BBY")
    period: str | None = None  # "FY2018" / "2018" (the fiscal year's flows and its year-end balances) or an ISO end date
    page_index: int | None = None  # 0-based (a page a person names: engine.pages.page_index_of)
    doc_name: str | None = None


def period_filter(period: str) -> tuple[int | None, tuple[int, ...] | None, str | None]:
    """(fiscal year, durations in months, end date) a period string asks for; ValueError when unreadable."""
    text = period.strip()
    if m := _FY.match(text):
        return int(m[1]), (12, 0), None
    if _DATE.match(text):
        return None, None, text
    raise ValueError(f"period {period!r}: write FY2018, 2018 or an end date like 2019-02-02")


def search_facts(library: Library, query: str, flt: FactFilter = FactFilter(), *,
                 embedder: Embedder | None = None, k: int = 20) -> list[StoredFact]:
    """The facts that pass ``flt`` whose row best matches ``query`` (all of them, in printed order, when the query
    is empty), best first; ``score`` is the fused score."""
    filing_ids = filter_filings(library, MetadataFilter(issuer=flt.company))
    if flt.doc_name:
        found = library.filing_by_doc_name(flt.doc_name)
        ids = [found.id] if found else []
        filing_ids = ids if filing_ids is None else [i for i in filing_ids if i in ids]
    fiscal_year, months, end = period_filter(flt.period) if flt.period else (None, None, None)
    where = _Scope(filing_ids, flt.page_index, fiscal_year, months, end,
                   False if fiscal_year is not None else None)
    if not query.strip():
        return where.facts(library, limit=k)
    words = [f'"{w}"' for w in _WORD.findall(query)]
    # every word of the query in the row, else any of them
    lexical = (where.facts(library, match=" AND ".join(words), limit=10 * k)
               or where.facts(library, match=" OR ".join(words), limit=10 * k)) if words else []
    rankings: list[list[int]] = [[s.id for s in lexical]]
    if embedder is not None:
        rankings.append(_by_meaning(library, query, where, embedder, 10 * k))
    concept = concept_of_query(query)
    named = where.facts(library, concepts=[concept]) if concept else []
    by_concept = [s.id for s in sorted(named, key=lambda s: s.fact.confidence == "low")][:k]  # stated periods first
    # rows of the concept the query names mean it exactly: they lead, the words' and meaning's matches follow
    fused = [(i, 1.0) for i in by_concept] + [(i, s) for i, s in rrf([r for r in rankings if r])
                                             if i not in set(by_concept)]
    fused = fused[:k]
    found_by_id = {s.id: s for s in library.facts(ids=[i for i, _ in fused])}
    return [replace(found_by_id[i], score=score) for i, score in fused if i in found_by_id]


@dataclass(frozen=True)
class _Scope:
    """The filters a search applies to every list it fetches."""

    filing_ids: list[int] | None
    page_index: int | None
    fiscal_year: int | None
    months: tuple[int, ...] | None
    end: str | None
    trailing: bool | None  # False: a fiscal year asked for, so no trailing-twelve-month columns

    def facts(self, library: Library, *, concepts: list[str] | None = None, match: str | None = None,
              limit: int | None = None) -> list[StoredFact]:
        return library.facts(filing_ids=self.filing_ids, page_index=self.page_index,
                             fiscal_year=self.fiscal_year, months=self.months, end=self.end,
                             concepts=concepts, match=match, trailing=self.trailing, limit=limit)


def _by_meaning(library: Library, query: str, where: _Scope, embedder: Embedder, k: int) -> list[int]:
    """Fact ids whose label (with its parent heading) is closest in meaning to the query."""
    candidates = where.facts(library)
    texts = list(dict.fromkeys(s.fact.row for s in candidates))
    if not texts or len(texts) > MAX_LABELS:
        return []
    vectors = embedder.embed_batch([query, *texts])
    similarity = vectors[1:] @ vectors[0]
    order = {texts[i]: r for r, i in enumerate(np.argsort(-similarity)[: max(1, k // 4)])}
    picked = [s for s in candidates if s.fact.row in order]
    picked.sort(key=lambda s: (order[s.fact.row], -s.fact.period.fiscal_year))
    return [s.id for s in picked[:k]]


def describe(stored: StoredFact) -> str:
    """One fact as the CLI prints it: where, what, when, how much."""
    f = stored.fact
    scale = f" {f.scale}" if f.scale else ""
    flags = [x for x in (f.concept, f.source if f.source != "table" else "",
                         "low confidence" if f.confidence == "low" else "") if x]
    box = f"  cell ({f.box[0]:.0f},{f.box[1]:.0f})–({f.box[2]:.0f},{f.box[3]:.0f})" if f.box else ""
    return (f"{cite(stored.doc_name, f.page_index, stored.printed_folio)}  {f.statement}: {f.row}\n"
            f"    {f.period.label:<24s} {f.printed:>14s}  = {f.value:,.4g}{scale} {f.unit}"
            f"{'  [' + ', '.join(flags) + ']' if flags else ''}{box}")

