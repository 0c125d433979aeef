"""The settings dialog: generated from the pydantic model, changes stored as overrides and remembered,
invalid values refused with a readable message, reset and library presets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args, get_origin

import pytest
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QCheckBox, QComboBox, QDialogButtonBox, QLineEdit, QSpinBox

from analyst_app.context import OVERRIDES_KEY, AppContext
from analyst_app.views.settings_dialog import INDEX_FIELDS, SettingsDialog, _bounds, _unwrap_optional
from engine.settings import SECTIONS, Settings, advanced_fields, list_presets, load_preset, settings_groups


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return tmp_path / "library"  # an empty library: the dialog needs no filings


@pytest.fixture()
def make_ctx(qsettings, home):
    made = []

    def make() -> AppContext:
        ctx = AppContext(home, qsettings)
        made.append(ctx)
        return ctx

    yield make
    for ctx in made:
        ctx.shutdown()


def open_dialog(qtbot, ctx: AppContext) -> SettingsDialog:
    dlg = SettingsDialog(ctx)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    return dlg


def click_ok(qtbot, dlg: SettingsDialog) -> None:
    qtbot.mouseClick(dlg.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)


def test_every_field_has_a_widget_of_its_type_on_a_page_of_decisions_or_under_advanced(qtbot, make_ctx):
    ctx = make_ctx()
    dlg = open_dialog(qtbot, ctx)
    current = ctx.settings()
    groups = settings_groups()
    assert [dlg.tabs.tabText(i) for i in range(dlg.tabs.count())] == [
        "Speed and depth", "Models", "Reranking", "Library", "Advanced"] == [g.title for g in groups] + ["Advanced"]
    assert set(Settings.model_fields) - set(SECTIONS) == {"home"}  # the library folder is chosen elsewhere
    expected = {f"{s}.{n}" for s, model in SECTIONS.items() for n in model.model_fields}
    assert set(dlg.editors) == expected, "every setting can be edited, once"
    grouped = {f.key: f for g in groups for f in g.fields}
    advanced = advanced_fields()
    for key in ("rerank.elo_tau", "retrieval.hnsw_ef_search", "rerank.stage1_ratio", "retrieval.rrf_k"):
        assert key not in grouped and dlg.page_of[key] == dlg.advanced_index, f"{key} is an engine parameter"
    for section, model in SECTIONS.items():
        for name, info in model.model_fields.items():
            ed = dlg.editor(section, name)
            kind, optional = _unwrap_optional(info.annotation)
            w = ed.widget
            if optional or kind in (str, Path):
                assert isinstance(w, QLineEdit)
            elif kind is bool:
                assert isinstance(w, QCheckBox)
            elif kind is int:
                lo, hi = _bounds(info)
                assert isinstance(w, QSpinBox)
                assert w.minimum() == (lo if lo is not None else -(2**31))
                assert w.maximum() == (hi if hi is not None else 2**31 - 1)
            elif get_origin(kind) is Literal:
                assert isinstance(w, QComboBox)
                words = dict(grouped[ed.key].choices) if ed.key in grouped else {}
                assert [w.itemText(i) for i in range(w.count())] == [words.get(str(c), str(c)) for c in get_args(kind)]
            assert info.description and info.description in w.toolTip()
            assert ed.same_as(getattr(getattr(current, section), name))
            assert w.isEnabled() == (ed.key not in INDEX_FIELDS)
            assert not ed.label.font().bold(), "nothing differs from the preset yet"
            # the analyst's words, not the engine's, on every page: Advanced too
            plain = grouped[ed.key] if ed.key in grouped else advanced[ed.key]
            assert (ed.label.text(), ed.explain.text()) == (plain.label, plain.explain)
            assert "_" not in ed.label.text() and ed.key not in ed.explain.text()
            assert ed.key in w.toolTip()  # support maps a field by its engine name: the tooltip says it everywhere...
            # ... and Advanced shows it beside the field, in small grey text
            assert ed.engine_name.text() == (ed.key if ed.key in advanced else "")
    # Advanced's tabs in plain words too, the engine's section name in their tooltip
    assert [dlg.advanced.tabText(i) for i in range(dlg.advanced.count())] == [
        "Reading files", "Passages", "Models", "Search", "Model-based ranking", "Search rounds", "Answers", "Prompts"]
    assert "<b>rerank</b>" in dlg.advanced.tabToolTip(dlg.section_tabs["rerank"])
    # plain words for the choices an analyst makes; the engine value is what OK stores
    assert dlg.editor("rerank", "mode").widget.currentText() == "Off"
    # index-shaping fields are read-only, and the Advanced section says why
    chunking = dlg.advanced.widget(dlg.section_tabs["chunking"])
    assert "filinglens index rebuild" in " ".join(lbl.text() for lbl in chunking.findChildren(type(ed.label)))
    assert dlg.editor("ingest", "workers").widget.isEnabled()


def test_each_field_shows_its_label_and_explanation_on_its_page(qtbot, make_ctx):
    dlg = open_dialog(qtbot, make_ctx())
    for key, ed in dlg.editors.items():
        dlg.show_field(key)
        assert ed.label.isVisible() and ed.explain.isVisible(), f"{key}: its explanation is on screen, not a tooltip"
        assert ed.explain.text().strip(), key
        assert ed.engine_name.isVisible() == (dlg.page_of[key] == dlg.advanced_index), key
    # what an analyst reads on Advanced: the referee's Elo temperature in words, its engine name beside it
    tau = dlg.editor("rerank", "elo_tau")
    dlg.show_field(tau.key)
    assert tau.label.text() == "Referee: weight of an upset" and "win" in tau.explain.text()
    assert tau.engine_name.text() == "rerank.elo_tau"


def test_the_dialog_fits_a_1366x768_screen_with_ok_and_cancel_in_sight(qtbot, make_ctx):
    ctx = make_ctx()
    ctx.set_overrides({"curation": {"max_rounds": 5}})  # the hint beside a changed field widens its row
    dlg = open_dialog(qtbot, ctx)
    room = QSize(1366, 768 - 48 - 32)  # less a taskbar and the window's title bar
    assert dlg.minimumSizeHint().height() <= room.height() and dlg.minimumSizeHint().width() <= room.width()
    assert dlg.sizeHint().height() <= room.height() and dlg.sizeHint().width() <= room.width()
    dlg.resize(dlg.sizeHint())
    ok = dlg.buttons.button(QDialogButtonBox.StandardButton.Ok)
    cancel = dlg.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    for index in range(dlg.tabs.count()):  # whichever page is open, the buttons stay inside the window
        dlg.tabs.setCurrentIndex(index)
        qtbot.wait(10)
        assert dlg.height() <= room.height()
        for button in (ok, cancel):
            corner = button.mapTo(dlg, QPoint(button.width() - 1, button.height() - 1))
            assert button.isVisible() and dlg.rect().contains(corner), (dlg.tabs.tabText(index), corner, dlg.size())
    # the longest page scrolls rather than growing the dialog
    rerank = dlg.advanced.widget(dlg.section_tabs["rerank"])
    dlg.tabs.setCurrentIndex(dlg.advanced_index)
    dlg.advanced.setCurrentWidget(rerank)
    qtbot.wait(10)
    assert rerank.verticalScrollBar().maximum() > 0


def test_changes_become_overrides_and_survive_a_restart(qtbot, make_ctx, qsettings):
    ctx = make_ctx()
    dlg = open_dialog(qtbot, ctx)
    top_k = dlg.editor("retrieval", "doc_top_k")
    mode = dlg.editor("answer", "numeric_mode")
    top_k.widget.setValue(3)
    mode.set_value("cot")
    assert mode.widget.currentText() == "Step-by-step reasoning"
    assert top_k.label.font().bold() and mode.label.font().bold()
    assert "preset: 5" in top_k.hint.text()
    assert dlg.tabs.tabText(dlg.page_of[top_k.key]) == "Speed and depth (2)"
    tau = dlg.editor("rerank", "elo_tau")  # an engine parameter: counted on Advanced and its section
    tau.widget.setValue(200.0)
    assert dlg.tabs.tabText(dlg.advanced_index) == "Advanced (1)"
    assert dlg.advanced.tabText(dlg.section_tabs["rerank"]) == "Model-based ranking (1)"
    tau.set_value(dlg.preset.rerank.elo_tau)
    assert dlg.tabs.tabText(dlg.advanced_index) == "Advanced"
    assert sorted(dlg.changed_keys()) == ["answer.numeric_mode", "retrieval.doc_top_k"]
    click_ok(qtbot, dlg)

    assert not dlg.isVisible()
    assert ctx.overrides == {"retrieval": {"doc_top_k": 3}, "answer": {"numeric_mode": "cot"}}
    s = ctx.settings()
    assert s.retrieval.doc_top_k == 3 and s.answer.numeric_mode == "cot"
    assert s.retrieval.passage_top_k == load_preset("default").retrieval.passage_top_k

    qsettings.sync()
    again = make_ctx()  # a new context on the same QSettings: the next start of the app
    assert again.overrides == ctx.overrides
    assert again.settings().retrieval.doc_top_k == 3 and again.settings().answer.numeric_mode == "cot"
    dlg2 = open_dialog(qtbot, again)
    assert dlg2.editor("retrieval", "doc_top_k").widget.value() == 3
    assert dlg2.editor("retrieval", "doc_top_k").label.font().bold()


def test_an_invalid_value_is_explained_and_nothing_changes(qtbot, make_ctx, qsettings):
    ctx = make_ctx()
    dlg = open_dialog(qtbot, ctx)
    dlg.editor("curation", "max_rounds").widget.setValue(5)  # a valid change that must not slip through
    threads = dlg.editor("models", "threads")
    threads.widget.setText("0")  # the field says ge=1
    click_ok(qtbot, dlg)

    assert dlg.isVisible(), "the dialog stays open so the analyst can fix the field"
    assert dlg.error_label.isVisible()
    text = dlg.error_label.text()
    assert "models.threads" in text and "greater than or equal to 1" in text and "Traceback" not in text
    assert dlg.tabs.tabText(dlg.tabs.currentIndex()).startswith("Models"), "the page of the field to fix is shown"
    assert "Models › Processor threads (models.threads)" in text
    assert "#b41e1e" in threads.widget.styleSheet()
    assert ctx.overrides == {} and ctx.settings().curation.max_rounds == load_preset("default").curation.max_rounds
    assert not qsettings.value(OVERRIDES_KEY)

    threads.widget.setText("abc")
    click_ok(qtbot, dlg)
    assert dlg.isVisible() and "valid integer" in dlg.error_label.text() and ctx.overrides == {}

    threads.widget.setText("4")  # fixed: the message goes, OK applies both changes
    assert not dlg.error_label.isVisible()
    click_ok(qtbot, dlg)
    assert not dlg.isVisible()
    assert ctx.overrides == {"models": {"threads": 4}, "curation": {"max_rounds": 5}}


def test_reset_to_preset_clears_the_overrides(qtbot, make_ctx, qsettings):
    ctx = make_ctx()
    ctx.set_overrides({"curation": {"max_rounds": 5}, "retrieval": {"rewrite_query": True}})
    dlg = open_dialog(qtbot, ctx)
    rounds = dlg.editor("curation", "max_rounds")
    assert rounds.widget.value() == 5 and rounds.label.font().bold()
    assert dlg.editor("retrieval", "rewrite_query").widget.isChecked()
    qtbot.mouseClick(dlg.reset_btn, Qt.MouseButton.LeftButton)
    assert rounds.widget.value() == load_preset("default").curation.max_rounds and not rounds.label.font().bold()
    assert dlg.changed_keys() == []
    assert ctx.overrides, "reset only changes the form; OK applies it"
    click_ok(qtbot, dlg)
    assert ctx.overrides == {}
    assert json.loads(qsettings.value(OVERRIDES_KEY)) == {}
    assert make_ctx().overrides == {}


def test_stored_overrides_from_another_version_are_dropped_field_by_field(make_ctx, qsettings):
    qsettings.setValue(OVERRIDES_KEY, json.dumps({"curation": {"max_rounds": 4, "gone": 1},
                                                  "retrieval": {"doc_top_k": 0}, "nosection": {"x": 1}}))
    ctx = make_ctx()
    assert ctx.overrides == {"curation": {"max_rounds": 4}}
    assert ctx.settings().curation.max_rounds == 4


def test_save_as_preset_writes_a_library_preset_and_selects_it(qtbot, make_ctx, home):
    ctx = make_ctx()
    dlg = open_dialog(qtbot, ctx)
    dlg.editor("retrieval", "passage_top_k").widget.setValue(7)
    assert dlg.save_as_preset("default") is None  # a built-in name is refused, with a message
    assert "built-in" in dlg.error_label.text() and dlg.isVisible()
    path = dlg.save_as_preset("wide")
    assert path == home / "presets" / "wide.json" and not dlg.isVisible()
    assert json.loads(path.read_text()) == {"retrieval": {"passage_top_k": 7}}
    assert "wide" in list_presets(home) and "wide" not in list_presets()
    assert ctx.preset == "wide" and ctx.overrides == {}
    assert ctx.settings().retrieval.passage_top_k == 7


def test_window_entry_points_and_ask_tab_summary(qtbot, qsettings, home):
    from analyst_app.window import MainWindow

    window = MainWindow(home, store=qsettings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        ask = window.ask_view
        assert window.settings_act.shortcut() == QKeySequence("Ctrl+,")
        assert ask.settings_btn.text() == "Settings…"
        window.settings_act.trigger()
        dlg = ask.settings_dialog
        assert dlg is not None and dlg.isVisible()
        dlg.editor("curation", "max_rounds").widget.setValue(4)
        dlg.editor("retrieval", "doc_top_k").widget.setValue(2)
        dlg.editor("models", "chat_model").widget.setText("smollm2-135m")
        click_ok(qtbot, dlg)
        assert "default + 2 changes" in ask.preset.toolTip() and "curation.max_rounds = 4" in ask.preset.toolTip()
        assert ask.settings_btn.text() == "Settings… (2 changed)"
        assert ask.model_box.currentText() == "smollm2-135m" == window.ctx.settings().models.chat_model
        # the button opens it too, showing what was applied
        qtbot.mouseClick(ask.settings_btn, Qt.MouseButton.LeftButton)
        again = ask.settings_dialog
        assert again is not dlg and again.isVisible() and again.editor("curation", "max_rounds").widget.value() == 4
        ask.settings_dialog.reject()
        # switching preset keeps the changes the new preset does not already make
        ask.preset.setCurrentText("fast")  # fast: 2 rounds, another chat model
        assert window.ctx.overrides == {"curation": {"max_rounds": 4}, "retrieval": {"doc_top_k": 2}}
        assert "fast + 2 changes" in ask.preset.toolTip()
    finally:
        window.close()
