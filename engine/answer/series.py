"""One metric over a run of periods — quarters ("the effective tax rate in each of the last four quarters", "how has
inventory changed across these quarters", "R&D this quarter against the previous quarters") or whole years ("the
operating margin in each of the last three fiscal years", "revenue in FY2020, FY2021 and FY2022"): each period
computed on its own from the statement facts of its filing (:mod:`engine.answer.from_facts`, no model), then set
side by side in one answer with the move from the first period to the last. The periods are those the question's
words pick (:func:`engine.retrieval.companies.resolve_latest`). A period whose figure could not be computed is
listed as such, with what is missing; the others stand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.records import AnswerResult, Citation, FactInputRef
from engine.wording import format_value

__all__ = ["PeriodFigure", "series_answer"]


@dataclass(frozen=True)
class PeriodFigure:
    """One period of the run: its label ("2023Q3", "FY2022"), the period as read ("3 months to 2023-07-01"; "" for
    a whole year) and its answer."""

    label: str
    period: str
    answer: AnswerResult


def _move(first: AnswerResult, last: AnswerResult) -> str:
    """The move from the first figure to the last, in the figures' own unit: points of a percentage, else the
    amount and its percent."""
    if first.value is None or last.value is None or first.unit != last.unit:
        return ""
    diff = last.value - first.value
    if first.unit == "percent":
        return f"{diff:+.2f} percentage points"
    moved = format_value(diff, first.unit, None)
    moved = moved if diff < 0 else f"+{moved}"
    if first.value:
        moved += f" ({diff / abs(first.value) * 100:+.1f}%)"
    return moved


def series_answer(what: str, figures: Sequence[PeriodFigure], each: str = "quarter") -> AnswerResult:
    """The run's answer: "<what>, quarter by quarter:" (or "year by year", ``each``) then one line per period,
    oldest first, each citing its own cells' pages; then the move from the first computed period to the last.
    Answered when two periods or more were computed; the periods not computed say why."""
    lines: list[str] = []
    citations: list[Citation] = []
    inputs: list[FactInputRef] = []
    reasons: dict[str, None] = {}
    done = [f for f in figures if f.answer.status == "answered" and f.answer.value is not None]
    # what every period's answer says is the run's own note (how its periods were read), said once by the caller
    said = [set(f.answer.reason.split("; ")) for f in figures]
    shared = set.intersection(*said) if len(said) > 1 else set()
    for f in sorted(figures, key=lambda f: f.label):
        a = f.answer
        marks = []
        for c in a.citations:
            same = next((x for x in citations if (x.doc_name, x.page_index) == (c.doc_name, c.page_index)), None)
            if same is None:
                same = replace(c, passage_id=len(citations) + 1)
                citations.append(same)
            marks.append(f"[{same.passage_id}]")
        when = f"{f.label} ({f.period})" if f.period else f.label
        if f in done:
            lines.append(f"- {when}: {a.text} {''.join(marks)}".rstrip())
            inputs += a.inputs
        else:
            why = "; ".join(r for r in a.reason.split("; ") if r and r not in shared) or a.text
            lines.append(f"- {when}: not computed ({why})")
        for r in a.reason.split("; "):
            if r and f in done and r not in shared:
                reasons.setdefault(f"{f.label}: {r}", None)
    text = f"{what[:1].upper()}{what[1:]}, {each} by {each}:\n" + "\n".join(lines)
    if len(done) >= 2:
        first, last = min(done, key=lambda f: f.label), max(done, key=lambda f: f.label)
        if move := _move(first.answer, last.answer):
            text += (f"\nFrom {first.label} to {last.label}: {first.answer.text} to {last.answer.text}, "
                     f"{move}.")
    status = "answered" if len(done) >= 2 else "not_answerable"
    if status != "answered":
        reasons.setdefault(f"{len(done)} of the {len(figures)} {each}s could be computed", None)
    return AnswerResult(status, text, None, done[0].answer.unit if done else None, method="facts",
                        citations=tuple(citations), inputs=tuple(inputs), reason="; ".join(reasons),
                        reasoning="\n\n".join([f"{what} in each of {len(figures)} {each}s, each computed from its own "
                                                 f"{'10-Q' if each == 'quarter' else 'annual report'}'s statement "
                                                 "facts without a model call",
                                                 *(f.answer.reasoning for f in done if f.answer.reasoning)]))
