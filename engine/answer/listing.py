"""Which securities a company registers to trade on an exchange: read from its cover page's Section 12(b) table
(:mod:`engine.facts.registrations`), not written by a model.

"Which debt securities are registered to trade on a national securities exchange under American Express' name?"
asks of the cover (the question reader: ``resources/reader/sections.toml``, "registered" / "ticker" / "listed") and
of a class (``resources/reader/securities.toml``: "debt"). The answer lists the rows of the asked classes with their
symbols and exchanges, each row quoted as printed; none of the class is said as none, with what the cover does
register, so "There are none" is an answer the analyst can check against the page. A yes/no question leads with
Yes or No. The cover read is that of the first cover page among the passages the retrieval ranked for the question
(its document stage chose the company's filing of the asked period).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.facts.registrations import CoverListing, Registration, read_listing
from engine.pages import cite
from engine.records import AnswerResult, Citation, Passage, QueryIntent, Quote
from engine.store.library import Library
from engine.vocab.sections import vocab as section_vocab
from engine.vocab.securities import asked_classes, classes

__all__ = ["listing_answer"]

_MOST_ROWS = 40  # rows listed and quoted at most (a cover prints a few dozen at the most)
_ACT = "under Section 12(b) of the Exchange Act"


def _row(r: Registration) -> str:
    where = ", ".join((*r.symbols, " and ".join(r.exchanges)) if r.exchanges else r.symbols)
    return f"{r.title} ({where})" if where else r.title


def _listed(rows: Sequence[Registration]) -> str:
    shown = "; ".join(_row(r) for r in rows[:_MOST_ROWS])
    return shown + (f"; and {len(rows) - _MOST_ROWS} more" if len(rows) > _MOST_ROWS else "")


def _wording(listing: CoverListing, asked: tuple[str, ...], yes_no: bool, who: str, where: str) -> str | None:
    labels = {c.name: c.label for c in classes()}
    rows = listing.rows
    matched = [r for r in rows if not asked or r.kind in asked]
    named = " or ".join(labels[a] for a in asked) if asked else "securities"
    if matched:
        lead = "Yes: " if yes_no else ""
        count = f"{len(matched)} class{'es' if len(matched) > 1 else ''} of {named}"
        more = " The table goes on over the page; the rows after it were not read." if listing.continues else ""
        return f"{lead}{who} registers {count} {_ACT} (cover page, {where}): {_listed(matched)}.{more}"
    if not rows and not listing.none_stated or listing.continues:
        return None  # rows not read, or not all of them: "none" is not known
    lead = "No" if yes_no else "None"
    rest = f"what it registers is {_listed(rows)}" if rows else "its cover states none registered"
    return f"{lead}: {who} registers no {named} {_ACT} (cover page, {where}); {rest}."


def listing_answer(intent: QueryIntent, passages: Sequence[Passage], library: Library) -> AnswerResult | None:
    """The registered securities the question asks of, from the first cover page among ``passages``; None where
    none of them is a cover page that prints a Section 12(b) table."""
    cover_name = section_vocab().cover_name
    covers = [(i, p) for i, p in enumerate(passages, start=1) if p.chunk.section == cover_name]
    if not covers:
        return None
    if intent.fiscal_years or intent.quarters or intent.as_of:
        passage_id, cover = covers[0]  # the asked period's filing ranks first (the document stage)
    else:  # asked of no period: what the company registers now, on its latest filing's cover
        def latest(found: tuple[int, Passage]) -> tuple[str, int]:
            ident = library.filing(found[1].chunk.filing_id).identity
            return ident.period_end or "", ident.fiscal_year or 0
        passage_id, cover = max(covers, key=latest)
    c = cover.chunk
    text = library.page_text(c.filing_id, c.page_index)
    pages = library.filing(c.filing_id).n_pages
    listing = read_listing(text, library.page_text(c.filing_id, c.page_index + 1) if c.page_index + 1 < pages else "")
    if listing is None:
        return None
    asked = asked_classes(intent.about or intent.question)
    who = library.filing(c.filing_id).identity.registrant or c.doc_name
    said = _wording(listing, asked, intent.yes_no, who, cite(c.doc_name, c.page_index, c.printed_folio))
    if said is None:
        return None
    shown = [r for r in listing.rows if not asked or r.kind in asked] or list(listing.rows)
    spans = [(r.char_start, r.char_end) for r in shown[:_MOST_ROWS]] or [(listing.char_start, listing.char_end)]
    quotes = tuple(Quote(n, passage_id, c.id, c.doc_name, c.page_index, a, b, text[a:b], cover.title, c.section,
                         c.printed_folio) for n, (a, b) in enumerate(spans, start=1))
    return AnswerResult("answered", said, method="cover", citations=(Citation.of(passage_id, cover),),
                        quotes=quotes)
