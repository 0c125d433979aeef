"""Library-level identity: each filing's CIK and fiscal-year end as it states them. Real PDFs and iXBRL HTML written
at test time, ingested through the real ingest path into real SQLite."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from engine.ingest import ingest
from engine.ingest.identity import month_day, parse_cover
from engine.settings import Settings
from engine.store import Library

CIK_3M = "0000066740"


def write_cover_pdf(path: Path, *, name: str, form: str, period_text: str, ticker: str | None = None,
                    body: str = "Net sales were $32,765 million.") -> Path:
    """A two-page filing: an SEC cover (with a Trading Symbol(s) table when ``ticker`` is given, as covers carry
    one from 2019) and a page of text."""
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
                    ("Common Stock, Par Value $.01 Per Share", ticker, "New York Stock Exchange, Inc.")):
            for x, cell in zip((72, 300, 400), row, strict=True):
                page.insert_text((x, y), cell, fontsize=9)
            y += 14
    else:
        page.insert_text((72, y), "Common Stock, Par Value $.01 Per Share    New York Stock Exchange, Inc.", fontsize=9)
    doc.new_page().insert_text((72, 72), f"Item 7. Management's Discussion and Analysis. {body}", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
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


def ingested(tmp_path: Path, *paths: Path) -> Library:
    home = tmp_path / "lib"
    library = Library(home)
    report = ingest(library, paths, Settings(home=home, ingest={"workers": 1}))
    assert report.count("added") and not report.count("failed"), report.events
    return library


def by_doc(library: Library) -> dict:
    return {f.identity.doc_name: f for f in library.filings()}


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
