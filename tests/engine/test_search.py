"""Search over the ingested demo corpus: BM25, dense, fused, with metadata filters."""

from __future__ import annotations

import pytest

from engine.chunking import chunk_page, is_table_row
from engine.demo_corpus import format_amount
from engine.indexing import open_indexes
from engine.retrieval.fusion import rrf
from engine.retrieval.search import MetadataFilter, Searcher


def test_rrf_fuses_by_reciprocal_rank():
    fused = dict(rrf([["a", "b", "c"], ["b", "a"]], k=60))
    assert fused["a"] == fused["b"] == 1 / 61 + 1 / 62
    assert fused["c"] == 1 / 63


def test_chunks_respect_size_paragraphs_and_rows():
    rows = "".join(f"Line item {i}  {i},000  {i + 1},000\n" for i in range(80))
    text = "Intro paragraph about results.\n\n(Millions)  2023  2022\n" + rows
    chunks = chunk_page(text, 4, size=300, overlap=30)
    assert all(len(c.text) <= 300 and text[c.char_start : c.char_end] == c.text for c in chunks)
    for c in chunks:
        for line in c.text.splitlines():
            assert not line.startswith("Line item") or is_table_row(line), "a table row was cut"
    later = [c for c in chunks if c.char_start > text.index("Line item 20")]
    assert later and all(c.context.endswith("(Millions)  2023  2022") for c in later)


def test_search_finds_the_filing_and_page_of_a_known_value(ingested_demo, demo_truth, embedder):
    library, settings, _ = ingested_demo
    fact = next(f for f in demo_truth if f["metric"] == "Total revenue" and f["form"] == "10-K")
    searcher = Searcher(library, settings, embedder, open_indexes(library, settings, embedder))
    assert not searcher.stale
    query = f"{fact['company']} total revenue {fact['period']}"
    res = searcher.search(query, 5, MetadataFilter(issuer=fact["ticker"], form="10-K", period=fact["period"]))
    assert res.bm25 and res.dense and res.fused
    assert {h.chunk.doc_name for h in res.fused} == {fact["doc_name"]}
    assert any(h.chunk.page_index == fact["page_index"] for h in res.bm25)
    unfiltered = searcher.search(query, 10)
    # without filters the page that prints the figure still ranks first, and the other filings show up below it
    assert len(unfiltered.bm25) == 10 and len(unfiltered.fused) == 10
    for ranking in (unfiltered.bm25, unfiltered.fused):
        top = ranking[0].chunk
        assert (top.doc_name, top.page_index) == (fact["doc_name"], fact["page_index"]) and format_amount(fact["value"]) in top.text
    assert {h.chunk.doc_name for h in unfiltered.bm25} > {fact["doc_name"]}
    assert all(h.rank == i + 1 for i, h in enumerate(unfiltered.fused))


def test_filters_by_registrant_name_and_form(ingested_demo, demo_documents, embedder):
    library, settings, _ = ingested_demo
    doc = next(d for d in demo_documents if d["form"] == "10-Q")
    searcher = Searcher(library, settings, embedder, open_indexes(library, settings, embedder))
    res = searcher.search("cash and cash equivalents", 10, MetadataFilter(issuer=doc["company"].split()[0], form="10-Q"))
    assert res.bm25
    assert all(h.chunk.doc_name.startswith(doc["ticker"]) and "10Q" in h.chunk.doc_name for h in res.bm25)


def test_passage_stage_uses_stored_chunk_vectors_and_falls_back(tmp_path, ingested_demo, demo_truth, embedder):
    """With chunk vectors built, the passage stage scores the prefilter with the stored vectors (no embedding at
    question time); a passage without a stored vector sends it back to embedding the prefilter."""
    import shutil

    import numpy as np

    from engine.indexing import sync_indexes
    from engine.retrieval.hierarchical import HierarchicalRetriever
    from engine.store import Library

    library, settings, _ = ingested_demo
    library.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copytree(library.home, tmp_path / "lib", ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    s = settings.model_copy(update={"home": tmp_path / "lib"}).with_overrides(retrieval={"chunk_vectors": True})
    copy = Library(tmp_path / "lib")
    sync_indexes(copy, s, embedder)
    fact = next(f for f in demo_truth if f["metric"] == "Total revenue" and f["form"] == "10-K")
    filing = copy.filing_by_doc_name(fact["doc_name"])
    question = f"What was {fact['company']}'s total revenue in fiscal {fact['period']}?"

    retriever = HierarchicalRetriever(copy, s, embedder, open_indexes(copy, s, embedder))
    assert retriever.chunk_vectors is not None and len(retriever.chunk_vectors) == copy.count("chunks")
    passages, payload = retriever.passages(question, "total revenue", [filing])
    assert payload.dense_vectors == "stored chunk vectors"
    assert fact["page_index"] in {p.chunk.page_index for p in passages}
    qvec = embedder.embed_batch([question])[0]
    for row in payload.candidates[:5]:
        (chunk,) = copy.chunks([row.chunk_id])
        own = embedder.embed_batch([chunk.indexed_text])[0]  # what the index stored for it
        assert row.dense == pytest.approx(float(own @ qvec / np.linalg.norm(own) / np.linalg.norm(qvec)), abs=1e-4)

    retriever.chunk_vectors.delete([payload.candidates[0].chunk_id])
    _, payload = retriever.passages(question, "total revenue", [filing])
    assert payload.dense_vectors.startswith("embedded with the filing title")


def test_passage_stage_pulls_in_the_statement_rows_of_the_asked_line_items(ingested_demo, demo_truth, embedder):
    """A free-cash-flow question: the cash-flow statement prints both components (operating cash flow and
    capital expenditures), so the line-item lookup puts its page in the kept passages, and the trace says why."""
    from engine.intent import lexical_query, parse_intent
    from engine.retrieval.hierarchical import HierarchicalRetriever

    library, settings, _ = ingested_demo
    fact = next(f for f in demo_truth if f["metric"] == "Capital expenditures" and f["form"] == "10-K")
    filing = library.filing_by_doc_name(fact["doc_name"])
    question = f"What was {fact['company']}'s free cash flow in fiscal {fact['period']}?"
    intent = parse_intent(question)
    retriever = HierarchicalRetriever(library, settings, embedder, open_indexes(library, settings, embedder))
    passages, payload = retriever.passages(question, lexical_query(intent, question), [filing], intent)
    # one filing, one cash-flow statement: exactly one chunk prints the asked line items
    assert payload.scorer == "rrf(bm25, dense, filing rank, line items)" and payload.line_item_hits == 1
    first = next(c for c in payload.candidates if c.line_item_rank == 1)
    assert first.page_index == fact["page_index"]
    assert {"Net cash provided by operating activities", "Capital expenditures"} <= set(first.line_items)
    assert fact["page_index"] in {p.chunk.page_index for p in passages}

    off = settings.with_overrides(retrieval={"line_items": 0})
    _, plain = HierarchicalRetriever(library, off, embedder, open_indexes(library, off, embedder)).passages(question, lexical_query(intent, question),
                                                                      [filing], intent)
    assert plain.scorer == "rrf(bm25, dense, filing rank)" and plain.line_item_hits == 0
    assert not any(c.line_items or c.line_item_rank is not None for c in plain.candidates)


def test_a_filing_for_an_earlier_year_than_asked_gives_no_document_slot(ingested_demo, embedder):
    """A filing reports its own fiscal year and those before: for a question about FY2023 the FY2022 10-K and its
    10-Qs are dropped at the document stage, said why, and the slots go to filings that can report it; a question
    that looks ahead ("what does it plan for 2023") keeps them (a plan is told in an earlier filing), and so does
    one whose year no filing reports."""
    from engine.intent import parse_intent
    from engine.intent.issuers import issuer_refs
    from engine.retrieval.hierarchical import HierarchicalRetriever

    library, settings, _ = ingested_demo
    refs = issuer_refs(library)
    retriever = HierarchicalRetriever(library, settings, embedder, open_indexes(library, settings, embedder))
    harbor = next(f for f in library.filings_of_companies(["HRBR"]) if f.identity.form == "10-K")
    company = harbor.identity.registrant

    def rows(question: str):  # noqa: ANN202
        return retriever.documents(question, parse_intent(question, refs))[1].candidates

    asked = rows(f"What drove {company}'s revenue change in FY2023?")
    years = {r.doc_name: library.filing(r.filing_id).identity.fiscal_year for r in asked}
    assert any(y == 2022 for y in years.values()) and any(y == 2023 for y in years.values())
    for r in asked:
        if years[r.doc_name] == 2022:
            assert not r.kept and r.why.startswith("dropped: a filing for FY2022 cannot report FY2023")
    assert all(years[r.doc_name] == 2023 for r in asked if r.kept)
    ahead = rows(f"What capital expenditures does {company} plan for 2023?")
    assert not any(r.why.startswith("dropped: a filing for") for r in ahead)
    # a plan for a year is told in the filings of the year before it and of the year itself, not in older ones
    later = rows(f"What capital expenditures is {company} forecasting for FY2024?")
    for r in later:
        if years.get(r.doc_name) == 2022:
            assert not r.kept and r.why.startswith("dropped: a filing for FY2022 is older than the year before FY2024")
    assert any(years.get(r.doc_name) == 2023 and r.kept for r in later)
    assert not any(r.why.startswith("dropped: a filing for") for r in rows(f"What drove {company}'s revenue in FY2031?"))


def test_a_question_that_asks_no_period_prefers_the_company_s_latest_year(ingested_demo, embedder):
    """"What patterns can be seen in its revenue throughout the reported periods": no year asked, so the company's
    filings of its latest year (a period ending at most a year before its latest filing's) are boosted and say so;
    a question naming a year boosts none that way."""
    from datetime import date, timedelta

    from engine.intent import parse_intent
    from engine.intent.issuers import issuer_refs
    from engine.retrieval.hierarchical import HierarchicalRetriever

    library, settings, _ = ingested_demo
    retriever = HierarchicalRetriever(library, settings, embedder, open_indexes(library, settings, embedder))
    filings = library.filings_of_companies(["HRBR"])
    latest = max(date.fromisoformat(f.identity.period_end) for f in filings if f.identity.period_end)
    recent = {f.id for f in filings if f.identity.period_end
              and date.fromisoformat(f.identity.period_end) >= latest - timedelta(days=366)}
    assert recent and len(recent) < len(filings)
    company = filings[0].identity.registrant
    question = f"What patterns can be seen in {company}'s revenue throughout the reported periods?"
    rows = retriever.documents(question, parse_intent(question, issuer_refs(library)))[1].candidates
    said = {r.filing_id for r in rows if "of the company's latest year (no period asked)" in r.why}
    assert said == recent & {r.filing_id for r in rows}, [(r.doc_name, r.why) for r in rows]
    assert [r.filing_id in recent for r in rows if r.kept] == sorted(
        (r.filing_id in recent for r in rows if r.kept), reverse=True)  # (the latest year's first)
    named = f"What patterns can be seen in {company}'s revenue in FY2022?"
    assert not any("latest year" in r.why for r in retriever.documents(named, parse_intent(
        named, issuer_refs(library)))[1].candidates)


def test_a_question_naming_its_filing_is_answered_from_that_filing(ingested_demo, embedder):
    """"In its Q2 2023 10-Q" / "in its FY2023 10-K": the named filing is the one kept, the others are dropped and say
    why; a question of two quarters keeps both."""
    from engine.intent import parse_intent
    from engine.intent.issuers import issuer_refs
    from engine.retrieval.hierarchical import HierarchicalRetriever

    library, settings, _ = ingested_demo
    retriever = HierarchicalRetriever(library, settings, embedder, open_indexes(library, settings, embedder))
    filings = library.filings_of_companies(["HRBR"])
    tenq = next(f for f in filings if f.identity.period == "2023Q2")
    tenk = next(f for f in filings if f.identity.form == "10-K" and f.identity.fiscal_year == 2023)
    company = tenq.identity.registrant
    for question, own in ((f"What risks did {company} describe in its Q2 2023 10-Q?", tenq),
                          (f"What risks did {company} describe in its FY2023 10-K?", tenk)):
        kept, payload = retriever.documents(question, parse_intent(question, issuer_refs(library)))
        assert [f.id for f in kept] == [own.id], [(r.doc_name, r.why) for r in payload.candidates]
        assert all(r.why.startswith(f"dropped: the question names {own.identity.doc_name}")
                   for r in payload.candidates if r.filing_id != own.id)
    both = f"How did {company}'s risks in its Q2 2023 10-Q differ from those in its Q2 2022 10-Q?"
    kept, _ = retriever.documents(both, parse_intent(both, issuer_refs(library)))
    assert {f.identity.period for f in kept} == {"2022Q2", "2023Q2"}


def test_a_current_report_is_the_filing_of_the_day_it_was_filed_within_its_window() -> None:
    """"PepsiCo's 8-K dated May 5, 2023" reports the annual meeting of May 3 (its period end): an 8-K is filed within
    four business days of its event, so the day it was filed names it too; a 10-Q is named by its period end only,
    and an 8-K of an event a week before the day is not the one asked."""
    from types import SimpleNamespace

    from engine.retrieval.hierarchical import dated

    def filing(form: str, end: str) -> SimpleNamespace:
        return SimpleNamespace(identity=SimpleNamespace(form=form, period_end=end))

    assert dated(filing("8-K", "2023-05-05"), "2023-05-05") == "dated 2023-05-05, the day asked"
    assert "filed within its window" in dated(filing("8-K", "2023-05-03"), "2023-05-05")
    assert "filed within its window" in dated(filing("8-K", "2023-05-26"), "2023-05-30")  # (over a weekend)
    assert dated(filing("8-K", "2023-05-26"), "2023-06-05") == ""  # six business days
    assert dated(filing("8-K", "2023-05-08"), "2023-05-05") == ""  # an event after the day
    assert dated(filing("10-Q", "2023-07-01"), "2023-07-03") == ""


def test_a_filing_of_the_day_the_question_names_is_boosted_and_says_so(ingested_demo, embedder):
    """A question naming a day ("as of June 30, 2023", "the 8-K dated July 1, 2022") prefers the filing whose report
    date or period end is that day, written either way round."""
    from datetime import date

    from engine.intent import lexical_query, parse_intent
    from engine.intent.issuers import issuer_refs
    from engine.retrieval.hierarchical import HierarchicalRetriever

    library, settings, _ = ingested_demo
    retriever = HierarchicalRetriever(library, settings, embedder, open_indexes(library, settings, embedder))
    tenq = next(f for f in library.filings_of_companies(["HRBR"]) if f.identity.period == "2023Q2")
    day = date.fromisoformat(tenq.identity.period_end)
    for written in (f"{day:%B} {day.day}, {day.year}", f"{day.day}th {day:%B} {day.year}"):
        question = f"What did {tenq.identity.registrant} hold in cash as of {written}?"
        rows = retriever.documents(question, parse_intent(question, issuer_refs(library)))[1].candidates
        mine = next(r for r in rows if r.filing_id == tenq.id)
        assert f"dated {day.isoformat()}, the day asked" in mine.why and mine.kept
        assert not any("the day asked" in r.why for r in rows if r.filing_id != tenq.id)
    # a written question naming the day asks of that filing's sections first, the other filings' after
    question = f"What risks did {tenq.identity.registrant} describe as of {day:%B} {day.day}, {day.year}?"
    intent = parse_intent(question, issuer_refs(library))
    assert intent.as_of == day.isoformat() and "risk" in intent.sections
    filings, _ = retriever.documents(question, intent)
    assert tenq.id in {f.id for f in filings} and len(filings) > 1
    _, payload = retriever.passages(question, lexical_query(intent, question), filings, intent)
    fitting = sorted((r for r in payload.candidates if r.section_rank is not None), key=lambda r: r.section_rank)
    homes = [r.doc_name == tenq.identity.doc_name for r in fitting]
    assert homes and homes[0] and homes == sorted(homes, reverse=True), [(r.doc_name, r.section) for r in fitting]


def test_of_the_sections_asked_the_passages_naming_the_subject_come_first(ingested_demo, embedder):
    """"What about its customers" asks of the business section, customer concentration notes, the MD&A, then the
    risk factors: of those sections, the passages that name the subject (customers) come first, in any section,
    before the passages of a better-fitting section that do not (the MD&A's that speak of revenue alone)."""
    from engine.intent import lexical_query, parse_intent
    from engine.intent.issuers import issuer_refs
    from engine.retrieval.hierarchical import HierarchicalRetriever
    from engine.vocab.sections import vocab

    library, settings, _ = ingested_demo
    retriever = HierarchicalRetriever(library, settings, embedder, open_indexes(library, settings, embedder))
    tenk = next(f for f in library.filings_of_companies(["HRBR"]) if f.identity.form == "10-K")
    name, year = tenk.identity.registrant, tenk.identity.fiscal_year
    question = f"What does {name} say about its customers in its FY{year} 10-K?"
    intent = parse_intent(question, issuer_refs(library))
    assert intent.sections.index("mdna") < intent.sections.index("risk")
    filings, _ = retriever.documents(question, intent)
    _, payload = retriever.passages(question, lexical_query(intent, question), filings, intent)
    fitting = sorted((r for r in payload.candidates  # (the 10-K named; other forms' passages follow)
                      if r.section_rank is not None and r.doc_name == tenk.identity.doc_name), key=lambda r: r.section_rank)
    subject = vocab().subject_words(question)
    text = {c.id: c.text for c in library.chunks([r.chunk_id for r in fitting])}
    naming = [any(rx.search(text[r.chunk_id]) for rx in subject) for r in fitting]
    assert naming and naming[0] and naming == sorted(naming, reverse=True) and not all(naming), \
        [(r.section, text[r.chunk_id][:80]) for r in fitting]
