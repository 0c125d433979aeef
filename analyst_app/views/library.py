"""The Library tab: loaded filings (sortable, filterable), adding files and folders (dialog or drop)
with progress and Cancel, the per-file ingest report, filing details, the tables read from a filing, and
removal."""

from __future__ import annotations

import html
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from analyst_app.context import AppContext
from analyst_app.models import (
    NOT_STATED,
    SORT_ROLE,
    Column,
    FilingTableModel,
    RecordProxy,
    RecordTableModel,
    identity_tip,
    local_time,
)
from analyst_app.views import hint_label
from analyst_app.views.facts_grid import FactsGrid
from analyst_app.views.train_dialog import TrainDialog
from analyst_app.workers import (
    CallJob,
    IngestJob,
    IngestSummary,
    TrainOptions,
    TrainOutcome,
    TrainRerankerJob,
    remove_and_sync,
    search_facts,
)
from engine.errors import EngineError
from engine.pages import reader_page
from engine.records import Filing
from engine.wording import counted

SUPPORTED = {".pdf", ".htm", ".html"}
PROBLEMS = {"failed", "skipped", "duplicate", "removed"}
TRAIN_OPTIONS_KEY = "library/train_options"  # QSettings: the last training options (a rerun resumes with them)
TRAIN_STAGES = {"mining": "Mining training pairs (then the held-out questions are scored)…",
                "registering": "Registering the trained reranker…"}

def _field(record: Any, key: str) -> Any:
    return record.get(key, "") if isinstance(record, dict) else getattr(record, key, "")


EVENT_COLUMNS = [
    Column("Status", "status"),
    Column("File", lambda e: Path(_field(e, "path")).name),
    Column("Document", "doc_name"),
    Column("Details", "reason"),
    Column("Folder", lambda e: str(Path(_field(e, "path")).parent)),
]


def last_report(session: Any) -> tuple[str, list[dict]]:
    """The most recent ingest batch recorded in the session's library: (when, one dict per file)."""
    library = session.library
    rows = library.reports()
    if not rows:
        return "", []
    batch = rows[-1]["batch_id"]
    names = {f.id: f.identity.doc_name for f in library.filings()}
    out = [{"status": r["status"], "path": r["path"], "reason": r["reason"] or "",
            "doc_name": names.get(r["filing_id"], "") if r["filing_id"] is not None else ""}
           for r in rows if r["batch_id"] == batch]
    return str(rows[-1]["at"]), out


def rate_text(done: int, left: int, seconds: float) -> str:
    """The rate since the stage began and the time the rest takes at it: " · 3.2 files/s · about 2 min left"."""
    if done < 1 or seconds <= 0:
        return ""
    rate = done / seconds
    eta = left / rate
    when = f"about {eta / 60:.0f} min left" if eta >= 90 else f"about {eta:.0f} s left" if left else "done"
    return f" · {rate:.1f} files/s · {when}"


def make_table(model: Any, *, sortable: bool = True, proxy: QSortFilterProxyModel | None = None) -> QTableView:
    """A table view with the settings every table here shares."""
    view = QTableView()
    if proxy is not None:
        proxy.setSourceModel(model)
        proxy.setSortRole(SORT_ROLE)
        proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        proxy.setFilterKeyColumn(-1)
        view.setModel(proxy)
    else:
        view.setModel(model)
    view.setSortingEnabled(sortable and proxy is not None)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    view.horizontalHeader().setHighlightSections(False)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    return view


def wrapped_label(text: str = "") -> QLabel:
    """A label that wraps and whose text can be selected and copied."""
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return lab


def fit_columns(view: QTableView, max_width: int = 360) -> None:
    """Size columns to their contents, capped so one long cell cannot push the others off screen."""
    header = view.horizontalHeader()
    for col in range(header.count() - 1):
        view.resizeColumnToContents(col)
        if header.sectionSize(col) > max_width:
            header.resizeSection(col, max_width)


_INDEX_TIP = ("Make every stored filing searchable (what `filinglens index build` does), reading again first what an\n"
              "older FilingLens read of them (statement facts, sections, CIK …); needed after an ingest that was\n"
              "stopped or run without a build, and after an upgrade.")


class LibraryView(QWidget):
    open_filing = Signal(object)  # a Filing to show in the page viewer
    open_fact = Signal(object, object)  # (Filing, StoredFact): show the fact's cell in the page viewer
    ingest_finished = Signal(object)  # IngestSummary (tests wait on it)
    remove_finished = Signal(int)
    train_finished = Signal(object)  # the TrainReport, None when training failed (tests wait on it)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.job: IngestJob | None = None
        self._stage_started: dict[str, tuple[float, int]] = {}  # stage -> (when, files done) at its first progress
        self.train_job: TrainRerankerJob | None = None
        self._last_reload = 0.0
        self._tables_sized = False  # the Tables panel got room once this session (the user may shrink it)
        self._tables_key: tuple[int, int | None] | None = None  # (library, filing) the Tables panel shows
        self._outdated = False  # stored filings missing from the published indexes (set by reload)
        self.setAcceptDrops(True)

        self.add_files_btn = QPushButton("Add files…")
        self.add_files_btn.setToolTip("Add PDF or HTML filings (Ctrl+O)")
        self.add_files_btn.clicked.connect(self.choose_files)
        self.add_folder_btn = QPushButton("Add folder…")
        self.add_folder_btn.setToolTip("Add every filing in a folder, e.g. a LOFin corpus (Ctrl+Shift+O).\n"
                                       "Filings previously added from that folder whose files are gone are removed.")
        self.add_folder_btn.clicked.connect(self.choose_folder)
        self.on_cluster = QCheckBox()  # shown when Settings › Ingest › ray names a Ray cluster
        self.on_cluster.setChecked(True)
        self.on_cluster.setToolTip("Read added files on the Ray cluster named in Settings › Ingest › ray (parse, "
                                   "facts and embedding spread over its workers); unticked, on this machine.")
        self.remove_btn = QPushButton("Remove selected")
        self.remove_btn.setToolTip("Remove the selected filings from the library (Del)")
        self.remove_btn.clicked.connect(lambda: self.remove_selected())
        self.train_btn = QPushButton("Train reranker…")
        self.train_btn.setToolTip("Train a cross-encoder reranker on question–passage pairs mined from these "
                                  "filings (in the background).\nQuestions use it when Settings › Retrieval › "
                                  "Reranker is “trained”.")
        self.train_btn.clicked.connect(self.choose_training)
        self.index_btn = QPushButton("Update index")
        self.index_btn.setToolTip(_INDEX_TIP)
        self.index_btn.clicked.connect(lambda: self.update_index())
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: name, registrant, ticker, form, period…")
        self.filter.setClearButtonEnabled(True)
        self.filter.setMinimumWidth(280)
        self.count_label = QLabel()

        top = QHBoxLayout()
        for w in (self.add_files_btn, self.add_folder_btn, self.on_cluster, self.remove_btn):
            top.addWidget(w)
        top.addSpacing(16)
        top.addWidget(self.train_btn)
        top.addWidget(self.index_btn)
        top.addSpacing(16)
        top.addWidget(self.filter, 1)
        top.addWidget(self.count_label)

        self.model = FilingTableModel(self)
        self.proxy = RecordProxy(self)
        self.table = make_table(self.model, proxy=self.proxy)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.doubleClicked.connect(self._open_current)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.filter.textChanged.connect(self._filter_changed)
        ctx.settings_changed.connect(self._follow_settings)
        self._follow_settings()

        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress_label = QLabel()
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setToolTip("Stop after the file being stored (Esc)")
        self.cancel_btn.clicked.connect(self.cancel)
        self.progress_row = QWidget()
        pr = QHBoxLayout(self.progress_row)
        pr.setContentsMargins(0, 0, 0, 0)
        pr.addWidget(self.progress_label)
        pr.addWidget(self.progress, 1)
        pr.addWidget(self.cancel_btn)
        self.progress_row.setVisible(False)

        # bottom: ingest report and filing details
        self.events = RecordTableModel(EVENT_COLUMNS, status="Status", parent=self)
        self.events_proxy = QSortFilterProxyModel(self)
        self.events_table = make_table(self.events, proxy=self.events_proxy)
        self.events_proxy.setFilterKeyColumn(0)
        self.events_table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # arrival order until the user sorts
        self.problems_only = QCheckBox("Problems only")
        self.problems_only.setToolTip("Show only files that failed, were skipped, duplicated or removed")
        self.problems_only.toggled.connect(self._problems_toggled)
        self.report_label = QLabel("No files added in this session yet. Drop PDFs, HTML files or folders here.")
        self.report_label.setWordWrap(True)
        report = QWidget()
        rl = QVBoxLayout(report)
        rl.setContentsMargins(4, 4, 4, 4)
        rh = QHBoxLayout()
        rh.addWidget(self.report_label, 1)
        rh.addWidget(self.problems_only)
        rl.addLayout(rh)
        rl.addWidget(self.events_table)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.tables = FactsGrid()
        self.tables.fact_selected.connect(self._fact_selected)
        self.tables.session_of = lambda: self.ctx.session
        self.tables.searcher = lambda text, limit, done, failed: self.ctx.start(
            CallJob("search tables", self.ctx.settings(), search_facts, text, limit), done=done, failed=failed)
        self.tables.hit_opened.connect(self._open_hit)
        self.bottom = QTabWidget()
        self.bottom.addTab(report, "Ingest report")
        self.bottom.addTab(self.details, "Filing details")
        self.bottom.addTab(self.tables, "Tables")
        self.bottom.setTabToolTip(2, "The statement tables read from the selected filing, as a grid of printed "
                                     "values;\nselect a cell to see it highlighted on its page")
        self.bottom.currentChanged.connect(lambda _i: self._refresh_tables())

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        upper = QWidget()
        ul = QVBoxLayout(upper)
        ul.setContentsMargins(0, 0, 0, 0)
        ul.addLayout(top)
        self.empty_hint = hint_label("No filings yet.\n\nAdd files… (Ctrl+O) or Add folder… (Ctrl+Shift+O), or drop "
                                     "PDF/HTML filings or folders (a LOFin corpus works) anywhere in this window.",
                                     "padding:30px;background:white;border:1px solid #ccc")
        self.table_stack = QStackedWidget()
        self.table_stack.addWidget(self.table)
        self.table_stack.addWidget(self.empty_hint)
        ul.addWidget(self.table_stack, 1)
        ul.addWidget(self.progress_row)
        self.splitter.addWidget(upper)
        self.splitter.addWidget(self.bottom)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([560, 240])

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.splitter)

        ctx.library_changed.connect(self.reload)
        ctx.library_changed.connect(self._load_last_report)
        ctx.busy_changed.connect(self._busy_changed)
        self.reload()
        self._load_last_report()

    # -- data -------------------------------------------------------------------------------------
    def reload(self) -> None:
        selected = {f.id for f in self.selected_filings()}
        self.model.set_records(self.ctx.library.filings())
        self._outdated = self._index_outdated()
        fit_columns(self.table, 220)  # narrow enough that Pages and Chunks stay in view beside the page panel
        if selected:
            sel = self.table.selectionModel()
            for row in range(self.proxy.rowCount()):
                f = self.model.filing(self.proxy.mapToSource(self.proxy.index(row, 0)).row())
                if f.id in selected:
                    sel.select(self.proxy.index(row, 0), QItemSelectionModel.SelectionFlag.Select
                               | QItemSelectionModel.SelectionFlag.Rows)
        self._update_count()
        self._refresh_tables()  # a re-ingested filing is a new one; a removed one is no longer selected

    def filings(self) -> list[Filing]:
        return list(self.model.records)

    def visible_doc_names(self) -> list[str]:
        return [self.proxy.index(r, 0).data() for r in range(self.proxy.rowCount())]

    def selected_filings(self) -> list[Filing]:
        rows = {self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()}
        return [self.model.filing(r) for r in sorted(rows)]

    def _update_count(self) -> None:
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        self.table_stack.setCurrentWidget(self.table if total else self.empty_hint)
        pages = sum(f.n_pages for f in self.model.records)
        text = (f"{counted(total, 'filing')}, {counted(pages, 'page')}" if shown == total
                else f"{shown} of {counted(total, 'filing')} shown")
        self.count_label.setText(text)
        self.remove_btn.setEnabled(bool(self.table.selectionModel().selectedRows()) and not self.ctx.busy)
        self.train_btn.setEnabled(bool(total) and not self.ctx.busy)
        self.index_btn.setEnabled(self._outdated and not self.ctx.busy)

    def _index_outdated(self) -> bool:
        """Whether stored filings are missing from the published indexes (or none were ever published), or were read
        by an older FilingLens (their facts, sections … read again by Update index); the button's tip says which."""
        stale = self.ctx.session.stale_readings()
        try:
            status = self.ctx.session.index_status()
        except EngineError:  # a damaged set: `filinglens index rebuild` (the window's status line says so)
            return False
        behind = status.behind or bool(status.filings and not status.ready)
        why = (["stored filings are not all searchable yet"] if behind else []) + [
            f"the {what} of {counted(n, 'filing')} were read by an older FilingLens" if what != "concepts of the "
            "statement facts" else "the statement facts' concepts were mapped by an older FilingLens"
            for what, n in stale.items()]
        self.index_btn.setToolTip(_INDEX_TIP + ("\n\nNeeded now: " + "; ".join(why) + "." if why else ""))
        return behind or bool(stale)

    def _filter_changed(self, text: str) -> None:
        self.proxy.set_text(text)
        self._update_count()

    def _problems_toggled(self, on: bool) -> None:
        self.events_proxy.setFilterRegularExpression("^(" + "|".join(sorted(PROBLEMS)) + ")$" if on else "")

    def _selection_changed(self, *_: Any) -> None:
        self._update_count()
        chosen = self.selected_filings()
        if len(chosen) == 1:
            self.details.setHtml(filing_html(chosen[0]))
            if self.bottom.currentIndex() == 0 and self.events.rowCount() == 0:
                self.bottom.setCurrentIndex(1)
        self._refresh_tables()

    def show_tables(self) -> None:
        """Bring the Tables panel forward (for the selected filing)."""
        self.bottom.setCurrentWidget(self.tables)
        self._refresh_tables()

    def _refresh_tables(self) -> None:
        # the facts are read only while the panel is shown: one query (~30 ms for 2,000 facts) on the GUI thread
        if self.bottom.currentWidget() is not self.tables:
            return
        sizes, total = self.splitter.sizes(), sum(self.splitter.sizes())
        if not self._tables_sized and total:  # a statement needs more room than the ingest report
            self._tables_sized = True
            if sizes[1] < 0.45 * total:
                self.splitter.setSizes([int(total * 0.4), total - int(total * 0.4)])
        chosen = self.selected_filings()
        filing = chosen[0] if len(chosen) == 1 else None
        key = (id(self.ctx.library), filing.id if filing else None)
        if key != self._tables_key:  # not on every reload: an ingest reloads the table every second
            self._tables_key = key
            self.tables.show_filing(self.ctx.session, filing)

    def _fact_selected(self, stored: Any) -> None:
        if self.tables.filing is not None:
            self.open_fact.emit(self.tables.filing, stored)

    def _open_hit(self, hit: Any) -> None:
        """A line-item search's hit: its filing selected in the list (the list's filter cleared when it hides it),
        its table in the Tables panel with the row selected and the cell boxed on its page."""
        filing = self.ctx.library.filing(hit.stored.filing_id)

        def shown() -> list[int]:
            return [r for r in range(self.proxy.rowCount())
                    if self.model.filing(self.proxy.mapToSource(self.proxy.index(r, 0)).row()).id == filing.id]

        rows = shown()
        if not rows and self.filter.text():  # the list's filter hides it: the list shows every filing again
            self.filter.clear()
            rows = shown()
        self._tables_key = (id(self.ctx.library), filing.id)  # the panel shows it below: no second read
        if rows:
            self.table.selectRow(rows[0])
            self.table.scrollTo(self.proxy.index(rows[0], 0))
        self.tables.show_fact(self.ctx.session, filing, hit.stored)

    def _open_current(self, index: Any) -> None:
        f = self.model.filing(self.proxy.mapToSource(index).row())
        self.open_filing.emit(f)

    def _load_last_report(self) -> None:
        """Show the previous session's ingest report until this session adds files."""
        if self.job is not None or self.events.rowCount():
            return

        def show(result: tuple[str, list[dict]]) -> None:
            when, rows = result
            if not rows or self.job is not None or self.events.rowCount():
                return
            self.events.set_records(rows)
            fit_columns(self.events_table, 320)
            problems = sum(1 for r in rows if r["status"] in PROBLEMS)
            self.report_label.setText(f"Last ingest ({local_time(when)}): {len(rows)} file(s)"
                                      + (f", {problems} need attention (tick “Problems only”)." if problems else ".")
                                      + " Drop PDFs, HTML files or folders here to add more.")

        self.ctx.start(CallJob("read ingest report", self.ctx.home, last_report), done=show, failed=lambda _t: None)

    # -- adding -----------------------------------------------------------------------------------
    def _last_dir(self) -> str:
        return str(self.ctx.store.value("library/last_add_dir", str(Path.home())))

    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add filings", self._last_dir(),
                                                "Filings (*.pdf *.htm *.html);;All files (*)")
        if files:
            self.ctx.store.setValue("library/last_add_dir", str(Path(files[0]).parent))
            self.add_paths(files)

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder of filings", self._last_dir())
        if folder:
            self.ctx.store.setValue("library/last_add_dir", folder)
            self.add_paths([folder])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = dropped_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)

    def add_paths(self, paths: list[str]) -> bool:
        """Ingest files/folders in the background; False when another job is running."""
        if not paths:
            return False
        return self._start_ingest(paths, f"Adding {len(paths)} item(s): " + ", ".join(Path(p).name for p in paths[:4])
                                  + (" …" if len(paths) > 4 else ""))

    def update_index(self) -> bool:
        """Build and publish the indexes of the stored filings in the background (no files are read)."""
        return self._start_ingest([], "Updating the search index…")

    def _follow_settings(self) -> None:
        """Offer the Ray cluster when the settings name one."""
        address = self.ctx.settings().ingest.ray
        self.on_cluster.setText(f"on the Ray cluster ({'started here' if address == 'local' else address})")
        self.on_cluster.setVisible(bool(address))

    def _start_ingest(self, paths: list[str], text: str) -> bool:
        settings = self.ctx.settings()
        if settings.ingest.ray and not self.on_cluster.isChecked():
            settings = settings.with_overrides(ingest={"ray": ""})
        job = IngestJob(self.ctx.home, settings, paths)
        if not self.ctx.begin("ingest", self.cancel):
            return False
        self.job = job
        self._stage_started = {}
        self.events.set_records([])
        self.report_label.setText(text)
        self.bottom.setCurrentIndex(0)
        self._show_progress("scanning…" if paths else "updating the index…", "Stop after the file being stored (Esc)")
        self.ctx.start(job, done=self._ingest_done, failed=self._ingest_failed, item=self._ingest_event,
                       progress=self._ingest_progress)
        return True

    def _show_progress(self, text: str, cancel_tip: str) -> None:
        self.progress.setRange(0, 0)
        self.progress_label.setText(text)
        self.cancel_btn.setToolTip(cancel_tip)
        self.cancel_btn.setEnabled(True)
        self.progress_row.setVisible(True)

    def cancel(self) -> None:
        """Stop the running ingest after the file being stored, or the training after the current step."""
        if self.job is not None:
            self.job.cancel()
            self.progress_label.setText("cancelling: finishing the file being stored…")
        elif self.train_job is not None:
            self.train_job.cancel()
            self.progress_label.setText("cancelling: saving a checkpoint after the current step…")
        else:
            return
        self.cancel_btn.setEnabled(False)

    def _ingest_event(self, ev: Any) -> None:
        self.events.append(ev)
        if ev.status in ("added", "removed") and time.monotonic() - self._last_reload > 1.0:
            self.reload()  # filings appear as they are stored (WAL: reading while the worker writes)
            self._last_reload = time.monotonic()
        if self.events.rowCount() in (1, 10, 100):
            fit_columns(self.events_table, 320)
        if ev.status == "added":
            self.ctx.message.emit(f"added {ev.doc_name or Path(ev.path).name}", 3000)

    def _ingest_progress(self, stage: str, done: int, total: int) -> None:
        if self.job is not None and self.job.cancelled:
            return
        labels = {"ingest": "Parsing and storing files", "lexical": "Building the BM25 index",
                  "summary vectors": "Embedding filing summaries", "chunk vectors": "Embedding passages",
                  "loading embedder": "Loading the embedding model", "scanning": "Scanning",
                  "waiting": "Waiting for another ingest of this library to finish",
                  "reading again": "Reading again what an older FilingLens read of the stored filings"}
        self.progress_label.setText(labels.get(stage, stage) + "…")
        if total:
            started = self._stage_started.setdefault(stage, (time.monotonic(), done))
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat("%v / %m" + (rate_text(done - started[1], total - done,
                                                           time.monotonic() - started[0]) if stage == "ingest" else ""))
        else:
            self.progress.setRange(0, 0)

    def _ingest_finish(self) -> None:
        self.job = None
        self.progress_row.setVisible(False)
        self.ctx.end("ingest")
        self.ctx.library_changed.emit()

    def _ingest_done(self, summary: IngestSummary) -> None:
        if self.job is not None and not self.job.paths:  # Update index
            text = ("Search index updated: every stored filing is searchable." if summary.indexed else
                    f"Search index not updated: {summary.index_error}" if summary.index_error else
                    "The search index was already up to date.")
            if summary.refreshed:  # filings an older FilingLens read (the index build reads them again first)
                text += f" {summary.refreshed[:1].upper()}{summary.refreshed[1:]}."
            if summary.refresh_problems:
                text += f" Not read again: {'; '.join(summary.refresh_problems)}."
            self.report_label.setText(text)
            self._ingest_finish()
            self.ctx.message.emit(text, 10000)
            self.ingest_finished.emit(summary)
            return
        problems = sum(1 for e in self.events.records if e.status in PROBLEMS)
        text = f"Ingest {'cancelled' if summary.cancelled else 'finished'}: {summary.text()}."
        if summary.cancelled:
            text += (" Filings stored before the cancel are kept" + (" and searchable." if summary.indexed else
                                                                     "; `filinglens index build` makes them searchable."))
        if problems:
            text += f" {problems} file(s) need attention (tick “Problems only”)."
        self.report_label.setText(text)
        self._ingest_finish()
        self.ctx.message.emit(text, 10000)
        self.ingest_finished.emit(summary)

    def _ingest_failed(self, text: str) -> None:
        self.report_label.setText(f"Ingest stopped: {text}")
        self._ingest_finish()
        self.ctx.error.emit("Adding filings failed", text)
        self.ingest_finished.emit(IngestSummary(index_error=text))

    # -- training the reranker --------------------------------------------------------------------
    def last_train_options(self) -> TrainOptions:
        """The options of the previous training run (the defaults the first time, or when unreadable)."""
        raw = self.ctx.store.value(TRAIN_OPTIONS_KEY, "")
        try:
            data = json.loads(str(raw)) if raw else {}
            exclude = data.pop("exclude_questions", "")
            return TrainOptions(**data, exclude_questions=Path(exclude) if exclude else None)
        except (json.JSONDecodeError, TypeError, AttributeError):
            return TrainOptions()

    def choose_training(self) -> None:
        dialog = TrainDialog(self.ctx.session.reranker_run_dir, self.last_train_options(), self)
        if dialog.exec() == TrainDialog.DialogCode.Accepted:
            self.train_reranker(dialog.values())

    def train_reranker(self, options: TrainOptions) -> bool:
        """Train (or resume training) the reranker in the background; False when another job is running."""
        job = TrainRerankerJob(self.ctx.settings(), options)
        if not self.ctx.begin(job.name, self.cancel):
            return False
        self.train_job = job
        stored = {**asdict(options), "exclude_questions": str(options.exclude_questions or "")}
        self.ctx.store.setValue(TRAIN_OPTIONS_KEY, json.dumps(stored))
        self._show_progress(TRAIN_STAGES["mining"],
                            "Stop after the current training step and save a checkpoint; training again with the "
                            "same settings resumes from it (Esc)")
        self.ctx.start(job, done=self._train_done, failed=self._train_failed, item=self._train_step,
                       progress=self._train_stage)
        return True

    def _train_stage(self, stage: str, done: int, total: int) -> None:
        if self.train_job is None or self.train_job.cancelled:
            return
        self.progress_label.setText(TRAIN_STAGES.get(stage, stage))
        if total:  # examples mined so far
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat("%v / %m examples")
        else:
            self.progress.setRange(0, 0)

    def _train_step(self, step: dict) -> None:
        if self.train_job is None or self.train_job.cancelled:
            return
        self.progress_label.setText(f"Training the reranker: step {step['step']} / {step['total']}, "
                                    f"ETA {duration_text(step['eta'])}")
        self.progress.setRange(0, step["total"])
        self.progress.setValue(step["step"])
        self.progress.setFormat("%v / %m")

    def _train_finish(self) -> None:
        self.train_job = None
        self.progress_row.setVisible(False)
        self.ctx.end(TrainRerankerJob.name)

    def _train_done(self, outcome: TrainOutcome) -> None:
        self._train_finish()
        text = train_summary(outcome)
        self.report_label.setText(text)
        self.bottom.setCurrentIndex(0)
        self.ctx.message.emit(text, 10000)
        self.train_finished.emit(outcome.report)

    def _train_failed(self, text: str) -> None:
        self._train_finish()
        self.report_label.setText(f"Reranker training stopped: {text}")
        self.ctx.error.emit("Training the reranker failed", text)
        self.train_finished.emit(None)

    # -- removing ---------------------------------------------------------------------------------
    def remove_selected(self, confirm: bool = True) -> bool:
        chosen = self.selected_filings()
        if not chosen:
            self.ctx.message.emit("select the filings to remove first", 4000)
            return False
        if confirm:
            names = "\n".join(f.identity.doc_name for f in chosen[:12]) + ("\n…" if len(chosen) > 12 else "")
            answer = QMessageBox.question(self, "Remove filings",
                                          f"Remove {len(chosen)} filing(s) from the library?\n\n{names}\n\n"
                                          "The files on disk are not touched; past runs keep their traces.")
            if answer != QMessageBox.StandardButton.Yes:
                return False
        job = CallJob("remove", self.ctx.settings(), remove_and_sync, [f.id for f in chosen])
        if not self.ctx.begin("removal", job.cancel):
            return False
        self.ctx.message.emit(f"removing {len(chosen)} filing(s) and updating the indexes…", 0)

        def done(n: int) -> None:
            self.ctx.end("removal")
            self.ctx.library_changed.emit()
            self.ctx.message.emit(f"removed {n} filing(s)", 6000)
            self.remove_finished.emit(n)

        def failed(text: str) -> None:
            self.ctx.end("removal")
            self.ctx.library_changed.emit()
            self.ctx.error.emit("Removing filings failed", text)
            self.remove_finished.emit(-1)

        self.ctx.start(job, done=done, failed=failed)
        return True

    def _busy_changed(self, name: str) -> None:
        for w in (self.add_files_btn, self.add_folder_btn):
            w.setEnabled(not name)
        self._update_count()


def duration_text(seconds: float) -> str:
    """``42`` → ``"42 s"``, ``192`` → ``"3.2 min"``, ``7300`` → ``"2.0 h"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def train_summary(outcome: TrainOutcome) -> str:
    """What a training call did, for the report line: held-out figures, or where to resume."""
    r = outcome.report
    if not r.completed:
        return (f"Reranker training cancelled at step {r.steps_done} of {r.total_steps}: start again with the "
                f"same settings to resume from the checkpoint in {r.out_dir}.")
    b, a = r.before, r.after
    resumed = f", resumed at step {r.resumed_from_step}" if r.resumed_from_step else ""
    text = (f"Reranker trained on {r.train_examples} examples ({r.total_steps} steps on {r.device}{resumed}): on "
            f"{r.eval_examples} held-out questions, MRR {b.mrr:.3f} → {a.mrr:.3f}, "
            f"hit@1 {b.hit_at_1:.0%} → {a.hit_at_1:.0%}. ")
    if outcome.registry is not None:
        return text + (f"Registered in {outcome.registry}: questions use it when Settings › Retrieval › "
                       "Reranker is “trained”.")
    return text + (f"Not registered; the model is in {r.model_dir} (Settings › Retrieval › Reranker accepts "
                   "that folder).")


def dropped_paths(mime: Any) -> list[str]:
    """Local files and folders in a drop that FilingLens can read."""
    out = []
    for url in mime.urls() if mime.hasUrls() else []:
        if not url.isLocalFile():
            continue
        p = Path(url.toLocalFile())
        if p.is_dir() or p.suffix.lower() in SUPPORTED:
            out.append(str(p))
    return out


def filing_html(f: Filing) -> str:
    i = f.identity

    def shared(name: str) -> str:
        """A ticker, CIK or fiscal-year end and where it comes from ("MMM: the registrant's, stated by
        3M_2019_10K"), or "— not printed on the cover …" when nothing states one."""
        tip = identity_tip(f, name)
        return tip if getattr(i, name) else f"{NOT_STATED} {tip}"

    rows = [("Document", i.doc_name), ("Registrant", i.registrant), ("Issuer key", i.issuer_key),
            ("Ticker", shared("ticker")), ("CIK", shared("cik")), ("Fiscal-year end", shared("fiscal_year_end")),
            ("Form", i.form), ("Period", i.period), ("Period end", i.period_end), ("Fiscal year", i.fiscal_year),
            ("Pages", f.n_pages), ("Chunks", f.n_chunks), ("File", f.path), ("SHA-256", f.sha256)]
    if f.image_only_pages:
        rows.append(("Image-only pages", ", ".join(str(reader_page(p)) for p in f.image_only_pages)
                     + " (no text layer: not searchable)"))
    cells = "".join(f"<tr><td style='color:#555;padding-right:12px'>{html.escape(k)}</td><td>{html.escape(str(v))}</td></tr>"
                    for k, v in rows if v not in (None, ""))
    summary = html.escape(f.summary or "").replace("\n", "<br>")
    return f"<table>{cells}</table><p style='color:#555'>Cover-page summary (what document retrieval embeds):</p><p>{summary}</p>"
