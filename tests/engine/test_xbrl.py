"""Inline XBRL: tagged values read from SEC HTML with their exact place in the page text, and merged into the
statement facts as exact ``xbrl`` facts that keep the table's provenance."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pytest

from engine.demo_corpus import (
    DEMO_CONCEPTS,
    USD_PER_SHARE,
    DemoFact,
    format_amount,
    generate_corpus,
    load_truth,
)
from engine.facts.tables import extract_page_facts
from engine.facts.xbrl import merge_xbrl
from engine.ingest.html import read_html_document
from engine.records import HtmlDocument, StatementFact


def _facts(document: HtmlDocument) -> list[StatementFact]:
    table = [f for page_no, text in enumerate(document.pages) for f in extract_page_facts(text, page_no)]
    return merge_xbrl(document, table)


# --- the demo corpus: every true value comes back tagged -------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("xbrl_corpus")
    generate_corpus(out, 12, seed=4, html_every=2)  # six HTML: 10-Ks and Q2/Q3 10-Qs, both page-break styles
    return out


@pytest.fixture(scope="module")
def html_filings(corpus: Path) -> list[tuple[Path, HtmlDocument, list[DemoFact]]]:
    truth: dict[str, list[DemoFact]] = defaultdict(list)
    for fact in load_truth(corpus):
        truth[fact.doc_name].append(fact)
    docs = [json.loads(line) for line in (corpus / "documents.jsonl").read_text().splitlines()]
    filings = [(corpus / d["path"], read_html_document(str(corpus / d["path"])), truth[d["doc_name"]])
               for d in docs if d["format"] == "html"]
    assert {p.stem.split("_")[1][4:] for p, _, _ in filings} == {"", "Q2", "Q3"}
    return filings


def _expected_period(fact: DemoFact) -> tuple[int, int, str]:
    """(fiscal year, months, ISO end) as the column label says: "Nine Months Ended September 30, 2022"."""
    label = fact.column_label
    end = datetime.strptime(label.rsplit("Ended ", 1)[-1], "%B %d, %Y").date()
    words = (("Three", 3), ("Six", 6), ("Nine", 9), ("Year", 12))
    months = next((m for word, m in words if label.startswith(word)), 0)  # a balance sheet date: an instant
    return end.year, months, end.isoformat()


def test_every_true_value_is_an_exact_xbrl_fact_on_its_page(html_filings: list) -> None:
    checked = 0
    for path, document, truth in html_filings:
        facts = _facts(document)
        assert len(truth) == 52 and len(document.tagged) == 52, path.name
        assert all(f.source == "xbrl" for f in facts), "every printed statement value is tagged and replaced"
        by_key = {(f.page_index, f.concept, f.period.fiscal_year, f.period.months, f.period.end): f for f in facts}
        assert len(by_key) == len(facts) == 52
        for fact in truth:
            year, months, end = _expected_period(fact)
            assert year == int(fact.fiscal_year_column)
            got = by_key.get((fact.page_index, DEMO_CONCEPTS[fact.metric], year, months, end))
            assert got is not None, (path.name, fact)
            per_share = fact.unit == USD_PER_SHARE
            assert got.value == fact.value, (fact, got)
            assert (got.scale, got.unit) == ((None, "USD/share") if per_share else ("millions", "USD"))
            assert got.label == fact.metric and got.period.header == fact.fiscal_year_column
            assert got.confidence == "high" and got.statement != "table"
            assert got.printed == format_amount(fact.value, fact.unit)
            assert document.pages[got.page_index][got.char_start: got.char_end] == got.printed
            checked += 1
    assert checked == 6 * 52


def test_signs_and_zeros_follow_the_tags_not_the_parentheses(html_filings: list) -> None:
    negatives = 0
    for _, document, _ in html_filings:
        for tag in document.tagged:
            page = document.pages[tag.page_index]
            assert page[tag.char_start: tag.char_end] == tag.printed
            assert "(" not in tag.printed and ")" not in tag.printed  # the tag holds the absolute digits
            if tag.sign == "-":
                negatives += 1
                assert page[tag.char_start - 1] == "(" and page[tag.char_end] == ")"
    assert negatives >= 6 * 4  # capital expenditures, dividends paid, investing cash flows, both columns


def _plain_pages(tmp_path: Path, name: str, text: str, **kw: int) -> tuple[str, ...]:
    """The pages of the same document read without its inline XBRL."""
    return read_html_document(_write(tmp_path, name, _untagged(text)), **kw).pages


def test_page_texts_are_those_of_the_untagged_filing_and_hide_the_header(html_filings: list,
                                                                         tmp_path: Path) -> None:
    for path, document, _ in html_filings:
        assert document.pages == _plain_pages(tmp_path, path.name, path.read_text(encoding="utf-8"))
        text = "\n".join(document.pages)
        assert "iso4217" not in text and "xbrli" not in text and "\ue000" not in text and "\ue001" not in text
        assert {c.instant is None for c in document.contexts.values()} == {True, False}
        assert document.units == {"USD": "iso4217:USD", "USDPerShare": "iso4217:USD/xbrli:shares"}


# --- hand-written inline XBRL ------------------------------------------------------------------------------

_ENTITY = '<xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000000001</xbrli:identifier>{}'
_HEADER = "\n".join([
    '<div style="display:none"><ix:header><ix:resources>',
    '<xbrli:context id="FY2023">' + _ENTITY.format("</xbrli:entity>") + "<xbrli:period><xbrli:startDate>"
    "2023-01-01</xbrli:startDate><xbrli:endDate>2023-12-31</xbrli:endDate></xbrli:period></xbrli:context>",
    '<xbrli:context id="FY2022">' + _ENTITY.format("</xbrli:entity>") + "<xbrli:period><xbrli:startDate>"
    "2022-01-01</xbrli:startDate><xbrli:endDate>2022-12-31</xbrli:endDate></xbrli:period></xbrli:context>",
    '<xbrli:context id="FY2023_Americas">' + _ENTITY.format(
        '<xbrli:segment><xbrldi:explicitMember dimension="us-gaap:StatementBusinessSegmentsAxis">'
        "acme:AmericasMember</xbrldi:explicitMember></xbrli:segment></xbrli:entity>")
    + "<xbrli:period><xbrli:startDate>2023-01-01</xbrli:startDate><xbrli:endDate>2023-12-31</xbrli:endDate>"
    "</xbrli:period></xbrli:context>",
    '<xbrli:context id="I2023">' + _ENTITY.format("</xbrli:entity>")
    + "<xbrli:period><xbrli:instant>2023-12-31</xbrli:instant></xbrli:period></xbrli:context>",
    '<xbrli:context id="SevenWeeks">' + _ENTITY.format("</xbrli:entity>") + "<xbrli:period><xbrli:startDate>"
    "2023-01-01</xbrli:startDate><xbrli:endDate>2023-02-18</xbrli:endDate></xbrli:period></xbrli:context>",
    '<xbrli:unit id="USD"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>',
    '<xbrli:unit id="shares"><xbrli:measure>xbrli:shares</xbrli:measure></xbrli:unit>',
    '<xbrli:unit id="pure"><xbrli:measure>xbrli:pure</xbrli:measure></xbrli:unit>',
    "</ix:resources></ix:header></div>",
])


def _ix(value: str, context: str, *, name: str = "us-gaap:Revenues", unit: str = "USD", **attrs: str) -> str:
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return (f'<ix:nonFraction name="{name}" contextRef="{context}" unitRef="{unit}" decimals="-3"{extra}>'
            f"{value}</ix:nonFraction>")


_OTHER = "us-gaap:OtherExpenses"
_STATEMENT = f"""<html><body>{_HEADER}
<p>ACME CORP</p><p>CONSOLIDATED STATEMENTS OF OPERATIONS</p><p>(In thousands)</p>
<table>
<tr><td></td><td colspan="4">Year Ended December 31,</td></tr>
<tr><td></td><td colspan="2">2023</td><td colspan="2">2022</td></tr>
<tr><td>Net sales</td><td>$</td><td>{_ix("1,234", "FY2023", scale="3")}</td>
<td>$</td><td>{_ix(" 1,100 ", "FY2022", scale="3")}</td></tr>
<tr><td>Current assets:</td></tr>
<tr><td>Other expense</td><td></td><td>({_ix("45", "FY2023", name=_OTHER, scale="3", sign="-")})</td>
<td></td><td>{_ix("—", "FY2022", name=_OTHER, scale="3", format="ixt:fixed-zero")}</td></tr>
<tr><td>Americas revenue</td><td></td><td>{_ix("700", "FY2023_Americas", scale="3")}</td>
<td></td><td>650</td></tr>
<tr><td>Unknown context row</td><td></td><td>{_ix("5", "nope", scale="3")}</td><td></td><td>6</td></tr>
</table>
<p>We had {_ix("1,000,000", "I2023", name="dei:EntityCommonStockSharesOutstanding", unit="shares")} shares
outstanding, a margin of {_ix("12.5", "FY2023", name="us-gaap:GrossMarginPercent", unit="pure", scale="-2")}%,
{_ix("n/a", "FY2023", name="us-gaap:Revenues")} revenue per store and {_ix("3", "SevenWeeks",
name="us-gaap:Revenues", scale="2")} hundred dollars in seven weeks.</p>
</body></html>
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _untagged(text: str) -> str:
    """The same document without inline XBRL: each tag a plain ``<span>`` (what a reader blind to iXBRL
    sees), the header emptied."""
    text = re.sub(r"<ix:header>.*?</ix:header>", "", text, flags=re.DOTALL)
    return re.sub(r"</ix:nonFraction>", "</span>", re.sub(r"<ix:nonFraction[^>]*>", "<span>", text))


@pytest.fixture()
def statement(tmp_path: Path) -> tuple[HtmlDocument, list[StatementFact]]:
    document = read_html_document(_write(tmp_path, "acme.htm", _STATEMENT))
    return document, _facts(document)


def _one(facts: list[StatementFact], label: str, column: int = 0) -> StatementFact:
    found = [f for f in facts if f.label == label and f.column == column]
    assert len(found) == 1, (label, column, facts)
    return found[0]


def test_tags_keep_the_page_text_and_point_at_their_characters(
    tmp_path: Path, statement: tuple[HtmlDocument, list[StatementFact]]
) -> None:
    document, _ = statement
    assert document.pages == _plain_pages(tmp_path, "plain.htm", _STATEMENT)
    page = document.pages[0]
    assert "$1,234  $1,100" in page and "(45)  —" in page  # "$" cells still merge with a tagged value
    printed = ["1,234", "1,100", "45", "—", "700", "5", "1,000,000", "12.5", "n/a", "3"]
    assert [t.printed for t in document.tagged] == printed
    for tag in document.tagged:
        assert page[tag.char_start: tag.char_end] == tag.printed
    assert "2023-12-31" not in page and "iso4217" not in page and "0000000001" not in page
    assert document.contexts["FY2023_Americas"].members == (
        "us-gaap:StatementBusinessSegmentsAxis=acme:AmericasMember",)
    assert document.contexts["I2023"].instant == "2023-12-31" and document.units["USD"] == "iso4217:USD"


def test_scale_sign_and_zero_dash(statement: tuple[HtmlDocument, list[StatementFact]]) -> None:
    _, facts = statement
    sales = _one(facts, "Net sales")
    assert (sales.source, sales.concept, sales.value, sales.scale, sales.unit) == (
        "xbrl", "Revenues", 1234.0, "thousands", "USD")
    assert sales.scaled_value == 1_234_000
    assert (sales.statement, sales.column, sales.period.header, sales.period.fiscal_year, sales.period.months,
            sales.period.end) == ("income statement", 0, "2023", 2023, 12, "2023-12-31")
    assert _one(facts, "Net sales", 1).value == 1100.0
    expense = _one(facts, "Other expense")
    assert (expense.source, expense.value, expense.printed) == ("xbrl", -45.0, "(45)")
    zero = _one(facts, "Other expense", 1)
    assert (zero.source, zero.value, zero.printed, zero.period.fiscal_year) == ("xbrl", 0.0, "—", 2022)
    assert expense.parent == "Current assets"  # the table's provenance is kept


def test_a_dimensional_value_is_kept_apart_from_the_consolidated_one(
    statement: tuple[HtmlDocument, list[StatementFact]],
) -> None:
    _, facts = statement
    americas = _one(facts, "Americas revenue")
    assert americas.source == "xbrl"
    assert americas.parent == "Current assets [Statement Business Segments: Americas]"
    assert _one(facts, "Americas revenue", 1).source == "table"  # an untagged cell stays as read


def test_unknown_context_or_unreadable_text_gives_no_fact(
    statement: tuple[HtmlDocument, list[StatementFact]],
) -> None:
    _, facts = statement
    assert [f.source for f in facts if f.label == "Unknown context row"] == ["table", "table"]
    assert not any(f.printed == "n/a" for f in facts)
    assert len([f for f in facts if f.source == "xbrl"]) == 8  # ten tags, less the two bad ones


def test_a_tag_outside_any_table(statement: tuple[HtmlDocument, list[StatementFact]]) -> None:
    _, facts = statement
    shares = next(f for f in facts if f.concept == "EntityCommonStockSharesOutstanding")
    assert (shares.label, shares.statement, shares.title, shares.column) == (
        "Entity Common Stock Shares Outstanding", "table", "", 0)
    assert (shares.unit, shares.value, shares.scale) == ("shares", 1_000_000.0, None)
    assert (shares.period.months, shares.period.end, shares.period.header) == (0, "2023-12-31", "2023-12-31")
    margin = next(f for f in facts if f.concept == "GrossMarginPercent")
    assert (margin.unit, margin.value, margin.scale) == ("%", 12.5, None)  # a percentage keeps its number
    odd = next(f for f in facts if f.concept == "Revenues" and f.statement == "table")
    assert (odd.value, odd.scale, odd.period.months, odd.confidence) == (300.0, None, None, "low")


def test_a_document_without_tags_keeps_its_table_facts(tmp_path: Path) -> None:
    document = read_html_document(_write(tmp_path, "plain.htm", _untagged(_STATEMENT)))
    assert document.tagged == () and document.contexts == {}
    table = [f for page_no, text in enumerate(document.pages) for f in extract_page_facts(text, page_no)]
    assert len(table) >= 8
    assert merge_xbrl(document, table) == table


def test_tags_survive_page_splitting_and_odd_markup(tmp_path: Path) -> None:
    paragraphs = [f"<p>Paragraph {i} reports {_ix(f'{i},{i:03d}', 'FY2023', scale='6')} of revenue for the "
                  "year, which management discusses at some length here.</p>" for i in range(1, 40)]
    odd = ("<table><tr><td>Broken</td><td>" + '<ix:nonFraction name="us-gaap:Revenues" contextRef="FY2023" '
           'unitRef="USD">77</td><td>88</td></tr></table>'  # never closed: ends with its cell
           "<p>Empty <ix:nonFraction name='a:B' contextRef='FY2023' unitRef='USD'> </ix:nonFraction> tag</p>")
    text = f"<html><body>{_HEADER}{''.join(paragraphs)}{odd}</body></html>"
    document = read_html_document(_write(tmp_path, "long.htm", text), page_chars=400)
    plain = _plain_pages(tmp_path, "long_plain.htm", text, page_chars=400)
    assert document.pages == plain and len(plain) > 5
    assert len(document.tagged) == 40  # the empty tag prints nothing and is not recorded
    for tag in document.tagged:
        assert document.pages[tag.page_index][tag.char_start: tag.char_end] == tag.printed
    assert document.tagged[-1].printed == "77"
    facts = merge_xbrl(document, [])
    assert [f.value for f in facts][:2] == [1001.0, 2002.0] and all(f.scale == "millions" for f in facts[:39])


def test_a_5mb_single_line_is_cut_into_pages_and_the_tags_before_it_stay(tmp_path: Path) -> None:
    statement = f"<p>Total revenue {_ix('1,234', 'FY2023', scale='6')} for the year.</p>"
    line = "revenue 1,234 " * 375_000  # 5.25 MB, one paragraph, one line
    text = f"<html><body>{_HEADER}{statement}<p>{line}</p><p>Signatures</p></body></html>"
    document = read_html_document(_write(tmp_path, "one_line.htm", text), max_page_chars=20_000)
    assert max(len(p) for p in document.pages) <= 20_000
    assert len(document.pages) > 250
    words = " ".join(document.pages).split()
    assert words.count("revenue") == 375_000 + 1 and words[-1] == "Signatures"  # nothing lost or doubled
    assert all(not p.startswith(" ") and not p.endswith(" ") for p in document.pages)
    (tag,) = document.tagged
    assert document.pages[tag.page_index][tag.char_start: tag.char_end] == "1,234"
    # A page of ordinary length is left as it was.
    short = read_html_document(_write(tmp_path, "short.htm", f"<html><body>{_HEADER}{statement}</body></html>"))
    assert short.pages == read_html_document(_write(tmp_path, "short2.htm",
                                                    f"<html><body>{_HEADER}{statement}</body></html>"),
                                             max_page_chars=10**9).pages


def test_a_filing_is_read_the_same_whatever_its_encoding(html_filings: list, tmp_path: Path) -> None:
    """UTF-16 (with and without a byte-order mark), windows-1252 declared or not, ISO-8859-1 declared (read as
    windows-1252, as browsers do) and UTF-8 with a BOM give the pages and facts of the UTF-8 file: before the
    reader found the encoding, a UTF-16 filing had no text it could read and was rejected as "not an SEC filing",
    and a windows-1252 one had every non-breaking space and dash replaced by U+FFFD."""
    path, _, _ = html_filings[0]
    text = path.read_text(encoding="utf-8")
    end = text.lower().rindex("</body")
    text = text[:end] + "<p>Management’s view — net sales rose 5\u00a0% (“organic”).</p>" + text[end:]
    reference = read_html_document(_write(tmp_path, "utf8.htm", text))
    head = text.lower().index("<head>") + len("<head>")

    def declared(charset: str) -> str:
        return f'{text[:head]}<meta http-equiv="Content-Type" content="text/html; charset={charset}">{text[head:]}'

    variants = {
        "utf16_bom.htm": text.encode("utf-16"),
        "utf16le.htm": text.encode("utf-16-le"),
        "utf16be.htm": text.encode("utf-16-be"),
        "utf8_bom.htm": b"\xef\xbb\xbf" + text.encode("utf-8"),
        "cp1252.htm": text.encode("cp1252"),
        "cp1252_declared.htm": declared("windows-1252").encode("cp1252"),
        "latin1_declared.htm": declared("ISO-8859-1").encode("cp1252"),
        "utf8_declared_1252.htm": declared("windows-1252").encode("utf-8"),  # re-saved as UTF-8, label kept
    }
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
        document = read_html_document(str(tmp_path / name))
        assert document.pages == reference.pages, name
        assert "\ufffd" not in "".join(document.pages), name
        assert _facts(document) == _facts(reference), name
    assert "Management’s view — net sales rose 5" in reference.pages[-1]
