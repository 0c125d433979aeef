"""BM25 inside chosen filings, with the whole library's statistics, from the chunk terms stored with each filing
(:mod:`engine.vocab.tokens`, :mod:`engine.store.terms`).

The question path's lexical scoring: passages of the selected filings, FinCards' Stage 1, the reranker's mined
negatives. It reads only the selected filings' terms (a few hundred KB a filing) and the document frequencies of
the query's terms, so a question costs the same in a library of 164 filings or of 145,897, and nothing of the
whole library is loaded. It is always current: the terms change in the same transaction as the filings. Its scores
are the whole-library index's (:class:`engine.store.bm25.LexicalIndex`, bm25s with the same tokenizer and
formula), which the tests check.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.store import terms
from engine.store.library import Library
from engine.vocab.tokens import bm25, idf, query_terms


class FilingLexicon:
    """BM25 over the chunks of given filings."""

    def __init__(self, library: Library) -> None:
        self.library = library

    def by_filing(self, query: str, filing_ids: Sequence[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Filing id → (its chunk ids in reading order, their scores), for the filings given that are stored; one
        read of their terms."""
        asked = query_terms(query)
        with self.library.snapshot():  # the terms and the statistics of one state of the library
            tables = terms.tables(self.library.conn, filing_ids)
            n_chunks, n_terms = terms.stats(self.library.conn)
            df = terms.document_frequencies(self.library.conn, asked)
        weights: dict[int, float] = {}
        for t in asked:
            if df.get(t):
                weights[t] = weights.get(t, 0.0) + idf(df[t], n_chunks)
        avg_len = n_terms / n_chunks if n_chunks else 0.0
        return {fid: (chunk_ids, bm25(table, weights, avg_len)) for fid, (chunk_ids, table) in tables.items()}

    @staticmethod
    def best(scored: dict[int, tuple[np.ndarray, np.ndarray]], k: int) -> list[tuple[int, float]]:
        """Top-k (chunk id, score) of :meth:`by_filing`'s scores; chunks sharing no term with the query are left
        out; ties in the filings' id order, then reading order."""
        if not scored:
            return []
        ids = np.concatenate([scored[fid][0] for fid in sorted(scored)])
        scores = np.concatenate([scored[fid][1] for fid in sorted(scored)])
        order = np.argsort(-scores, kind="stable")
        return [(int(ids[i]), float(scores[i])) for i in order[:k] if scores[i] > 0]

    def top(self, query: str, k: int, filing_ids: Sequence[int]) -> list[tuple[int, float]]:
        """Top-k (chunk id, score) inside the filings (see :meth:`best`)."""
        return self.best(self.by_filing(query, filing_ids), k)
