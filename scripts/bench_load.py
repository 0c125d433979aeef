"""Concurrent load: five askers question one library while an ingest adds filings to it.

Builds a library of demo filings, then measures alone and loaded:
- **alone**: one asker (a process that loads the question path once and asks its questions in turn), then an
  ingest of more demo filings into a copy of the library;
- **loaded**: ``--askers`` such processes at once on the library while the same ingest runs into it.
Each question is one the statement facts answer; the answer must carry the demo corpus's true value. Prints
the questions answered and right, per-question latency (p50 / p95) alone and loaded, the ingest rate alone and
loaded, the largest resident memory of an asker and of the ingest, and any "database is locked" or lost run.
Run it alone (2 cores): anything running beside it is in the figures.

    .venv/bin/python scripts/bench_load.py [--askers 5] [--questions 20] [--filings 24] [--more 24]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def ask_loop(home: Path, questions_file: Path, out_file: Path) -> None:
    """The asker process: load once, then ask every question in turn, one JSON line each."""
    from engine.session import Session
    from engine.settings import Settings

    pipeline = Session(Settings(home=home)).pipeline()
    with out_file.open("w") as out:
        for item in json.loads(questions_file.read_text()):
            began = time.perf_counter()
            try:
                run = pipeline.run(item["question"])
                text, status, error = run.answer.text, run.status, ""
            except Exception as exc:  # noqa: BLE001 - the figure is what went wrong
                text, status, error = "", "error", f"{type(exc).__name__}: {exc}"
            out.write(json.dumps({"seconds": time.perf_counter() - began, "status": status, "error": error,
                                  "right": f"{item['value']:,.0f}" in text}) + "\n")
            out.flush()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--askers", type=int, default=5)
    ap.add_argument("--questions", type=int, default=20, help="questions per asker")
    ap.add_argument("--filings", type=int, default=24, help="demo filings in the library")
    ap.add_argument("--more", type=int, default=24, help="demo filings the ingest adds")
    ap.add_argument("--ask", nargs=3, metavar=("HOME", "QUESTIONS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ask:
        ask_loop(*(Path(a) for a in args.ask))
        return 0

    import psutil

    from engine.demo_corpus import generate_corpus
    from engine.store import Library

    work = Path(tempfile.mkdtemp(prefix="filinglens-load-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cli = [sys.executable, "-m", "engine.cli"]
    try:
        corpus, more = work / "corpus", work / "more"
        generate_corpus(corpus, args.filings, seed=5)
        generate_corpus(more, args.more, seed=17)
        home = work / "lib"
        subprocess.run([*cli, "--home", str(home), "ingest", str(corpus)], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        truth = [json.loads(line) for line in (corpus / "truth.jsonl").open()]
        facts = [t for t in truth if t["form"] == "10-K" and t["fiscal_year_column"] == t["period"]
                 and t["metric"] in ("Total revenue", "Net income", "Operating income", "Gross profit")]
        questions = [{"question": f"What was {t['company']}'s {t['metric'].lower()} in fiscal {t['period']}, "
                                  f"in USD millions?", "value": t["value"]} for t in facts]
        peak: dict[str, int] = {}  # resident memory (RSS): shared pages (the mapped model files) counted in each
        unique: dict[str, int] = {}  # memory of its own (USS): what each further process costs

        def watch(procs: dict[str, subprocess.Popen], stop: threading.Event) -> None:
            while not stop.is_set():
                for name, p in procs.items():
                    try:
                        proc = psutil.Process(p.pid)
                        family = [proc, *proc.children(True)]
                        full = [q.memory_full_info() for q in family]
                        peak[name] = max(peak.get(name, 0), sum(m.rss for m in full))
                        unique[name] = max(unique.get(name, 0), sum(m.uss for m in full))
                    except psutil.Error:
                        pass
                stop.wait(0.2)

        def phase(label: str, askers: int, ingest_home: Path | None) -> dict:
            procs: dict[str, subprocess.Popen] = {}
            outs = []
            for i in range(askers):
                mine = [questions[(i * 7 + k) % len(questions)] for k in range(args.questions)]
                qfile, out = work / f"{label}-q{i}.json", work / f"{label}-a{i}.jsonl"
                qfile.write_text(json.dumps(mine))
                outs.append(out)
                procs[f"asker {i}"] = subprocess.Popen(
                    [sys.executable, __file__, "--ask", str(home), str(qfile), str(out)], cwd=ROOT, env=env,
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            ingest_seconds = None
            if ingest_home is not None:
                began = time.monotonic()
                procs["ingest"] = subprocess.Popen([*cli, "--home", str(ingest_home), "ingest", str(more)], cwd=ROOT,
                                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            stop = threading.Event()
            watcher = threading.Thread(target=watch, args=(procs, stop))
            watcher.start()
            errors = []
            for name, p in procs.items():
                _, err = p.communicate(timeout=3600)
                if name == "ingest":
                    ingest_seconds = time.monotonic() - began
                if p.returncode != 0 or "database is locked" in err:
                    errors.append(f"{name}: exit {p.returncode} {err[-300:]}")
            stop.set()
            watcher.join()
            rows = [json.loads(line) for out in outs if out.exists() for line in out.open()]
            seconds = [r["seconds"] for r in rows]
            errors += [r["error"] for r in rows if r["error"]]
            result = {"asked": askers * args.questions, "answered": len(rows),
                      "right": sum(r["right"] for r in rows), "errors": errors,
                      "p50": statistics.median(seconds) if seconds else None,
                      "p95": percentile(seconds, 0.95) if seconds else None, "ingest_s": ingest_seconds}
            return result

        alone = phase("alone", 1, None)
        copy = work / "copy"
        with Library(home) as lib:
            lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            runs_before = lib.count("runs")
        shutil.copytree(home, copy)
        ingest_alone = phase("ingest-alone", 0, copy)
        peak.clear()
        unique.clear()
        loaded = phase("loaded", args.askers, home)
        with Library(home) as lib:
            runs_after = lib.count("runs")
            consistent = lib.integrity_problems() == [] and lib.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            filings = lib.count("filings")

        print(f"library: {args.filings} demo filings; the ingest adds {args.more}; "
              f"{len(questions)} distinct statement-fact questions")
        print(f"alone:  1 asker, {alone['answered']}/{alone['asked']} answered, {alone['right']} right, "
              f"p50 {alone['p50'] * 1000:.0f} ms, p95 {alone['p95'] * 1000:.0f} ms; "
              f"ingest alone {args.more / ingest_alone['ingest_s']:.2f} filings/s ({ingest_alone['ingest_s']:.1f} s)")
        print(f"loaded: {args.askers} askers + the ingest, {loaded['answered']}/{loaded['asked']} answered, "
              f"{loaded['right']} right, p50 {loaded['p50'] * 1000:.0f} ms, p95 {loaded['p95'] * 1000:.0f} ms; "
              f"ingest {args.more / loaded['ingest_s']:.2f} filings/s ({loaded['ingest_s']:.1f} s)")
        askers_peak = max(v for k, v in peak.items() if k.startswith("asker"))
        askers_own = max(v for k, v in unique.items() if k.startswith("asker"))
        everything = sum(unique.values())
        print(f"largest memory while loaded: an asker {askers_peak / 2**20:.0f} MB resident, "
              f"{askers_own / 2**20:.0f} MB of its own (the rest is shared: the mapped model files); the ingest (with "
              f"its readers) {peak.get('ingest', 0) / 2**20:.0f} MB resident; all processes' own memory together "
              f"{everything / 2**30:.1f} GB")
        print(f"runs stored while loaded: {runs_after - runs_before} of {loaded['asked']}; "
              f"filings {filings}; library consistent: {consistent}")
        problems = alone["errors"] + ingest_alone["errors"] + loaded["errors"]
        print(f"errors: {len(problems)}" + "".join(f"\n  {e}" for e in problems[:10]))
        whole = runs_after - runs_before == loaded["asked"] and loaded["right"] == loaded["asked"]
        return 0 if not problems and consistent and whole else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
