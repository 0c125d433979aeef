"""The library's commands: ``ingest``, ``search``, ``facts``, ``library``, ``reports``, ``remove``, ``index``,
``reindex`` and ``demo-corpus``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from engine.cli.common import build_lock, open_session, refresh_facts, settings_from_args, sync
from engine.pages import cite, page_index_of


def cmd_ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from engine.ingest import ingest

    settings = settings_from_args(args)
    session = open_session(settings)
    vectors = session.cluster_vectors()  # before anything is read: a Ray cluster that does not answer is said
    library = session.library
    t0 = time.perf_counter()
    failed: list[str] = []

    def on_event(ev) -> None:
        bar.total = ev.total
        bar.update(1)
        if ev.status in ("failed", "skipped", "removed", "duplicate"):
            failed.append(f"  {ev.status:9s} {ev.path}: {ev.reason}")

    with build_lock(session, "an ingest"):  # one writer at a time; a second ingest waits here
        bar = tqdm(total=0, desc="ingest", unit="file")
        report = ingest(library, args.paths, settings, prune=not args.no_prune, on_event=on_event, vectors=vectors)
        bar.close()
        read_s = time.perf_counter() - t0
        refresh_facts(library, settings)
        sync(session, vectors=vectors)
    if report.count("added"):
        print(f"read {report.count('added')} filing(s) in {read_s:.1f}s ({report.count('added') / read_s:.2f} filings/s"
              f"{', on Ray at ' + settings.ingest.ray if settings.ingest.ray else ''}"
              f"{f'; {session.vectors_reused} vectors embedded on the cluster' if vectors is not None else ''})")
    print(f"ingest: {report.summary()} in {time.perf_counter() - t0:.1f}s "
          f"({library.count('filings')} filings, {library.count('chunks')} chunks in {library.home})")
    for line in failed:
        print(line)
    return 1 if report.count("failed") and not report.count("added") and not report.count("unchanged") else 0


def cmd_search(args: argparse.Namespace) -> int:
    from engine.retrieval.search import MetadataFilter

    session = open_session(settings_from_args(args))
    if session.library.count("filings") == 0:
        print("the library is empty: run `filinglens ingest PATH` first")
        return 1
    searcher = session.searcher()
    res = searcher.search(args.query, args.k, MetadataFilter(args.issuer, args.form, args.period))
    lists = {"fused": res.fused, "bm25": res.bm25, "dense": res.dense}
    modes = ["bm25", "dense", "fused"] if args.mode == "all" else [args.mode]
    for mode in modes:
        extra = f" — dense from {res.dense_source}" if mode in ("dense", "fused") else ""
        print(f"== {mode}{extra}")
        for hit in lists[mode]:
            snippet = " ".join(hit.chunk.text.split())[:160]
            where = cite(hit.chunk.doc_name, hit.chunk.page_index, hit.chunk.printed_folio)
            print(f"{hit.rank:3d}. {where}  score={hit.score:.4f}  "
                  f"(bm25={hit.scores['bm25']:.2f} dense={hit.scores['dense']:.3f})\n     {snippet}")
    print(f"({', '.join(f'{k} {v:.1f} ms' for k, v in res.timings_ms.items())})", file=sys.stderr)
    return 0


def cmd_facts(args: argparse.Namespace) -> int:
    from engine.facts.lookup import FactFilter, describe, search_facts

    session = open_session(settings_from_args(args))
    library = session.library
    if library.count("facts") == 0:
        print("the library has no statement facts: run `filinglens ingest PATH` first")
        return 1
    try:
        page_index = None if args.page is None else page_index_of(args.page)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    flt = FactFilter(company=args.company, period=args.period, doc_name=args.doc, page_index=page_index)
    embedder = session.embedder if args.query and not args.words_only else None
    found = search_facts(library, args.query or "", flt, embedder=embedder, k=args.k)
    for stored in found:
        print(describe(stored))
    if not found:
        print("no fact matches: try fewer filters (--company, --period, --page) or other words")
    return 0 if found else 1


def cmd_library(args: argparse.Namespace) -> int:
    library = open_session(settings_from_args(args)).library
    inherited = False
    for f in library.filings():
        i = f.identity
        flag = f"  [{len(f.image_only_pages)} image-only pages]" if f.image_only_pages else ""
        ticker = (i.ticker or "-") + ("*" if f.inherited_from("ticker") else "")
        inherited = inherited or ticker.endswith("*")
        print(f"{f.id:5d}  {i.doc_name:32s} {i.registrant or '?':40.40s} {ticker:7s} {i.form or '?':8s} "
              f"{i.period or '?':10s} {f.n_pages:4d} pages{flag}")
    if inherited:
        print("* the registrant's ticker, stated by another of its filings (this cover states none)")
    return 0


def cmd_reports(args: argparse.Namespace) -> int:
    library = open_session(settings_from_args(args)).library
    rows = library.reports()
    if args.failed:
        rows = [r for r in rows if r["status"] in ("failed", "skipped")]
    for r in rows[-args.limit:]:
        print(f"{r['at']}  {r['status']:9s} {r['path']}  {r['reason']}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    session = open_session(settings_from_args(args))
    library = session.library
    ids = []
    for name in args.doc_names:
        f = library.filing_by_doc_name(name)
        if f is None:
            print(f"no filing named {name}")
            continue
        ids.append(f.id)
    with build_lock(session, "a removal"):
        n = library.remove_filings(ids)
        sync(session)
    print(f"removed {n} filing(s)")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    """``index build`` (bring the indexes to the library's generation), ``index rebuild`` (from scratch), each after
    reading again what an older FilingLens read of the stored filings, and ``index verify`` (exit 1 when the index
    lags, is torn or does not fit)."""
    settings = settings_from_args(args)
    session = open_session(settings)
    library = session.library
    if args.index_cmd == "verify":
        result = session.verify_indexes()
        for line in result.lines:
            print(line)
        for problem in result.problems:
            print(f"problem: {problem}")
        print("index: OK" if result.ok else f"index: {len(result.problems)} problem(s)")
        return 0 if result.ok else 1
    rebuild = args.index_cmd == "rebuild"
    with build_lock(session, "an index rebuild" if rebuild else "an index build"):
        # what an older FilingLens read of the stored filings is read again first (only the filings that need it)
        refreshed = session.refresh_readings()
        if said := refreshed.text():
            print(f"library: {said}", file=sys.stderr)
        for line in refreshed.problems:
            print(f"facts: {line}", file=sys.stderr)
        report = sync(session, rebuild=rebuild)
    if report.published:
        print(f"index: published {report.published} (generation {report.generation}, "
              f"{library.count('filings')} filings)")
    else:
        print(f"index: already current (generation {report.generation})")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    args.index_cmd = "rebuild"
    return cmd_index(args)


def cmd_demo_corpus(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from engine.demo_corpus import generate_corpus

    bar = tqdm(total=args.filings, desc="demo corpus", unit="filing")

    def progress(done: int, total: int) -> None:
        bar.n = done
        bar.refresh()

    specs = generate_corpus(Path(args.out), args.filings, seed=args.seed, html_every=args.html_every, progress=progress)
    bar.close()
    print(f"wrote {len(specs)} fictional filings to {args.out} (truth.jsonl holds the true values)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands to the CLI's sub-parsers."""
    s = sub.add_parser("ingest", help="add PDF/HTML filings or folders (LOFin layout) to the library")
    s.add_argument("paths", nargs="+")
    s.add_argument("--workers", type=int, help="parser processes (default: settings, 2)")
    s.add_argument("--chunk-vectors", action="store_true", help="also embed every chunk (slow on CPU)")
    s.add_argument("--no-prune", action="store_true", help="keep filings whose files vanished from the given folders")
    s.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="read on a Ray cluster (filinglens[cluster]): a running cluster's address, 'auto', or nothing "
                        "for a Ray started here for this ingest")
    s.add_argument("--ray-workers", type=int, help="read actors on the cluster (default: one per cluster CPU)")
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("search", help="BM25, dense and fused search over the library")
    s.add_argument("query")
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--issuer")
    s.add_argument("--form")
    s.add_argument("--period")
    s.add_argument("--mode", choices=["fused", "bm25", "dense", "all"], default="all")
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("facts", help="statement facts (table cells read at ingest) by company, period, page and row")
    s.add_argument("query", nargs="?", default="", help="what the row is called, e.g. \"capital expenditure\"")
    s.add_argument("--company", help="issuer key, ticker or part of the registrant's name")
    s.add_argument("--period", help="FY2018 / 2018, or an end date such as 2019-02-02")
    s.add_argument("--doc", help="one filing, by doc name")
    s.add_argument("--page", type=int, help="one page (as a PDF reader numbers it, from 1)")
    s.add_argument("-k", type=int, default=20, help="how many facts to print")
    s.add_argument("--words-only", action="store_true", help="match the row's words only (no embedder)")
    s.set_defaults(func=cmd_facts)
    s = sub.add_parser("library", help="list the filings in the library")
    s.set_defaults(func=cmd_library)
    s = sub.add_parser("reports", help="the per-file ingest reports")
    s.add_argument("--failed", action="store_true")
    s.add_argument("--limit", type=int, default=200)
    s.set_defaults(func=cmd_reports)
    s = sub.add_parser("remove", help="remove filings by doc name")
    s.add_argument("doc_names", nargs="+")
    s.set_defaults(func=cmd_remove)
    s = sub.add_parser("index", help="build, verify or rebuild the search indexes (questions only read them)")
    isub = s.add_subparsers(dest="index_cmd", required=True)
    isub.add_parser("build", help="bring the indexes to the library's current state (waits for a running ingest)")
    isub.add_parser("verify", help="check the published indexes against the library; exit 1 on any problem")
    isub.add_parser("rebuild", help="build every index from scratch")
    s.set_defaults(func=cmd_index)
    s = sub.add_parser("reindex", help="same as `index rebuild`")
    s.set_defaults(func=cmd_reindex)

    s = sub.add_parser("demo-corpus", help="generate a fictional demo corpus (PDF/HTML) with known true values")
    s.add_argument("out")
    s.add_argument("--filings", type=int, default=24)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--html-every", type=int, default=0, help="write every N-th filing as SEC-style HTML")
    s.set_defaults(func=cmd_demo_corpus)
