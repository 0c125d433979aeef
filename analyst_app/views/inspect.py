"""The Inspect tab: every stage of one run's trace (``RunStore.events``), one sub-tab per stage kind,
plus the raw JSON payloads with prompts and model outputs."""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPlainTextEdit, QSplitter, QTabWidget, QTextBrowser,
    QTreeView, QVBoxLayout, QWidget,
)

from analyst_app.models import (
    Column, JsonTreeModel, RecordTableModel, fmt_number, human_page, json_full_text, local_time,
)
from analyst_app.views.ask import STATUS_STYLE, stage_summary
from analyst_app.views.library import fit_columns, make_table

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
    Column("Page", "page", fmt=human_page, numeric=True),
    Column("BM25", "bm25", numeric=True),
    Column("BM25 rank", "bm25_rank", numeric=True),
    Column("Dense", "dense", numeric=True),
    Column("Dense rank", "dense_rank", numeric=True),
    Column("Line item", "line_item_rank", numeric=True,
           tip="Rank among the table chunks whose row labels print the asked metric (or a ratio's components)"),
    Column("Rows", lambda e: "; ".join(e.get("line_items") or []), tip="The matching row labels"),
    Column("RRF", "rrf", numeric=True, tip="Reciprocal-rank fusion of BM25, dense, filing rank and line items"),
    Column("Final", "final", numeric=True),
    Column("Kept", "kept"),
    Column("Snippet", "snippet"),
]
SHOWN_COLUMNS = [
    Column("#", "id", numeric=True, tip="The passage number the curator saw"),
    Column("Verdict", "verdict"),
    Column("Document", "doc_name"),
    Column("Page", "page", fmt=human_page, numeric=True),
    Column("Title", "title"),
]
OVERVIEW_COLUMNS = [
    Column("#", "seq", numeric=True),
    Column("Stage", "stage"),
    Column("Round", "round", numeric=True),
    Column("Seconds", "seconds", fmt=lambda v: f"{v:.2f}", numeric=True),
    Column("Tokens in", "tokens_in", numeric=True),
    Column("Tokens out", "tokens_out", numeric=True),
    Column("Model calls", lambda e: len(e["payload"].get("llm_calls", [])), numeric=True),
    Column("Summary", stage_summary),
]
TOURNAMENT_STAGES = {"cards": "card", "tournament": "tournament"}


def _label(text: str = "") -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return lab


def _call_errors(payload: dict) -> list[str]:
    return [f"{c.get('purpose')}: {c['error']}" for c in payload.get("llm_calls", []) if c.get("error")]


class RoundTable(QWidget):
    """A round selector, a line about the round's query/scorer, and the round's candidate table."""

    open_row = Signal(object)  # the candidate dict

    def __init__(self, columns: list[Column], empty: str) -> None:
        super().__init__()
        self.events: list[dict] = []
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

    def set_events(self, events: list[dict]) -> None:
        keep = self.round_box.currentIndex()
        self.events = events
        self.round_box.blockSignals(True)
        self.round_box.clear()
        for e in events:
            self.round_box.addItem(f"Round {e['round']} of {len(events)}")
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
        p = e["payload"]
        self.model.set_records(p.get("candidates", []))
        self.proxy.sort(-1)
        bits = [f"<b>query</b> {html.escape(str(p.get('query', '')))}"]
        if p.get("lexical_query"):
            bits.append(f"<b>BM25 query</b> {html.escape(p['lexical_query'])}")
        bits.append(f"<b>scorer</b> {html.escape(str(p.get('scorer', '')))}")
        if p.get("filter") and p["filter"] != "none":
            bits.append(f"<b>filter</b> {html.escape(p['filter'])}")
        if "n_candidates" in p:
            bits.append(f"{len(p.get('candidates', []))} of {p['n_candidates']} candidates shown, {p.get('k_keep')} kept")
        elif "prefilter" in p:
            bits.append(f"{p['prefilter']} passages after the prefilter, {p.get('k_keep')} kept")
        bits.append(f"{e['seconds']:.2f} s")
        self.info.setText(" · ".join(bits))
        fit_columns(self.table, 320)


class CurationTab(QWidget):
    """One entry per curation round: the passages shown with the curator's verdict, and its judgement."""

    open_row = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.rounds: list[dict] = []
        self.stops: dict[int, dict] = {}
        self.list = QListWidget()
        self.list.setMinimumWidth(190)
        self.list.setSpacing(3)
        self.list.setWordWrap(True)
        self.list.currentRowChanged.connect(self._show)
        self.detail = QTextBrowser()
        self.detail.setMinimumHeight(120)
        self.model = RecordTableModel(SHOWN_COLUMNS, kept=lambda r: r["verdict"] == "kept", parent=self)
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

    def set_events(self, rounds: list[dict], stops: list[dict]) -> None:
        keep = self.list.currentRow()
        self.rounds, self.stops = rounds, {s["round"]: s for s in stops}
        self.list.blockSignals(True)
        self.list.clear()
        for e in rounds:
            p = e["payload"]
            verdict = "answerable" if p.get("answerable") else "not answerable"
            item = QListWidgetItem(f"Round {e['round']}\n{verdict}\nkept {len(p.get('kept', []))} of "
                                   f"{len(p.get('shown', []))} shown")
            item.setForeground(QColor("#1e7832") if p.get("answerable") else QColor("#8a5a00"))
            self.list.addItem(item)
        self.list.blockSignals(False)
        if rounds:
            self.list.setCurrentRow(keep if 0 <= keep < len(rounds) else 0)
        self._show(self.list.currentRow())

    def _show(self, row: int) -> None:
        if not 0 <= row < len(self.rounds):
            self.model.set_records([])
            self.detail.setHtml("<p style='color:#777'>No curation round in this run (it stopped before curation, "
                                "or is still retrieving).</p>")
            return
        e = self.rounds[row]
        p = e["payload"]
        kept, dropped = set(p.get("kept", [])), set(p.get("dropped", []))
        rows = []
        for s in p.get("shown", []):
            verdict = "kept" if s["chunk_id"] in kept else "dropped" if s["chunk_id"] in dropped else "not judged"
            rows.append({**s, "verdict": verdict})
        self.model.set_records(rows)
        fit_columns(self.table, 320)
        facts = [("Answerable", "yes" if p.get("answerable") else "no"),
                 ("Shown / kept / dropped", f"{len(p.get('shown', []))} / {len(kept)} / {len(dropped)}"),
                 ("Missing information", p.get("missing_information") or "—"),
                 ("Complementary question", p.get("complementary_question") or "—"),
                 ("Tokens in / out", f"{e['tokens_in']} / {e['tokens_out']}"),
                 ("Seconds", f"{e['seconds']:.2f}")]
        if p.get("model_output_usable") is False:
            facts.append(("Model output", "unusable: every passage was kept and the run went on"))
        for err in _call_errors(p):
            facts.append(("Model call failed", err))
        stop = self.stops.get(e["round"])
        if stop:
            facts.append(("Loop ended", stop["payload"].get("reason", "")))
        cells = "".join(f"<tr><td style='color:#555;padding-right:14px;white-space:nowrap'>{html.escape(k)}</td>"
                        f"<td>{html.escape(str(v))}</td></tr>" for k, v in facts)
        self.detail.setHtml(f"<h3 style='margin:2px'>Curation round {e['round']}</h3><table>{cells}</table>"
                            "<p style='color:#777'>Below: the passages the curator saw and its verdict on each; "
                            "double-click one to open its page.</p>")


class StagePlaceholder(QWidget):
    """Cards / Tournament: the stages when a run has them, otherwise a plain statement that it has none."""

    def __init__(self, stage: str, what: str) -> None:
        super().__init__()
        self.stage, self.what = stage, what
        self.note = _label()
        self.note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.note.setStyleSheet("color:#555;padding:12px;font-size:11pt")
        self.model = JsonTreeModel([])
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setAlternatingRowColors(True)
        self.tree.setVisible(False)
        lay = QVBoxLayout(self)
        lay.addWidget(self.note)
        lay.addWidget(self.tree, 1)
        self.events: list[dict] = []

    def set_events(self, events: list[dict], scorer: str = "") -> None:
        self.events = [e for e in events if e["stage"] == self.stage]
        if not self.events:
            how = f" Passages were ranked by {scorer}." if scorer else ""
            self.note.setText(f"This run used no {self.what}.{how}\n\nRuns with “{self.stage}” stages list them here, "
                              "round by round.")
            self.tree.setVisible(False)
        else:
            self.note.setText(f"{len(self.events)} “{self.stage}” stage(s) in this run.")
            self.model.set_root({f"{e['seq']:02d} · {e['stage']} · round {e['round']}": e for e in self.events})
            self.tree.setVisible(True)
            self.tree.expandToDepth(0)
            self.tree.resizeColumnToContents(0)


def _row_cell(g: dict) -> str:
    """The row check of one figure: on the row whose label the model copied, off it, or not checkable."""
    label = html.escape(str(g.get("label") or ""))
    if g.get("on_row") is True:
        return f"<span style='color:#1e7832'>✓ {label}</span>"
    if g.get("on_row") is False:
        return f"<span style='color:#b41e1e'>✗ not on '{label}'</span>"
    return f"<span style='color:#666'>— no row '{label}'</span>" if label else "—"


def answer_detail_html(answer: dict, passages: list[dict], errors: list[str]) -> str:
    status = answer.get("status", "")
    color, label = STATUS_STYLE.get(status, ("#444", status or "no answer stage"))
    out = [f"<p><span style='background:{color};color:white;padding:2px 6px'>&nbsp;{html.escape(label)}&nbsp;</span></p>",
           f"<p style='font-size:15pt;font-weight:600'>{html.escape(answer.get('text') or '(no answer)')}</p>"]
    facts = []
    if answer.get("value") is not None:
        facts.append(f"value {fmt_number(answer['value'], 6)} {html.escape(str(answer.get('unit') or ''))}")
    if answer.get("method"):
        facts.append(f"method {html.escape(answer['method'])}")
    if facts:
        out.append("<p>" + " · ".join(facts) + "</p>")
    if answer.get("reason"):
        out.append(f"<p style='color:#8a5a00'>Note: {html.escape(answer['reason'])}</p>")
    for err in errors:
        out.append(f"<p style='color:#b41e1e'>Model call failed — {html.escape(err)}</p>")
    if answer.get("program"):
        out.append("<h3>Program</h3><pre style='background:#f4f4f4;padding:6px'>"
                   f"{html.escape(answer['program'])}</pre>")
        computed = answer.get("computed") or {}
        if computed:
            value = computed.get("value")
            rest = {k: v for k, v in computed.items() if k != "value"}
            out.append(f"<p><b>Computed value:</b> {html.escape(fmt_number(value, 6) if value is not None else '—')}"
                       + (f" <span style='color:#666'>{html.escape(json.dumps(rest, default=str))}</span>" if rest else "")
                       + "</p>")
    grounding = answer.get("grounding") or []
    if grounding:
        rows = "".join(
            f"<tr><td>{html.escape(str(g.get('variable')))}</td><td align='right'>{html.escape(fmt_number(g.get('value'), 6))}</td>"
            f"<td align='center'>[{g.get('passage')}]</td>"
            f"<td style='color:{'#1e7832' if g.get('verified') else '#b41e1e'}'>{'✓ found' if g.get('verified') else '✗ not found'}</td>"
            f"<td>{html.escape(', '.join(f'[{x}]' for x in g.get('found_in', [])) or '—')}</td>"
            f"<td>{_row_cell(g)}</td></tr>"
            for g in grounding)
        out.append("<h3>Grounding: is each figure printed in the passage it cites, on the row it names?</h3>"
                   "<table border='1' cellspacing='0' cellpadding='4' style='border-color:#ccc'>"
                   "<tr><th>Variable</th><th>Value</th><th>Cited</th><th>In cited passage</th><th>Printed in</th>"
                   "<th>On the row named</th></tr>"
                   f"{rows}</table>")
    if answer.get("reasoning"):
        out.append(f"<h3>Reasoning</h3><p>{html.escape(answer['reasoning'])}</p>")
    if passages:
        items = "".join(f"<li>[{p['id']}] {html.escape(p['doc_name'])} p.{human_page(p['page'])} — {html.escape(p.get('title', ''))}</li>"
                        for p in passages)
        out.append(f"<h3>Passages given to the answer step</h3><ul>{items}</ul>")
    cites = answer.get("citations") or []
    if cites:
        items = "".join(f"<li>[{c['passage_id']}] {html.escape(c['doc_name'])} p.{human_page(c['page'])}</li>" for c in cites)
        out.append(f"<h3>Citations</h3><ul>{items}</ul>")
    return "".join(out)


class InspectView(QWidget):
    open_evidence = Signal(str, object, object)  # doc_name, chunk_id, page

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_id = ""
        self.events: list[dict] = []
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
        self.passages.open_row.connect(lambda r: self.open_evidence.emit(r["doc_name"], r.get("chunk_id"), r.get("page")))
        self.curation = CurationTab()
        self.curation.open_row.connect(lambda r: self.open_evidence.emit(r["doc_name"], r.get("chunk_id"), r.get("page")))
        self.cards = StagePlaceholder("cards", "card scoring (passage cards)")
        self.tournament = StagePlaceholder("tournament", "card tournament")
        self.answer = QTextBrowser()

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

        for w, name in ((ov, "Stages"), (self.documents, "Documents"), (self.passages, "Passages"),
                        (self.curation, "Curation"), (self.cards, "Cards"), (self.tournament, "Tournament"),
                        (self.answer, "Answer"), (self.raw_split, "Raw")):
            self.tabs.addTab(w, name)
        self.tabs.setTabToolTip(2, "Double-click a passage to open its page")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.header)
        lay.addWidget(self.tabs, 1)
        self.show_events("", {}, [])

    def tab_names(self) -> list[str]:
        return [self.tabs.tabText(i) for i in range(self.tabs.count())]

    def select_tab(self, name: str) -> QWidget:
        i = self.tab_names().index(name)
        self.tabs.setCurrentIndex(i)
        return self.tabs.widget(i)

    # -- loading ----------------------------------------------------------------------------------
    def load_run(self, library: Any, run_id: str) -> None:
        """Show a stored run's trace from ``RunStore``."""
        from engine.store.library import RunStore

        store = RunStore(library)
        row = store.get(run_id)
        meta = {k: row[k] for k in row.keys()}
        self.show_events(row["id"], meta, store.events(row["id"]))

    def clear(self) -> None:
        """Show no run (the open one was deleted)."""
        self.show_events("", {}, [])
        self.answer.clear()

    def start_live(self, question: str) -> None:
        self.show_events("", {"question": question, "status": "running"}, [])

    def add_live_event(self, event: dict) -> None:
        self.events.append(event)
        self.show_events(self.run_id, self.meta, self.events)

    def show_events(self, run_id: str, meta: dict, events: list[dict]) -> None:
        self.run_id, self.meta, self.events = run_id, meta, list(events)
        self._header()
        self.overview.set_records(self.events)
        fit_columns(self.overview_table, 240)
        secs = sum(e["seconds"] for e in self.events)
        tin = sum(e["tokens_in"] for e in self.events)
        tout = sum(e["tokens_out"] for e in self.events)
        calls = sum(len(e["payload"].get("llm_calls", [])) for e in self.events)
        self.totals.setText(f"{len(self.events)} stages · {secs:.2f} s in stages · {tin} tokens in / {tout} out · "
                            f"{calls} model calls")
        by = lambda s: [e for e in self.events if e["stage"] == s]  # noqa: E731
        self.documents.set_events(by("documents"))
        self.passages.set_events(by("passages"))
        self.curation.set_events(by("curation"), by("curation-stop"))
        scorer = next((e["payload"].get("scorer", "") for e in reversed(self.events) if e["stage"] == "passages"), "")
        self.cards.set_events(self.events, scorer)
        self.tournament.set_events(self.events, scorer)
        ans = by("answer")
        if ans:
            p = ans[-1]["payload"]
            self.answer.setHtml(answer_detail_html(p.get("answer", {}), p.get("passages", []), _call_errors(p)))
        else:
            result = json.loads(meta.get("result") or "{}") if meta.get("result") else {}
            a = result.get("answer") or {}
            reason = a.get("reason") or meta.get("error") or ("the run is still going" if meta.get("status") == "running"
                                                             else "the run ended before the answer step")
            self.answer.setHtml(answer_detail_html({**a, "reason": reason}, [], []))
        self.raw_model.set_root({f"{e['seq']:02d} · {e['stage']} · round {e['round']}": e for e in self.events})
        self.raw_tree.resizeColumnToContents(0)
        self.raw_detail.clear()

    def _header(self) -> None:
        m = self.meta
        if not m:
            self.header.setText("No run open. Ask a question, or open a past run from History.")
            return
        status = m.get("status", "")
        color, label = STATUS_STYLE.get(status, ("#444", status))
        rid = f"run <code>{html.escape(self.run_id)}</code> · " if self.run_id else ""
        when = f" · {html.escape(local_time(m.get('started_at')))}" if m.get("started_at") else ""
        self.header.setText(f"<b>{html.escape(m.get('question', ''))}</b><br>{rid}"
                            f"<span style='color:{color}'>{html.escape(label)}</span>{when}")

    def _raw_selected(self, current: Any, _previous: Any) -> None:
        if not current.isValid():
            return
        idx = current.siblingAtColumn(0)
        self.raw_path.setText(self.raw_model.path(idx))
        self.raw_detail.setPlainText(json_full_text(self.raw_model.value(idx)))
