"""``train-reranker``: train a cross-encoder on pairs mined from the library; ``cards``: the chat model's evidence
cards, written ahead of the questions."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.cli.common import open_session, settings_from_args


def cmd_train_reranker(args: argparse.Namespace) -> int:
    import json

    from tqdm import tqdm

    from engine.models.registry import default_reranker_run_dir, register_reranker
    from engine.train import excluded_docs_from_questions, train_reranker

    settings = settings_from_args(args)
    session = open_session(settings)
    library = session.library
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

    writer = session.models(chat_required=True).chat if args.llm_questions > 0 else None
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


def cmd_cards(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    session = open_session(settings_from_args(args))
    bar = tqdm(desc="model cards", unit="card")

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    made, calls = session.write_model_cards(args.doc or (), progress=progress)
    bar.close()
    print(f"cards: {made} written ({calls} model calls); the rankers use them with rerank.model_cards on")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands to the CLI's sub-parsers."""
    s = sub.add_parser("cards", help="write the chat model's evidence cards of narrative passages ahead of questions "
                       "(resumable; used with rerank.model_cards on)")
    s.add_argument("--doc", action="append", help="a filing's doc name (repeatable; default: every filing)")
    s.set_defaults(func=cmd_cards)
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
