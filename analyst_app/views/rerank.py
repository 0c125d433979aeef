"""Inspect's Cards and Tournament tabs: a run's card-based passage ranking (engine.rerank, the ``rerank`` stage).

Cards: every Stage 1 candidate with the terms that placed it, and the selected candidate's evidence card with the
fields that matched the question's intent marked. Tournament: the rank of the leading finalists round by round
(FinCards Stage 3) with the early-stop test, or the referee's Elo ratings match by match (the multi-agent
variant), then the finalists' scores and every model call's group with its picks and reasons."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QSizePolicy, QSplitter, QTextBrowser, QVBoxLayout, QWidget,
)

from analyst_app.models import Column, RecordTableModel, fmt_number, page_column
from analyst_app.views.library import fit_columns, make_table, wrapped_label as _label
from engine.pages import cite
from engine.records import Card, RerankGroup, RerankPayload, RerankRow, StageTrace

MARK = "background:#d6f5dc"  # a card field the intent matched

CARD_COLUMNS = [
    Column("Rank", "rank", numeric=True, tip="Place in the final ranking (the first k_P are kept)"),
    Column("Document", "doc_name"),
    page_column(),
    Column("Stage 1", "stage1_rank", numeric=True, tip="BM25 rank within the chosen filings (FinCards Stage 1)"),
    Column("BM25", "bm25", numeric=True),
    Column("Align", "align", numeric=True, tip="Alignment of the card with the question's intent (eq. 8)"),
    Column("Terms", "align_terms", tip="Eq. 8's terms: entity and metric overlap, period match, printed numbers"),
    Column("Matched", lambda r: " · ".join(r.matched), tip="The card fields that match the intent"),
    Column("Final", "final", numeric=True),
    Column("Kept", "kept"),
    Column("Type", lambda r: r.card.evidence_type if r.card else ""),
    Column("Section", lambda r: r.card.section if r.card else ""),
    Column("Moved", "moved", tip="Why the diversity step moved it down"),
]
FINALIST_COLUMNS = [
    Column("Rank", "rank", numeric=True),
    Column("Document", "doc_name"),
    page_column(),
    Column("Screen", "screen_score", numeric=True,
           tip="Stage 2: the screening call's relevance, 1–5 (0–100 in runs stored before 2026-11-27)"),
    Column("Borda", "borda", numeric=True, tip="Stage 3: normalised Borda scores summed over the rounds (eq. 9)"),
    Column("Ranks by round", lambda r: " → ".join(str(x) for x in r.round_ranks),
           tip="Stage 3: its place in its bootstrap group, round by round (1 = best)"),
    Column("Listwise", "listwise_rank", numeric=True, tip="Multi-agent: the listwise judge's rank"),
    Column("Elo", "elo", numeric=True, tip="Multi-agent: the referee's final rating"),
    Column("RRF", "rrf", numeric=True, tip="Multi-agent: fusion of the listwise and pairwise orders (eq. 7)"),
    Column("Final", "final", numeric=True),
    Column("Kept", "kept"),
]
GROUP_COLUMNS = [
    Column("Stage", "stage", tip="screen (FinCards Stage 2) · bootstrap (Stage 3) · pick (batch picker) · "
                                 "judge (listwise judge)"),
    Column("Round", "round", numeric=True),
    Column("Group", "group", numeric=True),
    Column("Shown", lambda g: len(g.members), numeric=True),
    Column("Returned", lambda g: len(g.order), numeric=True, tip="Picks (screen, pick) or the ranking's length"),
    Column("Scores", lambda g: ", ".join(str(s) for s in g.scores)),
    Column("Fallback", "fallback", tip="What the engine did where the model's output was unusable or incomplete"),
]


def _where(row: RerankRow) -> str:
    return cite(row.doc_name, row.page_index, row.printed_folio)


# -- the card with its matched fields ----------------------------------------------------------------------------

def matched_marks(matched: Sequence[str]) -> dict[str, set[str]]:
    """The trace's matched fields ("metric: revenue", "period: FY2022, 2022-12") as field → lower-cased values."""
    out: dict[str, set[str]] = {}
    for m in matched:
        kind, _, value = m.partition(": ")
        values = value.split(", ") if kind == "period" else [value]
        out.setdefault(kind, set()).update(v.strip().lower() for v in values)
    return out


def _intent(fields: Sequence[str], name: str) -> str:
    return next((f.partition(": ")[2] for f in fields if f.startswith(f"{name}: ")), "")


@dataclass(frozen=True)
class CardField:
    """One line of the card view: a field, its values, which of them matched the intent."""

    name: str
    values: tuple[str, ...]
    marked: tuple[bool, ...]
    whole: bool = False  # the field matched as a whole (printed figures for a numeric question)

    @property
    def any_marked(self) -> bool:
        return self.whole or any(self.marked)


def card_fields(card: Card, matched: Sequence[str], intent_fields: Sequence[str] = ()) -> list[CardField]:
    """The card as the view lists it, each value marked where the trace says it matched the intent."""
    marks = matched_marks(matched)
    low = lambda kind, v: v.lower() in marks.get(kind, set())  # noqa: E731
    topic = _intent(intent_fields, "topic")
    numbers = card.numbers[:40] + ((f"… {len(card.numbers) - 40} more",) if len(card.numbers) > 40 else ())
    out = [
        CardField("Topic", (card.topic,), (bool(topic) and topic != "Other" and card.topic == topic,)),
        CardField("Section", (card.section or "—",), (False,)),
        CardField("Statement", (card.statement or "—",), (low("statement", card.statement),)),
        CardField("Entities", card.entities, tuple(low("entity", e) for e in card.entities)),
        CardField("Metrics", card.metrics, tuple(low("metric", m) for m in card.metrics)),
        CardField("Periods", card.periods, tuple(low("period", p) for p in card.periods)),
        CardField("Numbers", numbers, tuple(False for _ in numbers), "numbers" in marks),
        CardField("Evidence type", (card.evidence_type,), (low("type", card.evidence_type),)),
        CardField("Claim role", (card.claim_role,), (False,)),
        CardField("Scope", (card.scope,), (False,)),
        CardField("Basis", (card.basis,), (False,)),
        CardField("Summary", (card.summary or "—",), (False,)),
        CardField("Made by", (card.source,), (False,)),
    ]
    if card.dropped:
        out.append(CardField("Dropped (not printed in the chunk)", card.dropped, tuple(False for _ in card.dropped)))
    return out


def card_html(row: RerankRow, intent_fields: Sequence[str] = ()) -> str:
    """The selected candidate's card: each field on a line, the values that matched the intent marked."""
    head = (f"<h3 style='margin:2px'>#{row.rank} · {html.escape(_where(row))}</h3>"
            f"<p>alignment {fmt_number(row.align)} ({html.escape(row.align_terms)}) · final {fmt_number(row.final)}"
            f" · {'kept' if row.kept else 'not kept'}{' · ' + html.escape(row.moved) if row.moved else ''}</p>")
    if row.card is None:
        return head + ("<p style='color:#777'>This run's trace predates stored cards: its matched fields were "
                       f"{html.escape(' · '.join(row.matched) or 'none')}.</p>")
    cells = []
    for f in card_fields(row.card, row.matched, intent_fields):
        vals = ", ".join(
            f"<span style='{MARK}'>&nbsp;✓ {html.escape(v)}&nbsp;</span>" if m else html.escape(v)
            for v, m in zip(f.values, f.marked)) if f.values else "<span style='color:#999'>none</span>"
        if not any(f.marked) and len(f.values) > 1:
            vals = html.escape(", ".join(f.values))
        if f.whole:
            vals = f"<span style='{MARK}'>&nbsp;✓ {len(f.values)} printed&nbsp;</span> {vals}"
        name = f"<b>{html.escape(f.name)}</b>" if f.any_marked else html.escape(f.name)
        cells.append(f"<tr><td style='color:#555;padding-right:14px;white-space:nowrap'>{name}</td><td>{vals}</td></tr>")
    return (head + f"<table cellpadding='2'>{''.join(cells)}</table>"
            f"<p style='color:#777'>Marked ✓: what matched the question's intent. Matched: "
            f"{html.escape(' · '.join(row.matched) or 'nothing')}</p>")


class _RerankTab(QWidget):
    """A run's rerank stages (one per retrieval round) behind a round selector; an empty statement without one."""

    open_row = Signal(object)  # a RerankRow: open its page

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what
        self.events: list[StageTrace] = []
        self.round_box = QComboBox()
        self.round_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.round_box.currentIndexChanged.connect(lambda _i: self._show_current())
        self.note = _label()
        self.note.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.body = QWidget()
        self.round_row = QWidget()
        top = QHBoxLayout(self.round_row)
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("Round"))
        top.addWidget(self.round_box)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.round_row)
        lay.addWidget(self.note)
        lay.addWidget(self.body, 1)

    @property
    def payload(self) -> RerankPayload | None:
        i = self.round_box.currentIndex()
        if 0 <= i < len(self.events):
            p = self.events[i].payload
            return p if isinstance(p, RerankPayload) else None
        return None

    def set_events(self, events: list[StageTrace], scorer: str = "") -> None:
        keep = self.round_box.currentIndex()
        self.events = [e for e in events if isinstance(e.payload, RerankPayload)]
        self.round_box.blockSignals(True)
        self.round_box.clear()
        for e in self.events:
            self.round_box.addItem(f"Round {e.round} of {len(self.events)}")
        self.round_box.blockSignals(False)
        self.round_box.setEnabled(len(self.events) > 1)
        if self.events:
            self.round_box.setCurrentIndex(keep if 0 <= keep < len(self.events) else len(self.events) - 1)
        self.body.setVisible(bool(self.events))
        self.round_row.setVisible(bool(self.events))
        if not self.events:
            how = f" Passages were ranked by {scorer}." if scorer else ""
            self.note.setStyleSheet("color:#555;padding:12px;font-size:11pt")
            self.note.setText(f"This run used no {self.what}.{how}\n\nRuns whose passages were ranked by evidence "
                              "cards (Settings › Rerank, or `ask --reranker cards|tournament|multiagent`) show "
                              "their “rerank” stage here, round by round.")
        self._show_current()

    def _show_current(self) -> None:
        p = self.payload
        if p is not None:
            self.note.setStyleSheet("")
            self.note.setText("")
            self.show_payload(p)
        self.note.setVisible(bool(self.note.text()))

    def show_payload(self, p: RerankPayload) -> None:
        raise NotImplementedError


class CardsTab(_RerankTab):
    """Every candidate with the terms that placed it; the selected one's card with its matched fields marked."""

    def __init__(self) -> None:
        super().__init__("evidence cards (a card-based passage ranking)")
        self.model = RecordTableModel(CARD_COLUMNS, kept="kept", parent=self)
        from PySide6.QtCore import QSortFilterProxyModel

        self.proxy = QSortFilterProxyModel(self)
        self.table = make_table(self.model, proxy=self.proxy)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # by final rank until the user sorts otherwise
        self.table.doubleClicked.connect(lambda idx: self.open_row.emit(self._row_at(idx.row())))
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self._show_card(cur.row()))
        self.card = QTextBrowser()
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.card)
        split.setSizes([420, 300])
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)

    def _row_at(self, view_row: int) -> RerankRow:
        row: RerankRow = self.model.record(self.proxy.mapToSource(self.proxy.index(view_row, 0)).row())
        return row

    def show_payload(self, p: RerankPayload) -> None:
        self.note.setText(
            f"<b>{html.escape(p.mode)}</b> · {p.n_chunks} chunks in the chosen filings, {p.stage1} Stage 1 candidates"
            f" · cards: {html.escape(p.cards or '—')}<br>Intent: {html.escape(' · '.join(p.intent_fields))}"
            + "".join(f"<br><span style='color:#555'>{html.escape(f)}</span>" for f in p.intent_pass
                    if not f.startswith("model added "))  # the intent line lists what was added
            + "".join(f"<br><span style='color:#8a5a00'>{html.escape(f)}</span>" for f in p.fallbacks)
            + "<br><span style='color:#777'>Select a passage to see its card; double-click to open its page.</span>")
        self.model.set_records(list(p.rows))
        fit_columns(self.table, 300)
        if p.rows:
            self.table.selectRow(0)
        self._show_card(0)

    def _show_card(self, view_row: int) -> None:
        p = self.payload
        if p is None or not 0 <= view_row < self.model.rowCount():
            self.card.clear()
            return
        self.card.setHtml(card_html(self._row_at(view_row), p.intent_fields))


# -- the tournament --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Series:
    """One line of the chart: (x step from 1, value) pairs."""

    label: str
    points: tuple[tuple[int, float], ...]


class RankChart(QWidget):
    """A line chart: one series per leading finalist over the x steps (bootstrap rounds or referee matches), the
    y axis inverted for ranks, and a note line under it (the stop criterion)."""

    COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
              "#17becf")

    def __init__(self) -> None:
        super().__init__()
        self.title, self.x_label, self.y_label, self.footer = "", "", "", ""
        self.series: list[Series] = []
        self.x_ticks: list[str] = []
        self.invert = True
        self.setMinimumHeight(220)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_data(self, title: str, x_label: str, y_label: str, series: list[Series], x_ticks: list[str],
                 invert: bool, footer: str) -> None:
        self.title, self.x_label, self.y_label, self.footer = title, x_label, y_label, footer
        self.series, self.x_ticks, self.invert = series, x_ticks, invert
        self.update()

    def paintEvent(self, _event: object) -> None:  # noqa: N802
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("white"))
        font = QFont(self.font())
        p.setFont(font)
        fm = p.fontMetrics()
        line = fm.height()
        legend_w = min(260, max((fm.horizontalAdvance(s.label) for s in self.series), default=0) + 30)
        # title, plot, tick labels, axis label, footer: one line each below the plot
        plot = QRectF(48, line * 1.6, max(40, self.width() - 48 - legend_w - 16),
                      max(40, self.height() - line * 1.6 - line * 3 - 8))
        p.setPen(QColor("#222"))
        p.drawText(QRectF(0, 2, self.width(), line), Qt.AlignmentFlag.AlignHCenter, self.title)
        p.setPen(QColor("#555"))
        p.drawText(QRectF(0, plot.bottom() + 2 * line + 6, self.width(), line), Qt.AlignmentFlag.AlignHCenter,
                   fm.elidedText(self.footer, Qt.TextElideMode.ElideRight, self.width() - 8))
        n = max(len(self.x_ticks), max((x for s in self.series for x, _ in s.points), default=0))
        values = [v for s in self.series for _, v in s.points]
        if not n or not values:
            p.drawText(plot, Qt.AlignmentFlag.AlignCenter, "nothing to plot")
            p.end()
            return
        lo, hi = min(values), max(values)
        if hi == lo:
            lo, hi = lo - 1, hi + 1
        x_of = lambda x: plot.left() + (plot.width() * (x - 1) / (n - 1) if n > 1 else plot.width() / 2)  # noqa: E731
        y_of = lambda v: plot.top() + plot.height() * ((v - lo) / (hi - lo) if self.invert else (hi - v) / (hi - lo))  # noqa: E731
        p.setPen(QPen(QColor("#bbb"), 1))
        p.drawRect(plot)
        p.setPen(QColor("#555"))
        for v in (lo, (lo + hi) / 2, hi):
            p.drawText(QRectF(0, y_of(v) - line / 2, 44, line), Qt.AlignmentFlag.AlignRight, fmt_number(v, 3))
        every = max(1, n // 20)  # at most about 20 tick labels
        for x in range(1, n + 1, every):
            tick = self.x_ticks[x - 1] if x <= len(self.x_ticks) else str(x)
            p.drawText(QRectF(x_of(x) - 40, plot.bottom() + 2, 80, line), Qt.AlignmentFlag.AlignHCenter, tick)
        p.drawText(QRectF(plot.left(), plot.bottom() + line + 2, plot.width(), line), Qt.AlignmentFlag.AlignHCenter,
                   self.x_label)
        p.save()
        p.translate(10, plot.center().y())
        p.rotate(-90)
        p.drawText(QRectF(-plot.height() / 2, -line / 2, plot.height(), line), Qt.AlignmentFlag.AlignHCenter,
                   self.y_label)
        p.restore()
        # the first series (the final #1) is painted last: where two lines run the same way, the best one shows
        for k in reversed(range(len(self.series))):
            p.setPen(QPen(QColor(self.COLORS[k % len(self.COLORS)]), 2))
            path = QPainterPath()
            for i, (x, v) in enumerate(self.series[k].points):
                pt = QPointF(x_of(x), y_of(v))
                if i == 0:
                    path.moveTo(pt)
                else:
                    path.lineTo(pt)
                p.drawEllipse(pt, 2.5, 2.5)
            p.drawPath(path)
        for k, s in enumerate(self.series):
            p.setPen(QPen(QColor(self.COLORS[k % len(self.COLORS)]), 2))
            y = plot.top() + k * line
            p.drawLine(QPointF(plot.right() + 10, y + line / 2), QPointF(plot.right() + 24, y + line / 2))
            p.setPen(QColor("#222"))
            p.drawText(QRectF(plot.right() + 28, y, legend_w - 28, line), Qt.AlignmentFlag.AlignLeft,
                       fm.elidedText(s.label, Qt.TextElideMode.ElideRight, int(legend_w - 28)))
        p.end()


def rank_series(p: RerankPayload, top: int = 10) -> list[Series]:
    """Stage 3: the leading finalists' place in their bootstrap group, round by round."""
    return [Series(f"#{r.rank} {_where(r)}", tuple((n, float(x)) for n, x in enumerate(r.round_ranks, start=1)))
            for r in p.rows if r.round_ranks][:top]


def elo_series(p: RerankPayload, top: int = 10) -> list[Series]:
    """The multi-agent referee: each of the leading rated passages' Elo rating after every match it played."""
    rows = {r.chunk_id: r for r in p.rows}
    rated = [r.chunk_id for r in p.rows if r.elo is not None][:top]
    paths: dict[int, list[tuple[int, float]]] = {i: [] for i in rated}
    for n, m in enumerate(p.matches, start=1):
        for cid, rating in ((m.a, m.rating_a), (m.b, m.rating_b)):
            if cid in paths:
                paths[cid].append((n, rating))
    return [Series(f"#{rows[i].rank} {_where(rows[i])}", tuple(paths[i])) for i in rated if paths[i]]


def stop_text(p: RerankPayload, stop_jaccard: float | None = None) -> str:
    """The early-stop test as the chart states it: each round's top-k Jaccard with the round before."""
    parts = [f"round {n}: {j:.2f}" for n, j in enumerate(p.jaccards, start=2)]
    test = f" (stop at ≥ {stop_jaccard})" if stop_jaccard is not None else ""
    return (f"Stopped: {p.stop or '—'}. Top-k Jaccard by round{test}: {', '.join(parts)}" if parts
            else f"Stopped: {p.stop or '—'}")


def group_html(g: RerankGroup, rows: dict[int, RerankRow]) -> str:
    """One model call's group: what it was shown and what it returned, with reasons and scores."""
    def name(cid: int) -> str:
        r = rows.get(cid)
        return html.escape(f"{_where(r)} (final #{r.rank})" if r else f"chunk {cid}")
    picks = "".join(
        f"<li>{name(cid)}"
        + (f" — score {g.scores[n]}" if n < len(g.scores) else "")
        + (f" — <i>{html.escape(g.reasons[n])}</i>" if n < len(g.reasons) and g.reasons[n] else "") + "</li>"
        for n, cid in enumerate(g.order))
    shown = "".join(f"<li>{name(cid)}</li>" for cid in g.members)
    what = "Picked" if g.stage in ("screen", "pick") else "Ranking returned"
    fb = f"<p style='color:#8a5a00'>Fallback: {html.escape(g.fallback)}</p>" if g.fallback else ""
    return (f"<h3 style='margin:2px'>{html.escape(g.stage)} · round {g.round} · group {g.group}</h3>{fb}"
            f"<p><b>{what}</b></p><ol>{picks}</ol><p><b>Shown ({len(g.members)})</b></p><ol>{shown}</ol>")


class TournamentTab(_RerankTab):
    """The rank-by-round chart with the stop criterion, the finalists' scores, and every model call's group."""

    def __init__(self) -> None:
        super().__init__("card tournament")
        self.summary = _label()
        self.chart = RankChart()
        self.finalists = RecordTableModel(FINALIST_COLUMNS, kept="kept", parent=self)
        self.finalist_table = make_table(self.finalists, sortable=False)
        self.finalist_table.doubleClicked.connect(lambda idx: self.open_row.emit(self.finalists.record(idx.row())))
        self.groups = RecordTableModel(GROUP_COLUMNS, parent=self)
        self.group_table = make_table(self.groups, sortable=False)
        self.group_table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self._show_group(cur.row()))
        self.group_detail = QTextBrowser()
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.group_table)
        bottom.addWidget(self.group_detail)
        bottom.setSizes([500, 500])
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.summary)
        tl.addWidget(self.chart, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        for w in (top, self.finalist_table, bottom):
            split.addWidget(w)
        split.setSizes([320, 220, 220])
        lay = QVBoxLayout(self.body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)

    def show_payload(self, p: RerankPayload) -> None:
        calls = len(p.groups) + len(p.matches)
        facts = [f"<b>{html.escape(p.mode)}</b> · seed {p.seed}", f"{p.stage1} candidates → {p.finalists} finalists",
                 f"{calls} model call(s)"]
        if p.rounds:
            facts.append(f"{p.rounds} bootstrap round(s)")
        if p.rank_variance is not None:
            facts.append(f"rank variance {fmt_number(p.rank_variance, 4)}")
        self.summary.setText(" · ".join(facts) + (f"<br>{html.escape(stop_text(p))}" if p.stop or p.jaccards else ""))
        if p.mode == "cards":
            self.chart.set_data("No tournament: cards only (no model call)", "", "", [], [], True,
                                "The ranking is the cards' score; see the Cards tab.")
        elif p.mode == "multiagent":
            self.chart.set_data("Referee Elo rating after each match (the listwise judge's top)", "match", "Elo",
                                elo_series(p), [str(i) for i in range(1, len(p.matches) + 1)], False,
                                f"{len(p.matches)} matches; the final order fuses the judge's and the referee's "
                                "orders (RRF) with λ·alignment")
        elif p.rounds:
            self.chart.set_data("Rank in its bootstrap group, round by round (1 = best; the final top 10)",
                                "bootstrap round", "rank", rank_series(p), [str(i) for i in range(1, p.rounds + 1)],
                                True, stop_text(p))
        else:
            self.chart.set_data("Stage 3 off: the finalists are ordered by their screening scores", "", "", [], [],
                                True, stop_text(p))
        self.finalists.set_records([r for r in p.rows if r.finalist])
        fit_columns(self.finalist_table, 300)
        self.groups.set_records(list(p.groups))
        fit_columns(self.group_table, 300)
        if p.groups:
            self.group_table.selectRow(0)
        self._show_group(0)

    def _show_group(self, row: int) -> None:
        p = self.payload
        if p is None or not 0 <= row < len(p.groups):
            self.group_detail.setHtml("<p style='color:#777'>No model call in this ranking.</p>")
            return
        self.group_detail.setHtml(group_html(p.groups[row], {r.chunk_id: r for r in p.rows}))
