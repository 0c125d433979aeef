"""The folio a page prints: the "46" at the foot or head of a 10-K page, often not the PDF reader's page
number (a cover page and a table of contents come before page 1; exhibits start again).

It is read from the page text: the first or the last non-empty line, where headers and footers sit once the
PDF reader has put rows in reading order, in one of a few forms: a bare number ("46", "iv", "F-3"),
"Page 46", "- 46 -", "46 | Company" or "Company | 2019 Form 10-K | 46". A number found that way is kept only
when a nearby page prints the number that continues the sequence (a page two further on printing 48), so a
year or an amount that happens to end a page is not taken for a folio. When in doubt, nothing is stored: a
page without a folio is cited by the reader's number alone.

Only the page text is needed, so folios are read again from the stored pages of a library (no file is
opened): :func:`engine.ingest.runner.refresh_folios`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["FOLIO_VERSION", "printed_folios"]

# a new reader of folios re-reads them from the stored pages (refresh_folios); folio-2: a section's name before the
# folio ("Other Key Information  40")
FOLIO_VERSION = "folio-2"

_NEIGHBOURS = 3  # how many pages away a page confirming a folio may be
_ARABIC = r"[1-9]\d{0,3}"
_ROMAN_LOWER = r"(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})"
_NUMBER = rf"(?:[A-Z]-{_ARABIC}|{_ARABIC}|{_ROMAN_LOWER}|{_ROMAN_LOWER.upper()})"
_DASHES = "-\u2013\u2014"
_FORMS = tuple(re.compile(form) for form in (
    rf"(?P<n>{_NUMBER})",  # 46
    rf"(?i:page)\s+(?P<n>{_NUMBER})(?:\s+(?i:of)\s+\d+)?",  # Page 46, Page 46 of 120
    rf"[{_DASHES}]\s*(?P<n>{_NUMBER})\s*[{_DASHES}]",  # - 46 -
    rf"(?P<n>{_NUMBER})\s+\|\s+\S.*",  # 46 | Company
    rf"\S.*\s\|\s+(?P<n>{_NUMBER})",  # Company | 2019 Form 10-K | 46
))
# a section's name, then the folio set apart by a wider gap than a word's: "Other Key Information  40" (read on the
# line as printed, before its spaces are collapsed)
_NAMED = re.compile(rf"[A-Za-z][A-Za-z &,'’.-]*[A-Za-z] {{2,}}(?P<n>{_ARABIC})")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}

Folio = tuple[str, int, str]  # (sequence: "arabic", "roman", "roman-upper" or "F-"; its value; as printed)


def _roman(text: str) -> int:
    values = [_ROMAN_VALUES[c] for c in text.lower()]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


def _folio(line: str) -> Folio | None:
    """The folio a header or footer line prints, if it has one of the forms above."""
    named = _NAMED.fullmatch(line.strip())
    line = " ".join(line.split())
    for form in _FORMS:
        m = form.fullmatch(line)
        if m is None:
            continue
        n = m["n"]
        if n[0].isdigit():
            return ("arabic", int(n), n)
        if "-" in n:
            prefix, number = n.split("-")
            return (f"{prefix}-", int(number), n)
        return ("roman" if n.islower() else "roman-upper", _roman(n), n)
    return ("arabic", int(named["n"]), named["n"]) if named else None


def _candidates(text: str) -> list[Folio]:
    """The folios the page's first and last non-empty lines print (none, one or two)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    ends = [lines[0]] if len(lines) == 1 else [lines[0], lines[-1]]
    return [f for f in map(_folio, ends) if f is not None]


def printed_folios(pages: Sequence[str]) -> tuple[str | None, ...]:
    """The folio each page prints (as printed: "46", "iv", "F-3"), or None where none is found or it is not
    confirmed: a folio is kept only when a page at most three pages away prints one of the same kind that
    continues it (46 on this page, 48 two pages on). One-page documents therefore get none."""
    found = [_candidates(text) for text in pages]
    out: list[str | None] = []
    for i, candidates in enumerate(found):
        confirmed = {f for f in candidates if _continued(found, i, f)}
        out.append(confirmed.pop()[2] if len({f[2] for f in confirmed}) == 1 else None)
    return tuple(out)


def _continued(found: list[list[Folio]], i: int, folio: Folio) -> bool:
    kind, value, _ = folio
    for j in range(max(0, i - _NEIGHBOURS), min(len(found), i + _NEIGHBOURS + 1)):
        if j != i and any(k == kind and v - value == j - i for k, v, _ in found[j]):
            return True
    return False
