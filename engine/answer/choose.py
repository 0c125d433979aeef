"""The model chooses, the engine computes: when the sufficiency check finds different values for an input (two
rows of one statement read as the line item, a company total beside a segment's), the model is shown the candidate
rows as numbered lines and answers, for each input, with the number of the row that fills it. The grammar allows
only those numbers (0: none fits), so the model never writes a figure; value, period and scale are the chosen
row's, as the engine read them at ingest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.answer.from_facts import Gap
from engine.models.base import ChatMessage, ChatModel
from engine.pages import page_number
from engine.prompts import prompt
from engine.records import LlmCall, StoredFact
from engine.settings import PromptSettings
from engine.trace import call_llm
from engine.vocab.catalogue import Term, variable

__all__ = ["candidate_line", "choose_facts"]

_MAX_CANDIDATES = 8  # rows shown for one input (the best-ranked first)


def candidate_line(number: int, s: StoredFact) -> str:
    """One candidate row as the model reads it (the page as a PDF reader numbers it, with the printed one)."""
    f = s.fact
    scale = f" {f.scale}" if f.scale else ""
    return (f"[{number}] {f.row} | {f.period.label} | {f.printed}{scale} | {f.statement or 'other table'} | "
            f"{s.doc_name} p.{page_number(f.page_index, s.printed_folio)}")


def choose_facts(question: str, company: str, gaps: Sequence[Gap], chat: ChatModel,
                 settings: PromptSettings | None = None, cancel: Callable[[], bool] | None = None,
                 ) -> tuple[dict[Term, StoredFact], LlmCall]:
    """For each gap with candidates, the candidate the model chooses (gaps it answers 0 for stay open), and the
    call as the trace records it."""
    numbered: dict[Term, dict[int, StoredFact]] = {}
    blocks: list[str] = []
    properties: dict[str, Any] = {}
    first = 1
    for gap in gaps:
        offered = dict(enumerate(gap.candidates[:_MAX_CANDIDATES], start=first))
        first += len(offered)
        numbered[gap.term] = offered
        ids = list(offered)
        lines = [candidate_line(n, s) for n, s in offered.items()]
        when = gap.when
        name = variable(gap.term)
        blocks.append(f"Input {name}: {company} {when} {gap.item.words} ({gap.item.statement})\n" + "\n".join(lines))
        properties[name] = {"type": "integer", "enum": [0, *ids]}
    schema = {"type": "object", "properties": properties, "required": list(properties),
              "additionalProperties": False}
    messages: list[ChatMessage] = [
        {"role": "system", "content": prompt("choose_facts", settings)},
        {"role": "user", "content": f"Question: {question}\n\n" + "\n\n".join(blocks)
                                    + "\n\nAnswer with a JSON object: each input's row number."}]
    result, call = call_llm(chat, "choose facts", messages, schema, 16 * len(properties) + 16, cancel)
    chosen: dict[Term, StoredFact] = {}
    if result is not None:
        for gap in gaps:
            number = result.data.get(variable(gap.term), 0)
            if number in numbered[gap.term]:  # the grammar allows nothing else; a schema-less backend is checked
                chosen[gap.term] = numbered[gap.term][number]
    return chosen, call
