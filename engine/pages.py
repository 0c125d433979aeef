"""Page numbers for people, in one place.

The engine stores, traces and labels pages by their 0-based index in the file (``page_index``: PyMuPDF's
numbering, the HTML reader's segments). Everything a person reads (CLI output, exports, the app, eval
reports, and the prompts a model reads) shows the page number a PDF reader shows (the first page is 1) and,
beside it, the folio the page prints when that differs: "p. 47 (printed 46)". Every output converts here;
prompts keep their own wording around the number ("page 47 (printed 46)"): a small model's replies change
with it.
"""

from __future__ import annotations

__all__ = ["cite", "page_index_of", "page_label", "page_number", "printed_note", "reader_page"]


def reader_page(page_index: int) -> int:
    """The PDF reader's page number of a 0-based page index (the first page is 1)."""
    return page_index + 1


def page_index_of(reader_number: int) -> int:
    """The 0-based page index of a page number a person typed (as a PDF reader numbers pages).

    Raises:
        ValueError: ``reader_number`` is below 1.
    """
    if reader_number < 1:
        raise ValueError(f"page {reader_number}: pages are numbered from 1, as a PDF reader shows them")
    return reader_number - 1


def printed_note(page_index: int, printed_folio: str | None) -> str:
    """"printed 46" when the page prints another number than the reader's; "" when it prints none or the
    same one."""
    same = printed_folio == str(reader_page(page_index))
    return f"printed {printed_folio}" if printed_folio and not same else ""


def page_number(page_index: int, printed_folio: str | None = None) -> str:
    """The page as a person reads it, without the "p.": "47", or "47 (printed 46)" (see
    :func:`printed_note`)."""
    note = printed_note(page_index, printed_folio)
    return f"{reader_page(page_index)} ({note})" if note else str(reader_page(page_index))


def page_label(page_index: int, printed_folio: str | None = None) -> str:
    """"p. 47", or "p. 47 (printed 46)" (see :func:`page_number`)."""
    return f"p. {page_number(page_index, printed_folio)}"


def cite(doc_name: str, page_index: int, printed_folio: str | None = None) -> str:
    """A filing's page as every output cites it: "3M_2019_10K p. 47 (printed 46)"."""
    return f"{doc_name} {page_label(page_index, printed_folio)}"
