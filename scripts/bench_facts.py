"""Statement-fact extraction on a real library: coverage of FinanceBench evidence figures, facts per filing,
extraction time per page, and a random sample of facts to check by hand.

    .venv/bin/python scripts/bench_facts.py --home /tmp/fl-shared --questions ../shared/eval/financebench_dev.jsonl

Coverage: for each evidence span (``evidence_text``) of a question whose gold page is in the library and that
reads as a table (at least six figures), the share of its figures that come back as a fact on the gold page,
and the share that come back with a stated period (high confidence). Figures are the span's numbers that are
not years.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.eval.questions import load_questions  # noqa: E402
from engine.facts.numbers import NUMBER, parse_number  # noqa: E402
from engine.facts.tables import extract_page_facts  # noqa: E402
from engine.store import Library  # noqa: E402

_YEAR = re.compile(r"^\(?(?:19|20)\d\d\)?$")


def figures(text: str) -> list[float]:
    out = []
    for tok in NUMBER.findall(text):
        tok = tok.strip()
        digits = re.sub(r"[^\d.]", "", tok)
        if _YEAR.match(tok) or len(digits.replace(".", "")) < 2:
            continue  # years, footnote marks, single digits (page numbers, note numbers)
        value = parse_number(tok)
        if value is not None:
            out.append(abs(value))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    library = Library(args.home)

    # every page of every filing: facts, time
    t0 = time.perf_counter()
    n_pages = 0
    per_filing: dict[str, list] = {}
    for f in library.filings():
        facts = []
        for p in range(f.n_pages):
            facts += [(p, x) for x in extract_page_facts(library.page_text(f.id, p), p)]
        n_pages += f.n_pages
        per_filing[f.identity.doc_name] = facts
    seconds = time.perf_counter() - t0
    counts = sorted(len(v) for v in per_filing.values())
    all_facts = [x for v in per_filing.values() for _, x in v]
    print(f"{len(per_filing)} filings, {n_pages} pages: {len(all_facts)} facts in {seconds:.1f} s "
          f"({1000 * seconds / max(n_pages, 1):.2f} ms per page); facts per filing median {counts[len(counts) // 2]}, "
          f"min {counts[0]}, max {counts[-1]}; low confidence {sum(x.confidence == 'low' for x in all_facts)}")
    print("statements:", dict(Counter(x.statement for x in all_facts).most_common()))

    # coverage of the evidence figures
    names = {f.identity.doc_name: f for f in library.filings()}
    spans = found = dated = 0
    n_figs = 0
    for q in load_questions(args.questions):
        for doc, page, text in q.evidence:
            f = names.get(doc)
            figs = figures(text)
            if f is None or page >= f.n_pages or len(figs) < 6:
                continue
            spans += 1
            facts = [x for p, x in per_filing[doc] if p == page]
            values = {round(abs(x.value), 4) for x in facts}
            high = {round(abs(x.value), 4) for x in facts if x.confidence == "high"}
            n_figs += len(figs)
            found += sum(round(v, 4) in values for v in figs)
            dated += sum(round(v, 4) in high for v in figs)
    print(f"coverage: {spans} table-like evidence spans, {n_figs} figures: {found / max(n_figs, 1):.1%} come back as "
          f"a fact on the gold page, {dated / max(n_figs, 1):.1%} with a stated period")

    # a sample to check by hand: up to 5 facts from each of 10 issuers
    rng = random.Random(args.seed)
    issuers: dict[str, list] = {}
    for doc, facts in per_filing.items():
        issuers.setdefault(doc.split("_")[0], []).extend((doc, p, x) for p, x in facts)
    chosen = rng.sample(sorted(k for k, v in issuers.items() if v), min(10, len(issuers)))
    print(f"\nsample of {args.sample} facts from {len(chosen)} issuers (check label, period, value, scale on the page):")
    per = max(1, args.sample // max(len(chosen), 1))
    for issuer in chosen:
        for doc, p, x in rng.sample(issuers[issuer], min(per, len(issuers[issuer]))):
            print(f"  {doc} p.{p}  [{x.statement}] {x.parent + ' › ' if x.parent else ''}{x.label} | {x.period.label} | "
                  f"{x.printed} -> {x.value:g} {x.scale or ''} {x.unit} {'(low)' if x.confidence == 'low' else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
