"""The Evaluate tab: run pipelines side by side on a question set — one generated from the library's own filings
(``querygen``), a FinanceBench / Docugami file, or the user's own JSONL — in the background with progress, cancel
and resume, and read the report: the metrics table, the eval's plots, question by question (a run opens in
Inspect), and the comparison with an earlier evaluation (what got fixed, what broke)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from analyst_app.context import AppContext
from analyst_app.models import Column, RecordTableModel
from analyst_app.views.library import fit_columns, make_table, wrapped_label
from analyst_app.workers import EvalJob, EvalRequest, QueryGenJob, QueryGenRequest
from engine.errors import EngineError
from engine.session import Session
from engine.wording import counted

DEFAULT_PIPELINES = ("bm25", "hybrid", "hirec-retrieval")
METRICS = ("n", "doc_recall@5", "page_recall@5", "page_recall@10", "ndcg@10", "map@10", "mrr@10", "accuracy_numeric",
           "accuracy_numeric_tolerant", "wrong_numbers", "numbers_given", "accuracy_model_judged", "accuracy_all",
           "llm_calls", "retrieval_p50", "retrieval_p95", "total_p50", "total_p95")
QUESTION_COLUMNS = [
    Column("Question id", "qid"),
    Column("Pipeline", "pipeline"),
    Column("Type", "qtype"),
    Column("Page recall@5", "page_recall@5", numeric=True),
    Column("nDCG@10", "ndcg@10", numeric=True),
    Column("Status", "status"),
    Column("Correct", lambda r: "" if r.get("correct") is None else ("yes" if r["correct"] else "no")),
    Column("Answer", "answer"),
    Column("Question", "question"),
    Column("Run", "run_id", tip="Double-click a row with a run to open it in Inspect"),
]


def question_sets_dir(home: Path) -> Path:
    return home / "question-sets"


def results_dir(home: Path, questions: Path) -> Path:
    """One results folder per question file, so evaluating it again (more pipelines, after a cancel) resumes."""
    stem = re.sub(r"[^\w.-]+", "_", questions.stem)
    return home / "evals" / stem


class GenerateDialog(QDialog):
    """The options of a question-generation run."""

    def __init__(self, parent: QWidget | None, out: Path) -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate questions from the library's filings")
        self.filings = QLineEdit()
        self.filings.setPlaceholderText("every filing; or doc names, globs (3M_*), tickers, comma-separated")
        self.single, self.multi, self.seed = QSpinBox(), QSpinBox(), QSpinBox()
        for box, lo, hi, value in ((self.single, 1, 500, 20), (self.multi, 0, 500, 10), (self.seed, 0, 10_000, 0)):
            box.setRange(lo, hi)
            box.setValue(value)
        self.out = QLineEdit(str(out))
        form = QFormLayout(self)
        form.addRow("Filings", self.filings)
        form.addRow("Single-document questions", self.single)
        form.addRow("Multi-document questions", self.multi)
        form.addRow("Seed", self.seed)
        form.addRow("Save as", self.out)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def request(self) -> QueryGenRequest:
        return QueryGenRequest(self.filings.text().strip(), self.single.value(), self.multi.value(), self.seed.value(),
                               Path(self.out.text()).expanduser())


class EvaluateView(QWidget):
    open_run = Signal(str)  # a question's run, to open in Inspect
    eval_finished = Signal(object)  # the EvalOutcome (tests wait on it)
    eval_failed = Signal(str)
    generate_finished = Signal(object)  # the querygen Summary

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.job: Any = None
        self.chat_loader: Any = None  # tests script the model
        self.outcome: Any = None

        self.sets = QComboBox()
        self.sets.setMinimumWidth(360)
        self.sets.currentIndexChanged.connect(lambda _i: self._set_chosen())
        open_btn = QPushButton("Open file…")
        open_btn.clicked.connect(self._open_file)
        self.generate_btn = QPushButton("Generate from the library…")
        self.generate_btn.clicked.connect(self.generate_dialog)
        self.set_info = wrapped_label()
        self.pipelines = QListWidget()  # each pipeline with the sentence that says what it measures
        self.pipelines.setWordWrap(True)
        for name in Session.eval_pipelines():
            about = Session.eval_pipeline_description(name)
            item = QListWidgetItem(f"{name} — {about}" if about else name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setToolTip(about)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in DEFAULT_PIPELINES else Qt.CheckState.Unchecked)
            self.pipelines.addItem(item)
        self.pipelines.setMaximumHeight(190)
        self.limit = QSpinBox()
        self.limit.setRange(0, 100_000)
        self.limit.setSpecialValueText("all")
        self.run_btn = QPushButton("Evaluate")
        self.run_btn.clicked.connect(self.start)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.status = wrapped_label()

        top = QHBoxLayout()
        top.addWidget(QLabel("Questions"))
        top.addWidget(self.sets, 1)
        top.addWidget(open_btn)
        top.addWidget(self.generate_btn)
        mid = QHBoxLayout()
        mid.addWidget(QLabel("Pipelines"))
        mid.addWidget(self.pipelines, 1)
        side = QVBoxLayout()
        side.addWidget(QLabel("Questions at most"))
        side.addWidget(self.limit)
        side.addWidget(self.run_btn)
        side.addWidget(self.cancel_btn)
        side.addStretch(1)
        mid.addLayout(side)

        self.metrics = RecordTableModel([], parent=self)
        self.metrics_table = make_table(self.metrics, sortable=False)
        self.plots = QWidget()
        self.plots_layout = QVBoxLayout(self.plots)
        plots_scroll = QScrollArea()
        plots_scroll.setWidgetResizable(True)
        plots_scroll.setWidget(self.plots)
        self.questions = RecordTableModel(QUESTION_COLUMNS, parent=self)
        from PySide6.QtCore import QSortFilterProxyModel

        self.proxy = QSortFilterProxyModel(self)
        self.question_table = make_table(self.questions, proxy=self.proxy)
        self.question_table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.question_table.doubleClicked.connect(self._open_question)
        self.compare_btn = QPushButton("Compare with an earlier evaluation…")
        self.compare_btn.clicked.connect(self.compare_dialog)
        self.compare_text = QPlainTextEdit()
        self.compare_text.setReadOnly(True)
        compare = QWidget()
        cl = QVBoxLayout(compare)
        cl.addWidget(self.compare_btn, 0, Qt.AlignmentFlag.AlignLeft)
        cl.addWidget(self.compare_text, 1)
        self.report = QTabWidget()
        for w, name in ((self.metrics_table, "Metrics"), (plots_scroll, "Plots"), (self.question_table, "Questions"),
                        (compare, "Compare")):
            self.report.addTab(w, name)
        self.report_title = wrapped_label()

        head = QWidget()
        hl = QVBoxLayout(head)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addLayout(top)
        hl.addWidget(self.set_info)
        hl.addLayout(mid)
        hl.addWidget(self.progress)
        hl.addWidget(self.status)
        body = QWidget()
        bl = QVBoxLayout(body)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.report_title)
        bl.addWidget(self.report, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(head)
        split.addWidget(body)
        split.setSizes([260, 600])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(split)
        self.refresh_sets()

    # -- question sets ---------------------------------------------------------------------------------
    def link_runs(self, folder: Path | None = None) -> int:
        """File the runs of the evaluation in results ``folder`` (default: every results folder of this library's
        ``evals``) under their evaluation, so History lists them there and not with the analyst's questions (runs of
        an evaluation made before runs named it); History reloads when a run moved."""
        try:
            n = (self.ctx.session.link_evaluations(self.ctx.home / "evals") if folder is None else
                 self.ctx.session.link_evaluation(folder))
        except EngineError as exc:
            self.status.setText(f"cannot file the runs of an evaluation under it: {exc}")
            return 0
        if n:
            self.ctx.runs_changed.emit()
        return n

    def refresh_sets(self, select: Path | None = None) -> None:
        """The question sets saved in the library's folder, plus files opened before; ``select`` chosen. The runs of
        the library's evaluations are filed under them first (:meth:`link_runs`)."""
        self.link_runs()
        known = [Path(self.sets.itemData(i)) for i in range(self.sets.count())]
        folder = question_sets_dir(self.ctx.home)
        found = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
        paths = list(dict.fromkeys([*found, *known, *([select] if select else [])]))
        self.sets.blockSignals(True)
        self.sets.clear()
        for p in paths:
            if not p.name.endswith(".progress.jsonl"):
                self.sets.addItem(p.name, str(p))
        self.sets.blockSignals(False)
        if select is not None:
            self.sets.setCurrentIndex(self.sets.findData(str(select)))
        self._set_chosen()

    def chosen_set(self) -> Path | None:
        data = self.sets.currentData()
        return Path(data) if data else None

    def _set_chosen(self) -> None:
        path = self.chosen_set()
        if path is None:
            self.set_info.setText("No question set yet: generate one from the library's filings, or open a file "
                                  "(FinanceBench, Docugami or your own JSONL).")
            return
        try:
            n = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        except OSError as exc:
            self.set_info.setText(f"cannot read {path}: {exc}")
            return
        self.set_info.setText(f"{path} · {counted(n, 'question')} · results in {results_dir(self.ctx.home, path)}")
        self.show_results(results_dir(self.ctx.home, path))

    def _open_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open a question file", str(self.ctx.home),
                                              "Question files (*.jsonl);;All files (*)")
        if name:
            self.refresh_sets(Path(name))

    def checked_pipelines(self) -> list[str]:
        return [self.pipeline_name(i) for i in range(self.pipelines.count())
                if self.pipelines.item(i).checkState() == Qt.CheckState.Checked]

    def pipeline_name(self, row: int) -> str:
        return str(self.pipelines.item(row).data(Qt.ItemDataRole.UserRole))

    def set_pipelines(self, names: list[str]) -> None:
        for i in range(self.pipelines.count()):
            item = self.pipelines.item(i)
            item.setCheckState(Qt.CheckState.Checked if self.pipeline_name(i) in names else Qt.CheckState.Unchecked)

    # -- running -------------------------------------------------------------------------------------
    def _busy(self, running: bool) -> None:
        self.run_btn.setEnabled(not running)
        self.generate_btn.setEnabled(not running)
        self.cancel_btn.setEnabled(running)

    def _progress(self, what: str, done: int, total: int) -> None:
        self.progress.setRange(0, total or 0)
        self.progress.setValue(done)
        self.status.setText(f"{what} · {done} of {total}" if total else what)

    def start(self) -> bool:
        path, pipelines = self.chosen_set(), self.checked_pipelines()
        if path is None or not pipelines:
            self.status.setText("Choose a question set and at least one pipeline.")
            return False
        if not self.ctx.begin("evaluation", self.cancel):
            return False
        request = EvalRequest(path, tuple(pipelines), results_dir(self.ctx.home, path), self.limit.value())
        self._busy(True)
        self.status.setText(f"evaluating {', '.join(pipelines)} on {path.name} (results resume from {request.out})")
        self.job = self.ctx.start(EvalJob(self.ctx.settings(), request, self.chat_loader), done=self._eval_done,
                                  failed=self._failed("evaluation", self.eval_failed), progress=self._progress)
        return True

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.status.setText("cancelling after the current question… (what finished is kept)")

    def _failed(self, name: str, signal: Any) -> Any:
        def failed(text: str) -> None:
            self.ctx.end(name)
            self._busy(False)
            self.job = None
            self.status.setText(f"{name} stopped: {text}")
            signal.emit(text)
        return failed

    def _eval_done(self, outcome: Any) -> None:
        self.ctx.end("evaluation")
        self._busy(False)
        self.job = None
        self.status.setText(f"done: {len(outcome.rows)} results in {outcome.out}")
        self.show_results(outcome.out)
        self.eval_finished.emit(outcome)

    # -- the report ----------------------------------------------------------------------------------
    def show_results(self, out: Path) -> None:
        """The report stored in ``out`` (results.json and the plots), or an empty report."""
        path = out / "results.json"
        self.outcome = out
        self.link_runs(out)
        if not path.exists():
            self.report_title.setText("No evaluation of this question set yet.")
            self.metrics.columns = []
            self.metrics.set_records([])
            self.questions.set_records([])
            self._plots([])
            return
        data = json.loads(path.read_text(encoding="utf-8"))
        summary = data.get("summary", [])
        keys = [k for k in METRICS if any(k in s for s in summary)]
        self.metrics.beginResetModel()
        self.metrics.columns = [Column("Pipeline", "pipeline"), *(Column(k, k, numeric=True) for k in keys)]
        self.metrics.endResetModel()
        self.metrics.set_records(summary)
        fit_columns(self.metrics_table, 200)
        self.questions.set_records(data.get("rows", []))
        fit_columns(self.question_table, 320)
        self._plots(sorted(out.glob("*.png")))
        missing = data.get("gold_not_in_library") or {}
        self.report_title.setText(f"<b>{out}</b> · {len(summary)} pipelines · {len(data.get('rows', []))} results"
                                  + (f" · {len(missing)} question(s) name a filing the library lacks" if missing else ""))

    def _plots(self, paths: list[Path]) -> None:
        while self.plots_layout.count():
            item = self.plots_layout.takeAt(0)
            if item is not None and (w := item.widget()) is not None:
                w.deleteLater()
        for p in paths:
            label = QLabel()
            label.setPixmap(QPixmap(str(p)))
            label.setToolTip(str(p))
            self.plots_layout.addWidget(QLabel(p.stem.replace("_", " ")))
            self.plots_layout.addWidget(label)
        self.plots_layout.addStretch(1)

    def plot_count(self) -> int:
        items = [self.plots_layout.itemAt(i) for i in range(self.plots_layout.count())]
        labels = [w for it in items if it is not None and isinstance(w := it.widget(), QLabel)]
        return len([w for w in labels if not w.pixmap().isNull()])

    def _open_question(self, index: Any) -> None:
        row = self.questions.record(self.proxy.mapToSource(index).row())
        if row.get("run_id"):
            self.open_run.emit(row["run_id"])
        else:
            self.status.setText("This pipeline stores no run (retrieval-only pipelines record none).")

    def compare_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "An earlier results folder", str(self.ctx.home / "evals"))
        if folder:
            self.compare_with(Path(folder))

    def compare_with(self, earlier: Path) -> str:
        if self.outcome is None:
            return ""
        text = Session.compare_evaluations(earlier, self.outcome)
        self.compare_text.setPlainText(text)
        self.report.setCurrentIndex(3)
        return text

    # -- generating a set ------------------------------------------------------------------------------
    def generate_dialog(self) -> None:
        out = question_sets_dir(self.ctx.home) / "generated.jsonl"
        dialog = GenerateDialog(self, out)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.generate(dialog.request())

    def generate(self, request: QueryGenRequest) -> bool:
        if not self.ctx.begin("question generation", self.cancel):
            return False
        request.out.parent.mkdir(parents=True, exist_ok=True)
        self._busy(True)
        self.status.setText(f"generating questions into {request.out} (a re-run resumes)")

        def done(summary: Any) -> None:
            self.ctx.end("question generation")
            self._busy(False)
            self.job = None
            self.status.setText("generated: " + "; ".join(summary.lines()[:4]))
            self.refresh_sets(request.out)
            self.generate_finished.emit(summary)

        self.job = self.ctx.start(QueryGenJob(self.ctx.settings(), request, self.chat_loader), done=done,
                                  failed=self._failed("question generation", self.eval_failed),
                                  progress=self._progress)
        return True
