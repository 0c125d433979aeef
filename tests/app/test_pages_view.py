"""The app shows the page a PDF reader shows, and the number the page prints beside it when that differs (the
filings and runs of :mod:`tests.engine.test_pages`: a one-page filing, and one whose pages print folios)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from analyst_app.models import RecordTableModel
from engine.store import Library
from engine.trace import read_run
from tests.engine.test_pages import FOLIOS, ONE_PAGE, build_paged_library


def _column(model: RecordTableModel, title: str) -> int:
    return next(i for i in range(model.columnCount())
                if model.headerData(i, Qt.Orientation.Horizontal) == title)


def test_the_app_cites_the_readers_page_and_the_printed_one(tmp_path: Path, make_window, embedder) -> None:
    from analyst_app.views.history import run_column_html

    paged = build_paged_library(tmp_path, embedder)
    window = make_window(paged.home)
    ask, viewer = window.ask_view, window.viewer

    window.open_run(paged.one_page_run)
    assert f"[1] {ONE_PAGE} p. 1" in ask.answer_view.toPlainText()
    page = _column(ask.citations, "Page")
    assert ask.citations.index(0, page).data() == "1"
    assert viewer.filing.identity.doc_name == ONE_PAGE and viewer.page_box.value() == 1
    assert viewer.page_total.text() == "/ 1"

    window.open_run(paged.folio_run)
    assert f"[1] {FOLIOS} p. 3 (printed 2)" in ask.answer_view.toPlainText()
    assert ask.citations.index(0, page).data() == "3 (printed 2)"
    # the cited page is open: the reader's number in the box, the printed one beside the page count
    assert viewer.page_index == 2 and viewer.page_box.value() == 3
    assert viewer.page_total.text() == "/ 4  (printed 2)"
    viewer.go_to(0)
    assert viewer.page_total.text() == "/ 4"  # the cover prints no number

    # Inspect: the passages table, the curation table and the answer tab
    iv = window.inspect_view
    tab = iv.select_tab("Passages")
    rows = {tab.model.record(r).page_index: tab.model.index(r, _column(tab.model, "Page")).data()
            for r in range(tab.model.rowCount()) if tab.model.record(r).doc_name == FOLIOS}
    assert rows[2] == "3 (printed 2)"
    curation = iv.select_tab("Curation")
    page_of = _column(curation.model, "Page")
    shown = [curation.model.index(r, page_of).data() for r in range(curation.model.rowCount())
             if curation.model.record(r).doc_name == FOLIOS]
    assert "3 (printed 2)" in shown
    iv.select_tab("Answer")
    assert f"{FOLIOS} p. 3 (printed 2)" in iv.answer.toPlainText()
    summary = _column(iv.overview, "Summary")
    stages = [iv.overview.index(r, summary).data() for r in range(iv.overview.rowCount())]
    assert any(f"{FOLIOS} p. 3 (printed 2)" in s for s in stages)  # the passages stage's kept pages

    # History › Compare shows each run's citations the same way
    with Library(paged.home) as library:
        assert f"{FOLIOS} p. 3 (printed 2)" in run_column_html(read_run(library, paged.folio_run))
        assert f"{ONE_PAGE} p. 1</li>" in run_column_html(read_run(library, paged.one_page_run))
