"""Qt item models: thin adapters over engine records (filings, trace payload rows, runs, JSON payloads).

They hold the engine's records as they are and only decide how each field is displayed and sorted;
no engine logic lives here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QFont

from engine.pages import page_number, reader_page
from engine.records import Filing
from engine.wording import counted

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
"""Role holding a value that sorts correctly (numbers as numbers); proxies sort on it."""


def sort_value(v: Any) -> Any:
    """A cell's value as it sorts: numbers as numbers, text lowercased, nothing as ""."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    return "" if v is None else str(v).lower()


def _sort_key(v: Any) -> tuple[int, Any]:
    """Numbers before text, so one column of both sorts without comparing a number with a string."""
    return (0, v) if isinstance(v, (int, float)) else (1, v)
RECORD_ROLE = Qt.ItemDataRole.UserRole + 2
"""Role returning the whole record behind a row."""

KEPT_BRUSH = QBrush(QColor(214, 240, 214))
STATUS_COLORS = {
    "answered": QColor(30, 120, 50), "added": QColor(30, 120, 50), "unchanged": QColor(90, 90, 90),
    "not_answerable": QColor(170, 110, 0), "duplicate": QColor(170, 110, 0), "removed": QColor(170, 110, 0),
    "skipped": QColor(170, 110, 0), "failed": QColor(180, 30, 30), "cancelled": QColor(110, 110, 110),
    "running": QColor(40, 90, 170),
}

_Index = QModelIndex | QPersistentModelIndex


def local_time(iso: Any) -> str:
    """An engine timestamp (ISO, UTC) in the analyst's local time, to the second."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(iso)).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return str(iso or "")


def fmt_number(value: Any, digits: int = 4) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


@dataclass(frozen=True)
class Column:
    """One column of a :class:`RecordTableModel`.

    Attributes:
        title: Header text.
        get: Key into the record dict, or a function of the record.
        fmt: Turns the raw value into display text.
        numeric: Right-align and sort numerically.
        tip: Header tooltip.
        show: Display text from the whole record, in place of ``fmt`` of the value (which still sorts).
    """

    title: str
    get: str | Callable[[Any], Any]
    fmt: Callable[[Any], str] = fmt_number
    numeric: bool = False
    tip: str = ""
    show: Callable[[Any], str] | None = None

    def value(self, record: Any) -> Any:
        if callable(self.get):
            return self.get(record)
        return record.get(self.get) if isinstance(record, dict) else getattr(record, self.get, None)

    def text(self, record: Any) -> str:
        return self.show(record) if self.show is not None else self.fmt(self.value(record))


def page_column(title: str = "Page") -> Column:
    """The page of a record with ``page_index`` and ``printed_folio`` (a citation, a passage) as people read
    it: "47", or "47 (printed 46)"; it sorts by page."""
    return Column(title, "page_index", numeric=True,
                  show=lambda r: page_number(r.page_index, r.printed_folio),
                  tip="The page as a PDF reader numbers it, and the number the page prints when that differs")


class RecordTableModel(QAbstractTableModel):
    """A read-only table over a list of records (trace rows, ingest events, runs) described by columns.

    ``kept`` (a key or function) marks rows the pipeline kept, shown with a green background;
    ``status`` names the column whose text is coloured by status.
    """

    def __init__(self, columns: Sequence[Column], records: Sequence[Any] = (), *,
                 kept: str | Callable[[Any], bool] | None = None, status: str | None = None,
                 tooltip: Callable[[Any], str] | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self.records: list[Any] = list(records)
        self._kept, self._status, self._tooltip = kept, status, tooltip
        self._row_texts: dict[int, str] = {}  # id(record) -> its row's text, lowercased (text filters)

    def set_records(self, records: Sequence[Any]) -> None:
        self.beginResetModel()
        self.records = list(records)
        self._row_texts = {}
        self.endResetModel()

    def row_text(self, row: int) -> str:
        """Every column's text of a row, lowercased (what a text filter searches), computed once per record."""
        rec = self.records[row]
        if id(rec) not in self._row_texts:
            self._row_texts[id(rec)] = " ".join(col.text(rec) for col in self.columns).lower()
        return self._row_texts[id(rec)]

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the records by a column in one Python sort (a proxy sorting 145,897 rows calls ``data`` per
        comparison, millions of times); selections and other persistent indexes follow their rows."""
        if not 0 <= column < len(self.columns):
            return
        col = self.columns[column]
        self.layoutAboutToBeChanged.emit()
        old_records = list(self.records)
        self.records.sort(key=lambda r: _sort_key(sort_value(col.value(r))),
                          reverse=order == Qt.SortOrder.DescendingOrder)
        row_of = {id(r): i for i, r in enumerate(self.records)}
        moved = self.persistentIndexList()
        self.changePersistentIndexList(moved, [self.index(row_of[id(old_records[i.row()])], i.column())
                                               for i in moved])
        self.layoutChanged.emit()

    def append(self, record: Any) -> None:
        n = len(self.records)
        self.beginInsertRows(QModelIndex(), n, n)
        self.records.append(record)
        self.endInsertRows()

    def record(self, row: int) -> Any:
        return self.records[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            col = self.columns[section]
            if role == Qt.ItemDataRole.DisplayRole:
                return col.title
            if role == Qt.ItemDataRole.ToolTipRole and col.tip:
                return col.tip
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return section + 1
        return None

    def _is_kept(self, rec: Any) -> bool:
        if self._kept is None:
            return False
        if callable(self._kept):
            return bool(self._kept(rec))
        return bool(rec.get(self._kept)) if isinstance(rec, dict) else bool(getattr(rec, self._kept, False))

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        rec = self.records[index.row()]
        col = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return col.text(rec)
        if role == SORT_ROLE:
            return sort_value(col.value(rec))
        if role == RECORD_ROLE:
            return rec
        if role == Qt.ItemDataRole.TextAlignmentRole and col.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and self._is_kept(rec):
            return KEPT_BRUSH
        if role == Qt.ItemDataRole.ForegroundRole and self._status and col.title == self._status:
            color = STATUS_COLORS.get(str(col.value(rec)))
            return QBrush(color) if color else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if self._tooltip is not None:
                return self._tooltip(rec)
            text = col.text(rec)
            return text if len(text) > 40 else None
        return None


# -- filings ---------------------------------------------------------------------------------------

def fiscal_year_end_text(value: str | None) -> str:
    """A fiscal-year end as XBRL writes it ("--12-31") as an analyst reads it ("Dec 31")."""
    import calendar

    try:
        return f"{calendar.month_abbr[int(value[2:4])]} {int(value[5:7])}" if value else ""
    except (ValueError, IndexError):
        return value or ""


# the identity columns whose value may be the registrant's (stated by another of its filings): shown in italics
INHERITABLE = {"Ticker": "ticker", "CIK": "cik", "FY end": "fiscal_year_end"}


def _image_only(f: Filing) -> str:
    n = len(f.image_only_pages)
    return f"{n} page{'s' if n != 1 else ''}" if n else ""


NOT_STATED = "—"  # an identity value no filing of the registrant states (never left blank: blank reads as unread)
NOT_STATED_TIPS = {
    "ticker": "not printed on the cover (covers before 2019 print no trading symbol), nor by another filing of "
              "this registrant",
    "cik": "not printed on the cover, and no EDGAR links in the filing or in another filing of this registrant "
           "(printed EDGAR PDFs show a Commission File Number, not the CIK)",
    "fiscal_year_end": "not printed on the cover, nor by a balance sheet or another filing of this registrant",
}


def _identity_column(title: str, name: str, tip: str, fmt: Callable[[Any], str] = str) -> Column:
    """Ticker, CIK or FY end: the value, else an em dash (its tooltip says why, see :func:`identity_tip`)."""
    return Column(title, lambda f: getattr(f.identity, name) or "", tip=tip,
                  show=lambda f: fmt(v) if (v := getattr(f.identity, name)) else NOT_STATED)


def identity_tip(f: Filing, name: str) -> str:
    """Where a filing's ticker, CIK or fiscal-year end comes from, or why it has none."""
    value = getattr(f.identity, name)
    if not value:
        return NOT_STATED_TIPS[name]
    shown = fiscal_year_end_text(value) if name == "fiscal_year_end" else value
    if source := f.inherited_from(name):
        return f"{shown} (from {source})"  # the registrant's: the column shows it in italics
    where = getattr(f.identity, f"{name}_source", None) if name != "ticker" else "printed on the cover"
    return f"{shown} ({where or 'stated by this filing'})"


FILING_COLUMNS = [
    Column("Document", lambda f: f.identity.doc_name),
    Column("Registrant", lambda f: f.identity.registrant or f.identity.issuer_key or ""),
    _identity_column("Ticker", "ticker", "Trading symbol; in italics: the registrant's, stated by another of its "
                                         "filings; —: none stated"),
    _identity_column("CIK", "cik", "SEC Central Index Key; in italics: the registrant's, stated by another of its "
                                   "filings; —: none stated"),
    _identity_column("FY end", "fiscal_year_end", "Fiscal-year end; in italics: the registrant's, stated by "
                                                  "another of its filings; —: none stated", fiscal_year_end_text),
    Column("Form", lambda f: f.identity.form or ""),
    Column("Period", lambda f: f.identity.period or ""),
    Column("Pages", lambda f: f.n_pages, numeric=True),
    Column("Chunks", lambda f: f.n_chunks, numeric=True),
    Column("Image-only", lambda f: len(f.image_only_pages), fmt=lambda n: counted(n, "page") if n else "",
           numeric=True, tip="Pages without a text layer (scanned images; their text is not searchable)"),
]


def _filing_tip(f: Filing) -> str:
    lines = [f.identity.doc_name, f.path]
    lines += [f"{title} {getattr(f.identity, name)}: the registrant's, from {source}"
              for title, name in INHERITABLE.items() if (source := f.inherited_from(name))]
    if f.image_only_pages:
        pages = ", ".join(str(reader_page(p)) for p in f.image_only_pages[:20])
        lines.append(f"image-only pages (no text layer): {pages}{' …' if len(f.image_only_pages) > 20 else ''}")
    return "\n".join(lines)


class RecordProxy(QSortFilterProxyModel):
    """A proxy over a :class:`RecordTableModel` that stays quick with a LOFin-size library: sorting is the
    source's one Python sort (the source then holds the order; this proxy keeps it), and the text filter
    looks for the text in each row's text, computed once per record, instead of calling ``data`` for every
    cell of every row."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._needle = ""
        self._order: tuple[int, Qt.SortOrder] | None = None

    def setSourceModel(self, model: Any) -> None:  # noqa: N802 - Qt's name
        super().setSourceModel(model)
        model.modelReset.connect(self._resort)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._order = (column, order)
        self.sourceModel().sort(column, order)

    def _resort(self) -> None:  # new records: in the order the user chose
        if self._order is not None:
            self.sourceModel().sort(*self._order)

    def set_text(self, text: str) -> None:
        """Keep the rows whose text holds ``text`` (any column, any case)."""
        self._needle = text.strip().lower()
        self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: Any) -> bool:  # noqa: N802 - Qt's name
        return not self._needle or self._needle in self.sourceModel().row_text(row)


class FilingTableModel(RecordTableModel):
    """The library's filings (``Library.filings()``), one row each."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(FILING_COLUMNS, tooltip=_filing_tip, parent=parent)

    def filing(self, row: int) -> Filing:
        return self.records[row]

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole and index.isValid() and self.columns[index.column()].title == "Image-only":
            return QBrush(STATUS_COLORS["failed"])
        if role == Qt.ItemDataRole.ToolTipRole and index.isValid() and (
                name := INHERITABLE.get(self.columns[index.column()].title)):
            return identity_tip(self.filing(index.row()), name)
        if role == Qt.ItemDataRole.ForegroundRole and index.isValid() and (
                name := INHERITABLE.get(self.columns[index.column()].title)) and not getattr(
                self.filing(index.row()).identity, name):
            return QBrush(QColor(150, 150, 150))
        if role == Qt.ItemDataRole.FontRole and index.isValid():
            name = INHERITABLE.get(self.columns[index.column()].title)
            if name and self.filing(index.row()).inherited_from(name):
                font = QFont()
                font.setItalic(True)
                return font
        return super().data(index, role)


# -- JSON payloads ---------------------------------------------------------------------------------

class _Node:
    __slots__ = ("key", "value", "parent", "row", "children")

    def __init__(self, key: str, value: Any, parent: _Node | None, row: int) -> None:
        self.key, self.value, self.parent, self.row = key, value, parent, row
        self.children: list[_Node] | None = None  # built on first access

    def kids(self) -> list[_Node]:
        if self.children is None:
            v = self.value
            if isinstance(v, dict):
                items = [(str(k), x) for k, x in v.items()]
            elif isinstance(v, (list, tuple)):
                items = [(f"[{i}]", x) for i, x in enumerate(v)]
            else:
                items = []
            self.children = [_Node(k, x, self, i) for i, (k, x) in enumerate(items)]
        return self.children


def json_summary(value: Any, limit: int = 160) -> str:
    """One line for a JSON value: scalars as text, containers as their size."""
    if isinstance(value, dict):
        return f"{{{len(value)} fields}}"
    if isinstance(value, (list, tuple)):
        return f"[{len(value)} items]"
    if isinstance(value, str):
        one = " ".join(value.split())
        return one if len(one) <= limit else one[: limit - 1] + "…"
    return json.dumps(value)


def json_full_text(value: Any) -> str:
    """The whole value, for the detail pane (strings as written, with their line breaks)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, default=str, ensure_ascii=False)


class JsonTreeModel(QAbstractItemModel):
    """A lazy tree over nested dicts/lists (the trace's JSON payloads, prompts, raw model outputs)."""

    HEADERS = ("Key", "Value")

    def __init__(self, root: Any = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._root = _Node("", root if root is not None else {}, None, 0)

    def set_root(self, root: Any) -> None:
        self.beginResetModel()
        self._root = _Node("", root, None, 0)
        self.endResetModel()

    def node(self, index: _Index) -> _Node:
        return index.internalPointer() if index.isValid() else self._root  # type: ignore[return-value]

    def value(self, index: _Index) -> Any:
        return self.node(index).value

    def path(self, index: _Index) -> str:
        parts = []
        n: _Node | None = self.node(index)
        while n is not None and n.parent is not None:
            parts.append(n.key)
            n = n.parent
        return " › ".join(reversed(parts))

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        kids = self.node(parent).kids()
        if 0 <= row < len(kids) and 0 <= column < 2:
            return self.createIndex(row, column, kids[row])
        return QModelIndex()

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        p = self.node(index).parent
        if p is None or p is self._root:
            return QModelIndex()
        return self.createIndex(p.row, 0, p)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).kids())

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 2

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008, N802
        v = self.node(parent).value
        return (not parent.isValid() or parent.column() == 0) and isinstance(v, (dict, list, tuple)) and len(v) > 0

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        n = self.node(index)
        if role == Qt.ItemDataRole.DisplayRole:
            return n.key if index.column() == 0 else json_summary(n.value)
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 1 and isinstance(n.value, str) and len(n.value) > 80:
            return n.value[:2000]
        if role == Qt.ItemDataRole.FontRole and index.column() == 0 and n.parent is self._root:
            f = QFont()
            f.setBold(True)
            return f
        return None
