"""Shared helpers for the app tests: a scripted two-round chat model and runs made with it."""

from __future__ import annotations

import contextlib

import json
import re
import time
from collections.abc import Callable

import jsonschema

from PySide6.QtCore import QTimer

from engine.errors import Cancelled
from engine.models.base import ChatResult
from engine.store import Library
from engine.trace import read_run
from tests.engine.scripted import figure_id, pick

PASSAGE = re.compile(r"\[(\d+)\] (.+?), page (\d+)(?: \(printed [^)\n]*\))?\n<<<\n(.*?)\n>>>", re.S)


def revenue_fact(truth: list[dict], year: str) -> dict:
    return next(f for f in truth if f["form"] == "10-K" and f["period"] == year and f["metric"] == "Total revenue"
                and f["fiscal_year_column"] == year)


class SchemaScriptedChat:
    """A ChatModel that answers by the kind of schema it is asked for (curation, formula, fact, text, rewrite)."""

    model_id = "scripted"

    def __init__(self, script: Callable[[str, list, int], dict]) -> None:
        self.script = script
        self.calls: list[str] = []

    @staticmethod
    def purpose(schema: dict) -> str:
        props = schema.get("properties", {})
        for key, purpose in (("relevant_ids", "curation"), ("facts", "formula"), ("fact", "fact"),
                             ("answer", "text"), ("query", "rewrite"), ("sentences", "quotes")):
            if key in props:
                return purpose
        return "unknown"

    def prefix_session(self):  # noqa: ANN201
        return contextlib.nullcontext()

    def complete_json(self, messages, schema, *, max_tokens=512, cancel=None):  # noqa: ANN001, ANN201
        purpose = self.purpose(schema)
        self.calls.append(purpose)
        out = self.script(purpose, list(messages), self.calls.count(purpose))
        if cancel is not None and cancel():  # polled "during generation", as the real model does
            raise Cancelled(f"{self.model_id}: the call was cancelled")
        jsonschema.validate(out, schema)
        raw = json.dumps(out)
        return ChatResult(out, raw, 100, 20, 1, 0.01, self.model_id, (raw,))


def two_round_chat(fact: dict) -> SchemaScriptedChat:
    """Curation says "not answerable" in round 1 (with a complementary question), "answerable" in round 2;
    the answer step names the true revenue figure where a passage prints it."""
    from engine.demo_corpus import format_amount

    value_text = format_amount(fact["value"])

    def script(purpose, messages, n):  # noqa: ANN001, ANN202
        shown = PASSAGE.findall(messages[-1]["content"])
        if purpose == "curation" and n == 1:
            return {"relevant_ids": [1], "answerable": False, "missing_information": "the income statement total",
                    "complementary_question": f"{fact['company']} consolidated statements of operations total revenue"}
        if purpose == "curation":
            return {"relevant_ids": list(range(1, min(3, len(shown)) + 1)), "answerable": True,
                    "missing_information": "", "complementary_question": ""}
        if purpose in ("formula", "fact"):
            return pick(purpose, figure_id(messages[-1]["content"], value_text, words="Total revenue") or 1)
        return {"reasoning": ["read from [1]"], "answer": "see [1]", "used_ids": [1], "insufficient": False}

    return SchemaScriptedChat(script)


def question_for(fact: dict) -> str:
    return f"What was {fact['company']}'s total revenue in fiscal {fact['period']}, in USD millions?"


def make_scripted_run(home, truth: list[dict], embedder, year: str = "2023") -> str:  # noqa: ANN001
    """A finished two-round run stored in the library at ``home``; returns its id."""
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from engine.store import Library

    fact = revenue_fact(truth, year)
    with Library(home) as library:
        settings = Settings(home=home).with_overrides(answer={"from_facts": False})  # the model-written path
        run = build_pipeline(settings, library, Models(embedder, two_round_chat(fact))).run(question_for(fact))
    return run.id


class StallMeter:
    """A 20 ms QTimer on the GUI thread; the longest gap between ticks is the longest event-loop stall.

    ``context`` (optional) names what was going on, so the worst gaps can be reported with it.
    """

    def __init__(self, context=None) -> None:  # noqa: ANN001
        self.gaps: list[float] = []
        self.worst: list[tuple[float, float, str]] = []  # (gap, seconds since start, context)
        self.context = context
        self._last = self._start = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(20)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        gap = now - self._last
        self.gaps.append(gap)
        if gap > 0.1:
            self.worst.append((round(gap, 3), round(now - self._start, 1), self.context() if self.context else ""))
        self._last = now

    def start(self) -> None:
        self._last = self._start = time.perf_counter()
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return max(self.gaps, default=0.0)


def events_by(events, stage):  # noqa: ANN001, ANN201
    return [e for e in events if e.stage == stage]


def check_inspect_matches_store(window, run_id):  # noqa: ANN001
    """Every Inspect tab shows what the library stored for the run (read back as typed stage records)."""
    iv = window.inspect_view
    events = list(read_run(Library(window.ctx.home), run_id).traces)
    assert iv.run_id == run_id and len(iv.events) == len(events)
    assert iv.tab_names() == ["Stages", "Facts", "Documents", "Passages", "Curation", "Cards", "Tournament", "Answer",
                              "Raw"]
    # the Facts tab shows only for a run that checked the statement facts
    facts = iv.tabs.isTabVisible(iv.tab_names().index("Facts"))
    assert facts == bool(events_by(events, "facts"))
    assert iv.overview.rowCount() == len(events)

    docs = events_by(events, "documents")
    tab = iv.select_tab("Documents")
    assert tab.round_box.count() == len(docs)
    for i, e in enumerate(docs):
        tab.round_box.setCurrentIndex(i)
        cands = e.payload.candidates
        assert tab.model.rowCount() == len(cands)
        assert [tab.model.record(r) for r in range(len(cands))] == list(cands)
        assert e.payload.scorer in tab.info.text()

    passages = events_by(events, "passages")
    tab = iv.select_tab("Passages")
    assert tab.round_box.count() == len(passages)
    for i, e in enumerate(passages):
        tab.round_box.setCurrentIndex(i)
        assert tab.model.rowCount() == len(e.payload.candidates)
        kept = [tab.model.record(r) for r in range(tab.model.rowCount()) if tab.model.record(r).kept]
        assert kept == list(e.payload.kept)

    cur = events_by(events, "curation")
    tab = iv.select_tab("Curation")
    assert tab.list.count() == len(cur)
    for i, e in enumerate(cur):
        tab.list.setCurrentRow(i)
        p = e.payload
        assert tab.model.rowCount() == len(p.shown)
        verdicts = [tab.model.record(r).verdict for r in range(tab.model.rowCount())]
        assert verdicts.count("kept") == len((set(p.kept) - set(p.held)) & {s.chunk_id for s in p.shown})
        assert sum(v.startswith("kept (holds a needed fact") for v in verdicts) == len(
            set(p.held) & {s.chunk_id for s in p.shown})
        detail = tab.detail.toPlainText()
        assert ("Answerable" in detail) and (("yes" if p.answerable else "no") in detail)
        if p.complementary_question:
            assert p.complementary_question in detail

    rerank = events_by(events, "rerank")
    for name in ("Cards", "Tournament"):
        tab = iv.select_tab(name)
        assert tab.round_box.count() == len(rerank) and tab.body.isVisibleTo(iv) == bool(rerank)
        if not rerank:
            assert "This run used no" in tab.note.text()
    for i, e in enumerate(rerank):  # every candidate with its card; the finalists and every model call's group
        p = e.payload
        cards, tournament = iv.select_tab("Cards"), iv.select_tab("Tournament")
        cards.round_box.setCurrentIndex(i)
        tournament.round_box.setCurrentIndex(i)
        assert [cards.model.record(r) for r in range(cards.model.rowCount())] == list(p.rows)
        assert p.mode in cards.note.text() and all(f in cards.note.text() for f in p.intent_fields)
        if p.rows:
            top = cards.card.toPlainText()
            assert f"#{p.rows[0].rank}" in top and all(f"✓ {m.partition(': ')[2]}" in top for m in p.rows[0].matched
                                                      if m.startswith("metric: "))
        assert [tournament.finalists.record(r) for r in range(tournament.finalists.rowCount())] == \
            [r for r in p.rows if r.finalist]
        assert [tournament.groups.record(r) for r in range(tournament.groups.rowCount())] == list(p.groups)

    raw = iv.raw_model
    assert raw.rowCount() == len(events)
    first = raw.index(0, 0)
    assert raw.rowCount(first) == 7  # seq, stage, round, seconds, tokens in and out, payload
    return events
