"""Library tab: training the reranker from the GUI (options dialog, progress, cancel and resume, registration)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from analyst_app.views.train_dialog import TrainDialog
from analyst_app.workers import TrainOptions

# 12 mined examples on the demo library: 10 to train on (6 steps of 16 pairs), 2 held out. Small, because a
# step takes seconds on a busy 2-core CPU; the engine tests check that training improves the ranking.
OPTIONS = TrainOptions(pairs=12, epochs=1, device="cpu")


def train(qtbot, view, options: TrainOptions, on_step=None):  # noqa: ANN001, ANN201
    """Start training through the view and wait for it; returns the signal's report."""
    with qtbot.waitSignal(view.train_finished, timeout=600_000) as blocker:
        assert view.train_reranker(options)
        if on_step is not None:
            view.train_job.signals.item.connect(on_step)  # after the view's own slot: its label is set
    return blocker.args[0]


@pytest.mark.slow
def test_cancelled_training_resumes_and_registers(window, qtbot, app_home):
    view = window.library_view
    out = app_home / "models" / "reranker-trained"
    assert view.train_btn.isEnabled()
    labels: list[str] = []

    def cancel_at_first_step(_step: dict) -> None:
        labels.append(view.progress_label.text())
        if len(labels) == 1:
            window.cancel()  # what Esc does

    first = train(qtbot, view, OPTIONS, cancel_at_first_step)
    assert labels and re.fullmatch(r"Training the reranker: step 1 / \d+, ETA [\d.]+ (s|min|h)", labels[0])
    assert not first.completed and first.steps_done < first.total_steps
    assert (out / "checkpoint" / "state.pt").exists()
    assert not (app_home / "models" / "reranker.json").exists(), "a cancelled run was registered"
    text = view.report_label.text()
    assert f"cancelled at step {first.steps_done} of {first.total_steps}" in text and "to resume" in text
    assert window.ctx.busy == "" and not view.progress_row.isVisibleTo(window) and view.train_btn.isEnabled()

    steps: list[int] = []
    busy_while_training: list[str] = []

    def record(step: dict) -> None:
        steps.append(step["step"])
        busy_while_training.append(window.ctx.busy)

    second = train(qtbot, view, view.last_train_options(), record)
    assert second.completed and second.resumed_from_step == first.steps_done
    assert steps[0] == first.steps_done + 1 and steps[-1] == second.total_steps == first.total_steps
    assert set(busy_while_training) == {"reranker training"}
    registry = json.loads((app_home / "models" / "reranker.json").read_text())
    assert Path(registry["folder"]) == second.model_dir == (out / "model").resolve()
    assert not (out / "checkpoint").exists()
    text = view.report_label.text()
    assert f"MRR {second.before.mrr:.3f} → {second.after.mrr:.3f}" in text
    assert f"hit@1 {second.before.hit_at_1:.0%} → {second.after.hit_at_1:.0%}" in text
    assert f"resumed at step {first.steps_done}" in text and "Registered in" in text
    assert window.ctx.busy == "" and not view.progress_row.isVisibleTo(window)


def test_a_failed_training_is_reported_and_frees_the_slot(window, qtbot, tmp_path):
    view = window.library_view
    questions = tmp_path / "eval.jsonl"
    questions.write_text(json.dumps({"doc_name": "HRBR_2022_10K"}) + "\n")  # no "question": unreadable
    options = TrainOptions(pairs=20, device="cpu", exclude_questions=questions, register=False)
    assert train(qtbot, view, options) is None
    assert "line 1 has no 'question' field" in window.last_error and "Traceback" not in window.last_error
    assert window.last_error.startswith("Training the reranker failed")
    assert "Reranker training stopped" in view.report_label.text()
    assert window.ctx.busy == "" and not view.progress_row.isVisibleTo(window)
    assert view.last_train_options() == options  # the dialog offers them again next time


def test_train_button_needs_filings_and_a_free_slot(make_window, window, tmp_path):
    assert window.library_view.train_btn.isEnabled()
    assert window.ctx.begin("ingest", lambda: None)
    assert not window.library_view.train_btn.isEnabled()
    assert not window.library_view.train_reranker(OPTIONS)  # the slot is taken: nothing starts
    window.ctx.end("ingest")
    assert window.library_view.train_btn.isEnabled()
    empty = make_window(tmp_path / "empty-library")
    assert not empty.library_view.train_btn.isEnabled()


def test_dialog_values_and_a_missing_exclude_file(qtbot, tmp_path):
    dlg = TrainDialog(tmp_path / "models" / "reranker-trained")
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    assert dlg.values() == TrainOptions(pairs=2000, epochs=1, device="auto", exclude_questions=None, llm_share=0.0,
                                        register=True)
    assert (dlg.pairs.minimum(), dlg.pairs.maximum(), dlg.epochs.minimum(), dlg.epochs.maximum()) == (20, 100_000, 1, 20)
    assert [dlg.device.itemText(i) for i in range(dlg.device.count())] == ["auto", "cpu", "cuda"]
    dlg.pairs.setValue(500)
    dlg.epochs.setValue(3)
    dlg.device.setCurrentText("cpu")
    dlg.llm_share.setValue(0.3)
    dlg.register.setChecked(False)
    missing = tmp_path / "nowhere.jsonl"
    dlg.exclude.setText(str(missing))
    assert dlg.values() == TrainOptions(pairs=500, epochs=3, device="cpu", exclude_questions=missing, llm_share=0.3,
                                        register=False)

    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dlg.isVisible() and dlg.result() != TrainDialog.DialogCode.Accepted
    assert dlg.error_label.isVisible() and str(missing) in dlg.error_label.text()
    existing = tmp_path / "eval.jsonl"
    existing.write_text("")
    dlg.exclude.setText(str(existing))
    assert not dlg.error_label.isVisible()  # editing the path clears the complaint
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert not dlg.isVisible() and dlg.result() == TrainDialog.DialogCode.Accepted
    assert dlg.values().exclude_questions == existing

    again = TrainDialog(tmp_path, dlg.values())  # last run's options come back as they were
    qtbot.addWidget(again)
    assert again.values() == dlg.values()
