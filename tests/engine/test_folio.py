"""The folio a page prints, read from its text (:mod:`engine.ingest.folio`): the forms a header or footer
prints it in, the neighbouring pages that confirm it, and the cases where nothing is stored."""

from __future__ import annotations

from pathlib import Path

from engine.ingest.folio import printed_folios


def test_a_folio_is_a_number_in_a_header_or_footer_continued_by_its_neighbours() -> None:
    pages = ["FORM 10-K\nAcme Corp", "Table of Contents\nItem 1 ... 4\nii", "Forward-looking statements\niii",
             "Item 1. Business\ntext\n1", "Page 2\nmore text", "risk factors\n- 3 -",
             "results\nAcme Corp | 2023 Form 10-K | 4", "a page without a number", "Item 7\n6"]
    assert printed_folios(pages) == (None, "ii", "iii", "1", "2", "3", "4", None, "6")
    # F-pages of the financial statements, as printed
    f_pages = ["Balance sheet\nF-1", "Operations\nF-2", "Cash flows\nF-3"]
    assert printed_folios(f_pages) == ("F-1", "F-2", "F-3")
    # when in doubt, nothing: a lone page, the same year ending every page, an amount, a number that jumps
    assert printed_folios(["Revenue\n1"]) == (None,)
    assert printed_folios(["a\n2023", "b\n2023", "c\n2023"]) == (None, None, None)
    assert printed_folios(["a\n1,234", "b\n1,235"]) == (None, None)
    assert printed_folios(["a\n12", "b\n40", "c\n7"]) == (None, None, None)
    assert printed_folios(["a\n046", "b\n047"]) == (None, None)


def test_a_folio_printed_after_its_section_name_is_read_and_a_table_row_is_not() -> None:
    """Intel's 10-Qs end each page with the section's name and the folio set apart ("Other Key Information  40");
    one space between words and a number is a sentence's end or a table row, and is no folio."""
    pages = ["Table of Contents\nRisk text\nOther Key Information  40", "Table of Contents\nMore\nOther Key "
             "Information  41", "Table of Contents\nControls\nOther Key Information  42"]
    assert printed_folios(pages) == ("40", "41", "42")
    assert printed_folios(["a\nTotal 40", "b\nTotal 41", "c\nTotal 42"]) == (None, None, None)
    assert printed_folios(["a\nRevenue  $  40", "b\nRevenue  $  41"]) == (None, None)


def test_the_folios_an_html_filing_prints_before_its_page_breaks_are_kept(tmp_path: Path) -> None:
    from engine.ingest.html import read_html_document

    pages = ["<p>FORM 10-K</p><p>Acme Corp</p>"] + [
        f"<p>Item {n}. Text of page {n}.</p><p style='text-align:center'>{n}</p>" for n in (1, 2, 3)]
    breaks = "<hr style='page-break-after:always'/>"
    path = tmp_path / "acme.htm"
    path.write_text(f"<html><body>{breaks.join(pages)}</body></html>", encoding="utf-8")
    document = read_html_document(str(path))
    assert len(document.pages) == 4
    assert printed_folios(document.pages) == (None, "1", "2", "3")
