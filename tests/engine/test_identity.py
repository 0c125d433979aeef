"""Library-level identity: a registrant's ticker, CIK and fiscal-year end, stated by one of its filings, are every
filing's. Real PDFs and iXBRL HTML written at test time, ingested through the real ingest path into real SQLite."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pymupdf
import pytest

from engine.cli import main
from engine.ingest import ingest, refresh_identity
from engine.ingest.identity import FROM_BALANCE_SHEET, FROM_LINKS, linked_cik, month_day, parse_cover
from engine.intent import parse_intent
from engine.pipeline import issuer_refs
from engine.records import FilingIdentity
from engine.retrieval.search import MetadataFilter, filter_filings
from engine.settings import Settings
from engine.store import Library, migrations
from engine.store.registrants import build_view

CIK_3M = "0000066740"


def write_cover_pdf(path: Path, *, name: str, form: str, period_text: str, ticker: str | None = None,
                    body: str = "Net sales were $32,765 million.",
                    listed: Sequence[tuple[str, str, str]] = ()) -> Path:
    """A two-page filing: an SEC cover (with a Trading Symbol(s) table when ``ticker`` is given, as covers carry
    one from 2019, and the rows of ``listed`` — title, symbol, exchange — under its common stock) and a page of
    text."""
    doc = pymupdf.open()
    page = doc.new_page()
    kind = "quarterly period" if form == "10-Q" else "fiscal year"
    lines = ["UNITED STATES", "SECURITIES AND EXCHANGE COMMISSION", "Washington, D.C. 20549", f"FORM {form}",
             "REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934",
             f"For the {kind} ended {period_text}", "Commission file number 1-3285", name,
             "(Exact name of registrant as specified in its charter)",
             "Securities registered pursuant to Section 12(b) of the Act:"]
    y = 72.0
    for line in lines:
        page.insert_text((72, y), line, fontsize=10)
        y += 16
    if ticker:
        for row in (("Title of each class", "Trading Symbol(s)", "Name of each exchange on which registered"),
                    ("Common Stock, Par Value $.01 Per Share", ticker, "New York Stock Exchange, Inc."), *listed):
            for x, cell in zip((72, 300, 400), row, strict=True):
                page.insert_text((x, y), cell, fontsize=9)
            y += 14
    else:
        page.insert_text((72, y), "Common Stock, Par Value $.01 Per Share    New York Stock Exchange, Inc.", fontsize=9)
    doc.new_page().insert_text((72, 72), f"Item 7. Management's Discussion and Analysis. {body}", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    return path


def add_table_page(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A page appended to the PDF at ``path`` printing ``rows`` as a three-column table (a label, two values)."""
    doc = pymupdf.open(path)
    page = doc.new_page()
    for y, row in enumerate(rows):
        for x, cell in zip((72, 300, 380), row, strict=True):
            page.insert_text((x, 72 + 16 * y), cell, fontsize=10)
    doc.saveIncr()
    return path


def write_ixbrl_10q(path: Path, *, cik_in_dei: bool = True) -> Path:
    """An EDGAR-style iXBRL 10-Q of 3M whose hidden ``ix:header`` states the CIK and fiscal-year end (dei tags) and
    whose contexts name the entity by CIK; the printed cover states neither."""
    dei = (f'<ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="c1">{CIK_3M}</ix:nonNumeric>'
           if cik_in_dei else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"""<html><body>
<div style="display:none"><ix:header><ix:hidden>{dei}
<ix:nonNumeric name="dei:CurrentFiscalYearEndDate" contextRef="c1">--12-31</ix:nonNumeric>
</ix:hidden><ix:resources><xbrli:context id="c1"><xbrli:entity>
<xbrli:identifier scheme="http://www.sec.gov/CIK">{CIK_3M}</xbrli:identifier></xbrli:entity>
<xbrli:period><xbrli:startDate>2020-01-01</xbrli:startDate><xbrli:endDate>2020-03-31</xbrli:endDate></xbrli:period>
</xbrli:context></ix:resources></ix:header></div>
<p>UNITED STATES</p><p>SECURITIES AND EXCHANGE COMMISSION</p><p>FORM 10-Q</p>
<p>For the quarterly period ended March 31, 2020</p>
<p><ix:nonNumeric name="dei:EntityRegistrantName" contextRef="c1">3M COMPANY</ix:nonNumeric></p>
<p>(Exact name of registrant as specified in its charter)</p>
<table><tr><td>Title of each class</td><td>Trading Symbol(s)</td><td>Name of each exchange</td></tr>
<tr><td>Common Stock</td><td><ix:nonNumeric name="dei:TradingSymbol" contextRef="c1">MMM</ix:nonNumeric></td>
<td>New York Stock Exchange</td></tr></table>
<p>Net sales were $8,075 million in the first quarter of 2020.</p>
</body></html>""", encoding="utf-8")
    return path


def write_3m_pair(folder: Path) -> Path:
    """3M's 2017 10-K (no trading symbol on its cover) and 2019 10-K (MMM) in the LOFin layout."""
    write_cover_pdf(folder / "3M" / "10-K" / "3M_2017_10K.pdf", name="3M COMPANY", form="10-K",
                    period_text="December 31, 2017")
    write_cover_pdf(folder / "3M" / "10-K" / "3M_2019_10K.pdf", name="3M COMPANY", form="10-K",
                    period_text="December 31, 2019", ticker="MMM")
    return folder


def ingested(tmp_path: Path, *paths: Path) -> Library:
    home = tmp_path / "lib"
    library = Library(home)
    report = ingest(library, paths, Settings(home=home, ingest={"workers": 1}))
    assert report.count("added") and not report.count("failed"), report.events
    return library


def by_doc(library: Library) -> dict:
    return {f.identity.doc_name: f for f in library.filings()}


def test_a_ticker_stated_by_a_later_10k_is_the_earlier_10ks_too(tmp_path, capsys):
    library = ingested(tmp_path, write_3m_pair(tmp_path / "filings"))
    filings = by_doc(library)
    old, new = filings["3M_2017_10K"], filings["3M_2019_10K"]
    assert new.identity.ticker == "MMM" and new.inherited == ()
    assert old.identity.ticker == "MMM" and old.inherited_from("ticker") == "3M_2019_10K"
    # each 10-K states its own fiscal-year end ("For the fiscal year ended December 31, ...")
    assert old.identity.fiscal_year_end == new.identity.fiscal_year_end == "--12-31"
    assert old.inherited_from("fiscal_year_end") is None
    # the 2017 filing's own row is what its cover states: the shared value is computed when read
    assert library.conn.execute("SELECT ticker FROM filings WHERE id=?", (old.id,)).fetchone()[0] is None
    (registrant,) = library.registrants()
    assert (registrant.key, registrant.ticker, registrant.fiscal_year_end) == ("3M", "MMM", "--12-31")
    assert set(registrant.filing_ids) == {old.id, new.id} and registrant.names == ("3M COMPANY",)
    assert library.filing(old.id).identity.ticker == library.filing_by_doc_name("3M_2017_10K").identity.ticker == "MMM"
    assert main(["--home", str(library.home), "library"]) == 0  # the CLI listing marks the shared ticker
    listing = {line.split()[1]: line.split()[4] for line in capsys.readouterr().out.splitlines() if "_10K" in line}
    assert listing == {"3M_2017_10K": "MMM*", "3M_2019_10K": "MMM"}

    # the view cannot go stale: without the filing that states it, no filing has the ticker
    library.remove_filings([new.id])
    assert library.filing(old.id).identity.ticker is None and library.filing(old.id).inherited == ()


def test_filings_without_a_file_name_identity_join_by_registrant_name_and_the_intent_finds_them(tmp_path):
    """Files not named <ISSUER>_<PERIOD>_<FORM>: the 2017 10-K has no issuer key and no ticker, so before the
    registrant view it was a company of its own that "MMM" never named."""
    folder = tmp_path / "downloads"
    write_cover_pdf(folder / "annual-report-2017.pdf", name="3M COMPANY", form="10-K", period_text="December 31, 2017",
                    body="Net sales were $31,657 million in 2017.")
    write_cover_pdf(folder / "annual-report-2019.pdf", name="3M Company", form="10-K", period_text="December 31, 2019",
                    ticker="MMM", body="Net sales were $32,136 million in 2019.")
    library = ingested(tmp_path, folder)
    own = library.conn.execute("SELECT issuer_key, ticker FROM filings WHERE doc_name='annual-report-2017'").fetchone()
    assert tuple(own) == (None, None)
    old = by_doc(library)["annual-report-2017"]
    assert old.identity.ticker == "MMM" and old.identity.company_key == "MMM"

    intent = parse_intent("What were MMM's net sales in FY2017?", issuer_refs(library))
    assert intent.issuers == ("MMM",) and 2017 in intent.fiscal_years
    # what retrieval and the statement facts restrict themselves to: the asked company's filings
    assert old.id in {f.id for f in library.filings() if f.identity.company_key in intent.issuers}
    assert old.id in (filter_filings(library, MetadataFilter(issuer="MMM")) or [])


def test_cik_and_fiscal_year_end_from_ixbrl_dei_tags_are_shared_with_pdfs(tmp_path):
    folder = write_3m_pair(tmp_path / "filings")
    write_ixbrl_10q(folder / "3M" / "10-Q" / "3M_2020Q1_10Q.htm")
    library = ingested(tmp_path, folder)
    filings = by_doc(library)
    quarter = filings["3M_2020Q1_10Q"]
    assert (quarter.identity.cik, quarter.identity.fiscal_year_end, quarter.identity.ticker) == (CIK_3M, "--12-31",
                                                                                              "MMM")
    assert quarter.inherited == ()  # all three stated by the filing itself (dei tags)
    old = filings["3M_2017_10K"]
    assert old.identity.cik == CIK_3M and old.inherited_from("cik") == "3M_2020Q1_10Q"
    assert old.inherited_from("ticker") == "3M_2020Q1_10Q"  # the most recent filing stating a ticker
    (registrant,) = library.registrants()
    assert registrant.key == CIK_3M and registrant.cik == CIK_3M and len(registrant.filing_ids) == 3


def test_each_filing_stores_the_cik_and_fiscal_year_end_it_states(tmp_path):
    folder = tmp_path / "filings" / "3M"
    write_ixbrl_10q(folder / "10-Q" / "3M_2020Q1_10Q.htm")
    write_cover_pdf(folder / "10-K" / "3M_2017_10K.pdf", name="3M COMPANY", form="10-K",
                    period_text="December 31, 2017")
    write_cover_pdf(folder / "10-Q" / "3M_2018Q1_10Q.pdf", name="3M COMPANY", form="10-Q",
                    period_text="March 31, 2018")
    library = ingested(tmp_path, tmp_path / "filings")
    stored = {r[0]: tuple(r[1:]) for r in library.conn.execute("SELECT doc_name, cik, fiscal_year_end FROM filings")}
    assert stored == {
        "3M_2020Q1_10Q": (CIK_3M, "--12-31"),  # the dei tags of its hidden ix:header
        "3M_2017_10K": (None, "--12-31"),  # "For the fiscal year ended December 31, 2017"; a printed PDF, no CIK
        "3M_2018Q1_10Q": (None, None),  # a 10-Q's cover states a quarter's end, not the year's
    }


def test_cik_from_the_contexts_entity_identifier_when_no_dei_tag_states_it(tmp_path):
    path = write_ixbrl_10q(tmp_path / "filings" / "3M" / "10-Q" / "3M_2020Q1_10Q.htm", cik_in_dei=False)
    library = ingested(tmp_path, path)
    assert by_doc(library)["3M_2020Q1_10Q"].identity.cik == CIK_3M


@pytest.mark.parametrize(("text", "cik", "fye"), [
    ("FORM 10-K\nFor the fiscal year ended December 31, 2022\nACME CORP\n(Exact name of registrant ...)", None,
     "--12-31"),
    ("FORM 10-K\nFor the fiscal year ended February 3, 2018\nBEST BUY CO., INC.", None, "--02-03"),
    ("FORM 10-Q\nFor the quarterly period ended March 31, 2021\nJPMorgan Chase & Co.", None, None),
    ("CENTRAL INDEX KEY:\t\t\t0000066740\nFISCAL YEAR END:\t\t\t1231\nFORM TYPE: 10-Q", CIK_3M, "--12-31"),
    ("FORM 8-K\nACME CORP\nCentral Index Key: 66740\nFiscal year end: December 31", CIK_3M, "--12-31"),
    ("FORM 10-Q\nCIK No. 320193\nFor the quarterly period ended June 25, 2022", "0000320193", None),
])
def test_cover_text_states_cik_and_fiscal_year_end(text, cik, fye):
    cover = parse_cover(text)
    assert (cover["cik"], cover["fiscal_year_end"]) == (cik, fye)


def test_month_day_accepts_the_ways_a_fiscal_year_end_is_written():
    assert [month_day(t) for t in ("--09-28", "0928", "September 28", "Sept. 28", "Feb 29")] == [
        "--09-28", "--09-28", "--09-28", "--09-28", "--02-29"]
    assert [month_day(t) for t in ("--02-30", "1332", "Smarch 3", "")] == [None, None, None, None]


def test_an_old_library_gains_the_columns_and_10k_fiscal_year_ends(tmp_path, monkeypatch):
    """A library written before m005 (rows as the older release stored them) opens with the new columns: a 10-K's
    fiscal-year end filled from its period end, no CIK, and the registrant view sharing both."""
    home = tmp_path / "old"
    with monkeypatch.context() as m:
        m.setattr(migrations, "MIGRATIONS", [s for s in migrations.MIGRATIONS if s[0] <= 4])
        Library(home).close()
    conn = sqlite3.connect(home / "library.sqlite3")
    assert "cik" not in {r[1] for r in conn.execute("PRAGMA table_info(filings)")}
    rows = [("a" * 64, "3M_2017_10K", "3M", None, "10-K", "2017", "2017-12-31", 2017),
            ("b" * 64, "3M_2019Q1_10Q", "3M", "MMM", "10-Q", "2019Q1", "2019-03-31", 2019)]
    conn.executemany(
        "INSERT INTO filings(sha256, path, doc_name, issuer_key, registrant, ticker, form, period, period_end, "
        "fiscal_year, n_pages, n_chunks, summary, parser_version, bytes, ingested_at) "
        "VALUES (?, '/x.pdf', ?, ?, '3M COMPANY', ?, ?, ?, ?, ?, 0, 0, '', 'pdf-rows-1/html-2/chunk-2', 1, '')",
        rows)
    conn.commit()
    conn.close()

    library = Library(home)
    assert library.migrations_applied == ["m005_registrant_identity", "m006_page_index_and_folios", "m007_cards",
                                          "m008_chunk_terms", "m009_filings_by_path", "m010_sections",
                                          "m011_identity_sources", "m012_run_evaluation"]
    stored = dict(library.conn.execute("SELECT doc_name, fiscal_year_end FROM filings").fetchall())
    assert stored == {"3M_2017_10K": "--12-31", "3M_2019Q1_10Q": None}  # a 10-Q's period end is no year end
    assert library.conn.execute("SELECT COUNT(*) FROM filings WHERE cik IS NOT NULL").fetchone()[0] == 0
    filings = by_doc(library)
    assert filings["3M_2017_10K"].identity.ticker == "MMM"
    assert filings["3M_2017_10K"].inherited_from("ticker") == "3M_2019Q1_10Q"
    assert filings["3M_2019Q1_10Q"].identity.fiscal_year_end == "--12-31"
    assert filings["3M_2019Q1_10Q"].inherited_from("fiscal_year_end") == "3M_2017_10K"


def _ident(doc: str, year: int, **kw: str) -> FilingIdentity:
    return FilingIdentity(doc_name=doc, form="10-K", period=str(year), fiscal_year=year,
                          period_end=f"{year}-12-31", **kw)


def test_conflicting_stated_values_keep_their_own_and_are_logged(tmp_path, caplog):
    view = build_view({
        1: _ident("FB_2017_10K", 2017, issuer_key="META", registrant="Facebook, Inc."),
        2: _ident("FB_2020_10K", 2020, issuer_key="META", registrant="Facebook, Inc.", ticker="FB"),
        3: _ident("META_2022_10K", 2022, issuer_key="META", registrant="Meta Platforms, Inc.", ticker="META"),
    })
    (registrant,) = view.registrants
    assert registrant.ticker == "META" and registrant.conflicts == (
        "ticker: META (META_2022_10K), FB (FB_2020_10K)",)
    assert [view.by_filing[i].ticker for i in (1, 2, 3)] == ["META"] * 3

    # through the library: the filing stating FB keeps FB, the one stating none gets the most recent (META)
    folder = tmp_path / "filings" / "META" / "10-K"
    write_cover_pdf(folder / "META_2017_10K.pdf", name="Facebook, Inc.", form="10-K", period_text="December 31, 2017")
    write_cover_pdf(folder / "META_2020_10K.pdf", name="Facebook, Inc.", form="10-K", period_text="December 31, 2020",
                    ticker="FB")
    write_cover_pdf(folder / "META_2022_10K.pdf", name="Meta Platforms, Inc.", form="10-K",
                    period_text="December 31, 2022", ticker="META")
    home = ingested(tmp_path, tmp_path / "filings").home
    with caplog.at_level(logging.INFO, logger="engine.store.library"):
        library = Library(home)  # a library opened afresh logs what it finds
        tickers = {d: f.identity.ticker for d, f in by_doc(library).items()}
        library.registrants()  # once per library, not on every read
    assert tickers == {"META_2017_10K": "META", "META_2020_10K": "FB", "META_2022_10K": "META"}
    logged = [r.getMessage() for r in caplog.records if "different values" in r.getMessage()]
    assert len(logged) == 1 and "FB (META_2020_10K)" in logged[0]


def test_two_ciks_are_two_registrants_even_under_one_company_key():
    """Alphabet and Google Inc. filed under different CIKs; a folder holding both does not make them one."""
    view = build_view({
        1: _ident("GOOGL_2014_10K", 2014, issuer_key="GOOGL", cik="0001288776", ticker="GOOG"),
        2: _ident("GOOGL_2016_10K", 2016, issuer_key="GOOGL", cik="0001652044"),
        3: _ident("GOOGL_2018_10K", 2018, issuer_key="GOOGL"),
    })
    assert len(view.registrants) == 2
    assert view.by_filing[1].cik == "0001288776" and view.by_filing[2].cik == "0001652044"
    assert view.by_filing[3] is view.by_filing[2]  # a filing without a CIK joins the most recent one's
    assert view.by_filing[2].ticker is None  # Google Inc.'s ticker is not Alphabet's


def test_a_52_53_week_year_end_moving_by_days_is_no_conflict():
    view = build_view({
        1: _ident("BESTBUY_2018_10K", 2018, issuer_key="BESTBUY", fiscal_year_end="--02-03"),
        2: _ident("BESTBUY_2019_10K", 2019, issuer_key="BESTBUY", fiscal_year_end="--02-02"),
        3: _ident("BESTBUY_2023_10K", 2023, issuer_key="BESTBUY", fiscal_year_end="--01-28"),
    })
    (registrant,) = view.registrants
    assert registrant.fiscal_year_end == "--01-28" and registrant.conflicts == ()


def add_exhibit_links(path: Path, ciks: list[str]) -> Path:
    """An exhibit index page appended to the PDF: one line per exhibit, each a link into EDGAR's archive folder of
    the CIK given (as printed EDGAR filings link the registrant's earlier filings)."""
    doc = pymupdf.open(path)
    page = doc.new_page()
    for i, cik in enumerate(ciks):
        y = 72 + 16 * i
        page.insert_text((72, y), f"3.{i + 1}  Exhibit incorporated by reference", fontsize=10)
        page.insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(72, y - 10, 300, y + 2),
                          "uri": f"https://www.sec.gov/Archives/edgar/data/{cik}/000006674018000010/ex{i}.htm"})
    doc.saveIncr()
    return path


def test_a_pdf_whose_exhibit_links_name_its_edgar_folder_gets_that_cik_and_its_10q_shares_it(tmp_path):
    """The cover prints only a Commission File Number; the exhibit index links into EDGAR folder 66740 three times
    (once into another registrant's): the 10-K shows CIK 0000066740, said to come from its links, and the 10-Q of
    the same company shows it as the registrant's."""
    folder = tmp_path / "filings"
    add_exhibit_links(write_cover_pdf(folder / "3M" / "10-K" / "3M_2019_10K.pdf", name="3M COMPANY",
                                      form="10-K", period_text="December 31, 2019", ticker="MMM"),
                      ["66740", "66740", "1234567", "66740"])
    write_cover_pdf(folder / "3M" / "10-Q" / "3M_2020Q1_10Q.pdf", name="3M COMPANY", form="10-Q",
                    period_text="March 31, 2020")
    filings = by_doc(ingested(tmp_path, folder))
    annual, quarter = filings["3M_2019_10K"], filings["3M_2020Q1_10Q"]
    assert (annual.identity.cik, annual.identity.cik_source) == (CIK_3M, FROM_LINKS)
    assert quarter.identity.cik == CIK_3M and quarter.inherited_from("cik") == "3M_2019_10K"


def test_links_split_between_registrants_name_no_cik():
    assert linked_cik([f"https://www.sec.gov/Archives/edgar/data/{c}/x.htm" for c in ("66740", "1234567")]) is None
    assert linked_cik(["https://www.example.com/edgar/66740"]) is None


def add_balance_sheet_page(path: Path, quarter: str, year_end: str) -> Path:
    """A condensed balance sheet page comparing the quarter's end with the last fiscal year's end."""
    doc = pymupdf.open(path)
    page = doc.new_page()
    lines = [("CONDENSED CONSOLIDATED BALANCE SHEETS", "", ""), ("(In millions)", quarter, year_end),
             ("Cash and cash equivalents", "4,118", "2,219"), ("Accounts receivable", "4,326", "4,153"),
             ("Inventories", "4,230", "4,134"), ("Prepaid expenses", "1,020", "874"),
             ("Total current assets", "13,694", "11,380"), ("Property, plant and equipment", "9,215", "9,333")]
    for y, row in enumerate(lines):
        for x, cell in zip((72, 300, 400), row, strict=True):
            page.insert_text((x, 72 + 16 * y), cell, fontsize=10)
    doc.saveIncr()
    return path


def test_a_10q_without_a_fiscal_year_end_on_its_cover_takes_its_balance_sheets_year_end_column(tmp_path):
    """NVIDIA-like: a 10-Q whose fiscal year ends in January; its balance sheet compares October 30, 2022 with
    January 30, 2022."""
    path = add_balance_sheet_page(write_cover_pdf(tmp_path / "f" / "NVDA" / "10-Q" / "NVDA_2023Q3_10Q.pdf",
                                                  name="NVIDIA CORPORATION", form="10-Q",
                                                  period_text="October 30, 2022"),
                                  "October 30, 2022", "January 30, 2022")
    filing = by_doc(ingested(tmp_path, path))["NVDA_2023Q3_10Q"]
    assert filing.identity.fiscal_year_end == "--01-30"
    assert filing.identity.fiscal_year_end_source == FROM_BALANCE_SHEET
    assert filing.identity.cik is None  # nothing in it states one


def write_links_and_balance_sheet(folder: Path) -> Path:
    """3M's 2019 10-K linking its exhibits into EDGAR folder 66740, and a 2020 10-Q whose cover states no fiscal-year
    end but whose balance sheet has a December 31 column."""
    add_exhibit_links(write_cover_pdf(folder / "3M" / "10-K" / "3M_2019_10K.pdf", name="3M COMPANY", form="10-K",
                                      period_text="December 31, 2019"), ["66740", "66740"])
    add_balance_sheet_page(write_cover_pdf(folder / "3M" / "10-Q" / "3M_2020Q1_10Q.pdf", name="3M COMPANY",
                                           form="10-Q", period_text="March 31, 2020"),
                           "March 31, 2020", "December 31, 2019")
    return folder


def test_refresh_identity_fills_a_library_stored_before_links_and_balance_sheets_were_read(tmp_path):
    library = ingested(tmp_path, write_links_and_balance_sheet(tmp_path / "filings"))
    library.conn.execute("UPDATE filings SET cik=NULL, cik_source=NULL, identity_version=''")
    library.conn.execute("UPDATE filings SET fiscal_year_end=NULL WHERE form='10-Q'")
    library.conn.commit()
    library._view = None
    assert library.own_identity(by_doc(library)["3M_2020Q1_10Q"].id).fiscal_year_end is None

    assert refresh_identity(library) == (2, 2)
    assert refresh_identity(library) == (0, 0)  # read once
    own = {doc: library.own_identity(f.id) for doc, f in by_doc(library).items()}
    assert own["3M_2019_10K"].cik == CIK_3M
    assert own["3M_2020Q1_10Q"].fiscal_year_end == "--12-31"
    assert by_doc(library)["3M_2020Q1_10Q"].identity.cik == CIK_3M


def test_index_build_reads_again_whatever_an_older_reader_read_and_says_what(tmp_path, capsys):
    """An upgraded library: facts and sections read by older readers are read again by `index build` (only those
    filings), before the indexes; the facts come back as they were (the file did not change), then nothing is
    stale."""
    from engine.ingest import stale_readings

    library = ingested(tmp_path, write_links_and_balance_sheet(tmp_path / "filings"))
    filing = by_doc(library)["3M_2020Q1_10Q"].id  # (the filing that prints a balance sheet)
    before = sorted((s.fact.label, s.fact.printed) for s in library.facts(filing_ids=[filing]))
    assert before
    library.conn.execute("DELETE FROM facts WHERE filing_id=?", (filing,))
    library.conn.execute("UPDATE filings SET facts_version='facts-0', section_version='' WHERE id=?", (filing,))
    library.conn.commit()
    assert stale_readings(library) == {"sections": 1, "statement facts": 1}
    home = library.home
    library.close()
    assert main(["--home", str(home), "index", "build"]) == 0
    assert "library: read again with the current readers: the sections of 1 filing; the statement facts of 1 " \
           "filing" in capsys.readouterr().err
    with Library(home) as library:
        assert stale_readings(library) == {}
        assert sorted((s.fact.label, s.fact.printed) for s in library.facts(filing_ids=[filing])) == before


@pytest.mark.parametrize(("text", "day"), [
    ("FORM 8-K\nDate of Report (Date of earliest event reported): July 1, 2022 (June 30, 2022)\nAMCOR PLC", "2022-07-01"),
    ("FORM 8-K\nDate of report (Date of earliest event reported):\nAugust 30, 2023\nJohnson & Johnson", "2023-08-30"),
    ("FORM 8-K\nCURRENT REPORT\n\nFebruary 2, 2023\nDate of Report (Date of earliest event reported)\n\nApple Inc.",
     "2023-02-02"),
])
def test_an_8k_report_date_is_read_on_its_line_the_next_or_above_its_caption(text, day):
    assert parse_cover(text)["period_end"] == day


@pytest.mark.parametrize(("text", "day"), [
    ("FORM 10-Q\nFor the quarterly period ended June 30, 2022\nor", "2022-06-30"),
    # a two-column cover: the caption's line ends in the next column's words, the date opens the next line
    ("FORM 10-Q\nFor the quarterly period ended  Commission file\nJune 30, 2022  number 1-5805\nQuillon Bank Corp.",
     "2022-06-30"),
    ("FORM 10-K\nFor the fiscal year ended\nDecember 31, 2022\nor", "2022-12-31"),
    # a date further down (a later line's) is not the period's
    ("FORM 10-Q\nFor the quarterly period ended\nCommission file number 1-5805\nJune 30, 2022", None),
])
def test_a_period_end_is_read_after_its_caption_or_at_the_next_lines_start(text, day):
    assert parse_cover(text)["period_end"] == day


@pytest.mark.parametrize(("text", "name", "ticker"), [
    ("Quillon reports results\nNew Haven, Conn. (July 20, 2023) – Quillon Brands Inc. (NYSE: QLB) today announced",
     "Quillon Brands Inc.", "QLB"),
    ("HARTFORD, Conn.--(BUSINESS WIRE)-- Harborview Therapeutics, Inc. (NASDAQ: HRBR) today reported",
     "Harborview Therapeutics, Inc.", "HRBR"),
    ("SPRINGFIELD, Ill. - April 25, 2023 - Orchard & Vale Co. (Nasdaq Global Select Market: OVC) today reported",
     "Orchard & Vale Co.", "OVC"),
    # an SEC cover's registrant is the registrant, whatever a later line says
    ("FORM 8-K\nACME CORP\n(Exact name of registrant as specified in its charter)\nExhibit 99.1 – Acme Corp "
     "(NYSE: ACM) today", "ACME CORP", None),
    # a listing mentioned in a sentence is no dateline
    ("The notes of Beta Holdings (NYSE: BETA) trade on the exchange.", None, None),
])
def test_an_earnings_releases_issuer_is_read_from_its_dateline(text, name, ticker):
    cover = parse_cover(text)
    assert (cover["registrant"], cover["ticker"]) == (name, ticker)


def test_a_stored_8k_whose_date_an_older_cover_reader_missed_gets_it_from_its_stored_cover(tmp_path):
    """refresh_identity reads the stored cover's text again (no file opened) and fills the period's end it lacks."""
    library = ingested(tmp_path, write_cover_pdf(tmp_path / "filings" / "ACME_2023_8K.pdf", name="ACME CORP",
                                                 form="8-K", period_text="x"))
    fid = by_doc(library)["ACME_2023_8K"].id
    library.conn.execute("UPDATE pages SET text = 'FORM 8-K\nCURRENT REPORT\n\nFebruary 2, 2023\nDate of Report "
                         "(Date of earliest event reported)\n\nACME CORP' WHERE filing_id=? AND page_index=0", (fid,))
    library.conn.execute("UPDATE filings SET period_end=NULL, identity_version='identity-2'")
    library.conn.commit()
    library._view = None
    assert refresh_identity(library) == (1, 1)
    assert library.own_identity(fid).period_end == "2023-02-02"
