"""Statement facts from inline XBRL: the values an HTML filing tags, exact, with the table's provenance.

A tagged value (:class:`~engine.records.TaggedValue`) says what it is; the page text says where it sits.
:func:`merge_xbrl` turns each into a :class:`StatementFact` with ``source="xbrl"``:

- **value**: the printed digits (:func:`parse_number`), always read as absolute: in inline XBRL the
  ``sign="-"`` attribute carries a negative sign and the tag's content is the value's absolute amount, so
  parentheses printed around the tag are presentation only. A tag inside a table cell then takes the cell's
  printed sign, so a fact's value always reads as the statement prints it (filers tag a payment printed
  "(402)" as +402: the concept says it is an outflow). A ``format`` of ``ixt:fixed-zero`` (or the
  older ``zerodash``, ``numdash``) is zero whatever is printed ("—").
- **scale**: ``scale`` 3, 6, 9 -> thousands, millions, billions; 0 -> None; any other power is multiplied into
  the value (exact) with scale None, except a percentage printed with ``scale="-2"`` which keeps the printed
  number (12.3 for "12.3%"), as table facts do.
- **unit**: USD, ``USD/share``, ``shares``; ``xbrli:pure`` is ``%`` when the cell prints a percent sign.
- **period**: the context's instant (``months=0``) or duration, its months rounded from the days when they
  are 3, 6, 9 or 12 (else None and low confidence); the fiscal year is named for the end date as
  :func:`engine.facts.tables.fiscal_year_of` does.
- **provenance**: a tag inside a table fact's cell takes that fact's label, parent, statement, title, column,
  total flag and column header, and replaces it; the cell's span and printed text are kept so a citation
  shows the whole cell ("(1,577)"). A tag on no table row is labelled by its line (:func:`parse_row`) or by
  its concept's words.
- **dimensions**: a context with dimension members is not the consolidated figure; the members are appended
  to the parent in brackets, "Current assets [Statement Business Segments: Americas]", so the two never read
  alike.

Bad tags never raise: an unknown context, an unreadable date or a printed text that is not a number gives no
fact (logged at debug level).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import replace
from datetime import date
from decimal import Decimal

from engine.chunking import parse_row
from engine.facts.tables import fiscal_year_of
from engine.records import ColumnPeriod, HtmlDocument, StatementFact, TaggedValue, XbrlContext
from engine.vocab.numbers import parse_number

__all__ = ["merge_xbrl"]

logger = logging.getLogger(__name__)

_SCALES = {3: "thousands", 6: "millions", 9: "billions"}
_ZERO_FORMATS = ("zerodash", "numdash", "fixed-zero")  # "—" for nil: transformation registry 1-3, 4+
_DURATIONS = (3, 6, 9, 12)
_DAYS_PER_MONTH = 30.44


def _local(qname: str) -> str:
    return qname.rsplit(":", 1)[-1]


def _words(name: str) -> str:
    """A name in words: "InventoryNet" -> "Inventory Net", "AmericasMember" -> "Americas"."""
    name = re.sub(r"(Member|Axis|Domain)$", "", name)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name).strip()


def _iso(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text[:10]) if text else None
    except ValueError:
        return None


def _period(context: XbrlContext) -> tuple[ColumnPeriod, bool] | None:
    """The context's period as a column period (header: its end date) and whether its duration is stated."""
    if context.instant is not None:
        end = _iso(context.instant)
        if end is None:
            return None
        iso = end.isoformat()
        return ColumnPeriod(iso, fiscal_year_of(end.year, end.month, end.day), iso, 0), True
    start, end = _iso(context.start), _iso(context.end)
    if start is None or end is None or end < start:
        return None
    months = round(((end - start).days + 1) / _DAYS_PER_MONTH)  # XBRL end dates are inclusive
    stated = months in _DURATIONS
    period = ColumnPeriod(end.isoformat(), fiscal_year_of(end.year, end.month, end.day), end.isoformat(),
                          months if stated else None)
    return period, stated


def _unit(measure: str, percent: bool) -> str:
    """The fact's unit: "iso4217:USD" -> "USD", "iso4217:USD/xbrli:shares" -> "USD/share", "xbrli:pure" ->
    "%" or "pure"."""
    numerator, _, denominator = measure.partition("/")
    name = _local(numerator)
    if name.lower() == "pure":
        return "%" if percent else "pure"
    if not denominator:
        return name
    per = _local(denominator)
    return f"{name}/{'share' if per == 'shares' else per}"


def _value(tag: TaggedValue, percent: bool) -> tuple[float, str | None] | None:
    """(value, scale) of a tagged value, or None when its text is not a number."""
    if any(z in tag.fmt.lower() for z in _ZERO_FORMATS):
        return 0.0, None
    printed = tag.printed
    if "comma-decimal" in tag.fmt.lower() or "numcommadecimal" in tag.fmt.lower():
        printed = printed.replace(".", "").replace(" ", "").replace(",", ".")
    number = parse_number(printed)
    if number is None:
        return None
    value = -abs(number) if tag.sign == "-" and number else abs(number)
    if tag.scale in _SCALES:
        return value, _SCALES[tag.scale]
    if tag.scale == 0 or (percent and tag.scale == -2):
        return value, None
    return float(Decimal(repr(value)).scaleb(tag.scale)), None


def _prints_percent(text: str, end: int) -> bool:
    return text[end: end + 3].lstrip(" )").startswith("%")


def _line_label(text: str, start: int) -> str | None:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    row = parse_row(text[line_start: line_end if line_end >= 0 else len(text)])
    return row[0] if row else None


def _dimensions(members: tuple[str, ...]) -> str:
    """Members as words: "us-gaap:StatementBusinessSegmentsAxis=acme:AmericasMember" ->
    "Statement Business Segments: Americas"."""
    shown = []
    for member in members:
        axis, _, value = member.partition("=")
        shown.append(f"{_words(_local(axis))}: {_words(_local(value))}")
    return "; ".join(shown)


def _fact(tag: TaggedValue, document: HtmlDocument, cell: StatementFact | None) -> StatementFact | None:
    context = document.contexts.get(tag.context)
    if context is None:
        logger.debug("%s on page index %d: unknown context %r; no fact", tag.concept, tag.page_index,
                     tag.context)
        return None
    text = document.pages[tag.page_index]
    percent = (cell.printed.endswith("%") if cell else False) or _prints_percent(text, tag.char_end)
    read = _value(tag, percent)
    dated = _period(context)
    if read is None or dated is None:
        logger.debug("%s on page index %d: %r (context %s) is not a number or has no readable period; "
                     "no fact",
                     tag.concept, tag.page_index, tag.printed, tag.context)
        return None
    (value, scale), (period, stated) = read, dated
    concept = _local(tag.concept)
    if cell is not None:
        period = replace(period, header=cell.period.header)
        label, parent, statement, title, column, is_total = (
            cell.label, cell.parent, cell.statement, cell.title, cell.column, cell.is_total)
        printed, start, end = cell.printed, cell.char_start, cell.char_end
        if cell.value:  # the statement's sign, as printed: filers tag a payment shown "(402)" as +402
            value = math.copysign(abs(value), cell.value)
    else:
        label = _line_label(text, tag.char_start) or _words(concept)
        parent, statement, title, column, is_total = "", "table", "", 0, label.lower().startswith("total")
        printed, start, end = tag.printed, tag.char_start, tag.char_end
    if context.members:
        parent = f"{parent} [{_dimensions(context.members)}]".strip()
    return StatementFact(
        page_index=tag.page_index, statement=statement, title=title, label=label, parent=parent,
        is_total=is_total, column=column, period=period, printed=printed, value=value, scale=scale,
        unit=_unit(document.units.get(tag.unit, tag.unit), percent), char_start=start, char_end=end,
        confidence="high" if stated else "low", source="xbrl", concept=concept)


def merge_xbrl(document: HtmlDocument, table_facts: list[StatementFact]) -> list[StatementFact]:
    """The statement facts of an HTML filing: every tagged value as an exact ``xbrl`` fact, in place of the
    table fact whose cell prints it, plus the table facts no tag covers.

    Args:
        document: The filing as :func:`engine.ingest.html.read_html_document` read it.
        table_facts: :func:`engine.facts.tables.extract_facts` of its pages.

    Returns:
        The facts ordered by page and position; ``table_facts`` unchanged when nothing is tagged.
    """
    if not document.tagged:
        return list(table_facts)
    by_page: dict[int, list[StatementFact]] = {}
    for f in table_facts:
        by_page.setdefault(f.page_index, []).append(f)
    replaced: set[int] = set()  # ids of the table facts a tag replaces
    merged: list[StatementFact] = []
    for tag in document.tagged:
        cells = [f for f in by_page.get(tag.page_index, ())
                 if f.char_start <= tag.char_start and tag.char_end <= f.char_end]
        # the narrowest: a cell the table reader could not place spans the rest of its row
        cell = min(cells, key=lambda f: f.char_end - f.char_start, default=None)
        fact = _fact(tag, document, cell)
        if fact is None:
            continue
        merged.append(fact)
        if cell is not None:
            replaced.add(id(cell))
    merged += [f for f in table_facts if id(f) not in replaced]
    return sorted(merged, key=lambda f: (f.page_index, f.char_start, f.char_end))
