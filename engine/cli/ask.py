"""Questions and their runs: ``ask``, ``runs`` and ``export``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cli.common import open_session, settings_from_args
from engine.errors import ConfigError
from engine.pages import cite
from engine.records import StageTrace

if TYPE_CHECKING:
    from engine.session import Session


def _print_run(session: Session, run_id: str, explain: bool) -> None:
    from engine.trace import explain_lines

    run = session.read_run(run_id)
    a = run.answer
    print(f"Q: {run.question}")
    first = bool(a and a.reason and run.status == "answered")  # how the question was taken, before the answer
    if first and a:
        print(f"   note: {a.reason}")
    print(f"A: {(a.text if a else '') or '(no answer)'}   [{run.status}]")
    if a and a.reason and not first:
        print(f"   note: {a.reason}")
    if a and a.quotes:  # a written answer: its synthesis cites the quotes, each printed on its page
        print("   quotes:")
        for q in a.quotes:
            where = cite(q.doc_name, q.page_index, q.printed_folio) + (f", {q.section}" if q.section else "")
            print(f"   [{q.number}] “{' '.join(q.text.split())}” — {where}")
    else:
        for c in a.citations if a else ():
            print(f"   [{c.passage_id}] {cite(c.doc_name, c.page_index, c.printed_folio)} ({c.title})")
    if run.cost:
        cost = run.cost
        load = f", loading the chat model {cost.model_load_seconds}s" if cost.model_load_seconds else ""
        print(f"run {run.id}: {cost.seconds}s (retrieval {cost.retrieval_seconds}s{load}), "
              f"{cost.tokens_in} tokens in / {cost.tokens_out} out, {cost.llm_calls} model calls")
    if explain:
        for line in explain_lines(run.traces):
            print(line)


def cmd_ask(args: argparse.Namespace) -> int:
    """Answer with the session's question path: a chat model that cannot be loaded is a note and is said by the
    run, not raised; the indexes are only read (one that lags behind the library is used as it is, with a note)."""
    session = open_session(settings_from_args(args))
    pipeline = session.pipeline()
    run = None
    for item in pipeline.run_iter(args.question):
        if isinstance(item, StageTrace):
            print(f"  ... {item.stage} (round {item.round}) {item.seconds:.1f}s", file=sys.stderr)
        else:
            run = item
    assert run is not None
    _print_run(session, run.id, args.explain)
    return 0 if run.status in ("answered", "not_answerable") else 1


def cmd_runs(args: argparse.Namespace) -> int:
    import json

    from engine.trace import outcome_from_json

    session = open_session(settings_from_args(args))
    if args.runs_cmd == "delete":
        store = session.runs
        ids = [store.get(rid)["id"] for rid in args.run_ids]  # whole ids, so a typo fails before anything goes
        print(f"deleted {store.delete(ids)} run(s)")
        return 0
    if args.runs_cmd == "link-evaluation":
        for folder in args.folders:
            if not (Path(folder) / "results.jsonl").is_file():
                raise ConfigError(f"{folder} is not an evaluation's results folder (it has no results.jsonl)")
        for folder in args.folders:
            n = session.link_evaluation(Path(folder))
            print(f"{folder}: {n} run(s) filed under this evaluation" if n else
                  f"{folder}: its runs were already filed under it")
        return 0
    if args.runs_cmd == "show":
        _print_run(session, args.run_id, explain=True)
        return 0
    for r in session.runs.list(args.limit):
        answer_rec, _ = outcome_from_json(json.loads(r["result"] or "{}"))
        answer = answer_rec.text if answer_rec else ""
        print(f"{r['id']}  {r['started_at']}  {r['status']:14s} {r['question'][:60]:60s}  -> {answer[:40]}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from engine.export import export_run, write_export

    session = open_session(settings_from_args(args))
    library = session.library
    ids = [session.runs.get(rid)["id"] for rid in args.run_ids]
    if not args.output:
        if len(ids) > 1:
            raise ConfigError("several runs need -o FOLDER (one file per run)")
        sys.stdout.write(export_run(library, ids[0], args.format))
        return 0
    for path in write_export(library, ids, args.format, Path(args.output)):
        print(f"wrote {path}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands to the CLI's sub-parsers."""
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
    r = rsub.add_parser("link-evaluation", help="file the runs an evaluation stored under it (History lists them "
                        "with that evaluation, not with your questions); for results made before runs named their "
                        "evaluation")
    r.add_argument("folders", nargs="+", metavar="RESULTS_FOLDER", help="an evaluation's output folder (results.jsonl)")
    s.set_defaults(func=cmd_runs)

    s = sub.add_parser("export", help="export runs' evidence sets and traces (reports with page snapshots)")
    s.add_argument("run_ids", nargs="+", metavar="run_id")
    s.add_argument("--format", choices=["json", "csv", "md", "html"], default="json")
    s.add_argument("-o", "--output", help="file (one run) or folder (one file per run); md/html get page snapshots")
    s.set_defaults(func=cmd_export)
