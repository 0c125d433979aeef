"""Statement facts of a real library: what ingest stored (facts per filing, confidence, concepts, boxes), the
table reader's time per page, coverage of FinanceBench evidence figures, and a random sample to check by hand.

    .venv/bin/python scripts/bench_facts.py --home /tmp/fl-shared --questions ../shared/eval/financebench_dev.jsonl

Coverage: for each evidence span (``evidence_text``) of a question whose gold page is in the library and that
reads as a table (at least six figures), the share of its figures that come back as a stored fact on the gold
page, and the share that come back with a stated period (high confidence); once over the statement-metric
questions (FinanceBench's "metrics-generated": their evidence is a financial statement) and once over every
table-like span. Figures are the span's printed numbers that are not years or the day of a date."""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.eval.questions import load_questions
from engine.facts.tables import extract_facts
from engine.pages import cite
from engine.store import Library
from engine.vocab.numbers import NUMBER, parse_number

_YEAR = re.compile(r"^\(?(?:19|20)\d\d\)?$")


_DAY = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*$", re.IGNORECASE)


def figures(text: str) -> list[float]:
    """The span's printed figures: not years, not the day of a date ("December 31"), not footnote marks."""
    out = []
    for m in NUMBER.finditer(text):
        tok = m[0].strip().rstrip(":;,.")
        digits = re.sub(r"[^\d.]", "", tok)
        if _YEAR.match(tok) or len(digits.replace(".", "")) < 2 or _DAY.search(text[max(0, m.start() - 12):m.start()]):
            continue  # years, days of dates, footnote marks, single digits (page numbers, note numbers)
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
    ap.add_argument("--misses", action="store_true", help="print each missed figure with the page line it is on")
    args = ap.parse_args()
    library = Library(args.home)

    # every page of every filing: the facts ingest stored; the reader's time per page, read again here
    t0 = time.perf_counter()
    n_pages = 0
    for f in library.filings():
        extract_facts([library.page_text(f.id, p) for p in range(f.n_pages)], form=f.identity.form)
        n_pages += f.n_pages
    seconds = time.perf_counter() - t0
    per_filing: dict[str, list] = {f.identity.doc_name: [] for f in library.filings()}
    for stored in library.facts():
        per_filing[stored.doc_name].append((stored.fact.page_index, stored.fact))
    counts = sorted(len(v) for v in per_filing.values())
    all_facts = [x for v in per_filing.values() for _, x in v]
    db = args.home / "library.sqlite3"
    print(f"{len(per_filing)} filings, {n_pages} pages: {len(all_facts)} facts stored; the table reader takes "
          f"{seconds:.1f} s ({1000 * seconds / max(n_pages, 1):.2f} ms per page); facts per filing median "
          f"{counts[len(counts) // 2]}, min {counts[0]}, max {counts[-1]}; low confidence "
          f"{sum(x.confidence == 'low' for x in all_facts)}; with a concept {sum(x.concept is not None for x in all_facts)}"
          f"; from inline XBRL {sum(x.source == 'xbrl' for x in all_facts)}; with a cell box "
          f"{sum(x.box is not None for x in all_facts)}; library database {db.stat().st_size / 2**20:.0f} MiB")
    print("statements:", dict(Counter(x.statement for x in all_facts).most_common()))

    # coverage of the evidence figures: over statement-metric questions (FinanceBench's "metrics-generated": the
    # evidence is a financial statement by construction) and over every table-like span (six figures or more)
    names = {f.identity.doc_name: f for f in library.filings()}
    for subset, keep in (("statement-metric questions", lambda q: q.qtype == "metrics-generated"),
                         ("all table-like evidence", lambda q: True)):
        spans = found = dated = n_figs = 0
        for q in load_questions(args.questions):
            if not keep(q):
                continue
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
                if args.misses:
                    lines = library.page_text(f.id, page).split("\n")
                    for v in figs:
                        if round(v, 4) not in high:
                            where = next((ln for ln in lines if any(abs(abs(x) - v) < 1e-9 for x in figures(ln))), "?")
                            kind = "no fact" if round(v, 4) not in values else "no period"
                            print(f"  MISS {kind} {q.qid} {cite(doc, page)} {v:g}: {where.strip()[:150]}")
        print(f"coverage, {subset}: {spans} spans, {n_figs} figures: {found / max(n_figs, 1):.1%} come back as a fact "
              f"on the gold page, {dated / max(n_figs, 1):.1%} with a stated period")

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
            print(f"  {cite(doc, p)}  [{x.statement}] {x.parent + ' › ' if x.parent else ''}{x.label} | "
                  f"{x.period.label} | {x.printed} -> {x.value:g} {x.scale or ''} {x.unit} "
                  f"{'(low)' if x.confidence == 'low' else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
