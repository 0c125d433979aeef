"""The Library's "Update index" does what `filinglens index build` does: it reads again what an older FilingLens read
of the stored filings (statement facts, CIK, fiscal-year end …), then builds the indexes; it is offered whenever
something is to be read again, also when the indexes are current."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.engine.test_identity import CIK_3M, by_doc, ingested, write_links_and_balance_sheet


def test_update_index_reads_the_cik_and_year_end_of_filings_stored_by_an_older_reader(make_window, qtbot, tmp_path):
    library = ingested(tmp_path, write_links_and_balance_sheet(tmp_path / "filings"))  # stored, never indexed
    # as an older FilingLens left it: no CIK from the links, no year end from the 10-Q's balance sheet
    library.conn.execute("UPDATE filings SET cik=NULL, cik_source=NULL, identity_version=''")
    library.conn.execute("UPDATE filings SET fiscal_year_end=NULL WHERE form='10-Q'")
    library.conn.execute("UPDATE filings SET facts_version='facts-0'")  # and its facts read by an older reader
    library.conn.commit()
    home = library.home
    library.close()

    window = make_window(home)
    view = window.library_view
    rows = {view.proxy.index(r, 0).data(): r for r in range(view.proxy.rowCount())}
    headers = [view.model.headerData(i, Qt.Orientation.Horizontal) for i in range(view.model.columnCount())]
    assert view.proxy.index(rows["3M_2019_10K"], headers.index("CIK")).data() == "—"
    assert view.index_btn.isEnabled()
    view.index_btn.click()
    with qtbot.waitSignal(view.ingest_finished, timeout=120_000) as blocker:
        pass
    summary = blocker.args[0]
    assert summary.indexed and not summary.index_error and not summary.refresh_problems
    assert "the statement facts of 2 filings" in summary.refreshed and "the CIK and fiscal-year end of 2 filings" \
        in summary.refreshed
    assert "Read again with the current readers: " in view.report_label.text()
    assert not window.ctx.session.stale_readings() and not view.index_btn.isEnabled()  # all current

    rows = {view.proxy.index(r, 0).data(): r for r in range(view.proxy.rowCount())}
    assert view.proxy.index(rows["3M_2019_10K"], headers.index("CIK")).data() == CIK_3M  # the table shows it
    assert view.proxy.index(rows["3M_2020Q1_10Q"], headers.index("FY end")).data() == "Dec 31"
    own = {doc: window.ctx.library.own_identity(f.id) for doc, f in by_doc(window.ctx.library).items()}
    assert own["3M_2019_10K"].cik == CIK_3M and own["3M_2020Q1_10Q"].fiscal_year_end == "--12-31"

    # the indexes are current, but an upgrade brings a new fact reader: Update index is offered, and says why
    window.ctx.library.conn.execute("UPDATE filings SET facts_version='facts-0' WHERE doc_name='3M_2019_10K'")
    window.ctx.library.conn.commit()
    view.reload()
    assert view.index_btn.isEnabled()
    assert "the statement facts of 1 filing were read by an older FilingLens" in view.index_btn.toolTip()
    view.index_btn.click()
    with qtbot.waitSignal(view.ingest_finished, timeout=120_000) as blocker:
        pass
    assert blocker.args[0].refreshed == "read again with the current readers: the statement facts of 1 filing"
    assert not view.index_btn.isEnabled()

