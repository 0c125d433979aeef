"""Which of the library's companies a question names: by name, alias, ticker, or the first word of a
multi-word name; possessives and legal suffixes ("Inc.", "Corp", "Company") are ignored.

Decisions worth knowing:
- A ticker matches only as written in capitals (one of four or more letters also title-cased mid-sentence,
  "Nike" for NIKE), so "on", "it", "all" in prose never name ON, IT or ALL; a one-letter ticker never.
- A name of two words joined by "&" or "and" ("Johnson & Johnson", "Procter & Gamble") is also said by its
  initials: "J&J", "J & J", "JnJ", "P&G" (capital initials only). Other nicknames ("Amex") match only when the
  library lists them among the issuer's names; no rule derives a nickname from a ticker.
- Two library keys matching the same words (AMZN and AMAZON on "Amazon") count as one company.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from engine.records import IssuerRef

_SUFFIXES = frozenset({"inc", "incorporated", "corp", "corporation", "co", "company", "companies", "ltd",
                      "limited", "plc", "llc", "lp", "nv", "sa", "ag", "se", "com", "and", "the", "holdings"})
_GENERIC = frozenset({"american", "general", "united", "first", "national", "international", "global", "new",
                     "southern", "northern", "eastern", "western", "public", "royal", "great", "china",
                     "japan", "texas", "pacific", "atlantic", "central", "consolidated", "standard",
                     "universal", "premier", "applied", "advanced", "digital", "energy", "capital",
                     "financial", "health", "home", "life", "micro", "power", "world"})


def _norm(text: str) -> str:
    """Lowercase, possessives and punctuation to spaces; keeps length so positions stay comparable."""
    text = re.sub(r"(?<=\w)['’]s\b", "  ", text)
    low = text.lower()
    if len(low) != len(text):  # a few characters (e.g. "İ") lengthen when lowercased
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return re.sub(r"[^a-z0-9]", " ", low)


@lru_cache(maxsize=4096)
def _issuer_patterns(key: str, names: tuple[str, ...]) -> tuple[tuple[re.Pattern[str], bool, str], ...]:
    """(pattern, on_original_text, check) per name; check "cap": capitalised, "mid": not sentence-initial."""
    pats: list[tuple[re.Pattern[str], bool, str]] = []
    for raw in dict.fromkeys(n.strip() for n in (key, *names) if n.strip()):
        if re.fullmatch(r"[A-Z0-9][A-Z0-9.&\-]{1,4}", raw) and re.search(r"[A-Z]", raw):
            # a bare ticker-like token matches only in uppercase, so "on"/"it"/"all" in prose never do
            pats.append((re.compile(rf"(?<![A-Za-z0-9]){re.escape(raw)}(?![A-Za-z0-9])"), True, ""))
            if raw.isalpha() and len(raw) >= 4:  # "NIKE" matches "Nike" mid-sentence; "Cost of" isn't COST
                title = re.escape(raw.title())
                pats.append((re.compile(rf"(?<![A-Za-z0-9]){title}(?![A-Za-z0-9])"), True, "mid"))
            continue
        if (initials := _ampersand_initials(raw)) is not None:
            a, b = initials
            pats.append((re.compile(rf"(?<![A-Za-z0-9]){a}(?:\s?&\s?|n){b}(?![A-Za-z0-9])"), True, ""))
        toks = _norm(raw).split()
        while toks and toks[-1] in _SUFFIXES:
            toks.pop()
        toks = [t for t in toks[toks[:1] == ["the"]:] if t != "and"]
        if len(toks) > 1 and len(toks[0]) >= 5 and toks[0].isalpha() and toks[0] not in _GENERIC:
            # "Costco Wholesale" is said "Costco", "Lockheed Martin" "Lockheed"
            pats.append((re.compile(rf"\b{toks[0]}\b"), False, "cap"))
        joined = "".join(toks)
        if len(joined) < 3 and not (len(joined) == 2 and any(c.isdigit() for c in joined)):
            continue
        if len(toks) == 1 and len(joined) >= 6:  # "AMERICANEXPRESS" also matches "American Express"
            body = r"\s?".join(map(re.escape, joined))
        else:
            body = r"\s+(?:and\s+)?".join(map(re.escape, toks))
        short = len(toks) == 1 and joined.isalpha() and len(joined) <= 5  # "Block" the company, not "block"
        pats.append((re.compile(rf"\b{body}\b"), False, "cap" if short else ""))
    return tuple(pats)


def _ampersand_initials(name: str) -> tuple[str, str] | None:
    """The capital initials of a two-word name joined by "&" or "and" ("Johnson & Johnson Inc." -> J, J)."""
    words = name.replace("&", " & ").split()
    while words and _norm(words[-1]).strip() in _SUFFIXES - {"and"}:
        words.pop()
    if len(words) == 3 and words[1].lower() in ("&", "and") and words[0][0].isalpha() and words[2][0].isalpha():
        return words[0][0].upper(), words[2][0].upper()
    return None


def match_issuers(question: str, issuers: Sequence[IssuerRef]) -> tuple[tuple[str, ...], int]:
    """Matched keys in order of first mention, and how many distinct companies were mentioned."""
    norm, hits = _norm(question), list[tuple[int, int, int, str]]()
    for order, ref in enumerate(issuers):
        for rx, on_original, check in _issuer_patterns(ref.key, tuple(ref.names)):
            for m in rx.finditer(question if on_original else norm):
                before = question[: m.start()].rstrip()
                initial = not before or before[-1] in ".?!:;\"“("
                if not (check == "cap" and not question[m.start()].isupper() or check == "mid" and initial):
                    hits.append((m.start(), m.end(), order, ref.key))
    hits.sort()
    groups: list[set[str]] = []  # keys whose mentions overlap (AMZN and AMAZON on "Amazon") are one company
    for start, end, _, key in hits:
        same = {k for s, e, _, k in hits if s < end and start < e} | {key}
        for g in [g for g in groups if g & same]:
            groups.remove(g)
            same |= g
        groups.append(same)
    return tuple(dict.fromkeys(h[3] for h in hits)), len(groups)
