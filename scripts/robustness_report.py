"""Ingest fuzzing figures: a seeded batch of hostile files (tests/robustness/cases.py) ingested into a fresh
library; prints each kind's outcomes, the time taken and whether the library is consistent afterwards.

    .venv/bin/python scripts/robustness_report.py [--seed 0] [--damaged 80] [--timeout 120]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.demo_corpus import generate_corpus
from engine.doctor import orphan_counts
from engine.ingest import ingest
from engine.settings import Settings
from engine.store import Library
from tests.robustness.cases import write_cases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--damaged", type=int, default=80, help="truncated and bit-flipped copies of each kind")
    ap.add_argument("--timeout", type=float, default=120, help="ingest.file_timeout_s")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="filinglens-fuzz-"))
    generate_corpus(work / "demo", 8, seed=7, html_every=4)
    pdf, html = next((work / "demo").rglob("*_10K.pdf")), next((work / "demo").rglob("*.htm*"))
    cases = write_cases(work / "inbox", pdf, html, seed=args.seed, damaged=args.damaged)
    library = Library(work / "lib")
    start = time.monotonic()
    report = ingest(library, [work / "inbox"], Settings(home=work / "lib", ingest={"file_timeout_s": args.timeout}))
    seconds = time.monotonic() - start
    by_path = {Path(e.path): e for e in report.events}
    table: dict[str, Counter] = defaultdict(Counter)
    why: dict[str, str] = {}  # the reason, for a kind of a single file
    missing = 0
    for case in cases:
        event = by_path.get(case.path.resolve() if case.path.exists() else case.path)
        if event is None:
            missing += 1
            continue
        table[case.kind][event.status] += 1
        why[case.kind] = "" if case.kind in why else (event.reason or "")
    print(f"{len(cases)} hostile files (seed {args.seed}) ingested in {seconds:.1f} s; {missing} without an outcome")
    for kind, counts in sorted(table.items()):
        reason = f"  ({why[kind][:90]})" if why.get(kind) and counts.total() == 1 else ""
        print(f"  {kind:24s} " + ", ".join(f"{status} {n}" for status, n in sorted(counts.items())) + reason)
    reasons = Counter(e.reason.split(":")[0] for e in report.events if e.status in ("failed", "skipped"))
    print("rejections by reason:")
    for reason, n in reasons.most_common():
        print(f"  {n:4d}  {reason}")
    problems = library.integrity_problems() + [f"orphans: {orphan_counts(library.conn)}"] * bool(
        orphan_counts(library.conn))
    check = library.conn.execute("PRAGMA quick_check").fetchone()[0]
    print(f"library: {library.count('filings')} filings; integrity {check}; "
          f"{'consistent' if not problems else '; '.join(problems)}")
    return 0 if not missing and not problems and check == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
