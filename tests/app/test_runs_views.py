"""Ask, Inspect, History, export and the page viewer, on runs made with a scripted model (fast, exact)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, QUrl
from PySide6.QtGui import QImage

from analyst_app.views.page_viewer import CELL_PAD
from engine.evidence import find_evidence
from engine.records import AnswerResult, Quote
from engine.store import Library
from engine.store.library import RunStore
from engine.trace import plan_lines, read_run
from tests.app.helpers import (
    StallMeter, check_inspect_matches_store, events_by, make_scripted_run, question_for, revenue_fact, two_round_chat,
)


def test_history_reopens_a_run_into_every_inspect_tab(make_window, app_home, demo_truth, embedder):
    run_id = make_scripted_run(app_home, demo_truth, embedder)
    window = make_window(app_home)
    hv = window.history_view
    assert hv.run_ids() == [run_id]
    hv.select_runs([run_id])
    hv.open_selected()
    assert window.tabs.currentWidget() is window.inspect_view
    events = check_inspect_matches_store(window, run_id)
    assert len(events_by(events, "curation")) == 2  # the scripted curator asked a complementary question

    iv = window.inspect_view
    iv.select_tab("Answer")
    answer = events_by(events, "answer")[0].payload.answer
    text = iv.answer.toPlainText()
    assert "Program" in text and answer.program.splitlines()[0] in text
    assert "Grounding" in text and ("✓ found" in text) == any(g.verified for g in answer.grounding)
    # the raw tab holds the prompts and raw model outputs
    raw = iv.raw_model
    cur_row = next(i for i, e in enumerate(events) if e.stage == "curation")
    node = raw.index(cur_row, 0)
    payload = next(raw.index(r, 0, node) for r in range(raw.rowCount(node)) if raw.index(r, 0, node).data() == "payload")
    calls = next(raw.index(r, 0, payload) for r in range(raw.rowCount(payload))
                 if raw.index(r, 0, payload).data() == "llm_calls")
    call = raw.index(0, 0, calls)
    keys = {raw.index(r, 0, call).data() for r in range(raw.rowCount(call))}
    assert {"messages", "raw", "tokens_in", "tokens_out"} <= keys
    msg_node = next(raw.index(r, 0, call) for r in range(raw.rowCount(call)) if raw.index(r, 0, call).data() == "messages")
    # selecting the user message's content shows the whole prompt as sent: the numbered passages, then the task
    user_msg = raw.index(1, 0, msg_node)
    content = next(raw.index(r, 0, user_msg) for r in range(raw.rowCount(user_msg))
                   if raw.index(r, 0, user_msg).data() == "content")
    iv.raw_tree.setCurrentIndex(content)
    sent = events[cur_row].llm_calls[0].messages[1]["content"]
    assert iv.raw_detail.toPlainText() == sent and sent.startswith("Passages:\n\n[1] ")
    # the answer was also shown on the Ask tab
    assert window.ask_view.run_id == run_id and window.ask_view.citations.rowCount() == len(answer.citations)


def test_clicking_a_citation_shows_the_cited_page_highlighted(make_window, app_home, demo_truth, embedder):
    # KNGS's 2022 revenue is printed only in its 10-K, a PDF (HRBR runs cite HRBR's HTML 2023 10-K)
    kngs = [f for f in demo_truth if f["ticker"] == "KNGS"]
    run_id = make_scripted_run(app_home, kngs, embedder, "2022")
    window = make_window(app_home)
    window.open_run(run_id)
    ask, viewer = window.ask_view, window.viewer
    cites = ask.answer.citations
    assert cites, "the scripted run cites its passage"
    viewer.clear()
    assert viewer.pixmap() is None
    idx = ask.citation_table.model().index(0, 1)
    ask.citation_table.clicked.emit(idx)
    c = cites[0]
    assert viewer.filing.identity.doc_name == c.doc_name and viewer.page_index == c.page_index
    assert viewer.filing.path.endswith(".pdf")
    assert viewer.mode == "pdf", "a PDF filing's page is rendered, not shown as stored text"
    pm = viewer.pixmap()
    assert pm is not None and pm.width() > 200 and pm.height() > 200
    assert viewer.highlights, "the evidence lines were found and highlighted on the page"
    import pymupdf

    page = pymupdf.open(viewer.filing.path)[c.page_index]
    assert abs(pm.width() / pm.devicePixelRatio() - page.rect.width * viewer.zoom) <= 2
    assert viewer.page_box.value() == c.page_index + 1
    # a passage double-clicked in Inspect opens its page too
    tab = window.inspect_view.select_tab("Passages")
    row = tab.model.record(tab.model.rowCount() - 1)
    tab.open_row.emit(row)
    assert viewer.filing.identity.doc_name == row.doc_name and viewer.page_index == row.page_index


def test_export_json_csv_reports_and_several_runs(make_window, app_home, demo_truth, embedder, qtbot, tmp_path):
    first = make_scripted_run(app_home, demo_truth, embedder, "2023")
    second = make_scripted_run(app_home, demo_truth, embedder, "2022")
    window = make_window(app_home)
    out = {}
    for fmt in ("json", "csv", "md", "html"):
        path = tmp_path / f"run.{fmt}"
        with qtbot.waitSignal(window.export_finished, timeout=30_000) as blocker:
            window.export([first], fmt, path)
        assert blocker.args[0] == [path]
        out[fmt] = path.read_text(encoding="utf-8")
    data = json.loads(out["json"])
    assert data["run_id"] == first and data["trace"] and data["cited_passages"]
    rows = list(csv.reader(io.StringIO(out["csv"])))
    assert rows[0][:3] == ["run_id", "question", "answer"] and len(rows) > 1
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    assert "## Evidence" in out["md"] and data["cited_passages"][0]["doc_name"] in out["md"]
    assert "<h2>Evidence</h2>" in out["html"] and data["cited_passages"][0]["doc_name"] in out["html"]
    # several runs: one file per run in the chosen folder
    folder = tmp_path / "many"
    folder.mkdir()
    with qtbot.waitSignal(window.export_finished, timeout=30_000) as blocker:
        window.export([first, second], "md", folder)
    assert sorted(p.name for p in blocker.args[0]) == sorted(f"filinglens-run-{r}.md" for r in (first, second))
    assert all(p.read_text(encoding="utf-8").startswith("# ") for p in blocker.args[0])
    # Ctrl+E exports the History selection
    window.tabs.setCurrentWidget(window.history_view)
    window.history_view.select_runs([first, second])
    assert sorted(window.current_run_ids()) == sorted([first, second])


def test_delete_runs_from_history(make_window, app_home, demo_truth, embedder, qtbot):
    keep = make_scripted_run(app_home, demo_truth, embedder, "2023")
    gone = [make_scripted_run(app_home, demo_truth, embedder, y) for y in ("2022", "2023")]
    window = make_window(app_home)
    hv = window.history_view
    window.open_run(gone[0])
    assert window.inspect_view.run_id == gone[0]
    hv.select_runs(gone)
    assert hv.delete_btn.isEnabled()
    assert window.delete_runs(hv.selected_run_ids(), confirm=False) == 2
    assert hv.run_ids() == [keep]  # the history reloaded
    assert window.inspect_view.run_id == "" and window.inspect_view.events == []
    with Library(app_home) as library:
        assert [r["id"] for r in RunStore(library).list()] == [keep]
        assert library.conn.execute("SELECT COUNT(*) FROM stage_events WHERE run_id IN (?,?)", gone).fetchone()[0] == 0


def test_history_lists_your_questions_by_default_and_evaluation_runs_grouped_on_request(make_window, app_home,
                                                                                       demo_truth, embedder, qtbot,
                                                                                       tmp_path):
    import socket
    import subprocess
    import sys

    from engine.store.library import ANY_EVALUATION

    mine = make_scripted_run(app_home, demo_truth, embedder, "2023")
    evals = {str(tmp_path / "evals" / "financebench"): 3, str(tmp_path / "evals" / "docugami"): 2}
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True).stdout.strip()
    with Library(app_home) as library:
        store = RunStore(library)
        for folder, n in evals.items():
            for i in range(n):
                store.create(f"{Path(folder).name}-{i}", "hirec", f"eval question {i}", "{}", evaluation=folder)
                store.finish(f"{Path(folder).name}-{i}", "answered", {})
        # a question whose process died mid-run, and an evaluation's run left the same way
        store.create("died", "hirec", "What was revenue in 2021?", "{}")
        store.create("eval-died", "hirec", "eval question 9", "{}", evaluation=next(iter(evals)))
        library.conn.execute("UPDATE runs SET owner=? WHERE id IN ('died', 'eval-died')",
                             (f"{socket.gethostname()}:{ended}",))
    window = make_window(app_home)
    hv = window.history_view

    def shown() -> dict[str, dict]:
        return {hv.model.record(hv.proxy.mapToSource(hv.proxy.index(r, 0)).row())["id"]:
                hv.model.record(hv.proxy.mapToSource(hv.proxy.index(r, 0)).row()) for r in range(hv.proxy.rowCount())}

    # by default: the analyst's own questions only, the dead one settled, and a word on what is not shown
    assert hv.show_box.currentText() == "Your questions"
    assert set(shown()) == {mine, "died"}
    assert shown()["died"]["status"] == "interrupted" and shown()[mine]["status"] == "answered"
    assert hv.table.isColumnHidden(1)
    assert "6 evaluation runs of 2 evaluations not shown" in hv.count_label.text()
    # evaluation runs: every evaluation's, grouped by it (the Evaluation column sorts them together)
    hv.show_runs(ANY_EVALUATION)
    rows = shown()
    assert set(rows) == {f"{Path(f).name}-{i}" for f, n in evals.items() for i in range(n)} | {"eval-died"}
    assert rows["eval-died"]["status"] == "interrupted"
    assert not hv.table.isColumnHidden(1)
    titles = [hv.proxy.index(r, 1).data() for r in range(hv.proxy.rowCount())]
    assert titles == ["docugami"] * 2 + ["financebench"] * 4, "grouped by evaluation"
    # one evaluation, chosen by name in the same box
    labels = [hv.show_box.itemText(i) for i in range(hv.show_box.count())]
    assert labels == ["Your questions", "Evaluation runs, by evaluation (6)", "Evaluation financebench (4)",
                      "Evaluation docugami (2)", "All runs"]
    hv.show_box.setCurrentIndex(labels.index("Evaluation docugami (2)"))
    assert set(shown()) == {"docugami-0", "docugami-1"}
    hv.show_runs(None)
    assert len(shown()) == 8
    # a new question reloads the list and keeps the choice
    window.ctx.runs_changed.emit()
    assert hv.show_box.currentText() == "All runs" and len(shown()) == 8


def test_compare_two_runs(make_window, app_home, demo_truth, embedder):
    a = make_scripted_run(app_home, demo_truth, embedder, "2023")
    b = make_scripted_run(app_home, demo_truth, embedder, "2022")
    window = make_window(app_home)
    hv = window.history_view
    hv.select_runs([a])
    assert not hv.compare_btn.isEnabled()
    hv.select_runs([a, b])
    assert hv.compare_btn.isEnabled()
    dlg = hv.compare_selected()
    store = RunStore(Library(app_home))
    panes = {rid: pane.toPlainText() for rid, pane in zip(hv.selected_run_ids(), (dlg.left, dlg.right))}
    for rid in (a, b):
        answer = json.loads(store.get(rid)["result"])["answer"]["text"]
        assert rid in panes[rid] and store.get(rid)["question"] in panes[rid] and answer in panes[rid]
    stages = dlg.stages.toPlainText()
    assert "curation r1" in stages and "curation r2" in stages and "Seconds A" in stages
    dlg.close()


def test_ask_through_the_gui_updates_live_and_stays_responsive(make_window, app_home, demo_truth, qtbot):
    """The whole Ask path in the worker thread (scripted model): live stages, answer, Inspect, History."""
    fact = revenue_fact(demo_truth, "2023")
    window = make_window(app_home)
    window.ask_view.thread.worker.chat_loader = lambda _settings: two_round_chat(fact)
    live = []
    window.ask_view.stage_event.connect(live.append)
    meter = StallMeter()
    meter.start()
    with qtbot.waitSignal(window.ask_view.run_finished, timeout=120_000) as blocker:
        assert window.ask_view.ask(question_for(fact))
        assert not window.ask_view.run_btn.isEnabled() and window.ask_view.cancel_btn.isEnabled()
    stall = meter.stop()
    print(f"longest event-loop stall during a scripted ask: {stall * 1000:.0f} ms")
    run_id = blocker.args[0]
    events = read_run(Library(app_home), run_id).traces
    assert list(live) == list(events)  # what the live view showed is what the library stored
    check_inspect_matches_store(window, run_id)
    assert window.ask_view.run_btn.isEnabled() and not window.ask_view.progress_box.isVisibleTo(window)
    assert window.history_view.run_ids()[0] == run_id
    assert fact["doc_name"] in window.ask_view.answer_view.toPlainText()
    assert stall < 0.5


def test_cancel_a_question_and_readable_errors(make_window, app_home, demo_truth, qtbot):
    fact = revenue_fact(demo_truth, "2023")
    window = make_window(app_home)
    window.ctx.set_overrides({"answer": {"from_facts": False}})  # a run long enough to cancel
    ask = window.ask_view
    chat = two_round_chat(fact)
    window.ask_view.thread.worker.chat_loader = lambda _settings: chat
    # cancel as soon as the first stage arrives: the run ends "cancelled", recorded, no answer step
    def cancel_now(_event):  # noqa: ANN001
        window.cancel()

    ask.stage_event.connect(cancel_now)
    with qtbot.waitSignal(ask.run_finished, timeout=120_000) as blocker:
        ask.ask(question_for(fact))
    row = RunStore(Library(app_home)).get(blocker.args[0])
    assert row["status"] == "cancelled"
    assert "answer" not in [t.stage for t in read_run(Library(app_home), row["id"]).traces]
    assert "Cancelled" in ask.answer_view.toPlainText()
    ask.stage_event.disconnect(cancel_now)
    # a model that is not installed: a readable message, no traceback, the app stays usable
    from engine.errors import ModelError

    def missing(_settings):  # noqa: ANN001, ANN202
        raise ModelError("model pack 'x' is not installed: run `filinglens models install x`")

    window.ask_view.thread.worker.chat_loader = missing
    ask.model_box.setEditText("x")  # another model: the worker loads it (and fails)
    with qtbot.waitSignal(ask.ask_failed, timeout=60_000) as failed:
        ask.ask(f"What did {fact['company']} say about its revenue?")  # a question that needs the chat model
    assert "not installed" in failed.args[0] and "Traceback" not in window.last_error
    assert ask.run_btn.isEnabled() and window.ctx.busy == ""


def test_main_window_renders_to_png(window, tmp_path, app_home):
    window.library_view.table.selectRow(0)
    path = tmp_path / "window.png"
    assert window.grab().save(str(path))
    image = QImage(str(path))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500
    colors = {image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 29)}
    assert len(colors) > 8, "the screenshot is blank"


def test_window_state_and_library_are_remembered(make_window, app_home, qsettings):
    first = make_window(app_home)
    first.resize(1234, 777)
    first.tabs.setCurrentWidget(first.history_view)
    first.library_view.splitter.setSizes([300, 400])
    sizes = first.library_view.splitter.sizes()
    first.close()
    assert qsettings.value("library/home") == str(app_home)
    second = make_window(app_home, resize=False)
    assert second.tabs.currentWidget() is second.history_view
    from analyst_app.window import default_size

    assert not qsettings.value("window/geometry").isEmpty()
    assert (second.width(), second.height()) != default_size(second)  # restored, not the first-run default
    second.tabs.setCurrentWidget(second.library_view)
    restored = second.library_view.splitter.sizes()
    assert abs(restored[0] / sum(restored) - sizes[0] / sum(sizes)) < 0.02


def test_shortcuts(window):
    keys = {a.text(): [s.toString() for s in a.shortcuts()] for a in window.actions()}
    assert keys["Add files…"] == ["Ctrl+O"] and keys["Export run(s)…"] == ["Ctrl+E"]
    assert "Ctrl+Return" in keys["Ask"] and keys["Cancel"] == ["Esc"]


def test_ask_uses_the_reranker_the_settings_name(make_window, app_home, demo_truth, qtbot):
    """Settings › Retrieval › Reranker reaches the app's question path: the passage stage fuses the cross-encoder,
    and the trace says which scorer ran."""
    fact = revenue_fact(demo_truth, "2023")
    window = make_window(app_home)
    window.ask_view.thread.worker.chat_loader = lambda _settings: two_round_chat(fact)
    window.ctx.set_overrides({"retrieval": {"reranker": "untrained", "reranker_device": "cpu"},
                              "answer": {"from_facts": False}})  # through the passages, not the facts
    with qtbot.waitSignal(window.ask_view.run_finished, timeout=180_000) as blocker:
        assert window.ask_view.ask(question_for(fact))
    passages = [t.payload for t in read_run(Library(app_home), blocker.args[0]).traces if t.stage == "passages"]
    assert passages and all("cross-encoder" in p.scorer for p in passages)
    assert all(c.cross is not None for c in passages[0].candidates)


def test_a_question_the_facts_answer_needs_no_chat_model(make_window, app_home, qtbot):
    """No chat model can be loaded: a catalogue metric is still computed from the statement facts and shown, with
    the run's zero model calls; a question that needs the model ends with the loader's message."""
    from engine.errors import ModelError

    window = make_window(app_home, preset="default")

    def missing(_settings):  # noqa: ANN001, ANN202
        raise ModelError("model pack 'x' is not installed: run `filinglens models install x`")

    ask = window.ask_view
    ask.thread.worker.chat_loader = missing
    with qtbot.waitSignal(ask.run_finished, timeout=120_000) as blocker:
        assert ask.ask("What is Harborview Therapeutics' FY2023 inventory turnover ratio?")
    run = read_run(Library(app_home), blocker.args[0])
    assert run.status == "answered" and run.answer.method == "facts" and run.cost.llm_calls == 0
    assert "Answered" in ask.answer_view.toPlainText()
    # Inspect › Answer: every input with its row, period and printed value; a click shows its cell on its page
    inputs = run.answer.inputs
    assert len(inputs) == 3 and all(i.fact_id for i in inputs)  # cost of revenue, inventories at two year ends
    text = window.inspect_view.answer.toPlainText()
    assert "Inputs: each read from a statement cell" in text
    assert all(i.printed in text and i.period in text for i in inputs)
    # ... and, before them, the plan the question was read into, each leaf with the fact it used
    plan = plan_lines(run.traces)
    assert "Plan: the metric as the question was read" in text and text.index("Plan:") < text.index("Inputs:")
    assert plan and all(line.strip() in text for line in plan)
    assert f"inventory @ FY2022 ← {inputs[2].describe()}" in text
    # Inspect › Facts: the plan, then each input with the cell that won and why (the only printing, or which table)
    iv = window.inspect_view
    assert iv.tabs.isTabVisible(iv.tab_names().index("Facts"))
    facts_text = iv.select_tab("Facts").toPlainText()
    assert "Plan: the metric as the question was read" in facts_text and "Every input found" in facts_text
    assert all(i.printed in facts_text and i.chosen() in facts_text for i in inputs)
    window.inspect_view.answer.anchorClicked.emit(QUrl(f"fact:{inputs[1].fact_id}"))
    viewer = window.viewer
    assert window.viewer_dock.isVisible() and viewer.fact.id == inputs[1].fact_id
    assert viewer.page_index == inputs[1].page_index
    # the cell's box on a rendered PDF page, its characters in an HTML filing's page text
    assert (viewer.highlight_rect() if viewer.mode == "pdf" else viewer.highlight_range()) is not None
    assert inputs[1].printed in viewer.match_label.text()
    # the Ask tab's citations of a computed answer box the inputs' cells on their page, not the whole table
    lib = Library(app_home)
    for row, c in enumerate(ask.citations.records):
        here = [i for i in inputs if (i.doc_name, i.page_index) == (c.doc_name, c.page_index)]
        assert here and ask.open_citation(row)
        assert sorted(s.id for s in viewer.facts) == sorted(i.fact_id for i in here)
        assert viewer.page_index == c.page_index and viewer.chunk is None  # no passage highlighted
        if viewer.mode == "pdf":
            rects = viewer.highlight_rects()
            assert len(rects) == len(here)
            for stored in lib.facts(ids=[i.fact_id for i in here]):  # each cell's box, padded, is one highlight
                x0, y0, x1, y1 = (v * viewer.zoom for v in stored.fact.box)
                assert any(r.contains(QRectF(QPointF(x0, y0), QPointF(x1, y1))) and r.width() <= x1 - x0 + 2 * CELL_PAD
                           + 0.01 for r in rects)
        else:
            assert viewer.highlight_range() is not None
        assert all(i.printed in viewer.match_label.text() for i in here)
    with qtbot.waitSignal(ask.ask_failed, timeout=60_000) as failed:
        ask.ask("Why did Harborview Therapeutics' margins change?")  # needs the chat model
    assert "not installed" in failed.args[0]


def test_a_stored_card_ranked_run_reopens_with_its_rerank_stage(make_window, app_home, demo_truth, embedder):
    """A run whose passages were ranked by evidence cards: Inspect's Cards tab lists every candidate with its terms
    and shows the selected one's card with the fields that matched the intent marked; the Tournament tab says no
    model ranked them. Read back from the library."""
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings

    fact = revenue_fact(demo_truth, "2023")
    settings = Settings(home=app_home).with_overrides(rerank={"mode": "cards"})
    with Library(app_home) as library:
        run = build_pipeline(settings, library, Models(embedder)).run(question_for(fact), stop_after="passages")
    window = make_window(app_home)
    window.inspect_view.load_run(Library(app_home), run.id)
    events = check_inspect_matches_store(window, run.id)
    (rerank,) = events_by(events, "rerank")
    p = rerank.payload
    assert p.mode == "cards" and p.rows[0].matched and all(r.card is not None and not r.card.spans for r in p.rows)
    cards = window.inspect_view.select_tab("Cards")
    # a candidate whose card names the asked metric: that metric is marked, an unmatched metric is not
    row = next(n for n in range(cards.model.rowCount()) if any(m.startswith("metric: ") for m in p.rows[n].matched))
    cards.table.selectRow(row)
    r = p.rows[row]
    text = cards.card.toPlainText()
    assert f"#{r.rank}" in text and "✓ revenue" in text
    assert all(f"✓ {m}" not in text for m in r.card.metrics if f"metric: {m}" not in r.matched)
    opened = []
    window.inspect_view.open_evidence.connect(lambda *a: opened.append(a))
    cards.table.doubleClicked.emit(cards.proxy.index(row, 0))  # double-click: its page
    assert opened == [(r.doc_name, r.chunk_id, r.page_index)]
    assert "No tournament" in window.inspect_view.select_tab("Tournament").chart.title


def test_the_cards_view_shows_what_the_model_intent_pass_added_and_dropped(make_window, app_home, demo_truth,
                                                                              embedder):
    """A cards run with the model intent pass: the Cards tab's intent line lists the metric the model added and the
    proposal it dropped, and the metric is marked on a card that names it. Read back from the library."""
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from tests.engine.scripted import ScriptedChat

    proposal = {"topic": "Profitability", "entities": ["Atlantis region"], "metrics": ["operating income"],
                "temporal_scope": [], "requires_numeric_evidence": True, "relation": "lookup",
                "keywords": ["operating income"]}
    fact = revenue_fact(demo_truth, "2023")
    settings = Settings(home=app_home).with_overrides(rerank={"mode": "cards", "model_intent": True,
                                                              "model_cards": False})
    with Library(app_home) as library:
        run = build_pipeline(settings, library, Models(embedder, ScriptedChat(lambda *a: proposal))).run(
            question_for(fact), stop_after="passages")
    window = make_window(app_home)
    window.inspect_view.load_run(Library(app_home), run.id)
    p = events_by(check_inspect_matches_store(window, run.id), "rerank")[0].payload
    assert "model added metric: operating income" in p.intent_pass
    cards = window.inspect_view.select_tab("Cards")
    note = cards.note.text()
    assert "added by the model: metric: operating income" in note and "Atlantis region" in note
    row = next(n for n in range(cards.model.rowCount()) if "metric: operating income" in p.rows[n].matched)
    cards.table.selectRow(row)
    assert "✓ operating income" in cards.card.toPlainText()


def _stored_tournament(app_home, demo_truth, mode: str):  # noqa: ANN001, ANN202
    from engine.models.registry import load_embedder
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from tests.engine.scripted import ScriptedChat
    from tests.engine.test_tournament import reverse_script

    fact = revenue_fact(demo_truth, "2023")
    s = Settings(home=app_home).with_overrides(rerank={
        "mode": mode, "model_cards": False, "stage1_min": 10, "screen_group": 6, "bootstrap_group_min": 3,
        "bootstrap_group_max": 5, "batch": 6, "picks": 2})
    with Library(app_home) as library:
        return build_pipeline(s, library, Models(load_embedder(s.models), ScriptedChat(reverse_script))).run(
            question_for(fact), stop_after="passages")


def test_a_tournament_run_shows_its_rounds_stop_and_groups(make_window, app_home, demo_truth, embedder):
    """A FinCards tournament run (scripted model) reopened: the chart plots the final top's rank in each bootstrap
    round and states the stop test; the finalists' Borda sums and every screening and bootstrap call's group, its
    picks and reasons."""
    run = _stored_tournament(app_home, demo_truth, "tournament")
    window = make_window(app_home)
    window.inspect_view.load_run(Library(app_home), run.id)
    events = check_inspect_matches_store(window, run.id)
    p = events_by(events, "rerank")[0].payload
    tab = window.inspect_view.select_tab("Tournament")
    chart = tab.chart
    assert p.rounds >= 1 and "bootstrap round" in chart.x_label
    assert chart.series and all(len(s.points) == p.rounds for s in chart.series)
    top = [r for r in p.rows if r.round_ranks][:len(chart.series)]
    assert [[v for _, v in s.points] for s in chart.series] == [list(r.round_ranks) for r in top]
    assert p.stop in chart.footer and len(p.jaccards) == (p.rounds - 1)
    assert all(f"{j:.2f}" in chart.footer for j in p.jaccards)
    assert p.stop in tab.summary.text() and f"seed {p.seed}" in tab.summary.text()
    screen = next(n for n, g in enumerate(p.groups) if g.stage == "screen")
    tab.group_table.selectRow(screen)
    detail = tab.group_detail.toPlainText()
    g = p.groups[screen]  # the default: each pick's reason is the card fields that match (no model words)
    assert g.reasons[0].startswith("fields: ") and g.reasons[0] in detail and "score 5" in detail and "Picked" in detail
    image = chart.grab().toImage()  # painted: the chart draws lines in the series' colours
    assert image.width() > 100 and _has_colour(image, chart.COLORS[0])


def test_a_multiagent_run_charts_the_referee_elo(make_window, app_home, demo_truth, embedder):
    run = _stored_tournament(app_home, demo_truth, "multiagent")
    window = make_window(app_home)
    window.inspect_view.load_run(Library(app_home), run.id)
    events = check_inspect_matches_store(window, run.id)
    p = events_by(events, "rerank")[0].payload
    chart = window.inspect_view.select_tab("Tournament").chart
    assert p.matches and "Elo" in chart.title and chart.series
    for s in chart.series:  # each point is a rating the referee's matches left the passage with
        assert all(v in {m.rating_a for m in p.matches} | {m.rating_b for m in p.matches} for _, v in s.points)


def _has_colour(image: QImage, colour: str) -> bool:
    from PySide6.QtGui import QColor

    want = QColor(colour)
    step = 3
    return any(image.pixelColor(x, y) == want for x in range(0, image.width(), step)
               for y in range(0, image.height(), step))


def test_a_question_naming_no_company_offers_the_loaded_ones_and_one_click_asks_it(make_window, app_home, qtbot):
    """On a library of several companies a question that names none asks which; each loaded company is a link,
    and a click asks the same question of that company (answered here from the statement facts)."""
    window = make_window(app_home, preset="default")
    ask = window.ask_view
    with qtbot.waitSignal(ask.run_finished, timeout=120_000):
        assert ask.ask("What was total revenue in fiscal 2023, in USD millions?")
    assert ask.answer is not None and ask.answer.text.startswith("Which company?") and len(ask.answer.choices) > 1
    html_text = ask.answer_view.toHtml()
    assert all(f"company:{i}" in html_text for i in range(len(ask.answer.choices)))
    company = ask.answer.choices[0]
    with qtbot.waitSignal(ask.run_finished, timeout=120_000):
        ask.answer_view.anchorClicked.emit(QUrl("company:0"))
    assert ask.question_text.startswith(f"For {company}: ") and ask.answer.status == "answered"
    assert ask.answer.value is not None and ask.answer.method == "facts"


def test_a_written_answer_shows_its_quotes_and_a_click_highlights_only_that_sentence(make_window, app_home, demo_truth,
                                                                                     embedder):
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from tests.app.helpers import SchemaScriptedChat

    company = next(f["company"] for f in demo_truth if f["form"] == "10-K" and f["period"] == "2023")
    chat = SchemaScriptedChat(lambda purpose, messages, n: {
        "sentences": [{"text": "The filing names these risks.", "quotes": [1]}], "insufficient": False})
    with Library(app_home) as library:
        run = build_pipeline(Settings(home=app_home), library, Models(embedder, chat)).run(
            f"What risks does {company} describe about its supply chain?")
    assert run.answer.method == "quotes" and run.answer.quotes
    window = make_window(app_home)
    ask = window.ask_view
    ask.show_stored_run(run.id)
    shown = ask.answer_view.toPlainText()
    first = run.answer.quotes[0]
    assert "Quoted evidence" in shown and " ".join(first.text.split())[:60] in " ".join(shown.split())
    assert "href='quote:0'" in ask.answer_view.toHtml().replace('"', "'")
    viewer = window.viewer
    viewer.clear()
    ask._anchor(QUrl("quote:1" if len(run.answer.quotes) > 1 else "quote:0"))
    q = run.answer.quotes[1 if len(run.answer.quotes) > 1 else 0]
    assert viewer.filing.identity.doc_name == q.doc_name and viewer.page_index == q.page_index
    assert viewer.chunk.text == q.text and (viewer.chunk.char_start, viewer.chunk.char_end) == (q.char_start,
                                                                                                  q.char_end)
    assert viewer.chunk.id == q.chunk_id  # the sentence of its passage, not the whole passage
    if len(run.answer.quotes) > 1:  # an answer resting on its second quote opens that one, and its [2] is a link
        last = run.answer.quotes[-1]
        ask.show_answer(run.question, replace(run.answer, text=f"The filing names these risks. [{last.number}]"),
                        "answered")
        assert (viewer.chunk.char_start, viewer.chunk.char_end) == (last.char_start, last.char_end)
        # (once in the quoted evidence's list, once on the synthesis's number)
        assert ask.answer_view.toHtml().replace('"', "'").count(f"href='quote:{len(run.answer.quotes) - 1}'") == 2
        # the table beside it lists the quotes the text cites under the text's own numbers; a click opens the sentence
        assert [c.passage_id for c in ask.citations.records] == [last.number], ask.citations.records
        assert ask.citations_title.text().startswith("Quotes cited")
        viewer.clear()
        assert ask.open_citation(0) and (viewer.chunk.char_start, viewer.chunk.char_end) == (last.char_start,
                                                                                             last.char_end)
    iv = window.inspect_view
    with Library(app_home) as library:
        iv.show_run(read_run(library, run.id))
    assert "a written answer" in iv.curation.detail.toPlainText()  # Inspect says why no passage was curated
    assert "Quoted evidence" in iv.answer.toPlainText() and " ".join(first.text.split())[:40] in iv.answer.toPlainText()


def test_an_answer_resting_on_several_rows_of_one_page_highlights_each_and_a_click_only_its_own(make_window,
                                                                                              app_home):
    """A cover listing's answer quotes each row it lists and cites none: its page opens with every row highlighted,
    not only the first; clicking one row's number highlights that row alone."""
    with Library(app_home) as library:
        filing = next(f for f in library.filings() if f.identity.form == "10-K" and f.path.endswith(".pdf"))
        chunk = next(c for c in library.chunks_of_filings([filing.id])
                     if len([ln for ln in c.text.splitlines() if len(ln.strip()) > 30]) >= 3)
        page = library.page_text(filing.id, chunk.page_index)
    lines = [ln.strip() for ln in chunk.text.splitlines() if len(ln.strip()) > 30]
    spans = []
    for line in (lines[0], lines[2]):
        at = page.index(line, chunk.char_start)
        spans.append((at, at + len(line)))
    quotes = tuple(Quote(n, 1, chunk.id, filing.identity.doc_name, chunk.page_index, a, b, page[a:b])
                   for n, (a, b) in enumerate(spans, start=1))
    answer = AnswerResult("answered", "It registers these two.", quotes=quotes, method="listing")
    window = make_window(app_home)
    ask, viewer = window.ask_view, window.viewer
    ask.show_answer("Which securities does it register?", answer, "answered")
    assert viewer.mode == "pdf" and viewer.page_index == chunk.page_index
    assert (viewer.chunk.char_start, viewer.chunk.char_end) == spans[0]
    assert [(m.char_start, m.char_end) for m in viewer.more] == [spans[1]]
    both = [r.y0 for r in viewer.highlights]
    alone = [r.y0 for r in find_evidence(viewer._doc(filing.path)[chunk.page_index], quotes[0].text)]
    assert alone and len(both) > len(alone) and max(both) > max(alone)  # the second row is highlighted too
    ask._anchor(QUrl("quote:1"))  # its own number: that row alone
    assert (viewer.chunk.char_start, viewer.chunk.char_end) == spans[1] and viewer.more == ()


def test_the_question_path_is_built_while_the_window_is_idle_and_a_run_s_time_counts_from_the_click(
        make_window, app_home, qtbot):
    """Once the window is shown the question path is built in the worker's thread (no model loaded), so a facts
    question reuses it; the time a run reports runs from the click to the answer and names the part before its
    first stage, and is never less than the time the analyst waited."""
    import time

    window = make_window(app_home, preset="default")
    ask = window.ask_view
    qtbot.waitUntil(lambda: ask.prepared_seconds is not None, timeout=60_000)
    built = ask.thread.worker._session._pipeline
    assert built is not None and ask.thread.worker._session._models is None  # no embedder, no model loaded
    clicked = time.perf_counter()
    with qtbot.waitSignal(ask.run_finished, timeout=60_000) as blocker:
        assert ask.ask("What is Harborview Therapeutics' FY2023 inventory turnover ratio?")
    waited = time.perf_counter() - clicked
    run = read_run(Library(app_home), blocker.args[0])
    assert run.answer.method == "facts" and ask.thread.worker._session._pipeline is built  # reused, not rebuilt
    assert run.cost.setup_seconds >= 0 and run.cost.seconds >= run.cost.setup_seconds + sum(
        t.seconds for t in run.traces) - 0.01
    assert waited - 1.0 <= run.cost.seconds <= waited  # from the click, not from the first stage
    # the panel adds the window's own part: from the click to the answer on screen
    assert run.cost.seconds <= ask.on_screen_seconds <= waited
    assert (f"On screen {ask.on_screen_seconds:.1f} s after the click: the run {run.cost.seconds:.1f} s"
            in ask.answer_view.toPlainText())
    # a question asked while the path is (re)built waits for it, and its time says so
    window.ctx.set_overrides({"retrieval": {"passage_top_k": 4}})  # another setting: the path is built again
    clicked = time.perf_counter()
    with qtbot.waitSignal(ask.run_finished, timeout=60_000) as blocker:
        assert ask.ask("What is Harborview Therapeutics' FY2023 inventory turnover ratio?")
    waited = time.perf_counter() - clicked
    run = read_run(Library(app_home), blocker.args[0])
    assert ask.thread.worker._session._pipeline is not built and run.cost.setup_seconds > 0
    assert waited - 1.0 <= run.cost.seconds <= waited
    assert f"setup {run.cost.setup_seconds:.1f} s" in ask.answer_view.toPlainText() or run.cost.setup_seconds < 0.05


def test_an_older_libraries_evaluation_runs_leave_your_questions_when_the_library_opens(make_window, app_home,
                                                                                       demo_truth, embedder):
    """An evaluation run before runs named their evaluation stored its runs as if the analyst had asked them: opening
    the library files them under the evaluation its results folder (under the library's evals) says made them; a
    results folder the Evaluate tab shows later files its own."""
    mine = make_scripted_run(app_home, demo_truth, embedder, "2023")
    with Library(app_home) as library:
        store = RunStore(library)
        for rid in ("fb-0", "fb-1", "fb-2", "late-0"):
            store.create(rid, "hirec", f"eval question {rid}", "{}")  # evaluation = '' as an old library had it
            store.finish(rid, "answered", {})
    out = app_home / "evals" / "financebench"
    out.mkdir(parents=True)
    (out / "results.jsonl").write_text("".join(json.dumps({"pipeline": "hirec", "qid": f"q{i}", "run_id": rid}) + "\n"
                                               for i, rid in enumerate(("fb-0", "fb-1", "fb-2"))), encoding="utf-8")
    window = make_window(app_home)
    hv = window.history_view

    def shown() -> set[str]:
        return {hv.model.record(hv.proxy.mapToSource(hv.proxy.index(r, 0)).row())["id"]
                for r in range(hv.proxy.rowCount())}

    assert hv.show_box.currentText() == "Your questions"
    assert shown() == {mine, "late-0"}
    labels = [hv.show_box.itemText(i) for i in range(hv.show_box.count())]
    assert "Evaluation financebench (3)" in labels
    hv.show_box.setCurrentIndex(labels.index("Evaluation financebench (3)"))
    assert shown() == {"fb-0", "fb-1", "fb-2"}

    # a results folder the Evaluate tab shows (another question set's, made while the window was open)
    hv.show_box.setCurrentIndex(0)
    later = app_home / "evals" / "docugami"
    later.mkdir()
    (later / "results.jsonl").write_text(json.dumps({"pipeline": "hirec", "qid": "q0", "run_id": "late-0"}) + "\n",
                                         encoding="utf-8")
    window.evaluate_view.show_results(later)
    assert shown() == {mine}  # History followed without a refresh
    assert "Evaluation docugami (1)" in [hv.show_box.itemText(i) for i in range(hv.show_box.count())]
