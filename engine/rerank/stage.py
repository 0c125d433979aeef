"""HiREC's passage stage with a card-based reranker (engine.rerank): Stage 1 BM25 over every chunk of the chosen
filings (FinCards eq. 5 cutoff) joined by the table chunks whose rows print the asked line items, evidence cards
for the candidates, then the ranking the settings name — cards only, FinCards' tournament (Stage 2, and Stage 3
unless ``tournament-s2``) or the multi-agent variant — and the trace: a :class:`RerankPayload` with every term,
and the :class:`PassagesPayload` the rest of the path reads.

The candidates reach the rankers in the fused order of BM25, dense similarity and the line-item ranking
(reciprocal-rank fusion, as HiREC's passage stage): the tournament deals its groups from it and cards-only adds
the card terms to it.

A model mode asked for without a chat model runs the cards-only ranking and says so in ``fallbacks``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.models.base import ChatModel
from engine.records import (
    Chunk,
    Filing,
    LlmCall,
    Passage,
    PassageCandidate,
    PassagesPayload,
    QueryIntent,
    RerankPayload,
    RerankRow,
)
from engine.rerank.algorithms import stage1_cutoff
from engine.rerank.calls import Calls, Candidate
from engine.rerank.cards import CardMaker
from engine.rerank.intent_pass import model_intent as refine_intent
from engine.rerank.matching import Demand, align, card_fit, matched_fields, terms_text
from engine.rerank.tournament import Ranking, cards_only, fincards, multiagent
from engine.retrieval.fusion import rrf
from engine.retrieval.hierarchical import HierarchicalRetriever, filing_title
from engine.settings import Settings
from engine.store.library import Library
from engine.vocab.catalogue import load_catalogue

MODEL_MODES = ("tournament", "tournament-s2", "multiagent")


@dataclass
class Reranked:
    """What the stage hands on: the kept passages, both payloads, the model calls and the seconds they took."""

    passages: list[Passage]
    rerank: RerankPayload
    payload: PassagesPayload
    calls: list[LlmCall]
    seconds: float


class PassageReranker:
    """Ranks the chosen filings' passages by evidence cards; one instance serves many questions."""

    def __init__(self, library: Library, settings: Settings, retriever: HierarchicalRetriever,
                 chat: ChatModel | None = None) -> None:
        self.library, self.settings, self.retriever, self.chat = library, settings, retriever, chat
        self.terms = retriever.terms
        self.maker = CardMaker(library, settings.prompts)
        self.catalogue = load_catalogue()

    def _base_order(self, query: str, chunks: Sequence[Chunk], bm25_rank: dict[int, int], items: Sequence[int],
                    titles: dict[int, str], filing_rank: dict[int, int]) -> list[int]:
        """RRF of BM25, dense similarity (the stored chunk vectors, or the chunks embedded now), the line-item
        ranking and, across several filings, the document stage's order (HiREC's hierarchical prior)."""
        if not chunks:
            return []
        dense, _ = self.retriever.dense_scores(query, chunks, titles)
        chunk_of = {c.id: c.filing_id for c in chunks}
        rankings = [sorted((c.id for c in chunks), key=lambda i: bm25_rank[i]),
                    [chunks[i].id for i in np.argsort(-dense, kind="stable")]]
        if items:
            rankings.append(list(items))
        if len(set(filing_rank.values())) > 1:
            rankings.append(sorted((c.id for c in chunks), key=lambda i: (filing_rank[chunk_of[i]], bm25_rank[i])))
        fused = dict(rrf(rankings, k=self.settings.retrieval.rrf_k))
        return sorted((c.id for c in chunks), key=lambda i: (-fused.get(i, 0.0), bm25_rank[i]))

    def bm25_order(self, lexical_query: str, filings: Sequence[Filing]) -> list[tuple[int, float]]:
        """Every chunk of the filings by BM25 score; chunks sharing no word with the query follow in document
        order (the filings' order, then reading order)."""
        fids = [f.id for f in filings]
        scored = self.terms.by_filing(lexical_query, fids)
        top = self.terms.best(scored, sum(len(ids) for ids, _ in scored.values()))
        have = {c for c, _ in top}  # the rest in document order: the filings' order, then reading order
        return top + [(int(c), 0.0) for fid in fids if fid in scored for c in scored[fid][0] if c not in have]

    def stage1(self, lexical_query: str, filings: Sequence[Filing]) -> tuple[list[tuple[int, float]], int]:
        """FinCards Stage 1: the N best chunks of the filings by BM25, N from eq. 5 over their L chunks."""
        ranked = self.bm25_order(lexical_query, filings)
        s = self.settings.rerank
        return ranked[:stage1_cutoff(len(ranked), s.stage1_ratio, s.stage1_min, s.stage1_max)], len(ranked)

    def passages(self, query: str, lexical_query: str, filings: Sequence[Filing], intent: QueryIntent,
                 cancel: Callable[[], bool] | None = None, mode: str | None = None,
                 model_intent: bool | None = None) -> Reranked:
        """Rank the filings' passages; ``mode`` and ``model_intent`` override the settings'."""
        t = time.perf_counter()
        s = self.settings.rerank
        mode = mode or s.mode
        fallbacks: list[str] = []
        chat = self.chat if mode in MODEL_MODES else None
        if mode in MODEL_MODES and chat is None:
            fallbacks.append(f"{mode} needs a chat model and none is loaded: ranked by cards only")
            mode = "cards"
        demand = Demand.of(intent, self.catalogue)
        first_calls: list[LlmCall] = []
        intent_lines: tuple[str, ...] = ()
        if s.model_intent if model_intent is None else model_intent:
            if self.chat is None:
                fallbacks.append("the model intent pass needs a chat model and none is loaded: the rules' intent")
            else:
                passed, call = refine_intent(demand, intent.question, self.chat, self.settings.prompts, cancel)
                first_calls.append(call)
                demand, intent_lines = passed.demand, passed.lines()
                if passed.keywords:
                    lexical_query = f"{lexical_query} {' '.join(passed.keywords)}"
        titles = {f.id: filing_title(f) for f in filings}
        years = {f.id: f.identity.fiscal_year for f in filings}
        top, n_chunks = self.stage1(lexical_query, filings)
        r = self.settings.retrieval
        items = [h.chunk_id for h in self.retriever.line_items.rank(intent, filings)[: r.line_items]] \
            if r.line_items else []
        bm25 = dict(top)
        bm25_rank = {cid: n for n, (cid, _) in enumerate(top, start=1)}
        added = [i for i in items if i not in bm25_rank]
        for n, i in enumerate(added, start=len(top) + 1):
            bm25_rank[i] = n
        chunks = {c.id: c for c in self.library.chunks(list(bm25_rank))}
        base = self._base_order(query, [chunks[i] for i in bm25_rank if i in chunks], bm25_rank, items, titles,
                                {f.id: n for n, f in enumerate(filings)})
        batch = self.maker.cards([chunks[c] for c in base], titles, s.model_cards, cancel)
        cands: list[Candidate] = []
        for cid in base:
            chunk, card = chunks[cid], batch.cards[cid]
            fy = years.get(chunk.filing_id)
            cands.append(Candidate(chunk, card, bm25.get(cid, 0.0), bm25_rank[cid], align(card, demand, fy, s),
                                   matched_fields(card, demand, fy), card_fit(card, demand),
                                   base_rank=len(cands) + 1, matching=demand.card_matching))
        if not demand.card_matching:
            fallbacks.append("the question asks for no metric, line item or statement: card terms not used, the "
                             "candidates keep the fused order (BM25 + dense + line items)")
        calls = Calls(intent.question, "; ".join(demand.fields()), demand.relation, chat, s,  # type: ignore[arg-type]
                      self.settings.prompts, cancel, [*first_calls, *batch.calls])
        if mode == "cards" or chat is None:
            ranking = cards_only(cands, s)
            bonus = " + λ·(alignment + card fit)" if demand.card_matching else " (the question asks for no card field)"
            scorer = f"cards: 1/(ζ + fused rank){bonus}, section diversity"
        elif mode == "multiagent":
            ranking = multiagent(cands, calls)
            scorer = f"multi-agent: picker, listwise judge, referee Elo, RRF + λ·alignment (seed {s.seed})"
        else:
            ranking = fincards(cands, calls, stage3=mode == "tournament")
            scorer = (f"FinCards tournament: screen + {ranking.rounds} bootstrap round(s) (seed {s.seed})"
                      if mode == "tournament" else "FinCards tournament, Stage 2 only (screen)")
        fallbacks += [f"{g.stage} {g.round}/{g.group}: {g.fallback}" for g in calls.groups if g.fallback]
        fallbacks += [f"referee {m.a} vs {m.b}: {m.fallback}" for m in ranking.matches if m.fallback]
        rows = _rows(ranking, self.settings.retrieval.passage_top_k)
        by_id = {c.id: c for c in cands}
        if added:
            fallbacks.insert(0, f"Stage 1: {len(added)} table chunk(s) printing the asked line items joined the "
                                f"{len(top)} BM25 candidates")
        payload = RerankPayload(mode, s.seed, demand.fields(), n_chunks, len(cands), len(ranking.finalists),
                                tuple(calls.groups), tuple(ranking.matches), ranking.rounds, ranking.stop,
                                ranking.rank_variance, batch.sources(), rows, tuple(fallbacks),
                                tuple(ranking.jaccards), intent_lines)
        cand_rows = tuple(PassageCandidate(
            r.chunk_id, r.doc_name, r.page_index, r.kept, r.rank, round(r.final, 6), r.rrf or 0.0, r.bm25,
            r.stage1_rank, 0.0, 0, " ".join(by_id[r.chunk_id].chunk.text.split())[:200],
            printed_folio=r.printed_folio) for r in rows)
        passages_payload = PassagesPayload(query, lexical_query, scorer, tuple(f.identity.doc_name for f in filings),
                                           len(cands), 0, "none (card ranking)",
                                           self.settings.retrieval.passage_top_k, cand_rows)
        passages = [Passage(by_id[r.chunk_id].chunk, titles[by_id[r.chunk_id].chunk.filing_id], c)
                    for r, c in zip(rows, cand_rows) if r.kept]
        return Reranked(passages, payload, passages_payload, calls.calls, time.perf_counter() - t)


def _rows(ranking: Ranking, keep: int) -> tuple[RerankRow, ...]:
    rows = []
    for rank, c in enumerate(ranking.order, start=1):
        ch = c.chunk
        rows.append(RerankRow(
            ch.id, ch.doc_name, ch.page_index, c.stage1_rank, round(c.bm25, 4), c.id in ranking.finalists,
            ranking.screen_score.get(c.id), round(ranking.borda[c.id], 4) if c.id in ranking.borda else None,
            tuple(ranking.round_ranks.get(c.id, ())), ranking.listwise_rank.get(c.id), ranking.elo.get(c.id),
            ranking.rrf.get(c.id), round(c.align.total, 4), terms_text(c.align), c.matched,
            round(ranking.final.get(c.id, 0.0), 6), rank, rank <= keep, ranking.moved.get(c.id, ""),
            ch.printed_folio, replace(c.card, spans=())))
    return tuple(rows)
