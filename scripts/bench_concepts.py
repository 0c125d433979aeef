"""Label -> us-gaap concept mapping on real 10-K filings: how many statement facts get a concept, a random
sample of mapped rows to check precision by hand, and the most frequent labels left unmapped.

    .venv/bin/python scripts/bench_concepts.py --corpus ../shared/corpus/filings

Only pages whose table facts include a primary statement (``statement`` other than "table") are read, and
only facts of the income statement, balance sheet and cash-flow statement are counted. Which 10-Ks: ``--docs``
(file stems), else :data:`DEFAULT_DOCS`, one per company, of companies the synonym table was not written from.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.facts.tables import extract_page_facts
from engine.ingest.pdf import read_pdf_pages
from engine.pages import cite
from engine.records import StatementFact
from engine.vocab.concepts import concept_for

STATEMENTS = ("income statement", "balance sheet", "cash flows")
DEFAULT_DOCS = (
    "AAPL_2023_10K", "ADOBE_2022_10K", "BOEING_2022_10K", "COSTCO_2022_10K", "GENERALMILLS_2022_10K",
    "LOCKHEEDMARTIN_2022_10K", "NETFLIX_2018_10K", "PEPSICO_2022_10K", "VERIZON_2022_10K", "WALMART_2021_10K",
)


def find_pdfs(corpus: Path, docs: list[str]) -> list[Path]:
    by_stem = {p.stem: p for p in corpus.rglob("*.pdf")}
    missing = [d for d in docs if d not in by_stem]
    if missing:
        raise SystemExit(f"not under {corpus}: {', '.join(missing)}")
    return [by_stem[d] for d in docs]


def statement_facts(pdf: Path) -> list[StatementFact]:
    pages, _ = read_pdf_pages(str(pdf))
    out: list[StatementFact] = []
    for page_index, text in enumerate(pages):
        facts = extract_page_facts(text, page_index)
        if any(f.statement != "table" for f in facts):
            out += [f for f in facts if f.statement in STATEMENTS]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True, help="folder searched for <doc>.pdf (recursively)")
    ap.add_argument("--docs", nargs="*", default=list(DEFAULT_DOCS), help="10-K file stems")
    ap.add_argument("--sample", type=int, default=30, help="random mapped rows to print")
    ap.add_argument("--top", type=int, default=30, help="most frequent unmapped labels to print")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    t0 = time.perf_counter()
    rows: list[tuple[str, StatementFact, str | None]] = []  # (doc, fact, concept), one per fact
    for pdf in find_pdfs(args.corpus, args.docs):
        facts = statement_facts(pdf)
        rows += [(pdf.stem, f, concept_for(f.label, f.parent, f.statement, f.unit)) for f in facts]
        mapped = sum(c is not None for doc, _, c in rows if doc == pdf.stem)
        print(f"{pdf.stem:<28} {len(facts):>5} facts  {mapped / max(len(facts), 1):6.1%} with a concept")
    seconds = time.perf_counter() - t0

    n = len(rows)
    print(f"\n{len(args.docs)} filings, {n} statement facts in {seconds:.1f} s: "
          f"{sum(c is not None for *_, c in rows) / max(n, 1):.1%} with a concept")
    for kind in STATEMENTS:
        part = [c for _, f, c in rows if f.statement == kind]
        share = sum(c is not None for c in part) / max(len(part), 1)
        print(f"  {kind:<17} {len(part):>5} facts  {share:6.1%}")
    # one row of a table (its label on its page) counts once however many period columns it has
    table_rows = {(d, f.page_index, f.label, f.parent): c for d, f, c in rows}
    kinds = {(d, f.page_index, f.label, f.parent): f.statement for d, f, _ in rows}
    print(f"  distinct rows     {len(table_rows):>5}       "
          f"{sum(c is not None for c in table_rows.values()) / max(len(table_rows), 1):6.1%}")
    print(f"  distinct concepts {len({c for c in table_rows.values() if c})}")

    mapped_rows = sorted((k, c) for k, c in table_rows.items() if c is not None)
    rng = random.Random(args.seed)
    print(f"\n{args.sample} random mapped rows (doc page [statement] parent › label -> concept):")
    for (doc, page, label, parent), concept in rng.sample(mapped_rows, min(args.sample, len(mapped_rows))):
        kind = kinds[(doc, page, label, parent)]
        where = f"{parent[:30]} › " if parent else ""
        print(f"  {cite(doc, page)} [{kind}] {where}{label[:70]!r} -> {concept}")

    unmapped = Counter(label for (_, _, label, _), c in table_rows.items() if c is None)
    print(f"\n{args.top} most frequent unmapped labels (rows):")
    for label, count in unmapped.most_common(args.top):
        print(f"  {count:>3}  {label[:90]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
