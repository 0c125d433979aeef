"""The plan model on questions the grammar cannot read: right, refused, wrong, and its latency, over the fictional
demo corpus (truth from the generator's rows, formulas written here).

    .venv/bin/python scripts/bench_plan_model.py [--model qwen2.5-coder-1.5b] [--home /tmp/fl-demo]

Each question uses a wording the question reader's grammar does not know; the local model proposes a formula over
the catalogue and the engine checks and computes it (engine.answer.plan_model). A question that must be refused
asks for something the statements do not give. Prints each question's plan, answer, the expected value and the
model call's time; then the tally and the median latency of a numeric answer that needed the plan model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CO = "Harborview Therapeutics"
T = Callable[[str, int], float]


def _avg(t: T, metric: str) -> float:
    return (t(metric, 2023) + t(metric, 2022)) / 2


# (question, expected value from the generator's rows, or None: must be refused); ratios may come back as percents
CASES: list[tuple[str, Callable[[T], float] | None]] = [
    (f"What was {CO}' FY2023 capex intensity?",
     lambda t: abs(t("Capital expenditures", 2023)) / t("Total revenue", 2023)),
    (f"What is {CO}' FY2023 operating cash return on average total assets?",
     lambda t: t("Net cash provided by operating activities", 2023) / _avg(t, "Total assets")),
    (f"What was {CO}' FY2023 gross profit per dollar of revenue?",
     lambda t: t("Gross profit", 2023) / t("Total revenue", 2023)),
    (f"What share of its FY2023 net income did {CO} hand back as cash dividends?",
     lambda t: abs(t("Dividends paid", 2023)) / t("Net income", 2023)),
    (f"How many days of sales were outstanding at {CO} in FY2023?",
     lambda t: 365 * _avg(t, "Accounts receivable") / t("Total revenue", 2023)),
    (f"What was {CO}' FY2023 cash cushion over current liabilities?",
     lambda t: t("Cash and cash equivalents", 2023) / t("Total current liabilities", 2023)),
    (f"What is {CO}' FY2023 research and development intensity?", None),
    (f"What was {CO}' FY2023 revenue per employee?", None),
    (f"What is {CO}' FY2023 revenue churn retention multiple?", None),
    (f"What was {CO}' FY2023 EBITDA to customer ratio?", None),
]


def _truth(rows: list[dict]) -> T:
    def t(metric: str, year: int) -> float:
        for doc_year in (year, year + 1):
            for r in rows:
                if (r["doc_name"] == f"HRBR_{doc_year}_10K" and r["metric"] == metric
                        and r["fiscal_year_column"] == str(year)):
                    return float(r["value"])
        raise KeyError((metric, year))
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--home", help="library folder (default: a temporary one, the demo corpus ingested into it)")
    args = ap.parse_args()

    from engine.demo_corpus import generate_corpus
    from engine.ingest import ingest
    from engine.records import IntentPayload
    from engine.session import Session
    from engine.settings import Settings

    home = Path(args.home or tempfile.mkdtemp(prefix="fl-plan-"))
    corpus = home / "corpus"
    settings = Settings(home=home).with_overrides(models={"chat_model": args.model})
    session = Session(settings)
    if session.library.count("filings") == 0:
        generate_corpus(corpus, 8, seed=7, html_every=4)  # the tests' demo corpus (HRBR 10-Ks FY2022, FY2023)
        ingest(session.library, [corpus], settings)
    rows = [json.loads(line) for line in (corpus / "truth.jsonl").open()]
    session.models(chat_required=True)
    session.sync_indexes()
    pipeline = session.pipeline()
    t = _truth(rows)
    tally = {"right": 0, "wrong": 0, "abstained": 0, "refused right": 0, "answered wrongly": 0}
    seconds: list[float] = []
    for question, expected in CASES:
        started = time.perf_counter()
        run = pipeline.run(question, store=False)
        took = time.perf_counter() - started
        plans = [tr.payload.intent.plan for tr in run.traces if isinstance(tr.payload, IntentPayload)]
        plan = plans[-1]
        value = run.answer.value if run.status == "answered" else None
        if expected is None:
            outcome = "refused right" if value is None else "answered wrongly"
        elif value is None:
            outcome = "abstained"
        else:
            want = expected(t)
            outcome = "right" if any(abs(value - w) <= 5e-3 * abs(w) for w in (want, want * 100)) else "wrong"
        tally[outcome] += 1
        if len(plans) > 1:
            seconds.append(took)
        print(f"{outcome:16s} {took:6.1f}s  {question}\n{'':24s}plan ({plan.reader}, {plan.status}): "
              f"{plan.words or plan.note}\n{'':24s}answer: {run.answer.text[:160]}"
              + (f"\n{'':24s}expected: {expected(t):.4f}" if expected is not None else ""))
    print("\n" + ", ".join(f"{k} {v}" for k, v in tally.items() if v))
    if seconds:
        print(f"questions that needed the plan model: {len(seconds)}; median {statistics.median(seconds):.1f} s, "
              f"max {max(seconds):.1f} s ({args.model}, {settings.models.threads} threads)")


if __name__ == "__main__":
    main()
