"""PDF page text with PyMuPDF, table rows kept on one line.

PyMuPDF's plain text puts every table cell on its own line, which tears a row's label away from its
numbers. We rebuild visual rows instead: PyMuPDF's text lines are grouped by vertical position and
joined left to right, cells separated by two spaces (what :mod:`engine.chunking` reads as a table gap).
Pages are indexed from 0, as PyMuPDF numbers them (people read them through :mod:`engine.pages`).
"""

from __future__ import annotations

from engine.errors import IngestError
from engine.invisible import visible
from engine.pages import reader_page

PDF_MAGIC = b"%PDF-"


WordBox = tuple[int, int, float, float, float, float]  # (char_start, char_end, x0, y0, x1, y1) on the page


def row_text(words: list[tuple], boxes: list[WordBox] | None = None) -> str:
    """The page's text with visual rows on one line; ``boxes`` (when given) receives every word's characters
    in that text and its box on the page."""
    # words: (x0, y0, x1, y1, text, block, line, word_no) from page.get_text("words", sort=False)
    lines: dict[tuple[int, int], list[tuple]] = {}
    words = [(*w[:4], visible(w[4]), *w[5:]) for w in words]
    for w in words:
        if not w[4]:
            continue  # a word of invisible characters only
        lines.setdefault((w[5], w[6]), []).append(w)
    items = []
    for ws in lines.values():
        ws.sort(key=lambda w: w[7])
        x0 = min(w[0] for w in ws)
        x1 = max(w[2] for w in ws)
        y0 = min(w[1] for w in ws)
        y1 = max(w[3] for w in ws)
        items.append((y0, y1, x0, x1, " ".join(w[4] for w in ws), ws))
    items.sort(key=lambda it: ((it[0] + it[1]) / 2, it[2]))
    rows: list[list[tuple]] = []
    for it in items:
        mid = (it[0] + it[1]) / 2
        if rows:
            row = rows[-1]
            top = min(r[0] for r in row)
            bottom = max(r[1] for r in row)
            if top <= mid <= bottom:
                row.append(it)
                continue
        rows.append([it])
    out = []
    pos = 0  # where the next line starts in the joined text
    prev_bottom = None
    for row in rows:
        row.sort(key=lambda r: r[2])
        top = min(r[0] for r in row)
        height = max(r[1] - r[0] for r in row) or 1.0
        if prev_bottom is not None and top - prev_bottom > 0.9 * height:
            out.append("")  # vertical whitespace: a paragraph break
            pos += 1
        line = "  ".join(r[4] for r in row)
        if boxes is not None:
            at = pos
            for item in row:
                for w in item[5]:
                    boxes.append((at, at + len(w[4]), w[0], w[1], w[2], w[3]))
                    at += len(w[4]) + 1
                at += 1  # the second space of the cell gap
        out.append(line)
        pos += len(line) + 1
        prev_bottom = max(r[1] for r in row)
    return "\n".join(out)


def span_box(boxes: list[WordBox], start: int, end: int) -> tuple[float, float, float, float] | None:
    """The box around the words printed at characters ``start:end`` of the page text (None: no word there)."""
    hit = [b for b in boxes if b[0] < end and b[1] > start]
    if not hit:
        return None
    return (min(b[2] for b in hit), min(b[3] for b in hit), max(b[4] for b in hit), max(b[5] for b in hit))


def read_pdf_pages(path: str, *, min_chars: int = 20, boxes: list[list[WordBox]] | None = None,
                   notes: list[str] | None = None) -> tuple[list[str], list[int]]:
    """Return (page texts, image-only page indexes) or raise IngestError with a one-line reason; ``boxes``
    (when given) receives each page's word boxes (see :func:`row_text`), ``notes`` what the user should know
    about a file that was read (a damaged file MuPDF repaired)."""
    import pymupdf

    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise IngestError(f"cannot read file: {exc.strerror or exc}") from exc
    if not head:
        raise IngestError("empty file (0 bytes)")
    if PDF_MAGIC not in head:
        raise IngestError("not a PDF (no %PDF- header); file content looks like " + _sniff(head))
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # PyMuPDF raises its own FileDataError and RuntimeErrors
        raise IngestError(f"corrupt PDF: {exc}") from exc
    with doc:
        try:
            if doc.needs_pass:
                raise IngestError("encrypted PDF: it needs a password")
            if doc.page_count == 0:
                raise IngestError("PDF has zero pages")
        except IngestError:
            raise
        except Exception as exc:  # a damaged page tree: MuPDF cannot even count the pages
            raise IngestError(f"corrupt PDF: {exc}") from exc
        if doc.is_repaired and notes is not None:
            notes.append("the file is damaged (MuPDF repaired its structure on reading): pages or text may be "
                         "missing; compare it with the original")
        pages, image_only = [], []
        try:
            for page in doc.pages():
                page_boxes: list[WordBox] | None = [] if boxes is not None else None
                text = row_text(page.get_text("words", sort=False), page_boxes)
                if boxes is not None and page_boxes is not None:
                    boxes.append(page_boxes)
                if len(text.strip()) < min_chars:
                    if page.get_images(full=False) or not text.strip():
                        image_only.append(page.number)
                pages.append(text)
        except Exception as exc:
            raise IngestError(f"corrupt PDF: page {reader_page(len(pages))} cannot be read: {exc}") from exc
    if len(image_only) == len(pages):
        raise IngestError(f"no text layer on any of its {len(pages)} pages (scanned images; OCR is not supported)")
    return pages, image_only


def _sniff(head: bytes) -> str:
    h = head.lstrip().lower()
    if h.startswith((b"<!doctype html", b"<html")):
        return "HTML"
    if h.startswith(b"pk\x03\x04"):
        return "a ZIP/Office file"
    if h.startswith((b"\x89png", b"\xff\xd8\xff", b"gif8")):
        return "an image"
    try:
        head.decode("utf-8")
        return "plain text"
    except UnicodeDecodeError:
        return "binary data"
