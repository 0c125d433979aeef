"""Page-bounded chunking that respects paragraphs and keeps table rows whole.

A chunk never crosses a page, so every chunk maps to exactly one (filing, page, character span) and
``chunk.text == page_text[char_start:char_end]``. A chunk that starts inside a table carries the
table's header rows (column periods) in ``context`` so a row like "Capital expenditures  1,577  1,373"
still says which years its numbers belong to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.records import ChunkSpan
from engine.vocab.numbers import CELL, is_number_cell, scale_caption

# A table row: cells separated by the two-space gap the PDF parser writes, at least one of them numeric.
_GAP = "  "
_YEAR = re.compile(r"\b(19|20)\d\d\b")
_PERIOD_WORDS = re.compile(r"(months|weeks|year|quarter|fiscal|ended|as of|december|june|september|march)", re.IGNORECASE)


def is_table_row(line: str) -> bool:
    if _GAP not in line.strip():
        return False
    cells = [c.strip() for c in line.split(_GAP) if c.strip()]
    return len(cells) >= 2 and any(is_number_cell(c.replace(" ", "")) for c in cells[1:])


# Statement rows as cells: a label, then values (dot leaders or two-space gaps separate them).
CELL_GAP = re.compile(r"\s{2,}")
_LEADER = re.compile(r"\s*\.{3,}\s*")
VALUES_ONLY = re.compile(r"[\s$%()\d,.—–-]*")
FOOTNOTE_MARK = re.compile(r"\s*(?:\(\d{1,2}\)|\([a-z]\)|\*+|\[\d\])+$")
_GENERIC_LABELS = {"total", "other", "net", "subtotal", "balance", "balances", "thereafter", "amount",
                   "amounts", "beginning balance", "ending balance", "balance, beginning of period",
                   "balance, end of period", "balance at beginning of year", "balance at end of year",
                   "total, net", "total, at cost", "other, net"}


def parse_row(line: str, *, max_label: int = 90, generic: bool = False) -> tuple[str, list[str]] | None:
    """``(label, values)`` of a statement row (dot leaders or two-space gaps), else None.

    ``values`` keeps dashes (``—``) as cells so that columns stay aligned with the header's years. A label longer
    than ``max_label`` or a generic one ("Total", "Other, net": meaningless without its heading) is refused unless
    ``generic`` (a reader that keeps the heading, such as the statement-fact reader).
    """
    line = line.strip()
    m = _LEADER.search(line)
    if m:
        label, rest = line[: m.start()], line[m.end() :]
    else:
        cells = [c for c in CELL_GAP.split(line) if c]
        if len(cells) < 2:
            return None
        label, rest = cells[0], "  ".join(cells[1:])
    label = FOOTNOTE_MARK.sub("", label.strip().rstrip(":").rstrip("$").strip())
    if not VALUES_ONLY.fullmatch(rest) or not re.search(r"\d", rest):
        return None
    letters = sum(ch.isalpha() for ch in label)
    if letters < (2 if generic else 3) or len(label) > max_label or label[0].isdigit() or _YEAR.fullmatch(label):
        return None
    if (not generic and label.lower() in _GENERIC_LABELS) or label.lower().startswith(("item ", "page", "note ")):
        return None
    if scale_caption(label):
        return None
    values = CELL.findall(rest)
    if not values or all(_YEAR.fullmatch(v) for v in values):
        return None  # "(In millions)  2018  2017" is a column header, not a row
    return label, values


def is_header_row(line: str) -> bool:
    """A table's column-header row: several years, or period words with a year, on one row.

    Loose: a sentence with a year and a period word ("for the year ended December 31, 2022.") passes
    too, so a reader that must refuse prose checks more.
    """
    return len(_YEAR.findall(line)) >= 2 or (bool(_YEAR.search(line)) and bool(_PERIOD_WORDS.search(line)))


def _header_with_title(text: str, units: list[tuple[int, int]], k: int) -> str:
    """A table's column-header row plus up to two title lines above it (e.g. the statement's name)."""
    title: list[str] = []
    for s, e in reversed(units[max(0, k - 6) : k]):
        line = text[s:e].strip()
        if not line or is_table_row(line) or line.lower().startswith("table of contents"):
            if title:
                break
            continue
        title.insert(0, line)
        if len(title) == 2:
            break
    return " | ".join([*title, text[units[k][0] : units[k][1]].strip()])


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line including its newline."""
    spans, pos = [], 0
    for line in text.splitlines(keepends=True):
        spans.append((pos, pos + len(line)))
        pos += len(line)
    return spans


def _split_long(text: str, start: int, end: int, size: int) -> Iterable[tuple[int, int]]:
    """Split one over-long line at whitespace into pieces of at most ``size`` characters."""
    while end - start > size:
        cut = text.rfind(" ", start + size // 2, start + size)
        cut = start + size if cut <= start else cut + 1
        yield start, cut
        start = cut
    if end > start:
        yield start, end


def chunk_page(text: str, page_index: int, *, size: int = 1024, overlap: int = 30,
               seq_start: int = 0) -> list[ChunkSpan]:
    """Cut one page's text into chunks of at most ``size`` characters.

    Breaks prefer paragraph boundaries (blank lines), then line boundaries; table rows are never cut.
    Consecutive chunks of narrative text share ``overlap`` characters (snapped to a word boundary);
    chunks that start in a table start on a row boundary and repeat the table header instead.
    """
    units: list[tuple[int, int]] = []
    for start, end in _lines(text):
        units.extend(_split_long(text, start, end, size))
    chunks: list[ChunkSpan] = []
    headers_at = [(s, _header_with_title(text, units, k)) for k, (s, e) in enumerate(units) if is_header_row(text[s:e])]

    i = 0
    while i < len(units):
        c_start = units[i][0]
        j, best_break = i, None
        while j < len(units) and units[j][1] - c_start <= size:
            if not text[units[j][0] : units[j][1]].strip() and j > i:
                best_break = j  # blank line: paragraph boundary
            j += 1
        if j == i:  # cannot happen after _split_long, but never loop forever
            j = i + 1
        # Prefer to end at a paragraph break in the last 40% of the window.
        if j < len(units) and best_break is not None and units[best_break][1] - c_start >= 0.6 * size:
            j = best_break + 1
        c_end = units[j - 1][1]
        body = text[c_start:c_end]
        if body.strip():
            rows = sum(is_table_row(text[s:e]) for s, e in units[i:j])
            kind = "table" if rows * 2 >= (j - i) else "text"
            context = ""
            if rows:
                prior = [h for pos, h in headers_at if pos < c_start]
                context = prior[-1] if prior and prior[-1].split(" | ")[-1] not in body else ""
            lead = len(body) - len(body.lstrip())
            trail = len(body) - len(body.rstrip())
            chunks.append(
                ChunkSpan(
                    page_index=page_index, seq=seq_start + len(chunks), char_start=c_start + lead,
                    char_end=c_end - trail, kind=kind, text=body.strip(), context=context,
                )
            )
        if j >= len(units):
            break
        # Overlap: step back into the previous chunk for narrative text, never mid-row for tables.
        next_line = text[units[j][0] : units[j][1]]
        if overlap > 0 and not is_table_row(next_line) and kind == "text":
            snap = text.find(" ", max(c_end - overlap, c_start + 1), c_end)
            if 0 <= snap < c_end - 1 and units[j][1] - (snap + 1) <= size:
                units.insert(j, (snap + 1, c_end))  # the overlap becomes the next chunk's first unit
        i = j
    return chunks


def chunk_pages(pages: Iterable[str], *, size: int = 1024, overlap: int = 30) -> list[ChunkSpan]:
    out: list[ChunkSpan] = []
    for page_index, text in enumerate(pages):
        out.extend(chunk_page(text, page_index, size=size, overlap=overlap, seq_start=len(out)))
    return out
