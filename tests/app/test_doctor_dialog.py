"""Help › Check installation: the doctor runs in the pool and its report opens in a dialog, problems first."""

from __future__ import annotations

import sqlite3


def test_check_installation_shows_problems_first_with_their_fix(qtbot, window, app_home):
    conn = sqlite3.connect(app_home / "library.sqlite3")
    conn.execute("INSERT INTO chunks(filing_id, page_index, seq, char_start, char_end, kind, text) "
                 "VALUES (9999, 0, 0, 0, 4, 'text', 'lost')")
    conn.commit()
    conn.close()
    with qtbot.waitSignal(window.doctor_finished, timeout=120_000) as blocker:
        window.doctor_act.trigger()
        assert not window.doctor_act.isEnabled()  # one check at a time
    report = blocker.args[0]
    assert not isinstance(report, str), report
    dialog = window.doctor_dialog
    assert dialog.isVisible() and window.doctor_act.isEnabled()
    assert "problem" in dialog.summary.text() and "to fix" in dialog.summary.text()
    text = dialog.text.toPlainText()
    orphan = text.index("orphan rows (their filing or run is gone): 1 in chunks")
    assert text.index("fix: filinglens doctor --repair") > orphan
    assert orphan < text.index("SQLite integrity check passed")  # problems above the checks that passed
    assert report.problems and all(f.text in text for f in report.problems)  # every problem listed
