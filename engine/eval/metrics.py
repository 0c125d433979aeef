"""Evaluation metrics for FilingLens: pure functions, no model, no I/O.

Retrieval and answer scoring follow HiREC (Choe, Kim & Jung, "Hierarchical Retrieval with Evidence
Curation for Open-Domain Financial Question Answering on Standardized Documents", Sec. 5.1): page recall
and precision over ``(doc_name, page)`` pairs, document recall over ``doc_name``, numeric answers correct
"considering rounding and truncation". Ranking metrics (nDCG@10, MAP@10, MRR@10 over graded chunk labels)
follow FinCards ("Card-Based Analyst Reranking for Financial Document Question Answering", Sec. 4.3), which
names them without formulas; the standard IR definitions are used, each choice stated in its docstring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

from engine.vocab.numbers import MENTION, SCALE_EXPONENTS, scale_word

Page = tuple[str, int]


# --------------------------------------------------------------------------------------------- retrieval
def _check_k(k: int) -> None:
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")


def _recall_at_k(retrieved: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    _check_k(k)
    if not gold:
        raise ValueError("recall is undefined without gold items; leave such questions out of the average")
    return len(set(retrieved[:k]) & set(gold)) / len(set(gold))


def document_recall_at_k(retrieved_docs: Sequence[str], gold_docs: Collection[str], k: int) -> float:
    """Share of gold documents among the first ``k`` retrieved items (HiREC document recall).

    ``k`` and duplicates are treated as in :func:`page_recall_at_k`.
    """
    return _recall_at_k(retrieved_docs, gold_docs, k)


def page_recall_at_k(retrieved_pages: Sequence[Page], gold_pages: Collection[Page], k: int) -> float:
    """Share of gold ``(doc_name, page)`` pairs among the first ``k`` retrieved items (HiREC page recall).

    HiREC standardises chunks to pages; here ``k`` counts positions of the list as given (typically the
    top-k chunks mapped to their pages), and duplicates within them count once. To mean "k distinct pages",
    deduplicate before calling. Raises ``ValueError`` when ``gold_pages`` is empty or ``k < 1``.
    """
    return _recall_at_k(retrieved_pages, gold_pages, k)


def page_precision(retrieved_pages: Sequence[Page], gold_pages: Collection[Page]) -> float:
    """Share of distinct retrieved pages that are gold pages (HiREC page precision).

    Computed over the whole retrieved set after order-preserving deduplication, so three chunks of one
    gold page count as one correct page. An empty retrieval scores 0.0.
    """
    unique, gold = dict.fromkeys(retrieved_pages), set(gold_pages)  # dict keeps order, drops repeats
    return sum(page in gold for page in unique) / len(unique) if unique else 0.0


# ----------------------------------------------------------------------------------------------- ranking
def ndcg_at_k(
    ranked_grades: Sequence[int],
    all_grades: Sequence[int],
    k: int,
    *,
    gain: Literal["linear", "exponential"] = "linear",
) -> float:
    """Normalised discounted cumulative gain at ``k`` (Järvelin & Kekäläinen, 2002), as in FinCards.

    ``DCG@k = sum_{i=1..k} gain(g_i) / log2(i + 1)``; ``nDCG@k = DCG@k / IDCG@k`` where the ideal ranking
    is ``all_grades`` sorted descending. FinCards does not give the gain; the default is the linear gain
    ``gain(g) = g`` of trec_eval's ``ndcg_cut``; ``gain="exponential"`` uses ``2**g - 1`` (Burges et al.,
    2005). Returns 0.0 when no candidate is relevant (IDCG = 0).
    """
    _check_k(k)

    def dcg(grades: Sequence[int]) -> float:
        gains = grades[:k] if gain == "linear" else [2**g - 1 for g in grades[:k]]
        return sum(g / math.log2(i + 2) for i, g in enumerate(gains))

    ideal = dcg(sorted(all_grades, reverse=True))
    return dcg(ranked_grades) / ideal if ideal > 0 else 0.0


def average_precision_at_k(ranked_grades: Sequence[int], k: int, *, n_relevant: int | None = None) -> float:
    """Average precision at ``k`` (the per-query term of MAP@10 in FinCards).

    Relevant means grade > 0. ``AP@k = (1 / min(k, R)) * sum_{i<=k, rel_i} P@i`` with ``R = n_relevant``,
    the usual MAP@k normaliser (a perfect top-k scores 1.0 even when R > k; trec_eval's ``map_cut``
    divides by R instead). When ``n_relevant`` is None, R is the count of relevant grades in the whole
    ``ranked_grades`` list, which is right only if that list holds every candidate. No relevant item: 0.0.
    """
    _check_k(k)
    total = sum(g > 0 for g in ranked_grades) if n_relevant is None else n_relevant
    if total <= 0:
        return 0.0
    hits, score = 0, 0.0
    for i, grade in enumerate(ranked_grades[:k], start=1):
        if grade > 0:
            hits += 1
            score += hits / i
    return score / min(k, total)


def mrr_at_k(ranked_grades: Sequence[int], k: int) -> float:
    """Reciprocal rank of the first relevant item (grade > 0) within the top ``k``; 0.0 if none."""
    _check_k(k)
    return next((1.0 / i for i, g in enumerate(ranked_grades[:k], start=1) if g > 0), 0.0)


@dataclass(frozen=True)
class EvidenceSpan:
    """An annotated evidence span: characters ``[start, end)`` of the PyMuPDF text of page ``page_index``."""

    doc_name: str
    page_index: int  # 0-based
    start: int
    end: int


def chunk_grade(
    chunk_doc: str, chunk_page_index: int, chunk_start: int, chunk_end: int, evidence: Sequence[EvidenceSpan]
) -> int:
    """Graded relevance of a chunk, as the eval README derives it from FinanceBench evidence.

    2: same doc, same page and the half-open ranges ``[chunk_start, chunk_end)`` and ``[start, end)``
    share at least one character; 1: another chunk on a page that holds evidence; 0: the rest.
    """
    on_page = [e for e in evidence if e.doc_name == chunk_doc and e.page_index == chunk_page_index]
    if any(chunk_start < e.end and e.start < chunk_end for e in on_page):
        return 2
    return 1 if on_page else 0


def _squeeze(text: str, sep: str) -> tuple[str, list[int]]:
    """Collapse whitespace runs to ``sep``; return the text and each output char's original offset."""
    out: list[str] = []
    offsets: list[int] = []
    for m in re.finditer(r"\s+|\S+", text):
        if not m.group().isspace():
            out.append(m.group())
            offsets.extend(range(m.start(), m.end()))
        elif sep and out:
            out.append(sep)
            offsets.append(m.start())
    return "".join(out), offsets


def locate_span(page_text: str, evidence_text: str) -> tuple[int, int] | None:
    """Find ``evidence_text`` in ``page_text``; return half-open original offsets or None.

    Tries, in order: exact substring; whitespace runs collapsed to one space on both sides; all whitespace
    removed (PDF extraction may add or drop line breaks inside words). The first occurrence wins.
    """
    if not evidence_text.strip():
        return None
    pos = page_text.find(evidence_text)
    if pos >= 0:
        return pos, pos + len(evidence_text)
    for sep in (" ", ""):
        hay, offsets = _squeeze(page_text, sep)
        needle = _squeeze(evidence_text, sep)[0].strip()
        pos = hay.find(needle)
        if pos >= 0:
            return offsets[pos], offsets[pos + len(needle) - 1] + 1
    return None


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation, as ``numpy.percentile`` by default."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within [0, 100], got {q}")
    xs, pos = sorted(values), (len(values) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


# ------------------------------------------------------------------------------------------------ numbers
@dataclass(frozen=True)
class ParsedNumber:
    """A number read from text.

    Attributes:
        value: Signed number as written, without the scale word ("$1.2 billion" -> 1.2).
        decimals: Digits after the decimal point as written ("3.80" -> 2).
        is_percent: Written with ``%``, "percent" or "percentage point(s)".
        scale: Normalised scale word ("thousand", "million", "billion", "trillion") or None.
    """

    value: Decimal
    decimals: int
    is_percent: bool = False
    scale: str | None = None

    @property
    def scaled(self) -> Decimal:
        """The value with the scale applied ("1.2 billion" -> 1200000000)."""
        return self.value.scaleb(SCALE_EXPONENTS[self.scale]) if self.scale else self.value


def _from_match(m: re.Match[str], *, prose: bool = False) -> ParsedNumber:
    raw = m["num"].replace(",", "")
    value = Decimal(raw)
    # a closed pair "(123)" is an accounting negative; in prose "(up $5)" is an aside unless written "$(5)"
    brackets = bool(m["open"] and m["close"]) and (not prose or bool(m["cur0"]))
    negative = brackets or any(s and s.strip() in "-−" for s in (m["sign"], m["sign2"]))
    scale = scale_word(m["word"] or m["abbr"] or m["letter"])
    decimals = len(raw.split(".")[1]) if "." in raw else 0
    return ParsedNumber(-value if negative else value, decimals, bool(m["pct"] or m["pct2"]), scale)


def parse_number(text: str) -> ParsedNumber | None:
    """Parse ``text`` as one number, or return None if it is anything else.

    Strips ``$``/``US$``/``USD``, ``%``/"percent", thousands separators and a trailing full stop; reads
    scale words (thousand/million/billion/trillion, "k", "m"/"mm"/"mn", "b"/"bn", "t"/"tn"), accounting
    negatives "(123)" and the unicode minus. "$1,577 million" -> value 1577, scale "million".
    """
    m = MENTION.fullmatch(text.strip().rstrip(".").strip())
    if m is None or bool(m["open"]) != bool(m["close"]):
        return None
    return _from_match(m)


_MARKS = ("cur0", "cur", "tail", "sign", "sign2", "open")  # a currency or sign makes it an amount, not a date
_MONTH = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+$", re.IGNORECASE)


def _scan(text: str) -> list[tuple[ParsedNumber, int, bool]]:
    """Every number mention in prose as (number, start offset, is a bare year or day of a date)."""
    found = []
    for m in MENTION.finditer(text):
        if m["letter"] and not (m["cur0"] or m["cur"] or m["tail"]):
            continue  # "3M", "5G": in prose a one-letter scale needs a currency mark ("$3M")
        p = _from_match(m, prose=True)
        marked = any(m[g] for g in _MARKS) or p.scale or p.is_percent
        year = re.fullmatch(r"(19|20)\d\d", m["num"]) is not None
        day = _MONTH.search(text[max(0, m.start() - 12) : m.start()]) is not None
        found.append((p, m.start(), not marked and (year or day)))
    return found


def extract_numbers(text: str) -> list[ParsedNumber]:
    """All numbers in free text, in order; identifiers glued to letters ("FY2022", "Q2", "10-K") skipped."""
    return [p for p, _, _ in _scan(text)]


def _as_parsed(x: str | float | ParsedNumber) -> ParsedNumber | None:
    if isinstance(x, ParsedNumber):
        return x
    if isinstance(x, str):
        return parse_number(x)
    if not math.isfinite(x):
        return None
    d = Decimal(repr(float(x)))
    return ParsedNumber(d, max(0, -int(d.as_tuple().exponent)))


def _close(x: Decimal, dx: int, y: Decimal, dy: int) -> bool:
    """HiREC rule: round the more precise number to the other's decimals, half-up or truncating."""
    if dx < dy:
        x, dx, y, dy = y, dy, x, dx
    if dx == dy:
        return x == y
    step = Decimal(1).scaleb(-dy)
    try:
        return any(x.quantize(step, rounding=mode) == y for mode in (ROUND_HALF_UP, ROUND_DOWN))
    except InvalidOperation:
        return False


def _readings(p: ParsedNumber, other: ParsedNumber) -> list[tuple[Decimal, int]]:
    """Values ``p`` may stand for when compared with ``other``, each with its decimals at unit scale."""
    if p.scale or not other.scale:
        exps = [SCALE_EXPONENTS[p.scale] if p.scale else 0]
    else:
        exps = [0, 3, 6, 9]  # a bare number may be "in thousands/millions/billions", as filings' tables are
    shifts = [0, -2] if p.is_percent and not other.is_percent else [0]  # 14% also reads as 0.14
    return [(p.value.scaleb(e + s), p.decimals - e - s) for e in exps for s in shifts]


def numbers_match(predicted: str | float | ParsedNumber, gold: str | float | ParsedNumber) -> bool:
    """Numeric answer equality as in the HiREC evaluation ("considering rounding and truncation").

    Equal if, after rounding the more precise number to the other's decimals with round-half-up or with
    truncation, the values are equal: 3.86 ~ 3.8 (truncation), 3.86 ~ 3.9 (half-up), 3.84 !~ 3.9.
    Units: scale words are applied ("1.2 billion" ~ "1,200 million"), and decimals count at unit scale
    (1.2 billion is known to the hundred million). When exactly one side has a scale word, the bare side
    may also be read in thousands, millions or billions ("$1,577 million" ~ "1577"). When exactly one side
    is a percent, it is compared both as written and divided by 100 ("-14.0%" ~ "-0.14", and "46%" ~ "46"
    as in HiREC's Table 7 example). Strings must be a single number (see :func:`parse_number`); anything
    else does not match.
    """
    a, b = _as_parsed(predicted), _as_parsed(gold)
    if a is None or b is None:
        return False
    return any(_close(x, dx, y, dy) for x, dx in _readings(a, b) for y, dy in _readings(b, a))


NUMERIC_TOLERANCE = 0.01  # relative to the gold: room for the gold's own rounding ("$8.70" for 8.74)


def numbers_near(predicted: str | float | ParsedNumber, gold: str | float | ParsedNumber,
                 tolerance: float = NUMERIC_TOLERANCE) -> bool:
    """Numeric answer equality that forgives the gold's rounding: :func:`numbers_match`, or within ``tolerance``
    of the gold relative to its size (1 %: 8.74 ~ "$8.70", 8.74 !~ "$8.60"), over the same readings of scale
    words and percentages. A gold of 0 is met only exactly."""
    a, b = _as_parsed(predicted), _as_parsed(gold)
    if a is None or b is None:
        return False
    if numbers_match(a, b):
        return True
    rel = Decimal(repr(tolerance))
    return any(abs(x - y) <= rel * abs(y) for x, _ in _readings(a, b) for y, _ in _readings(b, a))


@dataclass(frozen=True)
class MatchResult:
    """Outcome of :func:`answer_matches`.

    Attributes:
        correct: True/False for a numeric verdict; None when a judge model must decide.
        method: "numeric" or "judge".
        predicted_number: The number taken from the prediction, if any.
        gold_number: The number taken from the gold answer, if any.
        reason: One line saying why.
        near: The numeric verdict with the gold's rounding forgiven (:func:`numbers_near`); True whenever
            ``correct`` is; None when a judge must decide.
    """

    correct: bool | None
    method: Literal["numeric", "judge"]
    predicted_number: ParsedNumber | None
    gold_number: ParsedNumber | None
    reason: str
    near: bool | None = None


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])|\n")


def _salient(text: str) -> ParsedNumber | None:
    """The number a free-text answer states: the one it leads with, else its last (dates skipped)."""
    found = [(p, start) for p, start, date in _scan(text.strip()) if not date]
    if not found:
        return None
    return found[0][0] if found[0][1] == 0 else found[-1][0]


def _gold_number(gold: str) -> tuple[ParsedNumber | None, bool, str]:
    """The gold answer's number, whether it came from prose, and why (or why not)."""
    whole = parse_number(gold)
    if whole is not None:
        return whole, False, "gold is a number"
    text = gold.strip()
    if re.match(r"(yes|no)\b", text, re.IGNORECASE):
        return None, True, "gold is a yes/no verdict"
    found = [(p, start) for p, start, date in _scan(text) if not date]
    if found and found[0][1] == 0:
        return found[0][0], True, "gold leads with a number"
    if len(_SENTENCE_BREAK.split(text)) > 1:
        return None, True, "gold is prose of several sentences"
    if len(found) != 1:
        return None, True, f"gold sentence holds {len(found)} numbers"
    return found[0][0], True, "gold sentence holds one number"


def gold_is_numeric(gold: str) -> bool:
    """Whether :func:`answer_matches` scores answers to this gold with the numeric matcher (else a judge)."""
    return _gold_number(gold)[0] is not None


_YES_NO = re.compile(r"^\W*(yes|no)\b", re.I)


def yes_no(text: str) -> bool | None:
    """True/False when ``text`` opens with "Yes"/"No" (the side a yes/no answer takes), else None."""
    m = _YES_NO.match(text)
    return None if m is None else m.group(1).lower() == "yes"


def key_figures_found(predicted: str, gold: str) -> tuple[int, int]:
    """How many of a prose gold's figures (years and days of dates left out) the prediction states, each within
    the gold's rounding or 1 % (:func:`numbers_near`): (found, of how many)."""
    wanted = [p for p, _, date in _scan(gold) if not date]
    stated = [p for p, _, date in _scan(predicted) if not date]
    found = sum(any(numbers_match(s, w) or numbers_near(s, w) for s in stated) for w in wanted)
    return found, len(wanted)


# A proper name in a gold answer: a run of capitalised words or acronyms ("MGM China", "Commercial Airplanes",
# "EMEA"); a sentence's opening word, and the words below, are not names.
_NAME = re.compile(r"\b(?:[A-Z][A-Za-z&'’.-]*[A-Za-z]|[A-Z]{2,})(?:\s+(?:of\s+|and\s+|&\s+)?(?:[A-Z][A-Za-z&'’.-]*[A-Za-z]|"
                   r"[A-Z]{2,}))*")
_NOT_NAMES = frozenset("""a an the this that these those it its they their there yes no as in on at for from by with
and or but if of to is are was were be has have had however also both each other our we us fy q1 q2 q3 q4 usd
january february march april may june july august september october november december company inc corp""".split())


def key_entities(gold: str, question: str) -> list[str]:
    """The proper names a prose gold states that its question does not (the company asked about is in every
    answer): the segment, region, product or counterparty the gold's point is."""
    asked = {w.lower() for w in re.findall(r"[A-Za-z][\w&'’-]*", question)}
    out: list[str] = []
    for m in _NAME.finditer(gold):
        words = [w for w in m.group(0).split() if w.lower() not in _NOT_NAMES and w.lower() not in asked]
        if words and not any(ch.isdigit() for ch in m.group(0)):
            name = " ".join(words)
            if name.lower() not in (o.lower() for o in out):
                out.append(name)
    return out


def key_entities_found(predicted: str, gold: str, question: str) -> tuple[int, int]:
    """How many of a prose gold's key entities (:func:`key_entities`) the prediction names, case ignored:
    (found, of how many)."""
    wanted = key_entities(gold, question)
    low = predicted.lower()
    return sum(all(w.lower() in low for w in name.split()) for name in wanted), len(wanted)


def answer_matches(predicted: str, gold: str) -> MatchResult:
    """Score an answer numerically when the gold answer is a number; otherwise defer to a judge.

    Gold number: the whole gold string if it parses as one number ("$1577.00"); else the number prose
    starts with ("36%. The answer assumes ..."); else the only number of a one-sentence gold ("The capex
    was $1,577 million."). Bare years (1900-2099), days after a month name and identifiers glued to
    letters ("FY2022", "Q2", "3M") do not count. Golds that start with yes/no, run to several sentences,
    or hold several numbers go to the judge (correct=None): their verdict is not one number.
    Predicted number: the whole prediction if it is one number (pass the product's normalised value when
    it has one); else the number it leads with ("1,577. Computed as ..."); else its *last* number, the
    conclusion of its working. So a prediction never matches merely because some intermediate number
    equals the gold. A prose gold that differs from the prediction only in sign goes to the judge, since
    prose states the sign in words ("shrunk by 0.9%" vs "-0.9%").
    """
    gold_num, from_prose, why = _gold_number(gold)
    if gold_num is None:
        return MatchResult(None, "judge", None, None, why)
    pred = parse_number(predicted) or _salient(predicted)
    if pred is None:
        return MatchResult(False, "numeric", None, gold_num, f"{why}; no number in the prediction", near=False)
    if numbers_match(pred, gold_num):
        return MatchResult(True, "numeric", pred, gold_num, f"{why}; numbers match", near=True)
    flipped = ParsedNumber(-pred.value, pred.decimals, pred.is_percent, pred.scale)
    if from_prose and gold_num.value >= 0 and numbers_match(flipped, gold_num):
        return MatchResult(None, "judge", pred, gold_num, f"{why}; only the sign differs, stated in words")
    if numbers_near(pred, gold_num):
        return MatchResult(False, "numeric", pred, gold_num,
                           f"{why}; numbers differ, by less than {NUMERIC_TOLERANCE:.0%} of the gold", near=True)
    return MatchResult(False, "numeric", pred, gold_num, f"{why}; numbers differ", near=False)
