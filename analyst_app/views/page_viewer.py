"""The page viewer: a filing page rendered with PyMuPDF, the cited evidence (or one table cell) highlighted;
HTML filings (and PDF pages whose file is gone) show the page text stored in the library with the span marked."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QImage,
    QKeySequence,
    QPainter,
    QPen,
    QPixmap,
    QShortcut,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from analyst_app.views import hint_label
from engine.evidence import find_evidence, starts_mid_line
from engine.pages import page_label, printed_note
from engine.records import Chunk, Filing, StoredFact

log = logging.getLogger(__name__)

HIGHLIGHT = QColor(255, 214, 0, 90)
HIGHLIGHT_EDGE = QColor(230, 150, 0, 200)
CELL_FILL = QColor(255, 200, 0, 110)  # one table cell: a stronger fill and outline than evidence lines
CELL_EDGE = QColor(215, 70, 0)
CELL_TEXT = QColor(255, 190, 60)
CELL_PAD = 3.0  # pixels around the cell's box (the box hugs the glyphs)
ZOOMS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)
PDF_SUFFIXES = {".pdf"}


class PageCanvas(QLabel):
    """Shows the rendered page pixmap."""

    def __init__(self) -> None:
        super().__init__()
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setBackgroundRole(self.backgroundRole())
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)


class PageViewer(QWidget):
    """Zoomable, pageable view of one filing with the cited passage highlighted."""

    page_changed = Signal(int)  # the page index (0-based) now shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library: Any = None
        self.filing: Filing | None = None
        self.chunk: Chunk | None = None
        self.more: tuple[Chunk, ...] = ()  # further fragments highlighted with the chunk (the rows of one listing)
        self.facts: tuple[StoredFact, ...] = ()  # table cells to box (show_fact / show_facts)
        self.page_index = 0  # 0-based; the page box shows the reader's number
        self.folios: dict[int, str] = {}  # page index → the number the page prints, for the open filing
        self.zoom = 1.25
        self.fit_width = True  # zoom follows the viewer's width until the user zooms by hand
        self.highlights: list[Any] = []
        self.mode = "empty"  # empty | pdf | text
        self._cell_rects: list[QRectF] = []  # the cells' highlights on the shown pixmap
        self._cell_ranges: list[tuple[int, int]] = []  # the cells' characters highlighted in the text view
        self._page_image: tuple[tuple, QImage] | None = None  # the last page rendered, before any highlight
        self._docs: OrderedDict[str, Any] = OrderedDict()
        self._resize_timer = QTimer(self)  # re-render once the user stops resizing
        self._resize_timer.setSingleShot(True)
        self._resize_timer.setInterval(120)
        self._resize_timer.timeout.connect(lambda: self.filing is not None and self.mode == "pdf" and self._render())

        self.title = QLabel("No page open")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)

        self.prev_btn = self._button("◀", "Previous page (PgUp)", self.previous_page)
        self.next_btn = self._button("▶", "Next page (PgDown)", self.next_page)
        self.page_box = QSpinBox()
        self.page_box.setMinimum(1)
        self.page_box.setKeyboardTracking(False)
        self.page_box.valueChanged.connect(lambda v: self.go_to(v - 1))
        self.page_total = QLabel("/ –")
        self.page_total.setToolTip("Pages in the file, and the number the page prints when it is another")
        self.zoom_out_btn = self._button("−", "Zoom out (Ctrl+-)", self.zoom_out)
        self.zoom_in_btn = self._button("+", "Zoom in (Ctrl++)", self.zoom_in)
        self.zoom_label = QLabel()
        self.zoom_label.setMinimumWidth(44)
        self.fit_btn = self._button("Fit width", "Zoom the page to the viewer's width", self._fit_clicked)
        self.fit_btn.setCheckable(True)
        self.fit_btn.setChecked(True)
        self.text_btn = self._button("Text", "Show the text FilingLens extracted from this page", self._toggle_text)
        self.text_btn.setCheckable(True)
        self.match_label = QLabel()
        self.match_label.setStyleSheet("color: #666;")

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        for w in (self.prev_btn, self.page_box, self.page_total, self.next_btn):
            bar.addWidget(w)
        bar.addSpacing(12)
        for w in (self.zoom_out_btn, self.zoom_label, self.zoom_in_btn, self.fit_btn):
            bar.addWidget(w)
        bar.addSpacing(12)
        bar.addWidget(self.text_btn)
        bar.addStretch(1)
        bar.addWidget(self.match_label)

        self.canvas = PageCanvas()
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.canvas)
        self.scroll.setWidgetResizable(False)
        self.scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.scroll.setStyleSheet("QScrollArea { background: #5a5a5a; }")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        mono = self.text.font()
        mono.setFamily("monospace")
        mono.setStyleHint(mono.StyleHint.Monospace)
        self.text.setFont(mono)
        self.placeholder = hint_label("Click a citation on the Ask tab, a passage on the Inspect tab,\n"
                                      "or double-click a filing in the Library to see its pages here.")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.scroll)
        self.stack.addWidget(self.text)
        self.stack.addWidget(self.placeholder)
        self.stack.setCurrentWidget(self.placeholder)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        lay.addLayout(bar)
        lay.addWidget(self.stack, 1)

        for seq, fn in ((QKeySequence.StandardKey.ZoomIn, self.zoom_in), ("Ctrl+=", self.zoom_in),
                        (QKeySequence.StandardKey.ZoomOut, self.zoom_out),
                        (QKeySequence.StandardKey.MoveToNextPage, self.next_page),
                        (QKeySequence.StandardKey.MoveToPreviousPage, self.previous_page)):
            sc = QShortcut(QKeySequence(seq), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(fn)
        self._update_controls()

    def _button(self, text: str, tip: str, slot: Any) -> QToolButton:
        b = QToolButton()
        b.setText(text)
        b.setToolTip(tip)
        b.setAutoRaise(False)
        b.setMinimumWidth(max(30, b.sizeHint().width()))  # never elided ("F…h" for "Fit width")
        b.clicked.connect(slot)
        return b

    # -- public ------------------------------------------------------------------------------------
    def set_library(self, library: Any) -> None:
        self.library = library
        self.clear()

    def clear(self) -> None:
        self.filing, self.chunk, self.facts, self.mode, self.highlights = None, None, (), "empty", []
        self.more = ()
        self.folios = {}
        self._cell_rects, self._cell_ranges, self._page_image = [], [], None
        self.canvas.clear()
        self.text.clear()
        self.title.setText("No page open")
        self.match_label.clear()
        self.stack.setCurrentWidget(self.placeholder)
        self._update_controls()

    def show_chunk(self, filing: Filing, chunk: Chunk | None, page_index: int | None = None,
                   more: Sequence[Chunk] = ()) -> None:
        """Open ``filing`` at the chunk's page (or at ``page_index``, 0-based) with the chunk highlighted, and with
        it each of ``more`` printed on that page (the rows of a listing the answer rests on, not only its first)."""
        self._open(filing)
        self.chunk, self.facts = chunk, ()
        self.more = tuple(m for m in more if chunk is not None and m.page_index == chunk.page_index)
        page = chunk.page_index if chunk is not None and page_index is None else (page_index or 0)
        self.go_to(page, force=True)

    def show_filing(self, filing: Filing, page_index: int = 0) -> None:
        self.show_chunk(filing, None, page_index)

    def show_fact(self, filing: Filing, stored: StoredFact) -> None:
        """Open ``filing`` at the fact's page with its table cell highlighted: its box on a rendered PDF page,
        its characters in the page text otherwise (HTML filings, the Text view)."""
        self.show_facts(filing, [stored])

    def show_facts(self, filing: Filing, stored: Sequence[StoredFact]) -> None:
        """Open ``filing`` at the first fact's page with every cell of ``stored`` on that page boxed (a cited page
        of a computed answer: the inputs printed there, not the whole table)."""
        self._open(filing)
        self.chunk, self.facts, self.more = None, tuple(stored), ()
        self.go_to(stored[0].fact.page_index if stored else 0, force=True)

    @property
    def fact(self) -> StoredFact | None:
        """The first cell boxed, if any."""
        return self.facts[0] if self.facts else None

    def _open(self, filing: Filing) -> None:
        """Make ``filing`` the open one, with the folios its pages print."""
        if self.filing is None or self.filing.id != filing.id or self.filing.sha256 != filing.sha256:
            try:
                self.folios = self.library.printed_folios(filing.id) if self.library is not None else {}
            except Exception:  # noqa: BLE001 - without folios the reader's numbers are shown alone
                self.folios = {}
        self.filing = filing

    def highlight_rect(self) -> QRectF | None:
        """The (first) highlighted cell on the shown PDF page, in the pixmap's device-independent pixels (the fact's
        box × zoom, padded by ``CELL_PAD``); None when no cell is highlighted on a rendered page."""
        rects = self.highlight_rects()
        return rects[0] if rects else None

    def highlight_rects(self) -> list[QRectF]:
        """Every highlighted cell on the shown PDF page, in the order the cells were given."""
        return [QRectF(r) for r in self._cell_rects] if self.mode == "pdf" else []

    def highlight_range(self) -> tuple[int, int] | None:
        """The (first) highlighted cell's characters (start, end) in the shown page text; None when none is."""
        return self._cell_ranges[0] if self.mode == "text" and self._cell_ranges else None

    @property
    def n_pages(self) -> int:
        return self.filing.n_pages if self.filing is not None else 0

    def pixmap(self) -> QPixmap | None:
        pm = self.canvas.pixmap()
        return None if pm is None or pm.isNull() else pm

    def go_to(self, page_index: int, force: bool = False) -> None:
        """Show page ``page_index`` (0-based) of the open filing."""
        if self.filing is None:
            return
        page_index = max(0, min(page_index, self.n_pages - 1))
        if page_index == self.page_index and not force:
            return
        self.page_index = page_index
        self._render()
        self.page_changed.emit(page_index)

    def next_page(self) -> None:
        self.go_to(self.page_index + 1)

    def previous_page(self) -> None:
        self.go_to(self.page_index - 1)

    def zoom_in(self) -> None:
        self._set_zoom(next((z for z in ZOOMS if z > self.zoom + 1e-6), ZOOMS[-1]))

    def zoom_out(self) -> None:
        self._set_zoom(next((z for z in reversed(ZOOMS) if z < self.zoom - 1e-6), ZOOMS[0]))

    def _set_zoom(self, zoom: float, fit: bool = False) -> None:
        self.fit_width = fit
        self.fit_btn.setChecked(fit)
        if abs(zoom - self.zoom) > 1e-3:
            self.zoom = zoom
            if self.mode == "pdf":
                self._render()
        self._update_controls()

    def _fit_clicked(self) -> None:
        self.fit_width = self.fit_btn.isChecked()
        if self.fit_width and self.mode == "pdf":
            self._render()
        self._update_controls()

    def _fit_zoom(self, page: Any) -> float:
        # the page is taller than wide: leave room for the vertical scroll bar it will bring
        # the stack's width is settled even while the scroll area is hidden; a page at fit width is
        # taller than the view, so the vertical scroll bar's room is always set aside
        bar = self.scroll.verticalScrollBar().sizeHint().width()
        width = self.stack.width() - 2 * self.scroll.frameWidth() - bar - 4
        return max(ZOOMS[0], min(ZOOMS[-1], width / max(1.0, page.rect.width)))

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if self.fit_width and self.mode == "pdf":
            self._resize_timer.start()

    def _toggle_text(self) -> None:
        if self.filing is not None:
            self._render()

    # -- rendering --------------------------------------------------------------------------------
    def _doc(self, path: str) -> Any:
        import pymupdf

        doc = self._docs.get(path)
        if doc is None:
            doc = pymupdf.open(path)
            self._docs[path] = doc
            while len(self._docs) > 4:
                self._docs.popitem(last=False)[1].close()
        else:
            self._docs.move_to_end(path)
        return doc

    def _facts_here(self) -> list[StoredFact]:
        return [s for s in self.facts if s.fact.page_index == self.page_index]

    def _render(self) -> None:
        f = self.filing
        assert f is not None
        self._cell_rects, self._cell_ranges = [], []
        who = f.identity.registrant or f.identity.issuer_key or ""
        head = f"{f.identity.doc_name}  ·  {who} {f.identity.form or ''} {f.identity.period or ''}".strip()
        if self.chunk is not None and self.chunk.page_index == self.page_index:
            head += f"  ·  evidence: chunk {self.chunk.id}"
        if cells := self._facts_here():
            head += ("  ·  cell: " if len(cells) == 1 else "  ·  cells: ") + "; ".join(
                f"{c.fact.label}, {c.fact.period.label}" for c in cells)
        self.title.setText(head)
        self.title.setToolTip(f.path)
        is_pdf = Path(f.path).suffix.lower() in PDF_SUFFIXES
        note = ""
        if is_pdf and not self.text_btn.isChecked():
            if Path(f.path).is_file():
                try:
                    self._render_pdf(f.path)
                    self.mode = "pdf"
                    self._update_controls()
                    return
                except Exception as exc:  # noqa: BLE001 - fall back to the stored text
                    log.warning("cannot render %s page index %d: %s", f.path, self.page_index, exc)
                    note = f"cannot render the PDF ({exc}); showing the stored text"
            else:
                note = "the PDF is no longer at its path; showing the text stored in the library"
        self._render_text(note)
        self.mode = "text"
        self._update_controls()

    def _render_pdf(self, path: str) -> None:
        import pymupdf

        page = self._doc(path)[self.page_index]
        if self.fit_width:
            self.zoom = self._fit_zoom(page)
        dpr = max(1.0, self.devicePixelRatioF())
        scale = self.zoom * dpr
        # moving from cell to cell of one table redraws the highlight, not the page
        key = (path, self.filing.sha256 if self.filing else "", self.page_index, round(scale, 4))
        if self._page_image is not None and self._page_image[0] == key:
            image = self._page_image[1].copy()
        else:
            pix = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
            fmt = QImage.Format.Format_RGB888 if pix.n == 3 else QImage.Format.Format_Grayscale8
            image = QImage(pix.samples, pix.width, pix.height, pix.stride, fmt).copy()
            self._page_image = (key, image.copy())
        self.highlights = []
        for fragment in self._fragments_here():
            self.highlights += find_evidence(page, fragment.text, skip_first=self._fragment_start(fragment))
        if self.highlights:
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(HIGHLIGHT_EDGE)
            painter.setBrush(HIGHLIGHT)
            for r in self.highlights:
                painter.drawRect(QRectF(QPointF(r.x0 * scale - 1, r.y0 * scale - 1),
                                        QPointF(r.x1 * scale + 1, r.y1 * scale + 1)))
            painter.end()
        cells = self._facts_here()
        for cell in cells:
            if cell.fact.box is None:
                continue
            x0, y0, x1, y1 = cell.fact.box
            self._cell_rects.append(QRectF(QPointF(x0 * self.zoom - CELL_PAD, y0 * self.zoom - CELL_PAD),
                                           QPointF(x1 * self.zoom + CELL_PAD, y1 * self.zoom + CELL_PAD)))
        if self._cell_rects:
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(CELL_EDGE, 2 * dpr))
            painter.setBrush(CELL_FILL)
            for r in self._cell_rects:
                painter.drawRect(QRectF(r.x() * dpr, r.y() * dpr, r.width() * dpr, r.height() * dpr))
            painter.end()
        pm = QPixmap.fromImage(image)
        pm.setDevicePixelRatio(max(1.0, self.devicePixelRatioF()))
        self.canvas.setPixmap(pm)
        self.canvas.resize(pm.deviceIndependentSize().toSize())
        self.stack.setCurrentWidget(self.scroll)
        if self._cell_rects:
            r = self._cell_rects[0]
            self.scroll.ensureVisible(int(r.center().x()), int(r.center().y()), int(r.width() / 2) + 60,
                                      int(r.height() / 2) + 120)
            self.match_label.setText(_cells_note([c for c in cells if c.fact.box is not None]))
        elif cells:
            self.match_label.setText("this cell's position on the page was not recorded (see Text)")
        elif self.highlights:
            y = int(min(r.y0 for r in self.highlights) * self.zoom)
            self.scroll.verticalScrollBar().setValue(max(0, y - 80))
            self.match_label.setText(f"{len(self.highlights)} evidence line(s) highlighted")
        elif self.chunk is not None and self.chunk.page_index == self.page_index:
            self.match_label.setText("evidence text not found on the rendered page (see Text)")
        else:
            self.match_label.clear()

    def _fragments_here(self) -> list[Chunk]:
        """The chunk and the further fragments to highlight, if they are printed on the shown page."""
        if self.chunk is None or self.chunk.page_index != self.page_index:
            return []
        return [self.chunk, *self.more]

    def _fragment_start(self, fragment: Chunk) -> bool:
        if self.library is None or self.filing is None:
            return False
        try:
            return starts_mid_line(self.library.page_text(self.filing.id, fragment.page_index), fragment)
        except Exception:  # noqa: BLE001 - only decides whether to search one line
            return False

    def _render_text(self, note: str) -> None:
        f = self.filing
        assert f is not None and self.library is not None
        try:
            text = self.library.page_text(f.id, self.page_index)
        except Exception as exc:  # noqa: BLE001 - a missing page is shown, not raised
            text = f"({page_label(self.page_index)} is not in the library: {exc})"
        self.text.setPlainText(text)
        self.stack.setCurrentWidget(self.text)
        selections = []
        for c in self._fragments_here():
            if not 0 <= c.char_start < c.char_end <= len(text):
                continue
            sel = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(255, 225, 80))
            sel.format = fmt
            cur = QTextCursor(self.text.document())
            cur.setPosition(c.char_start)
            cur.setPosition(c.char_end, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cur
            if not selections:  # the first fragment in view
                start = QTextCursor(self.text.document())
                start.setPosition(c.char_start)
                self.text.setTextCursor(start)
                self.text.centerCursor()
            selections.append(sel)
        self.highlights = list(selections)
        cells = [c for c in self._facts_here() if 0 <= c.fact.char_start < c.fact.char_end <= len(text)]
        for cell in cells:
            sel = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setBackground(CELL_TEXT)
            fmt.setFontWeight(700)
            fmt.setFontUnderline(True)
            fmt.setUnderlineColor(CELL_EDGE)
            sel.format = fmt
            cur = QTextCursor(self.text.document())
            cur.setPosition(cell.fact.char_start)
            cur.setPosition(cell.fact.char_end, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cur
            selections.append(sel)
            self._cell_ranges.append((cell.fact.char_start, cell.fact.char_end))
        if cells:
            start = QTextCursor(self.text.document())
            start.setPosition(cells[0].fact.char_start)
            self.text.setTextCursor(start)
            self.text.centerCursor()
        self.text.setExtraSelections(selections)
        if f.image_only_pages and self.page_index in f.image_only_pages:
            note = (note + "; " if note else "") + "this page is an image without a text layer"
        if self._cell_ranges:
            note = note or _cells_note(cells)
        elif self._facts_here():
            note = note or "this cell's characters are not in the stored page text"
        self.match_label.setText(note or ("evidence span highlighted" if selections else ""))

    def _update_controls(self) -> None:
        has = self.filing is not None
        for w in (self.prev_btn, self.next_btn, self.page_box, self.text_btn, self.fit_btn):
            w.setEnabled(has)
        self.prev_btn.setEnabled(has and self.page_index > 0)
        self.next_btn.setEnabled(has and self.page_index < self.n_pages - 1)
        self.zoom_in_btn.setEnabled(self.mode == "pdf" and self.zoom < ZOOMS[-1])
        self.zoom_out_btn.setEnabled(self.mode == "pdf" and self.zoom > ZOOMS[0])
        self.zoom_label.setText(f"{self.zoom * 100:.0f}%")
        self.page_box.blockSignals(True)
        self.page_box.setMaximum(max(1, self.n_pages))
        self.page_box.setValue(self.page_index + 1)
        self.page_box.blockSignals(False)
        note = printed_note(self.page_index, self.folios.get(self.page_index))
        self.page_total.setText((f"/ {self.n_pages}" + (f"  ({note})" if note else "")) if has else "/ –")

    def closeEvent(self, event: Any) -> None:
        for doc in self._docs.values():
            doc.close()
        self._docs.clear()
        super().closeEvent(event)


def _cells_note(cells: Sequence[StoredFact]) -> str:
    if len(cells) == 1:
        return f"cell highlighted: {cells[0].fact.printed}"
    return f"{len(cells)} cells highlighted: " + ", ".join(c.fact.printed for c in cells)
