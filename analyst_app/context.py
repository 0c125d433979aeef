"""State the views share: the library folder, the GUI thread's read connection, the current settings,
the thread pool, and which long job (ingest, remove, ask) is running."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, QThreadPool, Signal

from analyst_app.workers import Job
from engine.errors import ConfigError
from engine.settings import SECTIONS, Settings, diff_settings, load_preset

log = logging.getLogger(__name__)

OVERRIDES_KEY = "settings/overrides"  # QSettings: JSON of the fields changed in the settings dialog


class AppContext(QObject):
    """One per window. Views read through :attr:`library` (GUI thread only) and start work here."""

    library_changed = Signal()  # filings added/removed, or another library opened
    runs_changed = Signal()  # a run finished
    message = Signal(str, int)  # status-bar text, timeout in ms (0 = until replaced)
    error = Signal(str, str)  # title, readable text (the window shows a message box)
    busy_changed = Signal(str)  # the running long job's name, "" when idle
    open_run = Signal(str)  # show this run in Inspect
    settings_changed = Signal()  # preset, overrides or chat model changed (the Ask tab follows)

    def __init__(self, home: Path, store: QSettings, preset: str = "default") -> None:
        super().__init__()
        self.store = store
        self.pool = QThreadPool()
        self.pool.setMaxThreadCount(2)
        self.home = Path(home)
        self.session: Any = None
        self.library: Any = None
        self.preset = preset
        self.chat_model: str = ""
        # Fields changed from the preset (settings dialog), by section; the chat model is kept apart in
        # ``chat_model`` because the Ask tab edits it directly.
        self.overrides: dict[str, dict] = self._stored_overrides()
        self._jobs: list[Job] = []
        self.busy = ""
        self.busy_cancel: Callable[[], None] | None = None
        self._open_library(self.home)

    # -- library ----------------------------------------------------------------------------------
    def _open_library(self, home: Path) -> None:
        """Open the library at ``home`` as the window's :class:`engine.session.Session` (its library, index
        status and runs; the Ask tab's worker opens its own session, with the models, in its thread)."""
        from engine.session import Session

        session = Session(load_preset(self.preset, Path(home)).with_overrides(home=str(home)))
        if self.session is not None:
            self.session.close()
        self.session, self.library, self.home = session, session.library, Path(home)

    def switch_library(self, home: Path) -> None:
        self._open_library(home)
        self.store.setValue("library/home", str(self.home))
        self.library_changed.emit()
        self.runs_changed.emit()

    # -- settings ---------------------------------------------------------------------------------
    def preset_settings(self) -> Settings:
        """The current preset as it is on disk (built-in or this library's own)."""
        return load_preset(self.preset, self.home)

    def settings(self) -> Settings:
        """The preset with the overrides, the chosen chat model and this library's home."""
        sections = {k: dict(v) for k, v in self.overrides.items()}
        if self.chat_model:
            sections.setdefault("models", {})["chat_model"] = self.chat_model
        return self.preset_settings().with_overrides(home=str(self.home), **sections)

    def set_overrides(self, overrides: dict[str, dict]) -> None:
        """Keep only the fields that differ from the preset, remember them in QSettings, notify the views.

        Raises:
            ConfigError: a value is invalid (nothing changes then).
        """
        base = self.preset_settings()
        wanted = diff_settings(base, base.with_overrides(**overrides))
        models = wanted.get("models", {})
        models.pop("chat_model", None)  # the Ask tab's chat model box owns it
        self.overrides = {k: v for k, v in wanted.items() if v}
        self.store.setValue(OVERRIDES_KEY, json.dumps(self.overrides, sort_keys=True))
        self.settings_changed.emit()

    def apply_settings(self, settings: Settings, preset: str | None = None) -> None:
        """Make ``settings`` current: optionally switch preset, then store what differs from it."""
        if preset is not None:
            self.preset = preset
        self.chat_model = settings.models.chat_model
        self.set_overrides(diff_settings(self.preset_settings(), settings))

    def _stored_overrides(self) -> dict[str, dict]:
        """The overrides saved last time; unknown fields (another version's) and invalid values are dropped."""
        raw = self.store.value(OVERRIDES_KEY, "")
        try:
            data = json.loads(str(raw)) if raw else {}
        except json.JSONDecodeError:
            log.warning("ignoring unreadable stored settings overrides: %r", raw)
            return {}
        kept: dict[str, dict] = {}
        for section, values in (data.items() if isinstance(data, dict) else ()):
            if section not in SECTIONS or not isinstance(values, dict):
                continue
            for name, value in values.items():
                try:  # one field at a time, so one bad value does not cost the others
                    Settings().with_overrides(**{section: {name: value}})
                except ConfigError as exc:
                    log.warning("ignoring stored setting %s.%s: %s", section, name, exc)
                    continue
                kept.setdefault(section, {})[name] = value
        return kept

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
        if self.session is not None:
            self.session.close()
            self.session = self.library = None
