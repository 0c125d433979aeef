"""The bundle's program: the ``filinglens`` console script, frozen by PyInstaller (installer/filinglens.spec).

With no arguments it opens the desktop application, so the ``.desktop`` entry and a double click need no
flags. ``freeze_support`` comes first: the ingest's reader pool starts its processes with ``spawn``, which
in a frozen program re-runs this executable. The ``gui`` command is given to the CLI here, not found through
its entry point: a frozen bundle may carry no package metadata.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from analyst_app.main import GUI_HELP, gui_command
    from engine.cli import main

    sys.exit(main(sys.argv[1:] or ["gui"], extra_commands=[("gui", GUI_HELP, gui_command)]))
