"""``doctor``: check the installation and the library (see :mod:`engine.doctor`)."""

from __future__ import annotations

import argparse

from engine.cli.common import say, settings_from_args


def cmd_doctor(args: argparse.Namespace) -> int:
    """Check the installation and the library; exit 1 when something needs fixing (see :mod:`engine.doctor`)."""
    from engine.doctor import run_doctor

    report = run_doctor(settings_from_args(args), verify_hashes=args.verify_hashes, repair=args.repair, say=say)
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands to the CLI's sub-parsers."""
    s = sub.add_parser("doctor", help="check the installation and the library and say what to fix (exit 1 if anything)")
    s.add_argument("--verify-hashes", action="store_true", help="read every model file again for its sha256")
    s.add_argument("--repair", action="store_true",
                   help="delete orphan rows, rebuild a torn facts full-text index, settle interrupted runs")
    s.set_defaults(func=cmd_doctor)
