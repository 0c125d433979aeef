"""Evaluation: ``eval`` (pipelines on a question file, or two result folders compared) and ``querygen``
(a question set generated from the library)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cli.common import open_session, settings_from_args


def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from engine.eval.questions import load_questions
    from engine.eval.report import markdown
    from engine.eval.runner import ANSWERING, PIPELINES, evaluate, rejudge

    if args.compare:
        from engine.eval.compare import compare_runs

        print(compare_runs(Path(args.compare[0]), Path(args.compare[1])))
        return 0
    if not args.questions:
        print("eval needs --questions FILE (or --compare A B)", file=sys.stderr)
        return 2
    session = open_session(settings_from_args(args))
    pipelines = [p.strip() for p in args.pipelines.split(",") if p.strip()]
    unknown = [p for p in pipelines if p not in PIPELINES]
    if unknown:
        print(f"unknown pipeline(s) {', '.join(unknown)}; known: {', '.join(PIPELINES)}", file=sys.stderr)
        return 2
    names = [f.identity.doc_name for f in session.library.filings()]
    questions = load_questions(Path(args.questions), documents=Path(args.documents) if args.documents else None,
                               doc_names=names)[: args.limit or None]
    evaluator = session.evaluator(pipelines)
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

    from engine.querygen import select_filings

    session = open_session(settings_from_args(args))
    filings = select_filings(session.library, args.filings)
    if not filings:
        print(f"no filing matches {args.filings!r} (see `filinglens library`)", file=sys.stderr)
        return 2
    gen = session.query_generator(args.threshold)
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


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands to the CLI's sub-parsers."""
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
