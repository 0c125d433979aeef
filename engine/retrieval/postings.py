"""BM25 inside chosen filings, with the whole library's statistics, from the chunk terms stored with each filing
(:mod:`engine.lexicon`, :mod:`engine.store.terms`).

The question path's lexical scoring: passages of the selected filings, FinCards' Stage 1, the reranker's mined
negatives. It reads only the selected filings' terms (a few hundred KB a filing) and the document frequencies of
the query's terms, so a question costs the same in a library of 164 filings or of 145,897, and nothing of the
whole library is loaded. It is always current: the terms change in the same transaction as the filings. Its scores
are the whole-library index's (:class:`engine.retrieval.lexical.LexicalIndex`, bm25s with the same tokenizer and
formula), which the tests check.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.lexicon import bm25, idf, query_terms
from engine.store import terms
from engine.store.library import Library


class FilingLexicon:
    """BM25 over the chunks of given filings."""

    def __init__(self, library: Library) -> None:
        self.library = library

    def scored(self, query: str, filing_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, scores) of every chunk of the filings, in the filings' id order then reading order."""
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
        ids, scores = [], []
        for fid in sorted(tables):
            chunk_ids, table = tables[fid]
            ids.append(chunk_ids)
            scores.append(bm25(table, weights, avg_len))
        if not ids:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        return np.concatenate(ids), np.concatenate(scores)

    def top(self, query: str, k: int, filing_ids: Sequence[int]) -> list[tuple[int, float]]:
        """Top-k (chunk id, score) inside the filings; chunks sharing no term with the query are left out; ties
        in reading order."""
        ids, scores = self.scored(query, filing_ids)
        order = np.argsort(-scores, kind="stable")
        return [(int(ids[i]), float(scores[i])) for i in order[:k] if scores[i] > 0]

    def chunk_ids_of(self, filing_ids: Sequence[int]) -> list[int]:
        """The chunk ids of these filings, in the filings' id order then reading order."""
        tables = terms.tables(self.library.conn, filing_ids)
        return [int(c) for fid in sorted(tables) for c in tables[fid][0]]
