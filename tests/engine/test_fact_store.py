"""Statement facts through the real ingest path: stored in SQLite with provenance (chunk, characters, the cell's
box on the PDF page), found by company, period, page and row name, replaced on re-ingest, upgraded into an older
library, and printed by ``filinglens facts``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pymupdf
import pytest

from engine.cli import main
from engine.facts.lookup import FactFilter, period_filter, search_facts
from engine.facts.tables import extract_facts
from engine.ingest import ingest, refresh_facts
from engine.records import StoredFact
from engine.store import Library
from engine.store.migrations import MIGRATIONS, apply_migrations
from tests.engine.pdfs import statement_page


def truth_months(t: dict) -> int:
    column = t["column_label"].lower()
    return 0 if t["statement"] == "balance_sheet" else next(
        m for word, m in (("three", 3), ("six", 6), ("nine", 9), ("year", 12)) if word in column)


def test_every_true_value_is_stored_with_its_provenance(ingested_demo, demo_truth, demo_dir) -> None:
    library, _, _ = ingested_demo
    assert library.integrity_problems() == []
    missing, html_sources = [], set()
    for t in demo_truth:
        filing = library.filing_by_doc_name(t["doc_name"])
        per_share = t["unit"] == "USD per share"
        hits = [s for s in library.facts(filing_ids=[filing.id], page_index=t["page_index"])
                if s.fact.label == t["metric"] and s.fact.period.fiscal_year == int(t["fiscal_year_column"])
                and s.fact.period.months == truth_months(t) and s.fact.value == t["value"]
                and s.fact.scale == (None if per_share else "millions") and s.fact.confidence == "high"]
        if len(hits) != 1:
            missing.append((t["doc_name"], t["metric"], t["column_label"]))
            continue
        stored = hits[0]
        page_text = library.page_text(filing.id, t["page_index"])
        f = stored.fact
        assert page_text[f.char_start:f.char_end] == f.printed  # the cell's characters
        chunk = library.chunks([stored.chunk_id])[0]
        assert chunk.page_index == f.page_index and chunk.char_start <= f.char_start < chunk.char_end
        if filing.path.endswith(".pdf"):
            assert f.source == "table" and f.box is not None
            with pymupdf.open(filing.path) as doc:  # the box holds exactly the printed cell
                printed = doc[f.page_index].get_textbox(pymupdf.Rect(*f.box)).strip()
            assert printed.replace(" ", "") == f.printed.replace("$", "").replace(" ", "") or f.printed in printed
        else:
            html_sources.add(f.source)
    assert not missing, f"{len(missing)} of {len(demo_truth)} true values not stored: {missing[:5]}"
    assert html_sources == {"xbrl"}  # the HTML filings' values are their inline XBRL tags


def test_facts_are_found_by_company_period_page_and_row_name(ingested_demo, demo_truth, embedder) -> None:
    library, _, _ = ingested_demo
    t = next(x for x in demo_truth if x["metric"] == "Capital expenditures" and x["doc_name"].endswith("10K"))
    company, year = t["ticker"], int(t["fiscal_year_column"])
    flt = FactFilter(company=company, period=f"FY{year}")
    for found in (search_facts(library, "capital expenditure", flt),  # the words, stemmed
                  search_facts(library, "purchases of property and equipment", flt, embedder=embedder)):  # meaning
        top = found[0].fact
        assert (top.label, top.period.fiscal_year, top.period.months) == ("Capital expenditures", year, 12)
        assert all(s.fact.period.fiscal_year == year and s.fact.period.months in (0, 12) for s in found)
        assert {library.filing(s.filing_id).identity.ticker for s in found} == {company}
    listed = search_facts(library, "", FactFilter(doc_name=t["doc_name"], page_index=t["page_index"]), k=1000)
    assert listed and {s.fact.page_index for s in listed} == {t["page_index"]}
    assert search_facts(library, "capital expenditure", FactFilter(company="NO-SUCH-CO")) == []
    with pytest.raises(ValueError):
        period_filter("last year")


def test_the_facts_command_prints_page_and_cell(ingested_demo, demo_truth, capsys) -> None:
    library, settings, _ = ingested_demo
    t = next(x for x in demo_truth if x["metric"] == "Inventories" and x["doc_name"].endswith("10K"))
    code = main(["--home", str(settings.home), "facts", "--company", t["ticker"], "--period",
                 f"FY{t['fiscal_year_column']}", "--words-only", "inventories"])
    out = capsys.readouterr().out
    assert code == 0
    heads = out.splitlines()[::2]  # two lines per fact: where and what, then when and how much
    assert f"{t['doc_name']} p. {t['page_index'] + 1}  balance sheet: Inventories" in heads
    assert all(h.startswith(t["ticker"]) and h.endswith("Inventories") for h in heads)  # also later years' filings
    assert f"as of {t['fiscal_year_column']}" in out and "millions USD" in out and "cell (" in out


def _pdf(path: Path, rows: list[tuple[str, str, str]]) -> None:
    doc = pymupdf.open()
    statement_page(doc, ("ACME WIDGETS INC. FORM 10-K", "CONSOLIDATED STATEMENTS OF OPERATIONS", "(In millions)",
                         "Year Ended December 31,"), ("2023", "2022"), rows)
    doc.save(path)


def test_reingesting_a_changed_file_replaces_its_facts(tmp_path: Path, settings) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    path = folder / "ACME_2023_10K.pdf"
    _pdf(path, [("Revenue", "500", "450")])
    library = Library(settings.home)
    ingest(library, [folder], settings)
    (old,) = library.facts(fiscal_year=2023)
    assert (old.fact.label, old.fact.value, old.fact.period.months) == ("Revenue", 500, 12)
    _pdf(path, [("Revenue", "510", "450"), ("Net income", "60", "55")])  # restated
    report = ingest(library, [folder], settings)
    assert [e.status for e in report.events] == ["added"] and "replaces" in report.events[0].reason
    assert library.count("filings") == 1
    assert {(s.fact.label, s.fact.value) for s in library.facts(fiscal_year=2023)} == {("Revenue", 510),
                                                                                        ("Net income", 60)}
    assert library.integrity_problems() == []
    library.remove_filings([f.id for f in library.filings()])
    assert library.count("facts") == 0 and library.facts(match='"revenue"') == []
    assert library.integrity_problems() == []


def test_a_library_from_before_facts_is_upgraded_and_its_facts_read(tmp_path: Path, settings) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    _pdf(folder / "ACME_2023_10K.pdf", [("Revenue", "500", "450")])
    library = Library(settings.home)
    ingest(library, [folder], settings)
    library.close()
    # make it a library of the migrations before facts: undo what m010, m008, m007, m006, m005 and m003 did, forget
    # they ran
    conn = sqlite3.connect(settings.home / "library.sqlite3")
    conn.executescript("DROP TABLE chunk_terms; DROP TABLE term_df; DELETE FROM meta WHERE key LIKE 'term_%'; "
                       "DROP TABLE cards; DROP TABLE facts_fts; DROP TABLE facts; "
                       "ALTER TABLE filings DROP COLUMN facts_version; "
                       "ALTER TABLE filings DROP COLUMN folio_version; ALTER TABLE pages DROP COLUMN printed_folio; "
                       "ALTER TABLE pages RENAME COLUMN page_index TO page_no; "
                       "ALTER TABLE chunks RENAME COLUMN page_index TO page_no; "
                       "ALTER TABLE filings DROP COLUMN cik; ALTER TABLE filings DROP COLUMN fiscal_year_end; "
                       "ALTER TABLE chunks DROP COLUMN section; ALTER TABLE filings DROP COLUMN section_version; "
                       "DELETE FROM schema_migrations WHERE version >= 3;")
    conn.close()
    library = Library(settings.home)
    assert "m003_facts" in library.migrations_applied and library.count("facts") == 0
    done, problems = refresh_facts(library, settings)
    assert (done, problems) == (1, [])
    assert [s.fact.value for s in library.facts(fiscal_year=2023)] == [500]
    assert refresh_facts(library, settings) == (0, [])  # current now
    assert library.integrity_problems() == []


def test_migrations_apply_on_an_empty_database() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    assert apply_migrations(conn) == [name for _, name, _ in MIGRATIONS]
    assert apply_migrations(conn) == []


def test_a_table_split_over_two_pages() -> None:
    first = ("CONSOLIDATED BALANCE SHEETS\n(In millions)\nDecember 31,  2023  2022\nCash  $  120  $  100\n"
             "Inventories  300  280\n")
    continued = "CONSOLIDATED BALANCE SHEETS (continued)\nTotal assets  900  850\n"
    facts = extract_facts([first, continued])
    total = [f for f in facts if f.label == "Total assets"]
    assert [(f.page_index, f.period.label, f.value, f.confidence) for f in total] == [
        (1, "as of 2023-12-31", 900, "high"), (1, "as of 2022-12-31", 850, "high")]
    # without a "continued" mark the rows may belong to another table: read, but low confidence
    unmarked = extract_facts([first, "Total assets  900  850\n"])
    assert {f.confidence for f in unmarked if f.label == "Total assets"} == {"low"}
    # a page whose rows match nothing carried ends the table: the page after it starts afresh
    ended = extract_facts([first, "Our business is seasonal.\n", "Total assets  900  850\n"])
    assert [f for f in ended if f.label == "Total assets"] == []


def test_stored_fact_is_what_the_reader_read(tmp_path: Path, settings) -> None:
    folder = tmp_path / "filings"
    folder.mkdir()
    _pdf(folder / "ACME_2023_10K.pdf", [("Revenue", "500", "450"), ("Cost of revenue", "(300)", "(280)")])
    library = Library(settings.home)
    ingest(library, [folder], settings)
    stored = library.facts()
    assert all(isinstance(s, StoredFact) for s in stored)
    cost = [s.fact for s in stored if s.fact.label == "Cost of revenue"]
    assert [(f.value, f.concept, f.period.fiscal_year) for f in cost] == [(-300, "CostOfRevenue", 2023),
                                                                        (-280, "CostOfRevenue", 2022)]


def test_facts_are_reread_only_where_this_parser_reads_the_pages_alike() -> None:
    from engine.ingest.parse import PARSER_VERSION, reads_pages_alike

    pdf, html, chunk = PARSER_VERSION.split("/")
    assert reads_pages_alike(PARSER_VERSION, "a.pdf") and reads_pages_alike(PARSER_VERSION, "a.htm")
    assert reads_pages_alike(f"{pdf}/html-0/{chunk}", "a.pdf")  # another HTML reader: a PDF reads alike
    assert not reads_pages_alike(f"{pdf}/html-0/{chunk}", "a.htm")
    assert not reads_pages_alike(f"{pdf}/{html}/chunk-0", "a.pdf")


def test_a_filing_stored_by_an_older_parser_is_read_again_and_its_indexes_still_open(
        tmp_path: Path, settings, embedder) -> None:  # noqa: ANN001
    import shutil

    from engine.indexing import lexical_index, sync_indexes
    from engine.store.index_sets import CURRENT, read_current
    from engine.store.manifest import read_manifest, write_manifest

    folder = tmp_path / "filings"
    folder.mkdir()
    _pdf(folder / "ACME_2023_10K.pdf", [("Revenue", "500", "450")])
    library = Library(settings.home)
    ingest(library, [folder], settings)
    sync_indexes(library, settings, embedder)
    # as an older release left it: another PDF reader stored the pages, the indexes lie in one folder (no index
    # sets yet) and the BM25 manifest names its parser
    library.conn.execute("UPDATE filings SET parser_version='pdf-rows-0/html-1/chunk-2'")
    published = read_current(library.index_dir)
    for path in published.folder.iterdir():
        if path.name != "set.json":
            path.rename(library.index_dir / path.name)
    (library.index_dir / CURRENT).unlink()
    shutil.rmtree(published.folder)
    manifest_path = library.index_dir / "lexical.manifest.json"
    write_manifest(manifest_path, {**read_manifest(manifest_path), "parser_version": "pdf-rows-0/html-1/chunk-2"})
    assert lexical_index(library, settings).search("revenue", 5)  # the old layout still opens
    report = ingest(library, [folder], settings)
    assert [e.status for e in report.events] == ["added"] and "older parser" in report.events[0].reason
    (filing,) = library.filings()
    assert library.conn.execute("SELECT parser_version FROM filings").fetchone()[0] != "pdf-rows-0/html-1/chunk-2"
    assert [s.fact.value for s in library.facts(fiscal_year=2023)] == [500] and library.integrity_problems() == []
    sync_indexes(library, settings, embedder)  # no "built differently: run reindex"
    assert lexical_index(library, settings).search("revenue", 5)
    assert ingest(library, [folder], settings).events[0].status == "unchanged"
