"""The application's views: library, ask (with the page viewer), inspect, history."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def hint_label(text: str, style: str = "padding:24px") -> QLabel:
    """A grey, centred, wrapping line that stands where a view has nothing to show yet."""
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setStyleSheet(f"color:#777;font-size:11pt;{style}")
    return label
