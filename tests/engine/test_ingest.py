"""Ingest through the real path: generated PDFs and HTML -> SQLite -> indexes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pymupdf
import pytest

from engine.indexing import lexical_index, summary_index, sync_indexes
from engine.ingest import ingest
from engine.store import Library
from tests.conftest import needs_shared


def test_identity_pages_and_chunk_spans(ingested_demo, demo_documents):
    library, _, report = ingested_demo
    assert report.count("added") == len(demo_documents) and report.count("failed") == 0
    by_name = {f.identity.doc_name: f for f in library.filings()}
    for doc in demo_documents:
        f = by_name[Path(doc["path"]).stem]
        assert f.identity.registrant == doc["company"]
        assert f.identity.ticker == doc["ticker"]
        assert f.identity.form == doc["form"]
        assert f.identity.period == doc["period"]
        assert f.n_pages == doc["pages"]
        assert doc["company"] in f.summary and doc["form"][-1] in f.summary
    for chunk in library.chunks_of_filings([f.id for f in library.filings()]):
        page = library.page_text(chunk.filing_id, chunk.page_index)
        assert page[chunk.char_start : chunk.char_end] == chunk.text
        assert len(chunk.text) <= 1024
    assert library.integrity_problems() == []


def test_table_rows_stay_whole_with_their_header(ingested_demo, demo_truth):
    library, _, _ = ingested_demo
    facts = [f for f in demo_truth if f["metric"] == "Capital expenditures"][:6]
    assert facts
    from engine.demo_corpus import format_amount

    for fact in facts:
        filing = library.filing_by_doc_name(fact["doc_name"])
        chunks = [c for c in library.chunks_of_filings([filing.id]) if c.page_index == fact["page_index"]]
        rows = [line for c in chunks for line in c.text.splitlines() if line.startswith(fact["metric"])]
        assert rows, f"no row for {fact['metric']} on page {fact['page_index']} of {fact['doc_name']}"
        assert any(format_amount(fact["value"]) in row for row in rows)
        # The chunk holding the row knows the column years, in its text or its repeated header context.
        holder = next(c for c in chunks if fact["metric"] in c.text)
        assert fact["fiscal_year_column"][:4] in holder.indexed_text


def test_reingest_is_noop_and_removal_is_incremental(tmp_path, demo_dir, settings, embedder):
    corpus = tmp_path / "corpus"
    shutil.copytree(demo_dir, corpus)
    library = Library(settings.library_home())
    first = ingest(library, [corpus], settings)
    sync_indexes(library, settings, embedder)
    generation = library.generation()
    again = ingest(library, [corpus], settings)
    assert again.count("added") == 0 and again.count("unchanged") == first.count("added")
    assert library.generation() == generation
    # Remove one file, add a copy of another under a new name (same bytes -> unchanged, path updated).
    victim = next(corpus.rglob("*_10Q.pdf"))
    victim.unlink()
    third = ingest(library, [corpus], settings)
    assert third.count("removed") == 1
    assert library.filing_by_doc_name(victim.stem) is None
    report = sync_indexes(library, settings, embedder)
    assert report.summaries_removed == 1 and report.lexical_rebuilt
    summ = summary_index(library, settings, embedder)
    assert summ.labels() == {f.id for f in library.filings()}
    lex = lexical_index(library, settings)
    assert set(lex.chunk_ids.tolist()) == {r[0] for r in library.conn.execute("SELECT id FROM chunks")}


def _bad_files(folder: Path) -> dict[str, str]:
    """Each bad input and a fragment its one-line reason must contain."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "empty.pdf").write_bytes(b"")
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    (folder / "really_html.pdf").write_bytes(b"<!DOCTYPE html><html><body>hello</body></html>")
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "UNITED STATES SECURITIES AND EXCHANGE COMMISSION FORM 10-K")
    doc.save(folder / "encrypted.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(200)
    page.insert_image(page.rect, pixmap=pix)
    doc.save(folder / "scanned.pdf")
    (folder / "zero_pages.pdf").write_bytes(
        b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n"
    )
    (folder / "recipe.html").write_text("<html><body><h1>Pancakes</h1><p>Mix flour and milk.</p></body></html>")
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Meeting notes: nothing about securities here.")
    doc.save(folder / "notes.pdf")
    return {
        "empty.pdf": "empty file",
        "corrupt.pdf": "corrupt PDF",
        "really_html.pdf": "not a PDF",
        "encrypted.pdf": "encrypted",
        "scanned.pdf": "no text layer",
        "zero_pages.pdf": "",  # PyMuPDF may call it corrupt or zero-page: any clear reason will do
        "recipe.html": "does not look like an SEC filing",
        "notes.pdf": "does not look like an SEC filing",
    }


def test_bad_inputs_get_a_reason_and_the_rest_go_in(tmp_path, demo_dir, settings):
    bad = tmp_path / "inbox"
    expected = _bad_files(bad)
    good = next(demo_dir.rglob("*_10K.pdf"))
    shutil.copy(good, bad / good.name)
    library = Library(settings.library_home())
    report = ingest(library, [bad], settings)
    by_name = {Path(e.path).name: e for e in report.events}
    assert by_name[good.name].status == "added"
    for name, fragment in expected.items():
        ev = by_name[name]
        assert ev.status == "failed", (name, ev)
        assert ev.reason and fragment in ev.reason, (name, ev.reason)
    stored = {r["path"].split("/")[-1]: r["reason"] for r in library.reports() if r["status"] == "failed"}
    assert set(stored) == set(expected)
    assert library.count("filings") == 1 and library.integrity_problems() == []


def test_image_only_pages_are_flagged(tmp_path, demo_dir, settings):
    src = next(demo_dir.rglob("*_10K.pdf"))
    doc = pymupdf.open(src)
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 32, 32), False)
    pix.clear_with(90)
    page.insert_image(page.rect, pixmap=pix)
    target = tmp_path / "in" / src.name
    target.parent.mkdir()
    doc.save(target)
    library = Library(settings.library_home())
    report = ingest(library, [target], settings)
    assert report.events[0].status == "added" and "image-only" in report.events[0].reason
    filing = library.filings()[0]
    assert filing.image_only_pages == (filing.n_pages - 1,)


def test_lofin_summaries_are_attached(tmp_path, demo_dir, settings):
    corpus = tmp_path / "lofin"
    shutil.copytree(demo_dir, corpus)
    name = next(corpus.rglob("*_10K.pdf")).stem
    (corpus / "summarization_results.json").write_text(json.dumps({name: "Annual report of a robot maker."}))
    library = Library(settings.library_home())
    ingest(library, [corpus], settings)
    row = library.conn.execute("SELECT lofin_summary FROM filings WHERE doc_name=?", (name,)).fetchone()
    assert row[0] == "Annual report of a robot maker."


def test_lofin_summaries_are_read_streaming_keeping_the_ones_asked_for(tmp_path):
    """LOFin's summarization_results.json holds every filing's summary (145,897 of them): it is streamed, and only
    the summaries of the files being read are kept; a list of records reads too; a file cut short keeps what
    came before the cut."""
    from engine.ingest.runner import load_lofin_summaries

    whole = {f"CO{i}_2020_10K.pdf": f"summary {i} – été" for i in range(20_000)}
    as_dict = tmp_path / "dict" / "summarization_results.json"
    as_dict.parent.mkdir()
    as_dict.write_text(json.dumps(whole), encoding="utf-8")
    assert load_lofin_summaries([as_dict], {"CO7_2020_10K", "CO19999_2020_10K", "NOT_THERE"}) == {
        "CO7_2020_10K": "summary 7 – été", "CO19999_2020_10K": "summary 19999 – été"}
    assert len(load_lofin_summaries([as_dict])) == 20_000
    as_list = tmp_path / "list" / "summarization_results.json"
    as_list.parent.mkdir()
    as_list.write_text(json.dumps([{"doc_name": "A_2019_10K", "summary": "a"}, {"file": "B_2019_10K.pdf", "text": "b"},
                                   "junk", {"doc_name": "C"}]), encoding="utf-8")
    assert load_lofin_summaries([as_list]) == {"A_2019_10K": "a", "B_2019_10K": "b"}
    cut = tmp_path / "cut" / "summarization_results.json"
    cut.parent.mkdir()
    cut.write_bytes(as_dict.read_bytes()[:5_000])
    read = load_lofin_summaries([cut])
    assert 0 < len(read) < 200 and read["CO0_2020_10K"] == whole["CO0_2020_10K.pdf"]


@pytest.mark.shared
def test_shared_lofin_layout_identity(tmp_path, settings):
    src = needs_shared("corpus", "filings", "3M", "10-K")
    docs = {json.loads(line)["doc_name"]: json.loads(line) for line in needs_shared("corpus", "documents.jsonl").open()}
    corpus = tmp_path / "filings" / "3M" / "10-K"
    corpus.mkdir(parents=True)
    for name in ("3M_2018_10K.pdf", "3M_2022_10K.pdf"):
        shutil.copy(src / name, corpus / name)
    library = Library(settings.library_home())
    report = ingest(library, [tmp_path / "filings"], settings)
    assert report.count("added") == 2
    f = library.filing_by_doc_name("3M_2018_10K")
    assert f.identity.registrant == "3M COMPANY"
    assert (f.identity.form, f.identity.period, f.identity.fiscal_year) == ("10-K", "2018", 2018)
    assert f.identity.period_end == "2018-12-31"
    assert f.n_pages == docs["3M_2018_10K"].get("pages", f.n_pages)
    # FinanceBench's gold page for 3M FY2018 capex (page 59, from 0) holds the cash-flow row, whole.
    page = library.page_text(f.id, 59)
    assert "Purchases of property, plant and equipment (PP&E)  (1,577)  (1,373)  (1,420)" in page
