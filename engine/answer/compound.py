"""A question in two parts — a number, then something in words about it ("What was X's gross margin in FY2023, and
what did management say drove it?") — answered in two parts: the number computed from the statement facts
(:mod:`engine.answer.from_facts`, no model), then the rest from the filing's quoted sentences
(:mod:`engine.answer.quotes`). The question reader cuts the clauses (:func:`engine.intent.shape.compound_parts`);
each part keeps its own evidence: the number its input cells, the words their quotes. A part that could not be
answered says so, and the other still stands.
"""

from __future__ import annotations

from dataclasses import replace

from engine.records import AnswerResult

__all__ = ["joined_answer"]


def joined_answer(number: AnswerResult, words: AnswerResult, rest: str, what: str = "") -> AnswerResult:
    """One answer of a number's answer (``what`` it is: "gross margin, FY2023") and the answer in words to
    ``rest`` (the question's second part)."""
    if words.status == "answered" and words.text.strip():
        said = words.text.strip()
    else:
        why = words.reason or words.text or "nothing in the filing answers it"
        said = f"“{rest}” is not answered: {why}"
    answered = "answered" in (number.status, words.status)
    reasons = dict.fromkeys(x for r in (number.reason, words.reason) for x in r.split("; ") if x)
    lead = f"{what[:1].upper()}{what[1:]}: {number.text}" if what and number.value is not None else number.text
    return replace(words, status="answered" if answered else number.status, text=f"{lead}\n\n{said}",
                   value=number.value, unit=number.unit, method=f"{number.method or 'facts'}+{words.method or 'text'}",
                   program=number.program, variables=number.variables, computed=number.computed,
                   citations=number.citations + tuple(c for c in words.citations if c not in number.citations),
                   reasoning="\n\n".join(x for x in (number.reasoning, words.reasoning) if x),
                   grounding=number.grounding + words.grounding, reason="; ".join(reasons), inputs=number.inputs,
                   choices=())
