"""Fixtures for the desktop application: a private copy of the demo library, an isolated QSettings file,
and a main window on it (closed, with its threads stopped, at teardown)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")


@pytest.fixture()
def app_home(tmp_path: Path, ingested_demo) -> Path:
    """A copy of the ingested demo library that a test may change (add, remove, ask)."""
    library, _settings, _report = ingested_demo
    library.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    home = tmp_path / "library"
    shutil.copytree(library.home, home, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    from engine.store import Library

    with Library(home) as copy:  # runs made by other tests on the shared demo library are not this test's
        copy.conn.execute("DELETE FROM runs")
    return home


@pytest.fixture()
def qsettings(tmp_path: Path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "filinglens-gui.ini"), QSettings.Format.IniFormat)


@pytest.fixture()
def make_window(qtbot, qsettings, embedder):
    """``make_window(home)`` opens the main window; the session embedder is already loaded (cache hit)."""
    from analyst_app.window import MainWindow

    windows = []

    # the scripted chats of these tests write their answers from passages: the statement-facts path is off
    model_path = Path(qsettings.fileName()).with_name("model-path.json")
    model_path.write_text('{"answer": {"from_facts": false}}', encoding="utf-8")

    def make(home: Path, resize: bool = True, **kw):  # noqa: ANN003, ANN202
        kw.setdefault("preset", str(model_path))
        w = MainWindow(home, store=qsettings, **kw)
        qtbot.addWidget(w)
        if resize:
            w.resize(1400, 880)
        w.show()
        qtbot.waitExposed(w)
        windows.append(w)
        return w

    yield make
    for w in windows:
        w.close()


@pytest.fixture()
def window(make_window, app_home):
    return make_window(app_home)
