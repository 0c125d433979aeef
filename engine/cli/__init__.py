"""The ``filinglens`` command line: the global options, and the sub-parsers each command module registers.

Each module of this package holds one group of commands and a ``register(sub)`` that adds their sub-parsers;
:func:`build_parser` calls them in the order ``filinglens --help`` lists the commands.

Front ends add their own commands without the engine importing them: :func:`main` takes ``extra_commands``,
and finds more through the entry-point group ``filinglens.commands``. Such an entry point names a function
``func(args: argparse.Namespace) -> int`` with a ``help`` attribute (the one-line help ``filinglens --help``
shows); the entry point's name is the command. The function is loaded when :func:`main` builds the parser, so
its module must import nothing heavy at module level (``analyst_app.main:gui_command`` imports PySide6 only
when it runs). Options after the command's name reach it unparsed, as ``args.extra``; the global options
(``--home``, ``--preset``) are parsed, and :func:`settings_from_args` turns them into settings.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

from engine.cli import ask, doctor, eval, library, models, quickstart, train
from engine.cli.common import settings_from_args
from engine.console import configure_console
from engine.errors import EngineError

__all__ = ["COMMAND_GROUP", "Command", "build_parser", "front_end_commands", "main", "settings_from_args"]

log = logging.getLogger("filinglens")

Command = tuple[str, str, Callable[[argparse.Namespace], int]]
"""A front end's command: its name, its one-line help and the function that runs it."""

COMMAND_GROUP = "filinglens.commands"
"""The entry-point group front ends register their commands in (see the module's docstring)."""


def build_parser(extra_commands: Sequence[Command] = ()) -> argparse.ArgumentParser:
    """The CLI; ``extra_commands`` lets a front end (the desktop app) add its own subcommands,
    so the engine never imports the GUI."""
    p = argparse.ArgumentParser(prog="filinglens", description="Offline question answering over SEC filings.")
    p.add_argument("--home", type=Path, help="library folder (default: $FILINGLENS_HOME or the user data dir)")
    p.add_argument("--preset", default="default", help="settings preset name or JSON file")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v: progress notes and libraries' warnings; -vv: debug lines")
    sub = p.add_subparsers(dest="cmd", required=True)
    for group in (library, models, ask, eval, train, doctor, quickstart):
        group.register(sub)

    for name, help_text, func in extra_commands:
        s = sub.add_parser(name, help=help_text)
        s.set_defaults(func=func, passes_options=True)  # its own options go to the front end as ``extra``
    return p


def front_end_commands(skip: Sequence[str] = ()) -> list[Command]:
    """The commands installed front ends register in the ``filinglens.commands`` entry-point group, except those
    named in ``skip``. One that cannot be loaded is left out with a warning: the other commands still work."""
    found: list[Command] = []
    for entry in metadata.entry_points(group=COMMAND_GROUP):
        if entry.name in skip or any(entry.name == name for name, _, _ in found):
            continue
        try:
            func = entry.load()
        except Exception as exc:  # noqa: BLE001 - a broken front end must not take the engine's commands with it
            log.warning("the %s command (%s) could not be loaded: %s", entry.name, entry.value, exc)
            continue
        if not callable(func):
            log.warning("the %s command (%s) is not a function", entry.name, entry.value)
            continue
        found.append((entry.name, str(getattr(func, "help", "") or ""), func))
    return found


def main(argv: list[str] | None = None, extra_commands: Sequence[Command] = ()) -> int:
    """Run the CLI on ``argv`` (default: the process's arguments) and return the exit status.

    Args:
        argv: The arguments after the program's name.
        extra_commands: Front-end commands given explicitly (a frozen bundle, where entry-point metadata may be
            missing); they win over an installed entry point of the same name.
    """
    commands = [*extra_commands, *front_end_commands(skip=[name for name, _, _ in extra_commands])]
    parser = build_parser(commands)
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passes_options", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    configure_console(args.verbose)
    try:
        return int(args.func(args) or 0)
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
