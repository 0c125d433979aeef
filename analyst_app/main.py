"""Entry point: ``python -m analyst_app.main [--home DIR] [--preset NAME]`` or ``filinglens gui``
(:func:`gui_command`, registered in the ``filinglens.commands`` entry-point group).

Nothing here imports PySide6 at module level: ``filinglens`` loads :func:`gui_command` to list it, and every
other command works without PySide6.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from engine.console import configure_console

log = logging.getLogger("filinglens.gui")


def library_home(explicit: str | None) -> Path:
    """``--home``, then ``$FILINGLENS_HOME``, then the library used last time, then the platform default."""
    from analyst_app.window import app_settings
    from engine.settings import Settings

    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("FILINGLENS_HOME"):
        return Settings().library_home()
    last = app_settings().value("library/home")
    if last and Path(str(last)).is_dir():
        return Path(str(last))
    return Settings().library_home()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="filinglens gui", description="The FilingLens desktop application.")
    parser.add_argument("--home", help="library folder (default: $FILINGLENS_HOME, the last one used, or the user data dir)")
    parser.add_argument("--preset", default="default", help="settings preset name")
    parser.add_argument("--screenshot", metavar="PNG",
                        help="open the window, save a picture of it once it has drawn, and quit (docs, checks)")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="-v: progress notes and libraries' warnings; -vv: debug lines")
    args, qt_args = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    configure_console(args.verbose)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from PySide6.QtWidgets import QApplication, QMessageBox
    except ImportError:
        print("the desktop application needs PySide6: pip install 'filinglens[gui]'", file=sys.stderr)
        return 2

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "filinglens", *qt_args])
    app.setOrganizationName("FilingLens")
    app.setApplicationName("FilingLens")
    app.setApplicationDisplayName("FilingLens")
    from PySide6.QtGui import QIcon

    from engine.settings import RESOURCES_DIR

    app.setWindowIcon(QIcon(str(RESOURCES_DIR / "filinglens.svg")))
    from analyst_app.window import MainWindow
    from engine.errors import EngineError

    home = library_home(args.home)
    try:
        window = MainWindow(home, preset=args.preset)
    except EngineError as exc:
        QMessageBox.critical(None, "FilingLens", f"Cannot open the library at {home}:\n{exc}")
        return 2
    window.show()
    if args.screenshot:
        from PySide6.QtCore import QTimer

        def shoot() -> None:
            ok = window.grab().save(args.screenshot)
            print(f"wrote {args.screenshot}" if ok else f"could not write {args.screenshot}")
            window.close()  # the normal shutdown: worker threads stopped, layout remembered
            app.exit(0 if ok else 1)

        QTimer.singleShot(1500, shoot)  # let the library table and the first tab paint
    else:
        from PySide6.QtCore import QTimer

        from analyst_app.first_run import prepare_chat_model

        QTimer.singleShot(0, lambda: prepare_chat_model(window))  # the bundle's first run: assemble the chat model
    from analyst_app.workers import freeze_heap

    freeze_heap()  # Qt and the window's objects live until exit: keep them out of full collections
    code = int(app.exec())
    if window.unfinished_work:  # a model call is still running in its thread: do not wait for it
        logging.shutdown()
        os._exit(code)
    return code


def gui_command(args: argparse.Namespace) -> int:
    """``filinglens gui``: open the desktop application on the library and preset the global options select;
    options after ``gui`` (``--screenshot``, Qt's) go to :func:`main` as they are."""
    from engine.cli import settings_from_args

    return main(["--home", str(settings_from_args(args).library_home()), "--preset", args.preset, *args.extra])


GUI_HELP = "open the desktop application"  # what `filinglens --help` lists
gui_command.help = GUI_HELP  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
