"""Crash safety: SIGKILL the CLI at random moments of an ingest, a removal, an index rebuild, a re-read of
outdated statement facts, a reranker training and a question, again and again, checking the library after every
kill; then let the work finish and compare it with a clean run. An operation that ends before its kill is run again,
killed sooner (its length learnt from the runs that ended), up to three times a cycle, so that a cycle's kill lands
mid-run even where the first guess of its length was long.

After each kill: SQLite's integrity check, the cross-table checks (page and chunk counts, orphans, duplicates),
no orphan rows, the builder lock free, the published index readable (``index verify`` may say it lags
behind, never that it is torn), and a registered reranker whose folder holds the weights it was registered with.
The fact re-read marks a random third of the filings as read by an older fact reader first (what an upgrade
does), so ``index rebuild`` re-reads their facts when it is killed. At the end an uninterrupted ingest and index build complete the work, and the
library must hold the same filings, chunks and facts as one built without interruption, and an index that
verifies. Prints the figures; exit 1 on any problem.

    .venv/bin/python scripts/kill_cycles.py [--cycles 50] [--filings 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.demo_corpus import generate_corpus
from engine.doctor import orphan_counts
from engine.models.embedder import weights_fingerprint
from engine.models.registry import reranker_registry_path
from engine.store import Library
from engine.store.index_sets import lock_is_free


def cli(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli", "--home", str(home), *args]


def run(cmd: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)


ATTEMPTS = 3  # runs of a cycle's operation until one is killed mid-run (its length learnt from those that ended)


def kill_after(cmd: list[str], delay: float) -> int | None:
    """Start ``cmd`` and SIGKILL its whole process group after ``delay`` s; its exit code when it ended first."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        return proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def counts(home: Path) -> dict[str, int]:
    with Library(home) as lib:
        return {t: lib.count(t) for t in ("filings", "pages", "chunks", "facts")}


def problems_after_kill(home: Path) -> list[str]:
    found = []
    if not (home / "library.sqlite3").exists():
        return found
    with Library(home) as lib:
        check = lib.conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            found.append(f"integrity: {check}")
        found += lib.integrity_problems()
        if orphans := orphan_counts(lib.conn):
            found.append(f"orphans: {orphans}")
    if not lock_is_free(home):
        found.append("the builder lock is still held")
    registry = reranker_registry_path(home)
    if registry.exists():
        try:
            entry = json.loads(registry.read_text(encoding="utf-8"))
            if weights_fingerprint(Path(entry["folder"])) != entry["fingerprint"]:
                found.append(f"the registered reranker {entry['folder']} no longer holds its registered weights")
        except Exception as exc:  # noqa: BLE001 - any failure to read it back is the finding
            found.append(f"the registered reranker does not read back: {exc}")
    verify = run(cli(home, "index", "verify"), timeout=300)
    torn = [ln for ln in verify.stdout.splitlines() if ln.startswith("problem:") and
            ("missing" in ln or "damaged" in ln or "does not open" in ln or "torn" in ln)]
    found += torn
    if verify.returncode not in (0, 1) or "Traceback" in verify.stderr:
        found.append(f"index verify crashed: {verify.stderr[-300:]}")
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument("--filings", type=int, default=40, help="demo filings in the corpus")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="filinglens-kill-"))
    corpus = work / "corpus"
    generate_corpus(corpus, args.filings, seed=args.seed + 3, html_every=5)
    truth = [json.loads(line) for line in (corpus / "truth.jsonl").open()]
    fact = next(t for t in truth if t["form"] == "10-K" and t["metric"] == "Total revenue")
    question = f"What was {fact['company']}'s total revenue in fiscal {fact['period']}, in USD millions?"

    clean = work / "clean"
    start = time.monotonic()
    done = run(cli(clean, "ingest", str(corpus)))
    clean_seconds = time.monotonic() - start
    if done.returncode != 0:
        print(done.stderr[-2000:])
        return 1
    reference = counts(clean)
    print(f"clean ingest of {args.filings} filings: {clean_seconds:.0f} s, {reference}")

    home = work / "killed"
    docs = [json.loads(line)["doc_name"] for line in (corpus / "documents.jsonl").open()]
    def stale_facts() -> list[str]:
        """Mark a third of the stored filings as read by an older fact reader; ``index rebuild`` re-reads them."""
        if (home / "library.sqlite3").exists():
            with Library(home) as lib:
                ids = [r[0] for r in lib.conn.execute("SELECT id FROM filings")]
                stale = rng.sample(ids, len(ids) // 3)
                lib.conn.executemany("UPDATE filings SET facts_version='facts-old' WHERE id=?",
                                     [(i,) for i in stale])
                lib.conn.commit()
        return cli(home, "index", "rebuild")

    operations = {  # (command, typical seconds, weight); a removal gives the next ingest work to redo
        "ingest": (lambda: cli(home, "ingest", str(corpus)), clean_seconds, 4),
        "remove": (lambda: cli(home, "remove", *rng.sample(docs, 8)), 10.0, 2),
        "index rebuild": (lambda: cli(home, "index", "rebuild"), 20.0, 2),
        "fact re-read": (stale_facts, 20.0, 2),
        "reranker training": (lambda: cli(home, "train-reranker", "--pairs", "12", "--batch-size", "9",
                                          "--max-length", "64", "--device", "cpu"), 40.0, 1),
        "question": (lambda: cli(home, "ask", question), 15.0, 2),
    }
    typical = {name: seconds for name, (_, seconds, _) in operations.items()}
    weights = [weight for _, _, weight in operations.values()]
    outcome: Counter[str] = Counter()
    failures = []
    for cycle in range(1, args.cycles + 1):
        name = rng.choices(list(operations), weights=weights)[0]
        make, _, _ = operations[name]
        for attempt in range(ATTEMPTS):  # an operation that finished before its kill is run again, killed sooner
            cmd = make()
            delay = rng.uniform(0.5, 0.95 * typical[name])  # inside the run: its length is learnt as it goes
            began = time.monotonic()
            code = kill_after(cmd, delay)
            if code is not None:
                typical[name] = time.monotonic() - began
            outcome[f"{name} {'killed' if code is None else 'finished first'}"] += 1
            found = problems_after_kill(home)
            if found:
                failures.append((cycle, name, round(delay, 1), found))
            print(f"cycle {cycle:3d}: {name:17s} killed after {delay:5.1f} s" if code is None else
                  f"cycle {cycle:3d}: {name:17s} finished (exit {code}) before {delay:.1f} s"
                  + (", again" if attempt + 1 < ATTEMPTS else ""),
                  "" if not found else f" PROBLEMS: {found}", flush=True)
            if code is None:
                break
    final = run(cli(home, "ingest", str(corpus)))
    verify = run(cli(home, "index", "verify"))
    after = counts(home)
    print(f"\n{args.cycles} kill cycles: " + ", ".join(f"{k} {n}" for k, n in sorted(outcome.items())))
    print(f"after the last, uninterrupted ingest: {after} (clean run: {reference}); "
          f"index verify exit {verify.returncode}")
    if after != reference:
        failures.append(("end", "counts", 0, [f"{after} != {reference}"]))
    if final.returncode != 0 or verify.returncode != 0:
        failures.append(("end", "resume", 0, [final.stderr[-500:], verify.stdout[-500:]]))
    print(f"problems: {len(failures)}")
    for f in failures:
        print("  ", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
