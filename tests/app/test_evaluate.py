"""The Evaluate tab: a two-pipeline evaluation run offscreen in the background, its report (metrics table, plots,
question by question, a run opened in Inspect), cancel and resume without duplicates, and a question set generated
from the library with a scripted model."""

from __future__ import annotations

import json

from tests.app.helpers import question_for, two_round_chat


def _question_set(home, truth):  # noqa: ANN001, ANN202
    """Revenue questions with their gold pages, saved where the tab looks for question sets."""
    from analyst_app.views.evaluate import question_sets_dir

    facts = [t for t in truth if t["form"] == "10-K" and t["metric"] == "Total revenue"
             and t["fiscal_year_column"] == t["period"]][:3]
    folder = question_sets_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "revenue.jsonl"
    path.write_text("".join(json.dumps({
        "qid": f"rev{i}", "question": question_for(f), "answer": f"{f['value']:,.0f}",
        "gold_pages": [{"doc_name": f["doc_name"], "page_index": f["page_index"]}]}) + "\n"
        for i, f in enumerate(facts)), encoding="utf-8")
    return path, facts


def _results(view):  # noqa: ANN001, ANN202
    lines = (view.outcome / "results.jsonl").read_text().splitlines()
    return [(r["pipeline"], r["qid"]) for r in map(json.loads, lines)]


def test_the_evaluate_tab_runs_two_pipelines_and_shows_the_report(make_window, app_home, demo_truth, qtbot) -> None:
    path, facts = _question_set(app_home, demo_truth)
    window = make_window(app_home)
    view = window.evaluate_view
    assert window.tabs.tabText(window.tabs.indexOf(view)) == "Evaluate"
    assert view.chosen_set() == path and "3 questions" in view.set_info.text()
    view.chat_loader = lambda _settings: two_round_chat(facts[0])
    view.set_pipelines(["bm25", "hirec"])
    with qtbot.waitSignal(view.eval_finished, timeout=300_000) as done:
        assert view.start()
    outcome = done.args[0]
    assert [s["pipeline"] for s in outcome.summary] == ["bm25", "hirec"]
    # the metrics table: one row per pipeline, the report's figures
    assert view.metrics.rowCount() == 2
    assert [view.metrics.record(r)["pipeline"] for r in range(2)] == ["bm25", "hirec"]
    titles = [c.title for c in view.metrics.columns]
    assert "page_recall@5" in titles and "ndcg@10" in titles
    # question by question: every (pipeline, question); the plots the eval wrote
    assert view.questions.rowCount() == 6 and view.plot_count() == len(outcome.plots) > 0
    # a hirec row opens its run in Inspect
    row = next(r for r in range(view.questions.rowCount()) if view.questions.record(r)["run_id"])
    rid = view.questions.record(row)["run_id"]
    view.question_table.doubleClicked.emit(view.proxy.mapFromSource(view.questions.index(row, 0)))
    assert window.tabs.currentWidget() is window.inspect_view and window.inspect_view.run_id == rid
    # evaluating again resumes: nothing is run twice
    with qtbot.waitSignal(view.eval_finished, timeout=120_000):
        assert view.start()
    keys = _results(view)
    assert len(keys) == len(set(keys)) == 6
    # compare with itself: nothing fixed, nothing broken
    assert "fixed" in view.compare_with(outcome.out).lower()


def test_a_cancelled_evaluation_keeps_what_finished_and_resumes(make_window, app_home, demo_truth, qtbot) -> None:
    _question_set(app_home, demo_truth)
    window = make_window(app_home)
    view = window.evaluate_view
    view.set_pipelines(["bm25", "hybrid"])
    with qtbot.waitSignal(view.eval_failed, timeout=120_000) as failed:
        assert view.start()
        view.cancel()  # before the first question: nothing runs, nothing is lost
    assert "cancelled" in failed.args[0] and view.run_btn.isEnabled() and not window.ctx.busy
    with qtbot.waitSignal(view.eval_finished, timeout=120_000):
        assert view.start()
    keys = _results(view)
    assert len(keys) == len(set(keys)) == 6


def test_a_question_set_is_generated_from_the_library(make_window, app_home, qtbot) -> None:
    from analyst_app.views.evaluate import question_sets_dir
    from analyst_app.workers import QueryGenRequest
    from tests.engine.scripted import ScriptedChat
    from tests.engine.test_querygen import script

    window = make_window(app_home)
    view = window.evaluate_view
    view.chat_loader = lambda _settings: ScriptedChat(script())
    out = question_sets_dir(app_home) / "mine.jsonl"
    with qtbot.waitSignal(view.generate_finished, timeout=120_000) as done:
        assert view.generate(QueryGenRequest("", 4, 2, 0, out))
    assert done.args[0].kept["single"] == 4
    assert view.chosen_set() == out and "questions" in view.set_info.text()
    assert all(json.loads(line)["gold_pages"] for line in out.read_text().splitlines())


def test_every_pipeline_is_explained_in_a_sentence_beside_its_name(make_window, app_home) -> None:
    from engine.eval.runner import PIPELINE_DESCRIPTIONS, PIPELINES

    view = make_window(app_home).evaluate_view
    items = [view.pipelines.item(i) for i in range(view.pipelines.count())]
    assert [view.pipeline_name(i) for i in range(len(items))] == list(PIPELINES)
    for i, item in enumerate(items):
        name = view.pipeline_name(i)
        assert item.text() == f"{name} — {PIPELINE_DESCRIPTIONS[name]}", "the sentence is on screen, not in a tooltip"
    view.pipelines.scrollToItem(items[-1])
    assert not view.pipelines.visualItemRect(items[-1]).isEmpty()
    # checking by name still works with the sentence in the text
    view.set_pipelines(["hirec-retrieval+ce-only", "wf-bm25"])
    assert view.checked_pipelines() == ["hirec-retrieval+ce-only", "wf-bm25"]
