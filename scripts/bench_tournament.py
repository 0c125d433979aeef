"""The card rankers side by side inside the question's own filing: quality, model calls, tokens and seconds per
stage. Prints figures; asserts nothing.

    python scripts/bench_tournament.py --home /tmp/fl-shared --n 30 --seed 0 --out /tmp/bench-tournament \\
        [--pipelines wf-fused wf-cards wf-tournament-s2 wf-tournament wf-multiagent] [--set rerank.max_calls=12]

The sample: ``--n`` questions of the question file (default ../shared/eval/financebench_dev.jsonl) whose gold
filings are all in the library, drawn with ``random.Random(seed)``; written to ``<out>/questions.jsonl`` and
run through the evaluation's within-filing pipelines (``engine.eval.runner``: every chunk of the gold filing
ranked, graded against the annotated evidence), which append to ``<out>/results.jsonl`` as they finish — a run
cut short resumes where it stopped. Run it alone on the machine: figures taken beside other work are not
figures.

Per pipeline: nDCG@10, MAP@10, MRR@10, model calls, prompt tokens (and how many the prefix cache served), output
tokens, p50/p95 seconds a question and the mean rank variance of Stage 3 (FinCards' measure; tournament only).
Per model stage (screen, bootstrap, pick, judge, referee): calls, tokens and seconds a question.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.session import Session  # noqa: E402
from engine.settings import Settings  # noqa: E402

DEFAULT = ("wf-fused", "wf-cards", "wf-tournament-s2", "wf-tournament", "wf-multiagent")


def sample(questions: Path, doc_names: set[str], n: int, seed: int, out: Path) -> Path:
    rows = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    usable = [r for r in rows if r.get("evidence") and all(e["doc_name"] in doc_names for e in r["evidence"])]
    picked = sorted(random.Random(seed).sample(usable, min(n, len(usable))), key=lambda r: rows.index(r))
    path = out / "questions.jsonl"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in picked), encoding="utf-8")
    print(f"sample: {len(picked)} of {len(usable)} questions whose gold filings are loaded (seed {seed})")
    return path


def overrides(pairs: list[str]) -> dict:
    out: dict = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        section, _, name = key.partition(".")
        out.setdefault(section, {})[name] = json.loads(value) if value[:1] in "0123456789-[{tf" else value
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))] if values else 0.0


def report(out: Path, pipelines: list[str]) -> None:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    print(f"\n{'pipeline':18} {'n':>3} {'nDCG@10':>8} {'MAP@10':>7} {'MRR@10':>7} {'calls':>6} {'tok in':>7} "
          f"{'cached':>7} {'tok out':>7} {'p50 s':>7} {'p95 s':>7} {'rank var':>8}")
    for p in pipelines:
        got = [r for r in rows if r["pipeline"] == p and r.get("status") != "skipped"]
        if not got:
            continue
        n = len(got)

        def mean(key: str) -> float:
            return sum(float(r.get(key) or 0) for r in got) / n

        rv = [r["rank_variance"] for r in got if r.get("rank_variance") is not None]
        secs = [float(r.get("seconds") or 0) for r in got]
        print(f"{p:18} {n:3d} {mean('ndcg@10'):8.3f} {mean('map@10'):7.3f} {mean('mrr@10'):7.3f} "
              f"{mean('llm_calls'):6.1f} {mean('tokens_in'):7.0f} {mean('tokens_cached'):7.0f} "
              f"{mean('tokens_out'):7.0f} {pct(secs, 50):7.1f} {pct(secs, 95):7.1f} "
              f"{(statistics.mean(rv) if rv else float('nan')):8.4f}")
        stages: dict[str, list[float]] = {}
        for r in got:
            for purpose, vals in (r.get("stages") or {}).items():
                acc = stages.setdefault(purpose, [0.0] * 5)
                for i, v in enumerate(vals):
                    acc[i] += v
        for purpose, (calls, tin, cached, tout, secs_) in sorted(stages.items()):
            print(f"    {purpose:22} {calls / n:5.1f} calls  {tin / n:7.0f} tok in ({cached / n:5.0f} cached)  "
                  f"{tout / n:5.0f} tok out  {secs_ / n:6.1f} s  a question; {tin / max(calls, 1):5.0f} tok a call")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--questions", type=Path,
                    default=Path(__file__).resolve().parents[2] / "shared" / "eval" / "financebench_dev.jsonl")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--pipelines", nargs="+", default=list(DEFAULT))
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                    help="a settings override for this run (repeatable)")
    ap.add_argument("--report-only", action="store_true", help="print the figures of a finished run")
    args = ap.parse_args()
    if not args.report_only:
        settings = Settings(home=args.home).with_overrides(**overrides(args.set))
        with Session(settings) as session:
            names = {f.identity.doc_name for f in session.library.filings()}
            path = sample(args.questions, names, args.n, args.seed, args.out)

            def progress(done: int, total: int, what: str) -> None:
                print(f"\r{done}/{total} {what}        ", end="", file=sys.stderr, flush=True)

            session.evaluate(path, args.pipelines, args.out, progress=progress)
    report(args.out, args.pipelines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
