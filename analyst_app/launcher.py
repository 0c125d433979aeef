"""The ``filinglens`` console script: the engine's CLI plus the ``gui`` command.

It lives here, not in :mod:`engine.cli`, so the engine never imports the desktop application.
PySide6 is imported only when ``gui`` runs, so every other command works without it.
"""

from __future__ import annotations

import argparse
import sys

from engine import cli


def _gui(args: argparse.Namespace) -> int:
    from analyst_app.main import main as gui_main

    return gui_main(["--home", str(cli.settings_from_args(args).library_home()), "--preset", args.preset, *args.extra])


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, extra_commands=[("gui", "open the desktop application", _gui)])


if __name__ == "__main__":
    sys.exit(main())
