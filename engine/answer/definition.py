"""A definition written in the question overrides the catalogue's: "DPO is defined as: 365 * (average accounts
payable between FY2016 and FY2017) / (FY2017 COGS + change in inventory between FY2016 and FY2017)".

:func:`defined_formula` reads the definition's arithmetic in symbols or words ("divided by", "plus", "less") into a
catalogue formula. Each operand is a line item or metric the intent lexicon names, or a number; "average X" is
the balance averaged over two year-ends (``avg``), "change in X" is X less its prior year-end, and an operand
dated a year before the definition's latest year is that year's (``prior``). A definition with an operand that
names no catalogue line item is not guessed at: the question then is not the catalogue's to answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.answer.catalogue import Catalogue, Metric, formula_terms
from engine.intent.lexicon import find_metrics

__all__ = ["Definition", "defined_formula", "states_definition"]

_STATED = re.compile(r"(?:\b(?:is|are|be)\s+(?:defined|calculated|computed|measured)|\bdefine\s+(?P<subject>[^.?;:]{2,60}?))"
                     r"\s+as\s*:?\s*(?P<expr>[^?;]+?)(?=\.\s|\.$|\?|;|$)", re.IGNORECASE)
_OPERATORS = {"×": "*", "÷": "/", "divided by": "/", "over": "/", "multiplied by": "*", "times": "*", "plus": "+",
              "minus": "-", "less": "-"}  # the rest ("/", "*", "+", "-", parentheses) as written
_OPERATOR = re.compile(r"\s*(?:(?<=\s)(?:divided by|multiplied by|times|plus|minus|less|over)(?=\s)|[/*+×÷()]|"
                       r"(?<=\s)-(?=\s))\s*", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:fy|fiscal(?: year)?\s*)?'?((?:19|20)\d\d)\b", re.IGNORECASE)
_BETWEEN = re.compile(r"\b(?:between|from)\s+\S+\s+(?:and|to)\s+\S+", re.IGNORECASE)


@dataclass(frozen=True)
class Definition:
    text: str  # the definition as the question writes it
    metric: Metric | None  # its formula over catalogue items, or None: an operand names no line item


def states_definition(question: str) -> tuple[str, str]:
    """(what is defined, the definition's arithmetic) as the question writes them (("", "") when it states none)."""
    text = " ".join(question.split())
    m = _STATED.search(text)
    if m is None:
        return "", ""
    subject = m["subject"] or re.split(r"[.?!:]\s", text[: m.start()])[-1]
    return subject.strip(), re.sub(r"\s*\[[^\]]*\]", "", m["expr"]).strip()  # "[from the cash flow statement]"


def defined_formula(question: str, catalogue: Catalogue) -> Definition | None:
    """The question's own definition of a metric as a catalogue formula (None when it writes none). A defined
    metric the catalogue knows ("DPO") keeps its unit (days); another is a ratio, or an amount when the
    definition divides nothing."""
    subject, text = states_definition(question)
    if not text:
        return None
    named = [m for m in find_metrics(subject) if m in catalogue.metrics]
    asked = catalogue.metrics[named[0]] if len(named) == 1 else None
    latest = max((int(y) for y in _YEAR.findall(text)), default=None)
    parts: list[str] = []
    pieces = _OPERATOR.split(text)
    for op, piece in zip([""] + _OPERATOR.findall(text), pieces):
        sym = op.strip().lower()
        if sym:
            parts.append(_OPERATORS.get(sym, sym))
        if piece.strip():
            operand = _operand(piece.strip(), catalogue, latest)
            if operand is None:
                return Definition(text, None)
            parts.append(operand)
    formula = " ".join(parts)
    try:
        terms = formula_terms(formula)
    except SyntaxError:
        return Definition(text, None)
    if not terms or any(t.item not in catalogue.items for t in terms):
        return Definition(text, None)
    unit = asked.unit if asked is not None else ("ratio" if "/" in formula else "USD")
    if unit == "percent" and not re.search(r"\b100\b", formula):  # "margin = operating income / revenue"
        formula = f"({formula}) * 100"
    name = asked.name if asked is not None else "defined metric"
    return Definition(text, Metric(name, (formula,), unit, f"{subject or name} as the question defines it: {text}"))


def _operand(text: str, catalogue: Catalogue, latest: int | None) -> str | None:
    """One operand as a formula term: a number, or a line item with its average, change or year."""
    if re.fullmatch(r"\d+(?:\.\d+)?", text.replace(",", "")):
        return text.replace(",", "")
    low = text.lower()
    averaged = bool(re.search(r"\b(?:average|avg|mean)\b", low))
    change = bool(re.search(r"\b(?:change|increase|decrease)\s+in\b", low))
    years = [int(y) for y in _YEAR.findall(_BETWEEN.sub(" ", text))]
    metrics = [m for m in find_metrics(text) if m in catalogue.metrics]
    if len(metrics) != 1:
        return None
    formula = catalogue.metrics[metrics[0]].formulas[0]
    single = formula in catalogue.items
    if (averaged or change) and not (single and catalogue.items[formula].kind == "instant"):
        return None  # an average or a change of two year-ends is of a balance
    if averaged:
        return f"avg({formula})"
    if change:
        return f"({formula} - prior({formula}))"
    back = latest - years[0] if years and latest is not None else 0
    if back == 0:
        return formula if single else f"({formula})"
    return f"prior({formula})" if back == 1 and single else None
