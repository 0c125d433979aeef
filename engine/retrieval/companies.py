"""The company check of the documents stage: every company a question names is one the library holds, or the
question is not answered from another company's filings.

:func:`unlisted_companies` (intent) finds the names standing where a company stands that no loaded company answers
to. Such a name is still a loaded company's when that company's filings are the ones that use it: "AMEX" is
printed in American Express's filings and nobody else's (:data:`ALIAS_MIN_CHUNKS`, :data:`ALIAS_MIN_SHARE`).
Otherwise it is a company the library does not hold; a question that names no loaded company then ends "Tesla is
not in the library" instead of being answered from whatever filing retrieval ranks first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.intent.issuers import unlisted_companies
from engine.records import IssuerRef, QueryIntent
from engine.store.library import Library

__all__ = ["ALIAS_MIN_CHUNKS", "ALIAS_MIN_SHARE", "CompanyCheck", "check_companies"]

# a name is a loaded company's own when its filings print it in at least this many passages, and hold at least
# this share of the library's passages that print it (competitors and customers are named by several companies)
ALIAS_MIN_CHUNKS = 5
ALIAS_MIN_SHARE = 0.8


@dataclass(frozen=True)
class CompanyCheck:
    intent: QueryIntent  # the question's intent, a name taken for a loaded company's added to its issuers
    note: str  # what the check found, as the documents stage's trace shows it
    missing: tuple[str, ...] = ()  # names of companies the library does not hold

    @property
    def refusal(self) -> str:
        """The answer when the question names only companies the library does not hold ("" otherwise)."""
        if not self.missing or self.intent.issuers:
            return ""
        names = " and ".join(self.missing)
        return f"{names} {'is' if len(self.missing) == 1 else 'are'} not in the library: load the filings first"


def check_companies(intent: QueryIntent, library: Library, refs: Sequence[IssuerRef]) -> CompanyCheck:
    """Which loaded companies the question names, and which names no loaded company answers to."""
    names = unlisted_companies(intent.question, refs)
    issuers, notes, missing = list(intent.issuers), [], []
    for name in names:
        usage = library.word_mentions(name)
        total = sum(usage.values())
        owner = max(usage, key=usage.__getitem__) if usage else None
        if owner is not None and usage[owner] >= ALIAS_MIN_CHUNKS and usage[owner] >= ALIAS_MIN_SHARE * total:
            notes.append(f"{name!r} taken for {owner} (printed in {usage[owner]} of its passages, "
                         f"{total - usage[owner]} of other companies')")
            if owner not in issuers:
                issuers.append(owner)
        else:
            missing.append(name)
            notes.append(f"{name!r} is no loaded company")
    if intent.issuers:
        notes.insert(0, f"names {', '.join(intent.issuers)}")
    elif not names:
        notes.insert(0, "names no company: all filings")
    return CompanyCheck(replace(intent, issuers=tuple(issuers)), "; ".join(notes), tuple(missing))
