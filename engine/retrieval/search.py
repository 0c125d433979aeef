"""Library search: BM25 over chunks, dense (chunk vectors when built, filing-summary vectors otherwise)
and their reciprocal-rank fusion, with optional issuer/form/period filters."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.indexing import OpenIndexes
from engine.models.base import Embedder
from engine.records import FilingIdentity, SearchHit
from engine.retrieval.fusion import rrf
from engine.retrieval.postings import FilingLexicon
from engine.settings import Settings
from engine.store.bm25 import LexicalIndex
from engine.store.library import Library


@dataclass(frozen=True)
class MetadataFilter:
    issuer: str | None = None
    form: str | None = None
    period: str | None = None

    def is_empty(self) -> bool:
        return not (self.issuer or self.form or self.period)


def filter_filings(library: Library, flt: MetadataFilter) -> list[int] | None:
    """Filing ids that pass the filter, or None when there is no filter. The issuer is an issuer key or ticker
    (the registrant's, so "MMM" keeps 3M's filings from before covers printed one), or part of a name or key."""
    if flt.is_empty():
        return None
    sql, args = "SELECT id FROM filings WHERE 1=1", list[int | str]()
    if flt.issuer:
        needle = flt.issuer.upper().replace(" ", "")
        issuer_ids = [f.id for f in library.filings() if _names_issuer(f.identity, needle)]
        sql += f" AND id IN ({','.join('?' * len(issuer_ids))})"
        args += issuer_ids
    if flt.form:
        sql += " AND REPLACE(UPPER(form),'-','')=?"
        args.append(flt.form.upper().replace("-", ""))
    if flt.period:
        sql += " AND (period LIKE ? OR CAST(fiscal_year AS TEXT)=?)"
        args += [f"{flt.period}%", flt.period]
    return [int(r[0]) for r in library.conn.execute(sql, args)]


def _names_issuer(identity: FilingIdentity, needle: str) -> bool:
    """Whether ``needle`` (upper case, no spaces) is the filing's issuer key or ticker or part of its name or key."""
    key, ticker = (identity.issuer_key or "").upper(), (identity.ticker or "").upper()
    name = (identity.registrant or "").upper().replace(" ", "")
    return needle in (key, ticker) or needle in name or needle in key.replace(" ", "")


@dataclass
class SearchResult:
    bm25: list[SearchHit] = field(default_factory=list)
    dense: list[SearchHit] = field(default_factory=list)
    fused: list[SearchHit] = field(default_factory=list)
    dense_source: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)
    lexical_scope: int = 0  # filings BM25 scored when the library has no whole-library index (0: all)


class Searcher:
    """Holds the loaded indexes so repeated queries cost only the query itself.

    ``indexes``: the published index set, opened by the caller (:meth:`engine.session.Session.searcher`);
    ``stale`` says whether it lags behind the library (``indexes.status`` says how).
    """

    def __init__(self, library: Library, settings: Settings, embedder: Embedder, indexes: OpenIndexes) -> None:
        self.library, self.settings, self.embedder = library, settings, embedder
        self.indexes = indexes
        self.summaries = self.indexes.summaries
        self.chunk_vectors = self.indexes.chunk_vectors
        self.terms = FilingLexicon(library)
        self.stale = self.indexes.status.behind

    def scope(self, qvec: np.ndarray, allowed: list[int] | None, allowed_set: set[int] | None) -> list[int]:
        """The filings a search without a whole-library index scores: the filtered ones when the filters leave
        at most ``retrieval.doc_candidates``, else the best of them by summary vector."""
        n = self.settings.retrieval.doc_candidates
        if allowed is not None and len(allowed) <= n:
            return list(allowed)
        return [fid for fid, _ in self.summaries.query(qvec, n, allowed_set.__contains__ if allowed_set else None)]

    @property
    def lexical(self) -> LexicalIndex:
        """The whole-library BM25 index (loaded on the first search)."""
        return self.indexes.lexical

    def search(self, query: str, k: int = 10, flt: MetadataFilter | None = None) -> SearchResult:
        flt = flt or MetadataFilter()
        res = SearchResult()
        allowed = filter_filings(self.library, flt)
        allowed_set = set(allowed) if allowed is not None else None
        t0 = time.perf_counter()
        qvec = self.embedder.embed_batch([query])[0]
        t1 = time.perf_counter()
        best_in: Callable[[int], list[tuple[int, float]]]
        if self.lexical.available:
            scores = self.lexical.scores(query)
            bm25 = self.lexical.top(scores, k, allowed)
            best_in = lambda fid: self.lexical.top(scores, 1, [fid])  # noqa: E731
        else:  # a library too large for a whole-library index: inside the filters' or the summaries' filings
            scope = self.scope(qvec, allowed, allowed_set)
            res.lexical_scope = len(scope)
            scored = self.terms.by_filing(query, scope)
            bm25 = self.terms.best(scored, k)
            best_in = lambda fid: (self.terms.best({fid: scored[fid]}, 1) if fid in scored  # noqa: E731
                                   else self.terms.top(query, 1, [fid]))
        t2 = time.perf_counter()
        if self.chunk_vectors is not None and len(self.chunk_vectors):
            res.dense_source = "chunk vectors"
            filing_of = None
            if allowed_set is not None:
                rows = self.library.chunks_of_filings(sorted(allowed_set))
                ok = {c.id for c in rows}
                filing_of = ok.__contains__
            dense = self.chunk_vectors.query(qvec, k, filing_of)
        else:
            res.dense_source = "filing summaries (best BM25 chunk per filing)"
            flt_fn = allowed_set.__contains__ if allowed_set is not None else None
            filings = self.summaries.query(qvec, k, flt_fn)
            dense = []
            for fid, sim in filings:
                best = best_in(fid)
                if best:
                    dense.append((best[0][0], sim))
        t3 = time.perf_counter()
        fused = rrf([[c for c, _ in bm25], [c for c, _ in dense]], k=self.settings.retrieval.rrf_k)[:k]
        t4 = time.perf_counter()
        bm25_scores, dense_scores = dict(bm25), dict(dense)
        ids = list(dict.fromkeys([c for c, _ in bm25] + [c for c, _ in dense]))
        chunks = {c.id: c for c in self.library.chunks(ids)}

        def hits(pairs: list[tuple[int, float]]) -> list[SearchHit]:
            return [SearchHit(chunks[c], s, r, {"bm25": bm25_scores.get(c, 0.0), "dense": dense_scores.get(c, 0.0)})
                    for r, (c, s) in enumerate(pairs, start=1) if c in chunks]

        res.bm25, res.dense, res.fused = hits(bm25), hits(dense), hits([(int(c), s) for c, s in fused])
        res.timings_ms = {"embed": (t1 - t0) * 1e3, "bm25": (t2 - t1) * 1e3, "dense": (t3 - t2) * 1e3,
                          "fuse": (t4 - t3) * 1e3, "total": (time.perf_counter() - t0) * 1e3}
        return res
