"""The ``filinglens`` command line."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from engine.errors import EngineError
from engine.settings import Settings, load_preset

log = logging.getLogger("filinglens")


def _settings(args: argparse.Namespace) -> Settings:
    settings = load_preset(args.preset)
    overrides: dict = {}
    if args.home:
        overrides["home"] = str(args.home)
    if getattr(args, "workers", None):
        overrides.setdefault("ingest", {})["workers"] = args.workers
    if getattr(args, "chunk_vectors", False):
        overrides.setdefault("retrieval", {})["chunk_vectors"] = True
    if getattr(args, "model", None):
        overrides.setdefault("models", {})["chat_model"] = args.model
    return settings.with_overrides(**overrides) if overrides else settings


def _library(settings: Settings):  # noqa: ANN202
    from engine.store import Library

    return Library(settings.library_home())


def _embedder(settings: Settings):  # noqa: ANN202
    from engine.models.registry import load_embedder

    return load_embedder(settings.models)


def _sync(library, settings: Settings, embedder) -> None:  # noqa: ANN001
    from tqdm import tqdm

    from engine.indexing import sync_indexes

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage) or bars.setdefault(stage, tqdm(total=total, desc=stage, unit="item", leave=False))
        bar.n = done
        bar.refresh()

    report = sync_indexes(library, settings, embedder, progress=progress)
    for bar in bars.values():
        bar.close()
    if report.lexical_rebuilt or report.summaries_added or report.summaries_removed or report.chunk_vectors_added:
        print(f"indexes: BM25 {'rebuilt' if report.lexical_rebuilt else 'current'}, summary vectors +{report.summaries_added}"
              f"/-{report.summaries_removed}, chunk vectors +{report.chunk_vectors_added}/-{report.chunk_vectors_removed}",
              file=sys.stderr)


def cmd_ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from engine.ingest import ingest

    settings = _settings(args)
    library = _library(settings)
    t0 = time.perf_counter()
    bar = tqdm(total=0, desc="ingest", unit="file")
    failed: list[str] = []

    def on_event(ev) -> None:  # noqa: ANN001
        bar.total = ev.total
        bar.update(1)
        if ev.status in ("failed", "skipped", "removed", "duplicate"):
            failed.append(f"  {ev.status:9s} {ev.path}: {ev.reason}")

    report = ingest(library, args.paths, settings, prune=not args.no_prune, on_event=on_event)
    bar.close()
    _sync(library, settings, _embedder(settings))
    print(f"ingest: {report.summary()} in {time.perf_counter() - t0:.1f}s "
          f"({library.count('filings')} filings, {library.count('chunks')} chunks in {library.home})")
    for line in failed:
        print(line)
    return 1 if report.count("failed") and not report.count("added") and not report.count("unchanged") else 0


def cmd_search(args: argparse.Namespace) -> int:
    from engine.search import MetadataFilter, Searcher

    settings = _settings(args)
    library = _library(settings)
    embedder = _embedder(settings)
    searcher = Searcher(library, settings, embedder)
    if searcher.stale:
        _sync(library, settings, embedder)
        searcher = Searcher(library, settings, embedder)
    if library.count("filings") == 0:
        print("the library is empty: run `filinglens ingest PATH` first")
        return 1
    res = searcher.search(args.query, args.k, MetadataFilter(args.issuer, args.form, args.period))
    lists = {"fused": res.fused, "bm25": res.bm25, "dense": res.dense}
    modes = ["bm25", "dense", "fused"] if args.mode == "all" else [args.mode]
    for mode in modes:
        extra = f" — dense from {res.dense_source}" if mode in ("dense", "fused") else ""
        print(f"== {mode}{extra}")
        for hit in lists[mode]:
            snippet = " ".join(hit.chunk.text.split())[:160]
            print(f"{hit.rank:3d}. {hit.chunk.doc_name}  p.{hit.chunk.page_no}  score={hit.score:.4f}  "
                  f"(bm25={hit.scores['bm25']:.2f} dense={hit.scores['dense']:.3f})\n     {snippet}")
    print(f"({', '.join(f'{k} {v:.1f} ms' for k, v in res.timings_ms.items())})", file=sys.stderr)
    return 0


def cmd_library(args: argparse.Namespace) -> int:
    library = _library(_settings(args))
    for f in library.filings():
        i = f.identity
        flag = f"  [{len(f.image_only_pages)} image-only pages]" if f.image_only_pages else ""
        print(f"{f.id:5d}  {i.doc_name:32s} {i.registrant or '?':40.40s} {i.ticker or '-':6s} {i.form or '?':8s} "
              f"{i.period or '?':10s} {f.n_pages:4d} pages{flag}")
    return 0


def cmd_reports(args: argparse.Namespace) -> int:
    library = _library(_settings(args))
    rows = library.reports()
    if args.failed:
        rows = [r for r in rows if r["status"] in ("failed", "skipped")]
    for r in rows[-args.limit:]:
        print(f"{r['at']}  {r['status']:9s} {r['path']}  {r['reason']}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    settings = _settings(args)
    library = _library(settings)
    ids = []
    for name in args.doc_names:
        f = library.filing_by_doc_name(name)
        if f is None:
            print(f"no filing named {name}")
            continue
        ids.append(f.id)
    n = library.remove_filings(ids)
    _sync(library, settings, _embedder(settings))
    print(f"removed {n} filing(s)")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    import shutil

    settings = _settings(args)
    library = _library(settings)
    shutil.rmtree(library.index_dir, ignore_errors=True)
    library.index_dir.mkdir()
    _sync(library, settings, _embedder(settings))
    print("indexes rebuilt")
    return 0


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


def cmd_models(args: argparse.Namespace) -> int:
    from engine.models import registry

    settings = _settings(args)
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
    for status in registry.list_models(home):
        print(status)
    return 0


def cmd_quickstart(args: argparse.Namespace) -> int:
    """The README's main job: build the demo corpus, ingest it, and search it."""
    settings = _settings(args)
    home = settings.library_home()
    demo = home / "demo-corpus"
    if not (demo / "documents.jsonl").exists():
        args.out, args.filings, args.seed, args.html_every = str(demo), 24, 0, 6
        cmd_demo_corpus(args)
    args.paths, args.no_prune = [str(demo)], False
    cmd_ingest(args)
    args.query = args.question
    args.k, args.mode, args.issuer, args.form, args.period = 5, "fused", None, None, None
    print(f"\nsearch: {args.query}")
    return cmd_search(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="filinglens", description="Offline question answering over SEC filings.")
    p.add_argument("--home", type=Path, help="library folder (default: $FILINGLENS_HOME or the user data dir)")
    p.add_argument("--preset", default="default", help="settings preset name or JSON file")
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("ingest", help="add PDF/HTML filings or folders (LOFin layout) to the library")
    s.add_argument("paths", nargs="+")
    s.add_argument("--workers", type=int, help="parser processes (default: settings, 2)")
    s.add_argument("--chunk-vectors", action="store_true", help="also embed every chunk (slow on CPU)")
    s.add_argument("--no-prune", action="store_true", help="keep filings whose files vanished from the given folders")
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("search", help="BM25, dense and fused search over the library")
    s.add_argument("query")
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--issuer")
    s.add_argument("--form")
    s.add_argument("--period")
    s.add_argument("--mode", choices=["fused", "bm25", "dense", "all"], default="all")
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("library", help="list the filings in the library")
    s.set_defaults(func=cmd_library)
    s = sub.add_parser("reports", help="the per-file ingest reports")
    s.add_argument("--failed", action="store_true")
    s.add_argument("--limit", type=int, default=200)
    s.set_defaults(func=cmd_reports)
    s = sub.add_parser("remove", help="remove filings by doc name")
    s.add_argument("doc_names", nargs="+")
    s.set_defaults(func=cmd_remove)
    s = sub.add_parser("reindex", help="rebuild every index from the library")
    s.set_defaults(func=cmd_reindex)

    s = sub.add_parser("demo-corpus", help="generate a fictional demo corpus (PDF/HTML) with known true values")
    s.add_argument("out")
    s.add_argument("--filings", type=int, default=24)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--html-every", type=int, default=0, help="write every N-th filing as SEC-style HTML")
    s.set_defaults(func=cmd_demo_corpus)

    s = sub.add_parser("models", help="install or list local models")
    msub = s.add_subparsers(dest="models_cmd", required=True)
    m = msub.add_parser("install")
    m.add_argument("name")
    m.add_argument("--allow-unverified", action="store_true")
    msub.add_parser("list")
    s.set_defaults(func=cmd_models)

    s = sub.add_parser("quickstart", help="demo: generate the fictional corpus, ingest it and search it")
    s.add_argument("--question", default="What was total revenue in fiscal 2023?")
    s.set_defaults(func=cmd_quickstart)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
