"""Company resolution accuracy: every mention resolved to the right library company, or refused — never another.

Builds a set of questions that each name one company, from
  - the registrants of a library (``--home``: their cover-page names and tickers, e.g. the shared corpus ingested),
  - the fictional companies of the demo corpus (``--demo N``: names and tickers as their covers print them),
  - well-known issuers the library does not hold (a seeded sample of ``resources/companies/known_issuers.tsv``),
  - invented names and ticker-like words no company answers to,
each company in several name forms (the cover's legal name, title case, the name without its legal suffix, with
"Corp"/"Inc" abbreviations, possessive, ticker) and question templates, and reads every question with
:func:`engine.intent.issuers.company_mentions` against the library's companies (demo and library together).

    .venv/bin/python scripts/bench_companies.py --home /tmp/fl-shared --demo 40

Prints, per kind of mention: right (the company, or a refusal naming the right absent issuer), refused right,
wrong company (a library company other than the one meant: the target is 0), missed (a library company refused),
and the first examples of each miss.
"""

from __future__ import annotations

import argparse
import random
import re
import string
import time
from collections import Counter

from engine.demo_corpus import demo_companies
from engine.intent.issuers import company_mentions, known_issuers, with_known
from engine.records import IssuerRef

TEMPLATES = (  # {c}: the company as a subject or object; {cs}: where a possessive reads as well
    "What was {cs} total revenue in FY{y}?",
    "{c} {y} return on assets, using net income over average total assets?",
    "Does {c} pay a dividend?",
    "How much long-term debt did {c} report at the end of fiscal {y}?",
    "What drove the change in {cs} gross margin between {y0} and {y}?",
    "What was the FY{y} capital expenditure of {c}?",
)
_LEGAL = re.compile(r",?\s*\b(?:Inc|Incorporated|Corp|Corporation|Company|Co|Ltd|plc|PLC|N\.V|Holdings)\b\.?\s*$",
                    re.IGNORECASE)
_ABBREVIATIONS = {"Corporation": "Corp.", "Incorporated": "Inc.", "Company": "Co."}


def name_forms(name: str, ticker: str | None) -> list[str]:
    """The ways an analyst writes a company: as the cover prints it, in title case, without the legal suffix,
    with it abbreviated, and its ticker."""
    forms = [name]
    if name.isupper() and len(name) > 5:  # "AMAZON.COM, INC." is also written in title case; "BMW" is not
        forms.append(string.capwords(name.lower()))
    short = _LEGAL.sub("", name).strip(" ,")
    if short and short != name:
        forms.append(short if not short.isupper() or len(short) <= 5 else string.capwords(short.lower()))
    for full, abbr in _ABBREVIATIONS.items():
        if re.search(rf"\b{full}\b", name, re.IGNORECASE):
            forms.append(re.sub(rf"\b{full}\b", abbr, name, flags=re.IGNORECASE))
    if ticker and len(ticker) > 1:  # a one-letter ticker ("A", "T") is never read as a company
        forms.append(ticker)
    return list(dict.fromkeys(forms))


def question(form: str, rng: random.Random) -> str:
    y = rng.randint(2015, 2023)
    cs = f"{form}'s" if rng.random() < 0.5 else form
    return rng.choice(TEMPLATES).format(c=form, cs=cs, y=y, y0=y - 1)


def invented(rng: random.Random, taken: set[str]) -> list[str]:
    """Names and ticker-like words no company answers to."""
    syllables = ["zor", "blax", "quiv", "ara", "tel", "von", "dris", "kel", "mur", "pex", "yal", "thon", "cru"]
    out: list[str] = []
    while len(out) < 40:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))).capitalize()
        kind = rng.random()
        if kind < 0.35:
            out.append(f"{word} {rng.choice(['Dynamics', 'Systems', 'Holdings', 'Labs'])} Inc.")
        elif kind < 0.7:
            out.append(word)
        else:
            tick = "".join(rng.choice(string.ascii_uppercase) for _ in range(rng.randint(3, 4)))
            if tick not in taken:
                out.append(tick)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", help="a library whose registrants to use (e.g. the shared corpus ingested)")
    ap.add_argument("--demo", type=int, default=40, help="fictional demo companies to add (default 40)")
    ap.add_argument("--absent", type=int, default=80, help="well-known issuers the library lacks to sample")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    cases: list[tuple[str, str, str, set[str] | str | None]] = []  # (kind, form, question, truth)
    refs: list[IssuerRef] = []
    if args.home:
        from engine.pipeline import issuer_refs
        from engine.store.library import Library

        library = Library(args.home)
        refs = issuer_refs(library)
        for reg in library.registrants():
            keys = set(reg.company_keys)
            for name in reg.names[:1] or [string.capwords(k.lower()) for k in reg.company_keys[:1]]:
                for form in name_forms(name, reg.ticker):
                    cases.append(("library", form, question(form, rng), keys))
    for company in demo_companies(args.demo, 0):
        refs.append(IssuerRef(company.ticker, (company.name, company.ticker)))
        for form in name_forms(company.name, company.ticker):
            cases.append(("demo", form, question(form, rng), {company.ticker}))
    _, absent = with_known(tuple(refs))
    for ref in rng.sample(list(absent), args.absent):
        tickers = [n for n in ref.names if n.isupper() and len(n) <= 5]
        for form in name_forms(ref.key, tickers[0] if tickers else None):
            cases.append(("absent", form, question(form, rng), ref.key))
    taken = {n for r in (*refs, *known_issuers()) for n in r.names}
    for name in invented(rng, taken):
        cases.append(("invented", name, question(name, rng), None))

    tally: dict[str, Counter[str]] = {}
    examples: dict[tuple[str, str], list[str]] = {}
    started = time.perf_counter()
    for kind, form, text, truth in cases:
        mentions = company_mentions(text, refs)
        keys = {m.key for m in mentions if m.key}
        if isinstance(truth, set):
            outcome = "right" if keys and keys <= truth else "wrong company" if keys - truth else "missed"
        elif keys:
            outcome = "wrong company"
        elif isinstance(truth, str):
            outcome = "right" if any(m.known == truth for m in mentions) else \
                "refused, other name" if mentions else "refused, no mention"
        else:
            outcome = "refused right" if mentions and not any(m.known for m in mentions) else \
                "refused as a known issuer" if mentions else "no mention"
        tally.setdefault(kind, Counter())[outcome] += 1
        if outcome not in ("right", "refused right"):
            examples.setdefault((kind, outcome), []).append(
                f"{text!r} -> {[(m.text, m.key or m.known) for m in mentions]}")
    seconds = time.perf_counter() - started

    print(f"{len(cases)} questions, {len(refs)} library companies, {len(known_issuers())} well-known issuers "
          f"({len(absent)} not in the library); {seconds / len(cases) * 1000:.2f} ms a question")
    total: Counter[str] = Counter()
    for kind, counts in tally.items():
        total.update(counts)
        print(f"  {kind:9s} {sum(counts.values()):4d}: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    print(f"  {'all':9s} {sum(total.values()):4d}: " + ", ".join(f"{k} {v}" for k, v in total.most_common()))
    for (kind, outcome), lines in sorted(examples.items()):
        print(f"\n{kind} / {outcome} ({len(lines)}):")
        for line in lines[:6]:
            print("   ", line)


if __name__ == "__main__":
    main()
