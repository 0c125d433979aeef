"""HiREC hierarchical retrieval (§4.1): filings first (dense over cover-page summaries, then rerank),
then passages inside the chosen filings (cheap BM25 prefilter plus the statement rows that print the asked
line items, dense, fusion, then rerank).

Documents are reranked by dense similarity plus the question's metadata (issuer, period, form).
Passages are reranked by a :class:`CrossScorer` when one is configured (the product trains its own,
see :mod:`engine.train`), otherwise by reciprocal-rank fusion of BM25, dense and the filing ranking.
The trace names the scorer that ran (and its device).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from datetime import date, timedelta

import numpy as np

from engine.indexing import SharedIndexes
from engine.intent.wordlists import states_a_cause
from engine.models.base import CrossScorer, Embedder
from engine.records import (
    Chunk,
    DocumentCandidate,
    DocumentsPayload,
    Filing,
    Passage,
    PassageCandidate,
    PassagesPayload,
    QueryIntent,
)
from engine.retrieval.fusion import rrf
from engine.retrieval.lineitems import LineItemIndex
from engine.retrieval.postings import FilingLexicon
from engine.settings import RetrievalSettings, Settings
from engine.store.hnsw import HnswIndex
from engine.store.library import Library
from engine.vocab.sections import vocab as section_vocab


def filing_title(f: Filing) -> str:
    i = f.identity
    who = i.registrant or i.issuer_key or i.doc_name
    return f"{who} {i.form or ''} {i.period or ''}".strip()


def _match_notes(f: Filing, intent: QueryIntent, r: RetrievalSettings) -> tuple[float, list[str]]:
    i, boost, notes = f.identity, 0.0, []
    if intent.issuers and i.company_key in intent.issuers:
        boost += r.issuer_boost
        notes.append("issuer matches")
    years = set(intent.fiscal_years)
    if i.fiscal_year is not None and i.fiscal_year in years:
        boost += r.year_boost
        notes.append(f"fiscal year {i.fiscal_year} asked")
    elif i.fiscal_year is not None and i.form == "10-K" and (i.fiscal_year - 1) in years:
        boost += r.next_year_boost
        notes.append("next year's 10-K (prior-year column)")
    if intent.quarters and i.period in intent.quarters:
        boost += r.quarter_boost
        notes.append(f"quarter {i.period} asked")
    if intent.as_of and (how := dated(f, intent.as_of)):  # the report of that day, or the period ending on it
        boost += r.date_boost
        notes.append(how)
    if intent.forms and i.form in intent.forms:
        boost += r.form_boost
        notes.append(f"form {i.form} asked")
    elif not intent.forms and not intent.quarters and intent.fiscal_years and i.form == "10-K":
        boost += r.form_boost
        notes.append("annual figure asked: 10-K")
    return boost, notes


# Forms filed within days of the event they report (Form 8-K, General Instruction B.1: four business days): named
# by the day they were filed as well as by the day of the event
_CURRENT_REPORTS = frozenset({"8-K", "8-K/A", "6-K"})
_FILING_BUSINESS_DAYS = 4


def dated(f: Filing, day: str) -> str:
    """Why ``f`` is the filing of ``day`` (an ISO day a question names), "" when it is not: it reports on that day or
    its period ends then, or it is a current report filed within its filing window after the event it reports
    ("PepsiCo's 8-K dated May 5, 2023" reports the annual meeting of May 3)."""
    end = f.identity.period_end
    if not end:
        return ""
    if end == day:
        return f"dated {day}, the day asked"
    if (f.identity.form or "").upper() in _CURRENT_REPORTS and end < day \
            and int(np.busday_count(end, day)) <= _FILING_BUSINESS_DAYS:
        return f"reports the event of {end}, filed within its window by {day}, the day asked"
    return ""


def _named_filing(f: Filing, intent: QueryIntent) -> bool:
    """Whether the question names ``f`` itself: the form it asks and one of its quarters ("the Q2 2023 10-Q") or its
    day ("its 8-K dated May 5, 2023"), or the annual report of the year it names ("in its FY2022 10-K")."""
    i = f.identity
    asked_form = bool(intent.forms and i.form in intent.forms)
    return asked_form and bool(intent.quarters and i.period in intent.quarters
                               or intent.as_of and dated(f, intent.as_of)) or bool(
        intent.report_year and i.form == "10-K" and i.fiscal_year == intent.report_year)


def _recent_since(filings: Sequence[Filing], intent: QueryIntent) -> str | None:
    """The first period end of a company's latest year, as ISO day (a year before its latest filing's period end), when
    the question asks no period (no year, quarter, day, nor run of them); None otherwise."""
    if intent.fiscal_years or intent.quarters or intent.as_of or intent.quarter_run or intent.year_run:
        return None
    ends = [f.identity.period_end for f in filings if f.identity.period_end]
    if not ends:
        return None
    latest = date.fromisoformat(max(ends))
    return (latest - timedelta(days=366)).isoformat()


# A question's companies hold at most this many filings: their summaries are compared exactly, not searched
# through the graph with a filter (which, keeping a few dozen of 145,897 filings, wanders the whole graph).
EXACT_DOCUMENTS = 5000


class HierarchicalRetriever:
    """HiREC's two retrieval levels over the library, reading the indexes it is handed (a published set opened by
    :class:`engine.session.Session` or :func:`engine.pipeline.build_pipeline`: the summary vectors, and the chunk
    vectors when the set has them). BM25 is scored inside the selected filings from the terms stored with them:
    no whole-library index is loaded."""

    def __init__(self, library: Library, settings: Settings, embedder: Embedder, indexes: SharedIndexes,
                 cross: CrossScorer | None = None) -> None:
        self.library, self.settings, self.embedder, self.cross = library, settings, embedder, cross
        self.summaries: HnswIndex = indexes.summaries
        self.chunk_vectors: HnswIndex | None = indexes.chunk_vectors or None
        self.terms = FilingLexicon(library)
        self._vec_cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.line_items = LineItemIndex(library.chunks_of_filings)

    # -- documents ---------------------------------------------------------------------------
    def documents(self, query: str, intent: QueryIntent) -> tuple[list[Filing], DocumentsPayload]:
        """The filings kept (best first) and the stage's payload: the ranked candidates and why each was kept."""
        r = self.settings.retrieval
        qvec = self.embedder.embed_batch([query])[0]
        # filings are read per question, the candidates only: nothing of the whole library is held or scanned
        issuer_ids = {f.id for f in self.library.filings_of_companies(intent.issuers)}
        if issuer_ids and len(issuer_ids) <= EXACT_DOCUMENTS:  # a company's filings: compared one by one, exactly
            dense = self.summaries.query_among(qvec, sorted(issuer_ids), r.doc_candidates)
        else:
            dense = self.summaries.query(qvec, r.doc_candidates, issuer_ids.__contains__ if issuer_ids else None)
        found = {f.id: f for f in self.library.filings([fid for fid, _ in dense])}
        filter_note = f"restricted to {len(issuer_ids)} filings of {', '.join(intent.issuers)}" if issuer_ids else "none"
        cands = []
        recent = _recent_since(self.library.filings_of_companies(intent.issuers), intent) if issuer_ids else None
        for rank, (fid, sim) in enumerate(dense, start=1):
            f = found.get(fid)
            if f is None:
                continue
            boost, notes = _match_notes(f, intent, r)
            if recent is not None and (f.identity.period_end or "") >= recent:
                boost += r.recent_boost
                notes.append("of the company's latest year (no period asked)")
            cands.append((f, sim, rank, boost, notes))
        # The trained cross-encoder learned (question, passage) pairs, not cover-page summaries, so documents keep
        # the dense + metadata score.
        scorer = "dense + metadata boosts"
        final = [sim + b for (_, sim, _, b, _) in cands]
        order = sorted(range(len(cands)), key=lambda i: -final[i])
        # a filing reports its own fiscal year and those before, never a later one: where the question names its
        # years and a candidate can report them, the filings of earlier years give no slot. A plan, forecast or
        # guidance for a year is told in the filings of the year before it (and of the year itself), not in older ones
        asked = min(intent.fiscal_years) - (1 if intent.looks_ahead else 0) if intent.fiscal_years else None
        if asked is not None and not any((c[0].identity.fiscal_year or asked) >= asked for c in cands):
            asked = None
        # a question that names its filing ("in the Q2 2023 10-Q", "in its FY2022 10-K", "its 8-K dated May 5, 2023") is
        # answered from it alone when it is loaded: another quarter's report is not the one asked of
        named = [c[0] for c in cands if _named_filing(c[0], intent)]
        rows = []
        slots = 0
        for new_rank, i in enumerate(order, start=1):
            f, sim, drank, _, notes = cands[i]
            year = f.identity.fiscal_year
            if named and f not in named:
                kept = False
                why = (f"dropped: the question names {', '.join(n.identity.doc_name for n in named)}; "
                       + (", ".join(notes) or "no metadata match"))
            elif asked is not None and year is not None and year < asked:
                kept = False
                why = (f"dropped: a filing for FY{year} " + (f"is older than the year before FY{asked + 1}, whose "
                       f"filings tell its plans" if intent.looks_ahead else f"cannot report FY{asked}") + "; "
                       + (", ".join(notes) or "no metadata match"))
            else:
                slots += 1
                kept = slots <= r.doc_top_k
                why = ("kept: " if kept else f"dropped: rank {slots} > k_D={r.doc_top_k}; ") + (", ".join(notes) or "no metadata match")
            rows.append(DocumentCandidate(f.id, f.identity.doc_name, filing_title(f), round(sim, 5), drank,
                                          round(final[i], 5), new_rank, kept, why))
        payload = DocumentsPayload(query, scorer, filter_note, r.doc_candidates, r.doc_top_k,
                                   tuple(rows[: max(r.doc_top_k * 4, 20)]), len(rows))
        return [found[c.filing_id] for c in rows if c.kept], payload

    # -- passages ----------------------------------------------------------------------------
    def _chunk_vectors(self, chunks: Sequence[Chunk], titles: dict[int, str]) -> np.ndarray:
        missing = [c for c in chunks if c.id not in self._vec_cache]
        if missing:
            vecs = self.embedder.embed_batch([f"{titles[c.filing_id]}\n{c.indexed_text}" for c in missing])
            for c, v in zip(missing, vecs):
                self._vec_cache[c.id] = v
        while len(self._vec_cache) > self.settings.retrieval.vector_cache:
            self._vec_cache.popitem(last=False)
        return np.stack([self._vec_cache[c.id] for c in chunks]) if chunks else np.zeros((0, self.embedder.dims))

    def _stored_vectors(self, chunks: Sequence[Chunk]) -> np.ndarray | None:
        """The chunks' stored vectors (unit length), or None when the library has none for one of them."""
        if self.chunk_vectors is None or not len(self.chunk_vectors):
            return None
        try:
            vecs = self.chunk_vectors.get_items([c.id for c in chunks])
        except KeyError:  # built with chunk vectors off, or still being built
            return None
        return vecs / (np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12)

    def dense_scores(self, query: str, chunks: Sequence[Chunk], titles: dict[int, str]) -> tuple[np.ndarray, str]:
        """The query's cosine similarity with each chunk, and where the chunk vectors came from: the library's
        stored chunk vectors when it has them, otherwise the chunks embedded with their filing's title ``titles``
        (cached across questions)."""
        if not chunks:
            return np.zeros(0), "none"
        qvec = self.embedder.embed_batch([query])[0]
        qvec = qvec / (np.linalg.norm(qvec) + 1e-12)
        stored = self._stored_vectors(chunks)
        if stored is not None:
            return stored @ qvec, "stored chunk vectors"
        return self._chunk_vectors(chunks, titles) @ qvec, "embedded with the filing title at question time"

    def passages(self, query: str, lexical_query: str, filings: Sequence[Filing],
                 intent: QueryIntent | None = None, top_k: int | None = None) -> tuple[list[Passage], PassagesPayload]:
        """Passages of ``filings`` (best filing first): a BM25 prefilter joined by the table chunks whose rows
        print the asked line items (:mod:`engine.retrieval.lineitems`, when ``intent`` names a metric), dense,
        and fusion of the BM25, dense, filing and line-item rankings (the document retriever's order is the
        hierarchical prior), or the cross-encoder.

        Dense scores use the library's stored chunk vectors when it has them (no embedding at question time);
        otherwise the prefiltered passages are embedded with their filing's title. On FinanceBench dev both give
        the same page recall (0.357 vs 0.343 at k=5) and the stored vectors answer in a third of the time.
        """
        r = self.settings.retrieval
        fids = [f.id for f in filings]
        doc_rank = {fid: i for i, fid in enumerate(fids)}
        titles = {f.id: filing_title(f) for f in filings}
        bm25_all = self.terms.top(lexical_query, sum(f.n_chunks for f in filings) + 1, fids)
        bm25 = bm25_all[: r.passage_prefilter]
        if not bm25:  # no lexical overlap at all: fall back to the filings' first pages
            bm25 = [(c.id, 0.0) for c in self.library.chunks_of_filings(fids)[: r.passage_prefilter]]
        # a written question asks of sections (risk factors, MD&A, an 8-K's items): their narrative passages join
        # the pool in BM25 order and are fused as one more ranking; a word that names a line item ("revenues" in
        # a question about risks) does not make it a table question, so no statement rows join
        # (so does a number no statement line names, "how many employees": its sentence is in the text)
        kinds = (set(intent.sections) if intent is not None and (
            not intent.numeric or intent.plan is not None and intent.plan.status == "none") else set())
        fitting: list[int] = []
        if kinds and intent is not None:
            # the best-fitting kind first ("Note 21 Legal Proceedings" before the other notes), then BM25's order
            sections = self.library.chunk_sections(fids)
            # (every text passage of the sections, those sharing no word of the question after the others: a
            # question's words need not be printed in the passage that answers it)
            at = {cid: section_vocab().rank_of(name, intent.sections) for cid, (name, kind, _) in sections.items()
                  if kind == "text"}
            by_bm25 = {cid: n for n, (cid, _) in enumerate(bm25_all)}
            order = {cid: by_bm25.get(cid, len(by_bm25) + cid) for cid in at}
            candidates = [cid for cid, rank in at.items() if rank is not None]
            # a question of why or what drove a change: of the best-fitting kind, the passages stating a cause
            # ("due to", "driven by") first
            # a passage that names what is asked ("acquired", "litigation") before one of the section that does not
            subject = section_vocab().subject_words(intent.question)
            explain = intent.relation == "explanation"
            texts = {c.id: c.text for c in self.library.chunks(candidates)} if explain or subject else {}
            causes = {cid for cid, text in texts.items() if states_a_cause(text)} if explain else set()
            named = ({cid for cid, text in texts.items() if any(rx.search(text) for rx in subject)}
                     if subject else set(candidates))
            # a question naming the form ("the 8-K filing dated …") asks of that filing's sections first, and one
            # naming a day a filing reports on (an 8-K's date, a period's end) of that filing's
            other_form = {f.id for f in filings if intent.forms and f.identity.form not in intent.forms}
            on_day = {f.id for f in filings if intent.as_of and dated(f, intent.as_of)}
            other_day = {f.id for f in filings if on_day and f.id not in on_day}
            home = {cid: sections[cid][2] for cid in candidates}
            fitting = sorted(candidates, key=lambda cid: (home[cid] in other_form, home[cid] in other_day,
                                                          cid not in named, at[cid], cid not in causes,
                                                          order[cid]))[: r.section_passages]
        items = (self.line_items.rank(intent, filings)[: r.line_items]
                 if intent is not None and r.line_items and not kinds else [])
        pool = list(dict.fromkeys([c for c, _ in bm25] + fitting + [h.chunk_id for h in items]))
        chunks = self.library.chunks(pool)
        dense, dense_source = self.dense_scores(query, chunks, titles)
        bm25_score = dict(bm25_all)
        bm25_rank = {cid: i for i, (cid, _) in enumerate(bm25_all, start=1)}
        unranked = len(bm25_all) + 1
        dense_order = [chunks[i].id for i in np.argsort(-dense)]
        dense_rank = {cid: i for i, cid in enumerate(dense_order, start=1)}
        bm25_order = sorted(pool, key=lambda cid: bm25_rank.get(cid, unranked))
        doc_order = [c.id for c in sorted(chunks, key=lambda c: (doc_rank[c.filing_id], bm25_rank.get(c.id, unranked)))]
        item_order = [h.chunk_id for h in items]
        item_of = {h.chunk_id: h for h in items}
        rankings = [bm25_order, dense_order, doc_order] + ([item_order] if items else []) + \
            ([fitting] if fitting else [])
        fused = dict(rrf(rankings, k=r.rrf_k))
        scorer = "rrf(bm25, dense, filing rank" + (", line items" if items else "") + \
            (", asked sections)" if fitting else ")")
        final = {c.id: fused[c.id] for c in chunks}
        ce: dict[int, float] = {}
        if self.cross is not None and chunks:
            where = f"{self.cross.name} on {getattr(self.cross, 'device', '?')}"
            scores = self.cross.score_pairs([(query, f"{titles[c.filing_id]}\n{c.indexed_text}") for c in chunks])
            ce = {c.id: float(s) for c, s in zip(chunks, scores)}
            if r.reranker_mode == "replace":
                scorer, final = f"cross-encoder {where}", ce
            else:
                ce_order = sorted(ce, key=lambda cid: -ce[cid])
                with_ce = dict(rrf([*rankings, ce_order], k=r.rrf_k))
                scorer = scorer[:-1] + f", cross-encoder {where})"
                final = {c.id: with_ce[c.id] for c in chunks}
        ranked = sorted(chunks, key=lambda c: -final[c.id])
        keep = top_k or r.passage_top_k
        rows = []
        for rank, c in enumerate(ranked, start=1):
            item = item_of.get(c.id)
            rows.append(PassageCandidate(
                c.id, c.doc_name, c.page_index, rank <= keep, rank, round(final[c.id], 6),
                round(fused[c.id], 6), round(bm25_score.get(c.id, 0.0), 4), bm25_rank.get(c.id, 0),
                round(float(dense[chunks.index(c)]), 5), dense_rank[c.id], " ".join(c.text.split())[:200],
                line_item_rank=item_order.index(c.id) + 1 if item is not None else None,
                line_items=tuple(item.labels[:4]) if item is not None else (),
                cross=round(ce[c.id], 4) if ce else None, printed_folio=c.printed_folio, section=c.section,
                section_rank=fitting.index(c.id) + 1 if c.id in fitting else None))
        passages = [Passage(c, titles[c.filing_id], row) for c, row in zip(ranked, rows) if row.kept]
        payload = PassagesPayload(query, lexical_query, scorer, tuple(f.identity.doc_name for f in filings), len(chunks),
                                  len(items), dense_source, keep, tuple(rows),
                                  tuple(intent.sections) if kinds and intent is not None else ())
        return passages, payload
