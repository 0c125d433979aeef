"""Front-end commands: ``filinglens`` adds the commands installed front ends register in the
``filinglens.commands`` entry-point group (how the desktop app adds ``gui`` without the engine importing it)."""

from __future__ import annotations

import argparse
import logging
import sys
from importlib import metadata
from pathlib import Path

import pytest

from engine.cli import COMMAND_GROUP, main, settings_from_args

PLUGIN = '''
seen = []


def hello(args):
    seen.append(args)
    return 7


hello.help = "say hello from a front end"
'''


@pytest.fixture
def front_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[metadata.EntryPoint]:
    """A front end installed as package metadata would install it: a module with a command, an entry point."""
    (tmp_path / "fl_front_end.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fl_front_end", raising=False)
    entries = [metadata.EntryPoint(name="hello", value="fl_front_end:hello", group=COMMAND_GROUP)]

    def entry_points(**params: str) -> list[metadata.EntryPoint]:
        return [e for e in entries if params.get("group") in (None, e.group)]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    return entries


def test_an_installed_front_ends_command_runs_with_its_own_options(front_end, tmp_path: Path) -> None:
    home = tmp_path / "lib"
    assert main(["--home", str(home), "hello", "--screenshot", "x.png"]) == 7
    import fl_front_end

    (args,) = fl_front_end.seen
    assert args.extra == ["--screenshot", "x.png"]  # its options reach it unparsed
    assert settings_from_args(args).library_home() == home


def test_the_help_lists_a_front_ends_command(front_end, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "hello" in out and "say hello from a front end" in out and "quickstart" in out


def test_a_command_given_explicitly_wins_over_the_installed_one(front_end, tmp_path: Path) -> None:
    ran: list[argparse.Namespace] = []

    def hello(args: argparse.Namespace) -> int:
        ran.append(args)
        return 3

    assert main(["--home", str(tmp_path), "hello"], extra_commands=[("hello", "bundled", hello)]) == 3
    assert len(ran) == 1


def test_a_front_end_that_cannot_be_loaded_leaves_the_other_commands_working(
        front_end, tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    front_end[0] = metadata.EntryPoint(name="hello", value="fl_no_such_module:hello", group=COMMAND_GROUP)
    with caplog.at_level(logging.WARNING, logger="filinglens"):
        assert main(["--home", str(tmp_path / "lib"), "library"]) == 0
    assert "the hello command (fl_no_such_module:hello) could not be loaded" in caplog.text
    with pytest.raises(SystemExit):
        main(["--home", str(tmp_path / "lib"), "hello"])
    assert "invalid choice: 'hello'" in capsys.readouterr().err
