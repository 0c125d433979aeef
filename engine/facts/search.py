"""Search the library's statement facts by line item and company, across filings.

"accounts payable Corning" finds the "Accounts payable" cells of Corning's filings: the words that name a library
company — read by the question reader's own company resolution (:func:`engine.intent.issuers.company_mentions`,
any of its names, tickers or the well-known issuer's), the search box's words taken both capitalised and, short
ones, in capitals, since a search box keeps no case — pick the filings; the others are matched against the stored
facts' labels, headings and titles (the ``facts_fts`` index, best first). Each hit
carries its table's printed heading (:func:`engine.facts.tables.printed_heading`), so the results read as the
filing prints them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.facts.tables import listed_statement, printed_heading
from engine.intent.issuers import company_mentions, issuer_refs
from engine.records import Filing, StoredFact
from engine.retrieval.search import MetadataFilter, filter_filings
from engine.store import Library

_WORD = re.compile(r"[\w&'’.-]+")


@dataclass(frozen=True)
class FactHit:
    """One cell a search found: the fact with the company, filing and table heading it is printed under."""

    stored: StoredFact
    company: str  # the registrant's name as the cover prints it, else the filing's issuer token
    doc_name: str
    heading: str  # the table's printed heading ("Consolidated Balance Sheets"); its stored title when none
    primary: bool  # the table is a primary statement (balance sheet, income, cash flows, equity)


@dataclass(frozen=True)
class FactSearch:
    """A search's hits, best first, and how many it found in all (``total`` - ``len(hits)`` more not listed)."""

    text: str
    words: str  # the line-item words searched
    companies: tuple[str, ...]  # the companies the text (or the company filter) named, as their filings name them
    hits: tuple[FactHit, ...]
    total: int

    @property
    def more(self) -> int:
        return max(0, self.total - len(self.hits))


def named_companies(text: str, library: Library) -> tuple[list[str], str]:
    """The library companies ``text`` names (their keys) and the text without their names. A search box keeps no
    case, so its words are read capitalised ("corning" → "Corning": a name) and, the short ones, in capitals ("glw"
    → "GLW": a ticker)."""
    refs = issuer_refs(library)
    words = text.split()
    readings = (" ".join(w[:1].upper() + w[1:] for w in words),
                " ".join(w.upper() if len(w) <= 5 else w[:1].upper() + w[1:] for w in words))
    mentions = [m for reading in readings for m in company_mentions(reading, refs) if m.key is not None]
    rest = text
    for m in sorted(mentions, key=lambda m: -len(m.text)):
        rest = re.sub(rf"(?<![\w&]){re.escape(m.text)}(?![\w&])", " ", rest, flags=re.IGNORECASE)
    return list(dict.fromkeys(m.key for m in mentions if m.key is not None)), rest


def _company(filing: Filing) -> str:
    ident = filing.identity
    return ident.registrant or ident.issuer_key or ident.ticker or ident.doc_name


def _fts_query(words: list[str]) -> str:
    """Each word as a quoted prefix term, all required ("accounts payable" → "accounts"* AND "payable"*)."""
    return " AND ".join('"' + w.replace('"', "") + '"*' for w in words)


def search_facts(library: Library, text: str, *, company: str | None = None, limit: int = 200) -> FactSearch:
    """The facts whose row, heading or table title hold every line-item word of ``text``, best first, at most
    ``limit``; words of ``text`` that name a library company (:func:`named_companies`) keep only that company's
    filings, and so does ``company`` (an issuer key, ticker or part of a name, as the
    question filters read it: :func:`engine.retrieval.search.filter_filings`)."""
    filings = library.filings()
    named, rest = named_companies(text, library)
    items = [w.strip(".,") for w in _WORD.findall(rest) if w.strip(".,")]
    if not items:  # only a company's name: its words are what is searched ("Corning" rows), in every filing
        named, items = [], [w.strip(".,") for w in _WORD.findall(text) if w.strip(".,")]
    chosen = {f.id for f in library.filings_of_companies(named)} if named else set()
    picked: list[str] = list(named)
    if company and company.strip():
        ids = set(filter_filings(library, MetadataFilter(issuer=company.strip())) or ())
        chosen = (chosen & ids) if chosen else ids
        picked.append(company.strip())
        if not ids:
            return FactSearch(text, " ".join(items), tuple(picked), (), 0)
    by_id = {f.id: f for f in filings}
    if picked:  # as the filings name them ("ACME INDUSTRIES INC.", not the word typed)
        picked = list(dict.fromkeys(_company(by_id[fid]) for fid in sorted(chosen)))
    if not items:
        return FactSearch(text, "", tuple(picked), (), 0)
    query = _fts_query(items)
    filing_ids = sorted(chosen) if picked else None
    pool = library.facts(match=query, filing_ids=filing_ids, limit=max(limit * 5, 1000))
    total = library.count_facts(query, filing_ids=filing_ids) if len(pool) >= max(limit * 5, 1000) else len(pool)
    # bm25 favours short labels ("Other expense (income), net" for "net income"): the words as the row prints them
    # come first, the row that is nothing else before one that goes on, a statement's row before a note's, then
    # bm25's order
    phrase = " ".join(items).lower()
    found = sorted(pool, key=lambda s: (phrase not in s.fact.label.lower(),
                                        not s.fact.label.lower().startswith(phrase),
                                        s.fact.label.lower().rstrip(":") != phrase, s.fact.statement == "table",
                                        -s.score))[:limit]
    keys = [(s.filing_id, s.fact.page_index, s.fact.statement, s.fact.title) for s in found]
    starts = library.table_starts(keys)
    headings: dict[tuple[int, int, str, str], tuple[str, str]] = {}
    for key, start in starts.items():
        page = library.page_text(key[0], key[1])
        kind, heading = printed_heading(page, page.rfind("\n", 0, start) + 1)
        headings[key] = (listed_statement(key[2], key[3], kind, heading), heading)
    hits = []
    for s, key in zip(found, keys, strict=True):
        f = by_id.get(s.filing_id)
        kind, heading = headings.get(key, ("table", ""))
        hits.append(FactHit(s, _company(f) if f is not None else s.doc_name, s.doc_name, heading or s.fact.title,
                            kind != "table"))
    return FactSearch(text, " ".join(items), tuple(picked), tuple(hits), max(total, len(hits)))
