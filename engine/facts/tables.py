"""Statement facts from a page's text: every table row × period column as a typed :class:`StatementFact`.

Ingest writes table rows with their cells apart (two spaces or dot leaders, see :mod:`engine.ingest.pdf`),
so a table is read from the page text the library already stores:

- a **column header** is a short line of years or dates ("(Millions)  2018  2017  2016", "Fiscal Years Ended
  February 2, 2019  February 3, 2018"); the lines just above it (title, "Year Ended December 31,", "Three
  Months Ended  Nine Months Ended") say what the columns measure;
- each column becomes a :class:`ColumnPeriod`: its fiscal year, its end date when one is printed, and its
  duration in months (3, 6, 9, 12) or 0 for an instant (a balance sheet date). A column whose duration the
  headers do not state keeps ``months=None`` and its facts are marked low confidence: never a guessed period;
- each **row** with exactly as many value cells as the header has columns gives one fact per cell; a row
  with another count gives none (its cells cannot be matched to periods);
- a line without values above rows is their **parent** heading ("Current assets:" › "Inventories"), a row
  whose label opens with "Total" (or "Net cash provided/used") is marked a total, and a lowercase row
  continuing a label broken over two lines is joined to it;
- the **scale** is the table's printed one ("(In millions, except per share data)"); a per-share row or a
  percentage is not scaled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.chunking import parse_row
from engine.facts.numbers import parse_number, printed_scale
from engine.records import ColumnPeriod, StatementFact

_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = rf"(?:{'|'.join(m[:3] + '(?:' + m[3:] + ')?' for m in _MONTHS)})\.?"
_DATE = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}}),?\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})\b", re.IGNORECASE)
_DURATION = re.compile(
    r"\b(three|six|nine|twelve|3|6|9|12)[\s-]+months?\b|\b(13|26|39|52|53)[\s-]+weeks?\b|"
    r"\b(?:fiscal\s+)?(years?)\s+ended\b|\b(?:fiscal\s+)?(year)\b|\b(quarter)s?\s+ended\b",
    re.IGNORECASE)
_WORD_MONTHS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
_WEEK_MONTHS = {"13": 3, "26": 6, "39": 9, "52": 12, "53": 12}
_INSTANT = re.compile(r"\bas\s+of\b|\bat\b|\bbalance\s+sheets?\b|\bfinancial\s+(?:position|condition)\b",
                      re.IGNORECASE)
# words a column-header line may carry besides its years and dates
_HEADER_WORDS = re.compile(
    rf"{_MONTH}|\b(?:fiscal|years?|ended|ending|months?|weeks?|quarters?|three|six|nine|twelve|as|of|at|"
    r"in|millions?|thousands?|billions?|except|per|share|amounts?|data|usd|dollars|unaudited|restated|"
    r"and|the|total|period|\d{1,2})\b|[$()%,.*\-–—]",
    re.IGNORECASE)
_STATEMENTS = (
    ("balance sheet", re.compile(r"balance\s+sheets?|financial\s+(?:position|condition)", re.IGNORECASE)),
    ("cash flows", re.compile(r"cash\s*flows?", re.IGNORECASE)),
    ("equity", re.compile(r"(?:stock|share)holders['’]?\s+(?:equity|deficit)|changes\s+in\s+equity",
                          re.IGNORECASE)),
    ("income statement", re.compile(r"statements?\s+of\s+(?:consolidated\s+)?(?:operations|income|earnings|"
                                    r"comprehensive\s+(?:income|loss))|income\s+statements?", re.IGNORECASE)),
)
_TOTAL = re.compile(r"^(?:total\b|net\s+cash\s+(?:provided|used|from)|net\s+(?:increase|decrease))", re.IGNORECASE)
_PER_SHARE = re.compile(r"per\s+(?:common\s+|diluted\s+|basic\s+)?share|\beps\b", re.IGNORECASE)
_SHARES = re.compile(r"\bshares\b|\bshare\s+count\b", re.IGNORECASE)
_HEADER_BLOCK = 6  # lines above a column header searched for its title and period words


@dataclass(frozen=True)
class _Table:
    title: str
    statement: str
    columns: tuple[ColumnPeriod, ...]
    scale: str | None


def _month_number(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if name.lower().rstrip(".").startswith(m[:3]))


def fiscal_year_of(year: int, month: int | None, day: int | None) -> int:
    """The fiscal year a period ending on the date is named for: its year, except a 52/53-week year ending in
    the first week of January, which belongs to the year before (as retailers name it)."""
    return year - 1 if month == 1 and day is not None and day <= 7 else year


def _is_header(line: str) -> bool:
    """A column-header line: years (or dates) and header words only, nothing like a sentence."""
    if not _YEAR.search(line) or len(line) > 160 or line.rstrip().endswith(".") and not _YEAR.search(line[-6:]):
        return False
    if parse_row(line) is not None:
        return False
    rest = _HEADER_WORDS.sub(" ", _YEAR.sub(" ", line))
    return len(re.findall(r"[A-Za-z]{2,}", rest)) <= 2


def _durations(context: str, n: int) -> list[int | None]:
    """Each column's duration in months (0: an instant), from the header lines; None when not stated."""
    spans: list[int] = []
    for m in _DURATION.finditer(context):
        if m[1]:
            spans.append(_WORD_MONTHS[m[1].lower()])
        elif m[2]:
            spans.append(_WEEK_MONTHS[m[2]])
        elif m[3] or m[4]:
            spans.append(12)
        elif m[5]:
            spans.append(3)
    if spans:
        if n % len(spans) == 0:  # "Three Months Ended  Nine Months Ended" over four columns: two each
            per = n // len(spans)
            return [s for s in spans for _ in range(per)]
        return [None] * n
    if _INSTANT.search(context):
        return [0] * n
    return [None] * n


# Columns that are not one period each: "2019-2020", "Thereafter", "Total", "Less than 1 year" (a maturity or
# contractual-obligations table). Their years cannot be matched to cells one to one.
_NOT_PERIODS = re.compile(r"(?:19|20)\d\d\s*[-–—]\s*(?:19|20)?\d\d\b|\bthereafter\b|\btotal\b|\bless\s+than\b|"
                          r"\bmore\s+than\b|\byears?\s+\d", re.IGNORECASE)


def _columns(header: str, context: str, is_balance_sheet: bool) -> tuple[ColumnPeriod, ...]:
    cells: list[tuple[str, int | None, int | None, int]] = [
        (m[0], _month_number(m[1]), int(m[2]), int(m[3])) for m in _DATE.finditer(header)]
    if not cells:
        md = _MONTH_DAY.search(context)
        month, day = (_month_number(md[1]), int(md[2])) if md else (None, None)
        cells = [(y, month, day, int(y)) for y in _YEAR.findall(header)]
    if _NOT_PERIODS.search(header):
        durations: list[int | None] = [None] * len(cells)
    else:
        durations = [0] * len(cells) if is_balance_sheet else _durations(context, len(cells))
    out = []
    for (text, month, day, year), months in zip(cells, durations):
        end = f"{year:04d}-{month:02d}-{day:02d}" if month and day else None
        fy = fiscal_year_of(year, month, day)
        out.append(ColumnPeriod(str(text), fy, end, months))
    return tuple(out)


def _statement(title_lines: list[str]) -> tuple[str, str]:
    for line in reversed(title_lines):
        for name, rx in _STATEMENTS:
            if rx.search(line):
                return name, line.strip()
    return "table", next((ln.strip() for ln in reversed(title_lines) if ln.strip() and not _is_header(ln)), "")


def _unit(label: str, printed: str) -> tuple[str, bool]:
    """(unit, scaled): per-share amounts and percentages are as printed; counts of shares and amounts take the
    table's scale."""
    if printed.endswith("%"):
        return "%", False
    if _PER_SHARE.search(label):
        return "USD/share", False
    if _SHARES.search(label):
        return "shares", True
    return "USD", True


def extract_page_facts(text: str, page_no: int) -> list[StatementFact]:
    """Every fact of every table on one page's text (see the module docstring)."""
    lines: list[tuple[int, int, str]] = []
    pos = 0
    for raw in text.split("\n"):
        lines.append((pos, pos + len(raw), raw))
        pos += len(raw) + 1
    facts: list[StatementFact] = []
    table: _Table | None = None
    parent, pending = "", ""
    for i, (start, end, line) in enumerate(lines):
        if not line.strip():
            continue
        if _is_header(line):
            above = [ln for _, _, ln in lines[max(0, i - _HEADER_BLOCK): i] if ln.strip() and parse_row(ln) is None]
            kind, title = _statement(above)
            context = " ".join([*above[-3:], line])
            head = " ".join(ln for _, _, ln in lines[max(0, i - _HEADER_BLOCK): i + 1])
            columns = _columns(line, context, kind == "balance sheet")
            table = _Table(title, kind, columns, printed_scale(head) or printed_scale(text[:start]))
            parent, pending = "", ""
            continue
        if table is None:
            continue
        row = parse_row(line)
        if row is None:
            words = line.strip()
            if pending and words[:1].islower():  # a heading broken over two lines
                pending = f"{pending} {words}".rstrip(":").strip()
            elif len(words) <= 120 and not words.endswith("."):
                pending = words.rstrip(":").strip()
            else:
                pending = ""
            continue
        label, cells = row
        if pending and label[:1].islower():  # a label broken over two lines
            label = f"{pending} {label}"
        elif pending:
            parent = pending
        pending = ""
        if len(cells) != len(table.columns):
            continue
        for col, (printed, period) in enumerate(zip(cells, table.columns)):
            value = parse_number(printed, dash=0.0)
            if value is None:
                continue
            unit, scaled = _unit(label, printed)
            facts.append(StatementFact(
                page=page_no, statement=table.statement, title=table.title, label=label, parent=parent,
                is_total=bool(_TOTAL.match(label)), column=col, period=period, printed=printed, value=value,
                scale=table.scale if scaled else None, unit=unit, char_start=start, char_end=end,
                confidence="high" if period.months is not None else "low"))
    return facts
