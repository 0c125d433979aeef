"""The Ask tab: question, settings (preset, chat model), Run/Cancel, live stage progress, the answer
with its citations, and the page viewer that opens a cited page with the evidence highlighted."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox, QFileDialog, QHBoxLayout, QLabel, QPlainTextEdit, QProgressBar, QPushButton, QSplitter, QTextBrowser,
    QToolButton, QVBoxLayout, QWidget,
)

from analyst_app.context import AppContext
from analyst_app.models import Column, RecordTableModel, page_column
from analyst_app.views.library import fit_columns, make_table
from analyst_app.views.page_viewer import PageViewer
from analyst_app.views.settings_dialog import SettingsDialog, changes_text
from analyst_app.workers import AskRequest, AskThread, CallJob
from engine.errors import ConfigError
from engine.pages import cite
from engine.records import (
    AnswerPayload, AnswerResult, Citation, CurationPayload, IntentPayload, RunCost, StageTrace,
)
from engine.session import Session
from engine.settings import list_presets
from engine.trace import stage_summary as engine_stage_summary
from engine.wording import counted, format_value, lead_sentence

STATUS_STYLE = {"answered": ("#1e7832", "Answered"), "not_answerable": ("#aa6e00", "Not answerable"),
                "failed": ("#b41e1e", "Failed"), "cancelled": ("#6e6e6e", "Cancelled"),
                "running": ("#285aaa", "Running"), "interrupted": ("#6e6e6e", "Interrupted")}

CITATION_COLUMNS = [
    Column("#", "passage_id", numeric=True),
    Column("Document", "doc_name"),
    page_column(),
    Column("Title", "title"),
]
STAGE_COLUMNS = [
    Column("Stage", "stage"),
    Column("Round", "round", numeric=True),
    Column("Seconds", "seconds", fmt=lambda v: f"{v:.2f}", numeric=True),
    Column("Tokens in", "tokens_in", numeric=True),
    Column("Tokens out", "tokens_out", numeric=True),
    Column("Summary", lambda t: stage_summary(t)),
]


NEXT_STEP = {"intent": "retrieving filings", "rewrite": "retrieving filings", "documents": "retrieving passages",
             "passages": "the model is curating the evidence", "curation": "next round or answer",
             "curation-stop": "the model is answering", "answer": "saving the run"}


def stage_summary(trace: StageTrace) -> str:
    """One line per stage for the progress table (pages as people cite them)."""
    return engine_stage_summary(trace)


_CITED = re.compile(r"\[(\d+(?:,\s*\d+)*)\]")  # "[2]", "[1, 3]": the quotes a synthesis sentence cites


def cited_quotes(answer: AnswerResult | None) -> list[int]:
    """The indices of the quotes the answer's text cites ("… [3]": the quote numbered 3), in the order it first
    cites them; every quote, best-ranked first, when the text cites none (the rows of a cover listing, quotes that
    stand alone)."""
    if answer is None or not answer.quotes:
        return []
    index = {q.number: i for i, q in enumerate(answer.quotes)}
    cited = [index[int(n)] for m in _CITED.finditer(answer.text) for n in m.group(1).split(",") if int(n) in index]
    return list(dict.fromkeys(cited)) or list(range(len(answer.quotes)))


def cited_quote(answer: AnswerResult | None) -> int:
    """The index of the first quote the answer rests on (:func:`cited_quotes`), where the evidence is opened first;
    0 when it has none."""
    return next(iter(cited_quotes(answer)), 0)


def _linked(escaped: str, a: AnswerResult) -> str:
    """An escaped synthesis with each cited number a link to its quote (``quote:<index>``)."""
    index = {q.number: i for i, q in enumerate(a.quotes)}

    def link(m: re.Match[str]) -> str:
        nums = [n.strip() for n in m.group(1).split(",")]
        return "[" + ", ".join(f"<a href='quote:{index[int(n)]}'>{n}</a>" if int(n) in index else n
                               for n in nums) + "]"

    return _CITED.sub(link, escaped) if index else escaped


def answer_html(question: str, answer: AnswerResult | None, status: str, cost: RunCost | None = None,
                read_as: str = "") -> str:
    """The answer panel: status, the answer in large type, value/unit/method, note, and the answer card — how the
    question was read (``read_as``: the metric plan in words), how the number was computed and the inputs it was
    computed from, each a link (``fact:<id>``) that opens its page with its cell boxed; then evidence and cost."""
    color, label = STATUS_STYLE.get(status, ("#444", status))
    a = answer or AnswerResult(status, "")
    head, rest = lead_sentence(a.text or "")
    parts = [f"<p style='color:#555;margin:0'>{html.escape(question)}</p>",
             f"<p style='margin:6px 0'><span style='background:{color};color:white;padding:2px 6px;border-radius:3px'>"
             f"&nbsp;{html.escape(label)}&nbsp;</span></p>"]
    note = f"<p style='color:#8a5a00'>Note: {html.escape(a.reason)}</p>" if a.reason else ""
    if note and status == "answered":  # how the question was taken (a filing not loaded, a period assumed): first
        parts.append(note)
    parts.append(f"<p style='font-size:16pt;font-weight:600;margin:6px 0'>"
                 f"{_linked(html.escape(head or '(no answer)'), a)}</p>")
    if rest:  # the headline is the answer's first sentence; the rest (each part, each year) reads below it
        parts.append(f"<p style='font-size:11pt;margin:2px 0 6px 0'>"
                     f"{_linked(html.escape(rest), a).replace(chr(10), '<br>')}</p>")  # (its lines kept)
    facts = []
    if a.value is not None:  # as the answer states it ("22.41%", "1,577.00 USD millions"), not every digit
        facts.append(f"value <b>{html.escape(format_value(a.value, a.unit, None))}</b>")
    if a.method:
        facts.append({"pot": "program of thought (computed)", "cot": "chain of thought",
                      "quotes": "quoted evidence, then a checked synthesis",
                      "facts+quotes": "computed from the statement facts, then quoted evidence for the rest",
                      "cover": "read from the cover page's table of registered securities (no model)"}.get(
            a.method, a.method))
    if a.grounding:
        ok = sum(1 for g in a.grounding if g.verified)
        facts.append(f"{ok}/{len(a.grounding)} figures found in their cited passage")
    if facts:
        parts.append("<p style='color:#333'>" + " · ".join(facts) + "</p>")
    if note and status != "answered":
        parts.append(note)
    parts += _card(a, read_as)
    if a.choices:  # the question named no company the library holds: one click asks it of each loaded one
        links = ", ".join(f"<a href='company:{i}'>{html.escape(name)}</a>" for i, name in enumerate(a.choices))
        parts.append(f"<p>Ask it about: {links}</p>")
    if a.quotes:  # a written answer: its synthesis cites these sentences; each opens highlighted on its page
        rows = "".join(
            f"<li><a href='quote:{i}'>[{q.number}]</a> “{html.escape(' '.join(q.text.split()))}” "
            f"<span style='color:#555'>— {html.escape(cite(q.doc_name, q.page_index, q.printed_folio))}"
            f"{', ' + html.escape(q.section) if q.section else ''}</span></li>" for i, q in enumerate(a.quotes))
        parts.append("<p style='margin:6px 0 2px 0'><b>Quoted evidence</b> (click a number to see the sentence "
                     f"highlighted on its page):</p><ol style='margin-top:0' type='none'>{rows}</ol>")
    if a.citations:
        links = ", ".join(f"<a href='cite:{i}'>[{c.passage_id}] "
                          f"{html.escape(cite(c.doc_name, c.page_index, c.printed_folio))}</a>"
                          for i, c in enumerate(a.citations))
        parts.append(f"<p>Evidence: {links}</p>")
    elif status == "answered":
        parts.append("<p style='color:#8a5a00'>The answer cites no passage.</p>")
    if cost:
        setup = f", setup {cost.setup_seconds:.1f} s" if cost.setup_seconds >= 0.05 else ""
        if cost.model_load_seconds >= 0.05:  # the first written answer after start loads the chat model
            setup += f", loading the chat model {cost.model_load_seconds:.1f} s"
        parts.append(f"<p style='color:#777'>{cost.seconds:.1f} s (retrieval {cost.retrieval_seconds:.1f} s{setup}) · "
                     f"{cost.tokens_in} tokens in / {cost.tokens_out} out · {cost.llm_calls} model calls</p>")
    return "".join(parts)


def _card(a: AnswerResult, read_as: str) -> list[str]:
    """How an answer was made, under it: the reading, the computation, and every input with where it is printed."""
    out = []
    if read_as:
        out.append(f"<p style='color:#333;margin:2px 0'><b>Read as:</b> {html.escape(read_as)}</p>")
    how = a.reasoning.split("\n", 1)[0].strip() if a.reasoning else ""
    if how and (a.inputs or a.variables):
        out.append(f"<p style='color:#333;margin:2px 0'><b>Computed:</b> {html.escape(how)}</p>")
    if a.inputs:
        rows = "".join(
            "<tr><td>" + (f"<a href='fact:{i.fact_id}'>{html.escape(i.variable)}</a>" if i.fact_id is not None
                          else html.escape(i.variable)) + "</td>"
            f"<td>{html.escape(i.row or i.item)}</td><td>{html.escape(i.period)}</td>"
            f"<td align='right'>{html.escape(i.printed or ('taken as 0' if i.fact_id is None else ''))}"
            f"{' ' + html.escape(i.scale) if i.scale and i.printed else ''}</td>"
            f"<td>{html.escape(cite(i.doc_name, i.page_index, i.printed_folio)) if i.fact_id is not None else ''}"
            f"</td></tr>" for i in a.inputs)
        out.append(f"<p style='margin:6px 0 2px 0'><b>{counted(len(a.inputs), 'input')}</b>, each a statement cell (click one to "
                   "see it boxed on its page):</p><table border='1' cellspacing='0' cellpadding='3' "
                   "style='border-color:#ccc'><tr><th>Input</th><th>Row</th><th>Period</th><th>Printed</th>"
                   f"<th>Where</th></tr>{rows}</table>")
    if a.variables:  # figures of the passages' text the formula named
        rows = "".join(f"<tr><td>{html.escape(v.name)}</td><td>{html.escape(v.label)}</td>"
                       f"<td>passage [{v.passage_id}]</td></tr>" for v in a.variables)
        out.append("<p style='margin:6px 0 2px 0'><b>Figures read from the passages' text</b>:</p>"
                   "<table border='1' cellspacing='0' cellpadding='3' style='border-color:#ccc'>"
                   f"<tr><th>Figure</th><th>As printed</th><th>Where</th></tr>{rows}</table>")
    return out


class AskView(QWidget):
    run_started = Signal()
    stage_event = Signal(object)  # event dict (live)
    run_finished = Signal(str)  # run id (stored)
    open_fact_id = Signal(int)  # an input of the answer card: show its cell on its page
    ask_failed = Signal(str)

    def __init__(self, ctx: AppContext, viewer: PageViewer, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.viewer = viewer
        self.request: AskRequest | None = None
        self.run_id = ""
        self.events: list[StageTrace] = []
        self.answer: AnswerResult | None = None
        self.question_text = ""
        self._started = 0.0
        self._current = ""
        self.thread = AskThread()
        self.thread.worker.status.connect(self._status)
        self.thread.worker.stage.connect(self._stage)
        self.thread.worker.finished.connect(self._finished)
        self.thread.worker.failed.connect(self._failed)

        self.question = QPlainTextEdit()
        self.question.setPlaceholderText("Ask about the loaded filings, e.g. “What was Acme's total revenue in fiscal "
                                         "2023, in USD millions?”  (Ctrl+Return runs it)")
        self.question.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 16)
        self.preset = QComboBox()
        self.preset.addItems(list_presets(ctx.home))
        self.preset.setToolTip("Settings preset (resources/presets, or this library's presets folder)")
        self.settings_btn = QPushButton("Settings…")
        self.settings_btn.setToolTip("Edit every setting of the preset (Ctrl+,)")
        self.settings_btn.clicked.connect(lambda: self.open_settings())
        self.settings_dialog: SettingsDialog | None = None
        self.model_box = QComboBox()
        self.model_box.setEditable(True)
        self.model_box.setMinimumContentsLength(22)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_box.setToolTip("Chat model: a model pack name or the path of any GGUF file")
        self.browse_btn = QToolButton()
        self.browse_btn.setText("…")
        self.browse_btn.setToolTip("Choose a GGUF file")
        self.browse_btn.clicked.connect(self._browse_model)
        self.model_note = QLabel()
        self.model_note.setStyleSheet("color:#666")
        self.run_btn = QPushButton("Ask")
        self.run_btn.setDefault(True)
        self.run_btn.setToolTip("Run the question (Ctrl+Return)")
        self.run_btn.clicked.connect(lambda: self.ask())
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setToolTip("Stop the run, a model call in progress included (Esc)")
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.clicked.connect(self.cancel)

        row = QHBoxLayout()
        row.addWidget(QLabel("Preset"))
        row.addWidget(self.preset)
        row.addWidget(self.settings_btn)
        row.addSpacing(12)
        row.addWidget(QLabel("Chat model"))
        row.addWidget(self.model_box)
        row.addWidget(self.browse_btn)
        row.addWidget(self.model_note, 1)
        row.addWidget(self.run_btn)
        row.addWidget(self.cancel_btn)

        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress_label = QLabel()
        prow = QHBoxLayout()
        prow.addWidget(self.progress_label)
        prow.addWidget(self.progress, 1)
        self.progress_box = QWidget()
        self.progress_box.setLayout(prow)
        prow.setContentsMargins(0, 0, 0, 0)
        self.progress_box.setVisible(False)
        self._tick = QTimer(self)
        self._tick.setInterval(250)
        self._tick.timeout.connect(self._update_elapsed)

        self.answer_view = QTextBrowser()
        self.answer_view.setOpenLinks(False)
        self.answer_view.anchorClicked.connect(self._anchor)
        self.answer_view.setHtml("<p style='color:#777'>The answer appears here, with the filings and pages it "
                                 "rests on. Click a citation to see the page.</p>")
        self.citations = RecordTableModel(CITATION_COLUMNS, parent=self)  # citations, or passages read
        self.quote_rows: list[int] = []  # the rows that are a written answer's cited quotes: their indices
        self.citation_table = make_table(self.citations)
        self.citation_table.clicked.connect(lambda idx: self.open_citation(idx.row()))
        self.citation_table.activated.connect(lambda idx: self.open_citation(idx.row()))
        self.citations_title = QLabel("Citations — click one to open its page")
        self.stages = RecordTableModel(STAGE_COLUMNS, parent=self)
        self.stage_table = make_table(self.stages)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.answer_view)
        self.splitter.addWidget(_titled(self.citations_title, self.citation_table))
        self.splitter.addWidget(_titled("Stages of this run (details on the Inspect tab)", self.stage_table))
        self.splitter.setSizes([230, 170, 240])

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.question)
        lay.addLayout(row)
        lay.addWidget(self.progress_box)
        lay.addWidget(self.splitter, 1)

        store = ctx.store
        last_preset = str(store.value("ask/preset", ctx.preset))
        if self.preset.findText(last_preset) >= 0:
            self.preset.setCurrentText(last_preset)
        ctx.preset = self.preset.currentText()
        self.model_box.setEditText(str(store.value("ask/chat_model", "")) or ctx.preset_settings().models.chat_model)
        ctx.chat_model = self.model_box.currentText().strip()
        self.preset.currentTextChanged.connect(self._preset_changed)
        self.model_box.currentTextChanged.connect(self._model_changed)
        self._statuses: dict[str, Any] = {}
        self._update_preset_tip()
        ctx.settings_changed.connect(self._follow_ctx)
        ctx.library_changed.connect(self._library_changed)
        ctx.busy_changed.connect(self._busy_changed)
        ctx.start(CallJob("list models", ctx.home, Session.model_statuses),
                  done=self._models_listed, failed=lambda _t: None)
        self.on_screen_seconds: float | None = None  # the last run's answer shown, from the click
        self.prepared_seconds: float | None = None  # the question path built ahead of the first question
        self.thread.worker.prepared.connect(self._prepared)

    def prepare(self) -> bool:
        """Build the question path in the worker's thread ahead of the first question (no model is loaded: a
        question the facts answer needs none); False when there is nothing to build it for."""
        if self.request is not None or self.ctx.library is None or self.ctx.library.count("filings") == 0:
            return False
        try:
            settings = self.ctx.settings()
        except Exception:
            return False
        self.thread.worker.prepare(AskRequest("", settings, self.ctx.home))
        return True

    def _prepared(self, seconds: float) -> None:
        self.prepared_seconds = seconds

    # -- settings ---------------------------------------------------------------------------------
    def _preset_changed(self, name: str) -> None:
        self.ctx.preset = name
        self.ctx.store.setValue("ask/preset", name)
        try:
            self.model_box.setEditText(self.ctx.preset_settings().models.chat_model)
            self.ctx.set_overrides(self.ctx.overrides)  # drop the changes this preset already makes
        except ConfigError as exc:  # a library preset edited by hand into something invalid
            self.ctx.error.emit(f"Preset {name} is invalid", str(exc))
        self._update_preset_tip()

    def open_settings(self) -> SettingsDialog:
        """Show the settings editor (window-modal); OK updates the context, which this tab follows."""
        if self.settings_dialog is not None:
            if self.settings_dialog.isVisible():
                self.settings_dialog.raise_()
                self.settings_dialog.activateWindow()
                return self.settings_dialog
            self.settings_dialog.deleteLater()
        self.settings_dialog = SettingsDialog(self.ctx, self)
        self.settings_dialog.open()
        return self.settings_dialog

    def _follow_ctx(self) -> None:
        """The settings dialog changed the preset, the overrides or the chat model: show them."""
        self._refresh_presets()
        if self.preset.currentText() != self.ctx.preset:
            self.preset.blockSignals(True)  # the dialog chose the chat model too: keep it
            self.preset.setCurrentText(self.ctx.preset)
            self.preset.blockSignals(False)
            self.ctx.store.setValue("ask/preset", self.ctx.preset)
        if self.model_box.currentText().strip() != self.ctx.chat_model:
            self.model_box.setEditText(self.ctx.chat_model)
        self._update_preset_tip()

    def _refresh_presets(self) -> None:
        names = list_presets(self.ctx.home)
        if names != [self.preset.itemText(i) for i in range(self.preset.count())]:
            current = self.preset.currentText()
            self.preset.blockSignals(True)
            self.preset.clear()
            self.preset.addItems(names)
            self.preset.setCurrentText(current)
            self.preset.blockSignals(False)

    def _library_changed(self) -> None:
        self._refresh_presets()  # presets saved in a library belong to it
        if self.ctx.preset not in list_presets(self.ctx.home):
            self.preset.setCurrentText("default")
        self._update_preset_tip()
        if self.isVisible():
            self.prepare()

    def _model_changed(self, text: str) -> None:
        self.ctx.chat_model = text.strip()
        self.ctx.store.setValue("ask/chat_model", self.ctx.chat_model)
        self._update_model_note()

    def _update_preset_tip(self) -> None:
        n = sum(len(v) for v in self.ctx.overrides.values())
        summary = self.ctx.preset + (f" + {n} change{'s' if n != 1 else ''}" if n else "")
        self.settings_btn.setText(f"Settings… ({n} changed)" if n else "Settings…")
        try:
            s = self.ctx.settings()
        except ConfigError as exc:
            tip = f"Preset {summary}: invalid ({exc})"
        else:
            tip = (f"Preset {summary}: chat model {s.models.chat_model}, {s.curation.max_rounds} curation rounds, "
                   f"{s.retrieval.doc_top_k} filings × {s.retrieval.passage_top_k} passages per round, "
                   f"numeric answers by {'program' if s.answer.numeric_mode == 'pot' else 'chain of thought'}")
        if n:
            tip += f"\nChanged: {changes_text(self.ctx.overrides)}"
        self.preset.setToolTip(tip)
        self.settings_btn.setToolTip(f"{tip}\n\nEdit every setting (Ctrl+,)")

    def _browse_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", str(Path.home()), "GGUF models (*.gguf)")
        if path:
            self.model_box.setEditText(path)

    def _models_listed(self, statuses: list[Any]) -> None:
        self._statuses = {s.name: s for s in statuses}
        current = self.model_box.currentText()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        for s in statuses:
            self.model_box.addItem(s.name)
            self.model_box.setItemData(self.model_box.count() - 1,
                                       f"{s.description} — {'installed' if s.installed else 'not installed'}",
                                       Qt.ItemDataRole.ToolTipRole)
        self.model_box.setEditText(current)
        self.model_box.blockSignals(False)
        self._update_model_note()

    def _update_model_note(self) -> None:
        name = self.model_box.currentText().strip()
        s = self._statuses.get(name)
        ok, text, tip = True, "", ""
        if s is not None:
            ok = bool(s.installed)
            text = "installed" if ok else "not installed"
            tip = s.description if ok else f"install it with: filinglens models install {name}"
        elif name.lower().endswith(".gguf"):
            ok = Path(name).expanduser().is_file()
            text = "GGUF file" if ok else "file not found"
        self.model_note.setText(text)
        self.model_note.setToolTip(tip)
        self.model_note.setStyleSheet("color:#666" if ok else "color:#b45a00;font-weight:600")

    # -- running ----------------------------------------------------------------------------------
    def ask(self, question: str | None = None) -> bool:
        """Start a run; False when the question is empty or another job is running."""
        if question is not None:
            self.question.setPlainText(question)
        text = " ".join(self.question.toPlainText().split())
        if not text:
            self.ctx.message.emit("type a question first", 4000)
            self.question.setFocus()
            return False
        if self.ctx.library.count("filings") == 0:
            self.ctx.error.emit("The library is empty", "Add filings on the Library tab before asking a question.")
            return False
        try:
            settings = self.ctx.settings()
        except Exception as exc:
            self.ctx.error.emit("Invalid settings", str(exc))
            return False
        req = AskRequest(text, settings, self.ctx.home)
        if not self.ctx.begin("question", self.cancel):
            return False
        self.request, self.run_id, self.events, self.question_text = req, "", [], text
        self.answer = None
        self.citations.set_records([])
        self.quote_rows = []
        self.stages.set_records([])
        self.answer_view.setHtml(answer_html(text, AnswerResult("running", "Working…"), "running"))
        self._started = time.perf_counter()
        self._current = "starting"
        self.progress_box.setVisible(True)
        self._tick.start()
        self._update_elapsed()
        self.run_started.emit()
        self.thread.worker.submit(req)
        return True

    def cancel(self) -> None:
        if self.request is not None:
            self.request.cancel.set()
            self._current = "cancelling: stopping the stage in progress"
            self.cancel_btn.setEnabled(False)
            self._update_elapsed()

    def busy(self) -> bool:
        return self.request is not None

    def _status(self, text: str) -> None:
        self._current = text.rstrip("…")
        self._update_elapsed()

    def _update_elapsed(self) -> None:
        self.progress_label.setText(f"{self._current} — {time.perf_counter() - self._started:.1f} s")

    def _stage(self, trace: StageTrace) -> None:
        self.events.append(trace)
        self.stages.append(trace)
        self._current = f"{trace.stage} done ({trace.seconds:.1f} s); {NEXT_STEP.get(trace.stage, 'working')}…"
        if isinstance(trace.payload, CurationPayload):
            answerable = trace.payload.answerable
            self._current = (f"curation round {trace.round}: "
                             + ("answerable; the model is answering…" if answerable else "not answerable yet; next round…"))
        if self.request is not None and self.request.cancel.is_set():
            self._current = f"{trace.stage} done; cancelling"
        self._update_elapsed()
        fit_columns(self.stage_table, 220)
        self.stage_event.emit(trace)

    def _end(self) -> None:
        self.request = None
        self._tick.stop()
        self.progress_box.setVisible(False)
        self.ctx.end("question")

    def _finished(self, run: Any) -> None:
        self._end()
        self.run_id = run.id
        self.show_answer(run.question, run.answer, run.status, run.cost)
        fit_columns(self.stage_table, 220)
        # the run's own time ends with its answer stored; showing it (the answer, its page with the evidence boxed)
        # is the window's work, and the analyst waits for it too
        self.on_screen_seconds = time.perf_counter() - self._started
        ran = run.cost.seconds  # (as stored)
        self.answer_view.append(f"<p style='color:#777'>On screen {self.on_screen_seconds:.1f} s after the click: "
                                f"the run {ran:.1f} s, showing it here {max(0.0, self.on_screen_seconds - ran):.1f} s.</p>")
        self.ctx.message.emit(f"run {run.id}: {STATUS_STYLE.get(run.status, ('', run.status))[1].lower()} "
                              f"in {run.seconds:.1f} s, on screen {self.on_screen_seconds:.1f} s after the click", 8000)
        self.ctx.runs_changed.emit()
        self.run_finished.emit(run.id)

    def _failed(self, text: str) -> None:
        self._end()
        self.answer_view.setHtml(answer_html(self.question_text, AnswerResult("failed", "", reason=text), "failed"))
        self.ctx.error.emit("The question could not be run", text)
        self.ask_failed.emit(text)

    def _busy_changed(self, name: str) -> None:
        self.run_btn.setEnabled(not name)
        self.cancel_btn.setEnabled(name == "question")

    # -- answer and evidence ----------------------------------------------------------------------
    def show_answer(self, question: str, answer: AnswerResult | None, status: str, cost: RunCost | None = None) -> None:
        self.answer, self.question_text = answer, question
        plans = [t.payload.intent.plan for t in self.events if isinstance(t.payload, IntentPayload)]
        read_as = plans[-1].words if plans and plans[-1] is not None and plans[-1].status == "complete" else ""
        self.answer_view.setHtml(answer_html(question, answer, status, cost, read_as))
        rows: list[Citation] = list(answer.citations) if answer else []
        self.quote_rows = cited_quotes(answer) if answer is not None and answer.quotes and rows else []
        if self.quote_rows and answer is not None:  # a written answer: the quotes it cites, under the numbers its
            # text gives them ("[1]"), each opening its sentence highlighted
            rows = [Citation(q.number, q.chunk_id or 0, q.doc_name, q.page_index, q.title, q.printed_folio)
                    for q in (answer.quotes[i] for i in self.quote_rows)]
            self.citations_title.setText("Quotes cited — click one to open its sentence on its page")
        elif rows:
            self.citations_title.setText("Citations — click one to open its page")
        else:  # nothing cited: list what the answer step read, so the analyst can still check it
            read = next((t.payload.passages for t in reversed(self.events) if isinstance(t.payload, AnswerPayload)), ())
            rows = [Citation(p.id, p.chunk_id, p.doc_name, p.page_index, p.title, p.printed_folio)
                    for p in read]
            self.citations_title.setText("No citations — passages the answer step read (click to open)" if rows
                                         else "No citations")
        self.citations.set_records(rows)
        fit_columns(self.citation_table, 260)
        if answer is not None and answer.quotes:
            # the sentence the answer rests on, not the best-ranked one, with the others it rests on printed on its page
            self.open_quotes(cited_quotes(answer))
        elif rows:
            self.open_citation(0)

    def show_stored_run(self, run_id: str) -> None:
        """Show a past run's answer (from History)."""
        run = self.ctx.session.read_run(run_id)
        self.run_id = run.id
        self.question.setPlainText(run.question)
        self.events = list(run.traces)
        self.stages.set_records(self.events)
        fit_columns(self.stage_table, 220)
        answer = run.answer or AnswerResult(run.status, "", reason=run.error or "the run did not finish")
        self.show_answer(run.question, answer, run.status, run.cost)

    def _anchor(self, url: Any) -> None:
        index = int(url.path() or url.toString().split(":", 1)[1])
        if url.scheme() == "cite":
            self.open_citation(index)
        elif url.scheme() == "company" and self.answer is not None and 0 <= index < len(self.answer.choices):
            self.ask(f"For {self.answer.choices[index]}: {self.question_text}")
        elif url.scheme() == "fact":
            self.open_fact_id.emit(index)
        elif url.scheme() == "quote":
            self.open_quote(index)

    def open_citation(self, row: int) -> bool:
        """Open the cited page with the evidence highlighted: the cells of a computed answer's inputs printed on
        that page when it has any (not the whole table), else the passage; False when the filing is gone."""
        cites = self.citations.records
        if not 0 <= row < len(cites):
            return False
        if row < len(self.quote_rows):  # a quote the written answer cites: its sentence, highlighted
            return self.open_quote(self.quote_rows[row])
        c = cites[row]
        inputs = self.answer.inputs if self.answer is not None else ()
        ids = [i.fact_id for i in inputs
               if i.fact_id is not None and i.doc_name == c.doc_name and i.page_index == c.page_index]
        if ids and self.ctx.library is not None:
            cells = self.ctx.library.facts(ids=list(dict.fromkeys(ids)))
            filing = self.ctx.library.filing_by_doc_name(c.doc_name)
            if cells and filing is not None:
                self.viewer.show_facts(filing, sorted(cells, key=lambda s: ids.index(s.id)))
                return True
        return self.open_evidence(c.doc_name, c.chunk_id, c.page_index)

    def open_quote(self, index: int) -> bool:
        """Open a quoted sentence's page with that sentence highlighted (not its whole passage)."""
        return self.open_quotes([index])

    def open_quotes(self, indices: Sequence[int]) -> bool:
        """Open the first quote's page with its sentence highlighted, and each further quote of ``indices`` that is
        printed on that same page (a listing's rows)."""
        quotes = self.answer.quotes if self.answer is not None else ()
        chosen = [quotes[i] for i in indices if 0 <= i < len(quotes)]
        if not chosen:
            return False
        q = chosen[0]
        more = [(o.chunk_id, (o.char_start, o.char_end, o.text)) for o in chosen[1:]
                if (o.doc_name, o.page_index) == (q.doc_name, q.page_index) and o.chunk_id is not None]
        return self.open_evidence(q.doc_name, q.chunk_id, q.page_index, span=(q.char_start, q.char_end, q.text),
                                  more=more)

    def open_evidence(self, doc_name: str, chunk_id: int | None, page_index: int | None,
                      span: tuple[int, int, str] | None = None,
                      more: Sequence[tuple[int, tuple[int, int, str]]] = ()) -> bool:
        """Open ``doc_name`` at the chunk's page with the chunk (or its ``span``: start, end, text) highlighted,
        and each of ``more`` ((chunk id, span) on the same page) with it."""
        lib = self.ctx.library
        filing = lib.filing_by_doc_name(doc_name)
        if filing is None:
            self.ctx.message.emit(f"{doc_name} is no longer in the library", 6000)
            return False
        ids = list(dict.fromkeys(([int(chunk_id)] if chunk_id is not None else []) + [c for c, _ in more]))
        found = {c.id: c for c in lib.chunks(ids) if c.filing_id == filing.id} if ids else {}
        chunk = found.get(int(chunk_id)) if chunk_id is not None else None
        if chunk is not None and span is not None:  # a sentence of the chunk: only its characters are highlighted
            chunk = replace(chunk, char_start=span[0], char_end=span[1], text=span[2])
        fragments = [replace(found[c], char_start=a, char_end=b, text=t) for c, (a, b, t) in more if c in found]
        self.viewer.show_chunk(filing, chunk, None if chunk is not None else int(page_index or 0), more=fragments)
        return True

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        """Cancel the running question and stop the worker thread; False if a model call outlived the wait."""
        if self.request is not None:
            self.request.cancel.set()
        return self.thread.stop(timeout_ms)


def _titled(title: str | QLabel, widget: QWidget) -> QWidget:
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 4, 0, 0)
    lay.setSpacing(2)
    label = title if isinstance(title, QLabel) else QLabel(title)
    label.setStyleSheet("color:#444;font-weight:600")
    lay.addWidget(label)
    lay.addWidget(widget)
    return box
