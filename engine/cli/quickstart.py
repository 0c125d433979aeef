"""``quickstart``: the README's main job, from the library and question commands."""

from __future__ import annotations

import argparse

from engine.cli.ask import cmd_ask
from engine.cli.common import settings_from_args
from engine.cli.library import cmd_demo_corpus, cmd_ingest, cmd_search
from engine.pages import cite


def cmd_quickstart(args: argparse.Namespace) -> int:
    """The README's main job: build the fictional demo corpus, ingest it, search it, answer a question."""
    import json

    settings = settings_from_args(args)
    home = settings.library_home()
    demo = home / "demo-corpus"
    if not (demo / "documents.jsonl").exists():
        args.out, args.filings, args.seed, args.html_every = str(demo), 24, 0, 6
        cmd_demo_corpus(args)
    args.paths, args.no_prune = [str(demo)], False
    cmd_ingest(args)
    truth = [json.loads(line) for line in (demo / "truth.jsonl").read_text(encoding="utf-8").splitlines() if line]
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


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands to the CLI's sub-parsers."""
    s = sub.add_parser("quickstart", help="demo: generate the fictional corpus, ingest it and search it")
    s.add_argument("--question", help="question to ask (default: one about the demo corpus with a known answer)")
    s.add_argument("--model", help="chat model pack name or path to any GGUF file")
    s.set_defaults(func=cmd_quickstart)
