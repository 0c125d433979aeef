"""One page number everywhere: the PDF reader's number (the first page is 1) in every output a person reads,
the folio a page prints beside it when that differs; storage and traces keep 0-based ``page_index``.

The filings are real PDFs and an HTML filing written here with PyMuPDF, ingested into a real library; the
answers come from a scripted chat model (the pipeline, the trace store, the CLI and the exports are real).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest

from engine.ingest.folio import FOLIO_VERSION
from engine.pages import cite, page_index_of, page_label, page_number, reader_page
from engine.store import Library
from tests.engine.scripted import ScriptedChat, figure_id, pick

ONE_PAGE = "ONEP_2023_10K"  # one page: its only page is cited as p. 1
FOLIOS = "FOLI_2023_10K"  # a cover, then pages printing "1", "2", "3" at their foot
ONE_VALUE, FOLIO_VALUE = "1,234", "5,678"  # printed on ONE_PAGE's page and on FOLIOS's third page (index 2)


Line = str | tuple[str, ...]  # a line of text, or a table row's cells


def _statement(company: str, revenue: str) -> list[Line]:
    return [f"{company}", "CONSOLIDATED STATEMENTS OF OPERATIONS", "(In millions)", ("", "2023", "2022"),
            ("Total revenue", revenue, "1,100"), ("Net income", "310", "290")]


def _write_pdf(path: Path, pages: list[list[Line]], footers: list[str | None]) -> None:
    """One page per list of lines (from the top; a row's cells in columns), with its footer (or none)."""
    doc = pymupdf.open()
    for lines, footer in zip(pages, footers, strict=True):
        page = doc.new_page()
        for i, line in enumerate(lines):
            for x, cell in zip((72, 330, 420), (line,) if isinstance(line, str) else line):
                page.insert_text((x, 72 + 16 * i), cell, fontsize=9)
        if footer is not None:
            page.insert_text((300, 760), footer, fontsize=9)
    doc.save(path)


def write_filings(folder: Path) -> None:
    """The one-page filing and the filing with printed folios."""
    folder.mkdir(parents=True, exist_ok=True)
    cover = ["UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "Washington, D.C. 20549", "FORM 10-K"]
    _write_pdf(folder / f"{ONE_PAGE}.pdf", [cover + ["Onepage Corp"] + _statement("ONEPAGE CORP", ONE_VALUE)],
               [None])
    body = [cover + ["Folio Industries Inc."],
            ["Item 1. Business", "Folio Industries makes printed page numbers for annual reports."],
            _statement("FOLIO INDUSTRIES INC.", FOLIO_VALUE),
            ["Item 9. Signatures", "Signed on behalf of the registrant."]]
    _write_pdf(folder / f"{FOLIOS}.pdf", body, [None, "1", "2", "3"])


def reader(value: str) -> ScriptedChat:
    """The curator keeps the passage printing ``value``; the answer step names the figure printed there."""

    def script(purpose, messages, n):
        shown = re.findall(r"\[(\d+)\] [^\n]*\n<<<\n(.*?)\n>>>", messages[-1]["content"], re.DOTALL)
        pid = next((int(i) for i, body in shown if value in body), 1)
        if purpose == "curation":
            return {"relevant_ids": [pid], "answerable": True, "missing_information": "",
                    "complementary_question": ""}
        return pick(purpose, figure_id(messages[-1]["content"], value, passage=pid))

    return ScriptedChat(script)


@dataclass(frozen=True)
class Paged:
    home: Path
    one_page_run: str
    folio_run: str


def build_paged_library(root: Path, embedder) -> Paged:
    """Both filings ingested and indexed, and one stored run citing each (shared with the app tests)."""
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings

    write_filings(root / "filings")
    home = root / "lib"
    settings = Settings(home=home).with_overrides(answer={"from_facts": False})
    with Library(home) as library:
        report = ingest(library, [root / "filings"], settings)
        assert report.count("added") == 2, [e.reason for e in report.events]
        sync_indexes(library, settings, embedder)
        runs = [build_pipeline(settings, library, Models(embedder, reader(value))).run(
            f"What was {ticker}'s total revenue in fiscal 2023?").id
            for ticker, value in (("ONEP", ONE_VALUE), ("FOLI", FOLIO_VALUE))]
    return Paged(home, *runs)


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory, embedder) -> Paged:
    return build_paged_library(tmp_path_factory.mktemp("paged"), embedder)


# --- the convention ----------------------------------------------------------------------------------------


def test_people_read_the_pdf_readers_number_and_the_folio_beside_it() -> None:
    assert reader_page(0) == 1 and page_index_of(1) == 0
    assert page_label(0) == "p. 1" and page_label(46, "46") == "p. 47 (printed 46)"
    assert page_label(46, "47") == "p. 47" and page_number(2, "iv") == "3 (printed iv)"
    assert cite("3M_2019_10K", 46, "46") == "3M_2019_10K p. 47 (printed 46)"
    with pytest.raises(ValueError, match="numbered from 1"):
        page_index_of(0)


# --- ingest, storage --------------------------------------------------------------------------------------


def test_ingest_stores_each_pages_folio_and_chunks_carry_it(paged: Paged) -> None:
    with Library(paged.home) as library:
        rows = library.conn.execute("SELECT f.doc_name, p.page_index, p.printed_folio, f.folio_version "
                                    "FROM pages p JOIN filings f ON f.id = p.filing_id "
                                    "ORDER BY f.doc_name, p.page_index")
        assert [tuple(r) for r in rows] == [(FOLIOS, 0, None, FOLIO_VERSION), (FOLIOS, 1, "1", FOLIO_VERSION),
                                            (FOLIOS, 2, "2", FOLIO_VERSION), (FOLIOS, 3, "3", FOLIO_VERSION),
                                            (ONE_PAGE, 0, None, FOLIO_VERSION)]
        filing = library.filing_by_doc_name(FOLIOS)
        chunks = library.chunks_of_filings([filing.id])
        assert {(c.page_index, c.printed_folio) for c in chunks} == {(0, None), (1, "1"), (2, "2"), (3, "3")}
        revenue = [s for s in library.facts(filing_ids=[filing.id]) if s.fact.label == "Total revenue"]
        assert revenue and all((s.fact.page_index, s.printed_folio) == (2, "2") for s in revenue)


# --- every output a person reads ---------------------------------------------------------------------------


def _outputs(home: Path, run_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    from engine.cli import main
    from engine.export import export_run

    assert main(["--home", str(home), "runs", "show", run_id]) == 0
    shown = capsys.readouterr().out
    with Library(home) as library:
        out = {fmt: export_run(library, run_id, fmt) for fmt in ("json", "csv", "md", "html")}
    return {"runs show": shown, **out}


def test_a_one_page_filing_is_cited_as_page_1_everywhere(paged: Paged,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = _outputs(paged.home, paged.one_page_run, capsys)
    assert f"[1] {ONE_PAGE} p. 1 (" in out["runs show"]  # the citation
    assert f"{ONE_PAGE} p. 1" in out["runs show"].split("-- passages", 1)[1]  # the trace's passages
    assert "page 0" not in out["runs show"] and "p.0" not in out["runs show"]
    data = json.loads(out["json"])
    (cited,) = data["cited_passages"]
    assert (cited["page"], cited["page_index"], cited["printed_folio"]) == (1, 0, None)
    assert data["answer"]["citations"][0]["page_index"] == 0  # the stored record, named for what it holds
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    assert [(r["doc_name"], r["page"], r["printed_folio"]) for r in rows] == [(ONE_PAGE, "1", "")]
    assert f"— {ONE_PAGE}, p. 1\n" in out["md"] and f"{ONE_PAGE} p. 1" in out["md"].split("## Trace")[1]
    assert f"— {ONE_PAGE}, p. 1</h3>" in out["html"] and "(from 0)" not in out["html"]


def test_a_page_that_prints_its_own_number_shows_both(paged: Paged,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = _outputs(paged.home, paged.folio_run, capsys)
    assert f"[1] {FOLIOS} p. 3 (printed 2) (" in out["runs show"]
    data = json.loads(out["json"])
    (cited,) = data["cited_passages"]
    assert (cited["page"], cited["page_index"], cited["printed_folio"]) == (3, 2, "2")
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    assert [(r["page"], r["printed_folio"]) for r in rows] == [("3", "2")]
    assert f"— {FOLIOS}, p. 3 (printed 2)\n" in out["md"]
    assert f"— {FOLIOS}, p. 3 (printed 2)</h3>" in out["html"]


def test_ask_search_and_facts_print_the_readers_number(
        paged: Paged, embedder, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import engine.cli.ask
    from engine.cli import main
    from engine.session import Session

    def scripted_session(settings):  # the CLI's own path, with a scripted model
        return Session(settings.with_overrides(answer={"from_facts": False}), chat_loader=lambda _s: reader(ONE_VALUE))

    monkeypatch.setattr(engine.cli.ask, "open_session", scripted_session)
    assert main(["--home", str(paged.home), "ask", "What was ONEP's total revenue in fiscal 2023?"]) == 0
    asked = capsys.readouterr().out
    assert "A: 1,234" in asked and f"[1] {ONE_PAGE} p. 1 (" in asked and "page 0" not in asked

    home = str(paged.home)
    assert main(["--home", home, "search", "Folio Industries total revenue", "--mode", "bm25"]) == 0
    hits = capsys.readouterr().out
    assert f"{FOLIOS} p. 3 (printed 2)  score=" in hits and f"{ONE_PAGE} p. 1  score=" in hits

    assert main(["--home", str(paged.home), "facts", "total revenue", "--doc", FOLIOS, "--page", "3",
                 "--words-only"]) == 0
    facts = capsys.readouterr().out
    assert f"{FOLIOS} p. 3 (printed 2)  " in facts and "Total revenue" in facts
    assert main(["--home", str(paged.home), "facts", "--doc", FOLIOS, "--page", "0"]) == 2
    assert "numbered from 1" in capsys.readouterr().err


def test_the_prompt_shows_the_model_the_readers_number(paged: Paged) -> None:
    from engine.trace import read_run

    with Library(paged.home) as library:
        run = read_run(library, paged.folio_run)
    prompt = run.stages("curation")[0].llm_calls[0].messages[-1]["content"]
    assert ", page 3 (printed 2)\n<<<\n" in prompt and ", page 2\n" not in prompt


# --- upgrades: an old library, old traces ------------------------------------------------------------------


def _old_schema_library(home: Path, monkeypatch: pytest.MonkeyPatch, applied: int = 5) -> None:
    """A library database as FilingLens wrote it before page_index (migrations 1 to ``applied``: 5 is the release
    with registrant identity, 4 the one before), with one filing, its pages, a chunk and a fact, and a run whose
    stored trace says "page"."""
    from engine.store import migrations

    home.mkdir(parents=True)
    conn = sqlite3.connect(home / "library.sqlite3", isolation_level=None)
    with monkeypatch.context() as m:
        m.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:applied])
        assert migrations.apply_migrations(conn)[-1] == migrations.MIGRATIONS[applied - 1][1]
    conn.execute("INSERT INTO filings(id, sha256, path, doc_name, issuer_key, form, n_pages, n_chunks, "
                 "summary, parser_version, bytes, ingested_at, facts_version) VALUES (1, 'abc', "
                 "'/gone/OLD_2019_10K.pdf', 'OLD_2019_10K', 'OLD', '10-K', 3, 1, 's', "
                 "'pdf-rows-1/html-2/chunk-2', 1, 'then', 'facts-3')")
    texts = ["FORM 10-K\nOld Corp", "Statements\nInventories  410  380\n45", "Notes\n46"]
    conn.executemany("INSERT INTO pages(filing_id, page_no, text) VALUES (1, ?, ?)", enumerate(texts))
    conn.execute("INSERT INTO chunks(id, filing_id, page_no, seq, char_start, char_end, kind, text) "
                 "VALUES (7, 1, 1, 0, 11, 32, 'table', 'Inventories  410  380')")
    conn.execute("INSERT INTO facts(filing_id, page_no, chunk_id, statement, title, label, parent, is_total, "
                 "col, period_header, col_group, fiscal_year, months, printed, value, scale, unit, "
                 "char_start, char_end, confidence, source) VALUES (1, 1, 7, 'balance sheet', 'Statements', "
                 "'Inventories', '', 0, 0, '2019', '', 2019, 0, '410', 410, 'millions', 'USD', 24, 27, "
                 "'high', 'table')")
    answer = {"status": "answered", "text": "410", "citations": [
        {"passage_id": 1, "chunk_id": 7, "doc_name": "OLD_2019_10K", "page": 1, "title": "Old Corp 10-K"}]}
    conn.execute("INSERT INTO runs(id, kind, question, status, result, started_at) VALUES ('r1', 'ask', 'q', "
                 "'answered', ?, 'then')", (json.dumps({"answer": answer, "schema": 2}),))
    passages = {"query": "q", "lexical_query": "q", "scorer": "bm25", "filings": ["OLD_2019_10K"],
                "prefilter": 1, "line_item_hits": 0, "dense_vectors": "none", "k_keep": 1, "schema": 2,
                "llm_calls": [],
                "candidates": [{"chunk_id": 7, "doc_name": "OLD_2019_10K", "page": 1, "kept": True, "rank": 1,
                                "final": 1.0, "rrf": 1.0, "bm25": 1.0, "bm25_rank": 1, "dense": 0.0,
                                "dense_rank": 0}]}
    conn.execute("INSERT INTO stage_events(run_id, seq, stage, payload, at) "
                 "VALUES ('r1', 1, 'passages', ?, 'then')", (json.dumps(passages),))
    conn.close()


@pytest.mark.parametrize(("applied", "expected"), [
    (5, ["m006_page_index_and_folios", "m007_cards", "m008_chunk_terms", "m009_filings_by_path", "m010_sections", "m011_identity_sources",
         "m012_run_evaluation"]),
    (4, ["m005_registrant_identity", "m006_page_index_and_folios", "m007_cards", "m008_chunk_terms",
         "m009_filings_by_path", "m010_sections", "m011_identity_sources",
         "m012_run_evaluation"]),
])
def test_the_migration_renames_the_page_columns_of_an_old_library_and_keeps_its_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], applied: int,
        expected: list[str]) -> None:
    from engine.cli import main
    from engine.ingest import refresh_folios, refresh_sections
    from engine.trace import read_run

    home = tmp_path / "old"
    _old_schema_library(home, monkeypatch, applied)
    with Library(home) as library:
        assert library.migrations_applied == expected
        assert {"cik", "fiscal_year_end", "folio_version"} <= {
            r[1] for r in library.conn.execute("PRAGMA table_info(filings)")}
        for table in ("pages", "chunks", "facts"):
            columns = {r[1] for r in library.conn.execute(f"PRAGMA table_info({table})")}
            assert "page_index" in columns and "page_no" not in columns
        (chunk,) = library.chunks([7])
        assert (chunk.page_index, chunk.printed_folio, chunk.text) == (1, None, "Inventories  410  380")
        from engine.store import terms  # m008 made the old filing's chunk terms

        assert terms.problems(library.conn) == [] and terms.stats(library.conn)[0] == 1
        assert library.page_text(1, 2) == "Notes\n46"
        (fact,) = library.facts(match='"inventories"', page_index=1)  # the label search follows the table
        assert (fact.fact.value, fact.chunk_id, fact.printed_folio) == (410.0, 7, None)
        assert library.integrity_problems() == []
        # no folios until they are read from the stored pages (ingest and reindex do it)
        assert refresh_folios(library) == 1 and refresh_folios(library) == 0
        assert library.printed_folios(1) == {1: "45", 2: "46"}
        assert library.chunks([7])[0].printed_folio == "45"
        # nor sections: they too are read from the stored pages, once
        assert refresh_sections(library) == 1 and refresh_sections(library) == 0
        assert library.chunks([7])[0].section == ""  # its page prints no heading
        # the stored run of the old version reads back: its "page" is the page index
        run = read_run(library, "r1")
        assert run.answer.citations[0].page_index == 1 and run.traces[0].payload.candidates[0].page_index == 1
    assert main(["--home", str(home), "runs", "show", "r1"]) == 0
    shown = capsys.readouterr().out
    assert "[1] OLD_2019_10K p. 2 (Old Corp 10-K)" in shown
    assert "OLD_2019_10K p. 2" in shown.split("-- passages")[1]


def test_a_library_that_numbered_the_page_index_migration_5_gets_registrant_identity(tmp_path: Path) -> None:
    """A development build numbered the page-index migration 5: such a library records it as 6 and still gets
    m005_registrant_identity."""
    home = tmp_path / "early"
    Library(home).close()
    conn = sqlite3.connect(home / "library.sqlite3", isolation_level=None)
    conn.executescript("ALTER TABLE filings DROP COLUMN cik; ALTER TABLE filings DROP COLUMN fiscal_year_end; "
                       "DROP TABLE cards; DROP TABLE chunk_terms; DROP TABLE term_df; "
                       "ALTER TABLE chunks DROP COLUMN section; ALTER TABLE filings DROP COLUMN section_version; "
                       "DELETE FROM schema_migrations WHERE version >= 5; "
                       "INSERT INTO schema_migrations(version, name, applied_at) "
                       "VALUES (5, 'm005_page_index_and_folios', 'then');")
    conn.close()
    with Library(home) as library:
        assert library.migrations_applied == ["m005_registrant_identity", "m007_cards", "m008_chunk_terms",
                                              "m009_filings_by_path", "m010_sections", "m011_identity_sources",
         "m012_run_evaluation"]
        assert [tuple(r) for r in library.conn.execute(
            "SELECT version, name FROM schema_migrations WHERE version >= 5 ORDER BY version")] == [
            (5, "m005_registrant_identity"), (6, "m006_page_index_and_folios"), (7, "m007_cards"),
            (8, "m008_chunk_terms"), (9, "m009_filings_by_path"), (10, "m010_sections"), (11, "m011_identity_sources"), (12, "m012_run_evaluation")]
        assert {"cik", "fiscal_year_end"} <= {r[1] for r in library.conn.execute("PRAGMA table_info(filings)")}


def test_traces_stored_with_page_keys_still_load() -> None:
    from engine.records import (
        AnswerPayload,
        AnswerResult,
        Citation,
        Computation,
        FactInputRef,
        PassageRef,
        StageTrace,
    )
    from engine.trace import outcome_from_json, to_json, trace_from_json, trace_to_json

    answer = AnswerResult("answered", "410", citations=(Citation(1, 7, "OLD_2019_10K", 1, "Old Corp", "45"),),
                          inputs=(FactInputRef("inventory", "inventories", 3, "OLD_2019_10K", 1, 7),),
                          computed=Computation(410.0, {"page": 410.0}))  # a program's variable named "page"
    trace = StageTrace(0, AnswerPayload(answer, (PassageRef(1, 7, "OLD_2019_10K", 1, "Old Corp"),)), 0.5)
    stored = trace_to_json(trace)
    assert stored["answer"]["citations"][0]["page_index"] == 1 and stored["passages"][0]["page_index"] == 1

    def as_before(data):  # what layout 2 wrote: "page", no folio
        if isinstance(data, list):
            return [as_before(x) for x in data]
        if not isinstance(data, dict):
            return data
        return {("page" if k == "page_index" else k): as_before(v) for k, v in data.items()
                if k != "printed_folio"}

    old = {**as_before(stored), "schema": 2}
    assert "page_index" not in json.dumps(old)
    again = trace_from_json("answer", 0, 0.5, old)
    assert again.payload.answer.citations[0] == Citation(1, 7, "OLD_2019_10K", 1, "Old Corp")
    assert again.payload.answer.inputs[0].page_index == 1 and again.payload.passages[0].page_index == 1
    assert again.payload.answer.computed == Computation(410.0, {"page": 410.0})
    got, _cost = outcome_from_json({"answer": as_before(to_json(answer)), "schema": 2, "seconds": 1.0})
    assert got is not None and got.citations[0].page_index == 1 and got.inputs[0].page_index == 1
