"""The main window: Library, Ask, Inspect and History tabs, the page viewer dock, menus, shortcuts,
export, and the state remembered between sessions (QSettings, organisation "FilingLens")."""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QDockWidget, QFileDialog, QInputDialog, QLabel, QMainWindow, QMessageBox, QTabWidget,
    QTextBrowser, QVBoxLayout, QWidget,
)

from analyst_app.context import AppContext
from analyst_app.views.ask import AskView
from analyst_app.views.evaluate import EvaluateView
from analyst_app.views.history import HistoryView
from analyst_app.views.inspect import InspectView
from analyst_app.views.library import LibraryView, dropped_paths
from analyst_app.views.page_viewer import PageViewer
from analyst_app.workers import CallJob
from engine.errors import EngineError
from engine.session import Session
from engine.wording import counted

log = logging.getLogger(__name__)

EXPORT_FILTERS = {"json": "JSON evidence set and trace (*.json)", "csv": "CSV, one row per cited passage (*.csv)",
                  "md": "Markdown report, page snapshots in a folder beside it (*.md)",
                  "html": "HTML report, page snapshots inside (*.html)"}


class DoctorDialog(QDialog):
    """The doctor's report: one line per check, problems first in red with their fix, then the rest."""

    def __init__(self, report: Any, parent: QWidget) -> None:
        super().__init__(parent)
        self.report = report
        self.setWindowTitle("Check installation")
        self.resize(900, 520)
        layout = QVBoxLayout(self)
        n = len(report.problems)
        self.summary = QLabel("Everything checked is in order." if report.ok else
                              f"<b>{n} problem{'s' if n != 1 else ''} to fix</b> (the fix is under each one).")
        layout.addWidget(self.summary)
        self.text = QTextBrowser()
        rows = []
        for f in sorted(report.findings, key=lambda f: f.status != "problem"):
            colour = {"problem": "#b00020", "note": "#555", "ok": "#1b6e20"}[f.status]
            fix = f"<br><span style='margin-left:2em'>fix: <code>{html.escape(f.fix)}</code></span>" if f.fix else ""
            rows.append(f"<p><b style='color:{colour}'>{f.status}</b> <i>{f.area}</i> — {html.escape(f.text)}{fix}</p>")
        rows += [f"<p>repaired: {html.escape(r)}</p>" for r in report.repaired]
        self.text.setHtml("".join(rows))
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


def app_settings() -> QSettings:
    return QSettings("FilingLens", "FilingLens")


class MainWindow(QMainWindow):
    export_finished = Signal(object)  # list of written paths, or a readable error string
    doctor_finished = Signal(object)  # the DoctorReport shown, or a readable error string
    model_setup_finished = Signal(str)  # the first run's assembled chat model, or "" when it was not prepared

    def __init__(self, home: Path, *, store: QSettings | None = None, preset: str = "default") -> None:
        super().__init__()
        self.store = store if store is not None else app_settings()
        self.ctx = AppContext(Path(home), self.store, preset)
        self.last_error = ""
        self._closed = False
        self.unfinished_work = False
        self.model_setup: Any = None  # the first run's InstallModelJob and its dialog (analyst_app.first_run)
        self.model_setup_dialog: Any = None
        self.setAcceptDrops(True)

        self.viewer = PageViewer()
        self.viewer.set_library(self.ctx.library)
        self.viewer_dock = QDockWidget("Page", self)
        self.viewer_dock.setObjectName("page-viewer-dock")
        self.viewer_dock.setWidget(self.viewer)
        self.viewer_dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                                     | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                                     | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.viewer_dock)

        self.library_view = LibraryView(self.ctx)
        self.ask_view = AskView(self.ctx, self.viewer)
        self._prepared = False  # the question path is built once the window is first shown
        self.inspect_view = InspectView()
        self.history_view = HistoryView(self.ctx)
        self.evaluate_view = EvaluateView(self.ctx)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for w, name, tip in ((self.library_view, "Library", "Loaded filings (Ctrl+1)"),
                             (self.ask_view, "Ask", "Ask a question (Ctrl+2)"),
                             (self.inspect_view, "Inspect", "Every stage of a run (Ctrl+3)"),
                             (self.history_view, "History", "Past runs (Ctrl+4)"),
                             (self.evaluate_view, "Evaluate", "Question sets and pipelines side by side (Ctrl+5)")):
            self.tabs.addTab(w, name)
            self.tabs.setTabToolTip(self.tabs.count() - 1, tip)
        self.setCentralWidget(self.tabs)

        self.library_label = QLabel()
        self.busy_label = QLabel()
        self.busy_label.setStyleSheet("color:#285aaa")
        self.statusBar().addPermanentWidget(self.busy_label)
        self.statusBar().addPermanentWidget(self.library_label)

        self._wire()
        self._menus()
        self._restore()
        self._update_title()

    # -- wiring -----------------------------------------------------------------------------------
    def _wire(self) -> None:
        ctx = self.ctx
        ctx.message.connect(lambda text, ms: self.statusBar().showMessage(text, ms))
        ctx.error.connect(self.show_error)
        ctx.busy_changed.connect(self._busy_changed)
        ctx.library_changed.connect(self._library_changed)
        self.library_view.open_filing.connect(self.show_filing)
        self.library_view.open_fact.connect(self.show_fact)
        self.ask_view.run_started.connect(lambda: self.inspect_view.start_live(self.ask_view.question_text))
        self.ask_view.stage_event.connect(self.inspect_view.add_live_event)
        self.ask_view.run_finished.connect(lambda rid: self.inspect_view.load_run(ctx.library, rid))
        self.inspect_view.open_evidence.connect(self.open_evidence)
        self.inspect_view.open_fact_id.connect(self.show_fact_id)
        self.ask_view.open_fact_id.connect(self.show_fact_id)
        self.history_view.open_run.connect(self.open_run)
        self.evaluate_view.open_run.connect(self.open_run)
        self.history_view.export_requested.connect(self.export_dialog)
        self.history_view.delete_requested.connect(self.delete_runs)

    def _action(self, menu: Any, text: str, slot: Any, shortcut: Any = None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            shortcuts = shortcut if isinstance(shortcut, list) else [shortcut]
            act.setShortcuts([QKeySequence(s) for s in shortcuts])
        act.setStatusTip(tip)
        act.triggered.connect(lambda _checked=False: slot())
        menu.addAction(act)
        self.addAction(act)  # shortcuts work whichever tab has focus
        return act

    def _menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self.add_files_act = self._action(f, "Add files…", self._add_files, "Ctrl+O", "Add PDF or HTML filings")
        self.add_folder_act = self._action(f, "Add folder…", self._add_folder, "Ctrl+Shift+O",
                                           "Add a folder of filings (LOFin layout works)")
        self.open_library_act = self._action(f, "Open library…", self.choose_library, None,
                                             "Switch to another library folder")
        f.addSeparator()
        self.export_act = self._action(f, "Export run(s)…", self.export_dialog, "Ctrl+E",
                                       "Export the selected or current run to JSON, CSV or Markdown")
        f.addSeparator()
        self._action(f, "Quit", self.close, QKeySequence.StandardKey.Quit)
        r = mb.addMenu("&Run")
        self.ask_act = self._action(r, "Ask", self._ask, ["Ctrl+Return", "Ctrl+Enter"], "Run the question")
        self.cancel_act = self._action(r, "Cancel", self.cancel, "Esc", "Stop the running ingest or question")
        self.remove_act = self._action(r, "Remove selected filings", self._remove, QKeySequence.StandardKey.Delete)
        self.settings_act = self._action(r, "Settings…", self.ask_view.open_settings, "Ctrl+,",
                                         "Edit every setting of the current preset")
        v = mb.addMenu("&View")
        for i, name in enumerate(("Library", "Ask", "Inspect", "History", "Evaluate"), start=1):
            self._action(v, f"{name} tab", lambda i=i: self.tabs.setCurrentIndex(i - 1), f"Ctrl+{i}")
        v.addSeparator()
        v.addAction(self.viewer_dock.toggleViewAction())
        h = mb.addMenu("&Help")
        self.doctor_act = self._action(h, "Check installation", self.check_installation, None,
                                       "Check the models, llama.cpp, the GPU, this library and its index "
                                       "(`filinglens doctor`)")
        self._action(h, "About FilingLens", self._about)

    # -- actions ----------------------------------------------------------------------------------
    def _add_files(self) -> None:
        self.tabs.setCurrentWidget(self.library_view)
        self.library_view.choose_files()

    def _add_folder(self) -> None:
        self.tabs.setCurrentWidget(self.library_view)
        self.library_view.choose_folder()

    def _ask(self) -> None:
        self.tabs.setCurrentWidget(self.ask_view)
        self.ask_view.ask()

    def _remove(self) -> None:
        if self.tabs.currentWidget() is self.library_view and self.library_view.table.hasFocus():
            self.library_view.remove_selected()

    def cancel(self) -> None:
        if not self.ctx.cancel_busy():
            self.statusBar().showMessage("nothing to cancel", 2000)

    def show_filing(self, filing: Any) -> None:
        self.viewer_dock.show()
        self.viewer.show_filing(filing)

    def show_fact(self, filing: Any, stored: Any) -> None:
        self.viewer_dock.show()
        self.viewer.show_fact(filing, stored)

    def show_fact_id(self, fact_id: int) -> None:
        """An answer's input, opened from the answer card or Inspect › Answer: its cell boxed on its page."""
        library = self.ctx.library
        found = library.facts(ids=[fact_id]) if library is not None else []
        if not found:
            self.statusBar().showMessage(f"fact {fact_id} is no longer in the library (its filing was removed)", 5000)
            return
        self.show_fact(library.filing(found[0].filing_id), found[0])

    def open_evidence(self, doc_name: str, chunk_id: Any, page_index: Any) -> None:
        self.viewer_dock.show()
        self.ask_view.open_evidence(doc_name, chunk_id, page_index)

    def open_run(self, run_id: str) -> None:
        """Reopen a past run: its trace in Inspect and its answer on the Ask tab."""
        try:
            self.inspect_view.load_run(self.ctx.library, run_id)
            if not self.ask_view.busy():
                self.ask_view.show_stored_run(run_id)
        except Exception as exc:  # noqa: BLE001 - a broken record is a message, not a crash
            self.show_error("Cannot open the run", str(exc))
            return
        self.tabs.setCurrentWidget(self.inspect_view)

    def choose_library(self) -> None:
        if self.ctx.busy:
            self.statusBar().showMessage(f"wait for the {self.ctx.busy} to finish first", 5000)
            return
        folder = QFileDialog.getExistingDirectory(self, "Open a library folder", str(self.ctx.home))
        if folder:
            self.switch_library(Path(folder))

    def switch_library(self, home: Path) -> None:
        self.library_view.events.set_records([])
        try:
            self.ctx.switch_library(home)
        except Exception as exc:  # noqa: BLE001
            self.show_error("Cannot open the library", str(exc))

    def _library_changed(self) -> None:
        self.viewer.set_library(self.ctx.library)
        self.evaluate_view.refresh_sets()
        self._update_title()

    def _update_title(self) -> None:
        n = self.ctx.library.count("filings")
        self.setWindowTitle(str(self.ctx.home))  # Qt adds " — FilingLens" (the display name)
        text = f"Library: {self.ctx.home}  ·  {counted(n, 'filing')}"
        try:
            status = self.ctx.session.index_status()
        except EngineError as exc:
            text, tip = text + "  ·  index damaged", str(exc)
        else:
            if not status.ready and n:
                text += "  ·  not indexed yet"
            elif status.pending:
                text += f"  ·  {status.pending} not searchable yet"
            tip = status.message()
            if tip and status.builder is None:
                tip += "; in the app: Library › Update index"
        self.library_label.setText(text)
        self.library_label.setToolTip(tip)

    def _busy_changed(self, name: str) -> None:
        self.busy_label.setText(f"{name} running — Esc cancels" if name else "")
        for act in (self.add_files_act, self.add_folder_act, self.open_library_act, self.ask_act):
            act.setEnabled(not name)

    def show_error(self, title: str, text: str) -> None:
        """A readable message, never a traceback; non-blocking so work and tests carry on."""
        self.last_error = f"{title}: {text}"
        self.statusBar().showMessage(self.last_error, 15000)
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _about(self) -> None:
        QMessageBox.about(self, "About FilingLens",
                          "<b>FilingLens</b><br>Offline question answering over SEC filings with page-level evidence "
                          "and a full audit trail. Everything runs on this machine.")

    def check_installation(self) -> None:
        """Help › Check installation: :meth:`engine.session.Session.doctor` in the pool, its report in a dialog."""
        self.doctor_act.setEnabled(False)
        self.statusBar().showMessage("checking the installation and the library…")

        def done(report: Any) -> None:
            self.doctor_act.setEnabled(True)
            self.doctor_dialog = DoctorDialog(report, self)
            self.doctor_dialog.open()
            self.doctor_finished.emit(report)

        def failed(text: str) -> None:
            self.doctor_act.setEnabled(True)
            self.show_error("Check installation", text)
            self.doctor_finished.emit(text)

        self.ctx.start(CallJob("doctor", self.ctx.settings(), Session.doctor),
                       done=done, failed=failed)

    # -- export -----------------------------------------------------------------------------------
    def current_run_ids(self) -> list[str]:
        """The runs Ctrl+E exports: the History selection on that tab, else the run shown in Inspect/Ask."""
        if self.tabs.currentWidget() is self.history_view and self.history_view.selected_run_ids():
            return self.history_view.selected_run_ids()
        rid = self.inspect_view.run_id or self.ask_view.run_id
        return [rid] if rid else self.history_view.selected_run_ids()

    def export_dialog(self, run_ids: list[str] | None = None) -> None:
        ids = run_ids or self.current_run_ids()
        if not ids:
            self.statusBar().showMessage("no run to export: select runs on the History tab", 5000)
            return
        last = str(self.store.value("export/dir", str(Path.home())))
        if len(ids) == 1:
            filters = ";;".join(EXPORT_FILTERS.values())
            path, chosen = QFileDialog.getSaveFileName(self, "Export run", str(Path(last) / f"filinglens-run-{ids[0]}.json"),
                                                       filters)
            if not path:
                return
            fmt = Path(path).suffix.lstrip(".").lower()
            if fmt not in EXPORT_FILTERS:
                fmt = next(k for k, v in EXPORT_FILTERS.items() if v == chosen)
                path += f".{fmt}"
            self.store.setValue("export/dir", str(Path(path).parent))
            self.export(ids, fmt, Path(path))
            return
        labels = [f"{k.upper()} — {v}" for k, v in EXPORT_FILTERS.items()]
        choice, ok = QInputDialog.getItem(self, "Export runs", f"Format for the {counted(len(ids), 'run')} (one file per run):",
                                          labels, 0, False)
        if not ok:
            return
        fmt = list(EXPORT_FILTERS)[labels.index(choice)]
        folder = QFileDialog.getExistingDirectory(self, "Export runs into folder", last)
        if folder:
            self.store.setValue("export/dir", folder)
            self.export(ids, fmt, Path(folder))

    def export(self, run_ids: list[str], fmt: str, target: Path) -> None:
        """Export in the background: one file, or one file per run inside the folder ``target``."""
        def done(paths: list[Path]) -> None:
            where = paths[0] if len(paths) == 1 else paths[0].parent
            self.statusBar().showMessage(f"exported {len(paths)} run(s) to {where}", 10000)
            self.export_finished.emit(paths)

        def failed(text: str) -> None:
            self.show_error("Export failed", text)
            self.export_finished.emit(text)

        self.ctx.start(CallJob("export", self.ctx.home, Session.export, list(run_ids), fmt, Path(target)),
                       done=done, failed=failed)

    # -- deleting runs ----------------------------------------------------------------------------
    def delete_runs(self, run_ids: list[str], *, confirm: bool = True) -> int:
        """Delete runs after a confirmation; a run being answered right now is kept. Returns how many went."""
        store = self.ctx.session.runs
        ids = list(run_ids)
        if self.ask_view.busy():
            ids = [rid for rid in ids if store.get(rid)["status"] != "running"]
            if len(ids) < len(run_ids):
                self.statusBar().showMessage("a run still being answered is kept; cancel it first", 6000)
        if not ids:
            return 0
        if confirm:
            answer = QMessageBox.question(
                self, "Delete runs", f"Delete {len(ids)} run(s) and their traces? This cannot be undone.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
            if answer != QMessageBox.StandardButton.Yes:
                return 0
        deleted = store.delete(ids)
        if self.inspect_view.run_id in ids:
            self.inspect_view.clear()
        self.ctx.runs_changed.emit()
        self.statusBar().showMessage(f"deleted {deleted} run(s)", 6000)
        return deleted

    # -- drag and drop ----------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = dropped_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.tabs.setCurrentWidget(self.library_view)
            self.library_view.add_paths(paths)

    # -- remembered state -------------------------------------------------------------------------
    _SPLITTERS = ("library_view.splitter", "ask_view.splitter", "inspect_view.raw_split")

    def _splitter(self, dotted: str) -> Any:
        obj: Any = self
        for part in dotted.split("."):
            obj = getattr(obj, part)
        return obj

    def _restore(self) -> None:
        s = self.store
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(*default_size(self))
            self.resizeDocks([self.viewer_dock], [int(self.width() * 0.42)], Qt.Orientation.Horizontal)
        state = s.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state)
        for name in self._SPLITTERS:
            value = s.value(f"splitters/{name}")
            if isinstance(value, QByteArray) and not value.isEmpty():
                self._splitter(name).restoreState(value)
        try:
            self.viewer.zoom = float(s.value("viewer/zoom", self.viewer.zoom))
        except (TypeError, ValueError):
            pass
        self.viewer.fit_width = str(s.value("viewer/fit_width", "true")).lower() == "true"
        self.viewer.fit_btn.setChecked(self.viewer.fit_width)
        self.tabs.setCurrentIndex(int(s.value("window/tab", 0) or 0))

    def save_state(self) -> None:
        s = self.store
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("window/tab", self.tabs.currentIndex())
        s.setValue("library/home", str(self.ctx.home))
        s.setValue("viewer/zoom", self.viewer.zoom)
        s.setValue("viewer/fit_width", self.viewer.fit_width)
        for name in self._SPLITTERS:
            s.setValue(f"splitters/{name}", self._splitter(name).saveState())
        s.sync()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self._prepared:  # once the window is up and idle: the first question then starts at once
            self._prepared = True
            QTimer.singleShot(0, self.ask_view.prepare)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self._closed:
            super().closeEvent(event)
            return
        self._closed = True
        self.save_state()
        if self.ctx.busy:
            self.statusBar().showMessage(f"cancelling the {self.ctx.busy} before closing…")
        self.ctx.cancel_busy()
        # The cancel stops a CPU model call within a second; should the run still outlive the wait (a GPU
        # backend may not poll llama.cpp's abort callback), main() ends the process without joining the
        # thread (the run stays recorded as "running").
        self.unfinished_work = not self.ask_view.shutdown()
        self.ctx.shutdown()
        self.viewer.close()
        super().closeEvent(event)


def default_size(widget: QWidget) -> tuple[int, int]:
    screen = widget.screen()
    if screen is None:
        return 1440, 900
    geo = screen.availableGeometry()
    return min(1500, int(geo.width() * 0.9)), min(960, int(geo.height() * 0.9))
