"""Topic, relation, normalised temporal scope and named entities: the FinCards intent fields (Fig. 4) the rest of
the intent parser does not already give, worked out by rules from the lexicons of paper 002 (A.5), extended.

The same rules read a chunk's topic and entities for its evidence card (:mod:`engine.rerank.cards`), so a
question and a chunk are described in one vocabulary.

Decisions worth knowing:
- Relation is the first class that fires, in the order definition, policy, explanation, comparison, trend,
  lookup: "why did margin decline" is an explanation though "decline" is a trend word.
- Topic comes from the question's metrics first (revenue is Revenue, margins are Profitability), then words.
- Entities are geographies and named segments ("the Consumer segment"); companies are the intent's issuers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TOPICS = ("Risk", "ESG", "Market", "Revenue", "Profitability", "Liquidity", "Costs/Expenses", "Guidance/Outlook",
          "AccountingPolicy", "Legal", "MD&A", "FinancialStatements", "Other")
RELATIONS = ("lookup", "trend", "comparison", "explanation", "definition", "policy")

# canonical metric (engine.vocab.lexicon) -> topic
_METRIC_TOPIC = {
    "revenue": "Revenue", "revenue growth": "Revenue", "sales": "Revenue",
    "gross margin": "Profitability", "operating margin": "Profitability", "net profit margin": "Profitability",
    "ebitda margin": "Profitability", "ebitda": "Profitability", "ebit": "Profitability", "ebitdar": "Profitability",
    "gross profit": "Profitability", "operating income": "Profitability", "net income": "Profitability",
    "earnings per share": "Profitability", "return on assets": "Profitability", "return on equity": "Profitability",
    "return on invested capital": "Profitability", "effective tax rate": "Profitability",
    "cost of goods sold": "Costs/Expenses", "sales and marketing": "Costs/Expenses",
    "selling general and administrative": "Costs/Expenses", "research and development": "Costs/Expenses",
    "operating expenses": "Costs/Expenses", "depreciation and amortization": "Costs/Expenses",
    "interest expense": "Costs/Expenses",
}
_LIQUIDITY = ("cash", "ratio", "debt", "capital", "liquidity", "working", "payable", "receivable", "inventor",
              "turnover", "outstanding", "dividend", "assets", "liabilit", "equity", "property")
_WORD_TOPIC: tuple[tuple[str, str], ...] = (  # tried in order; the first that matches names the topic
    ("Guidance/Outlook", r"guidance|outlook|forecast|expects?\b|anticipat|projected|next (?:fiscal )?year|target"),
    ("Legal", r"litigation|lawsuit|\blegal\b|settlement|court|antitrust|investigation|regulator"),
    ("ESG", r"\besg\b|carbon|emissions?|climate|sustainab|diversity|greenhouse|environmental"),
    ("Risk", r"\brisks?\b|uncertaint|exposure|cyber|hedg"),
    ("AccountingPolicy", r"accounting polic|recogni[sz]e[sd]? revenue|revenue recognition|critical accounting|"
                         r"\bestimates?\b|impairment test|fair value"),
    ("Market", r"market share|competit|customers?\b|demand|pricing|industry|geograph"),
    ("Revenue", r"revenues?|net sales|\bsales\b"),
    ("Profitability", r"margin|profit|earnings|income|\beps\b"),
    ("Costs/Expenses", r"costs?\b|expenses?|spend|opex|sg&a|r&d"),
    ("Liquidity", r"liquidity|cash|debt|borrow|credit facilit|capital expenditure|capex|dividend|repurchase"),
    ("FinancialStatements", r"balance sheet|income statement|cash flow statement|statement of"),
    ("MD&A", r"management'?s discussion|results of operations|md&a"),
)
_WORD_TOPIC_RES = tuple((t, re.compile(p, re.IGNORECASE)) for t, p in _WORD_TOPIC)

_RELATION_RES = tuple((r, re.compile(p, re.IGNORECASE)) for r, p in (
    ("definition", r"\bdefin(?:e|ed|es|ition)\b|\bwhat (?:does|is meant by)\b.*\bmean\b|\bmeaning of\b"),
    ("policy", r"\bpolic(?:y|ies)\b|\baccount(?:s|ed|ing)? for\b|\brecogni[sz]es? revenue\b|\bmethod(?:ology)?\b"),
    ("explanation", r"\bwhy\b|\breasons?\b|\bdrivers?\b|\bdr(?:o|i)ve\b|\bdriven\b|\bcaus(?:e|ed|es)\b|\bexplain|"
                    r"\battribut|\bimpact(?:ed|s)?\b|\baffect(?:ed|s)?\b|\bdue to\b|\bcontribut|\binfluenc|"
                    r"\bled to\b|\bfactors? behind\b"),
    ("comparison", r"\bcompar|\bversus\b|\bvs\.?\b|\brelative to\b|\bhigher\b|\blower\b|\bwhich (?:of|one|segment|"
                   r"company|region)\b|\bbetween\b.+\band\b|\bmore than\b|\bless than\b"),
    ("trend", r"\bincreas|\bdecreas|\bdeclin|\bgr[eo]w|\bchang(?:e|ed|es)\b|\btrend|\byoy\b|\bqoq\b|"
              r"\byear[- ]over[- ]year\b|\bover the (?:past|last)\b|\bfrom (?:fy)?\d{4} to\b|\bcagr\b|\bdrop|\brise\b"),
))

_GEOGRAPHIES = (
    "United States", "U.S.", "US", "North America", "Latin America", "South America", "Americas", "Europe", "EMEA",
    "Asia Pacific", "APAC", "Asia", "Greater China", "China", "Japan", "India", "Canada", "Mexico", "Brazil",
    "United Kingdom", "U.K.", "Germany", "France", "Middle East", "Africa", "International", "Domestic",
)
_GEO_RE = re.compile(r"(?<![\w.])(" + "|".join(re.escape(g) for g in sorted(_GEOGRAPHIES, key=len, reverse=True))
                     + r")(?![\w])")
_SEGMENT_RE = re.compile(r"\b((?:[A-Z][\w&'-]*\s){0,3}[A-Z][\w&'-]*)\s+(?:segments?|divisions?|business units?|"
                         r"reportable segments?)\b")
# names listed before a plural part noun ("the Healthcare and Consumer segments", "its Americas, EMEA and APAC
# divisions"): each is a named part (the last is also read by _SEGMENT_RE)
_NAME = r"(?:[A-Z][\w&'-]*\s){0,3}[A-Z][\w&'-]*"
_SEGMENT_LIST_RE = re.compile(rf"\b((?:{_NAME}(?:,\s+|,?\s+(?:and|&)\s+))+){_NAME}\s+(?:segments|divisions|"
                              r"business units|reportable segments)\b")
_SEGMENT_STOP = {"The", "Our", "Each", "All", "Which", "What", "This", "That", "These", "Its", "Their", "Total",
                 "Other", "Operating", "Reportable", "Business", "In", "For", "By"}
_LATEST_Q = re.compile(r"\b(?:latest|most recent|last|current|recent)\s+(?:fiscal\s+)?(?:quarter|10-?q\b|"
                       r"quarterly (?:report|filing|results))", re.IGNORECASE)
_LATEST_Y = re.compile(r"\b(?:latest|most recent|last|current)\s+(?:fiscal\s+)?year|\b(?:latest|most recent|last)\s+"
                       r"(?:10-?k\b|annual)", re.IGNORECASE)


_STATEMENT_RES = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in (
    ("income statement", r"\bincome statements?\b|\bstatements? of (?:consolidated )?(?:operations|income|earnings)\b|"
                         r"\bp&l\b|\bprofit and loss\b"),
    ("balance sheet", r"\bbalance sheets?\b|\bstatements? of (?:consolidated )?financial (?:position|condition)\b"),
    ("cash flows", r"\bcash ?flows? statements?\b|\bstatements? of (?:consolidated )?cash ?flows?\b"),
    ("equity", r"\bstatements? of (?:changes in )?(?:stockholders|shareholders)['’]? equity\b"),
))


def statements_in(text: str) -> tuple[str, ...]:
    """The primary financial statements a text names, as the statement facts call them ("income statement",
    "balance sheet", "cash flows", "equity")."""
    return tuple(name for name, rx in _STATEMENT_RES if rx.search(text))


def topic_of(text: str, metrics: Sequence[str] = ()) -> str:
    """The FinCards topic of a question or chunk: from its metrics first, then from its words."""
    for m in metrics:
        if m in _METRIC_TOPIC:
            return _METRIC_TOPIC[m]
        if any(w in m for w in _LIQUIDITY):
            return "Liquidity"
    for topic, rx in _WORD_TOPIC_RES:
        if rx.search(text):
            return topic
    return "Other"


def relation_of(text: str, comparison: bool = False) -> str:
    """The question's relation: the first of definition, policy, explanation, comparison, trend that its words
    show; ``comparison`` (two companies or periods named) makes a lookup a comparison."""
    for rel, rx in _RELATION_RES:
        if rx.search(text):
            return rel
    return "comparison" if comparison else "lookup"


def names_a_geography(text: str) -> bool:
    """Whether ``text`` names a geography ("Asia Pacific", "MGM China", "Europe, Middle East and Africa")."""
    return _GEO_RE.search(text) is not None


def entities_in(text: str) -> tuple[str, ...]:
    """Geographies and named segments printed in a text, in order of appearance, each once."""
    found: list[tuple[int, str]] = [(m.start(), m.group(1)) for m in _GEO_RE.finditer(text)]
    for m in _SEGMENT_LIST_RE.finditer(text):
        for n in re.finditer(_NAME, m.group(1)):
            words = n.group(0).split()
            owner = [i for i, w in enumerate(words) if re.search(r"['’]s?$", w)]
            words = words[owner[-1] + 1:] if owner else words  # ("Acme's Americas": the company's part)
            while words and words[0] in _SEGMENT_STOP:
                words.pop(0)
            if words:
                found.append((m.start(1) + n.start(), " ".join(words)))
    for m in _SEGMENT_RE.finditer(text):
        words = m.group(1).split()
        while words and words[0] in _SEGMENT_STOP:
            words.pop(0)
        if words:
            found.append((m.start(1), " ".join(words)))
    out: dict[str, None] = {}
    for _, e in sorted(found):
        out.setdefault(e, None)
    return tuple(out)


def temporal_scope(text: str, annual_years: Sequence[int], quarters: Sequence[str],
                   quarter_run: int = 0, year_run: int = 0, since: int = 0) -> tuple[str, ...]:
    """Normalised periods: "FY2022" per whole year asked, the quarters ("2023Q2"), or "latest quarter" /
    "latest year" when the question asks for the most recent period without naming it; a run of quarters not named
    ("the last four quarters", "these quarters") adds "latest 4 quarters" / "each quarter", a run of years ("the
    last three fiscal years", "each year", "since FY2021") "latest 3 years" / "each year" / "since FY2021"."""
    out = [f"FY{y}" for y in annual_years] + list(quarters)
    if year_run:
        out.append(f"since FY{since}" if since else f"latest {year_run} years" if year_run > 0 else "each year")
    if quarter_run:
        out.append(f"latest {quarter_run} quarters" if quarter_run > 0 else "each quarter")
        if not quarters and not annual_years and _LATEST_Q.search(text):  # "the latest 10-Q relative to past quarters"
            out.append("latest quarter")
    if not out:
        if _LATEST_Q.search(text):
            out.append("latest quarter")
        elif _LATEST_Y.search(text):
            out.append("latest year")
    return tuple(out)
