"""Statement pages written into real PDFs for tests: title lines, a header of two period columns, rows of a
label and two values, as a filing prints them (the ingest reads them back with its real PDF reader)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def statement_page(doc: Any, title_lines: Sequence[str], header: tuple[str, str],
                   rows: Sequence[tuple[str, str, str]], columns: tuple[float, float] = (300, 400),
                   caption: str = "") -> Any:
    """A new page of ``doc`` (a pymupdf Document): the title lines, a caption over the columns ("SECOND QUARTER"),
    the two column headers, then the rows."""
    page = doc.new_page()
    y = 72
    for line in title_lines:
        page.insert_text((72, y), line, fontsize=10)
        y += 16
    if caption:
        page.insert_text((columns[0], y), caption, fontsize=10)
        y += 16
    for x, head in zip(columns, header, strict=True):
        page.insert_text((x, y), head, fontsize=10)
    for label, a, b in rows:
        y += 16
        page.insert_text((72, y), label, fontsize=10)
        for x, cell in zip(columns, (a, b), strict=True):
            page.insert_text((x, y), cell, fontsize=10)
    return page
