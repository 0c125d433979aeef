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
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.records import IssuerRef
from engine.settings import RESOURCES_DIR

if TYPE_CHECKING:
    from engine.store.library import Library

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
def _issuer_patterns(key: str, names: tuple[str, ...], strict: bool = False
                     ) -> tuple[tuple[re.Pattern[str], bool, str], ...]:
    """(pattern, on_original_text, check) per name; check "cap": capitalised, "mid": not sentence-initial.

    ``strict`` (a well-known issuer the library does not hold, :func:`known_issuers`): every name must be written
    capitalised, a name is not said by its first word, a ticker only in capitals and never one that
    ``not_names.txt`` lists ("IT" is no Gartner)."""
    pats: list[tuple[re.Pattern[str], bool, str]] = []
    for raw in dict.fromkeys(n.strip() for n in (key, *names) if n.strip()):
        if is_ticker(raw):
            if strict and raw.lower() in not_names():
                continue
            # a bare ticker-like token matches only in uppercase, so "on"/"it"/"all" in prose never do
            pats.append((re.compile(rf"(?<![A-Za-z0-9]){re.escape(raw)}(?![A-Za-z0-9])"), True, ""))
            if raw.isalpha() and len(raw) >= 4 and not strict:  # "NIKE" matches "Nike" mid-sentence; "Cost of" isn't COST
                title = re.escape(raw.title())
                pats.append((re.compile(rf"(?<![A-Za-z0-9]){title}(?![A-Za-z0-9])"), True, "mid"))
            continue
        if (initials := _ampersand_initials(raw)) is not None:
            a, b = initials
            pats.append((re.compile(rf"(?<![A-Za-z0-9]){a}(?:\s?&\s?|n){b}(?![A-Za-z0-9])"), True, ""))
        toks = full = _norm(raw).split()
        while toks and toks[-1] in _SUFFIXES:
            toks = toks[:-1]
        # the name's own suffixes may be written after it ("Perla Holdings" of PERLA HOLDINGS INC): part of the mention
        tail = "".join(rf"(?:\s+{re.escape(t)})?" for t in full[len(toks):] if t != "and")
        toks = [t for t in toks[toks[:1] == ["the"]:] if t != "and"]
        if strict and all(_not_a_name(t) for t in toks):  # "Q2 Holdings" is not said "Q2"
            toks = [t for t in full[full[:1] == ["the"]:] if t != "and"]
            if all(_not_a_name(t) for t in toks):
                continue
        if len(toks) > 1 and len(toks[0]) >= 5 and toks[0].isalpha() and toks[0] not in _GENERIC and not strict:
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
        pats.append((re.compile(rf"\b{body}{tail}\b"), False, "cap" if short or strict else ""))
    return tuple(pats)


def is_ticker(name: str) -> bool:
    """A name written as a trading symbol: two to five capitals and digits ("MMM", "BRK.B", "3M")."""
    return re.fullmatch(r"[A-Z0-9][A-Z0-9.&\-]{1,4}", name) is not None and re.search(r"[A-Z]", name) is not None


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


def _hits(question: str, issuers: Sequence[IssuerRef], strict: bool = False) -> list[tuple[int, int, int, str]]:
    norm, hits = _norm(question), list[tuple[int, int, int, str]]()
    for order in _candidates(question, issuers):
        ref = issuers[order]
        for rx, on_original, check in _issuer_patterns(ref.key, tuple(ref.names), strict):
            for m in rx.finditer(question if on_original else norm):
                before = question[: m.start()].rstrip()
                initial = not before or before[-1] in ".?!:;\"“("
                if not (check == "cap" and question[m.start()].islower() or check == "mid" and initial):
                    hits.append((m.start(), m.end(), order, ref.key))
    # the most specific name said wins: "Johnson Controls" is not also Johnson & Johnson by its first word, nor
    # "Northwind Housewares" every other "Northwind …", nor "Perla Holdings" also "Perla" alone; one name matching two
    # keys (AMZN and AMAZON) keeps both
    hits = [h for h in hits if not any(s <= h[0] and h[1] <= e and e - s > h[1] - h[0] for s, e, _, _ in hits)]
    hits.sort()
    return hits


# --- companies the library does not hold ------------------------------------------------------------------

_COMPANIES = RESOURCES_DIR / "companies"


@lru_cache(maxsize=1)
def not_names() -> frozenset[str]:
    """Words that never name a company, lowercased (``resources/companies/not_names.txt``)."""
    text = (_COMPANIES / "not_names.txt").read_text(encoding="utf-8")
    return frozenset(w for line in text.splitlines() for w in line.split("#", 1)[0].lower().split())


@lru_cache(maxsize=1)
def nicknames() -> dict[str, tuple[str, ...]]:
    """The names analysts call a company by that are not its name (``resources/companies/nicknames.tsv``): the
    company's name without case, punctuation and legal suffixes -> its nicknames."""
    out: dict[str, tuple[str, ...]] = {}
    for line in (_COMPANIES / "nicknames.tsv").read_text(encoding="utf-8").splitlines():
        if line.startswith(("#", "name\t")) or not line.strip():
            continue
        name, said = line.split("\t")
        out[_core(name)] = tuple(n.strip() for n in said.split(",") if n.strip())
    return out


def is_nickname(name: str) -> bool:
    """Whether ``name`` is a nickname of nicknames.tsv ("Amex"): a company is named by it, never shown by it."""
    return any(name in said for said in nicknames().values())


def _with_nicknames(ref: IssuerRef) -> IssuerRef:
    """The ref with the nicknames of any of its names."""
    extra = [n for name in (ref.key, *ref.names) for n in nicknames().get(_core(name), ()) if n not in ref.names]
    return IssuerRef(ref.key, tuple(dict.fromkeys((*ref.names, *extra)))) if extra else ref


@lru_cache(maxsize=1)
def known_issuers() -> tuple[IssuerRef, ...]:
    """The well-known issuers a question may name (``resources/companies/known_issuers.tsv``, written by
    ``scripts/known_issuers.py`` from the pytickersymbols package: the components of the major stock indices).
    Key: the name; names: the name, its ASCII spelling ("Estee Lauder"), its US tickers and former tickers."""
    refs = []
    for line in (_COMPANIES / "known_issuers.tsv").read_text(encoding="utf-8").splitlines()[2:]:
        name, tickers, former, _ = line.split("\t")
        plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        refs.append(_with_nicknames(IssuerRef(name, tuple(dict.fromkeys(
            n for n in (name, plain, *tickers.split(","), *former.split(",")) if n)))))
    return tuple(refs)


def _core(name: str) -> str:
    """A name without case, punctuation, "the" and legal suffixes: "AMAZON.COM, INC." and "Amazon" are "amazon"."""
    toks = _norm(name).split()
    while toks and toks[-1] in _SUFFIXES:
        toks.pop()
    return "".join(t for t in toks if t not in ("the", "and"))


@lru_cache(maxsize=8)
def with_known(issuers: tuple[IssuerRef, ...], known: tuple[IssuerRef, ...] | None = None
               ) -> tuple[tuple[IssuerRef, ...], tuple[IssuerRef, ...]]:
    """The library's companies, each with the names and tickers of the well-known issuer it is, and the well-known
    issuers the library does not hold.

    A well-known issuer is a library company when a name of each is the same once case, punctuation and legal
    suffixes are dropped ("THE COCA-COLA COMPANY" and "The Coca-Cola Company"; "AMAZON.COM, INC." and "Amazon"),
    or when they share a ticker and one's name (or the library's key) begins the other's ("Costco Wholesale
    Corporation" and "Costco", COST; BLOCK and "Block, Inc.", SQ). A ticker alone links nothing: a fictional or
    foreign company may trade under a real one's symbol.
    """
    known = known_issuers() if known is None else known
    by_core: dict[str, set[int]] = {}
    by_ticker: dict[str, set[int]] = {}
    for order, ref in enumerate(known):
        for name in (ref.key, *ref.names):
            (by_ticker if is_ticker(name) else by_core).setdefault(
                name if is_ticker(name) else _core(name), set()).add(order)
    linked: set[int] = set()
    out = []
    for ref in issuers:
        names = (ref.key, *ref.names)
        cores = {_core(n) for n in names if not is_ticker(n)} - {""}
        same = set().union(*(by_core.get(c, ()) for c in cores))
        keyed = cores | {_core(ref.key)}  # with a shared ticker, a file-name key is a name too ("BLOCK", SQ)
        for ticker in (n for n in names if is_ticker(n)):
            same |= {k for k in by_ticker.get(ticker, ()) if any(a.startswith(b) or b.startswith(a) for a in keyed
                                                                 for b in (_core(n) for n in known[k].names
                                                                           if not is_ticker(n)) if b)}
        linked |= same
        extra = [n for k in sorted(same) for n in (known[k].key, *known[k].names) if n not in names]
        out.append(IssuerRef(ref.key, tuple(dict.fromkeys((*ref.names, *extra)))) if extra else ref)
    return tuple(out), tuple(ref for order, ref in enumerate(known) if order not in linked)


@dataclass(frozen=True)
class CompanyMention:
    """Words of a question that name a company, and which."""

    text: str  # as the question writes it
    key: str | None = None  # the library company they name
    known: str | None = None  # else the well-known issuer they name, which the library does not hold
    # capitalised words or a ticker-like word that nobody answers to, in no company's place ("its Services
    # segment", "AWS"): a segment, a product or an event beside a named company, a company only where none is named
    weak: bool = False

    def describe(self) -> str:
        """The mention as a refusal names it: "AES (AES Corporation)", "'XYZQ'"."""
        if self.known is not None:
            return self.known if _core(self.known) == _core(self.text) else f"{self.text} ({self.known})"
        return self.key or repr(self.text)


_TICKERISH = re.compile(r"(?<![\w&.$/-])[A-Z]{2,5}(?![\w&/-]|\.\w)")


def company_mentions(question: str, issuers: Sequence[IssuerRef]) -> tuple[CompanyMention, ...]:
    """Every company the question names, in order: a library company (by any of its names or tickers, the
    well-known issuer's it is included, :func:`with_known`), a well-known issuer the library does not hold, or a
    name nobody answers to (a capitalised name where a company stands, :func:`unlisted_companies`; a ticker-like
    word of two to five capitals that is no word of ``not_names.txt``, of the metric lexicon, written in
    parentheses after what it abbreviates, or one of a question written in capitals).

    Where mentions overlap, the longest wins across both lists ("Johnson Controls" is not Johnson & Johnson by
    its first word); on the same words the library's company wins.
    """
    from engine.vocab.lexicon import lexicon_spans

    text = " ".join(question.split())
    library, absent = with_known(tuple(issuers))
    own, known = _hits(text, library), _hits(text, absent, strict=True)
    known = [h for h in known if not any(s <= h[0] and h[1] <= e for s, e, _, _ in own)]
    own = [h for h in own if not any(s <= h[0] and h[1] <= e and e - s > h[1] - h[0] for s, e, _, _ in known)]
    found = [(s, e, CompanyMention(text[s:e], key=k)) for s, e, _, k in own]
    found += [(s, e, CompanyMention(text[s:e], known=k)) for s, e, _, k in known]

    def free(start: int, end: int) -> bool:
        return not any(s < end and start < e for s, e, _ in found)

    for start, end, name in _unlisted_spans(text, library):
        if free(start, end):
            found.append((start, end, CompanyMention(name)))
    spans = [(s, e) for _, s, e in lexicon_spans(text)]
    words = text.split()
    if sum(w[:1].isupper() for w in words) <= 0.5 * len(words):  # a question in Title Case names nothing by case
        for start, end, name in _capitalised_spans(text):
            if free(start, end) and not any(s < end and start < e for s, e in spans):
                found.append((start, end, CompanyMention(name, weak=True)))
    letters = [c for c in text if c.isalpha()]
    if sum(c.isupper() for c in letters) <= 0.5 * len(letters):  # a question in capitals has no ticker-like word
        for m in _TICKERISH.finditer(text):
            aside = text[m.start() - 1:m.start()] == "(" and text[m.end():m.end() + 1] == ")"
            if (m[0].lower() not in not_names() and free(m.start(), m.end()) and not aside
                    and not any(s <= m.start() and m.end() <= e for s, e in spans)):
                found.append((m.start(), m.end(), CompanyMention(m[0], weak=True)))
    found.sort(key=lambda f: f[0])
    return tuple(dict.fromkeys(m for _, _, m in found))


_NAME_TOKEN = r"(?:[A-Z][A-Za-z0-9&.\-]*|[0-9]+[A-Z][A-Za-z0-9&\-]*)"
_NAME_RUN = re.compile(rf"(?<![\w&-]){_NAME_TOKEN}(?:(?:\s+|\s*&\s*){_NAME_TOKEN})*")
_LEGAL = re.compile(r"(?:Inc|Incorporated|Corp|Corporation|Co|Company|Ltd|Limited|plc|PLC|LLC|Holdings|N\.V|S\.A|AG)"
                    r"\b\.?$")
_PERIOD_WORD = re.compile(r"(?:fy|q[1-4]|h[12])?['’]?\d{2,4}(?:q[1-4]|h[12])?s?|10-[kq]|8-k", re.IGNORECASE)
# a name in a company's place: "Tesla's", "for Tesla?", "does Tesla have", "of Tesla in FY2022"
_SUBJECT_BEFORE = re.compile(r"\b(?:did|does|do|has|have|had|is|was|were|will|can|could|that|which)\s*$",
                             re.IGNORECASE)
_OBJECT_BEFORE = re.compile(r"\b(?:for|of|at|by|from|about|between|and|vs\.?|versus)\s*$", re.IGNORECASE)
_OBJECT_AFTER = re.compile(r"(?:$|[.,?;:!)]|(?:in|for|during|over|as|on|at|and|vs|versus|compared|relative|"
                           r"fiscal|FY|Q[1-4]|20\d\d|19\d\d|will|would|has|had|have|is|was|were|did|does|[a-z]+ed)\b)")


def _capitalised_spans(text: str) -> list[tuple[int, int, str]]:
    """Runs of capitalised words that stand where a name does: inside a sentence ("the change in Zordris gross
    margin"), or opening it before a year ("Vonquivara 2021 return on assets"); words of ``not_names.txt`` and
    periods are trimmed off the run's ends."""
    found = []
    for m in _NAME_RUN.finditer(text):
        words = m[0].split()
        while words and _not_a_name(words[0]):
            words.pop(0)
        while words and (_not_a_name(words[-1]) or _LEGAL.match(words[-1])):
            words.pop()
        if not words or not re.fullmatch(r"[A-Z][a-z][\w&.'-]*", words[0]):  # "XYZQ" is a ticker's, "3M" a code's
            continue
        start = text.index(words[0], m.start())
        before = text[:start].rstrip()
        initial = not before or before[-1] in ".?!:;\"“("
        if initial and not re.match(r"\s+(?:FY\s?)?['’]?\d{2,4}\b", text[start + len(" ".join(words)):]):
            continue
        found.append((start, start + len(" ".join(words)), " ".join(words)))
    return found


def _not_a_name(word: str) -> bool:
    w = word.lower().rstrip(".")
    return w in not_names() or _PERIOD_WORD.fullmatch(w) is not None


def unlisted_companies(question: str, issuers: Sequence[IssuerRef]) -> tuple[str, ...]:
    """Names the question gives in a company's place that none of the library's companies answers to.

    A run of capitalised words is a company's name where a company stands: possessive ("Tesla's"), before a legal
    suffix ("Rivian Automotive Inc"), after "for"/"of"/"between" at the end of a clause ("... for Tesla?"), or as
    the subject of "does"/"did"/"has" ("Does Tesla pay a dividend?"). Words of periods, filings and accounting
    ("FY2022", "Form 10-K", "Total Revenue") are no name; nor is a run the library's issuers match (see
    :func:`match_issuers`).
    """
    text = " ".join(question.split())
    return tuple(dict.fromkeys(name for _, _, name in _unlisted_spans(text, issuers)))


def _unlisted_spans(text: str, issuers: Sequence[IssuerRef]) -> list[tuple[int, int, str]]:
    """(start, end, name) of each name :func:`unlisted_companies` finds in ``text`` (whitespace already single)."""
    found: list[tuple[int, int, str]] = []
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
        start = text.index(words[0], start)
        before, after = text[:start], text[m.end():]
        possessive = re.match(r"['’](?:s\b|\s|$)", after) is not None
        initial = not before.strip() or before.rstrip()[-1] in ".?!:;\"“("
        placed = possessive or legal or _SUBJECT_BEFORE.search(before) is not None or (
            _OBJECT_BEFORE.search(before) is not None and _OBJECT_AFTER.match(after.lstrip()) is not None)
        if not placed or (initial and not (possessive or legal)):
            continue
        name = " ".join(words)
        if not any(match_issuers(f"{lead}{name}", issuers)[0] for lead in ("", "of ")):
            found.append((start, start + len(name), name))
    return found


def issuer_refs(library: Library) -> list[IssuerRef]:
    """One ref per company key of the library's filings, named by its filings' names, keys and tickers, by its
    registrant's names and shared ticker ("MMM" names 3M's 10-Ks from before covers printed a trading symbol) and by
    the well-known issuer it is (:func:`with_known`: "KO" names COCACOLA): what every reading of company names
    in the library is resolved against (questions, the Tables search)."""
    names: dict[str, set[str]] = {}
    registrant_of = {fid: r for r in library.registrants() for fid in r.filing_ids}
    for f in library.filings():
        i = f.identity
        key = i.company_key
        names.setdefault(key, set()).update(n for n in (i.registrant, i.ticker, i.issuer_key) if n)
        if (registrant := registrant_of.get(f.id)) is not None:
            names[key].update(n for n in (*registrant.names, registrant.ticker) if n)
    refs = tuple(_with_nicknames(IssuerRef(key, tuple(sorted(v, key=len, reverse=True)))) for key, v in names.items())
    return list(with_known(refs)[0])  # each with the names and tickers of the well-known issuer it is ("KO")
