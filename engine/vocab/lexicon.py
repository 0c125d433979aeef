"""The metric lexicon: canonical metric names, the words analysts and filings use for them, and the
statement line items each metric is printed under (what lexical retrieval and line-item lookup match)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence

from engine.errors import EngineError
from engine.settings import RESOURCES_DIR


# canonical name -> surface forms (regex), from resources/lexicon.toml (its header says how forms are read)
def _load_metrics() -> tuple[tuple[str | None, str], ...]:
    data = tomllib.loads((RESOURCES_DIR / "lexicon.toml").read_text(encoding="utf-8"))
    for m in data["metric"]:  # (the forms are measured and ordered by their groups: a lookaround is not one)
        if re.search(r"\(\?<?[=!]", m["forms"]):
            raise EngineError(f"lexicon.toml: {m['name']!r}: a form may not look ahead or behind")
    return tuple((m["name"] or None, m["forms"]) for m in data["metric"])


_METRICS: tuple[tuple[str | None, str], ...] = _load_metrics()
# metrics computed from other line items: asking for one means the answer step has to calculate
_DERIVED = frozenset(name for name, _ in _METRICS if name and re.search(
    r"\b(?:ratio|margin|turnover|days|return|free|ebit\w*|working|debt to)\b", name))


def _build_metric_re() -> tuple[re.Pattern[str], dict[str, int]]:
    forms = [(alt, i) for i, (_, alts) in enumerate(_METRICS) for alt in _split_alts(alts)]
    forms.sort(key=lambda f: (-_min_len(f[0]), -len(f[0])))  # approximates leftmost-longest matching
    sep = r"[\s-]+"
    # the one-character lookahead before each form makes most alternatives fail at once (5x faster)
    # a space matches any run of spaces or hyphens; " ?" (written "cash ?flow") none as well: "cashflow"
    body = "|".join(f"(?=[{''.join(sorted(_first_chars(alt)))}])"
                    f"(?P<m{n}>{alt.replace(' ?', sep.replace('+', '*')).replace(' ', sep)})"
                    for n, (alt, _) in enumerate(forms))
    # "non-current assets" and "non-operating income" are not the metric their tail names
    metric_re = re.compile(rf"(?<![\w&])(?<!non-)(?<!non )(?:{body})(?![\w&])", re.IGNORECASE)
    return metric_re, {f"m{n}": i for n, (_, i) in enumerate(forms)}


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


# The three classes of a cash-flow statement named with one shared head: "operating, investing and financing
# activities", "investing or financing cash flows" (each conjunct is its own metric; the head is printed once)
_ACTIVITY = r"(?:operat(?:ing|ions)|investing|financing)"
_SHARED_HEAD = re.compile(rf"\b{_ACTIVITY}(?:(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+){_ACTIVITY})+"
                          r"\s+(?:activities|cash[\s-]+flows?)\b", re.IGNORECASE)
_ACTIVITY_METRIC = {"o": "cash from operations", "i": "cash from investing", "f": "cash from financing"}


def metric_spans(text: str) -> list[tuple[str, int, int]]:
    """``(canonical name, start, end)`` of every metric mention in ``text``, in order. Conjuncts that share one
    head ("operating, investing and financing activities") are each a mention of their own metric."""
    return [(name, a, b) for name, a, b in lexicon_spans(text) if name]


def lexicon_spans(text: str) -> list[tuple[str | None, int, int]]:
    """As :func:`metric_spans`, with the words the lexicon consumes but that name no metric (statement names:
    "cash flow statement") as ``(None, start, end)``."""
    out: list[tuple[str | None, int, int]] = []
    for m in _SHARED_HEAD.finditer(text):
        for w in re.finditer(_ACTIVITY, m[0], re.IGNORECASE):
            out.append((_ACTIVITY_METRIC[w[0][0].lower()], m.start() + w.start(), m.start() + w.end()))
        text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]  # (offsets kept)
    for m in _METRIC_RE.finditer(text):
        out.append((_METRICS[_METRIC_GROUP[m.lastgroup or ""]][0], m.start(), m.end()))
    return sorted(out, key=lambda x: x[1])


# a question's frame between the words of one metric: "how much cash did Acme generate from operations" names cash
# from operations; an auxiliary, the company (it, they, a capitalised name) and a verb of earning or spending (a verb
# that is the metric's own word stays: "how much cash did Acme return to shareholders" names cash returned to them;
# "how much cash did Acme have on hand" names cash on hand)
_SPLIT = re.compile(
    r"\s+(?:did|does|do|has|have|had|was|were|is|are|will)\s+(?:it|they|the\s+(?:company|firm|group)|"
    r"[A-Z0-9][\w&.'’-]*(?:\s+[A-Z][\w&.'’-]*){0,3}?)(?:\s+(?:generate|earn|produce|bring\s+in|record|report|"
    r"post|spend|incur|realize|book|deliver|have|hold|keep|carry)(?:s|d|ed)?(?=\s)|(?=\s+(?:return|pay|burn|make)\b))")


def split_metric_spans(text: str) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """The metrics ``text`` names in two pieces with its frame between them ("cash did Acme generate from
    operations"): (the canonical metric, its pieces as (start, end) in ``text``); a metric named in one piece is
    :func:`lexicon_spans`'."""
    out: list[tuple[str, tuple[tuple[int, int], ...]]] = []
    for gap in _SPLIT.finditer(text):
        compact = text[:gap.start()] + " " + text[gap.end():]
        shift = gap.end() - gap.start() - 1
        for m in _METRIC_RE.finditer(compact):
            if m.start() < gap.start() < m.end() - 1:  # (a match across the gap)
                name = _METRICS[_METRIC_GROUP[m.lastgroup or ""]][0]
                if name:  # (a statement's name is no metric)
                    out.append((name, ((m.start(), gap.start()), (gap.end(), m.end() + shift))))
    return out


def metric_named_by(label: str) -> str | None:
    """The canonical metric when the whole of ``label`` is one of its surface forms ("Net sales" ->
    "revenue"), else None ("Other non-current assets", "Revenue from leases" name no single metric)."""
    m = _METRIC_RE.fullmatch(" ".join(label.split()))
    return _METRICS[_METRIC_GROUP[m.lastgroup or ""]][0] if m else None


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
    "free cash flow conversion": "net cash provided by operating activities purchases of property plant and equipment net income",
    "cash from operations": "net cash provided by operating activities",
    "cash from investing": "net cash used in investing activities",
    "cash from financing": "net cash used in financing activities",
    "depreciation and amortization": "depreciation and amortization",
    "ebitda": "operating income depreciation and amortization",
    "ebitda margin": "operating income depreciation and amortization net sales revenue",
    "ebit": "operating income earnings before interest and taxes",
    "effective tax rate": "effective tax rate provision for income taxes income before income taxes",
    "income tax expense": "provision for income taxes",
    "quick ratio": "cash and cash equivalents marketable securities accounts receivable total current "
                   "liabilities",
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
    "short-term debt": "short-term borrowings current portion of long-term debt",
    "net debt": "long-term debt short-term borrowings current portion cash and cash equivalents",
    "cash and equivalents": "cash and cash equivalents",
}


def line_item_metrics(metrics: Sequence[str]) -> tuple[str, ...]:
    """The metrics whose statement rows hold the figures of ``metrics`` (a question's): a reported metric itself,
    a derived one (a ratio, margin, turnover …) through its components ("current ratio" -> current assets,
    current liabilities)."""
    out: list[str] = []
    for m in metrics:
        if m in _DERIVED and m in _LINE_ITEMS:
            out += [c for c in find_metrics(_LINE_ITEMS[m]) if c != m]
        else:
            out.append(m)
    return tuple(dict.fromkeys(out))
