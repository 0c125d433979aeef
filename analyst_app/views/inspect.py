"""The Inspect tab: every stage of one run's trace (typed :class:`engine.records.StageTrace` records, stored
or live), one sub-tab per stage kind, plus the raw JSON payloads with prompts and model outputs."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPlainTextEdit, QSplitter, QTabWidget, QTextBrowser,
    QTreeView, QVBoxLayout, QWidget,
)

from analyst_app.models import (
    Column, JsonTreeModel, RecordTableModel, fmt_number, json_full_text, local_time, page_column,
)
from analyst_app.views.ask import STATUS_STYLE, stage_summary
from analyst_app.views.library import fit_columns, make_table, wrapped_label as _label
from analyst_app.views.rerank import CardsTab, TournamentTab
from engine.records import (
    AnswerPayload, AnswerResult, CurationPayload, CurationStopPayload, DocumentsPayload, FactInputRef, FactsPayload,
    PassageRef, PassagesPayload, StageTrace, StoredRun,
)
from engine.pages import cite, page_number
from engine.trace import event_json, plan_lines, to_json

DOC_COLUMNS = [
    Column("Rank", "rank", numeric=True, tip="Rank after reranking (dense similarity + metadata boosts, or the cross-encoder)"),
    Column("Document", "doc_name"),
    Column("Title", "title"),
    Column("Dense", "dense", numeric=True, tip="Cosine similarity of the query and the filing's cover-page summary"),
    Column("Dense rank", "dense_rank", numeric=True),
    Column("Score", "score", numeric=True, tip="Final document score"),
    Column("Kept", "kept"),
    Column("Why", "why"),
]
PASSAGE_COLUMNS = [
    Column("Rank", "rank", numeric=True),
    Column("Document", "doc_name"),
    page_column(),
    Column("BM25", "bm25", numeric=True),
    Column("BM25 rank", "bm25_rank", numeric=True),
    Column("Dense", "dense", numeric=True),
    Column("Dense rank", "dense_rank", numeric=True),
    Column("Line item", "line_item_rank", numeric=True,
           tip="Rank among the table chunks whose row labels print the asked metric (or a ratio's components)"),
    Column("Rows", lambda c: "; ".join(c.line_items), tip="The matching row labels"),
    Column("RRF", "rrf", numeric=True, tip="Reciprocal-rank fusion of BM25, dense, filing rank and line items"),
    Column("Final", "final", numeric=True),
    Column("Kept", "kept"),
    Column("Snippet", "snippet"),
]



@dataclass(frozen=True)
class Judged:
    """A passage the curator was shown, with its verdict (a row of the Curation table)."""

    ref: PassageRef
    verdict: str  # kept | dropped | not judged

    doc_name = property(lambda self: self.ref.doc_name)
    chunk_id = property(lambda self: self.ref.chunk_id)
    page_index = property(lambda self: self.ref.page_index)
    printed_folio = property(lambda self: self.ref.printed_folio)


SHOWN_COLUMNS = [
    Column("#", lambda r: r.ref.id, numeric=True, tip="The passage number the curator saw"),
    Column("Verdict", "verdict"),
    Column("Document", "doc_name"),
    page_column(),
    Column("Title", lambda r: r.ref.title),
]
OVERVIEW_COLUMNS = [
    Column("#", "seq", numeric=True),
    Column("Stage", "stage"),
    Column("Round", "round", numeric=True),
    Column("Seconds", "seconds", fmt=lambda v: f"{v:.2f}", numeric=True),
    Column("Tokens in", "tokens_in", numeric=True),
    Column("Tokens out", "tokens_out", numeric=True),
    Column("Model calls", lambda t: len(t.llm_calls), numeric=True),
    Column("Summary", stage_summary),
]


def _call_errors(trace: StageTrace) -> list[str]:
    return [f"{c.purpose}: {c.error}" for c in trace.llm_calls if c.error]


class RoundTable(QWidget):
    """A round selector, a line about the round's query/scorer, and the round's candidate table."""

    open_row = Signal(object)  # the candidate record

    def __init__(self, columns: list[Column], empty: str) -> None:
        super().__init__()
        self.events: list[StageTrace] = []
        self.empty = empty
        self.round_box = QComboBox()
        self.round_box.currentIndexChanged.connect(self._show)
        self.info = _label()
        self.model = RecordTableModel(columns, kept="kept", parent=self)
        from PySide6.QtCore import QSortFilterProxyModel

        self.proxy = QSortFilterProxyModel(self)
        self.table = make_table(self.model, proxy=self.proxy)
        self.table.doubleClicked.connect(
            lambda idx: self.open_row.emit(self.model.record(self.proxy.mapToSource(idx).row())))
        self.round_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        top = QHBoxLayout()
        top.addWidget(QLabel("Round"))
        top.addWidget(self.round_box)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.info)
        lay.addWidget(self.table, 1)

    def set_events(self, events: list[StageTrace]) -> None:
        keep = self.round_box.currentIndex()
        self.events = events
        self.round_box.blockSignals(True)
        self.round_box.clear()
        for e in events:
            self.round_box.addItem(f"Round {e.round} of {len(events)}")
        self.round_box.blockSignals(False)
        self.round_box.setEnabled(len(events) > 1)
        if events:
            self.round_box.setCurrentIndex(keep if 0 <= keep < len(events) and keep != len(events) - 2 else len(events) - 1)
        self._show()

    def _show(self, *_: Any) -> None:
        i = self.round_box.currentIndex()
        if not self.events or i < 0:
            self.model.set_records([])
            self.info.setText(self.empty)
            return
        e = self.events[i]
        p = e.payload
        assert isinstance(p, (DocumentsPayload, PassagesPayload))
        self.model.set_records(list(p.candidates))
        self.proxy.sort(-1)
        bits = [f"<b>query</b> {html.escape(p.query)}"]
        if isinstance(p, PassagesPayload) and p.lexical_query:
            bits.append(f"<b>BM25 query</b> {html.escape(p.lexical_query)}")
        bits.append(f"<b>scorer</b> {html.escape(p.scorer)}")
        if isinstance(p, DocumentsPayload):
            if p.company_check:
                bits.append(f"<b>companies</b> {html.escape(p.company_check)}")
            if p.filter != "none":
                bits.append(f"<b>filter</b> {html.escape(p.filter)}")
            bits.append(f"{len(p.candidates)} of {p.n_candidates} candidates shown, {p.k_keep} kept")
        else:
            bits.append(f"{p.prefilter} passages after the prefilter, {p.k_keep} kept")
        bits.append(f"{e.seconds:.2f} s")
        self.info.setText(" · ".join(bits))
        fit_columns(self.table, 320)


class CurationTab(QWidget):
    """One entry per curation round: the passages shown with the curator's verdict, and its judgement."""

    open_row = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.rounds: list[StageTrace] = []
        self.why_none = ""  # what the run did instead of curating (set_events)
        self.stops: dict[int, StageTrace] = {}
        self.list = QListWidget()
        self.list.setMinimumWidth(190)
        self.list.setSpacing(3)
        self.list.setWordWrap(True)
        self.list.currentRowChanged.connect(self._show)
        self.detail = QTextBrowser()
        self.detail.setMinimumHeight(120)
        self.model = RecordTableModel(SHOWN_COLUMNS, kept=lambda r: r.verdict == "kept", parent=self)
        self.table = make_table(self.model)
        self.table.doubleClicked.connect(lambda idx: self.open_row.emit(self.model.record(idx.row())))
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.detail)
        right.addWidget(self.table)
        right.setSizes([170, 500])
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.list)
        split.addWidget(right)
        split.setSizes([200, 800])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(split)

    def set_events(self, rounds: list[StageTrace], stops: list[StageTrace], why_none: str = "") -> None:
        """``why_none``: what the run did instead of curating, shown when it has no round."""
        keep = self.list.currentRow()
        self.rounds, self.stops, self.why_none = rounds, {s.round: s for s in stops}, why_none
        self.list.blockSignals(True)
        self.list.clear()
        for e in rounds:
            p = e.payload
            assert isinstance(p, CurationPayload)
            verdict = "answerable" if p.answerable else "not answerable"
            item = QListWidgetItem(f"Round {e.round}\n{verdict}\nkept {len(p.kept)} of {len(p.shown)} shown")
            item.setForeground(QColor("#1e7832") if p.answerable else QColor("#8a5a00"))
            self.list.addItem(item)
        self.list.blockSignals(False)
        if rounds:
            self.list.setCurrentRow(keep if 0 <= keep < len(rounds) else 0)
        self._show(self.list.currentRow())

    def _show(self, row: int) -> None:
        if not 0 <= row < len(self.rounds):
            self.model.set_records([])
            why = self.why_none or "it stopped before curation, or is still retrieving"
            self.detail.setHtml(f"<p style='color:#777'>No curation round in this run ({html.escape(why)}).</p>")
            return
        e = self.rounds[row]
        p = e.payload
        assert isinstance(p, CurationPayload)
        self.model.set_records([Judged(s, p.verdict(s.chunk_id)) for s in p.shown])
        fit_columns(self.table, 320)
        facts = [("Answerable", "yes" if p.answerable else "no"),
                 ("Shown / kept / dropped", f"{len(p.shown)} / {len(set(p.kept))} / {len(set(p.dropped))}"),
                 ("Missing information", p.missing_information or "—"),
                 ("Complementary question", p.complementary_question or "—"),
                 ("Tokens in / out", f"{e.tokens_in} / {e.tokens_out}"),
                 ("Seconds", f"{e.seconds:.2f}")]
        if not p.model_output_usable:
            facts.append(("Model output", "unusable: every passage was kept and the run went on"))
        for err in _call_errors(e):
            facts.append(("Model call failed", err))
        stop = self.stops.get(e.round)
        if stop is not None and isinstance(stop.payload, CurationStopPayload):
            facts.append(("Loop ended", stop.payload.reason))
        cells = "".join(f"<tr><td style='color:#555;padding-right:14px;white-space:nowrap'>{html.escape(k)}</td>"
                        f"<td>{html.escape(str(v))}</td></tr>" for k, v in facts)
        self.detail.setHtml(f"<h3 style='margin:2px'>Curation round {e.round}</h3><table>{cells}</table>"
                            "<p style='color:#777'>Below: the passages the curator saw and its verdict on each; "
                            "double-click one to open its page.</p>")


FACT_SCHEME = "fact"  # an input's link in the Answer tab: fact:<fact id>


def _fact_link(i: FactInputRef) -> str:
    name = html.escape(i.variable)
    if i.fact_id is None:
        return f"{name} <span style='color:#666'>(not printed, taken as 0)</span>"
    return f"<a href='{FACT_SCHEME}:{i.fact_id}'>{name}</a>"


def facts_html(events: Sequence[StageTrace]) -> str:
    """The Facts tab: how the question was read (the plan, each leaf with the fact it used), then each round of the
    sufficiency check over the statement facts — the metric, its formula, every input with the cell that won and
    why it won over the other printings of the line (or was the only one), and what was still missing."""
    checks = [e for e in events if isinstance(e.payload, FactsPayload)]
    if not checks:
        return "<p>No statement facts were checked in this run.</p>"
    out = []
    plan = plan_lines(events)
    if plan:
        out.append("<h3 style='margin:2px'>Plan: the metric as the question was read</h3><pre>"
                   + html.escape("\n".join(plan)) + "</pre>")
    for e in checks:
        p = e.payload
        assert isinstance(p, FactsPayload)
        out.append(f"<h3 style='margin:8px 0 2px 0'>Round {e.round}: {html.escape(p.company)} FY{p.fiscal_year} — "
                   f"{html.escape(p.metric)}{'' if p.mode == 'value' else f' ({html.escape(p.mode)})'}</h3>")
        if p.query:
            out.append(f"<p style='margin:2px 0'>Complementary question: <i>{html.escape(p.query)}</i></p>")
        if p.formula:
            out.append(f"<p style='margin:2px 0'>Formula: {html.escape(p.formula)}</p>")
        if p.inputs:
            rows = "".join(
                f"<tr><td>{_fact_link(i)}</td><td>{html.escape(i.item)}</td><td>{html.escape(i.row)}</td>"
                f"<td>{html.escape(i.period)}</td><td align='right'>{html.escape(i.printed)}"
                f"{' ' + html.escape(i.scale) if i.scale and i.printed else ''}</td>"
                f"<td>{html.escape(cite(i.doc_name, i.page_index, i.printed_folio)) if i.fact_id is not None else ''}"
                f"</td><td>{html.escape(i.chosen())}</td></tr>"
                for i in p.inputs)
            out.append("<table border='1' cellspacing='0' cellpadding='3' style='border-color:#ccc'><tr>"
                       "<th>Input</th><th>Line item</th><th>Row</th><th>Period</th><th>Printed</th><th>Where</th>"
                       f"<th>Why this cell (the other printings)</th></tr>{rows}</table>")
        if p.gaps:
            out.append("<p style='margin:4px 0;color:#8a5a00'>Missing: " + html.escape("; ".join(p.gaps)) + "</p>")
        elif p.inputs:
            out.append("<p style='margin:4px 0;color:#1e7832'>Every input found: computed without a model.</p>")
    return "".join(out)


def _why_no_curation(events: Sequence[StageTrace]) -> str:
    """What a finished run did instead of curating passages ("" while it may still curate)."""
    answer = next((e.payload.answer for e in reversed(events) if isinstance(e.payload, AnswerPayload)), None)
    if answer is None:
        return ""
    if answer.method == "quotes":
        return "a written answer: its evidence sentences were ranked without a model and the synthesis may cite " \
               "only them; see the Answer tab's quoted evidence"
    if answer.inputs or any(e.stage == "facts" for e in events):
        return "the statement facts answered it: no passage was read by a model"
    return "the run ended before curation: see the Answer tab's note"


def answer_detail_html(answer: AnswerResult, passages: tuple[PassageRef, ...], errors: list[str],
                       no_stage: bool = False, plan: Sequence[str] = ()) -> str:
    """The Answer tab: the answer, then how the question was read (``plan``: :func:`engine.trace.plan_lines`,
    each leaf with the fact it used), then how the number was computed and from which cells."""
    color, label = STATUS_STYLE.get(answer.status, ("#444", answer.status))
    if no_stage:
        color, label = "#444", "no answer stage"
    out = [f"<p><span style='background:{color};color:white;padding:2px 6px'>&nbsp;{html.escape(label)}&nbsp;</span></p>",
           f"<p style='font-size:15pt;font-weight:600'>{html.escape(answer.text or '(no answer)')}</p>"]
    facts = []
    if answer.value is not None:
        facts.append(f"value {fmt_number(answer.value, 6)} {html.escape(answer.unit or '')}")
    if answer.method:
        facts.append(f"method {html.escape(answer.method)}")
    if facts:
        out.append("<p>" + " · ".join(facts) + "</p>")
    if answer.reason:
        out.append(f"<p style='color:#8a5a00'>Note: {html.escape(answer.reason)}</p>")
    for err in errors:
        out.append(f"<p style='color:#b41e1e'>Model call failed — {html.escape(err)}</p>")
    if plan:
        out.append("<h3>Plan: the metric as the question was read</h3><pre style='background:#f4f4f4;padding:6px'>"
                   + html.escape("\n".join(plan)) + "</pre>")
    if answer.program:
        out.append("<h3>Program</h3><pre style='background:#f4f4f4;padding:6px'>"
                   f"{html.escape(answer.program)}</pre>")
        c = answer.computed
        if c is not None:
            rest = {k: v for k, v in to_json(c).items() if k != "value" and v is not None}
            out.append(f"<p><b>Computed value:</b> {html.escape(fmt_number(c.value, 6))}"
                       + (f" <span style='color:#666'>{html.escape(json.dumps(rest, default=str))}</span>" if rest else "")
                       + "</p>")
    if answer.quotes:
        rows = "".join(
            f"<tr><td>[{q.number}]</td><td>{html.escape(' '.join(q.text.split()))}</td>"
            f"<td>{html.escape(q.doc_name)}</td><td align='right'>{page_number(q.page_index, q.printed_folio)}</td>"
            f"<td>{html.escape(q.section)}</td><td align='right'>{q.score:.4f}</td></tr>" for q in answer.quotes)
        out.append("<h3>Quoted evidence: the sentences the synthesis may cite, ranked without a model (question "
                   "similarity, BM25 and the passage's rank, fused)</h3>"
                   "<table border='1' cellspacing='0' cellpadding='4' style='border-color:#ccc'>"
                   "<tr><th>Quote</th><th>Sentence, as printed</th><th>Filing</th><th>Page</th><th>Section</th>"
                   f"<th>Score</th></tr>{rows}</table>")
    if answer.inputs:
        rows = "".join(
            f"<tr><td>{_fact_link(i)}</td><td>{html.escape(i.row or i.item)}</td><td>{html.escape(i.period)}</td>"
            f"<td align='right'>{html.escape(i.printed)}</td><td>{html.escape(i.scale or '')}</td>"
            f"<td>{html.escape(i.doc_name)}</td>"
            f"<td align='right'>{page_number(i.page_index, i.printed_folio) if i.fact_id else ''}</td>"
            f"<td>{html.escape(i.chosen())}</td></tr>"
            for i in answer.inputs)
        out.append("<h3>Inputs: each read from a statement cell (click one to see it on its page)</h3>"
                   "<table border='1' cellspacing='0' cellpadding='4' style='border-color:#ccc'>"
                   "<tr><th>Input</th><th>Row</th><th>Period</th><th>Printed</th><th>Scale</th><th>Filing</th>"
                   f"<th>Page</th><th>How it was chosen</th></tr>{rows}</table>")
    if answer.grounding:
        rows = "".join(
            f"<tr><td>{html.escape(g.variable)}</td><td align='right'>{html.escape(fmt_number(g.value, 6))}</td>"
            f"<td align='center'>{', '.join(f'[{x}]' for x in g.cited) or '—'}</td>"
            f"<td style='color:{'#1e7832' if g.verified else '#b41e1e'}'>{'✓ found' if g.verified else '✗ not found'}</td>"
            f"<td>{html.escape(', '.join(f'[{x}]' for x in g.found_in) or '—')}</td></tr>"
            for g in answer.grounding)
        out.append("<h3>Grounding: is each figure printed in the passage it cites?</h3>"
                   "<table border='1' cellspacing='0' cellpadding='4' style='border-color:#ccc'>"
                   "<tr><th>Variable</th><th>Value</th><th>Cited</th><th>In cited passage</th><th>Printed in</th></tr>"
                   f"{rows}</table>")
    if answer.reasoning:
        out.append(f"<h3>Reasoning</h3><p>{html.escape(answer.reasoning)}</p>")
    if passages:
        items = "".join(f"<li>[{p.id}] {html.escape(cite(p.doc_name, p.page_index, p.printed_folio))} — "
                        f"{html.escape(p.title)}</li>"
                        for p in passages)
        out.append(f"<h3>Passages given to the answer step</h3><ul>{items}</ul>")
    if answer.citations:
        items = "".join(f"<li>[{c.passage_id}] {html.escape(cite(c.doc_name, c.page_index, c.printed_folio))}"
                        "</li>"
                        for c in answer.citations)
        out.append(f"<h3>Citations</h3><ul>{items}</ul>")
    return "".join(out)


class InspectView(QWidget):
    open_evidence = Signal(str, object, object)  # doc_name, chunk_id, page index
    open_fact_id = Signal(int)  # an answer's input: show its cell on its page

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_id = ""
        self.run: StoredRun | None = None
        self.events: list[StageTrace] = []
        self.header = _label("No run open. Ask a question, or open a past run from History.")
        self.header.setStyleSheet("font-size:11pt")
        self.tabs = QTabWidget()

        self.overview = RecordTableModel(OVERVIEW_COLUMNS, parent=self)
        self.overview_table = make_table(self.overview)
        self.totals = _label()
        ov = QWidget()
        ol = QVBoxLayout(ov)
        ol.setContentsMargins(4, 4, 4, 4)
        ol.addWidget(self.totals)
        ol.addWidget(self.overview_table, 1)

        self.documents = RoundTable(DOC_COLUMNS, "No document retrieval in this run.")
        self.passages = RoundTable(PASSAGE_COLUMNS, "No passage retrieval in this run.")
        self.passages.open_row.connect(self._open_row)
        self.curation = CurationTab()
        self.curation.open_row.connect(self._open_row)
        self.cards = CardsTab()
        self.cards.open_row.connect(self._open_row)
        self.tournament = TournamentTab()
        self.tournament.open_row.connect(self._open_row)
        self.answer = QTextBrowser()
        self.answer.setOpenLinks(False)
        self.answer.anchorClicked.connect(self._answer_link)
        self.facts = QTextBrowser()  # the sufficiency check over the statement facts (hidden when none ran)
        self.facts.setOpenLinks(False)
        self.facts.anchorClicked.connect(self._answer_link)

        self.raw_model = JsonTreeModel({})
        self.raw_tree = QTreeView()
        self.raw_tree.setModel(self.raw_model)
        self.raw_tree.setAlternatingRowColors(True)
        self.raw_tree.setUniformRowHeights(True)
        self.raw_tree.selectionModel().currentChanged.connect(self._raw_selected)
        self.raw_detail = QPlainTextEdit()
        self.raw_detail.setReadOnly(True)
        self.raw_detail.setPlaceholderText("Select a field to see its full value (prompts, raw model output, …)")
        mono = self.raw_detail.font()
        mono.setFamily("monospace")
        mono.setStyleHint(mono.StyleHint.Monospace)
        self.raw_detail.setFont(mono)
        self.raw_path = _label()
        raw_right = QWidget()
        rr = QVBoxLayout(raw_right)
        rr.setContentsMargins(0, 0, 0, 0)
        rr.addWidget(self.raw_path)
        rr.addWidget(self.raw_detail, 1)
        self.raw_split = QSplitter(Qt.Orientation.Horizontal)
        self.raw_split.addWidget(self.raw_tree)
        self.raw_split.addWidget(raw_right)
        self.raw_split.setSizes([520, 520])

        for w, name in ((ov, "Stages"), (self.facts, "Facts"), (self.documents, "Documents"),
                        (self.passages, "Passages"), (self.curation, "Curation"), (self.cards, "Cards"),
                        (self.tournament, "Tournament"), (self.answer, "Answer"), (self.raw_split, "Raw")):
            self.tabs.addTab(w, name)
        self.tabs.setTabToolTip(self.tab_names().index("Passages"), "Double-click a passage to open its page")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.header)
        lay.addWidget(self.tabs, 1)
        self.show_run(None)

    def tab_names(self) -> list[str]:
        return [self.tabs.tabText(i) for i in range(self.tabs.count())]

    def select_tab(self, name: str) -> QWidget:
        i = self.tab_names().index(name)
        self.tabs.setCurrentIndex(i)
        return self.tabs.widget(i)

    # -- loading ----------------------------------------------------------------------------------
    def load_run(self, library: Any, run_id: str) -> None:
        """Show a stored run's trace."""
        from engine.trace import read_run

        self.show_run(read_run(library, run_id))

    def clear(self) -> None:
        """Show no run (the open one was deleted)."""
        self.show_run(None)
        self.answer.clear()

    def start_live(self, question: str) -> None:
        self.show_run(StoredRun("", "hirec", question, "running", "", None, "", None, None, ()))

    def add_live_event(self, trace: StageTrace) -> None:
        if self.run is not None:
            self.show_run(replace(self.run, traces=(*self.run.traces, trace)))

    def show_run(self, run: StoredRun | None) -> None:
        self.run = run
        self.run_id = run.id if run else ""
        self.events = list(run.traces) if run else []
        self._header()
        self.overview.set_records(self.events)
        fit_columns(self.overview_table, 240)
        secs = sum(e.seconds for e in self.events)
        tin = sum(e.tokens_in for e in self.events)
        tout = sum(e.tokens_out for e in self.events)
        calls = sum(len(e.llm_calls) for e in self.events)
        self.totals.setText(f"{len(self.events)} stages · {secs:.2f} s in stages · {tin} tokens in / {tout} out · "
                            f"{calls} model calls")
        by = lambda s: [e for e in self.events if e.stage == s]  # noqa: E731
        self.facts.setHtml(facts_html(self.events))
        self.tabs.setTabVisible(self.tab_names().index("Facts"), bool(by("facts")))
        self.documents.set_events(by("documents"))
        self.passages.set_events(by("passages"))
        self.curation.set_events(by("curation"), by("curation-stop"), _why_no_curation(self.events))
        scorer = next((e.payload.scorer for e in reversed(self.events) if isinstance(e.payload, PassagesPayload)), "")
        self.cards.set_events(self.events, scorer)
        self.tournament.set_events(self.events, scorer)
        ans = [e for e in self.events if isinstance(e.payload, AnswerPayload)]
        plan = plan_lines(self.events)
        if ans:
            p = ans[-1].payload
            assert isinstance(p, AnswerPayload)
            self.answer.setHtml(answer_detail_html(p.answer, p.passages, _call_errors(ans[-1]), plan=plan))
        else:
            a = (run.answer if run else None) or AnswerResult("", "")
            reason = a.reason or (run.error if run else "") or (
                "the run is still going" if run is not None and run.status == "running"
                else "the run ended before the answer step")
            self.answer.setHtml(answer_detail_html(replace(a, reason=reason), (), [], no_stage=not a.status,
                                                   plan=plan))
        self.raw_model.set_root({f"{e.seq:02d} · {e.stage} · round {e.round}": event_json(e) for e in self.events})
        self.raw_tree.resizeColumnToContents(0)
        self.raw_detail.clear()

    def _header(self) -> None:
        r = self.run
        if r is None:
            self.header.setText("No run open. Ask a question, or open a past run from History.")
            return
        color, label = STATUS_STYLE.get(r.status, ("#444", r.status))
        rid = f"run <code>{html.escape(r.id)}</code> · " if r.id else ""
        when = f" · {html.escape(local_time(r.started_at))}" if r.started_at else ""
        self.header.setText(f"<b>{html.escape(r.question)}</b><br>{rid}"
                            f"<span style='color:{color}'>{html.escape(label)}</span>{when}")

    def _open_row(self, row: Any) -> None:
        """A passage (or a curated one) double-clicked: its page, the passage highlighted."""
        self.open_evidence.emit(row.doc_name, row.chunk_id, row.page_index)

    def _answer_link(self, url: Any) -> None:
        if url.scheme() == FACT_SCHEME and url.path().isdigit():
            self.open_fact_id.emit(int(url.path()))

    def _raw_selected(self, current: Any, _previous: Any) -> None:
        if not current.isValid():
            return
        idx = current.siblingAtColumn(0)
        self.raw_path.setText(self.raw_model.path(idx))
        self.raw_detail.setPlainText(json_full_text(self.raw_model.value(idx)))
