"""Figures printed in a passage's text outside the statement facts ("we operated 412 stores", "net sales grew 6.7%
to $1.2 billion", a table row the facts layer did not read): each with its value, unit and scale, the words around
it and its own clause. The answer step offers them as numbered lines a formula may name
(:mod:`engine.answer.fact_lines`); the number patterns are :mod:`engine.vocab.numbers`', the row units
:mod:`engine.facts.tables`'."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.facts.tables import YEAR, row_unit
from engine.vocab.numbers import MENTION, SCALE_FACTORS, caption_of, scale_word

__all__ = ["PrintedFigure", "figures_of"]

_CONTEXT = 60  # characters of text shown on each side of a printed figure


@dataclass(frozen=True)
class PrintedFigure:
    """A figure a passage's text prints outside the statement facts: as printed, its value (sign applied, before
    its scale), its unit (a statement fact's: "USD", "%", "count", "USD/share", "shares", …), its scale ("millions": a word after it, or the table's
    caption for a cell of a row), the words around it, the figure in brackets, and the words of its own clause
    (what the figure is of: "had [9,800] staff" in "we operated 412 stores and had 9,800 staff")."""

    printed: str
    value: float
    unit: str
    scale: str | None
    context: str
    clause: str = ""

    @property
    def scaled_value(self) -> float:
        return self.value * SCALE_FACTORS.get(self.scale or "", 1.0)


def figures_of(text: str) -> list[tuple[int, PrintedFigure]]:
    """Every figure ``text`` prints, with where it starts; years, days of dates, and lines without words, left out. A line whose
    words all come before its figures is a table row: its cells take the unit its label gives them, the scale
    the table's caption prints for it, and the year of their column when a header line prints one per cell."""
    caption = caption_of(text)
    out: list[tuple[int, PrintedFigure]] = []
    header: list[str] = []  # the years the last header line prints, one a column
    for line_start, line in _lines(text):
        found = [m for m in MENTION.finditer(line) if not _is_year(m) and not _is_day(line, m)]
        if not re.search(r"[A-Za-z]{3}", line):
            years = YEAR.findall(line)
            if len(years) >= 2 and not found:
                header = years
            continue
        row = bool(found) and not re.search(r"[A-Za-z]{2}", line[found[0].start():])
        label = line[:found[0].start()] if row else ""
        columns = header if row and len(header) == len(found) else []
        for k, m in enumerate(found):
            money = bool(m["cur0"] or m["cur"] or m["tail"])
            word = scale_word(m["word"] or m["abbr"] or m["letter"])
            value = float(m["num"].replace(",", ""))
            if m["open"] and m["close"] or m["sign"] or m["sign2"]:
                value = -value
            if m["pct"] or m["pct2"]:
                unit, scale = "%", None
            elif word:
                unit, scale = ("USD" if money else "count"), f"{word}s"
            elif row:
                unit = row_unit(label)
                scale = (caption.amounts if unit == "USD" else caption.shares if unit == "shares" else None) \
                    if caption else None
            else:
                unit, scale = ("USD" if money else "count"), None
            start, end = m.start(), m.end()
            before = line[max(0, start - _CONTEXT):start].lstrip()
            after = line[end:end + _CONTEXT].rstrip()
            context = " ".join(f"{'…' if start > _CONTEXT else ''}{before}[{m.group(0).strip()}]{after}"
                               f"{'…' if end + _CONTEXT < len(line) else ''}".split())
            if columns:
                context += f" (column {columns[k]})"
            clause = label if row else _clause(line, start, end)
            out.append((line_start + start, PrintedFigure(m.group(0).strip(), value, unit, scale, context, clause)))
    return out


_CLAUSE_END = re.compile(r"[;:.!?](?:\s|$)|,\s|\s(?:and|but|while|whereas|compared (?:to|with)|versus|vs\.?)\s",
                         re.IGNORECASE)


def _clause(line: str, start: int, end: int) -> str:
    """The clause of ``line`` holding the figure at ``start:end``: from the last clause boundary before it to the
    first after it ("and", "while", a comma or stop followed by a space)."""
    before = [m.end() for m in _CLAUSE_END.finditer(line, 0, start)]
    after = _CLAUSE_END.search(line, end)
    return line[before[-1] if before else 0:after.start() if after else len(line)].strip()


_MONTH_BEFORE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s*$", re.IGNORECASE)


def _is_day(line: str, m: re.Match[str]) -> bool:
    """The day of a date ("May [26], 2023", "on March [3]"): a bare number of at most two digits after a month."""
    return (not (m["cur0"] or m["cur"] or m["pct"] or m["pct2"] or m["word"] or m["abbr"] or m["letter"])
            and re.fullmatch(r"\d{1,2}", m["num"]) is not None and _MONTH_BEFORE.search(line[:m.start()]) is not None)


def _is_year(m: re.Match[str]) -> bool:
    """A bare four-digit year ("2023"), not an amount ("$2,023", "2023.5", "2023 million")."""
    return YEAR.fullmatch(m.group(0).strip()) is not None


def _lines(text: str) -> list[tuple[int, str]]:
    at, out = 0, []
    for line in text.split("\n"):
        out.append((at, line))
        at += len(line) + 1
    return out
