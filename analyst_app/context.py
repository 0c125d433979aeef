"""State the views share: the library folder, the GUI thread's read connection, the current settings,
the thread pool, and which long job (ingest, remove, ask) is running."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, QThreadPool, Signal

from analyst_app.workers import Job
from engine.settings import Settings, load_preset

log = logging.getLogger(__name__)


class AppContext(QObject):
    """One per window. Views read through :attr:`library` (GUI thread only) and start work here."""

    library_changed = Signal()  # filings added/removed, or another library opened
    runs_changed = Signal()  # a run finished
    message = Signal(str, int)  # status-bar text, timeout in ms (0 = until replaced)
    error = Signal(str, str)  # title, readable text (the window shows a message box)
    busy_changed = Signal(str)  # the running long job's name, "" when idle
    open_run = Signal(str)  # show this run in Inspect

    def __init__(self, home: Path, store: QSettings, preset: str = "default") -> None:
        super().__init__()
        self.store = store
        self.pool = QThreadPool()
        self.pool.setMaxThreadCount(2)
        self.home = Path(home)
        self.library: Any = None
        self.preset = preset
        self.chat_model: str = ""
        self.overrides: dict[str, dict] = {}  # extra settings sections (tests: a small context window)
        self._jobs: list[Job] = []
        self.busy = ""
        self.busy_cancel: Callable[[], None] | None = None
        self._open_library(self.home)

    # -- library ----------------------------------------------------------------------------------
    def _open_library(self, home: Path) -> None:
        from engine.store import Library

        library = Library(home)
        if self.library is not None:
            self.library.close()
        self.library, self.home = library, Path(home)

    def switch_library(self, home: Path) -> None:
        self._open_library(home)
        self.store.setValue("library/home", str(self.home))
        self.library_changed.emit()
        self.runs_changed.emit()

    # -- settings ---------------------------------------------------------------------------------
    def settings(self) -> Settings:
        """The preset with the chosen chat model and this library's home."""
        sections = {k: dict(v) for k, v in self.overrides.items()}
        if self.chat_model:
            sections.setdefault("models", {})["chat_model"] = self.chat_model
        return load_preset(self.preset).with_overrides(home=str(self.home), **sections)

    # -- jobs -------------------------------------------------------------------------------------
    def begin(self, name: str, cancel: Callable[[], None]) -> bool:
        """Claim the single long-job slot; False (with a message) while another job runs."""
        if self.busy:
            self.message.emit(f"{self.busy} is still running: wait for it or cancel it (Esc)", 6000)
            return False
        self.busy, self.busy_cancel = name, cancel
        self.busy_changed.emit(name)
        return True

    def end(self, name: str) -> None:
        if self.busy == name:
            self.busy, self.busy_cancel = "", None
            self.busy_changed.emit("")

    def cancel_busy(self) -> bool:
        if self.busy_cancel is None:
            return False
        self.busy_cancel()
        self.message.emit(f"cancelling {self.busy}…", 0)
        return True

    def start(self, job: Job, *, done: Callable[[Any], None] | None = None,
              failed: Callable[[str], None] | None = None, item: Callable[[Any], None] | None = None,
              progress: Callable[[str, int, int], None] | None = None) -> Job:
        """Run ``job`` in the pool; the callbacks run on the GUI thread."""
        self._jobs.append(job)

        def forget(*_: Any) -> None:
            if job in self._jobs:
                self._jobs.remove(job)

        if item:
            job.signals.item.connect(item)
        if progress:
            job.signals.progress.connect(progress)
        job.signals.done.connect(done or (lambda _r: None))
        job.signals.failed.connect(failed or (lambda text: self.error.emit(f"{job.name} failed", text)))
        job.signals.done.connect(forget)
        job.signals.failed.connect(forget)
        self.pool.start(job)
        return job

    def running_jobs(self) -> list[Job]:
        return list(self._jobs)

    def shutdown(self, timeout_ms: int = 30000) -> None:
        for job in self._jobs:
            job.cancel()
        self.pool.waitForDone(timeout_ms)
        if self.library is not None:
            self.library.close()
            self.library = None
