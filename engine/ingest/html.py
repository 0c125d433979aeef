"""SEC HTML filings (EDGAR ``.htm``): text with table rows kept on one line, split into pages.

EDGAR documents mark printed page breaks with CSS ``page-break-before/after``; those become page
boundaries. A document without them is cut into pages of roughly ``page_chars`` characters at
paragraph boundaries so citations still point at a readable unit.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from engine.errors import IngestError

_BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "hr", "section", "title"}
_SKIP = {"script", "style", "head"}
_VOID = {"hr", "br", "img"}
_BREAK_STYLE = re.compile(r"page-break-(before|after)\s*:\s*always|break-(before|after)\s*:\s*page", re.I)
PAGE_MARK = "\f"


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.breaks = 0
        self.after_stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        style = " ".join(v or "" for k, v in attrs if k == "style")
        brk = _BREAK_STYLE.search(style)
        if tag in _SKIP:
            self.skip += 1
        if brk and ("before" in brk.group(0).lower() or tag in _VOID):
            self._page_break()
        elif brk:
            self.after_stack.append(tag)  # break when this element closes
        if tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
        elif tag in _BLOCK and self.row is None:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self.skip:
            self.skip -= 1
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            text = " ".join("".join(self.cell).split())
            if text:
                self.row.append(text)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            cells = _merge_symbol_cells(self.row)
            if cells:
                self.out.append("\n" + "  ".join(cells))
            self.row = None
        elif tag in _BLOCK and self.row is None:
            self.out.append("\n")
        if self.after_stack and self.after_stack[-1] == tag:
            self.after_stack.pop()
            self._page_break()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.cell is not None:
            self.cell.append(data)
        elif self.row is None:
            self.out.append(re.sub(r"\s+", " ", data))

    def _page_break(self) -> None:
        self.out.append(PAGE_MARK)
        self.breaks += 1


def _merge_symbol_cells(cells: list[str]) -> list[str]:
    """EDGAR puts '$', ')' and '%' in cells of their own; glue them to the number."""
    merged: list[str] = []
    for c in cells:
        if merged and c in {")", "%", ")%"}:
            merged[-1] += c
        elif merged and merged[-1] in {"$", "("}:
            merged[-1] += c
        else:
            merged.append(c)
    return merged


def _tidy(text: str) -> str:
    lines = [ln.strip() for ln in text.split("\n")]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _split_pages(text: str, page_chars: int) -> list[str]:
    pages, current = [], ""
    for para in text.split("\n\n"):
        if current and len(current) + len(para) > page_chars:
            pages.append(current)
            current = ""
        current = f"{current}\n\n{para}" if current else para
    if current:
        pages.append(current)
    return pages


def read_html_pages(path: str, *, page_chars: int = 3500) -> list[str]:
    """Return page texts of an HTML filing or raise IngestError."""
    try:
        raw = open(path, "rb").read()
    except OSError as exc:
        raise IngestError(f"cannot read file: {exc.strerror or exc}") from exc
    if not raw.strip():
        raise IngestError("empty file (0 bytes)")
    html = raw.decode("utf-8", errors="replace")
    if "<" not in html[:4096]:
        raise IngestError("not HTML: no markup in the first 4 KB")
    parser = _Extractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception as exc:  # html.parser is lenient; this is a last resort
        raise IngestError(f"HTML cannot be parsed: {exc}") from exc
    body = "".join(parser.out)
    if parser.breaks:
        pages = [_tidy(p) for p in body.split(PAGE_MARK)]
        pages = [p for p in pages if p]
    else:
        pages = _split_pages(_tidy(body), page_chars)
    if not pages or not any(p.strip() for p in pages):
        raise IngestError("HTML has no text")
    return pages
