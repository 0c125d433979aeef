"""The settings editor, in the analyst's terms: one page per decision (speed and depth, models, reranking, the
library) with a plain label and a visible one-line explanation per field, and every other engine parameter on an
"Advanced" page, one tab per section of the settings tree, each with a plain label and explanation too and its engine
name in small grey text.

The pages, labels and explanations come from ``resources/settings_groups.toml`` (:func:`engine.settings.settings_groups`,
:func:`engine.settings.advanced_fields`: a field added to the engine is refused there until it is labelled) and the
editors from the pydantic model, with its bounds on the spin box and its full description as the tooltip. What differs from the preset is shown bold with the preset's value beside it; OK validates through the
engine and keeps only those differences as the context's overrides. Every page scrolls, so the dialog fits a small
screen (1366×768) with its buttons in sight.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from analyst_app.context import AppContext
from engine.errors import ConfigError
from engine.settings import (
    SECTIONS,
    GroupField,
    Settings,
    advanced_fields,
    advanced_keys,
    advanced_section_titles,
    save_preset,
    settings_groups,
    user_presets_dir,
)

INT_MIN, INT_MAX = -(2**31), 2**31 - 1  # QSpinBox holds a C int

# Fields that shape the index on disk. Changing one here would make new filings disagree with the index
# (or the index refuse to open), so the dialog shows them read-only; workers only sets parallelism.
INDEX_FIELDS = frozenset({"ingest.min_chars_per_page", "ingest.html_page_chars", "chunking.size", "chunking.overlap",
                          "models.embedder"})
REINDEX_NOTE = ("Greyed-out fields shape the index on disk: changing them requires re-indexing "
                "(<code>filinglens index rebuild</code>), so they are read-only here.")

def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    """``int | None`` → ``(int, True)``; anything else → ``(annotation, False)``."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = get_args(annotation)
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(rest) < len(args):
            return rest[0], True
    return annotation, False


def _bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    """The ge/gt and le/lt limits from the field's metadata (annotated_types). A strict bound of an integer field
    moves to the next integer; a float field's ``gt=0`` stays 0 (the spin box cannot express "above")."""
    lo = hi = None
    whole = info.annotation is int
    for m in info.metadata:
        if getattr(m, "ge", None) is not None:
            lo = m.ge
        if getattr(m, "gt", None) is not None:
            lo = m.gt + 1 if whole else m.gt
        if getattr(m, "le", None) is not None:
            hi = m.le
        if getattr(m, "lt", None) is not None:
            hi = m.lt - 1 if whole else m.lt
    return lo, hi


def _text(value: Any) -> str:
    return "" if value is None else str(value)


class FieldEditor:
    """One generated input for ``section.name``: the widget, its label, the visible line that explains it, and value
    conversion. ``plain`` (``resources/settings_groups.toml``) gives the analyst's label, explanation and words for
    fixed choices. ``show_key``: the engine name in small grey text beside the input (Advanced: what support and the docs use)."""

    def __init__(self, section: str, name: str, info: FieldInfo, plain: GroupField, *, read_only: bool = False,
                 show_key: bool = False) -> None:
        self.section, self.name, self.info = section, name, info
        self.key = f"{section}.{name}"
        self.read_only = read_only
        kind, self.optional = _unwrap_optional(info.annotation)
        self.kind = kind
        if self.optional:  # empty text means None, so a line edit is the one widget that can say "not set"
            self.widget: QWidget = QLineEdit()
            self.widget.setPlaceholderText("empty = not set")
        elif kind is bool:
            self.widget = QCheckBox()
        elif kind is int:
            lo, hi = _bounds(info)
            self.widget = QSpinBox()
            self.widget.setRange(int(lo) if lo is not None else INT_MIN, int(hi) if hi is not None else INT_MAX)
        elif kind is float:
            lo, hi = _bounds(info)
            self.widget = QDoubleSpinBox()
            self.widget.setDecimals(4)
            self.widget.setRange(float(lo) if lo is not None else -1e12, float(hi) if hi is not None else 1e12)
        elif get_origin(kind) is Literal:
            self.choices = list(get_args(kind))
            words = dict(plain.choices)
            self.widget = QComboBox()
            self.widget.addItems([words.get(str(c), str(c)) for c in self.choices])
        else:  # str, Path and anything else pydantic can parse from text
            self.widget = QLineEdit()
        if isinstance(self.widget, QLineEdit) and kind not in (int, float):
            self.widget.setMinimumWidth(self.widget.fontMetrics().horizontalAdvance("x") * 40)
        elif isinstance(self.widget, QSpinBox | QDoubleSpinBox | QLineEdit):  # a number, optional or not
            self.widget.setMinimumWidth(self.widget.fontMetrics().horizontalAdvance("0") * 10 + 30)
            self.widget.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.widget.setObjectName(self.key)
        self.widget.setEnabled(not read_only)
        self.label = QLabel(plain.label)
        self.label.setBuddy(self.widget)
        self.explain = QLabel(plain.explain)
        self.explain.setWordWrap(True)
        self.explain.setStyleSheet("color:#666;font-size:9pt")
        self.hint = QLabel()  # the preset's value when this one differs; "requires re-indexing" when read-only
        self.hint.setStyleSheet("color:#777")
        self.engine_name = QLabel(self.key if show_key else "")
        self.engine_name.setStyleSheet("color:#999;font-size:8pt;font-family:monospace")
        self.engine_name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.engine_name.setVisible(show_key)
        self.row = QWidget()  # the input with the preset's value beside it, the explanation under them
        column = QVBoxLayout(self.row)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        line = QHBoxLayout()
        line.addWidget(self.widget)
        line.addWidget(self.hint)
        line.addStretch(1)
        line.addWidget(self.engine_name)
        column.addLayout(line)
        column.addWidget(self.explain)
        self.base_tip = f"<b>{self.key}</b><br>{info.description or ''}"
        lo, hi = _bounds(info)
        if lo is not None or hi is not None:
            self.base_tip += f"<br><i>range: {'' if lo is None else lo} … {'' if hi is None else hi}</i>"
        if read_only:
            self.base_tip += "<br><i>Changing it requires re-indexing (filinglens index rebuild).</i>"

    def value(self) -> Any:
        w = self.widget
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, QSpinBox | QDoubleSpinBox):
            return w.value()
        if isinstance(w, QComboBox):
            return self.choices[w.currentIndex()]
        text = w.text().strip()  # type: ignore[attr-defined]
        return None if self.optional and not text else text  # pydantic parses the text (int, Path…)

    def set_value(self, value: Any) -> None:
        w = self.widget
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QSpinBox | QDoubleSpinBox):
            w.setValue(value)
        elif isinstance(w, QComboBox):
            w.setCurrentIndex(self.choices.index(value) if value in self.choices else 0)
        else:
            w.setText(_text(value))  # type: ignore[attr-defined]

    def same_as(self, value: Any) -> bool:
        """True when the widget shows ``value`` (text fields compare as text: "4" is 4)."""
        if isinstance(self.widget, QLineEdit):
            return self.widget.text().strip() == _text(value)
        return self.value() == value

    def connect(self, slot: Any) -> None:
        w: Any = self.widget
        if isinstance(w, QCheckBox):
            signal = w.toggled
        elif isinstance(w, QSpinBox | QDoubleSpinBox):
            signal = w.valueChanged
        elif isinstance(w, QComboBox):
            signal = w.currentIndexChanged
        else:
            signal = w.textChanged
        signal.connect(lambda *_a: slot(self))

    def mark(self, preset_value: Any, problem: str = "") -> bool:
        """Bold label and the preset's value beside it when changed, red when invalid; returns "changed"."""
        changed = not self.same_as(preset_value)
        font = self.label.font()
        font.setBold(changed)
        self.label.setFont(font)
        color = "#b41e1e" if problem else ("#888" if self.read_only else "")
        self.label.setStyleSheet(f"color:{color}" if color else "")
        self.widget.setStyleSheet("border:1px solid #b41e1e" if problem else "")
        if self.read_only:
            self.hint.setText("requires re-indexing")
        else:
            self.hint.setText(f"preset: {_text(preset_value) or 'not set'}" if changed else "")
        tip = self.base_tip + (f"<br>Preset value: {_text(preset_value) or 'not set'}" if changed else "")
        if problem:
            tip += f"<br><span style='color:#b41e1e'>{problem}</span>"
        for w in (self.label, self.widget, self.hint, self.explain, self.engine_name):
            w.setToolTip(tip)
        return changed


class SettingsDialog(QDialog):
    """Edit every setting of the current preset; OK stores the differences as ``ctx.overrides``."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle(f"Settings — preset {ctx.preset}")
        self.editors: dict[str, FieldEditor] = {}
        self.problems: dict[str, str] = {}
        self.preset = ctx.preset_settings()
        start_error = ""
        try:
            current = ctx.settings()
        except ConfigError as exc:  # stored overrides no longer valid: start from the preset, say why
            current, start_error = self.preset, str(exc)

        # one page per decision, then "Advanced": the engine parameters no group names, one tab per section
        self.tabs = QTabWidget()
        self.page_titles: list[str] = []
        self.page_of: dict[str, int] = {}  # field key -> its page (tab of self.tabs)
        for group in settings_groups():
            form, page = self._page(group.explain)
            for gf in group.fields:
                ed = self._add_editor(form, gf.section, gf.name, current, gf)
                self.page_of[ed.key] = len(self.page_titles)
            self.tabs.addTab(page, group.title)
            self.tabs.setTabToolTip(len(self.page_titles), group.explain)
            self.page_titles.append(group.title)
        self.advanced_index = len(self.page_titles)
        self.advanced = QTabWidget()  # the sections of the settings tree, as the engine names them
        self.section_tabs: dict[str, int] = {}
        plain, self.section_titles = advanced_fields(), advanced_section_titles()
        for section, keys in advanced_keys().items():
            form, page = self._page("")  # the engine's section name and description are its tab's tooltip
            if any(k in INDEX_FIELDS for k in keys):
                note = QLabel(REINDEX_NOTE)
                note.setWordWrap(True)
                note.setStyleSheet("color:#8a5a00")
                form.addRow(note)
            for key in keys:
                ed = self._add_editor(form, section, key.partition(".")[2], current, plain[key], show_key=True)
                self.page_of[ed.key] = self.advanced_index
            self.section_tabs[section] = self.advanced.addTab(page, self.section_titles[section])
            self.advanced.setTabToolTip(self.section_tabs[section],
                                        f"<b>{section}</b>: {Settings.model_fields[section].description}")
        advanced = QWidget()
        al = QVBoxLayout(advanced)
        al.setContentsMargins(0, 6, 0, 0)
        intro = QLabel("Engine parameters for tuning and research; the other pages hold what most analysts change. "
                       "Each field's engine name, in grey, is what the documentation and support use; hover a field "
                       "for its full description.")
        intro.setWordWrap(True)
        al.addWidget(intro)
        al.addWidget(self.advanced, 1)
        self.tabs.addTab(advanced, "Advanced")
        self.tabs.setTabToolTip(self.advanced_index, "Every other engine parameter, by section")
        self.page_titles.append("Advanced")

        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet("color:#b41e1e;background:#fdecea;border:1px solid #f0b8b2;padding:6px")
        self.error_label.setVisible(False)
        self.summary = QLabel()
        self.summary.setStyleSheet("color:#555")

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.reset_btn = QPushButton("Reset to preset")
        self.reset_btn.setToolTip(f"Show the values of preset {ctx.preset} again (OK applies)")
        self.save_btn = QPushButton("Save as preset…")
        self.save_btn.setToolTip(f"Save these values as a preset of this library ({user_presets_dir(ctx.home)})")
        self.ok_btn = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.reset_btn.clicked.connect(self.reset_to_preset)
        self.save_btn.clicked.connect(lambda: self.save_as_preset())
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        lay = QVBoxLayout(self)
        lay.addWidget(self.tabs, 1)
        lay.addWidget(self.error_label)
        lay.addWidget(self.summary)
        bottom = QHBoxLayout()
        bottom.addWidget(self.reset_btn)
        bottom.addWidget(self.save_btn)
        bottom.addStretch(1)
        bottom.addWidget(self.buttons)
        lay.addLayout(bottom)
        self._refresh()
        self._fit_screen()
        if start_error:
            self._show_error(f"The stored changes could not be applied: {start_error}")

    def _page(self, explain: str) -> tuple[QFormLayout, QScrollArea]:
        """A scrolling page: its explanation on top, then a form of fields."""
        body = QWidget()
        form = QFormLayout(body)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        form.setVerticalSpacing(10)
        if explain:
            head = QLabel(explain)
            head.setWordWrap(True)
            head.setStyleSheet("font-weight:600")
            form.addRow(head)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        return form, scroll

    def _add_editor(self, form: QFormLayout, section: str, name: str, current: Settings,
                    plain: GroupField, *, show_key: bool = False) -> FieldEditor:
        info = SECTIONS[section].model_fields[name]
        ed = FieldEditor(section, name, info, plain, read_only=f"{section}.{name}" in INDEX_FIELDS, show_key=show_key)
        ed.set_value(getattr(getattr(current, section), name))
        form.addRow(ed.label, ed.row)
        self.editors[ed.key] = ed
        ed.connect(self._edited)
        return ed

    def _fit_screen(self) -> None:
        """A size that shows a page without crowding, never taller or wider than the screen's free area."""
        want = self.sizeHint().expandedTo(self.minimumSizeHint())
        width, height = max(want.width(), 920), max(want.height(), 600)  # most explanations on one line
        screen = self.screen()
        if screen is not None:
            free = screen.availableGeometry()
            width, height = min(width, free.width() - 40), min(height, free.height() - 60)  # the title bar
        self.resize(width, height)

    # -- state ------------------------------------------------------------------------------------
    def editor(self, section: str, name: str) -> FieldEditor:
        return self.editors[f"{section}.{name}"]

    def values(self) -> dict[str, dict[str, Any]]:
        """Every field as the form shows it, by section (not yet validated)."""
        out: dict[str, dict[str, Any]] = {}
        for ed in self.editors.values():
            out.setdefault(ed.section, {})[ed.name] = ed.value()
        return out

    def changed_keys(self) -> list[str]:
        return [k for k, ed in self.editors.items() if not ed.same_as(self._preset_value(ed))]

    def _preset_value(self, ed: FieldEditor) -> Any:
        return getattr(getattr(self.preset, ed.section), ed.name)

    def _edited(self, ed: FieldEditor) -> None:
        self.problems.pop(ed.key, None)
        if not self.problems:
            self.error_label.setVisible(False)
        self._refresh()

    def _refresh(self) -> None:
        per_page: dict[int, int] = {}
        per_section: dict[str, int] = {}  # of the Advanced page
        for ed in self.editors.values():
            if ed.mark(self._preset_value(ed), self.problems.get(ed.key, "")):
                page = self.page_of[ed.key]
                per_page[page] = per_page.get(page, 0) + 1
                if page == self.advanced_index:
                    per_section[ed.section] = per_section.get(ed.section, 0) + 1
        for index, title in enumerate(self.page_titles):
            n = per_page.get(index, 0)
            self.tabs.setTabText(index, title + (f" ({n})" if n else ""))
        for section, index in self.section_tabs.items():
            n = per_section.get(section, 0)
            self.advanced.setTabText(index, self.section_titles[section] + (f" ({n})" if n else ""))
        total = sum(per_page.values())
        self.summary.setText(f"{total} field{'s' if total != 1 else ''} differ from preset “{self.ctx.preset}” "
                             "(shown bold)" if total else f"All fields as in preset “{self.ctx.preset}”")

    # -- actions ----------------------------------------------------------------------------------
    def reset_to_preset(self) -> None:
        for ed in self.editors.values():
            ed.set_value(self._preset_value(ed))
        self.problems.clear()
        self.error_label.setVisible(False)
        self._refresh()

    def validated(self) -> Settings | None:
        """The form as engine settings, or None with the problems shown beside their fields."""
        try:
            settings = self.preset.with_overrides(**self.values())
        except ConfigError as exc:
            self.problems = dict(exc.problems)
            lines = [f"{self._where(k)}: {v}" for k, v in self.problems.items()] or [str(exc)]
            self._show_error("Please correct:\n" + "\n".join(f"• {line}" for line in lines))
            first = next((self.editors[k] for k in self.problems if k in self.editors), None)
            if first is not None:
                self.show_field(first.key)
                first.widget.setFocus()
            self._refresh()
            return None
        self.problems.clear()
        self.error_label.setVisible(False)
        return settings

    def show_field(self, key: str) -> None:
        """Bring the page (and Advanced section) of field ``key`` to the front."""
        page = self.page_of[key]
        self.tabs.setCurrentIndex(page)
        if page == self.advanced_index:
            self.advanced.setCurrentIndex(self.section_tabs[self.editors[key].section])

    def _where(self, key: str) -> str:
        ed = self.editors.get(key)
        if ed is None:
            return key
        page = self.page_titles[self.page_of[key]]
        where = f"Advanced › {self.section_titles[ed.section]}" if self.page_of[key] == self.advanced_index else page
        return f"{where} › {ed.label.text()} ({key})"

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(True)

    def accept(self) -> None:
        settings = self.validated()
        if settings is None:
            return  # stay open: the analyst fixes the field
        self.ctx.apply_settings(settings)
        n = sum(len(v) for v in self.ctx.overrides.values())
        self.ctx.message.emit(f"settings: preset {self.ctx.preset}" + (f" + {n} changes" if n else ""), 5000)
        super().accept()

    def save_as_preset(self, name: str | None = None) -> Path | None:
        """Write the form as a preset of this library and switch to it; asks for a name when none is given."""
        settings = self.validated()
        if settings is None:
            return None
        if name is None:
            name, ok = QInputDialog.getText(self, "Save as preset", "Preset name (letters, digits, - and _):")
            name = name.strip()
            if not ok or not name:
                return None
            target = user_presets_dir(self.ctx.home) / f"{name}.json"
            if target.exists() and QMessageBox.question(
                    self, "Save as preset", f"Replace the preset {name}?") != QMessageBox.StandardButton.Yes:
                return None
        try:
            path = save_preset(name, settings, self.ctx.home)
        except (ConfigError, OSError) as exc:
            self._show_error(f"Cannot save the preset: {exc}")
            return None
        self.ctx.apply_settings(settings, preset=name)
        self.ctx.message.emit(f"saved preset {name} to {path}", 8000)
        super().accept()
        return path


def changes_text(overrides: dict[str, dict]) -> str:
    """``"retrieval.doc_top_k = 3, answer.numeric_mode = cot"``."""
    return ", ".join(f"{s}.{k} = {_text(v) or 'not set'}" for s, fields in overrides.items() for k, v in fields.items())

