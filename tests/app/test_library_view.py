"""Library tab: the filing table, adding files through the ingest worker, failures, cancel, removal."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from engine.store import Library


def wait_ingest(qtbot, window, timeout=120_000):  # noqa: ANN001, ANN201
    with qtbot.waitSignal(window.library_view.ingest_finished, timeout=timeout) as blocker:
        pass
    return blocker.args[0]


def test_table_lists_every_filing_and_filters_and_sorts(window, app_home):
    view = window.library_view
    filings = Library(app_home).filings()
    assert view.model.rowCount() == len(filings) == 8
    assert sorted(view.visible_doc_names()) == sorted(f.identity.doc_name for f in filings)
    # every column the analyst needs
    headers = [view.model.headerData(i, Qt.Orientation.Horizontal) for i in range(view.model.columnCount())]
    assert headers[:8] == ["Document", "Registrant", "Ticker", "CIK", "FY end", "Form", "Period", "Pages"]
    assert "Image-only" in headers
    ten_k = [f for f in filings if f.identity.form == "10-K"]
    view.filter.setText("10-K")
    assert view.proxy.rowCount() == len(ten_k) and "of 8 filings shown" in view.count_label.text()
    view.filter.setText(filings[0].identity.ticker.lower())  # case-insensitive, any column
    assert view.proxy.rowCount() == sum(f.identity.ticker == filings[0].identity.ticker for f in filings)
    view.filter.clear()
    pages_col = headers.index("Pages")
    view.table.sortByColumn(pages_col, Qt.SortOrder.DescendingOrder)
    shown = [int(view.proxy.index(r, pages_col).data()) for r in range(view.proxy.rowCount())]
    assert shown == sorted((f.n_pages for f in filings), reverse=True)  # numeric, not text, order


def test_a_filing_shows_its_registrants_ticker_when_its_cover_lacks_one(make_window, tmp_path):
    """3M's 2017 10-K prints no trading symbol; its 2019 10-K prints MMM: the Library shows MMM on both, the
    inherited one in italics and, in the details, where it comes from."""
    from tests.engine.test_identity import ingested, write_3m_pair

    library = ingested(tmp_path, write_3m_pair(tmp_path / "filings"))
    view = make_window(library.home).library_view
    headers = [view.model.headerData(i, Qt.Orientation.Horizontal) for i in range(view.model.columnCount())]
    rows = {view.proxy.index(r, 0).data(): r for r in range(view.proxy.rowCount())}
    old, new = (view.proxy.index(rows[doc], headers.index("Ticker")) for doc in ("3M_2017_10K", "3M_2019_10K"))
    assert old.data() == new.data() == "MMM"
    assert old.data(Qt.ItemDataRole.FontRole).italic() and new.data(Qt.ItemDataRole.FontRole) is None
    assert "from 3M_2019_10K" in old.data(Qt.ItemDataRole.ToolTipRole)
    assert view.proxy.index(rows["3M_2017_10K"], headers.index("FY end")).data() == "Dec 31"

    view.table.selectRow(rows["3M_2017_10K"])
    details = view.details.toPlainText()
    assert "MMM (from 3M_2019_10K)" in details and "Dec 31" in details and "Dec 31 (from" not in details
    view.table.selectRow(rows["3M_2019_10K"])
    assert "MMM" in view.details.toPlainText() and "(from" not in view.details.toPlainText()


def test_a_cik_the_filing_links_to_is_shown_and_one_nothing_states_is_a_dash_that_says_so(make_window, tmp_path):
    """3M's 10-K links its exhibits into EDGAR folder 66740: the CIK column shows 0000066740 for it and for the
    company's other 10-K; a filing of another company that states none shows an em dash whose tooltip says it is not
    printed, never a blank cell."""
    from tests.engine.test_identity import add_exhibit_links, ingested, write_3m_pair, write_cover_pdf

    folder = write_3m_pair(tmp_path / "filings")
    add_exhibit_links(folder / "3M" / "10-K" / "3M_2019_10K.pdf", ["66740", "66740"])
    write_cover_pdf(folder / "ACME" / "10-K" / "ACME_2019_10K.pdf", name="ACME WIDGETS INC", form="10-K",
                    period_text="June 30, 2019")
    library = ingested(tmp_path, folder)
    view = make_window(library.home).library_view
    headers = [view.model.headerData(i, Qt.Orientation.Horizontal) for i in range(view.model.columnCount())]
    rows = {view.proxy.index(r, 0).data(): r for r in range(view.proxy.rowCount())}
    cik = {doc: view.proxy.index(r, headers.index("CIK")) for doc, r in rows.items()}
    assert cik["3M_2019_10K"].data() == cik["3M_2017_10K"].data() == "0000066740"
    assert "links to its EDGAR folder" in cik["3M_2019_10K"].data(Qt.ItemDataRole.ToolTipRole)
    assert "from 3M_2019_10K" in cik["3M_2017_10K"].data(Qt.ItemDataRole.ToolTipRole)
    assert cik["ACME_2019_10K"].data() == "—"
    assert "not printed on the cover" in cik["ACME_2019_10K"].data(Qt.ItemDataRole.ToolTipRole)
    assert view.proxy.index(rows["ACME_2019_10K"], headers.index("FY end")).data() == "Jun 30"
    view.table.selectRow(rows["ACME_2019_10K"])
    assert "CIK — not printed on the cover" in " ".join(view.details.toPlainText().split())


def test_add_a_file_through_the_worker(window, qtbot, tmp_path, app_home):
    from engine.demo_corpus import generate_corpus

    generate_corpus(tmp_path / "new", 1, seed=4242)
    pdf = next((tmp_path / "new").rglob("*.pdf"))
    names_before = set(window.library_view.visible_doc_names())
    assert window.library_view.add_paths([str(pdf)])
    assert window.library_view.progress_row.isVisibleTo(window) and window.ctx.busy == "ingest"
    summary = wait_ingest(qtbot, window)
    assert summary.counts.get("added") == 1 and summary.indexed and not summary.cancelled
    new = set(window.library_view.visible_doc_names()) - names_before
    assert len(new) == 1
    assert window.library_view.model.rowCount() == 9 and not window.library_view.progress_row.isVisibleTo(window)
    report = window.library_view.events.records
    assert [e.status for e in report] == ["added"] and report[0].doc_name in new
    assert "Ingest finished" in window.library_view.report_label.text()
    assert Library(app_home).integrity_problems() == []
    assert "9 filings" in window.library_label.text()


def test_failed_file_is_reported_with_its_reason(window, qtbot, tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not really a pdf")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(bad)), QUrl("https://example.com/x.pdf")])
    drop = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)  # dropping onto the window adds through the Library tab
    assert window.tabs.currentWidget() is window.library_view
    summary = wait_ingest(qtbot, window)
    assert summary.counts == {"failed": 1}
    ev = window.library_view.events.records[0]
    assert ev.status == "failed" and ev.reason and "Traceback" not in ev.reason
    window.library_view.problems_only.setChecked(True)
    assert window.library_view.events_proxy.rowCount() == 1
    assert "need attention" in window.library_view.report_label.text()
    assert window.library_view.model.rowCount() == 8


def test_cancel_a_running_ingest(make_window, qtbot, tmp_path):
    from engine.demo_corpus import generate_corpus

    corpus = tmp_path / "forty"
    generate_corpus(corpus, 40, seed=3)
    home = tmp_path / "fresh-library"
    window = make_window(home)
    view = window.library_view
    assert view.model.rowCount() == 0
    seen = []

    def first_event(ev):  # noqa: ANN001
        seen.append(ev)
        if len(seen) == 1:
            window.cancel()  # what Esc does

    assert view.add_paths([str(corpus)])
    view.job.signals.item.connect(first_event)
    summary = wait_ingest(qtbot, window, timeout=180_000)
    assert summary.cancelled and seen
    stored = Library(home).filings()
    assert 1 <= len(stored) < 40, f"ingest did not stop early: {len(stored)} filings stored"
    assert view.model.rowCount() == len(stored)
    assert Library(home).integrity_problems() == []
    assert "cancelled" in view.report_label.text() and window.ctx.busy == ""
    # what was stored before the cancel is indexed (readers never build indexes themselves)
    from engine.indexing import index_status

    assert summary.indexed and "searchable" in view.report_label.text()
    status = index_status(Library(home))
    assert status.ready and not status.behind
    assert "not searchable" not in window.library_label.text() and "not indexed" not in window.library_label.text()


def test_status_bar_says_how_many_filings_are_not_searchable_yet(make_window, app_home, tmp_path):
    from engine.demo_corpus import generate_corpus
    from engine.ingest import ingest
    from engine.settings import Settings

    generate_corpus(tmp_path / "new", 2, seed=4243)
    with Library(app_home) as library:  # stored while no builder ran (as during another process's ingest)
        ingest(library, [tmp_path / "new"], Settings(home=app_home))
    window = make_window(app_home)
    assert "10 filings" in window.library_label.text() and "2 not searchable yet" in window.library_label.text()
    assert "filinglens index build" in window.library_label.toolTip()
    assert "Library › Update index" in window.library_label.toolTip()


def test_update_index_makes_stored_filings_searchable(make_window, qtbot, app_home, tmp_path):
    from engine.demo_corpus import generate_corpus
    from engine.indexing import index_status
    from engine.ingest import ingest
    from engine.settings import Settings

    window = make_window(app_home)
    assert not window.library_view.index_btn.isEnabled()  # up to date: nothing to build
    generate_corpus(tmp_path / "new", 2, seed=4244)
    with Library(app_home) as library:  # stored by another process that did not build
        ingest(library, [tmp_path / "new"], Settings(home=app_home))
    window.ctx.library_changed.emit()
    view = window.library_view
    assert view.index_btn.isEnabled() and "2 not searchable yet" in window.library_label.text()
    view.index_btn.click()
    summary = wait_ingest(qtbot, window)
    assert summary.indexed and not summary.counts and not summary.index_error
    assert "every stored filing is searchable" in view.report_label.text()
    status = index_status(Library(app_home))
    assert status.ready and not status.behind
    assert "not searchable" not in window.library_label.text() and not view.index_btn.isEnabled()


def test_remove_selected_filings(window, qtbot, app_home):
    view = window.library_view
    view.table.selectRow(0)
    doomed = view.selected_filings()[0].identity.doc_name
    with qtbot.waitSignal(view.remove_finished, timeout=120_000) as blocker:
        assert view.remove_selected(confirm=False)
    assert blocker.args == [1]
    assert doomed not in view.visible_doc_names() and view.model.rowCount() == 7
    lib = Library(app_home)
    assert lib.filing_by_doc_name(doomed) is None and lib.integrity_problems() == []


def test_double_click_opens_a_filing_pdf_and_html(window, qtbot):
    view, viewer = window.library_view, window.viewer
    by_suffix = {}
    for f in view.filings():
        by_suffix.setdefault(Path(f.path).suffix.lower(), f)
    view.open_filing.emit(by_suffix[".pdf"])
    assert viewer.mode == "pdf" and viewer.pixmap() is not None and viewer.page_index == 0
    viewer.next_page()
    assert viewer.page_index == 1 and viewer.page_box.value() == 2
    width = viewer.pixmap().width()
    viewer.zoom_in()
    assert viewer.pixmap().width() > width and not viewer.fit_width
    viewer.zoom_out()
    viewer.zoom_out()
    assert viewer.pixmap().width() < width
    html_filing = by_suffix[".htm"]
    view.open_filing.emit(html_filing)
    assert viewer.mode == "text"
    assert viewer.text.toPlainText() == Library(window.ctx.home).page_text(html_filing.id, 0)


def test_adding_files_offers_the_ray_cluster_named_in_settings(make_window, qtbot, tmp_path, demo_dir, ingested_demo):
    """Settings › Ingest › ray names a cluster: the Library offers it beside Add folder…, ticked, and the files are
    read there (a local Ray the ingest starts and stops); unticked, on this machine."""
    import pytest

    pytest.importorskip("ray")
    from tests.engine.test_cluster import content

    window = make_window(tmp_path / "lib")
    view = window.library_view
    assert not view.on_cluster.isVisibleTo(window)  # no cluster in the settings: nothing offered
    window.ctx.set_overrides({"ingest": {"ray": "local"}})
    assert view.on_cluster.isVisibleTo(window) and view.on_cluster.isChecked()
    assert "Ray cluster (started here)" in view.on_cluster.text()
    assert view.add_paths([str(demo_dir)])
    assert view.job.settings.ingest.ray == "local"
    summary = wait_ingest(qtbot, window, timeout=300_000)
    assert summary.counts.get("added") == 8 and summary.indexed, summary.counts
    assert content(tmp_path / "lib") == content(ingested_demo[0].home)
    assert view.model.rowCount() == 8

    view.on_cluster.setChecked(False)  # this machine's pool
    assert view.update_index() and view.job.settings.ingest.ray == ""
    wait_ingest(qtbot, window)


def test_ingest_progress_states_the_rate_and_the_time_left():
    from analyst_app.views.library import rate_text

    assert rate_text(32, 96, 10.0) == " · 3.2 files/s · about 30 s left"
    assert rate_text(100, 3000, 50.0) == " · 2.0 files/s · about 25 min left"
    assert rate_text(8, 0, 4.0) == " · 2.0 files/s · done"
    assert rate_text(0, 10, 3.0) == ""  # nothing stored yet: no rate to state
