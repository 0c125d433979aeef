"""The ``filinglens`` command line."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.console import configure_console
from engine.errors import ConfigError, EngineError
from engine.pages import cite, page_index_of
from engine.records import StageTrace
from engine.settings import Settings, load_preset

if TYPE_CHECKING:
    from engine.store import Library

log = logging.getLogger("filinglens")


def _settings(args: argparse.Namespace) -> Settings:
    home = args.home or Settings().library_home()
    settings = load_preset(args.preset, home)  # built-in, or one saved in this library (GUI "Save as preset")
    overrides: dict = {}
    if args.home:
        overrides["home"] = str(args.home)
    if getattr(args, "workers", None):
        overrides.setdefault("ingest", {})["workers"] = args.workers
    if getattr(args, "chunk_vectors", False):
        overrides.setdefault("retrieval", {})["chunk_vectors"] = True
    if getattr(args, "ray", None) is not None:
        overrides.setdefault("ingest", {})["ray"] = args.ray
    if getattr(args, "ray_workers", None):
        overrides.setdefault("ingest", {})["ray_workers"] = args.ray_workers
    if getattr(args, "model", None):
        overrides.setdefault("models", {})["chat_model"] = args.model
    if getattr(args, "reranker", None):
        _reranker_overrides(args.reranker, overrides)
    if getattr(args, "model_intent", False):
        overrides.setdefault("rerank", {})["model_intent"] = True
    if getattr(args, "rerank_seed", None) is not None:
        overrides.setdefault("rerank", {})["seed"] = args.rerank_seed
    if getattr(args, "gpu_layers", None) is not None:
        overrides.setdefault("models", {})["gpu_layers"] = args.gpu_layers
    return settings.with_overrides(**overrides) if overrides else settings


_CARD_MODES = ("cards", "tournament", "tournament-s2", "multiagent")


def _reranker_overrides(name: str, overrides: dict) -> None:
    """``--reranker``: a card-based mode (engine.rerank) becomes HiREC's passage stage; ``cross-encoder`` is the
    trained cross-encoder inside the fused ranking; ``none`` is the fused ranking alone; anything else names a
    cross-encoder as ``retrieval.reranker`` does (trained, untrained, a folder)."""
    if name in _CARD_MODES:
        overrides.setdefault("rerank", {})["mode"] = name
        return
    overrides.setdefault("rerank", {})["mode"] = "off"
    overrides.setdefault("retrieval", {})["reranker"] = "trained" if name == "cross-encoder" else name


def _library(settings: Settings):
    from engine.store import Library

    return Library(settings.library_home())


def _embedder(settings: Settings):
    from engine.models.registry import load_embedder

    return load_embedder(settings.models)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _build_lock(library: Library, what: str):
    """The library's builder lock (see :func:`engine.store.index_sets.builder_lock`), saying so while waiting."""
    from engine.store.index_sets import builder_lock

    return builder_lock(library.home, what=what, on_wait=_say)


def _sync(library, settings: Settings, embedder, *, rebuild: bool = False):
    """Build and publish the indexes (waiting for another builder first, if one is at work)."""
    from tqdm import tqdm

    from engine.indexing import sync_indexes

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage) or bars.setdefault(stage, tqdm(total=total, desc=stage, unit="item", leave=False))
        bar.n = done
        bar.refresh()

    report = sync_indexes(library, settings, embedder, rebuild=rebuild, progress=progress, on_wait=_say)
    for bar in bars.values():
        bar.close()
    if report.published:
        bm25 = "not built (too many chunks)" if report.lexical_skipped else "rebuilt" if report.lexical_rebuilt else "current"
        print(f"indexes: whole-library BM25 {bm25}, summary vectors +{report.summaries_added}"
              f"/-{report.summaries_removed}, chunk vectors +{report.chunk_vectors_added}/-{report.chunk_vectors_removed}"
              f"{'' if report.chunk_vectors_complete else ' (incomplete)'}; published {report.published} "
              f"(generation {report.generation})", file=sys.stderr)
    return report


def _open_indexes(library, settings: Settings, embedder):
    """The published indexes, read-only; one line on stderr when they lag behind the library."""
    from engine.indexing import open_indexes

    indexes = open_indexes(library, settings, embedder)
    if indexes.status.behind:
        _say(f"note: {indexes.status.message()}")
    return indexes


def cmd_ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from engine.ingest import ingest

    settings = _settings(args)
    vectors = None
    if settings.ingest.ray:  # before anything is read: without Ray, or a cluster that does not answer, say so
        from engine.ingest.cluster import VectorCache, preflight

        preflight(settings.ingest.ray)
        vectors = VectorCache()
    library = _library(settings)
    t0 = time.perf_counter()
    failed: list[str] = []

    def on_event(ev) -> None:
        bar.total = ev.total
        bar.update(1)
        if ev.status in ("failed", "skipped", "removed", "duplicate"):
            failed.append(f"  {ev.status:9s} {ev.path}: {ev.reason}")

    with _build_lock(library, "an ingest"):  # one writer at a time; a second ingest waits here
        bar = tqdm(total=0, desc="ingest", unit="file")
        report = ingest(library, args.paths, settings, prune=not args.no_prune, on_event=on_event, vectors=vectors)
        bar.close()
        read_s = time.perf_counter() - t0
        _refresh_facts(library, settings)
        embedder = _embedder(settings)
        if vectors is not None:
            from engine.ingest.cluster import CachedEmbedder

            embedder = CachedEmbedder(embedder, vectors)
        _sync(library, settings, embedder)
    if report.count("added"):
        print(f"read {report.count('added')} filing(s) in {read_s:.1f}s ({report.count('added') / read_s:.2f} filings/s"
              f"{', on Ray at ' + settings.ingest.ray if settings.ingest.ray else ''}"
              f"{f'; {embedder.hits} vectors embedded on the cluster' if vectors is not None else ''})")
    print(f"ingest: {report.summary()} in {time.perf_counter() - t0:.1f}s "
          f"({library.count('filings')} filings, {library.count('chunks')} chunks in {library.home})")
    for line in failed:
        print(line)
    return 1 if report.count("failed") and not report.count("added") and not report.count("unchanged") else 0


def _refresh_facts(library: Library, settings: Settings) -> None:
    """Read the facts of filings stored before this fact reader (an upgraded library), from their files."""
    from engine.ingest import refresh_facts

    done, problems = refresh_facts(library, settings)
    if done:
        print(f"facts: re-read the statement facts of {done} filing(s) with the current reader", file=sys.stderr)
    for line in problems:
        print(f"facts: {line}", file=sys.stderr)


def cmd_search(args: argparse.Namespace) -> int:
    from engine.retrieval.search import MetadataFilter, Searcher

    settings = _settings(args)
    library = _library(settings)
    if library.count("filings") == 0:
        print("the library is empty: run `filinglens ingest PATH` first")
        return 1
    embedder = _embedder(settings)
    searcher = Searcher(library, settings, embedder, _open_indexes(library, settings, embedder))
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

    settings = _settings(args)
    library = _library(settings)
    if library.count("facts") == 0:
        print("the library has no statement facts: run `filinglens ingest PATH` first")
        return 1
    try:
        page_index = None if args.page is None else page_index_of(args.page)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    flt = FactFilter(company=args.company, period=args.period, doc_name=args.doc, page_index=page_index)
    embedder = _embedder(settings) if args.query and not args.words_only else None
    found = search_facts(library, args.query or "", flt, embedder=embedder, k=args.k)
    for stored in found:
        print(describe(stored))
    if not found:
        print("no fact matches: try fewer filters (--company, --period, --page) or other words")
    return 0 if found else 1


def cmd_library(args: argparse.Namespace) -> int:
    library = _library(_settings(args))
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
    with _build_lock(library, "a removal"):
        n = library.remove_filings(ids)
        _sync(library, settings, _embedder(settings))
    print(f"removed {n} filing(s)")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    """``index build`` (bring the indexes to the library's generation), ``index rebuild`` (from scratch, after
    re-reading outdated facts) and ``index verify`` (exit 1 when the index lags, is torn or does not fit)."""
    settings = _settings(args)
    library = _library(settings)
    if args.index_cmd == "verify":
        from engine.indexing import verify_indexes

        result = verify_indexes(library, settings, _embedder(settings))
        for line in result.lines:
            print(line)
        for problem in result.problems:
            print(f"problem: {problem}")
        print("index: OK" if result.ok else f"index: {len(result.problems)} problem(s)")
        return 0 if result.ok else 1
    rebuild = args.index_cmd == "rebuild"
    with _build_lock(library, "an index rebuild" if rebuild else "an index build"):
        if rebuild:
            from engine.ingest import refresh_folios

            if folios := refresh_folios(library):
                print(f"pages: read the printed page numbers of {folios} filing(s) from their stored pages",
                      file=sys.stderr)
            _refresh_facts(library, settings)
        report = _sync(library, settings, _embedder(settings), rebuild=rebuild)
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


def _explain(traces: Sequence[StageTrace]) -> None:
    from engine.records import (
        AnswerPayload,
        CurationPayload,
        DocumentsPayload,
        FactsPayload,
        IntentPayload,
        PassagesPayload,
        RerankPayload,
        RewritePayload,
    )
    from engine.trace import plan_lines

    plan = plan_lines(traces)  # the reading, with the fact each leaf used (answer stages come later in the run)
    for t in traces:
        p = t.payload
        print(f"-- {t.stage} (round {t.round}, {t.seconds:.2f}s, tokens {t.tokens_in}/{t.tokens_out})")
        if isinstance(p, IntentPayload):
            it = p.intent
            print(f"   issuers={list(it.issuers)} forms={list(it.forms)} years={list(it.fiscal_years)} "
                  f"quarters={list(it.quarters)} metrics={list(it.metrics)} numeric={it.numeric}")
            for line in plan:
                print(f"   {line}")
        elif isinstance(p, RewritePayload):
            print(f"   q' = {p.rewritten}")
        elif isinstance(p, DocumentsPayload):
            print(f"   query: {p.query}\n   scorer: {p.scorer}")
            for d in p.candidates[:10]:
                print(f"   {'+' if d.kept else ' '}{d.rank:3d}. {d.doc_name:34s} score={d.score}  {d.why}")
        elif isinstance(p, PassagesPayload):
            print(f"   query: {p.query}\n   scorer: {p.scorer}")
            for c in p.candidates[:10]:
                extra = f"bm25={c.bm25} (#{c.bm25_rank}) dense={c.dense} (#{c.dense_rank})"
                if c.line_item_rank:
                    extra += f" line item #{c.line_item_rank}: {'; '.join(c.line_items)}"
                where = cite(c.doc_name, c.page_index, c.printed_folio)
                print(f"   {'+' if c.kept else ' '}{c.rank:3d}. {where:34s} score={c.final}  {extra}")
        elif isinstance(p, RerankPayload):
            print(f"   {p.mode} (seed {p.seed}): {p.stage1} of {p.n_chunks} chunks by BM25, {p.finalists} finalists, "
                  f"{len(p.groups)} model calls" + (f", {p.rounds} bootstrap rounds: {p.stop}" if p.rounds else ""))
            print(f"   intent: {'; '.join(p.intent_fields)}\n   cards: {p.cards}")
            for line in p.intent_pass:
                if not line.startswith("model added "):  # the intent line lists what was added
                    print(f"   intent pass: {line}")
            for r in p.rows[:10]:
                terms = [f"bm25 #{r.stage1_rank}"] + [f"{k} {v}" for k, v in (
                    ("screen", r.screen_score), ("borda", r.borda), ("judge #", r.listwise_rank), ("elo", r.elo))
                    if v is not None]
                print(f"   {'+' if r.kept else ' '}{r.rank:3d}. {cite(r.doc_name, r.page_index, r.printed_folio):34s} "
                      f"{' · '.join(terms)} · align {r.align} ({r.align_terms})"
                      + (f"\n         matched: {'; '.join(r.matched)}" if r.matched else "")
                      + (f"\n         moved: {r.moved}" if r.moved else ""))
            for f in p.fallbacks:
                print(f"   fallback: {f}")
        elif isinstance(p, CurationPayload):
            print(f"   shown: {'; '.join(cite(s.doc_name, s.page_index, s.printed_folio) for s in p.shown)}")
            print(f"   kept {len(p.kept)}, dropped {len(p.dropped)}, answerable={p.answerable}")
            if p.complementary_question:
                print(f"   missing: {p.missing_information}\n   complementary question: {p.complementary_question}")
        elif isinstance(p, FactsPayload):
            print(f"   {p.company} FY{p.fiscal_year}: {p.formula}" + (f"\n   complementary question: {p.query}"
                                                                     if p.query else ""))
            for i in p.inputs:
                print(f"   {i.variable} = {i.item}: {i.describe()}")
            for gap in p.gaps:
                print(f"   missing: {gap}")
        elif isinstance(p, AnswerPayload):
            a = p.answer
            if a.program:
                print("   program:\n" + "\n".join("     " + ln for ln in a.program.splitlines()))
                print(f"   computed: {a.computed.value if a.computed else None}")
            if a.reasoning:
                print(f"   reasoning: {a.reasoning}")
        for call in t.llm_calls:
            if call.error:
                print(f"   model call failed: {call.error}")


def _print_run(library, run_id: str, explain: bool) -> None:
    from engine.trace import read_run

    run = read_run(library, run_id)
    a = run.answer
    print(f"Q: {run.question}")
    print(f"A: {(a.text if a else '') or '(no answer)'}   [{run.status}]")
    if a and a.reason:
        print(f"   note: {a.reason}")
    for c in a.citations if a else ():
        print(f"   [{c.passage_id}] {cite(c.doc_name, c.page_index, c.printed_folio)} ({c.title})")
    if run.cost:
        cost = run.cost
        print(f"run {run.id}: {cost.seconds}s (retrieval {cost.retrieval_seconds}s), "
              f"{cost.tokens_in} tokens in / {cost.tokens_out} out, {cost.llm_calls} model calls")
    if explain:
        _explain(run.traces)


def _no_chat_note(error: str | None) -> None:
    """A chat model that cannot be loaded does not stop a run: questions the statement facts answer need none."""
    if error:
        print(f"note: no chat model, so only questions the statement facts answer can be answered: {error}",
              file=sys.stderr)


def load_pipeline(settings: Settings, library):
    """Models and the published indexes for answering (:func:`engine.pipeline.build_pipeline`); a chat model that
    cannot be loaded is reported here and by the run, not raised. Never writes an index: one that lags behind the
    library is used as it is, with a note on stderr."""
    from engine.pipeline import build_pipeline, load_models

    models = load_models(settings, chat_required=False)
    _no_chat_note(models.chat_error)
    return build_pipeline(settings, library, models, _open_indexes(library, settings, models.embedder))


def cmd_ask(args: argparse.Namespace) -> int:
    settings = _settings(args)
    library = _library(settings)
    pipeline = load_pipeline(settings, library)
    run = None
    for item in pipeline.run_iter(args.question):
        if isinstance(item, StageTrace):
            print(f"  ... {item.stage} (round {item.round}) {item.seconds:.1f}s", file=sys.stderr)
        else:
            run = item
    assert run is not None
    _print_run(library, run.id, args.explain)
    return 0 if run.status in ("answered", "not_answerable") else 1


def cmd_runs(args: argparse.Namespace) -> int:
    import json

    from engine.store.library import RunStore
    from engine.trace import outcome_from_json

    library = _library(_settings(args))
    if args.runs_cmd == "delete":
        store = RunStore(library)
        ids = [store.get(rid)["id"] for rid in args.run_ids]  # whole ids, so a typo fails before anything goes
        print(f"deleted {store.delete(ids)} run(s)")
        return 0
    if args.runs_cmd == "show":
        _print_run(library, args.run_id, explain=True)
        return 0
    for r in RunStore(library).list(args.limit):
        answer_rec, _ = outcome_from_json(json.loads(r["result"] or "{}"))
        answer = answer_rec.text if answer_rec else ""
        print(f"{r['id']}  {r['started_at']}  {r['status']:14s} {r['question'][:60]:60s}  -> {answer[:40]}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from engine.export import export_run, write_export
    from engine.store.library import RunStore

    library = _library(_settings(args))
    ids = [RunStore(library).get(rid)["id"] for rid in args.run_ids]
    if not args.output:
        if len(ids) > 1:
            raise ConfigError("several runs need -o FOLDER (one file per run)")
        sys.stdout.write(export_run(library, ids[0], args.format))
        return 0
    for path in write_export(library, ids, args.format, Path(args.output)):
        print(f"wrote {path}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from engine.eval.questions import load_questions
    from engine.eval.report import markdown
    from engine.eval.runner import ANSWERING, NEEDS_CHAT, PIPELINES, Evaluator, evaluate, rejudge

    if args.compare:
        from engine.eval.compare import compare_runs

        print(compare_runs(Path(args.compare[0]), Path(args.compare[1])))
        return 0
    if not args.questions:
        print("eval needs --questions FILE (or --compare A B)", file=sys.stderr)
        return 2
    settings = _settings(args)
    library = _library(settings)
    pipelines = [p.strip() for p in args.pipelines.split(",") if p.strip()]
    unknown = [p for p in pipelines if p not in PIPELINES]
    if unknown:
        print(f"unknown pipeline(s) {', '.join(unknown)}; known: {', '.join(PIPELINES)}", file=sys.stderr)
        return 2
    names = [f.identity.doc_name for f in library.filings()]
    questions = load_questions(Path(args.questions), documents=Path(args.documents) if args.documents else None,
                               doc_names=names)[: args.limit or None]
    from engine.pipeline import load_models

    models = load_models(settings, chat=any(p in NEEDS_CHAT for p in pipelines), chat_required=False)
    _no_chat_note(models.chat_error)
    evaluator = Evaluator(library, settings, models, _open_indexes(library, settings, models.embedder))
    out = Path(args.out)
    bar = tqdm(total=len(questions) * len(pipelines), desc="eval", unit="q")

    def progress(done: int, total: int, name: str) -> None:
        bar.set_postfix_str(name)
        bar.n = done
        bar.refresh()

    if args.rejudge:
        if not (out / "results.jsonl").exists():
            print(f"--rejudge: no results.jsonl in {out}", file=sys.stderr)
            return 2
        bar.reset(total=len(questions) * sum(p in ANSWERING for p in pipelines))
        changed = rejudge(evaluator, questions, out, progress)
        bar.close()
        print(f"rejudged the stored answers in {out}: {changed} verdict(s) changed")
        bar = tqdm(total=len(questions) * len(pipelines), desc="eval", unit="q")
    got = evaluate(evaluator, questions, pipelines, out, Path(args.questions).name, progress)
    bar.close()
    summary, title, missing, plots = got.summary, got.title, got.missing, got.plots
    print(markdown(summary, [], title).split("Pages in results.json")[0])
    if missing:
        print(f"{len(missing)} question(s) name a gold filing that is not in the library; report.md repeats the "
              "table without them")
    print(f"plots: {', '.join(p.name for p in plots)}")
    print(f"report: {out / 'report.md'}, rows: {out / 'results.json'}")
    return 0


def cmd_querygen(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from engine.pipeline import load_models
    from engine.querygen import QueryGenerator, select_filings

    settings = _settings(args)
    library = _library(settings)
    filings = select_filings(library, args.filings)
    if not filings:
        print(f"no filing matches {args.filings!r} (see `filinglens library`)", file=sys.stderr)
        return 2
    models = load_models(settings)
    assert models.chat is not None
    gen = QueryGenerator(library, settings, models.chat, models.embedder, threshold=args.threshold)
    bar = tqdm(desc="querygen", unit="item")

    def progress(what: str, step: int, total: int) -> None:
        bar.total = total
        bar.n = step
        bar.set_postfix_str(what[:40])
        bar.refresh()

    out = Path(args.out)
    summary = gen.run(filings, args.single, args.multi, args.seed, out, progress=progress)
    bar.close()
    print("\n".join(summary.lines()))
    print(f"questions: {out} · review: {out.with_suffix('.review.csv')}, {out.with_suffix('.review.md')}")
    return 0


def cmd_train_reranker(args: argparse.Namespace) -> int:
    import json

    from tqdm import tqdm

    from engine.models.registry import default_reranker_run_dir, register_reranker
    from engine.train import excluded_docs_from_questions, train_reranker

    settings = _settings(args)
    library = _library(settings)
    exclude: frozenset[str] = frozenset()
    for path in args.exclude_eval or []:
        exclude |= excluded_docs_from_questions(Path(path), library)
    out = Path(args.out) if args.out else default_reranker_run_dir(settings.library_home())
    mined_bar = tqdm(desc="mine pairs", unit="example")
    bar = None

    def mined(done: int, total: int) -> None:
        mined_bar.total = total
        mined_bar.n = done
        mined_bar.refresh()

    def progress(step: int, total: int, eta: float) -> None:
        nonlocal bar
        if bar is None:
            mined_bar.close()
            bar = tqdm(desc="train reranker", unit="step")
        bar.total = total
        bar.n = step
        bar.set_postfix_str(f"ETA {eta / 60:.1f} min")
        bar.refresh()

    writer = None
    if args.llm_questions > 0:
        from engine.models.registry import load_chat_model

        writer = load_chat_model(settings.models, settings.library_home())
    report = train_reranker(library, settings, out, pairs=args.pairs, epochs=args.epochs, device=args.device,
                            max_length=args.max_length, batch_size=args.batch_size, lr=args.lr, head_lr=args.head_lr,
                            pos_weight=args.pos_weight, exclude_docs=exclude, writer=writer,
                            llm_share=args.llm_questions, progress=progress, mining_progress=mined)
    for b in (mined_bar, bar):
        if b is not None:
            b.close()
    print(json.dumps({k: v for k, v in report.__dict__.items() if k not in ("before", "after")}, default=str, indent=1))
    print(f"held-out before: {report.before}\nheld-out after:  {report.after}")
    if report.completed and report.model_dir is not None and not args.no_register:
        register_reranker(settings.library_home(), report.model_dir)
        print(f"registered {report.model_dir} as the default reranker (use it with --reranker trained)")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """Check the installation and the library; exit 1 when something needs fixing (see :mod:`engine.doctor`)."""
    from engine.doctor import run_doctor

    report = run_doctor(_settings(args), verify_hashes=args.verify_hashes, repair=args.repair, say=_say)
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


def cmd_quickstart(args: argparse.Namespace) -> int:
    """The README's main job: build the fictional demo corpus, ingest it, search it, answer a question."""
    import json

    settings = _settings(args)
    home = settings.library_home()
    demo = home / "demo-corpus"
    if not (demo / "documents.jsonl").exists():
        args.out, args.filings, args.seed, args.html_every = str(demo), 24, 0, 6
        cmd_demo_corpus(args)
    args.paths, args.no_prune = [str(demo)], False
    cmd_ingest(args)
    truth = [json.loads(line) for line in (demo / "truth.jsonl").open()]
    fact = next(f for f in truth if f["form"] == "10-K" and f["metric"] == "Total revenue"
                and f["fiscal_year_column"] == f["period"])
    question = args.question or f"What was {fact['company']}'s total revenue in fiscal {fact['period']}, in USD millions?"
    args.query, args.k, args.mode, args.issuer, args.form, args.period = question, 5, "fused", None, None, None
    print(f"\nsearch: {question}")
    cmd_search(args)
    print(f"\nask: {question}")
    args.question, args.explain = question, False
    status = cmd_ask(args)
    print(f"(the demo corpus's true value: {fact['value']:,.0f} USD millions, "
          f"{cite(fact['doc_name'], fact['page_index'])})")
    return status


Command = tuple[str, str, Callable[[argparse.Namespace], int]]


def build_parser(extra_commands: Sequence[Command] = ()) -> argparse.ArgumentParser:
    """The CLI; ``extra_commands`` lets a front end (the desktop app's launcher) add its own subcommands,
    so the engine never imports the GUI."""
    p = argparse.ArgumentParser(prog="filinglens", description="Offline question answering over SEC filings.")
    p.add_argument("--home", type=Path, help="library folder (default: $FILINGLENS_HOME or the user data dir)")
    p.add_argument("--preset", default="default", help="settings preset name or JSON file")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v: progress notes and libraries' warnings; -vv: debug lines")
    sub = p.add_subparsers(dest="cmd", required=True)

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

    s = sub.add_parser("models", help="install or list local models")
    msub = s.add_subparsers(dest="models_cmd", required=True)
    m = msub.add_parser("install")
    m.add_argument("name")
    m.add_argument("--allow-unverified", action="store_true")
    msub.add_parser("list", help="the model packs, installed or not (hashes as recorded; nothing is read)")
    msub.add_parser("verify", help="read every installed model file again and check its sha256")
    s.set_defaults(func=cmd_models)

    s = sub.add_parser("ask", help="answer a question from the library with page-level evidence")
    s.add_argument("question")
    s.add_argument("--explain", action="store_true", help="print the stage-by-stage trace")
    s.add_argument("--model", help="chat model pack name or path to any GGUF file")
    s.add_argument("--gpu-layers", type=int, help="layers llama.cpp offloads to the GPU (-1 = all)")
    s.add_argument("--reranker", help="the passage stage: tournament | tournament-s2 | multiagent | cards (evidence "
                   "cards, engine.rerank) | cross-encoder (the trained one) | none | untrained | path to a "
                   "CrossEncoder folder")
    s.add_argument("--seed", dest="rerank_seed", type=int, help="seed of the tournament's bootstrap groups")
    s.add_argument("--model-intent", action="store_true", help="with a card-based --reranker: a model pass over the "
                   "question's intent before the cards are matched (checked; the trace lists what it added)")
    s.set_defaults(func=cmd_ask)

    s = sub.add_parser("runs", help="past runs and their traces")
    rsub = s.add_subparsers(dest="runs_cmd", required=True)
    r = rsub.add_parser("list")
    r.add_argument("--limit", type=int, default=30)
    r = rsub.add_parser("show")
    r.add_argument("run_id")
    r = rsub.add_parser("delete", help="delete runs and their traces")
    r.add_argument("run_ids", nargs="+")
    s.set_defaults(func=cmd_runs)

    s = sub.add_parser("export", help="export runs' evidence sets and traces (reports with page snapshots)")
    s.add_argument("run_ids", nargs="+", metavar="run_id")
    s.add_argument("--format", choices=["json", "csv", "md", "html"], default="json")
    s.add_argument("-o", "--output", help="file (one run) or folder (one file per run); md/html get page snapshots")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("eval", help="evaluate pipelines on a question file (paper metrics, side by side)")
    s.add_argument("--questions", help="JSONL: FinanceBench, Docugami or FilingLens format")
    s.add_argument("--compare", nargs=2, metavar=("A", "B"), help="diff two result folders question by question")
    s.add_argument("--pipelines", default="bm25,hybrid,hirec-retrieval",
                   help="comma-separated: bm25,dense,hybrid,hirec-retrieval,hirec,hirec-model,dense-answer")
    s.add_argument("--limit", type=int, default=0)
    s.add_argument("--out", default="eval-out")
    s.add_argument("--documents", help="documents.jsonl with titles (resolves Docugami globs)")
    s.add_argument("--model", help="chat model pack name or GGUF path for answering pipelines")
    s.add_argument("--rejudge", action="store_true",
                   help="score the answers stored in --out again (numeric matcher, yes/no side, judge model) "
                        "without re-running the pipelines, then rewrite the report")
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("querygen", help="generate a test question set from the library's filings (single- and "
                                        "multi-document, judged for answerability)")
    s.add_argument("--filings", help="comma-separated doc names, globs (3M_*) or tickers; default: every filing")
    s.add_argument("--single", type=int, default=20, help="single-document questions to generate (one per passage)")
    s.add_argument("--multi", type=int, default=10, help="multi-document questions to generate")
    s.add_argument("--seed", type=int, default=0, help="seeds the passage and group sampling")
    s.add_argument("--threshold", type=int, default=4, choices=range(1, 6),
                   help="lowest answerability score (1-5) a kept question has")
    s.add_argument("--out", default="generated.jsonl", help="the question set (JSONL that `eval --questions` reads); "
                   "a re-run with the same --out resumes")
    s.add_argument("--model", help="chat model pack name or GGUF path")
    s.set_defaults(func=cmd_querygen)

    s = sub.add_parser("train-reranker", help="train a cross-encoder on pairs mined from the library")
    s.add_argument("--pairs", type=int, default=2000, help="examples to mine (each: 1 positive + 8 negatives)")
    s.add_argument("--epochs", type=int, default=1)
    s.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    s.add_argument("--max-length", type=int, default=256)
    s.add_argument("--batch-size", type=int, default=16)
    s.add_argument("--lr", type=float, default=2e-5)
    s.add_argument("--head-lr", type=float, default=None, help="learning rate of the fresh scoring head")
    s.add_argument("--pos-weight", type=float, default=1.0, help="BCE weight of positives (1 = HiREC's plain BCE)")
    s.add_argument("--exclude-eval", action="append", help="question file whose filings are never mined (repeatable)")
    s.add_argument("--llm-questions", type=float, default=0.0, metavar="SHARE",
                   help="fraction of mined questions the chat model rewords in an analyst's words (0-1; "
                   "one model call each)")
    s.add_argument("--out", help="output folder (default: <library>/models/reranker-trained)")
    s.add_argument("--no-register", action="store_true")
    s.set_defaults(func=cmd_train_reranker)

    s = sub.add_parser("doctor", help="check the installation and the library and say what to fix (exit 1 if anything)")
    s.add_argument("--verify-hashes", action="store_true", help="read every model file again for its sha256")
    s.add_argument("--repair", action="store_true",
                   help="delete orphan rows, rebuild a torn facts full-text index, settle interrupted runs")
    s.set_defaults(func=cmd_doctor)

    s = sub.add_parser("quickstart", help="demo: generate the fictional corpus, ingest it and search it")
    s.add_argument("--question", help="question to ask (default: one about the demo corpus with a known answer)")
    s.add_argument("--model", help="chat model pack name or path to any GGUF file")
    s.set_defaults(func=cmd_quickstart)

    for name, help_text, func in extra_commands:
        s = sub.add_parser(name, help=help_text)
        s.set_defaults(func=func, passes_options=True)  # its own options go to the front end as ``extra``
    return p


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The settings the global options (--home, --preset) select: for front ends adding commands."""
    return _settings(args)


def main(argv: list[str] | None = None, extra_commands: Sequence[Command] = ()) -> int:
    parser = build_parser(extra_commands)
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


if __name__ == "__main__":
    sys.exit(main())
