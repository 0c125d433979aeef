"""What a filing's cover page registers under Section 12(b) of the Exchange Act: its table of the title of each
class, trading symbol(s) and the exchange(s) it is registered on, read row by row from the page's text.

Printed PDFs lay the table out in cells separated by runs of spaces, and wrap: a second exchange on a line of its
own ("MMM  Chicago Stock Exchange, Inc."), a title's tail ("per share  ADBE  NASDAQ"), an exchange's tail ("York
Stock Exchange, Inc."). A row begins with a cell that names a class of security (:mod:`engine.vocab.securities`:
"1.500% Notes due 2026", "Common Stock, Par Value $.01 Per Share") and starts with a capital or a figure; a line
that begins none is the row above continued: its symbols and exchanges join that row, a piece of an exchange
already named is dropped. The table ends where the cover goes on (Section 12(g), the first check box, a note).
Each row keeps its characters in the page text, so an answer quotes the row as printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.chunking import CELL_GAP
from engine.vocab.securities import class_of

__all__ = ["CoverListing", "Registration", "read_listing"]

_HEADER = re.compile(r"securities\s+registered\s+pursuant\s+to\s+section\s*12\s*\(\s*b\s*\)(?:\s+of\s+the\s+act)?"
                     r"\s*:?", re.IGNORECASE)
_END = re.compile(r"12\s*\(\s*g\s*\)|indicate\s+by\s+check|^\s*note\s*:|^\s*\(title\s+of\s+class\)|"
                  r"^\s*check\s+the\s+appropriate", re.IGNORECASE)
_COLUMN_HEADS = re.compile(r"title\s+of\s+(?:each\s+)?class|name\s+of\s+(?:each\s+)?exchange|trading\s+symbol|"
                           r"on\s+which\s+registered|^\s*registered\s*$", re.IGNORECASE)
_EXCHANGE = re.compile(r"\b(?:exchange|nasdaq|nyse|stock\s+market|cboe|bats)\b", re.IGNORECASE)
# "MMM26", "PEP28a", "AUKF/27", "JPM PR D", "VZ 24B"
_SYMBOL = re.compile(r"^[A-Z][A-Z0-9]{0,6}[a-z]?(?:[./-][A-Z0-9]{1,4})?(?: [A-Z0-9]{1,4}){0,2}$")
_NONE = re.compile(r"^\s*\(?none\)?\.?\s*$", re.IGNORECASE)
_MAX_LINES = 40  # a registered table longer than this is the cover's rest misread


@dataclass(frozen=True)
class Registration:
    """One class of securities the cover registers, as printed."""

    title: str  # "1.500% Notes due 2026"
    kind: str  # its class (resources/reader/securities.toml): debt | preferred | warrants | rights | units | common
    symbols: tuple[str, ...]  # "MMM26"; none printed on covers before 2019
    exchanges: tuple[str, ...]  # "New York Stock Exchange"
    char_start: int  # the row's characters in the page text (its first line to its last)
    char_end: int


@dataclass(frozen=True)
class CoverListing:
    """The cover's Section 12(b) table: its rows, or its statement that there are none."""

    rows: tuple[Registration, ...]
    none_stated: bool  # the cover prints "None" for Section 12(b)
    char_start: int  # the heading's characters in the page text ("Securities registered pursuant to …")
    char_end: int
    continues: bool = False  # the table runs to the page's end: its rows go on over the page


def _known(exchange: str, exchanges: list[str]) -> bool:
    # "York Stock Exchange, Inc." is the wrapped tail of "New York Stock Exchange, Inc."
    return any(e.endswith(exchange) or exchange.endswith(e) and len(exchange) - len(e) < 4 for e in exchanges)


def _cells(text: str) -> tuple[str, str | None, list[str], list[str]]:
    """A table line's title (with its class, None where it begins no row), symbols and exchanges."""
    cells = [c.strip() for c in CELL_GAP.split(text) if c.strip(" —–-")]
    exchanges = [c for c in cells if _EXCHANGE.search(c) and not c.startswith("(")]
    symbols = [c for c in cells if _SYMBOL.match(c) and c not in exchanges]
    title = " ".join(c for c in cells if c not in exchanges and c not in symbols and not c.startswith("("))
    kind = class_of(title) if title[:1].isupper() or title[:1].isdigit() else None
    return title, kind, symbols, exchanges


def _goes_on(next_page: str) -> bool:
    """Whether the next page opens with more of the table (a row naming a class, with its exchange or symbol)."""
    for line in next_page.split("\n")[:6]:
        text = line.strip()
        if not text or _COLUMN_HEADS.search(text):
            continue
        if _END.search(text):
            return False
        _, kind, symbols, exchanges = _cells(text)
        if kind is not None and (symbols or exchanges):
            return True
    return False


def read_listing(page_text: str, next_page: str | None = None) -> CoverListing | None:
    """The Section 12(b) table of a cover page's text; None when the page prints none (a release, a page other
    than the cover). A table that runs to the page's end ``continues`` unless ``next_page`` (the text of the page
    after) is given and opens with no more of its rows."""
    head = next((m for m in _HEADER.finditer(page_text)
                 if not re.search(r"\bif\s*$", page_text[max(0, m.start() - 16):m.start()], re.IGNORECASE)), None)
    if head is None:
        return None
    rows: list[dict] = []
    none_stated = False
    ended = False
    pos = head.end()
    for n, line in enumerate(page_text[pos:].split("\n")):
        start, end = pos, pos + len(line)
        pos = end + 1
        text = line.strip()
        if n == 0 and _NONE.match(text):  # the rest of the heading's line: "… of the Act: None"
            none_stated = ended = True
            break
        if n > _MAX_LINES or (text and _END.search(text)):
            ended = True
            break
        if not text or _COLUMN_HEADS.search(text):
            continue
        if _NONE.match(text):
            none_stated = ended = not rows
            break
        title, kind, symbols, exchanges = _cells(text)
        if kind is not None and rows and not exchanges and not symbols and rows[-1]["exchanges"]:
            kind = None  # a title's second line ("Non-Cumulative Preferred Stock, Series AA"): the row goes on
            rows[-1]["title"] += " " + title
            rows[-1]["kind"] = class_of(rows[-1]["title"])
        same = next((r for r in rows if r["title"] == title), None) if kind is not None else None
        if same is not None:  # one class on a second exchange, printed as a row of its own
            rows.remove(same)
            rows.append(same)
            same["symbols"] += [s for s in symbols if s not in same["symbols"]]
        elif kind is not None:
            rows.append({"title": title, "kind": kind, "symbols": symbols, "exchanges": [], "start": start,
                         "end": end})
        elif not rows:
            continue  # a line before the first row that names no class
        else:
            row = rows[-1]
            if title and title[:1].islower() and not row["title"].lower().endswith(title.lower()):
                row["title"] = f"{row['title']} {title}"  # a title's wrapped tail
            row["symbols"] += [s for s in symbols if s not in row["symbols"]]
            row["end"] = end
        row = rows[-1]
        for e in exchanges:
            if not _known(e, row["exchanges"]):
                row["exchanges"].append(e)
    continues = not ended and bool(rows) and (next_page is None or _goes_on(next_page))
    return CoverListing(
        tuple(Registration(r["title"], r["kind"], tuple(r["symbols"]), tuple(r["exchanges"]), r["start"], r["end"])
              for r in rows), none_stated, head.start(), head.end(), continues=continues)
