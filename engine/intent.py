"""Deterministic query intent: what a question asks for, worked out before retrieval.

Rule-based and stdlib-only (the FinCards-style intent: entities, metrics, periods, numeric flag,
relation, keywords), so the same question always yields the same intent and the audit trace can show it.

Decisions worth knowing:
- Periods. ``fiscal_years`` holds every year the question concerns (stated, from a quarter, or implied);
  ``annual_years`` only those asked about as whole years, so "Q2 2023" gives fiscal_years (2023,) but
  period_labels ["2023Q2"]. "FY2017 - FY2019", "from FY2019 to FY2021" are inclusive ranges;
  "between 2019 and 2021" gives the two endpoints (a comparison of two periods). Two-digit years
  need a prefix (FY22, fiscal '22, Q1'23). Amounts ($2019, 2,019, 2018.5, 2019 million) are not years.
- Implied periods: a year-over-year question about one stated year adds the prior year; QoQ about one
  quarter adds the previous quarter; "3 year average ... FY2019" adds the two earlier years.
  With ``today_year``, "last year"/"this year"/"past N years" resolve when no year is stated.
- Quarters are "YYYYQn". "quarter ended June 30, 2023" maps by calendar month (the issuer's fiscal
  calendar is unknown here); "H1"/"six months ended June 30" map to Q2, the 10-Q that reports them.
- Forms are a soft hint: explicit 10-K/10-Q/8-K, "annual report" -> 10-K, a stated Q1-Q3 or "quarterly"
  -> 10-Q (Q4 alone implies none), "earnings/press release" -> "EARNINGS" (the corpus' form label).
- Yes/no questions are textual even when a number decides them; ``needs_calculation`` can still be true.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache


@dataclass(frozen=True)
class IssuerRef:
    """One company known to the library: its key and the names, tickers and aliases it goes by."""

    key: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueryIntent:
    """What a question demands of the evidence; see the module docstring for the period rules."""

    question: str
    issuers: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()
    fiscal_years: tuple[int, ...] = ()
    quarters: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    numeric: bool = False
    comparison: bool = False
    needs_calculation: bool = False
    unit_hint: str | None = None
    decimals: int | None = None
    keywords: tuple[str, ...] = ()
    annual_years: tuple[int, ...] | None = None  # None: derive from fiscal_years minus quarter years

    def to_dict(self) -> dict[str, object]:
        """JSON-serialisable form for the audit trace (tuples become lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


# --- metric lexicon --------------------------------------------------------------------------------
# canonical name -> surface forms (regex; a space matches any run of spaces or hyphens). Forms are tried
# longest first and a matched span is consumed, so "cost of sales" never also counts as "sales".
# None marks consumed non-metrics: statement names would otherwise read as "cash flow" or "income".
_CF = r"cash (?:flows? )?(?:(?:was |were )?(?:provided|generated|used) (?:by|from|in) |from )?"
_METRICS: tuple[tuple[str | None, str], ...] = (
    (None, r"cash flows? statements?|statements? of (?:consolidated )?(?:cash flows?|income|operations|"
     r"earnings|financial position)|income statements?|balance sheets?|p&l(?: statements?)?"),
    ("days payable outstanding", r"days payables? outstanding|dpo"),
    ("days sales outstanding", r"days sales outstanding|dso"),
    ("days inventory outstanding", r"days (?:of )?inventory(?: outstanding)?|dio"),
    ("inventory turnover", r"inventory turnover(?: ratio)?|(?:sold|turned over) (?:its |their )?inventory"),
    ("fixed asset turnover", r"fixed assets? turnover(?: ratio)?"),
    ("asset turnover", r"(?:total )?assets? turnover(?: ratio)?"),
    ("operating cash flow ratio", r"operating cash ?flow ratio"),
    ("interest coverage ratio", r"interest coverage(?: ratio)?|times interest earned"),
    ("quick ratio", r"quick ratio|acid test(?: ratio)?"),
    ("current ratio", r"current ratio"),
    ("debt to equity", r"debt to equity(?: ratio)?|leverage ratio"),
    ("return on assets", r"return on (?:total |average )?assets|roa"),
    ("return on equity", r"return on (?:average )?(?:common |shareholders'? |stockholders'? )?equity|roe"),
    ("return on invested capital", r"return on invested capital|roic"),
    ("dividend payout ratio", r"(?:dividend )?payout ratio"),
    ("free cash flow", r"free cash ?flows?|fcf"),
    ("cash from operations", rf"{_CF}operat(?:ing activities|ions)|operating cash ?flows?"),
    ("cash from investing", rf"{_CF}investing(?: activities)?|investing cash ?flows?"),
    ("cash from financing", rf"{_CF}financing(?: activities)?|financing cash ?flows?"),
    ("cash and equivalents", r"cash (?:and|&) (?:cash )?equivalents|cash balances?|cash on hand|"
     r"cash position"),
    ("capital expenditures", r"capital expenditures?|capex|capital spending|(?:purchases?|additions?|"
     r"payments?) (?:of|to|for) (?:property,? (?:plant,? )?(?:and|&) equipment|pp&e|ppe|fixed assets)"),
    ("property plant and equipment", r"property,? (?:plant,? )?(?:and|&) equipment|pp&e|ppne|ppe|fixed assets"),
    ("depreciation and amortization", r"depreciation,? (?:and|&) amortization|d&a|depreciation|amortization"),
    ("ebitda margin", r"ebitda (?:% )?margins?"),
    ("ebitdar", r"ebitdar"),
    ("ebitda", r"ebitda"),
    ("gross margin", r"gross (?:profit )?margins?"),
    ("operating margin", r"operating (?:profit )?margins?|ebit margins?"),
    ("net profit margin", r"net (?:profit|income|earnings) margins?|profit margins?|net margins?"),
    ("ebit", r"ebit"),
    ("gross profit", r"gross profits?"),
    ("operating income", r"operating (?:income|profits?|earnings|loss(?:es)?)|income from operations"),
    ("earnings per share", r"(?:diluted |basic )?(?:earnings|income|loss) per (?:common |diluted )?share|"
     r"eps"),
    ("net income", r"net (?:income|earnings|profits?|loss(?:es)?)|bottom line|"
     r"(?:profit|earnings) attributable"),
    ("cost of goods sold", r"costs? of (?:goods|products|merchandise) sold|costs? of (?:sales|revenues?)|"
     r"cogs"),
    ("sales and marketing", r"sales (?:and|&) marketing|marketing (?:and|&) advertising|advertising"),
    ("revenue", r"(?:total |net )*revenues?|(?:total |net )*sales|top ?line"),
    ("sg&a", r"sg&a|selling,? general,? (?:and|&) administrative(?: expenses?)?"),
    ("operating expenses", r"operating (?:expenses|costs|expenditures?)|opex|"
     r"operational (?:expenses|expenditures?|spending|costs)"),
    ("research and development", r"r&d|research (?:and|&) development"),
    ("interest expense", r"interest (?:expenses?|costs?)"),
    ("effective tax rate", r"effective (?:income )?tax rates?|income tax rates?|tax rates?|etr"),
    ("income tax expense", r"(?:provision for )?income tax(?:es| expense| provision)?|tax expense"),
    ("total assets", r"total assets"),
    ("current assets", r"(?:total )?current assets"),
    ("current liabilities", r"(?:total )?current liabilities"),
    ("total liabilities", r"total liabilities"),
    ("shareholders equity", r"(?:total )?(?:shareholders'?|stockholders'?) equity|book value"),
    ("working capital", r"(?:net )?working capital"),
    ("inventory", r"(?:merchandise )?inventor(?:y|ies)"),
    ("accounts receivable", r"(?:accounts|trade) receivables?|receivables"),
    ("accounts payable", r"(?:accounts|trade) payables?|payables"),
    ("debt", r"(?:total |long term |short term |net )?(?:debt|borrowings?)|notes payable|revolving credit|"
     r"credit (?:facility|facilities|agreements?)"),
    ("dividends", r"(?:cash )?dividends?(?: paid| per share)?"),
    ("share repurchases", r"(?:share|stock) (?:repurchases?|buybacks?)|buybacks?|"
     r"repurchases? of (?:common )?(?:stock|shares)|treasury stock"),
    ("stock-based compensation", r"(?:stock|share) based compensation"),
    ("goodwill", r"goodwill"),
    ("impairment", r"impairments?"),
    ("restructuring costs", r"restructuring(?: costs?| charges?| expenses?)?"),
    ("shares outstanding", r"shares outstanding|share count"),
    ("backlog", r"backlog|remaining performance obligations?"),
    ("headcount", r"headcount|number of employees"),
    ("cash flow", r"cash ?flows?"),
)
# metrics computed from other line items: asking for one means the answer step has to calculate
_DERIVED = frozenset(name for name, _ in _METRICS if name and re.search(
    r"\b(?:ratio|margin|turnover|days|return|free|ebit\w*|working|debt to)\b", name))


def _build_metric_re() -> tuple[re.Pattern[str], dict[str, int]]:
    forms = [(alt, i) for i, (_, alts) in enumerate(_METRICS) for alt in _split_alts(alts)]
    forms.sort(key=lambda f: (-_min_len(f[0]), -len(f[0])))  # approximates leftmost-longest matching
    sep = r"[\s-]+"
    # the one-character lookahead before each form makes most alternatives fail at once (5x faster)
    body = "|".join(f"(?=[{''.join(sorted(_first_chars(alt)))}])(?P<m{n}>{alt.replace(' ', sep)})"
                    for n, (alt, _) in enumerate(forms))
    # "non-current assets" and "non-operating income" are not the metric their tail names
    return re.compile(rf"(?<![\w&])(?<!non-)(?<!non )(?:{body})(?![\w&])", re.I), {f"m{n}": i for n, (_, i) in enumerate(forms)}


def _first_chars(form: str) -> set[str]:
    """Characters a surface form can start with."""
    if not form.startswith("(?:"):
        return {form[0].lower()}
    depth = 0
    for end, ch in enumerate(form):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            break
    chars = set().union(*(_first_chars(alt) for alt in _split_alts(form[3:end])))
    return chars | _first_chars(form[end + 2:]) if form[end + 1: end + 2] in ("?", "*") else chars


def _min_len(form: str) -> int:
    """Length of the shortest text a surface form matches, resolving groups innermost first."""
    while "(" in form:
        form = re.sub(r"\(\?:([^()]*)\)(\?)?", lambda m: "" if m[2] else min(m[1].split("|"), key=len), form)
    return len(re.sub(r".\?", "", form))


def _split_alts(alts: str) -> list[str]:
    """Top-level '|' alternatives of a surface-form pattern (ignoring '|' inside groups)."""
    out, depth, start = [], 0, 0
    for pos, ch in enumerate(alts):
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            out.append(alts[start:pos])
            start = pos + 1
    return [*out, alts[start:]]


_METRIC_RE, _METRIC_GROUP = _build_metric_re()


def find_metrics(text: str) -> tuple[str, ...]:
    """Canonical metric names mentioned in ``text``, in order of first mention (usable on chunk text)."""
    return tuple(dict.fromkeys(name for name, _, _ in metric_spans(text)))


def metric_spans(text: str) -> list[tuple[str, int, int]]:
    """``(canonical name, start, end)`` of every metric mention in ``text``, in order."""
    out = []
    for m in _METRIC_RE.finditer(text):
        name = _METRICS[_METRIC_GROUP[m.lastgroup or ""]][0]
        if name:
            out.append((name, m.start(), m.end()))
    return out


def metric_named_by(label: str) -> str | None:
    """The canonical metric when the whole of ``label`` is one of its surface forms ("Net sales" ->
    "revenue"), else None ("Other non-current assets", "Revenue from leases" name no single metric)."""
    m = _METRIC_RE.fullmatch(" ".join(label.split()))
    return _METRICS[_METRIC_GROUP[m.lastgroup or ""]][0] if m else None


# --- periods -----------------------------------------------------------------------------------------
_Y4 = r"(?:19[89]|20\d)\d"
_FISC = r"(?:fiscal(?:\s+years?)?|FY)"
_OF = r"(?:\s+of)?(?:\s+the)?"
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_QUARTER_RES = tuple(re.compile(p, re.I) for p in (  # tried in order; each match is blanked out
    rf"\b(?:FY\s?)?(?P<y>{_Y4})\s?-?\s?Q(?P<q>[1-4])\b|\bFY\s?(?P<yy>\d\d)\s?-?\s?Q(?P<q2>[1-4])\b",
    rf"\bQ(?P<q>[1-4]){_OF}(?:\s*{_FISC})?\s*'?(?P<y>{_Y4})\b"
    rf"|\bQ(?P<q2>[1-4]){_OF}(?:\s*{_FISC}\s*'?|\s*')(?P<yy>\d\d)\b",
    rf"\b(?P<q>[1-4])Q\s?'?(?:(?P<y>{_Y4})|(?P<yy>\d\d))\b",
    rf"\b(?P<o>first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+(?:fiscal\s+)?quarter{_OF}"
    rf"(?:(?:\s*{_FISC})?\s*(?P<y>{_Y4})\b|\s*{_FISC}\s*'?(?P<yy>\d\d)\b)?",
    rf"\b{_FISC}\s*'?(?:(?P<y>{_Y4})|(?P<yy>\d\d))[\s,]+(?P<o>first|second|third|fourth)[\s-]+quarter",
    rf"\b(?:quarter|(?:three|six|nine|3|6|9)\s+months)\s+end(?:ed|ing)\s+(?P<m>[a-z]{{3}})[a-z]*\.?"
    rf"\s+\d{{1,2}},?\s+(?P<y>{_Y4})",
    rf"\b(?:H1|1H|first\s+half){_OF}(?:\s*{_FISC})?\s*'?(?:(?P<y>{_Y4})|(?P<yy>\d\d)\b)",
    r"\bQ(?P<q>[1-4])\b",
))
_YEAR_RE = re.compile(
    rf"(?:\b{_FISC}\s*'?(?P<yy>\d\d(?!\d)|{_Y4}(?!\d))|(?<![\d$.,])(?<!\$\s)(?P<y>{_Y4})(?!\d|[.,]\d))"
    r"(?!\s*(?:%|(?:percent|million|billion|thousand|bn|mn)\b))", re.I)
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|to|through|thru|until)\s*", re.I)
_YOY = re.compile(r"\b(?:yoy|y/y|year[\s-]+(?:over|on)[\s-]+year|"
                  r"(?:prior|previous)[\s-]+(?:fiscal\s+)?year)\b", re.I)
_QOQ = re.compile(r"\b(?:qoq|q/q|quarter[\s-]+(?:over|on)[\s-]+quarter|sequential\w*|"
                  r"(?:prior|previous)\s+quarter)\b", re.I)
_NYEAR = re.compile(r"\b(\d|two|three|four|five)[\s-]+years?\s+(average|avg|cagr)", re.I)
_NUMWORD = {"two": 2, "three": 3, "four": 4, "five": 5}
_RELATIVE = re.compile(r"\b(?:(this|current|last|past|prior|previous)\s+(?:fiscal\s+)?year"
                       r"|(last|past)\s+(\w+)\s+(?:fiscal\s+)?years)\b", re.I)


def _year(y: str | None, yy: str | None) -> int | None:
    if y or yy:
        v = int(y or yy or 0)
        return v if v >= 1000 else (2000 + v if v < 80 else 1900 + v)
    return None


def _periods(text: str, today_year: int | None) -> tuple[list[int], list[tuple[int | None, int]]]:
    """Whole years asked about and (year or None, quarter) pairs; quarters are blanked before years."""
    work, quarters = text, list[tuple[int, int | None, int]]()
    for rx in _QUARTER_RES:
        for m in rx.finditer(work):
            g = m.groupdict()
            if g.get("m"):
                if g["m"].lower() not in _MONTHS:
                    continue
                q = _MONTHS.index(g["m"].lower()) // 3 + 1
            elif g.get("o"):
                q = _ORD[g["o"].lower()]
            else:  # the half-year pattern has no quarter group: H1 is reported in the Q2 10-Q
                q = int(g.get("q") or g.get("q2") or 2)
            quarters.append((m.start(), _year(g.get("y"), g.get("yy")), q))
            work = work[: m.start()] + " " * (m.end() - m.start()) + work[m.end():]
    top = today_year + 10 if today_year else 2099
    hits = [(m, y) for m in _YEAR_RE.finditer(work) if (y := _year(m["y"], m["yy"])) and 1980 <= y <= top]
    years = [y for _, y in hits]
    for (m1, y1), (m2, y2) in zip(hits, hits[1:]):
        if 0 < y2 - y1 <= 15 and _RANGE_GAP.fullmatch(work[m1.end(): m2.start()]):
            years += range(y1 + 1, y2)
    if not years and not quarters and today_year:
        for m in _RELATIVE.finditer(text):
            if m[1]:
                years.append(today_year if m[1].lower() in ("this", "current") else today_year - 1)
            else:
                n = int(m[3]) if m[3].isdigit() else _NUMWORD.get(m[3].lower(), 0)
                years += range(today_year - n, today_year)
    return years, [(y, q) for _, y, q in sorted(quarters)]


# --- issuers ---------------------------------------------------------------------------------------
_SUFFIXES = frozenset("inc incorporated corp corporation co company companies ltd limited plc llc lp nv sa "
                      "ag se com and the holdings".split())
_GENERIC = frozenset("""american general united first national international global new southern northern
eastern western public royal great china japan texas pacific atlantic central consolidated standard universal
premier applied advanced digital energy capital financial health home life micro power world""".split())


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
            if raw.isalpha() and len(raw) == 3:  # "JnJ" for JNJ: mixed case with two capitals, never "all"/"Ion"
                mixed = "".join(f"[{c}{c.lower()}]" if i == 1 else c for i, c in enumerate(raw))
                pats.append((re.compile(rf"(?<![A-Za-z0-9]){mixed}(?![A-Za-z0-9])"), True, ""))
            if raw.isalpha() and len(raw) >= 4:  # "NIKE" matches "Nike" mid-sentence; "Cost of" isn't COST
                title = re.escape(raw.title())
                pats.append((re.compile(rf"(?<![A-Za-z0-9]){title}(?![A-Za-z0-9])"), True, "mid"))
            continue
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


def _match_issuers(question: str, issuers: Sequence[IssuerRef]) -> tuple[tuple[str, ...], int]:
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


# --- question shape --------------------------------------------------------------------------------
_ABBREV = frozenset("inc co corp ltd vs no etc jr sr st mr ms dr approx e.g i.e u.s".split())
_INSTRUCTION = re.compile(r"(?:please|answer|round|give|provide|respond|base|assume|you\s+are|here's|if\b|"
                          r"we\s+(?:need|want)|define|\S+(?:\s+\S+){0,5}\s+is\s+defined)", re.I)
_FORM_CUES = (("10-K", r"\b10-?Ks?\b|\bannual\s+reports?\b"), ("10-Q", r"\b10-?Qs?\b|\bquarterly\b"),
              ("8-K", r"\b8-?Ks?\b"), ("EARNINGS", r"\b(?:earnings|press)\s+(?:releases?|announcements?)\b"))
_AUX = r"is|are|was|were|do|does|did|has|have|had|can|could|will|would|should"
_QWORD = re.compile(rf"(?:what|how|which|why|who|whom|{_AUX})\b")
_YESNO = re.compile(rf"(?:{_AUX}|shall|may)\b")
_NUM_LEAD = re.compile(r"(?:what|how|calculate|compute|estimate|determine|find|give|provide|roughly|"
                       r"approx\w*)\b")
_HOW_MUCH = re.compile(r"\bhow\s+(?:much|many)\b|"
                       r"\bwhat\s+(?:percent|percentage|portion|proportion|fraction|share)\b")
_TEXTUAL = re.compile(
    r"\b(?:why|who|whom|which|describe|explain|summari[sz]e|outline|list|discuss\w*|analy[sz]e|examine|"
    r"elaborate|identify|drove|drives|driving|drivers?|driven|reasons?|factors?|caused|impacts?|impacted|"
    r"affect(?:s|ed)?|"
    r"effects?|implications?|relationship|relate[sd]?|correlat\w*|align\w*|connect\w*|insights?|strateg\w*|"
    r"polic(?:y|ies)|risks?|legal|proceedings|nature|focus|priorit\w*|correspond\w*|reflect\w*|suggest\w*|"
    r"indicat\w*|influenc\w*|assess\w*|consequences?|repercussions?|patterns?)\b")
_NUM_NOUN = re.compile(r"\b(?:amount|total|ratio|figures?|number|value|cagr|percent\w*|margins?|rate|"
                       r"quantity|sum|average|times|magnitude|scale|size|extent)\b|%")
_COMPARE = re.compile(
    r"\b(?:yoy|qoq|year[\s-]+(?:over|on)[\s-]+year|quarter[\s-]+(?:over|on)[\s-]+quarter|compar\w*|versus|vs|"
    r"relative\s+to|(?:in|de)creas\w*|declin\w*|drop\w*|grow\w*|grew|ris(?:e|es|en|ing)|rose|f[ae]ll\w*|"
    r"chang\w*|trend\w*|fluctuat\w*|evol\w*|shift\w*|differ\w*|improv\w*|deteriorat\w*|cagr|over\s+time|"
    r"historical\w*|sequential\w*|stack\s+up|measure\s+up|vari(?:ed|es|ations?)|movements?|patterns?|"
    r"(?:quarter|year|period)\s+to\s+(?:quarter|year|period)|"
    r"(?:across|throughout|over)\s+(?:the\s+)?(?:\w+\s+){0,2}(?:quarters|periods|years))\b", re.I)
_CLAUSE_SPLIT = re.compile(r"\?|;|,\s*and\s+|\band\s+(?=(?:how|what|which|why)\b)")
_PERIOD_PAIR = re.compile(r"\bbetween\b.*\band\b|\bfrom\b.*\bto\b", re.I)
_CALC = re.compile(
    r"\b(?:calculate|compute|compar\w*|ratio|margins?|average|avg|cagr|growth|grew|chang\w*|"
    r"(?:in|de)creas\w*|yoy|qoq|year[\s-]+over[\s-]+year|turnover|difference|proportion\w*|"
    r"percent(?:age)?\s+of|how\s+many\s+times)\b|%\s*(?:of|margin)|\bas\s+a\s*(?:%|percent)", re.I)
_DEFINITION = re.compile(r"\bis\s+defined\s+as\b|\bdefine\s[^.?]*\bas\b", re.I)
_EXPLAIN = re.compile(r"\b(?:why|drove|drives|drivers?|reasons?|factors?|caused|explain)\b", re.I)
_USD = r"(?:usd|us\$|\$)\s*(?:in\s+)?"
_UNIT_RES = tuple((name, re.compile(p, re.I)) for name, p in (
    ("USD billions", rf"{_USD}billions?\b|\bin\s+billions\b|\bbillions\s+of\s+(?:us\s+)?dollars"),
    ("USD millions", rf"{_USD}millions?\b|\bin\s+millions\b|\bmillions\s+of\s+(?:us\s+)?dollars"),
    ("USD thousands", rf"{_USD}thousands?\b|\bin\s+thousands\b"),
    ("percent", r"\bunits?\s+of\s+percents?\b|\bin\s+percent(?:s|age)?\b|\bas\s+a\s*(?:%|percent)|%\s*margin|"
                r"\bwhat\s+(?:percent|percentage)\b|\bpercentage\s+points?\b"),
))
_DECIMALS = re.compile(r"\b(no|zero|one|two|three|four|\d)\s+decimal(?:\s+(?:places?|points?|digits?)|s)\b"
                       r"|\bnearest\s+(whole\s+number|integer|tenth|hundredth|thousandth)\b", re.I)
_DEC_WORD = {"no": 0, "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "whole number": 0, "integer": 0,
             "tenth": 1, "hundredth": 2, "thousandth": 3}
_STOP = frozenset("""a an the of in on at to for from by with about as into over under between during within
without and or but nor if then than that this these those there their its it is are was were be been being do
does did has have had having can could will would should may might must shall what which who whom whose when
where why how any all each some such other more most much many very also only just per via vs versus i we you
they he she us our your my me them his her so not no yes up down out off again further once here s com
answer answers question questions response respond responding relying rely details detail shown show outlined
clearly plainly primarily information provided provide using use used utilize utilizing utilise based basing
base judgment judgments judgement judgements assume assuming perspective analyst analysts banker public
equities please help round rounded decimal decimals place places unit units usd million millions billion
billions thousand thousands percent percents state explain following give solution drawing conclusions stated
resource need want reasonable approximation exact possible relevant useful metric metrics financial lost
internet connection access providers agreement according referencing calculate compute extract line items item
asked reported report""".split())  # English stopwords, then the benchmarks' instruction scaffolding
_TOKEN = re.compile(r"\d+-[kq](?=s?\b)|[a-z0-9]+(?:&[a-z0-9]+)*")


def _sentences(text: str) -> list[str]:
    """Split on . ? ! : ; before a space, keeping the mark and skipping abbreviations such as "Inc."."""
    out, start = [], 0
    for m in re.finditer(r"[.?!:;](?=\s|$)", text):
        word = re.search(r"[\w.]*$", text[start:m.start()])
        if m.group() == "." and word and (word[0].lower() in _ABBREV or len(word[0]) == 1):
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    return [s for s in [*out, text[start:].strip()] if s]


def _lead(clause: str) -> str:
    """The clause from its question word on, past "In the Q2 2023 10-Q, ..." or "Using only ..., "."""
    low = clause.lower().strip()
    if _QWORD.match(low):
        return low
    m = re.search(rf",\s*((?:{_QWORD.pattern}).*)", low)
    return m[1] if m else low


def _clause_numeric(clause: str) -> bool:
    lead = _lead(clause)
    if _HOW_MUCH.search(lead):
        return True
    if _YESNO.match(lead) or _TEXTUAL.search(lead):
        return False
    return bool(_NUM_LEAD.match(lead) and (find_metrics(lead) or _NUM_NOUN.search(lead)))


def parse_intent(
    question: str, issuers: Sequence[IssuerRef] = (), *, today_year: int | None = None
) -> QueryIntent:
    """Map a question to its intent; pure and deterministic (well under a millisecond).

    Args:
        question: The analyst's question, instructions included (scaffolding is ignored where it matters).
        issuers: Companies known to the library; matched by name, alias or uppercase ticker.
        today_year: Resolves "last year"/"this year" when no year is stated; also caps plausible years.

    Returns:
        The QueryIntent; ``period_labels(intent)`` gives the labels to match against filings.
    """
    text = " ".join(question.split())
    sents = _sentences(text)
    # the asked question: its "?" sentences, else whatever is not an instruction ("Round to ...")
    core = " ".join(s for s in sents if s.endswith("?")) or " ".join(
        s for s in sents if not _INSTRUCTION.match(s))
    keys, n_companies = _match_issuers(text, issuers)

    years, raw_quarters = _periods(text, today_year)
    lone = sorted(set(years))  # a yearless "Q3" takes the question's only year
    quarters = [(yr, q) for y, q in raw_quarters if (yr := y or (lone[0] if len(lone) == 1 else 0))]
    if len(set(years)) == 1 and not quarters and _YOY.search(text):
        years.append(years[0] - 1)
    if len(quarters) == 1:
        y, q = quarters[0]
        if _QOQ.search(text):
            quarters.append((y - 1, 4) if q == 1 else (y, q - 1))
        elif _YOY.search(text):
            quarters.append((y - 1, q))
    if (m := _NYEAR.search(text)) and len(set(years)) == 1:
        n = int(m[1]) if m[1].isdigit() else _NUMWORD[m[1].lower()]
        years += range(years[0] - n + (m[2].lower() != "cagr"), years[0])  # a 3-year CAGR spans 4 year-ends
    annual = tuple(sorted(set(years)))
    q_labels = tuple(sorted({f"{y}Q{q}" for y, q in quarters}))

    forms = [(m.start(), f) for f, p in _FORM_CUES for m in re.finditer(p, text, re.I)]
    if any(q < 4 for _, q in raw_quarters) or not raw_quarters and re.search(r"\bquarters?\b", text, re.I):
        forms.append((len(text), "10-Q"))
    metrics = find_metrics(text)

    clauses = [c for c in _CLAUSE_SPLIT.split(core) if c.strip()]
    lead = _lead(clauses[0]) if clauses else ""
    units = sorted((m.start(), name) for name, rx in _UNIT_RES for m in rx.finditer(text))
    dm = _DECIMALS.search(text)
    dec_word = (dm[1] or dm[2]).lower() if dm else ""
    decimals = None if not dm else int(dec_word) if dec_word.isdigit() else _DEC_WORD[dec_word]
    numeric = any(_clause_numeric(c) for c in clauses) or (
        bool(units or dm) and not (_YESNO.match(lead) or _TEXTUAL.search(lead)))
    unit = units[0][1] if units and numeric else None
    if unit is None and numeric and (re.search(r"\bratio\b|\bhow\s+many\s+times\b", core, re.I)
                                     or any(x.endswith(("ratio", "turnover")) for x in metrics)):
        unit = "ratio"
    comparison = bool(_COMPARE.search(core)) or n_companies > 1 or (
        len(annual) + len(q_labels) > 1 and bool(_PERIOD_PAIR.search(core)) and "average" not in core.lower())
    needs_calc = not _EXPLAIN.search(core) and bool(
        _CALC.search(core) or _DEFINITION.search(text) or _DERIVED.intersection(metrics))

    low = re.sub(r"\bfy\s?'?(\d{4}|\d\d)\b", lambda m: str(_year(None, m[1])), text.lower())  # FY22 -> 2022
    words = _TOKEN.findall(re.sub(r"(?<=\w)['’]s\b", "", low))
    keywords = tuple(dict.fromkeys(w for w in words if w not in _STOP and (len(w) > 1 or w.isdigit())))[:32]
    return QueryIntent(
        question=question, issuers=keys, forms=tuple(dict.fromkeys(f for _, f in sorted(forms))),
        fiscal_years=tuple(sorted(set(annual) | {y for y, _ in quarters})), quarters=q_labels,
        metrics=metrics, numeric=numeric, comparison=comparison, needs_calculation=needs_calc,
        unit_hint=unit, decimals=decimals, keywords=keywords, annual_years=annual,
    )


def period_labels(intent: QueryIntent) -> list[str]:
    """Filing period labels the question points at, e.g. ["2018"], ["2023Q2"] or ["2023", "2024Q2"]."""
    q_years = {int(q[:4]) for q in intent.quarters}
    years = intent.annual_years if intent.annual_years is not None else [
        y for y in intent.fiscal_years if y not in q_years]
    return sorted([str(y) for y in years] + list(intent.quarters))


# --- lexical expansion -------------------------------------------------------------------------------
# The line items a metric is printed under in financial statements: what BM25 must match when a question
# names the metric in analyst words ("capex") and the filing in accounting words ("purchases of PP&E").
# Ratios expand to their components, since filings print the components, not the ratio.
_LINE_ITEMS: dict[str, str] = {
    "revenue": "total revenue revenues net sales",
    "cost of goods sold": "cost of sales cost of revenue cost of goods sold",
    "gross profit": "gross profit gross margin net sales cost of sales",
    "gross margin": "gross profit net sales cost of sales revenue",
    "operating income": "operating income income from operations",
    "operating margin": "operating income net sales revenue",
    "net income": "net income earnings attributable",
    "net profit margin": "net income net sales revenue",
    "earnings per share": "earnings per share diluted basic",
    "capital expenditures": "purchases of property plant and equipment capital expenditures additions",
    "free cash flow": "net cash provided by operating activities purchases of property plant and equipment",
    "cash from operations": "net cash provided by operating activities",
    "cash from investing": "net cash used in investing activities",
    "cash from financing": "net cash used in financing activities",
    "depreciation and amortization": "depreciation and amortization",
    "ebitda": "operating income depreciation and amortization",
    "ebitda margin": "operating income depreciation and amortization net sales revenue",
    "ebit": "operating income earnings before interest and taxes",
    "effective tax rate": "effective tax rate provision for income taxes income before income taxes",
    "income tax expense": "provision for income taxes",
    "quick ratio": "cash and cash equivalents marketable securities accounts receivable total current liabilities",
    "current ratio": "total current assets total current liabilities",
    "working capital": "total current assets total current liabilities",
    "debt to equity": "long-term debt total shareholders equity",
    "return on assets": "net income total assets",
    "return on equity": "net income total shareholders equity",
    "inventory turnover": "cost of sales inventories",
    "days inventory outstanding": "cost of sales inventories",
    "days sales outstanding": "accounts receivable net sales",
    "days payable outstanding": "accounts payable cost of sales",
    "asset turnover": "net sales revenue total assets",
    "fixed asset turnover": "net sales revenue property plant and equipment net",
    "dividend payout ratio": "dividends paid net income",
    "dividends": "dividends paid cash dividends declared",
    "interest coverage ratio": "operating income interest expense",
    "inventory": "inventories",
    "share repurchases": "repurchases of common stock treasury stock purchases",
    "debt": "long-term debt short-term borrowings current portion",
    "cash and equivalents": "cash and cash equivalents",
}


def lexical_terms(intent: QueryIntent) -> str:
    """Extra words for lexical retrieval: each asked metric's statement line items."""
    return " ".join(_LINE_ITEMS.get(m, m) for m in intent.metrics)


def lexical_query(intent: QueryIntent, fallback: str) -> str:
    """The BM25 query of the passage stage: the question's keywords plus its metrics' line items."""
    return " ".join([*intent.keywords, lexical_terms(intent)]) or fallback


def line_item_metrics(intent: QueryIntent) -> tuple[str, ...]:
    """The metrics whose statement rows hold the figures asked for: a reported metric itself, a derived
    one (a ratio, margin, turnover …) through its components ("current ratio" -> current assets, current
    liabilities)."""
    out: list[str] = []
    for m in intent.metrics:
        if m in _DERIVED and m in _LINE_ITEMS:
            out += [c for c in find_metrics(_LINE_ITEMS[m]) if c != m]
        else:
            out.append(m)
    return tuple(dict.fromkeys(out))
