"""Which of the library's companies a question names: by name, alias, ticker, or the first word of a
multi-word name; possessives and legal suffixes ("Inc.", "Corp", "Company") are ignored.

Decisions worth knowing:
- A ticker matches only as written in capitals (one of four or more letters also title-cased mid-sentence,
  "Nike" for NIKE), so "on", "it", "all" in prose never name ON, IT or ALL; a one-letter ticker never.
- A name of two words joined by "&" or "and" ("Johnson & Johnson", "Procter & Gamble") is also said by its
  initials: "J&J", "J & J", "JnJ", "P&G" (capital initials only). Other nicknames ("Amex") match only when the
  library lists them among the issuer's names; no rule derives a nickname from a ticker.
- Two library keys matching the same words (AMZN and AMAZON on "Amazon") count as one company.
- Where names overlap, the longest wins: "Johnson Controls" names Johnson Controls, not also Johnson & Johnson
  by the first word of its name.
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


@lru_cache(maxsize=65536)  # every company of a LOFin-size library (about 6,000) stays compiled
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


def _lead(text: str) -> str:
    """The first three characters of a text's first run of letters and digits, lowercased: every pattern of
    :func:`_issuer_patterns` starts with the lead of one of its names, so a question holding none of a company's
    leads cannot name it."""
    run = re.search(r"[a-z0-9]+", text.lower())
    return run[0][:3] if run else ""


@lru_cache(maxsize=8)
def _issuer_index(issuers: tuple[IssuerRef, ...]) -> tuple[dict[str, list[int]], list[int]]:
    """Lead → the issuers (by position) one of whose names starts with it; and the issuers always tried (a name
    said by its initials, "J&J")."""
    by_lead: dict[str, list[int]] = {}
    always: list[int] = []
    for order, ref in enumerate(issuers):
        leads = set()
        for raw in (ref.key, *ref.names):
            if _ampersand_initials(raw) is not None:
                always.append(order)
            toks = [t for t in _norm(raw).split() if t]
            toks = [t for t in toks[toks[:1] == ["the"]:] if t != "and"]
            leads |= {_lead(raw), toks[0][:3] if toks else ""}
        for lead in leads - {""}:
            by_lead.setdefault(lead, []).append(order)
    return by_lead, sorted(set(always))


def _candidates(question: str, issuers: Sequence[IssuerRef]) -> list[int]:
    """The issuers the question may name (by position): those with a lead among the question's words."""
    by_lead, always = _issuer_index(tuple(issuers))
    leads = {w[:3] for w in re.findall(r"[a-z0-9]+", question.lower())}
    return sorted(set(always).union(*(by_lead.get(lead, ()) for lead in leads)))


def match_issuers(question: str, issuers: Sequence[IssuerRef]) -> tuple[tuple[str, ...], int]:
    """Matched keys in order of first mention, and how many distinct companies were mentioned. Only the issuers
    whose names could start in the question are tried (:func:`_candidates`): a library of thousands of companies
    costs a question what a few cost."""
    hits = _hits(question, issuers)
    groups: list[set[str]] = []  # keys whose mentions overlap (AMZN and AMAZON on "Amazon") are one company
    for start, end, _, key in hits:
        same = {k for s, e, _, k in hits if s < end and start < e} | {key}
        for g in [g for g in groups if g & same]:
            groups.remove(g)
            same |= g
        groups.append(same)
    return tuple(dict.fromkeys(h[3] for h in hits)), len(groups)


def issuer_spans(question: str, issuers: Sequence[IssuerRef]) -> list[tuple[int, int, str]]:
    """(start, end, key) of every mention of a library company in ``question`` (see :func:`match_issuers`)."""
    return [(start, end, key) for start, end, _, key in _hits(question, issuers)]


def _hits(question: str, issuers: Sequence[IssuerRef]) -> list[tuple[int, int, int, str]]:
    norm, hits = _norm(question), list[tuple[int, int, int, str]]()
    for order in _candidates(question, issuers):
        ref = issuers[order]
        for rx, on_original, check in _issuer_patterns(ref.key, tuple(ref.names)):
            for m in rx.finditer(question if on_original else norm):
                before = question[: m.start()].rstrip()
                initial = not before or before[-1] in ".?!:;\"“("
                if not (check == "cap" and not question[m.start()].isupper() or check == "mid" and initial):
                    hits.append((m.start(), m.end(), order, ref.key))
    # the most specific name said wins: "Johnson Controls" is not also Johnson & Johnson by its first word, nor
    # "Northwind Housewares" every other "Northwind …"; one name matching two keys (AMZN and AMAZON) keeps both
    hits = [h for h in hits if not any(s <= h[0] and h[1] <= e and e - s > h[1] - h[0] for s, e, _, k in hits
                                       if k != h[3])]
    hits.sort()
    return hits


# --- companies the library does not hold ------------------------------------------------------------------

# capitalised words that name no company: periods, filing structure, accounting and market terms
_NOT_A_NAME_WORDS = """
january february march april may june july august september october november december fy fiscal year years
quarter quarters q1 q2 q3 q4 h1 h2 ytd ttm form item items part note notes schedule exhibit section annual
quarterly report reports statement statements sheet sheets gaap non-gaap ifrs us u.s. usa usd sec ceo cfo coo
board covid covid-19 total net gross operating income revenue revenues sales cost costs cash flow flows balance
consolidated earnings per share shares eps ebit ebitda ebitdar capex fcf r&d sg&a p&l dpo dso dio roa roe roic
yoy what which how why when where who whom whose does do did is was were are has have had will would can could
should based using given according among between in on of for from by at to and or the a an if as with
its their it this that these those please answer round calculate compute give list describe explain
management md&a risk factors here there let
"""
_NOT_A_NAME = frozenset(_NOT_A_NAME_WORDS.split())
_NAME_TOKEN = r"(?:[A-Z][A-Za-z0-9&.\-]*|[0-9]+[A-Z][A-Za-z0-9&\-]*)"
_NAME_RUN = re.compile(rf"{_NAME_TOKEN}(?:(?:\s+|\s*&\s*){_NAME_TOKEN})*")
_LEGAL = re.compile(r"(?:Inc|Incorporated|Corp|Corporation|Co|Company|Ltd|Limited|plc|PLC|LLC|Holdings|N\.V|S\.A|AG)"
                    r"\b\.?$")
_PERIOD_WORD = re.compile(r"(?:fy|q[1-4]|h[12])?['’]?\d{2,4}(?:q[1-4]|h[12])?s?|10-[kq]|8-k", re.IGNORECASE)
# a name in a company's place: "Tesla's", "for Tesla?", "does Tesla have", "of Tesla in FY2022"
_SUBJECT_BEFORE = re.compile(r"\b(?:did|does|do|has|have|had|is|was|were|will|can|could|that|which)\s*$",
                             re.IGNORECASE)
_OBJECT_BEFORE = re.compile(r"\b(?:for|of|at|by|from|about|between|and|vs\.?|versus)\s*$", re.IGNORECASE)
_OBJECT_AFTER = re.compile(r"(?:$|[.,?;:!)]|(?:in|for|during|over|as|on|at|and|vs|versus|compared|relative|"
                           r"fiscal|FY|Q[1-4]|20\d\d|19\d\d|will|would|has|had|have|is|was|were|did|does|[a-z]+ed)\b)")


def _not_a_name(word: str) -> bool:
    w = word.lower().rstrip(".")
    return w in _NOT_A_NAME or _PERIOD_WORD.fullmatch(w) is not None


def unlisted_companies(question: str, issuers: Sequence[IssuerRef]) -> tuple[str, ...]:
    """Names the question gives in a company's place that none of the library's companies answers to.

    A run of capitalised words is a company's name where a company stands: possessive ("Tesla's"), before a legal
    suffix ("Rivian Automotive Inc"), after "for"/"of"/"between" at the end of a clause ("... for Tesla?"), or as
    the subject of "does"/"did"/"has" ("Does Tesla pay a dividend?"). Words of periods, filings and accounting
    ("FY2022", "Form 10-K", "Total Revenue") are no name; nor is a run the library's issuers match (see
    :func:`match_issuers`).
    """
    text = " ".join(question.split())
    found: list[str] = []
    for m in _NAME_RUN.finditer(text):
        words, start = m[0].split(), m.start()
        while words and _not_a_name(words[0]):  # "Does Tesla": the name starts after the question word
            start = text.index(words[0], start) + len(words[0])
            words.pop(0)
        suffix = re.match(r"\s*,\s*([A-Za-z.]+)", text[m.end():])  # "Tesla, Inc."
        legal = suffix is not None and _LEGAL.match(suffix[1]) is not None
        while words and _LEGAL.match(words[-1]):  # "Tesla Inc": the suffix says it is a company
            words.pop()
            legal = True
        if not words or all(_not_a_name(w) for w in words):
            continue
        before, after = text[:start], text[m.end():]
        possessive = re.match(r"['’](?:s\b|\s|$)", after) is not None
        initial = not before.strip() or before.rstrip()[-1] in ".?!:;\"“("
        placed = possessive or legal or _SUBJECT_BEFORE.search(before) is not None or (
            _OBJECT_BEFORE.search(before) is not None and _OBJECT_AFTER.match(after.lstrip()) is not None)
        if not placed or (initial and not (possessive or legal)):
            continue
        name = " ".join(words)
        if not any(match_issuers(f"{lead}{name}", issuers)[0] for lead in ("", "of ")):
            found.append(name)
    return tuple(dict.fromkeys(found))
