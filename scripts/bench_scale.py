"""Question latency and index growth as a library grows to LOFin's size (145,897 filings). Prints figures; asserts
nothing. Run each step alone: other work on the machine changes the figures.

The library: a demo corpus with its truth (real ingest: PDFs and HTML read, facts, summaries) plus synthetic filler
filings of other fictional companies, made from the demo filings' cover and statement pages with another company's
name, ticker and year (stored through the same ``Library.add_filing``, their chunk terms made as ingest makes them).

    python scripts/bench_scale.py build --home /tmp/scale --filings 164        # demo corpus + filler to 164
    python scripts/bench_scale.py measure --home /tmp/scale                    # retrieval p50/p95, recall, RSS, disk
    python scripts/bench_scale.py build --home /tmp/scale --filings 10000      # grow it (resumes), measure again
    python scripts/bench_scale.py build --home /tmp/scale --filings 145897
    python scripts/bench_scale.py add --home /tmp/scale --n 100                # 100 new filings: big vs empty library
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.chunking import chunk_pages  # noqa: E402
from engine.demo_corpus import generate_corpus  # noqa: E402
from engine.indexing import sync_indexes  # noqa: E402
from engine.ingest import ingest  # noqa: E402
from engine.ingest.identity import summary_text  # noqa: E402
from engine.ingest.parse import parse_file  # noqa: E402
from engine.models.registry import load_embedder  # noqa: E402
from engine.records import FilingIdentity, ParsedFiling, indexed_text  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.store import Library  # noqa: E402
from engine.vocab.tokens import chunk_terms  # noqa: E402

DEMO_FILINGS, DEMO_SEED = 40, 11
FIRST = ["Alder", "Birch", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor", "Iris", "Juniper", "Kestrel",
         "Lumen", "Meridian", "Northwind", "Onyx", "Pioneer", "Quarry", "Redwood", "Summit", "Tidewater", "Umber",
         "Vantage", "Willow", "Xenon", "Yardley", "Zephyr", "Atlas", "Beacon", "Cascade", "Dunmore", "Evergreen",
         "Frontier", "Glacier", "Highland", "Ironwood", "Jasper", "Keystone", "Lakeside", "Mariner", "Nimbus"]
SECOND = ["Analytics", "Biosciences", "Capital", "Devices", "Energy", "Foods", "Genomics", "Holdings", "Industries",
          "Logistics", "Materials", "Networks", "Pharmaceuticals", "Robotics", "Semiconductors", "Systems",
          "Technologies", "Therapeutics", "Utilities", "Ventures"]
SUFFIX = ["Inc.", "Corp.", "Co.", "Group plc", "Holdings Ltd."]
FORMS = ["10-K", "10-K", "10-Q", "10-Q", "8-K"]


def demo_dir(home: Path) -> Path:
    return home.parent / f"{home.name}-demo"


def company(c: int) -> tuple[str, str]:
    """The c-th filler company: a name and a four-letter ticker, none a demo company's."""
    name = f"{FIRST[c % len(FIRST)]} {SECOND[(c // len(FIRST)) % len(SECOND)]} {SUFFIX[(c // 800) % len(SUFFIX)]}"
    if c >= 4000:
        name = f"{name.rsplit(' ', 1)[0]} {c // 4000 + 1} {name.rsplit(' ', 1)[1]}"
    letters, n = "", c
    for _ in range(4):
        letters, n = chr(ord("A") + n % 26) + letters, n // 26
    return name, "Z" + letters


def templates(home: Path, settings: Settings) -> list[tuple[ParsedFiling, str, str]]:
    """The demo filings as read, with the company name and ticker each prints (to be swapped for a filler's)."""
    docs = [json.loads(line) for line in (demo_dir(home) / "documents.jsonl").open()]
    out = []
    for d in docs[:8]:
        path = demo_dir(home) / d["path"]
        parsed = parse_file(path, "x", settings.ingest, settings.chunking, None)
        out.append((parsed, d["company"], d["ticker"]))
    return out


def filler(i: int, tmpl: tuple[ParsedFiling, str, str], settings: Settings) -> ParsedFiling:
    parsed, old_name, old_ticker = tmpl
    c = i // 25
    name, ticker = company(c)
    form = FORMS[i % len(FORMS)]
    year = 1999 + i % 25
    pages = [p.replace(old_name, name).replace(old_ticker, ticker) for p in parsed.pages[:2]]
    chunks = chunk_pages(pages, size=settings.chunking.size, overlap=settings.chunking.overlap)
    period = str(year) if form == "10-K" else f"{year}Q{1 + i % 3}" if form == "10-Q" else f"{year}-0{1 + i % 9}-15"
    ident = FilingIdentity(doc_name=f"{ticker}_{period}_{form.replace('-', '')}_{i}", issuer_key=ticker,
                           registrant=name, ticker=ticker, form=form, period=period, fiscal_year=year)
    return ParsedFiling(path=f"/synthetic/{ident.doc_name}.pdf", sha256=hashlib.sha256(f"filler-{i}".encode()).hexdigest(),
                        bytes=sum(map(len, pages)), identity=ident, pages=tuple(pages), image_only_pages=(),
                        chunks=tuple(chunks), summary=summary_text(ident), parser_version=parsed.parser_version,
                        printed_folios=(None,) * len(pages), folio_version=parsed.folio_version,
                        facts_version=parsed.facts_version,
                        terms=chunk_terms([indexed_text(ch.context, ch.text) for ch in chunks]))


def build(args: argparse.Namespace) -> None:
    settings = Settings(home=args.home)
    if not (demo_dir(args.home) / "truth.jsonl").exists():
        generate_corpus(demo_dir(args.home), DEMO_FILINGS, seed=DEMO_SEED, html_every=5)
    embedder = load_embedder(settings.models)
    with Library(args.home) as library:
        if library.count("filings") == 0:
            t = time.perf_counter()
            report = ingest(library, [demo_dir(args.home)], settings)
            print(f"demo corpus: {report.summary()} in {time.perf_counter() - t:.1f} s")
        have = library.conn.execute("SELECT COUNT(*) FROM filings WHERE path LIKE '/synthetic/%'").fetchone()[0]
        want = args.filings - library.count("filings")
        tmpl = templates(args.home, settings)
        t = time.perf_counter()
        for n, i in enumerate(range(have, have + max(0, want)), 1):
            library.add_filing(filler(i, tmpl[i % len(tmpl)], settings))
            if n % 5000 == 0:
                print(f"  {n}/{want} filler filings ({n / (time.perf_counter() - t):.0f}/s)", flush=True)
        if want > 0:
            print(f"stored {want} filler filings in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        report = sync_indexes(library, settings, embedder)
        bm25 = "not built (too many chunks)" if report.lexical_skipped else "rebuilt" if report.lexical_rebuilt else "kept"
        print(f"indexes: whole-library BM25 {bm25}, +{report.summaries_added} summary "
              f"vectors in {time.perf_counter() - t:.1f} s; library {library.count('filings')} filings, "
              f"{library.count('chunks')} chunks")


def questions(home: Path, n: int, corpus: Path | None = None) -> list[tuple[str, str]]:
    """(question, gold doc name): a 10-K's own-year figure of a demo company (of the library's demo corpus, or
    of ``corpus``)."""
    rows = [json.loads(line) for line in ((corpus or demo_dir(home)) / "truth.jsonl").open()]
    rows = [r for r in rows if r["form"] == "10-K" and r["fiscal_year_column"] == r["period"]]
    random.Random(0).shuffle(rows)
    return [(f"What was {r['company']}'s {r['metric'].lower()} in fiscal year {r['period']}?", r["doc_name"])
            for r in rows[:n]]


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(args: argparse.Namespace) -> None:
    from engine.session import Session

    settings = Settings(home=args.home)
    me = psutil.Process()
    rss0 = me.memory_info().rss
    with Session(settings) as session:
        t = time.perf_counter()
        pipeline = session.pipeline(chat=False)
        opened = time.perf_counter() - t
        rss_open = me.memory_info().rss
        asked = questions(args.home, args.questions)
        pipeline.run(asked[0][0], stop_after="passages", store=False)  # warm: first-use costs are not latency
        times, hits, stages = [], 0, {"intent": [], "documents": [], "passages": []}
        for question, gold in asked:
            t = time.perf_counter()
            run = pipeline.run(question, stop_after="passages", store=False)
            times.append(time.perf_counter() - t)
            for trace in run.traces:
                if trace.stage in stages:
                    stages[trace.stage].append(trace.seconds)
            kept = [c.doc_name for s in run.stages("documents") for c in s.payload.candidates if c.kept]
            hits += gold in kept
        n_filings, n_chunks = session.library.count("filings"), session.library.count("chunks")
    times.sort()
    p = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    print(f"{n_filings} filings, {n_chunks} chunks; library on disk {du(args.home) / 2**30:.2f} GB "
          f"(SQLite {(args.home / 'library.sqlite3').stat().st_size / 2**30:.2f} GB)")
    print(f"open (models + pipeline): {opened:.1f} s; RSS {rss0 / 2**20:.0f} MB before, {rss_open / 2**20:.0f} MB "
          f"open, {me.memory_info().rss / 2**20:.0f} MB after {len(times)} questions")
    print(f"retrieval (intent → documents → passages), {len(times)} questions: p50 {statistics.median(times) * 1e3:.0f} ms, "
          f"p95 {p(0.95) * 1e3:.0f} ms, max {times[-1] * 1e3:.0f} ms")
    print("  by stage, p50/p95 ms: " + ", ".join(
        f"{k} {statistics.median(v) * 1e3:.0f}/{sorted(v)[min(len(v) - 1, int(0.95 * len(v)))] * 1e3:.0f}"
        for k, v in stages.items() if v))
    print(f"document recall (gold filing kept): {hits}/{len(times)} = {hits / len(times):.3f}")


def add(args: argparse.Namespace) -> None:
    """Ingest N new demo filings (a corpus of its own seed) into the library, and into an empty one."""
    new = args.home.parent / f"{args.home.name}-add{args.n}-{args.seed}"
    if not (new / "documents.jsonl").exists():
        generate_corpus(new, args.n, seed=DEMO_SEED + 1000 + args.seed)
    settings = Settings(home=args.home)
    embedder = load_embedder(settings.models)
    empty = args.home.parent / f"{args.home.name}-empty"
    shutil.rmtree(empty, ignore_errors=True)
    for label, home in (("empty library", empty), ("this library", args.home)):
        s = Settings(home=home)
        with Library(home) as library:
            before = library.count("filings")
            t = time.perf_counter()
            report = ingest(library, [new], s)
            read = time.perf_counter() - t
            sync = sync_indexes(library, s, embedder)
            total = time.perf_counter() - t
        bm25 = "not built" if sync.lexical_skipped else "rebuilt" if sync.lexical_rebuilt else "kept"
        print(f"{label} ({before} filings): {report.summary()}; read and stored {read:.1f} s, indexes "
              f"{total - read:.1f} s (whole-library BM25 {bm25}), total {total:.1f} s")
    # the added filings are in the summary vectors' delta graph: the document stage must find them there
    from engine.session import Session

    with Session(settings) as session:
        summaries = session.indexes.summaries
        asked = questions(args.home, 20, corpus=new)
        pipeline = session.pipeline(chat=False)
        hits = 0
        for question, gold in asked:
            run = pipeline.run(question, stop_after="passages", store=False)
            hits += gold in [c.doc_name for s in run.stages("documents") for c in s.payload.candidates if c.kept]
    print(f"summary vectors: {len(summaries):,} in {summaries.segments} graph(s); document recall on questions "
          f"about the added filings: {hits}/{len(asked)}")


def app(args: argparse.Namespace) -> None:
    """The desktop app on the library (offscreen): time to open, RSS once the Library tab has listed every filing,
    and after a screenshot's worth of painting."""
    import os
    import tempfile

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from analyst_app.window import MainWindow

    me = psutil.Process()
    qt = QApplication.instance() or QApplication([])
    store = QSettings(str(Path(tempfile.mkdtemp()) / "bench.ini"), QSettings.Format.IniFormat)
    t = time.perf_counter()
    window = MainWindow(args.home, store=store)
    window.resize(1400, 900)
    window.show()
    figures: dict[str, float] = {}

    def done() -> None:  # in the app's own event loop, after its startup work
        figures["rows"] = window.library_view.model.rowCount()
        window.grab().save(str(args.home.parent / f"{args.home.name}-app.png"))
        figures["rss"] = me.memory_info().rss / 2**20
        qt.quit()

    QTimer.singleShot(0, lambda: figures.setdefault("open", time.perf_counter() - t))
    QTimer.singleShot(int(args.settle * 1000), done)
    qt.exec()
    print(f"app: window shown in {figures['open']:.1f} s; {figures['rows']:.0f} filings listed; RSS "
          f"{figures['rss']:.0f} MB after {args.settle:g} s (screenshot {args.home.name}-app.png)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(required=True)
    b = sub.add_parser("build")
    b.add_argument("--home", type=Path, required=True)
    b.add_argument("--filings", type=int, required=True)
    b.set_defaults(func=build)
    m = sub.add_parser("measure")
    m.add_argument("--home", type=Path, required=True)
    m.add_argument("--questions", type=int, default=40)
    m.set_defaults(func=measure)
    a = sub.add_parser("add")
    a.add_argument("--home", type=Path, required=True)
    a.add_argument("--n", type=int, default=100)
    a.add_argument("--seed", type=int, default=0, help="another seed: other new filings (the last ones are stored)")
    a.set_defaults(func=add)
    g = sub.add_parser("app")
    g.add_argument("--home", type=Path, required=True)
    g.add_argument("--settle", type=float, default=10.0, help="seconds the app runs before RSS is read")
    g.set_defaults(func=app)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
