"""The app under load: while other processes ingest into its library and ask questions of it, a question asked in
the window is answered right, the event loop never stalls long, and nothing is locked or lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from engine.demo_corpus import generate_corpus
from engine.store import Library
from engine.trace import read_run
from tests.app.helpers import StallMeter, question_for

ROOT = Path(__file__).resolve().parent.parent.parent


class _Finished(QObject):
    """Emits ``done`` from the event loop (a QTimer poll, so the window's worker threads keep running) once every
    process has exited."""

    done = Signal()

    def __init__(self, procs: list[subprocess.Popen]) -> None:
        super().__init__()
        self.procs = procs
        self.timer = QTimer()
        self.timer.setInterval(200)
        self.timer.timeout.connect(self._poll)
        self.timer.start()

    def _poll(self) -> None:
        if all(p.poll() is not None for p in self.procs):
            self.timer.stop()
            self.done.emit()


def test_the_window_answers_and_stays_responsive_while_other_processes_ingest_and_ask(
        qtbot, make_window, app_home, demo_truth, tmp_path):
    window = make_window(app_home)
    ask = window.ask_view
    facts = [f for f in demo_truth if f["form"] == "10-K" and f["metric"] == "Total revenue"
             and f["fiscal_year_column"] == f["period"]]
    more = tmp_path / "more"
    generate_corpus(more, 12, seed=23)
    cli = [sys.executable, "-m", "engine.cli", "--home", str(app_home)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    meter = StallMeter(lambda: ask.progress_label.text())
    meter.start()
    procs = [subprocess.Popen([*cli, "ingest", str(more)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)]
    procs += [subprocess.Popen([*cli, "ask", question_for(f)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for f in (facts * 4)[:4]]
    finished = _Finished(procs)
    mine = facts[-1]
    with qtbot.waitSignal(ask.run_finished, timeout=300_000) as blocker:
        assert ask.ask(question_for(mine))
    with qtbot.waitSignal(finished.done, timeout=600_000):
        pass
    stall = meter.stop()
    outs = [p.communicate() for p in procs]
    print(f"\nlongest event-loop stall while 4 CLI questions and an ingest of 12 filings ran: {stall * 1000:.0f} ms; "
          f"gaps over 100 ms: {sorted(meter.worst, reverse=True)[:5]}")

    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
        assert "database is locked" not in err and "Traceback" not in err, err[-2000:]
    with Library(app_home) as library:
        run = read_run(library, blocker.args[0])
        assert run.status == "answered" and f"{mine['value']:,.0f}" in run.answer.text
        assert library.count("runs") == 5  # the window's and the four processes'
        assert library.integrity_problems() == []
    assert stall < 1.0, f"the window stalled {stall * 1000:.0f} ms under load"
