"""The Tables panel: the statement tables FilingLens read from one filing, one table at a time, as a grid of
the printed values (rows in printed order × the table's periods). Selecting a cell shows it on its page.

Its search box finds line items across all filings ("accounts payable Corning": the words naming a company keep
its filings, :meth:`engine.session.Session.search_facts`); opening a hit shows its filing's table with the row
selected and the cell boxed on its page.

The grid is a thin adapter over the library's stored facts (:class:`engine.records.StoredFact`): one query per
filing, grouped here by (statement, title, page); nothing is re-read from the filing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from analyst_app.models import RECORD_ROLE
from analyst_app.views import hint_label
from engine.pages import page_label
from engine.records import ColumnPeriod, Filing, StatementFact, StoredFact

_Index = QModelIndex | QPersistentModelIndex

LOW_CONFIDENCE_TIP = "period not stated by the headers"
LOW_BRUSH = QBrush(QColor(125, 125, 125))
HEADING_BRUSH = QBrush(QColor(90, 90, 90))
XBRL_BRUSH = QBrush(QColor(242, 247, 255))  # a faint blue: the value is an exact inline XBRL tag
STATEMENT_NAMES = {"income statement": "Income statement", "balance sheet": "Balance sheet",
                   "cash flows": "Cash flows", "equity": "Equity", "table": "Table"}
NO_FILING = "Select one filing above to see the tables FilingLens read from it."
# the value and its page before the table's title: on a narrow panel the title is what scrolls out of sight
SEARCH_COLUMNS = ("Company", "Filing", "Row", "Period", "Value", "Page", "Table")
SEARCH_WIDTHS = (160, 175, 280, 140, 80, 100, 400)  # the most each column takes before it elides
SEARCH_LIMIT = 200  # hits listed; the rest are counted ("N more")
NO_HITS = "No line item of any filing holds every one of these words."
NO_TABLES = ("No tables read from this filing: no statement table was found in its text "
             "(an image-only or prose-only document, or a layout the table reader does not follow).")


@dataclass(frozen=True)
class FactGroup:
    """The facts of one printed table: its statement kind, title line and page; ``heading``: the statement's own
    heading printed above it (:func:`engine.facts.tables.printed_heading`), "" when the page prints none."""

    statement: str
    title: str
    page_index: int  # 0-based
    facts: tuple[StoredFact, ...]
    heading: str = ""
    page_text: str = ""  # the page as stored (blank lines between its rows close a group of rows)
    section: str = ""  # the filing's section its first row is printed in ("Note 15 Operating Segments …"), or ""

    @property
    def name(self) -> str:
        """"Balance sheet — CONSOLIDATED BALANCE SHEETS, p. 58 (printed 56)" (the page as people cite it); a table
        whose page prints no heading is named by the section it is printed in and its first row ("Table — Note 15
        Operating Segments: table beginning “North America”, p. 90")."""
        kind = STATEMENT_NAMES.get(self.statement, self.statement.capitalize())
        title = self.heading.rstrip(":").rstrip()  # "Operating Expenses:" introduces its rows; as a title, no colon
        if not title:
            first = min(self.facts, key=lambda s: s.fact.char_start).fact.label if self.facts else ""
            title = f"table beginning “{first}”" if first else "table"
            if self.section and self.section != "Cover page":
                title = f"{self.section}: {title}"
        folio = self.facts[0].printed_folio if self.facts else None
        return f"{kind} — {title}, {page_label(self.page_index, folio)}"


PRIMARY = ("balance sheet", "income statement", "cash flows", "equity")  # the primary statements, listed first


def group_facts(facts: Sequence[StoredFact], session: Any = None, pages: Sequence[str] = ()) -> list[FactGroup]:
    """One group per (statement, title, page), titled by the heading its page prints above it (``session``: asked
    for the headings, :meth:`engine.session.Session.table_titles`; none: no heading, the table is named by its
    first row); the primary statements (balance sheet, income, cash flows, equity: a table whose heading is that
    statement's own, not a note's table that names one) first, then the other tables,
    each in the order the filing prints them. ``pages``: the filing's page texts (their blank lines nest rows)."""
    groups: dict[tuple[str, str, int], list[StoredFact]] = {}
    for s in facts:
        groups.setdefault((s.fact.statement, s.fact.title, s.fact.page_index), []).append(s)
    keys = list(groups)
    tables = [(page, min(s.fact.char_start for s in groups[(st, title, page)]), st, title) for st, title, page in keys]
    titles = session.table_titles(facts[0].filing_id, tables) if session is not None and facts else [
        (st, "") for st, _title, _page in keys]
    sections = session.library.chunk_sections([facts[0].filing_id]) if session is not None and facts else {}

    def section_of(group: list[StoredFact]) -> str:
        first = min(group, key=lambda s: s.fact.char_start)
        return sections.get(first.chunk_id, ("",))[0] if first.chunk_id is not None else ""

    out = [FactGroup(kind, title, page, tuple(groups[(st, title, page)]), heading,
                     pages[page] if page < len(pages) else "", section_of(groups[(st, title, page)]))
           for (st, title, page), (kind, heading) in zip(keys, titles, strict=True)]
    return sorted(out, key=lambda g: (g.statement not in PRIMARY, g.page_index,
                                      min(s.fact.char_start for s in g.facts)))


def row_levels(rows: Sequence[tuple[bool, bool, float | None, bool]]) -> list[int]:
    """Each row's nesting level (0: the table's own level) from how it is printed: ``rows`` in printed order as
    (heading: a line without values that opens a group, total: a "Total …" row, x: the left edge of its label on the
    page or None when unknown, gap: a blank line printed before it).

    With positions, a row printed further right than the row above sits under it (a heading's rows, a line item's
    "of which" rows) and one printed no further right leaves it ("Operating income" back at the margin after the
    operating expenses); a total never sits under a line item and closes the heading it is printed inside. Without
    positions a heading opens a group its rows sit in, a total closes it, and so does a blank line after its rows."""
    levels: list[int] = []
    stack: list[_Open] = []  # the open parents, innermost last
    for heading, total, x, gap in rows:
        closed = False  # a heading this row's position closed
        if x is not None:
            while total and stack and not stack[-1].heading:
                stack.pop()
            while stack and stack[-1].x is not None and x <= stack[-1].x + 1.5:
                top = stack[-1]
                # rows printed flush with their heading ("Basic", "Diluted" under "Earnings per share") stay in it
                # until a blank line after them
                if top.heading and not top.indented and x >= top.x - 1.5 and not (gap and top.rows):
                    break
                stack.pop()
                closed = closed or top.heading
        elif stack and gap and stack[-1].rows:
            stack.pop()
        levels.append(len(stack))
        if stack:
            stack[-1].rows += 1
            if x is not None and stack[-1].x is not None and x > stack[-1].x + 1.5:
                stack[-1].indented = True
        if heading:
            stack.append(_Open(x, True))
        elif total:
            if stack and not closed:
                stack.pop()
        elif x is not None:
            stack.append(_Open(x, False))
    return levels


@dataclass
class _Open:
    """A row that rows below it may sit under: where its label is printed, whether it is a heading, how many rows
    sit in it so far and whether any is printed further right than it."""

    x: float | None
    heading: bool
    rows: int = 0
    indented: bool = False


def label_starts(page_text: str, labels: Sequence[str], starts: Sequence[int | None]) -> list[int | None]:
    """Where each row's label is printed in ``page_text``: the start of the line of its first cell (``starts``),
    or of the line above when the label was broken over two lines; a heading (no cells: None) on the nearest line
    above the next row that begins with it. None where it is not found."""
    out: list[int | None] = []
    for i, (label, start) in enumerate(zip(labels, starts, strict=True)):
        word = label.split()[0] if label.split() else ""
        if start is None:  # a heading: the line that prints it above the next row
            below = next((s for s in starts[i + 1:] if s is not None), None)
            at = page_text.rfind("\n" + label.rstrip(":"), 0, below) if below is not None and label else -1
            out.append(at + 1 if at >= 0 else None)
            continue
        line = page_text.rfind("\n", 0, start) + 1
        if word and not page_text.startswith(word, line):
            above = page_text.rfind("\n", 0, max(0, line - 1)) + 1
            line = above if line and page_text.startswith(word, above) else line
        out.append(line if word and page_text.startswith(word, line) else None)
    return out


@dataclass(frozen=True)
class GridRow:
    """A row of the grid: a printed line item, or the heading (``parent``) its rows sit under."""

    label: str
    parent: str = ""
    is_total: bool = False
    heading: bool = False  # a heading line ("Current assets:"): no values of its own
    level: int = 0  # how far it is indented under the headings above it (engine.facts.tables.row_levels)


@dataclass
class FactTable:
    """One table laid out as printed: rows in printed order, one column per (column, period) it prints."""

    rows: list[GridRow] = field(default_factory=list)
    periods: list[ColumnPeriod] = field(default_factory=list)
    cells: dict[tuple[int, int], StoredFact] = field(default_factory=dict)  # (row, period column) → fact

    @classmethod
    def of(cls, facts: Sequence[StoredFact], page_text: str = "",
           lefts: Callable[[list[int | None]], list[float | None]] | None = None) -> FactTable:
        """The table of ``facts``, its rows nested as printed: by how far right each label is printed (``lefts``:
        given where each row's label starts in ``page_text``, its x on the page, None where unknown,
        :meth:`engine.session.Session.label_lefts`); without positions a total closes its group, and so does a
        blank line in ``page_text`` after a group's rows."""
        table = cls._rows(facts)
        starts = [min((s.fact.char_start for (r, _c), s in table.cells.items() if r == i), default=None)
                  for i in range(len(table.rows))]
        gaps, previous = [], None
        for start in starts:
            gaps.append(bool(page_text) and start is not None and previous is not None
                        and "\n\n" in page_text[previous:start])
            previous = start if start is not None else previous
        xs: list[float | None] = [None] * len(table.rows)
        if lefts is not None and page_text:
            xs = lefts(label_starts(page_text, [r.label for r in table.rows], starts))
        # a row printed further right than the row above sits under it, unless its values total the rows above
        sums = table.summed_rows() if any(x is not None for x in xs) else []
        table.rows = [replace(r, is_total=True) if x is not None and i and xs[i - 1] is not None
                      and x > xs[i - 1] + 1.5 and sums[i] else r
                      for i, (r, x) in enumerate(zip(table.rows, xs, strict=True))]
        levels = row_levels([(r.heading, r.is_total, x, gap) for r, x, gap in zip(table.rows, xs, gaps, strict=True)])
        table.rows = [replace(r, level=level) for r, level in zip(table.rows, levels)]
        return table

    def summed_rows(self, most: int = 8) -> list[bool]:
        """Which rows are totals by their values: in every column where it and the rows right above it print a
        value, the row is their sum, or the first of them less the others ("Gross profit" under "Revenues" and
        "Cost of sales"), within the rounding of the printed figures. Two rows at least, at most ``most``, none of
        them a heading. A filing that indents its subtotals (NIKE prints "Gross profit" further right than the
        rows it totals) would otherwise have them nested under the row above."""
        values: list[dict[int, StatementFact]] = [{} for _ in self.rows]
        for (r, c), s in self.cells.items():
            values[r][c] = s.fact
        out = []
        for i, row in enumerate(self.rows):
            found = False
            if not row.heading and values[i]:
                above: list[dict[int, StatementFact]] = []
                for j in range(i - 1, max(-1, i - 1 - most), -1):
                    if self.rows[j].heading:
                        break
                    above.insert(0, values[j])
                    if len(above) >= 2 and _sums(values[i], above):
                        found = True
                        break
            out.append(found)
        return out

    @classmethod
    def _rows(cls, facts: Sequence[StoredFact]) -> FactTable:
        # a column is keyed by its index *and* its period, so a value never sits under another period's header
        keys = sorted({(s.fact.column, s.fact.period) for s in facts},
                      key=lambda k: (k[0], min(s.fact.char_start for s in facts if (s.fact.column, s.fact.period) == k)))
        col_of = {k: i for i, k in enumerate(keys)}
        table = cls(periods=[p for _c, p in keys])
        open_rows: dict[tuple[str, str], int] = {}
        for s in sorted(facts, key=lambda s: (s.fact.char_start, s.fact.column)):
            f = s.fact
            col = col_of[(f.column, f.period)]
            row = open_rows.get((f.parent, f.label))
            if row is None or (row, col) in table.cells:  # a new line, or the same label printed again
                last = table.rows[-1] if table.rows else None
                if f.parent and (last is None or last.parent != f.parent) and (last is None or last.label != f.parent):
                    table.rows.append(GridRow(f.parent, heading=True))
                table.rows.append(GridRow(f.label, f.parent, f.is_total))
                row = open_rows[(f.parent, f.label)] = len(table.rows) - 1
            table.cells[(row, col)] = s
        return table

    def fact(self, row: int, col: int) -> StoredFact | None:
        return self.cells.get((row, col))


def _sums(total: dict[int, StatementFact], rows: list[dict[int, StatementFact]]) -> bool:
    """Whether ``total``'s values are the sum of ``rows``' values, or the first less the rest, column by column
    (the columns all of them print; one at least), within half a printed unit a row."""
    shared = [c for c in total if all(c in r for r in rows)]
    if not any(total[c].value for c in shared):
        return False

    def unit(f: StatementFact) -> float:
        digits = f.printed.split(".")[1] if "." in f.printed else ""
        return 10.0 ** -sum(ch.isdigit() for ch in digits)

    def matches(signs: list[int]) -> bool:
        for c in shared:
            tol = 0.5 * sum(unit(r[c]) for r in rows) + 1e-9
            if abs(sum(sign * r[c].value for sign, r in zip(signs, rows, strict=True)) - total[c].value) > tol:
                return False
        return True

    return matches([1] * len(rows)) or matches([1] + [-1] * (len(rows) - 1))


def fact_tooltip(s: StoredFact) -> str:
    """What a cell is: its row and period, the number read, and where it came from."""
    f = s.fact
    amount = f"{f.value:,.10g}" + (f" {f.scale}" if f.scale else "") + f" {f.unit}"
    lines = [f.row, f"{f.period.label} (header “{f.period.header}”)", f"printed {f.printed}  =  {amount}"]
    if f.source == "xbrl":
        lines.append(f"inline XBRL fact, concept us-gaap:{f.concept}" if f.concept else "inline XBRL fact")
    else:
        lines.append("read from the page's text layout"
                     + (f"; row maps to us-gaap:{f.concept}" if f.concept else ""))
    if f.confidence == "low":
        lines.append(f"low confidence: {LOW_CONFIDENCE_TIP}")
    lines.append(f"{page_label(f.page_index, s.printed_folio)} — select to see the cell highlighted there")
    return "\n".join(lines)


class FactGridModel(QAbstractTableModel):
    """A :class:`FactTable` as a read-only table: column 0 the line items, then one column per period."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.table = FactTable()

    def set_table(self, table: FactTable) -> None:
        self.beginResetModel()
        self.table = table
        self.endResetModel()

    def fact(self, index: _Index) -> StoredFact | None:
        if not index.isValid() or index.column() == 0:
            return None
        return self.table.fact(index.row(), index.column() - 1)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 1 + len(self.table.periods)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if section == 0:
            return "Line item" if role == Qt.ItemDataRole.DisplayRole else None
        if not 0 < section <= len(self.table.periods):
            return None
        p = self.table.periods[section - 1]
        if role == Qt.ItemDataRole.DisplayRole:
            return p.label
        if role == Qt.ItemDataRole.ToolTipRole:
            stated = "period not stated by the headers" if p.months is None else (
                "a balance at one date" if p.months == 0 else f"{p.months} months")
            return f"header as printed: “{p.header}”\nfiscal year {p.fiscal_year}, {stated}" + (
                f", ending {p.end}" if p.end else "")
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.table.rows[index.row()]
        if index.column() == 0:
            return self._label_data(row, role)
        s = self.table.fact(index.row(), index.column() - 1)
        if s is None:
            return None
        f = s.fact
        if role == Qt.ItemDataRole.DisplayRole:
            return f.printed
        if role == RECORD_ROLE:
            return s
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return fact_tooltip(s)
        if role == Qt.ItemDataRole.FontRole and (row.is_total or f.confidence == "low"):
            font = QFont()
            font.setBold(row.is_total)
            font.setItalic(f.confidence == "low")
            return font
        if role == Qt.ItemDataRole.ForegroundRole and f.confidence == "low":
            return LOW_BRUSH
        if role == Qt.ItemDataRole.BackgroundRole and f.source == "xbrl":
            return XBRL_BRUSH
        return None

    @staticmethod
    def _label_data(row: GridRow, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{'    ' * (row.level - 1)}   › {row.label}" if row.level else row.label
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"{row.parent} › {row.label}" if row.parent and row.level else row.label) + (
                "\n(a total)" if row.is_total else "\n(a heading: its rows follow)" if row.heading else "")
        if role == Qt.ItemDataRole.FontRole and (row.is_total or row.heading):
            font = QFont()
            font.setBold(row.is_total)
            font.setItalic(row.heading)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and row.heading:
            return HEADING_BRUSH
        return None


def _read_only(view: QTableView, selecting: QAbstractItemView.SelectionBehavior) -> None:
    """A read-only grid of one selection at a time, rows not numbered, cells on one line."""
    view.setSelectionBehavior(selecting)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.setAlternatingRowColors(True)
    view.verticalHeader().setVisible(False)


class FactsGrid(QWidget):
    """A filing's tables: a chooser (one entry per printed table) over the chosen table's grid."""

    fact_selected = Signal(object)  # the StoredFact of the cell the user selected or activated
    hit_opened = Signal(object)  # a search's FactHit the user opened (double-click or Enter)
    searched = Signal()  # a search's hits (or its failure) are listed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.filing: Filing | None = None
        self.groups: list[FactGroup] = []
        self.load_seconds = 0.0  # the last filing's query and grouping (the GUI thread does it: keep it small)
        self._statement = ""  # the statement kind last chosen: the next filing opens on its own one

        self.session_of: Callable[[], Any] | None = None  # the session a search asks (set by the Library view)
        # runs a search off the GUI thread: (words, limit, done(FactSearch), failed(message)); None: in place. A
        # search across a large library reads thousands of cells (0.3–0.8 s on 164 filings): the window stays live
        self.searcher: Callable[[str, int, Callable[[Any], None], Callable[[str], None]], None] | None = None
        self._searching = 0  # the latest search's number: an earlier one's hits arriving late are dropped
        self.hits: list[Any] = []  # the last search's FactHits, in the order listed
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search line items across all filings, e.g. “accounts payable Corning” "
                                       "(a company's name or ticker keeps its filings)")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.run_search)
        self.search.textChanged.connect(self._search_edited)
        self.back_btn = QPushButton("Back to results")
        self.back_btn.setToolTip("The last search's results")
        self.back_btn.clicked.connect(self._show_results)
        self.back_btn.setVisible(False)
        search_bar = QHBoxLayout()
        search_bar.addWidget(self.search, 1)
        search_bar.addWidget(self.back_btn)

        self.table_box = QComboBox()
        self.table_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.table_box.setMinimumContentsLength(40)
        self.table_box.setToolTip("The tables read from this filing: statement, title as printed, page")
        self.table_box.currentIndexChanged.connect(self._group_chosen)
        self.table_box.activated.connect(self._remember_statement)  # the user's choice (not the default)
        self.info = QLabel()
        self.info.setStyleSheet("color:#555")
        self.bar = QWidget()  # hidden with the grid: an empty chooser says nothing the message does not
        bar = QHBoxLayout(self.bar)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(QLabel("Table:"))
        bar.addWidget(self.table_box, 1)

        self.model = FactGridModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        _read_only(self.view, QAbstractItemView.SelectionBehavior.SelectItems)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 6)
        self.view.horizontalHeader().setHighlightSections(False)
        self.view.horizontalHeader().setStretchLastSection(False)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self.view.activated.connect(self._activated)  # Enter or double-click: show it again (after scrolling away)

        self.empty = hint_label(NO_FILING)
        self.results = QTableWidget(0, len(SEARCH_COLUMNS))
        self.results.setHorizontalHeaderLabels(list(SEARCH_COLUMNS))
        _read_only(self.results, QAbstractItemView.SelectionBehavior.SelectRows)
        self.results.verticalHeader().setDefaultSectionSize(self.results.fontMetrics().height() + 6)
        self.results.activated.connect(lambda index: self.open_hit(index.row()))  # Enter or double-click
        self.results_info, self.more_label = QLabel(), QLabel()
        self.results_page = QWidget()
        rl = QVBoxLayout(self.results_page)
        rl.setContentsMargins(0, 0, 0, 0)
        for widget in (self.results_info, self.results, self.more_label):
            rl.addWidget(widget, 1 if widget is self.results else 0)
            if isinstance(widget, QLabel):
                widget.setStyleSheet("color:#555")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.results_page)
        self.stack.setCurrentWidget(self.empty)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(search_bar)
        lay.addWidget(self.bar)
        lay.addWidget(self.info)
        lay.addWidget(self.stack, 1)
        self._set_empty(NO_FILING)

    # -- public ------------------------------------------------------------------------------------
    def show_filing(self, session: Any, filing: Filing | None) -> None:
        """Read ``filing``'s facts (one query; its pages, for the tables' printed headings, another) and show its
        first statement; None: the "select one" hint."""
        self.filing = filing
        if self.session_of is None and session is not None:  # (a grid without a Library view: the session given)
            self.session_of = lambda: session
        self.back_btn.setVisible(bool(self.hits))
        if filing is None:
            self.groups = []
            self._set_empty(NO_FILING)
            return
        started = time.perf_counter()
        library = session.library
        self.groups = group_facts(library.facts(filing_ids=[filing.id]), session, library.page_texts(filing.id))
        self.load_seconds = time.perf_counter() - started
        if not self.groups:
            self._set_empty(NO_TABLES)
            return
        self.table_box.setEnabled(True)
        self.table_box.blockSignals(True)
        self.table_box.clear()
        for g in self.groups:
            self.table_box.addItem(g.name)
            self.table_box.setItemData(self.table_box.count() - 1, f"{len(g.facts)} values", Qt.ItemDataRole.ToolTipRole)
        self.table_box.blockSignals(False)
        self.table_box.setCurrentIndex(-1)
        self.table_box.setCurrentIndex(self._preferred_group())
        self.stack.setCurrentWidget(self.view)
        self.bar.setVisible(True)
        self.info.setVisible(True)

    def clear(self) -> None:
        self.show_filing(None, None)

    def run_search(self) -> None:
        """Search the line items of all filings for the box's words (in the background when a :attr:`searcher` is
        set); list the hits in place of the grid."""
        text = self.search.text().strip()
        session = self.session_of() if self.session_of is not None else None
        if not text or (session is None and self.searcher is None):
            return
        self._searching += 1
        number = self._searching
        if self.searcher is None:
            self._list_hits(session.search_facts(text, limit=SEARCH_LIMIT))
            return
        self.results_info.setText(f"Searching the line items of all filings for “{text}”…")
        self.more_label.setVisible(False)
        self.results.setRowCount(0)
        self.hits = []
        self._show_results()

        def done(found: Any) -> None:
            if number == self._searching:
                self._list_hits(found)

        def failed(message: str) -> None:
            if number == self._searching:
                self.results_info.setText(f"The search failed: {message}")
                self.searched.emit()

        self.searcher(text, SEARCH_LIMIT, done, failed)

    def _list_hits(self, found: Any) -> None:
        self.hits = list(found.hits)
        self.results.setRowCount(0)
        self.results.setRowCount(len(self.hits))
        for row, hit in enumerate(self.hits):
            f = hit.stored.fact
            cells = (hit.company, hit.doc_name, f.row, f.period.label, f.printed,
                     page_label(f.page_index, hit.stored.printed_folio), hit.heading)
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col == 4:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(fact_tooltip(hit.stored) if 2 <= col <= 5 else value)
                self.results.setItem(row, col, item)
        self.results.resizeColumnsToContents()
        header = self.results.horizontalHeader()
        for col, cap in enumerate(SEARCH_WIDTHS):  # the value and its page stay in sight; a long title is elided
            header.resizeSection(col, min(header.sectionSize(col) + 8, cap))
        where = f" in the filings of {', '.join(found.companies)}" if found.companies else " across all filings"
        if self.hits:
            self.results_info.setText(f"{found.total:,} cell{'s' * (found.total != 1)} whose row, heading or table "
                                      f"holds “{found.words}”{where} (rows printing these words first); double-click "
                                      "(or Enter) opens its table")
        else:
            self.results_info.setText(NO_HITS if found.words else "Type the line item's words, not only a company.")
        self.more_label.setText(f"{found.more:,} more not listed: add words or a company name to narrow the "
                                "search" if found.more else "")
        self.more_label.setVisible(bool(found.more))
        self._show_results()
        if self.hits:
            self.results.selectRow(0)
        self.searched.emit()

    def open_hit(self, row: int) -> None:
        """Open a search hit: its filing's table in the grid, its row selected, its cell boxed on its page (the
        Library view shows the filing; see :attr:`hit_opened`)."""
        if 0 <= row < len(self.hits):
            self.hit_opened.emit(self.hits[row])

    def show_fact(self, session: Any, filing: Filing, stored: StoredFact) -> bool:
        """Show ``filing``'s table holding ``stored`` with its cell selected (which boxes it on its page); False
        when the filing's tables no longer hold it."""
        if self.filing is None or self.filing.id != filing.id or self.stack.currentWidget() is self.results_page:
            self.show_filing(session, filing)
        i = next((k for k, g in enumerate(self.groups) if any(s.id == stored.id for s in g.facts)), -1)
        if i < 0:
            return False
        self.select_group(i)
        self.stack.setCurrentWidget(self.view)
        self.bar.setVisible(True)
        self.info.setVisible(True)
        self.view.setCurrentIndex(QModelIndex())  # selecting the same cell again still boxes it
        found = self.select_fact(stored.id)
        self.view.scrollTo(self.view.currentIndex())
        self.view.setFocus()
        return found

    def select_group(self, index: int) -> None:
        self.table_box.setCurrentIndex(index)

    def group_index(self, statement: str) -> int:
        """The first table of a statement kind ("balance sheet"), -1 when the filing prints none."""
        return next((i for i, g in enumerate(self.groups) if g.statement == statement), -1)

    @property
    def group(self) -> FactGroup | None:
        i = self.table_box.currentIndex()
        return self.groups[i] if 0 <= i < len(self.groups) else None

    def message(self) -> str:
        """The empty-state text when no grid is shown, else ""."""
        return self.empty.text() if self.stack.currentWidget() is self.empty else ""

    def row_labels(self) -> list[str]:
        return [r.label for r in self.model.table.rows]

    def column_labels(self) -> list[str]:
        return [p.label for p in self.model.table.periods]

    def select_fact(self, fact_id: int) -> bool:
        """Select the cell of a stored fact of the shown table (as a click does); False when it is not shown."""
        for (row, col), s in self.model.table.cells.items():
            if s.id == fact_id:
                self.view.setCurrentIndex(self.model.index(row, col + 1))
                return True
        return False

    # -- internals ---------------------------------------------------------------------------------
    def _show_results(self) -> None:
        self.stack.setCurrentWidget(self.results_page)
        self.bar.setVisible(False)
        self.info.setVisible(False)
        self.back_btn.setVisible(False)

    def _search_edited(self, text: str) -> None:
        if not text.strip() and self.stack.currentWidget() is self.results_page:  # cleared: back to the grid
            self.show_filing(self.session_of() if self.session_of is not None else None, self.filing)

    def _set_empty(self, text: str) -> None:
        self.model.set_table(FactTable())
        self.table_box.blockSignals(True)
        self.table_box.clear()
        self.table_box.blockSignals(False)
        self.table_box.setEnabled(False)
        self.info.clear()
        self.empty.setText(text)
        self.stack.setCurrentWidget(self.empty)
        self.bar.setVisible(False)
        self.info.setVisible(False)

    def _preferred_group(self) -> int:
        for statement in (self._statement, "income statement", "balance sheet", "cash flows"):
            i = self.group_index(statement) if statement else -1
            if i >= 0:
                return i
        return next((i for i, g in enumerate(self.groups) if g.statement != "table"), 0)

    def _group_chosen(self, index: int) -> None:
        if not 0 <= index < len(self.groups):
            return
        g = self.groups[index]
        session = self.session_of() if self.session_of is not None else None
        filing = self.filing
        lefts = (lambda starts: session.label_lefts(filing.id, g.page_index, starts)) if (
            session is not None and filing is not None) else None
        table = FactTable.of(g.facts, g.page_text, lefts)
        self.model.set_table(table)
        self.view.scrollToTop()
        self._fit_columns()
        low = sum(s.fact.confidence == "low" for s in g.facts)
        xbrl = sum(s.fact.source == "xbrl" for s in g.facts)
        scale = next((s.fact.scale for s in g.facts if s.fact.scale), None)
        n_rows, n_periods = sum(not r.heading for r in table.rows), len(table.periods)
        parts = [self.filing.identity.doc_name if self.filing is not None else "", f"{len(g.facts)} values",
                 f"{n_rows} row{'s' * (n_rows != 1)} × {n_periods} period{'s' * (n_periods != 1)}"]
        if scale:
            parts.append(f"in {scale}")
        if xbrl:
            parts.append(f"{xbrl} inline XBRL")
        if low:
            parts.append(f"{low} low confidence (grey italic)")
        self.info.setText(" · ".join(p for p in parts if p))

    def _remember_statement(self, index: int) -> None:
        if 0 <= index < len(self.groups):
            self._statement = self.groups[index].statement

    def _fit_columns(self) -> None:
        header = self.view.horizontalHeader()
        self.view.resizeColumnsToContents()
        if header.sectionSize(0) > 420:  # a long label is elided (its tooltip has it whole), not the values
            header.resizeSection(0, 420)
        for col in range(1, header.count()):
            header.resizeSection(col, max(header.sectionSize(col) + 12, 90))

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        s = self.model.fact(current)
        if s is not None:
            self.fact_selected.emit(s)

    def _activated(self, index: QModelIndex) -> None:
        s = self.model.fact(index)
        if s is not None:
            self.fact_selected.emit(s)
