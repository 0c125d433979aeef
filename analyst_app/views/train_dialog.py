"""The options of a reranker training run (what ``filinglens train-reranker`` asks on the command line)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
    QLineEdit, QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from analyst_app.workers import TrainOptions

DEVICES = ("auto", "cpu", "cuda")


class TrainDialog(QDialog):
    """Choose the training options; OK refuses an exclude file that does not exist."""

    def __init__(self, out_dir: Path, options: TrainOptions | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Train the reranker")
        options = options or TrainOptions()

        intro = QLabel(
            "Mines question–passage pairs from the filings in this library (each question with its correct "
            "passage and hard negatives; a tenth of the filings is held out to measure the result), then trains "
            "a cross-encoder reranker from the bundled MiniLM weights. Training runs in the background; a "
            "cancelled run resumes from its checkpoint when started again with the same settings.\n\n"
            f"The model is saved in {out_dir}.")
        intro.setWordWrap(True)
        intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label = QLabel()  # why OK was refused
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color:#b41e1e;background:#fdecea;border:1px solid #f0b8b2;padding:6px")
        self.error_label.setVisible(False)

        self.pairs = QSpinBox()
        self.pairs.setRange(20, 100_000)
        self.pairs.setSingleStep(100)
        self.pairs.setValue(options.pairs)
        self.pairs.setToolTip("Questions mined from the library; each trains with 1 correct and 8 wrong passages")
        self.epochs = QSpinBox()
        self.epochs.setRange(1, 20)
        self.epochs.setValue(options.epochs)
        self.epochs.setToolTip("Passes over the training pairs")
        self.device = QComboBox()
        self.device.addItems(DEVICES)
        self.device.setCurrentIndex(DEVICES.index(options.device) if options.device in DEVICES else 0)
        self.device.setToolTip("auto: the GPU when torch sees one (with fp16), else the CPU")
        for box in (self.pairs, self.epochs):
            box.setAlignment(Qt.AlignmentFlag.AlignRight)
            box.setMinimumWidth(box.fontMetrics().horizontalAdvance("0") * 8 + 30)

        self.exclude = QLineEdit(str(options.exclude_questions or ""))
        self.exclude.setPlaceholderText("optional: a question file (.jsonl)")
        self.exclude.setToolTip("The filings its questions are about are kept out of training, so an evaluation "
                                "on that file does not test the reranker on what it was trained on")
        self.exclude.setMinimumWidth(self.exclude.fontMetrics().horizontalAdvance("x") * 44)
        self.exclude.textChanged.connect(lambda _t: self.error_label.setVisible(False))
        self.browse_btn = QPushButton("Browse…")
        self.browse_btn.clicked.connect(self.choose_exclude_file)
        exclude_row = QWidget()
        er = QHBoxLayout(exclude_row)
        er.setContentsMargins(0, 0, 0, 0)
        er.addWidget(self.exclude, 1)
        er.addWidget(self.browse_btn)

        self.llm_share = QDoubleSpinBox()
        self.llm_share.setRange(0.0, 1.0)
        self.llm_share.setSingleStep(0.1)
        self.llm_share.setDecimals(1)
        self.llm_share.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.llm_share.setValue(options.llm_share)
        self.llm_share.setToolTip("This share of the mined questions is reworded in an analyst's words by the chat "
                                  "model chosen on the Ask tab (slower); a rewording that loses the company, period "
                                  "or metric is refused and the template question kept")
        self.register = QCheckBox("Register as the default reranker when done")
        self.register.setChecked(options.register)
        self.register.setToolTip("Questions use the registered model when Settings › Retrieval › Reranker is "
                                 "“trained”")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.addRow("Examples to mine", self.pairs)
        form.addRow("Epochs", self.epochs)
        form.addRow("Device", self.device)
        form.addRow("Exclude the filings of this\nevaluation question file", exclude_row)
        form.addRow("Share of questions reworded\nby the chat model", self.llm_share)
        form.addRow("", self.register)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Train")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        lay.addWidget(self.error_label)
        lay.addStretch(1)
        lay.addWidget(self.buttons)
        self.setMinimumWidth(560)

    def values(self) -> TrainOptions:
        """The options as the form shows them (the exclude file is not checked here)."""
        text = self.exclude.text().strip()
        return TrainOptions(pairs=self.pairs.value(), epochs=self.epochs.value(), device=self.device.currentText(),
                            exclude_questions=Path(text).expanduser() if text else None,
                            llm_share=round(self.llm_share.value(), 1), register=self.register.isChecked())

    def problem(self) -> str:
        """Why the options cannot be used as they are ("" when they can)."""
        path = self.values().exclude_questions
        if path is not None and not path.is_file():
            return f"The evaluation question file {path} does not exist."
        return ""

    def choose_exclude_file(self) -> None:
        current = self.values().exclude_questions
        start = str(current.parent if current else Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Evaluation question file", start,
                                              "Question files (*.jsonl);;All files (*)")
        if path:
            self.exclude.setText(path)

    def accept(self) -> None:
        problem = self.problem()
        if problem:  # stay open: the analyst fixes the path
            self.error_label.setText(problem)
            self.error_label.setVisible(True)
            self.adjustSize()  # room for the message without squeezing the form
            self.exclude.setFocus()
            return
        super().accept()
