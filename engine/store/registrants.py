"""Library-level identity: the filings of one registrant share its ticker, CIK and fiscal-year end.

Covers before 2019 print no trading symbol, printed EDGAR PDFs no CIK, a 10-Q no fiscal-year end: what one filing
of a registrant states, its other filings lack. The view is computed when filings are read, never stored, so adding,
re-reading or removing a filing cannot leave it stale; it costs one pass over the filings' identity columns (the
library caches it per generation).

Grouping: filings stating the same CIK are one registrant; so are filings sharing a company key (the LOFin issuer
token, else the ticker; see :attr:`FilingIdentity.company_key`) or stating the same exact registrant name (letters
and digits compared, case ignored), except that filings of two different CIKs never join. A filing without a CIK
whose company key or name is shared by filings of several CIKs joins the most recent of them.

Shared values: the one the most recent filing stating it states (fiscal year, then period end, then ingest order).
A filing that states its own value keeps it; stated values that differ are the registrant's ``conflicts`` (a
fiscal-year end that moves by days, as a 52-53-week year's does, is no conflict).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date

from engine.records import Filing, FilingIdentity, Registrant

SHARED_FIELDS = ("ticker", "cik", "fiscal_year_end")
# cover boilerplate the cover reader may take for a name when the name itself is a logo: never a link
_NOT_A_NAME = re.compile(r"united\s*states|securities\s+and\s+exchange|washington|form\s*10|annual\s+report|"
                         r"quarterly\s+report|table\s+of\s+contents", re.IGNORECASE)
_WEEK_DAYS = 7


@dataclass(frozen=True)
class RegistrantView:
    """The library's registrants and which one each filing belongs to."""

    registrants: tuple[Registrant, ...]
    by_filing: Mapping[int, Registrant]

    def apply(self, filing: Filing) -> Filing:
        """``filing`` with its registrant's ticker, CIK and fiscal-year end where its own cover states none."""
        registrant = self.by_filing.get(filing.id)
        if registrant is None:
            return filing
        own, sources = filing.identity, dict(registrant.sources)
        inherited = tuple((name, sources[name]) for name in SHARED_FIELDS
                          if getattr(own, name) is None and getattr(registrant, name) is not None)
        if not inherited:
            return filing
        shared = replace(own, ticker=own.ticker or registrant.ticker, cik=own.cik or registrant.cik,
                         fiscal_year_end=own.fiscal_year_end or registrant.fiscal_year_end)
        return replace(filing, identity=shared, inherited=inherited)


def name_link(name: str | None) -> str | None:
    """The form of a registrant name two filings must share to be one registrant ("3M COMPANY" → "3mcompany");
    None for a name too short or one that is cover boilerplate."""
    if not name or _NOT_A_NAME.search(name):
        return None
    link = re.sub(r"[^a-z0-9]", "", name.lower())
    return link if len(link) >= 4 else None


def _recency(identity: FilingIdentity, filing_id: int) -> tuple[int, str, int]:
    return identity.fiscal_year or 0, identity.period_end or "", filing_id


def _day_of_year(month_day: str) -> int | None:
    try:
        return date(2000, int(month_day[2:4]), int(month_day[5:7])).timetuple().tm_yday
    except ValueError:
        return None


def _same_value(name: str, a: str, b: str) -> bool:
    """Whether two stated values agree; fiscal-year ends within a week of each other do (a 52-53-week year)."""
    if a == b:
        return True
    day_a, day_b = _day_of_year(a), _day_of_year(b)
    if name != "fiscal_year_end" or day_a is None or day_b is None:
        return False
    apart = abs(day_a - day_b)
    return min(apart, 366 - apart) <= _WEEK_DAYS


def build_view(identities: Mapping[int, FilingIdentity]) -> RegistrantView:
    """Group filings (id → own identity, as stored) into registrants and choose the values they share."""
    order = sorted(identities, key=lambda fid: _recency(identities[fid], fid), reverse=True)  # most recent first
    parent = {fid: fid for fid in order}
    cik = {fid: identities[fid].cik for fid in order}

    def find(fid: int) -> int:
        while parent[fid] != fid:
            parent[fid] = parent[parent[fid]]
            fid = parent[fid]
        return fid

    def join(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra == rb or (cik[ra] and cik[rb] and cik[ra] != cik[rb]):
            return
        parent[rb] = ra
        cik[ra] = cik[ra] or cik[rb]

    links: tuple[Callable[[FilingIdentity], str | None], ...] = (
        lambda i: i.cik, lambda i: i.company_key, lambda i: name_link(i.registrant))
    for link in links:
        first: dict[str, int] = {}
        for fid in order:
            key = link(identities[fid])
            if key is None:
                continue
            if key in first:
                join(first[key], fid)
            else:
                first[key] = fid
    groups: dict[int, list[int]] = {}
    for fid in order:
        groups.setdefault(find(fid), []).append(fid)
    registrants = sorted((_registrant(members, identities) for members in groups.values()), key=lambda r: r.key)
    by_filing = {fid: r for r in registrants for fid in r.filing_ids}
    return RegistrantView(tuple(registrants), by_filing)


def _registrant(members: Sequence[int], identities: Mapping[int, FilingIdentity]) -> Registrant:
    """One registrant from its filings' ids, most recent first."""
    values: dict[str, str | None] = {}
    sources: list[tuple[str, str]] = []
    conflicts: list[str] = []
    for name in SHARED_FIELDS:
        stated = [(getattr(identities[fid], name), identities[fid].doc_name) for fid in members
                  if getattr(identities[fid], name)]
        if not stated:
            values[name] = None
            continue
        shared, source = stated[0]
        values[name] = shared
        sources.append((name, source))
        if any(not _same_value(name, shared, value) for value, _ in stated):
            by_value: dict[str, list[str]] = {}
            for value, doc in stated:
                by_value.setdefault(value, []).append(doc)
            conflicts.append(f"{name}: " + ", ".join(
                f"{value} ({docs[0]}{f' and {len(docs) - 1} more' if len(docs) > 1 else ''})"
                for value, docs in by_value.items()))
    newest = identities[members[0]]
    return Registrant(
        key=values["cik"] or newest.company_key,
        filing_ids=tuple(sorted(members)),
        company_keys=tuple(dict.fromkeys(identities[fid].company_key for fid in members)),
        names=tuple(dict.fromkeys(n for fid in members if (n := identities[fid].registrant))),
        ticker=values["ticker"], cik=values["cik"], fiscal_year_end=values["fiscal_year_end"],
        sources=tuple(sources), conflicts=tuple(conflicts),
    )
