"""Where a cited passage sits on its page, and a picture of that page with the passage marked.

Used by the desktop page viewer and by the report exports; needs PyMuPDF only to render.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.chunking import CELL_GAP
from engine.records import Chunk

log = logging.getLogger(__name__)

HIGHLIGHT_RGB = (1.0, 0.84, 0.0)
HIGHLIGHT_EDGE_RGB = (0.9, 0.59, 0.0)


def evidence_lines(text: str, max_lines: int = 80, *, skip_first: bool = False) -> list[list[str]]:
    """The lines of a chunk worth searching for on the page, each split into its table cells.

    Table rows are stored with runs of two or more spaces between cells ("Purchases of PP&E  (1,577)
    (1,373)"); on the page those cells sit in separate columns, so each is searched for on its own.
    Very short lines are dropped: they match everywhere.
    """
    out = []
    lines = text.splitlines()
    for line in lines[1:] if skip_first and len(lines) > 1 else lines:
        cells = [" ".join(c.split())[:240] for c in CELL_GAP.split(line.strip()) if c.strip()]
        if cells and len(" ".join(cells)) >= 3:
            out.append(cells)
        if len(out) >= max_lines:
            break
    return out


def starts_mid_line(page_text: str, chunk: Chunk) -> bool:
    """True when the chunk begins inside a line (the overlap with the previous chunk): that fragment
    would match the same words elsewhere on the page, so it is not searched for."""
    return 0 < chunk.char_start <= len(page_text) and page_text[chunk.char_start - 1] != "\n"


def _search(page: Any, needle: str) -> list[Any]:
    try:
        return list(page.search_for(needle))
    except Exception:  # noqa: BLE001 - a search failure only loses the highlight
        return []


def find_evidence(page: Any, text: str, *, skip_first: bool = False) -> list[Any]:
    """Rectangles of the chunk's lines on a PyMuPDF page, following reading order.

    Each line's first cell is searched with ``page.search_for``; of several hits the first one at or
    below the previous line's hit is taken, so a repeated short line (a year, a page number) does not
    light up the whole page. The row's other cells (the figures of a table row) are then marked where
    they sit on that same row, to its right.
    """
    rects: list[Any] = []
    cursor = -1.0
    for cells in evidence_lines(text, skip_first=skip_first):
        hits = _search(page, cells[0])
        if not hits:
            continue
        if len(hits) > 1 and len(cells[0]) < 12 and not rects:
            continue  # an ambiguous short first line: wait for a distinctive one to anchor the cursor
        below = [h for h in hits if h.y0 >= cursor - 2]
        hit = (below or hits)[0]
        rects.append(hit)
        cursor = max(cursor, hit.y0)
        middle, right = (hit.y0 + hit.y1) / 2, hit.x1
        for cell in cells[1:]:
            same_row = [h for h in _search(page, cell) if h.y0 <= middle <= h.y1 and h.x0 >= right - 1]
            if same_row:
                rects.append(same_row[0])
                right = same_row[0].x1
    return rects


@dataclass(frozen=True)
class Snapshot:
    """A rendered page: PNG bytes, or ``None`` with the reason (not a PDF, file moved, render failed)."""

    png: bytes | None
    highlighted: int  # evidence lines found and marked
    note: str = ""


def page_snapshot(pdf_path: str | Path, chunk: Chunk, page_text: str, *, zoom: float = 1.25) -> Snapshot:
    """Render the chunk's page of ``pdf_path`` with the chunk's lines marked.

    The marks are drawn on the in-memory document only; the file is never written.
    """
    path = Path(pdf_path)
    if path.suffix.lower() != ".pdf":
        return Snapshot(None, 0, "HTML filing: no page image, the stored page text is shown")
    if not path.is_file():
        return Snapshot(None, 0, f"the PDF is no longer at {path}")
    import pymupdf

    try:
        with pymupdf.open(path) as doc:
            page = doc[chunk.page_index]
            rects = find_evidence(page, chunk.text, skip_first=starts_mid_line(page_text, chunk))
            for r in rects:
                page.draw_rect(pymupdf.Rect(r.x0 - 1, r.y0 - 1, r.x1 + 1, r.y1 + 1), color=HIGHLIGHT_EDGE_RGB,
                               fill=HIGHLIGHT_RGB, fill_opacity=0.35, width=0.6, overlay=True)
            png = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False).tobytes("png")
    except Exception as exc:  # noqa: BLE001 - a page that cannot be rendered falls back to its text
        log.warning("cannot render %s page index %d: %s", path, chunk.page_index, exc)
        return Snapshot(None, 0, f"cannot render the page ({exc})")
    return Snapshot(png, len(rects))
