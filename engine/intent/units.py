"""The unit and the rounding a question asks its answer in ("in USD millions", "round to one decimal")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.vocab.numbers import SCALE_FACTORS

_USD = r"(?:usd|us\$|\$)\s*(?:in\s+)?"
# The scales a question asks an amount in, named as tables print them (the keys of SCALE_FACTORS, which the
# answer step converts between): "in USD millions", "$ in billions", "millions of dollars".
_ASKED_SCALES = ("billions", "millions", "thousands")
assert set(_ASKED_SCALES) <= set(SCALE_FACTORS)
_UNIT_RES = tuple((name, re.compile(p, re.IGNORECASE)) for name, p in (
    *((f"USD {scale}", rf"{_USD}{scale[:-1]}s?\b|\bin\s+{scale}\b|\b{scale}\s+of\s+(?:us\s+)?dollars")
      for scale in _ASKED_SCALES),
    ("percent", (r"\bunits?\s+of\s+percents?\b|\bin\s+percent(?:s|age)?\b|\bas\s+a\s*(?:%|percent)|"
                 r"%\s*margin|\bwhat\s+(?:percent|percentage)\b|\bpercentage\s+points?\b")),
))
_DECIMALS = re.compile(r"\b(no|zero|one|two|three|four|\d)\s+decimal(?:\s+(?:places?|points?|digits?)|s)\b"
                       r"|\bnearest\s+(whole\s+number|integer|tenth|hundredth|thousandth)\b", re.IGNORECASE)
_DEC_WORD = {"no": 0, "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "whole number": 0, "integer": 0,
             "tenth": 1, "hundredth": 2, "thousandth": 3}
_RATIO = re.compile(r"\bratio\b|\bhow\s+many\s+times\b", re.IGNORECASE)
# How a question names a relative figure; the answer step states such a ratio as a percentage.
# a share of something: "as a % of revenue", "what percent", "as a portion of"
ASKS_SHARE = re.compile(r"%|\bpercent|\bas\s+a\s+(?:share|portion|proportion)\b", re.IGNORECASE)
ASKS_MARGIN = re.compile(r"\bmargins?\b", re.IGNORECASE)
# a change over a year asked as a rate: "revenue growth", "by what percent did ... grow", "% change"
ASKS_GROWTH = re.compile(r"\b(?:growth|grew|grow|(?:percent(?:age)?|%)\s+change|change\s+in\s+percent|"
                         r"year[- ]over[- ]year|(?:increase|decrease|decline)d?\s+by\s+what\s+(?:percent|%))\b"
                         r"|\byoy\b|\by/y\b", re.IGNORECASE)


def asks_share(question: str) -> bool:
    """Whether the question asks a share of something: "as a % of revenue", "what percent", "as a portion of"."""
    return ASKS_SHARE.search(question) is not None


def asks_margin(question: str) -> bool:
    return ASKS_MARGIN.search(question) is not None


def asks_percentage(question: str) -> bool:
    """Whether the question asks a ratio as a percentage: a share, a margin or a growth rate."""
    return any(rx.search(question) for rx in (ASKS_SHARE, ASKS_MARGIN, ASKS_GROWTH))


_ASKS_AMOUNT = re.compile(r"\bhow\s+much\b|\bamounts?\b|\bquantity\b|\bhow\s+many\s+dollars\b|\bsum\s+of\b",
                          re.IGNORECASE)
_TURNOVER = re.compile(r"\bturnover\b|\bmultiple\b", re.IGNORECASE)


def asked_dimension(question: str, unit: str | None) -> str | None:
    """What kind of number the question asks for: "ratio" (a ratio, a percentage, a margin, a growth rate, a
    turnover), "amount" (a sum of money or of shares: "how much", "the amount of", a scale asked), or None when
    its words do not say. ``unit``: the intent's unit hint."""
    if unit in ("percent", "ratio") or asks_percentage(question) or _RATIO.search(question) or \
            _TURNOVER.search(question):
        return "ratio"
    if (unit or "").startswith("USD ") or _ASKS_AMOUNT.search(question):
        return "amount"
    return None


# Words that make a number asked a computation over several figures, not one figure as a filing reports it.
_COMPUTES = re.compile(
    r"\b(?:chang\w*|increas\w*|decreas\w*|declin\w*|grow\w*|grew|rise|rose|fell|drop\w*|differ\w*|compar\w*|"
    r"versus|vs|more|less|fewer|higher|lower|total|sum|combined|together|aggregate|average|mean|net\s+of|"
    r"exclud\w*|includ\w*|ratio|times|per|each|divided|multipl\w*|between|remaining|left)\b", re.IGNORECASE)


def asks_one_figure(question: str, unit: str | None) -> bool:
    """Whether a numeric question asks for one amount as a filing reports it ("what is the amount of the gain",
    "how much did it pay in dividends"): an amount, and no word of change, comparison, sum, share or average.
    Such an answer is one listed figure, chosen, not a formula over several."""
    return asked_dimension(question, unit) == "amount" and not _COMPUTES.search(question)


def stated_units(text: str) -> list[str]:
    """Every unit the text names, in order of mention."""
    mentions = sorted((m.start(), name) for name, rx in _UNIT_RES for m in rx.finditer(text))
    return [name for _, name in mentions]


def stated_decimals(text: str) -> int | None:
    """The number of decimals asked for, or None when the text asks for no rounding."""
    dm = _DECIMALS.search(text)
    if not dm:
        return None
    word = (dm[1] or dm[2]).lower()
    return int(word) if word.isdigit() else _DEC_WORD[word]


def unit_hint(units: Sequence[str], question: str, metrics: Sequence[str], numeric: bool) -> str | None:
    """The unit of a numeric answer: the first one stated, else "ratio" for a ratio or turnover asked in
    ``question``; None for a textual answer."""
    if not numeric:
        return None
    if units:
        return units[0]
    if _RATIO.search(question) or any(x.endswith(("ratio", "turnover")) for x in metrics):
        return "ratio"
    return None
