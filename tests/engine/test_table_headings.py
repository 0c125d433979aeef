"""Statement tables' titles as a user reads them in the Tables panel: the heading each page prints above its table
(:func:`engine.facts.tables.table_titles`), read from generated PDFs through the real ingest — never a cover page's
line, a sentence or its wrapped tail, column groups printed over the columns, nor a letter split from its word; a
primary statement only when the heading is the statement's own."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from engine.facts.tables import table_titles
from engine.ingest import ingest
from engine.settings import Settings
from engine.store import Library

Line = tuple[float, str]  # (x, text) pieces printed on one line


def _page(doc: pymupdf.Document, lines: list[list[Line]]) -> None:
    page = doc.new_page()
    for i, pieces in enumerate(lines):
        for x, text in pieces:
            page.insert_text((x, 60 + 15 * i), text, fontsize=9)


def _rows(*rows: tuple[str, str, str]) -> list[list[Line]]:
    return [[(72, label), (360, a), (460, b)] for label, a, b in rows]


def _filing(path: Path) -> None:
    doc = pymupdf.open()
    _page(doc, [[(200, "UNITED STATES")], [(160, "SECURITIES AND EXCHANGE COMMISSION")],
                [(190, "WASHINGTON, D.C. 20549")], [(220, "FORM 10-K")],
                [(72, "ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934")],
                [(150, "For the fiscal year ended December 31, 2023")], [(72, "ACME CORP")],
                [(72, "One Main Street, Springfield, Ohio"), (400, "45501")],
                [(72, "(Address of principal executive offices)"), (400, "(Zip Code)")]])
    # a statement whose heading runs on with the company's name (ten words, no figures: not a sentence)
    _page(doc, [[(72, "Index")], [],
                [(72, "Consolidated Statements of Comprehensive Income"), (330, "Acme Corp and Subsidiary Companies")],
                [], [(72, "Years ended December 31,")], [(72, "(In millions)"), (360, "2023"), (460, "2022")],
                *_rows(("Net income", "960", "1,066"), ("Foreign currency translation", "(12)", "40"),
                       ("Total comprehensive income", "948", "1,106"))])
    # the PDF's text layer prints the heading's last letter apart from its word
    _page(doc, [[(72, "Consolidated Balance Shee"), (194.5, "t")], [(72, "At December 31")], [],
                [(300, "December 31,"), (420, "December 31,")], [(72, "(Dollars in millions)"), (360, "2023"),
                                                                  (460, "2022")],
                *_rows(("Cash and cash equivalents", "3,053", "2,398"), ("Total assets", "37,987", "32,906"))])
    # an MD&A summary whose introducing sentence names the balance sheet; a note's table under column groups and
    # under a sentence whose wrapped tail begins with a day
    _page(doc, [[(72, "Key Balance Sheet Data")], [],
                [(72, "Balance sheet and working capital measures are provided in the following table (in millions):")],
                [(300, "December 31,")], [(360, "2023"), (460, "2022")],
                *_rows(("Working capital", "3,942", "3,723"), ("Total debt", "7,816", "7,211")), [],
                [(72, "Affiliated Companies at Equity Method")],
                [(72, ("The results of operations of the investments accounted for under the equity method are "
                       "presented below as of December"))],
                [(72, "31 for each respective year (in millions):")], [(360, "2023"), (460, "2022")],
                *_rows(("Net sales", "1,508", "1,759"), ("Gross profit", "79", "424")), [],
                [(72, "14. Hedging Activities")], [],
                [(72, "Asset derivatives"), (300, "Liability derivatives")],
                [(72, "Balance sheet"), (300, "Balance sheet")],
                [(72, "location"), (360, "2023"), (460, "2022")],
                *_rows(("Other current assets", "38", "4"), ("Other assets", "37", "2"))])
    # the statement's name above the company's, which is in capitals
    _page(doc, [[(72, "Consolidated Statements of Total Equity, and Redeemable Interest")],
                [(72, "ACME CORP AND SUBSIDIARIES")], [(72, "(In Millions)")], [],
                [(360, "2023"), (460, "2022")],
                *_rows(("Balance at beginning of year", "5,392", "5,100"), ("Balance at end of year", "5,675", "5,392"))])
    doc.save(path)


@pytest.fixture(scope="module")
def titles(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[tuple[str, str, str]]]:
    """Per page: (listed statement, printed heading, first row) of each table, in printed order."""
    root = tmp_path_factory.mktemp("headings")
    (root / "in").mkdir()
    _filing(root / "in" / "ACME_2023_10K.pdf")
    with Library(root / "lib") as library:
        assert [e.status for e in ingest(library, [root / "in"], Settings(home=root / "lib")).events] == ["added"]
        facts = library.facts()
        tables: dict[tuple[int, str, str], tuple[int, str]] = {}
        for s in facts:
            key = (s.fact.page_index, s.fact.statement, s.fact.title)
            tables[key] = min(tables.get(key, (s.fact.char_start, s.fact.label)), (s.fact.char_start, s.fact.label))
        keys = sorted(tables, key=lambda k: (k[0], tables[k][0]))
        read = table_titles(library.page_texts(facts[0].filing_id), [(p, tables[(p, st, t)][0], st, t)
                                                                       for p, st, t in keys])
    out: dict[int, list[tuple[str, str, str]]] = {}
    for (page, _st, _title), (kind, heading) in zip(keys, read, strict=True):
        out.setdefault(page, []).append((kind, heading, tables[(page, _st, _title)][1]))
    return out


def test_a_cover_page_line_is_never_a_title(titles) -> None:
    assert titles[0] and all(heading == "" and kind == "table" for kind, heading, _first in titles[0]), titles[0]


def test_a_statement_heading_that_runs_on_with_the_company_name_is_found(titles) -> None:
    heading = "Consolidated Statements of Comprehensive Income Acme Corp and Subsidiary Companies"
    assert titles[1] == [("income statement", heading, "Net income")]


def test_a_letter_printed_apart_from_its_word_is_joined_back(titles) -> None:
    assert [(k, h) for k, h, _f in titles[2]] == [("balance sheet", "Consolidated Balance Sheet")]


def test_sentences_and_column_groups_are_no_titles_and_an_mdna_table_is_no_statement(titles) -> None:
    assert [(k, h) for k, h, _f in titles[3]] == [
        ("table", "Key Balance Sheet Data"),  # not listed with the primary statements
        ("table", "Affiliated Companies at Equity Method"),  # not "31 for each respective year (in millions):"
        ("table", "14. Hedging Activities"),  # not "Balance sheet Balance sheet"
    ]


def test_a_statement_heading_above_the_company_name_in_capitals_is_the_title(titles) -> None:
    assert [(k, h) for k, h, _f in titles[4]] == [
        ("equity", "Consolidated Statements of Total Equity, and Redeemable Interest")]
