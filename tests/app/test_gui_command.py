"""``filinglens gui``: the app's command, registered in pyproject's ``filinglens.commands`` entry-point group."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_pyproject_registers_gui_and_the_console_script_is_the_engines_cli() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"] == {"filinglens": "engine.cli:main"}
    assert project["entry-points"]["filinglens.commands"] == {"gui": "analyst_app.main:gui_command"}


def test_loading_the_gui_command_does_not_import_qt() -> None:
    """``filinglens`` loads the entry point to list ``gui``: every other command must work without PySide6."""
    code = ("import sys; sys.modules['PySide6'] = None\n"
            "from importlib.metadata import EntryPoint\n"
            "func = EntryPoint('gui', 'analyst_app.main:gui_command', 'filinglens.commands').load()\n"
            "from engine.cli import main\n"
            "print(func.help)\n"
            "sys.exit(main(['--help'], extra_commands=[('gui', func.help, func)]))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("open the desktop application\n")
    assert "gui                 open the desktop application" in done.stdout


def test_gui_opens_the_library_and_preset_the_global_options_select(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import analyst_app.main
    from engine.cli import main

    opened: list[list[str]] = []
    monkeypatch.setattr(analyst_app.main, "main", lambda argv: opened.append(argv) or 0)
    gui = analyst_app.main.gui_command
    assert main(["--home", str(tmp_path), "--preset", "fast", "gui", "--screenshot", "w.png"],
                extra_commands=[("gui", analyst_app.main.GUI_HELP, gui)]) == 0
    assert opened == [["--home", str(tmp_path), "--preset", "fast", "--screenshot", "w.png"]]
