"""The company check of the documents stage: the asked company or no answer.

Every company the question names is resolved (:func:`engine.intent.issuers.company_mentions`): a library company by
any of its names, tickers or the well-known issuer's it is; a well-known issuer the library does not hold; or a name
nobody answers to. Such a name is still a loaded company's when that company's filings are the ones that use it:
"AMEX" is printed in American Express's filings and nobody else's (:data:`ALIAS_MIN_CHUNKS`,
:data:`ALIAS_MIN_SHARE`). Then:

- a question that names only companies the library does not hold, or names nobody can tell, is refused naming
  them ("AES Corporation is not in the library"; "could not tell which company 'XYZQ' is") — never answered from
  whatever filing retrieval ranks first; a comparison is refused when one of its companies is missing;
- a question that names no company is answered for the library's one company (and says so), or, on a library of
  several, asks which one;
- a fiscal year or quarter that none of the asked company's filings reports is named as missing ("PFIZER's FY2022
  is reported by none of its loaded filings") instead of being answered from a neighbouring year — unless the
  question looks ahead (guidance, expectations: a year no filing reports yet).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from engine.intent.issuers import CompanyMention, company_mentions, is_nickname, is_ticker
from engine.records import Filing, IssuerRef, QueryIntent, annual_reports
from engine.store.library import Library

__all__ = ["ALIAS_MIN_CHUNKS", "ALIAS_MIN_SHARE", "CompanyCheck", "check_companies", "covered_periods"]

# a name is a loaded company's own when its filings print it in at least this many passages, and hold at least
# this share of the library's passages that print it (competitors and customers are named by several companies)
ALIAS_MIN_CHUNKS = 5
ALIAS_MIN_SHARE = 0.8
# the library's companies a "which company?" answer lists before "and N more"
LISTED_COMPANIES = 12


@dataclass(frozen=True)
class CompanyCheck:
    intent: QueryIntent  # the question's intent, its issuers the library companies it resolved to
    note: str  # what the check found, as the documents stage's trace shows it
    missing: tuple[str, ...] = ()  # companies named that the library does not hold, or that nobody answers to
    refusal: str = ""  # the answer when the question cannot be answered for the company it asks about
    assumed: str = ""  # said with the answer when the company was not named: the library holds only that one
    choices: tuple[str, ...] = ()  # the loaded companies the analyst may mean (a refusal that asks which)
    lacking: str = ""  # said first with the answer: the filing the question names is not loaded ("Pfizer's FY2022
    # 10-K is not in the library …"), answered from the loaded filings that report its period


def _name(refs: dict[str, IssuerRef], key: str) -> str:
    """The company as an answer names it: its shortest name written in mixed case ("Pfizer"), else its shortest
    name that is no ticker ("3M COMPANY"), else its key."""
    names = [n for n in refs[key].names if not is_nickname(n)] if key in refs else []
    mixed = [n for n in names if not n.isupper()]
    plain = [n for n in names if n != key and not is_ticker(n)]
    return min(mixed or plain or [key], key=len)


def _loaded(refs: dict[str, IssuerRef]) -> str:
    """The companies of ``refs`` as a list an answer can print (one name for two keys of a company)."""
    names = sorted({_name(refs, k) for k in refs}, key=str.casefold)
    more = f" and {len(names) - LISTED_COMPANIES} more" if len(names) > LISTED_COMPANIES else ""
    return ", ".join(names[:LISTED_COMPANIES]) + more


def check_companies(intent: QueryIntent, library: Library, refs: Sequence[IssuerRef]) -> CompanyCheck:
    """Which loaded companies the question asks about, or why it cannot be answered for the one it names."""
    by_key = {r.key: r for r in refs}
    issuers: list[str] = []
    notes: list[str] = []
    absent: list[CompanyMention] = []
    mentions = company_mentions(intent.question, refs)
    named = any(m.key is not None for m in mentions)
    for m in mentions:
        if m.key is not None:
            issuers.append(m.key)
            continue
        if m.weak and named:  # capitalised words beside a named company: its segment or product
            continue
        if m.known is None and (owner := _alias_owner(library, m.text, notes)) is not None:
            issuers.append(owner)
            continue
        absent.append(m)
        notes.append(f"{m.text!r} is {m.known} (not in the library)" if m.known is not None
                     else f"{m.text!r} is no loaded company nor a well-known issuer")
    issuers = list(dict.fromkeys(issuers))
    if issuers:
        notes.insert(0, f"names {', '.join(issuers)}")
    companies = {_name(by_key, k) for k in by_key}  # the library's companies (one name for two keys of one)
    if len(companies) == 1 and all(m.weak for m in absent):  # a one-company library: words of its own
        absent = []
    missing = tuple(m.describe() for m in absent if not m.weak)
    refusal, assumed = "", ""
    if absent and (not issuers or intent.comparison and missing):
        absent = [m for m in absent if not (m.weak and issuers)]
        known = [m.describe() for m in absent if m.known is not None]
        unknown = [m.text for m in absent if m.known is None]
        said = []
        if known:
            said.append(f"{' and '.join(known)} {'is' if len(known) == 1 else 'are'} not in the library: load "
                        f"{'its' if len(known) == 1 else 'their'} filings first")
        if unknown:
            said.append("could not tell which company " + " or ".join(repr(u) for u in unknown) + " is: no loaded "
                        f"company and no well-known issuer answers to it (the library holds {_loaded(by_key)})")
        refusal = "; ".join(said)
        if issuers:
            refusal += " — the comparison needs every company it names"
        refusal = refusal[0].upper() + refusal[1:]
    elif not issuers and not absent:
        if len(companies) == 1:
            issuers = sorted(by_key)
            assumed = f"The question names no company; the library holds one, {_name(by_key, issuers[0])}: " \
                      "answered for it"
            notes.append(f"names no company: the library's one company, {issuers[0]}")
        elif companies:
            refusal = (f"Which company? The question names none, and the library holds {len(companies)}: "
                       f"{_loaded(by_key)}. Ask again naming one")
            notes.append("names no company: the library holds several")
    checked = replace(intent, issuers=tuple(issuers))
    lacking = ""
    if not refusal and issuers and not intent.looks_ahead:
        # one registrant's filings under several keys (AMAZON's 10-Ks, AMZN's 10-Qs) report its periods together
        registrants = library.registrants()
        groups = {key: next((tuple(r.company_keys) for r in registrants if key in r.company_keys), (key,))
                  for key in issuers}
        gaps = [gap for keys in dict.fromkeys(groups.values())
                if (gap := _period_gap(checked, keys, library, by_key))]
        if gaps:
            refusal = "; ".join(gaps)
            notes.append("periods not loaded")
        else:
            lacking = "; ".join(gap for keys in dict.fromkeys(groups.values())
                                if (gap := _filing_gap(checked, keys, library, by_key)))
            if lacking:
                notes.append("named filing not loaded")
    # which loaded company the analyst means, when the question named none or a name nobody answers to
    asks_which = not issuers and not missing or any(m.known is None for m in absent)
    choices = tuple(sorted(companies, key=str.casefold)) if refusal and asks_which else ()
    return CompanyCheck(checked, "; ".join(notes), missing, refusal, assumed, choices,
                        lacking if not refusal and issuers and not intent.looks_ahead else "")


def _alias_owner(library: Library, name: str, notes: list[str]) -> str | None:
    """The loaded company whose own filings are the ones that print ``name``, if one is."""
    usage = library.word_mentions(name)
    total = sum(usage.values())
    owner = max(usage, key=usage.__getitem__) if usage else None
    if owner is None or usage[owner] < ALIAS_MIN_CHUNKS or usage[owner] < ALIAS_MIN_SHARE * total:
        return None
    notes.append(f"{name!r} taken for {owner} (printed in {usage[owner]} of its passages, "
                 f"{total - usage[owner]} of other companies')")
    return owner


def covered_periods(filings: Sequence[Filing]) -> tuple[set[int], set[str]] | None:
    """The fiscal years and quarters ("2023Q2") a company's filings report, with their comparative columns: a 10-K
    reports its year and the two before (income and cash-flow statements), a 10-Q its quarter and the same quarter
    a year earlier, another filing its own period. None when a filing's period is not known (nothing can be
    ruled out)."""
    years: set[int] = set()
    quarters: set[str] = set()
    for f in filings:
        i = f.identity
        q = re.fullmatch(r"((?:19|20)\d\d)Q([1-4])", i.period or "")
        if i.fiscal_year is None and q is None:
            return None
        year = i.fiscal_year if i.fiscal_year is not None else int(q[1]) if q else None
        assert year is not None
        if i.form == "10-K":
            years |= {year, year - 1, year - 2}
            quarters |= {f"{y}Q4" for y in (year, year - 1)}
        elif q is not None:
            years.add(year)
            quarters |= {f"{q[1]}Q{q[2]}", f"{int(q[1]) - 1}Q{q[2]}"}
        else:
            years.add(year)
    return years, quarters


def _period_gap(intent: QueryIntent, keys: tuple[str, ...], library: Library, refs: dict[str, IssuerRef]) -> str:
    """Why the company's loaded filings (under ``keys``) cannot answer for the periods asked ("" when they can)."""
    filings = library.filings_of_companies(keys)
    covered = covered_periods(filings)
    if covered is None or not filings:
        return ""
    years, quarters = covered
    lacking = [f"FY{y}" for y in intent.fiscal_years if y not in years and not any(
        q.startswith(str(y)) for q in intent.quarters)]
    lacking += [q for q in intent.quarters if q not in quarters and int(q[:4]) not in years]
    if not lacking:
        return ""
    named = [f for f in ("10-K", "10-Q") if f in _named_forms(intent)]
    one, who = len(lacking) == 1, f"{_name(refs, keys[0])}'s {', '.join(lacking)}"
    load = f"({_have(filings)}): load the filing that reports {'it' if one else 'them'}"
    if len(named) == 1:  # "in its 2022 10-K": the filing named is not loaded, nor any that reports its period
        return (f"{who} {named[0]} {'is' if one else 'are'} not in the library, and none of its loaded filings "
                f"reports {'that period' if one else 'those periods'} {load}")
    return f"{who} {'is' if one else 'are'} reported by none of its loaded filings {load}"


def _have(filings: Sequence[Filing]) -> str:
    return ", ".join(sorted({f"{f.identity.form or 'filing'} {f.identity.period or f.identity.fiscal_year}"
                             for f in filings}))


def _named_forms(intent: QueryIntent) -> tuple[str, ...]:
    """The forms the question's own words name ("10-K", "annual report", "10-Q", "quarterly report"), not the 10-Q a
    stated quarter only implies."""
    return tuple(f for f in intent.forms if f != "10-Q" or re.search(r"\b10-?Qs?\b|\bquarterly\b", intent.question,
                                                                       re.IGNORECASE))


def _filing_gap(intent: QueryIntent, keys: tuple[str, ...], library: Library, refs: dict[str, IssuerRef]) -> str:
    """The filing the question names by form and period that the library does not hold ("" when it is loaded, or
    the question names no form): "Pfizer's FY2022 10-K is not in the library (loaded: …); answered from the loaded
    filings that report FY2022". Its period is covered by another filing (a later 10-K's comparative column, a
    10-Q), or :func:`_period_gap` would have refused."""
    forms = _named_forms(intent)
    filings = library.filings_of_companies(keys)
    if not filings:
        return ""
    absent: list[str] = []
    if "10-K" in forms:
        annual = {f.identity.fiscal_year for f in filings if f.identity.form == "10-K"}
        quarter_years = {int(q[:4]) for q in intent.quarters}
        absent += [f"FY{y} 10-K" for y in intent.fiscal_years if y not in annual and y not in quarter_years]
    if "10-Q" in forms:
        held = {f.identity.period for f in filings if f.identity.form == "10-Q"}
        absent += [f"{q} 10-Q" for q in intent.quarters if q not in held and not q.endswith("Q4")]
    if not absent:
        return ""
    return (f"{_name(refs, keys[0])}'s {' and '.join(absent)} {'is' if len(absent) == 1 else 'are'} not in the library "
            f"(loaded: {_have(filings)}); answered from the loaded filings that report the same period")


EVERY_QUARTER_HELD = 4  # "these quarters", "each quarter": the latest this many of the company's loaded 10-Qs


def _quarter_run(intent: QueryIntent, library: Library) -> tuple[QueryIntent, str]:
    """A run of quarters the question does not name ("the last four quarters", "each quarter of 2023", "compared to
    previous quarters") as the company's loaded 10-Qs that report them: the latest N (or
    :data:`EVERY_QUARTER_HELD`), of the years asked, up to the quarter asked. A fourth quarter has no 10-Q (its annual
    report tells the year), so it is not among them; the note says which quarters were taken and from what."""
    filings = [f for f in library.filings_of_companies(intent.issuers) if f.identity.form == "10-Q"
               and f.identity.period and re.fullmatch(r"\d{4}Q[1-4]", f.identity.period)
               and f.identity.reports_through() is not None]
    periods = sorted({f.identity.period for f in filings if f.identity.period})
    if intent.quarters:  # "Q3 2023 against the quarters before it"
        periods = [p for p in periods if p <= max(intent.quarters)]
    elif intent.fiscal_years:  # "each quarter of FY2023"
        periods = [p for p in periods if int(p[:4]) in intent.fiscal_years]
    n = intent.quarter_run if intent.quarter_run > 0 else (
        EVERY_QUARTER_HELD if not intent.fiscal_years or intent.quarters else len(periods))
    taken = tuple(periods[-n:])
    who = next((f.identity.registrant or f.identity.issuer_key for f in filings), intent.issuers[0])
    if len(taken) < 2:
        return intent, ""  # one quarter (or none) loaded: the question is read as of the quarter it names, if any
    resolved = replace(intent, quarters=taken, fiscal_years=tuple(sorted({int(p[:4]) for p in taken})),
                       annual_years=(), temporal=taken)
    asked = f"the latest {intent.quarter_run} quarters" if intent.quarter_run > 0 else "each quarter"
    short = f" (only {len(taken)} of the {intent.quarter_run} asked are loaded)" if len(taken) < n else ""
    between = [q for a, b in itertools.pairwise(taken) for q in _quarters_between(a, b)]
    fourth = [q for q in between if q.endswith("Q4")]
    gaps = ""
    if fourth:
        gaps += f"; {', '.join(fourth)}: a fourth quarter has no 10-Q (the annual report tells its year)"
    if len(fourth) < len(between):
        gaps += f"; no 10-Q of {', '.join(q for q in between if q not in fourth)} is loaded"
    return resolved, f"{asked}: read as {', '.join(taken)}, the quarters of {who}'s loaded 10-Qs{short}{gaps}"


EVERY_YEAR_HELD = 3  # "each year", "year by year" with no year named: the latest this many fiscal years


def _year_run(intent: QueryIntent, library: Library) -> tuple[QueryIntent, str]:
    """A run of whole years ("each of the last three fiscal years", "the past 3 years", "each year from 2020 to
    2022") as fiscal years: those the question names (a range, a list), else the latest N (or
    :data:`EVERY_YEAR_HELD`) up to the year it names or the company's latest loaded 10-K. A 10-K prints its year
    beside the years before, so an earlier year needs no 10-K of its own; what a year's statements lack is said
    with that year's figure. The note says which years were taken and from what."""
    filings = library.filings_of_companies(intent.issuers)
    annual = annual_reports(filings)
    named = sorted(set(intent.annual_years or ()) - {intent.since})
    if intent.year_run < 0 and len(named) >= 2:
        return intent, ""  # the years are named ("each year from 2020 to 2022"): read as they are
    if not annual and not named:
        return intent, ""
    who = next((f.identity.registrant or f.identity.issuer_key for f in filings if f.id in annual), intent.issuers[0])
    last = named[-1] if named else max(annual.values())
    upto = f"to FY{last}, the year asked" if named else f"to FY{last}, the year of {who}'s latest loaded 10-K"
    if intent.since:  # "since FY2021": from that year to the latest
        if last <= intent.since:
            return intent, ""
        years = tuple(range(intent.since, last + 1))
        asked = f"since FY{intent.since}"
    else:
        n = intent.year_run if intent.year_run > 0 else EVERY_YEAR_HELD
        years = tuple(range(last - n + 1, last + 1))
        asked = f"the latest {intent.year_run} years" if intent.year_run > 0 else "each year"
    resolved = replace(intent, fiscal_years=years, annual_years=years, quarters=(),
                       temporal=tuple(f"FY{y}" for y in years))
    return resolved, f"{asked}: read as {', '.join(f'FY{y}' for y in years)}, the fiscal years {upto}"


def _quarters_between(a: str, b: str) -> list[str]:
    """The quarter labels strictly between two ("2022Q3", "2023Q2" -> ["2022Q4", "2023Q1"])."""
    y, q = int(a[:4]), int(a[5])
    out: list[str] = []
    while True:
        y, q = (y + 1, 1) if q == 4 else (y, q + 1)
        label = f"{y}Q{q}"
        if label >= b:
            return out
        out.append(label)


def resolve_latest(intent: QueryIntent, library: Library) -> tuple[QueryIntent, str]:
    """A question of the company's "latest quarter" or "most recent 10-K" (no period named) asks of the latest
    such filing the library holds for it: the intent then names that period, and the note says which filing was
    taken. Unchanged ("" note) when a period is named, no company is, or none of its filings is of that kind."""
    # a written question of the latest 10-Q "relative to past quarters" asks of that 10-Q, whose text tells the
    # change against the quarters before; a number of it is set beside theirs (engine.answer.series)
    written = not intent.numeric
    if intent.quarter_run and intent.issuers and not (written and "latest quarter" in intent.temporal):
        return _quarter_run(intent, library)
    computed = intent.plan is not None and intent.plan.status == "complete"
    if intent.year_run and intent.issuers and (computed or intent.numeric):  # a metric over the years: they are
        # named here ("Show its operating margin over the past 3 years" is no written question of those years)
        return _year_run(intent, library)
    latest = [t for t in intent.temporal if t in ("latest quarter", "latest year")]
    judged = intent.plan is not None and (bool(intent.plan.judge) or intent.plan.status == "parts")
    if not latest and judged:  # "does it have an improving gross margin?", "which segment has the highest revenue":
        latest = ["latest year"]  # of the company as it is now
    if not latest or not intent.issuers or intent.fiscal_years or intent.quarters:
        return intent, ""
    form = "10-Q" if latest[0] == "latest quarter" else "10-K"
    filings = [f for f in library.filings_of_companies(intent.issuers) if f.identity.form == form
               and f.identity.fiscal_year is not None and f.identity.reports_through() is not None]
    if not filings:
        return intent, ""
    newest = max(filings, key=lambda f: f.identity.reports_through() or date.min)
    i = newest.identity
    year = int(i.fiscal_year or 0)
    if form == "10-Q" and i.period and re.fullmatch(r"\d{4}Q[1-4]", i.period):
        resolved = replace(intent, quarters=(i.period,), fiscal_years=(int(i.period[:4]),), annual_years=(),
                           temporal=(i.period,))
        said = i.period
    else:
        resolved = replace(intent, fiscal_years=(year,), annual_years=(year,), temporal=(f"FY{year}",))
        said = f"FY{year}"
    asked = "no period named" if judged and latest[0] not in intent.temporal else f"'{latest[0]}'"
    return resolved, (f"{asked}: read as {said}; {i.doc_name} is the latest {form} loaded for "
                      f"{i.registrant or i.issuer_key}")
