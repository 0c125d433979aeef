"""The History tab: past runs (``RunStore.list``), reopened into Inspect, compared two at a time, exported.

It opens on the analyst's own questions; the runs an evaluation asked are one choice away, all of them grouped by
their evaluation or one evaluation at a time. Runs left "running" by a process that ended are listed as interrupted
(the store settles them when it lists)."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from analyst_app.context import AppContext
from analyst_app.models import Column, RecordTableModel, local_time
from analyst_app.views.library import fit_columns, make_table
from engine.pages import cite
from engine.records import StageTrace, StoredRun
from engine.session import ANY_EVALUATION
from engine.wording import counted


def evaluation_title(folder: str) -> str:
    """An evaluation as History names it: its results folder's name (the folder is the tooltip)."""
    return Path(folder).name or folder


RUN_COLUMNS = [
    Column("Started", "started_at", fmt=local_time, tip="Local time"),
    Column("Evaluation", lambda r: evaluation_title(r.get("evaluation") or ""),
           tip="The evaluation that asked the question (its results folder)"),
    Column("Run", "id"),
    Column("Status", "status", fmt=lambda v: str(v or "").replace("_", " ")),
    Column("Seconds", "seconds", fmt=lambda v: "" if v is None else f"{v:.1f}", numeric=True),
    Column("Tokens in", "tokens_in", numeric=True),
    Column("Tokens out", "tokens_out", numeric=True),
    Column("Question", "question"),
    Column("Answer", "answer"),
]


def run_record(row: Any) -> dict:
    """A ``RunStore.list`` row as a plain dict, with the answer text and seconds from its result JSON."""
    from engine.trace import outcome_from_json

    d = {k: row[k] for k in row.keys()}  # noqa: SIM118 (iterating a sqlite3.Row gives its values)
    try:
        answer, cost = outcome_from_json(json.loads(d.get("result") or "{}"))
    except ValueError:  # torn JSON, or a result that does not read as one (pydantic's error is a ValueError)
        answer, cost = None, None
    d["answer"] = (answer.text if answer else "") or (d.get("error") or "")
    d["seconds"] = cost.seconds if cost else None
    return d

EVALUATION_COLUMN = 1
YOURS, EVERY_RUN = "", "all runs"  # the show box's data besides ANY_EVALUATION and the results folders


class HistoryView(QWidget):
    open_run = Signal(str)
    export_requested = Signal(list)  # run ids
    delete_requested = Signal(list)  # run ids

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.evaluations: list[tuple[str, int, str]] = []  # (results folder, runs, latest start)
        self.model = RecordTableModel(RUN_COLUMNS, status="Status", parent=self)
        self.proxy = QSortFilterProxyModel(self)
        self.table = make_table(self.model, proxy=self.proxy)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.table.doubleClicked.connect(lambda _i: self.open_selected())
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter runs: question, answer, status…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(lambda t: self.proxy.setFilterFixedString(t.strip()))
        self.show_box = QComboBox()  # whose runs: the analyst's, the evaluations' (grouped), one evaluation, all
        self.show_box.setToolTip("Your own questions, or the runs an evaluation asked")
        self.show_box.currentIndexChanged.connect(lambda _i: self.reload())
        self.limit = QSpinBox()
        self.limit.setRange(10, 100000)
        self.limit.setSingleStep(50)
        self.limit.setValue(500)
        self.limit.setPrefix("last ")
        self.limit.setSuffix(" runs")
        self.limit.valueChanged.connect(lambda _v: self.reload())
        self.open_btn = QPushButton("Open in Inspect")
        self.open_btn.clicked.connect(self.open_selected)
        self.compare_btn = QPushButton("Compare two…")
        self.compare_btn.setToolTip("Select exactly two runs to compare their answers, citations, timings and tokens")
        self.compare_btn.clicked.connect(lambda: self.compare_selected())
        self.export_btn = QPushButton("Export…")
        self.export_btn.setToolTip("Export the selected runs to JSON, CSV, or a Markdown/HTML report with page snapshots (Ctrl+E)")
        self.export_btn.clicked.connect(lambda: self.export_requested.emit(self.selected_run_ids()))
        self.delete_btn = QPushButton("Delete…")
        self.delete_btn.setToolTip("Delete the selected runs and their traces from the library (Del)")
        self.delete_btn.clicked.connect(lambda: self.delete_requested.emit(self.selected_run_ids()))
        QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.table,
                  lambda: self.delete_requested.emit(self.selected_run_ids()),
                  context=Qt.ShortcutContext.WidgetShortcut)
        self.refresh_btn = QPushButton("Refresh")
        self.refresh_btn.clicked.connect(self.reload)
        top = QHBoxLayout()
        top.addWidget(self.show_box)
        top.addWidget(self.filter, 1)
        top.addWidget(self.limit)
        for b in (self.refresh_btn, self.open_btn, self.compare_btn, self.export_btn, self.delete_btn):
            top.addWidget(b)
        self.count_label = QLabel()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.count_label)
        ctx.runs_changed.connect(self.reload)
        self.reload()

    def _fill_show_box(self) -> None:
        """The analyst's questions, every evaluation's runs, each evaluation, every run; the choice is kept."""
        self.evaluations = self.ctx.session.runs.evaluations()
        shown = self.show_box.currentData() if self.show_box.count() else YOURS
        self.show_box.blockSignals(True)
        self.show_box.clear()
        self.show_box.addItem("Your questions", YOURS)
        if self.evaluations:
            n = sum(count for _, count, _ in self.evaluations)
            self.show_box.addItem(f"Evaluation runs, by evaluation ({n})", ANY_EVALUATION)
            for folder, count, _ in self.evaluations:
                self.show_box.addItem(f"Evaluation {evaluation_title(folder)} ({count})", folder)
                self.show_box.setItemData(self.show_box.count() - 1, folder, Qt.ItemDataRole.ToolTipRole)
        self.show_box.addItem("All runs", EVERY_RUN)
        self.show_box.setCurrentIndex(max(self.show_box.findData(shown), 0))
        self.show_box.blockSignals(False)

    def show_runs(self, which: str | None) -> None:
        """Show the analyst's questions (''), every evaluation's runs (``ANY_EVALUATION``), one evaluation's (its
        results folder) or every run (None)."""
        self.show_box.setCurrentIndex(max(self.show_box.findData(EVERY_RUN if which is None else which), 0))

    def showing(self) -> str | None:
        """What the table shows, as :meth:`show_runs` takes it."""
        data = self.show_box.currentData()
        return None if data == EVERY_RUN else str(data)

    def reload(self) -> None:
        chosen = set(self.selected_run_ids())
        self._fill_show_box()
        which = self.showing()
        rows = self.ctx.session.runs.list(self.limit.value(), evaluation=which)
        self.model.set_records([run_record(r) for r in rows])
        several = which in (None, ANY_EVALUATION)  # runs of more than one evaluation, or none: say whose
        self.table.setColumnHidden(EVALUATION_COLUMN, not several)
        if several:  # grouped by evaluation (the analyst's own first), newest first within each
            self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
            self.table.sortByColumn(EVALUATION_COLUMN, Qt.SortOrder.AscendingOrder)
        elif self.table.horizontalHeader().sortIndicatorSection() == EVALUATION_COLUMN:
            self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        fit_columns(self.table, 420)
        if chosen:
            self.select_runs(sorted(chosen))
        self._selection_changed()

    def run_ids(self) -> list[str]:
        return [r["id"] for r in self.model.records]

    def selected_run_ids(self) -> list[str]:
        rows = sorted({self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()})
        return [self.model.record(r)["id"] for r in rows]

    def select_runs(self, run_ids: list[str]) -> None:
        sel = self.table.selectionModel()
        sel.clearSelection()
        for row in range(self.proxy.rowCount()):
            rec = self.model.record(self.proxy.mapToSource(self.proxy.index(row, 0)).row())
            if rec["id"] in run_ids:
                sel.select(self.proxy.index(row, 0), sel.SelectionFlag.Select | sel.SelectionFlag.Rows)

    def _selection_changed(self, *_: Any) -> None:
        n = len(self.table.selectionModel().selectedRows())
        self.open_btn.setEnabled(n == 1)
        self.compare_btn.setEnabled(n == 2)
        self.export_btn.setEnabled(n >= 1)
        self.delete_btn.setEnabled(n >= 1)
        hidden = ""
        if self.showing() == YOURS and self.evaluations:
            runs = sum(count for _, count, _ in self.evaluations)
            hidden = (f" · {counted(runs, 'evaluation run')} of {counted(len(self.evaluations), 'evaluation')} "
                      "not shown (choose them above)")
        self.count_label.setText(counted(self.model.rowCount(), "run") + (f", {n} selected" if n else "")
                                 + " · double-click a run to inspect it" + hidden)

    def open_selected(self) -> None:
        ids = self.selected_run_ids()
        if ids:
            self.open_run.emit(ids[0])

    def compare_selected(self) -> CompareDialog | None:
        ids = self.selected_run_ids()
        if len(ids) != 2:
            self.ctx.message.emit("select exactly two runs to compare", 4000)
            return None
        dlg = CompareDialog(self.ctx.library, ids[0], ids[1], self)
        dlg.show()
        return dlg


# -- comparing two runs ------------------------------------------------------------------------------

def stage_costs(traces: Sequence[StageTrace]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for t in traces:
        key = f"{t.stage} r{t.round}" if t.stage not in ("intent", "answer") else t.stage
        c = out.setdefault(key, {"seconds": 0.0, "tokens_in": 0, "tokens_out": 0})
        c["seconds"] += t.seconds
        c["tokens_in"] += t.tokens_in
        c["tokens_out"] += t.tokens_out
    return out


def run_column_html(run: StoredRun) -> str:
    a = run.answer
    parts = [f"<p style='color:#555'>run <code>{html.escape(run.id)}</code> · {html.escape(local_time(run.started_at))}</p>",
             f"<p><b>{html.escape(run.question)}</b></p>",
             f"<p>Status: <b>{html.escape(run.status)}</b></p>",
             f"<p style='font-size:14pt;font-weight:600'>{html.escape((a.text if a else '') or '(no answer)')}</p>"]
    if a and a.reason:
        parts.append(f"<p style='color:#8a5a00'>Note: {html.escape(a.reason)}</p>")
    items = "".join(f"<li>[{c.passage_id}] {html.escape(cite(c.doc_name, c.page_index, c.printed_folio))}"
                    "</li>" for c in (a.citations if a else ()))
    parts.append(f"<p><b>Citations</b></p><ul>{items or '<li>none</li>'}</ul>")
    if run.cost:
        c = run.cost
        parts.append(f"<p>{c.seconds} s · {c.tokens_in} tokens in / {c.tokens_out} out · {c.llm_calls} model calls</p>")
    return "".join(parts)


def stages_table_html(a: StoredRun, b: StoredRun) -> str:
    ca, cb = stage_costs(a.traces), stage_costs(b.traces)
    keys = list(dict.fromkeys([*ca, *cb]))
    rows = []
    for k in keys:
        x, y = ca.get(k), cb.get(k)

        def cell(c: dict | None, f: str) -> str:
            return "—" if c is None else (f"{c[f]:.2f}" if f == "seconds" else str(c[f]))

        rows.append(f"<tr><td>{html.escape(k)}</td><td align='right'>{cell(x, 'seconds')}</td>"
                    f"<td align='right'>{cell(y, 'seconds')}</td><td align='right'>{cell(x, 'tokens_in')}/{cell(x, 'tokens_out')}</td>"
                    f"<td align='right'>{cell(y, 'tokens_in')}/{cell(y, 'tokens_out')}</td></tr>")
    ta = {f: sum(c[f] for c in ca.values()) for f in ("seconds", "tokens_in", "tokens_out")}
    tb = {f: sum(c[f] for c in cb.values()) for f in ("seconds", "tokens_in", "tokens_out")}
    rows.append(f"<tr><td><b>total</b></td><td align='right'><b>{ta['seconds']:.2f}</b></td>"
                f"<td align='right'><b>{tb['seconds']:.2f}</b></td><td align='right'><b>{ta['tokens_in']}/{ta['tokens_out']}</b></td>"
                f"<td align='right'><b>{tb['tokens_in']}/{tb['tokens_out']}</b></td></tr>")
    return ("<table border='1' cellspacing='0' cellpadding='4' style='border-color:#ccc'>"
            "<tr><th>Stage</th><th>Seconds A</th><th>Seconds B</th><th>Tokens A (in/out)</th><th>Tokens B (in/out)</th></tr>"
            + "".join(rows) + "</table>")


class CompareDialog(QDialog):
    """Two runs side by side: answers, citations, and per-stage timings and tokens."""

    def __init__(self, library: Any, run_a: str, run_b: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from engine.trace import read_run

        self.setWindowTitle("Compare runs")
        self.a, self.b = read_run(library, run_a), read_run(library, run_b)
        self.left, self.right, self.stages = QTextBrowser(), QTextBrowser(), QTextBrowser()
        self.left.setHtml("<h3>A</h3>" + run_column_html(self.a))
        self.right.setHtml("<h3>B</h3>" + run_column_html(self.b))
        same = {(c.doc_name, c.page_index) for c in self.a.answer.citations} if self.a.answer else set()
        same &= {(c.doc_name, c.page_index) for c in self.b.answer.citations} if self.b.answer else set()
        self.stages.setHtml(f"<p>{len(same)} cited page(s) in common.</p>" + stages_table_html(self.a, self.b))
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.left)
        top.addWidget(self.right)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.stages)
        split.setSizes([360, 260])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(split, 1)
        lay.addWidget(buttons)
        self.resize(1000, 680)
