"""Start-up of the desktop app: seconds from launching the process to an interactive window, and to the first
answer of a question typed at once.

Each repetition is a fresh process (``python`` started here, timed from before its launch), which opens the
library, shows the main window and, as soon as the event loop is idle, asks the question through the Ask tab
as a user would. The window is interactive at that first idle turn; the answer time ends when the Ask tab
shows the stored run. Run it alone (2 cores): anything running beside it is in the figures.

    python scripts/bench_startup.py --home LIBRARY [--question "..."] [--repeat 3] [--cold] [--typing 3]

``--typing S`` asks S seconds after the window is interactive (an analyst typing the question: the app builds its
question path meanwhile) and also reports the seconds from that click to the answer, and the time the run itself
says it took (from the click: ``RunCost.seconds``, setup included).

It drives only ``MainWindow`` and its Ask tab, so the same script measures older checkouts too
(``PYTHONPATH=/path/to/checkout``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"


def child(home: Path, question: str, launched: float, store: Path, typing: float = 0.0) -> None:
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([sys.argv[0]])
    from analyst_app.window import MainWindow

    window = MainWindow(home, store=QSettings(str(store), QSettings.Format.IniFormat))
    window.show()
    out: dict[str, object] = {}

    def finished(*_args: object) -> None:
        out["answer_s"] = time.time() - launched
        if "clicked" in out:
            out["click_s"] = time.time() - float(out.pop("clicked"))  # type: ignore[arg-type]
            # the run's own figure, as the answer panel shows it
            run = window.ctx.session.read_run(window.ask_view.run_id) if window.ask_view.run_id else None
            if run is not None and run.cost is not None:
                out["run_s"], out["setup_s"] = run.cost.seconds, run.cost.setup_seconds
        out["answer"] = " ".join(window.ask_view.answer_view.toPlainText().split())[:90]
        QTimer.singleShot(0, app.quit)

    def ask() -> None:
        if typing:
            out["clicked"] = time.time()
        window.ask_view.ask(question)

    def interactive() -> None:
        out["window_s"] = time.time() - launched
        window.tabs.setCurrentWidget(window.ask_view)
        window.ask_view.run_finished.connect(finished)
        window.ask_view.ask_failed.connect(finished)
        QTimer.singleShot(int(typing * 1000), ask)

    QTimer.singleShot(0, interactive)
    QTimer.singleShot(600_000, app.quit)
    app.exec()
    print(json.dumps(out), flush=True)
    os._exit(0)  # do not wait for worker threads (a model load may still run)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True, type=Path, help="the library to open")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true",
                        help="empty the OS page cache before each launch (root only: a start after a reboot)")
    parser.add_argument("--typing", type=float, default=0.0,
                        help="ask this many seconds after the window is interactive (and time the click to the answer)")
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)  # launch time, set by the parent
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.home, args.question, args.child, args.store, args.typing)
        return 0
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            if args.cold:
                os.sync()
                Path("/proc/sys/vm/drop_caches").write_text("3\n")
            launched = time.time()
            proc = subprocess.run([sys.executable, __file__, "--home", str(args.home), "--question", args.question,
                                   "--child", repr(launched), "--store", str(Path(tmp) / f"gui{i}.ini"),
                                   "--typing", str(args.typing)],
                                  env=env, capture_output=True, text=True, check=False)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            if proc.returncode or not lines:
                print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
                return 1
            row = json.loads(lines[-1])
            rows.append(row)
            click = (f", click to answer {row['click_s']:.2f} s (the run says {row.get('run_s', float('nan')):.2f} s, "
                     f"setup {row.get('setup_s', float('nan')):.2f} s)" if "click_s" in row else "")
            print(f"run {i + 1}: window {row['window_s']:.2f} s, first answer {row.get('answer_s', float('nan')):.2f} s"
                  f"{click}  ({row.get('answer')!r})")
    for key, label in (("window_s", "to an interactive window"), ("answer_s", "from launch to the first answer"),
                       ("click_s", "from the click to the first answer"), ("run_s", "the run's own time")):
        vals = [r[key] for r in rows if key in r]
        if vals:
            print(f"{label}: median {statistics.median(vals):.2f} s (min {min(vals):.2f}, max {max(vals):.2f}, "
                  f"n={len(vals)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
