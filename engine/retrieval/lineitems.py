"""Line-item lookup: the statement rows that print the metric a question asks for.

Neither BM25 nor the embedder finds a statement table well: a cash-flow statement is a page of numbers
whose one relevant row ("Purchases of property, plant and equipment  (1,577)  (1,373)") shares a few
words with the question ("capital expenditure"), and prose that discusses capital spending outranks it.
Analysts ask for line items, and the intent parser already knows which metric is asked and the metric
lexicon knows how statements label it, so this ranking reads the row labels of every table chunk in the
chosen filings and ranks the chunks that print the asked metrics (or, for a ratio, its components).

The per-filing row index is built on first use and kept for the life of the retriever (keyed by the
filing's content hash, so a re-ingested filing is read again).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine.chunking import parse_row
from engine.intent import QueryIntent, find_metrics, line_item_metrics, metric_named_by
from engine.records import Chunk, Filing

_PAREN = re.compile(r"\s*\([^)]*\)")
_NET_TAIL = re.compile(r",?\s*[-–—]?\s*net$", re.IGNORECASE)  # "Property and equipment, net"
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_ROWISH = re.compile(r"\S\s{2,}\(?[$\d—–-]|\.{3,}")  # a cell gap or dot leader before a value


@lru_cache(maxsize=50_000)
def label_metrics(label: str) -> tuple[str | None, tuple[str, ...]]:
    """``(exact, mentioned)`` for a row label: the metric the whole label names once parentheticals are
    dropped ("Purchases of property, plant and equipment (PP&E)" -> capital expenditures), and every
    metric it mentions ("Deferred revenue" mentions revenue but is not it)."""
    plain = _NET_TAIL.sub("", _PAREN.sub("", label).strip())
    return metric_named_by(plain), find_metrics(plain)


@dataclass(frozen=True)
class _ChunkRows:
    chunk_id: int
    exact: frozenset[str]
    mentioned: frozenset[str]
    labels: tuple[tuple[str, str], ...]  # (metric, label) of the rows that name or mention a metric
    years: frozenset[int]


def _chunk_rows(chunk: Chunk) -> _ChunkRows | None:
    exact: set[str] = set()
    mentioned: set[str] = set()
    labels: list[tuple[str, str]] = []
    for line in chunk.text.splitlines():
        if not _ROWISH.search(line):
            continue
        row = parse_row(line)
        if row is None:
            continue
        named, found = label_metrics(row[0])
        if named:
            exact.add(named)
        mentioned.update(found)
        labels += [(m, row[0]) for m in dict.fromkeys([*([named] if named else []), *found])]
    if not labels:
        return None
    years = frozenset(int(y) for y in _YEAR.findall(chunk.indexed_text))
    return _ChunkRows(chunk.id, frozenset(exact), frozenset(mentioned), tuple(labels), years)


@dataclass(frozen=True)
class LineItemHit:
    chunk_id: int
    score: float
    labels: tuple[str, ...]  # the matching row labels, for the trace


class LineItemIndex:
    """Row labels of the table chunks of each filing, built on first use (LRU over filings)."""

    def __init__(self, load_chunks: Callable[[Sequence[int]], list[Chunk]], max_filings: int = 64) -> None:
        """``load_chunks(filing_ids)`` gives the chunks of those filings (``Library.chunks_of_filings``)."""
        self._load_chunks = load_chunks
        self._max = max_filings
        self._rows: OrderedDict[tuple[int, str], list[_ChunkRows]] = OrderedDict()

    def _filing_rows(self, filing: Filing) -> list[_ChunkRows]:
        key = (filing.id, filing.sha256)
        rows = self._rows.get(key)
        if rows is None:
            rows = [r for c in self._load_chunks([filing.id]) if (r := _chunk_rows(c)) is not None]
            self._rows[key] = rows
            while len(self._rows) > self._max:
                self._rows.popitem(last=False)
        else:
            self._rows.move_to_end(key)
        return rows

    def rank(self, intent: QueryIntent, filings: Sequence[Filing]) -> list[LineItemHit]:
        """Chunks of ``filings`` whose rows print the asked line items, best first.

        A chunk scores 2 for each asked line item a row label names exactly, 1 for each one a label only
        mentions, and 1 more when it prints one of the asked fiscal years (a column header). With several
        line items (a ratio's components) the best chunks of each are interleaved, so a component printed on
        another statement is not crowded out; a chunk that prints several comes first in each. Ties keep
        the filings' order. Empty when the question asks for no metric.
        """
        wanted = tuple(line_item_metrics(intent.metrics))
        if not wanted:
            return []
        years = set(intent.fiscal_years)
        per_metric: dict[str, list[tuple[float, int, LineItemHit]]] = {m: [] for m in wanted}
        for order, filing in enumerate(filings):
            for r in self._filing_rows(filing):
                exact, mentioned = r.exact.intersection(wanted), r.mentioned.difference(r.exact).intersection(wanted)
                if not exact and not mentioned:
                    continue
                score = 2.0 * len(exact) + len(mentioned) + (1.0 if years & r.years else 0.0)
                hit = LineItemHit(r.chunk_id, score, tuple(dict.fromkeys(lb for m, lb in r.labels if m in wanted)))
                for m in exact | mentioned:
                    per_metric[m].append((-score, order, hit))
        queues = [sorted(hits, key=lambda h: (h[0], h[1])) for hits in per_metric.values() if hits]
        out: dict[int, LineItemHit] = {}
        for i in range(max((len(q) for q in queues), default=0)):
            for q in queues:
                if i < len(q):
                    out.setdefault(q[i][2].chunk_id, q[i][2])
        return list(out.values())
