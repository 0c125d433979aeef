"""Where a stored table's row labels are printed across a PDF page: their left edge, which says how far a row is
indented under the rows above it ("Selling, general and administrative" printed right of "Operating expenses:").

The page is read again as ingest read it (:func:`engine.ingest.pdf.row_text`: the same words, joined into the same
text), so a character of the stored page text maps to the box of the word printed there; a few milliseconds a page.
HTML filings have no positions: their rows nest by totals and blank lines only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from engine.ingest.pdf import WordBox, row_text  # the text ingest stored, read the same way

log = logging.getLogger(__name__)


def label_lefts(path: str | Path, page_index: int, page_text: str, starts: Sequence[int | None]) -> list[float | None]:
    """The x (points from the page's left edge) of the word printed at each character of ``starts`` in the stored
    ``page_text`` of page ``page_index`` of the PDF at ``path``; None for a start that is None or holds no word's
    first character, and for every start when the file is not a readable PDF or its page no longer reads as stored
    (a changed file: no position is better than a wrong one)."""
    none: list[float | None] = [None] * len(starts)
    if Path(path).suffix.lower() != ".pdf" or not any(s is not None for s in starts):
        return none
    import pymupdf

    try:
        with pymupdf.open(path) as doc:
            boxes: list[WordBox] = []
            text = row_text(doc[page_index].get_text("words", sort=False), boxes)
    except Exception as exc:  # noqa: BLE001 - a moved or damaged file: the rows nest without positions
        log.info("no label positions for %s page %d: %s", path, page_index + 1, exc)
        return none
    if text != page_text:
        log.info("no label positions for %s page %d: the page no longer reads as stored", path, page_index + 1)
        return none
    first = {b[0]: b[2] for b in boxes}
    return [first.get(s) if s is not None else None for s in starts]
