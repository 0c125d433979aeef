"""The Library's "Update index" does what `filinglens index build` does: it reads the identity (CIK, fiscal-year
end) of filings an older FilingLens stored, then builds the indexes."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.engine.test_identity import CIK_3M, by_doc, ingested, write_links_and_balance_sheet


def test_update_index_reads_the_cik_and_year_end_of_filings_stored_by_an_older_reader(make_window, qtbot, tmp_path):
    library = ingested(tmp_path, write_links_and_balance_sheet(tmp_path / "filings"))  # stored, never indexed
    # as an older FilingLens left it: no CIK from the links, no year end from the 10-Q's balance sheet
    library.conn.execute("UPDATE filings SET cik=NULL, cik_source=NULL, identity_version=''")
    library.conn.execute("UPDATE filings SET fiscal_year_end=NULL WHERE form='10-Q'")
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
    assert summary.identity_read == 2 and summary.indexed and not summary.index_error
    assert "Read the CIK and fiscal-year end of 2 older filings." in view.report_label.text()

    rows = {view.proxy.index(r, 0).data(): r for r in range(view.proxy.rowCount())}
    assert view.proxy.index(rows["3M_2019_10K"], headers.index("CIK")).data() == CIK_3M  # the table shows it
    assert view.proxy.index(rows["3M_2020Q1_10Q"], headers.index("FY end")).data() == "Dec 31"
    own = {doc: window.ctx.library.own_identity(f.id) for doc, f in by_doc(window.ctx.library).items()}
    assert own["3M_2019_10K"].cik == CIK_3M and own["3M_2020Q1_10Q"].fiscal_year_end == "--12-31"
