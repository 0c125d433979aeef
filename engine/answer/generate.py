"""HiREC answer generation (§4.3), the written answer: chain of thought over the curated passages, every figure
it states checked against the passages it cites. A numeric answer is a program over the ids of the figures the
passages print (:mod:`engine.answer.fact_formula`): the model names figures, it never types one; the helpers
here state its value (:func:`engine.wording.format_value`) and run its program in the restricted evaluator
(:func:`run_answer_program`, never exec)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from engine.answer.evaluator import EvalResult, extract_program, run_program
from engine.answer.fact_lines import FactLine, render_fact_lines
from engine.models.base import ChatModel
from engine.prompts import evidence_messages, prompt
from engine.records import (
    AnswerResult,
    Citation,
    Grounding,
    LlmCall,
    Passage,
)
from engine.settings import AnswerSettings, PromptSettings
from engine.trace import call_llm
from engine.vocab.numbers import NUMBER, numbers_in, parse_number

NOT_ANSWERABLE = "not answerable from the loaded filings"


def _ids(n: int) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "integer", "enum": list(range(1, n + 1)) or [1]}, "maxItems": 10}


def text_schema(n_passages: int) -> dict[str, Any]:
    return {
        "type": "object",
        # Every string fits the grammar's length bound (engine.models.llama.GRAMMAR_MAX_STRING): an unbounded
        # reasoning string let the model repeat itself until max_tokens cut the JSON off, on every retry.
        "properties": {"reasoning": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 3},
                       "answer": {"type": "string", "maxLength": 250},
                       "used_ids": _ids(n_passages), "insufficient": {"type": "boolean"}},
        "required": ["reasoning", "answer", "used_ids", "insufficient"],
        "additionalProperties": False,
    }


def passage_numbers(text: str) -> set[float]:
    """Every figure printed in ``text``, each also unsigned: grounding ignores the sign."""
    nums = numbers_in(text)
    return nums | {abs(v) for v in nums}


def printed_in(value: float, nums: dict[int, set[float]]) -> list[int]:
    """Passages printing ``value`` as is or a thousand times larger or smaller (billions written for a
    table in millions), sign ignored."""
    forms = {round(abs(value) * f, 6) for f in (1, 1000, 0.001)}
    return [i for i, ns in nums.items() if forms & {round(abs(n), 6) for n in ns}]


YEAR = re.compile(r"^(?:19|20)\d\d$")


def ground_text(answer: str, question: str, passages: Sequence[Passage], cited: Sequence[int],
                known: Sequence[float] = ()) -> list[Grounding]:
    """Check each figure a written answer states against the passages it cites.

    Years and figures already in the question are skipped; a figure counts as printed when it appears
    in a cited passage as is or a thousand times larger or smaller (billions written for a table in
    millions), and as grounded when it is one of the ``known`` values the engine computed from the statement
    facts, as written (rounded to the figure's decimals). Any other figure was computed by the model, or
    invented: the note says so.
    """
    asked = passage_numbers(question)
    nums = {i: passage_numbers(p.prompt_text()) for i, p in enumerate(passages, start=1)}
    rows = []
    for token in dict.fromkeys(t.strip() for t in NUMBER.findall(answer)):
        value = parse_number(token)
        digits = re.sub(r"[^\d]", "", token)
        if value is None or YEAR.match(digits) or abs(value) in asked:
            continue
        found = tuple(printed_in(value, nums))
        places = len(token.split(".", 1)[1].rstrip("%").strip()) if "." in token else 0
        if any(round(abs(k), places) == round(abs(value), places) for k in known):
            rows.append(Grounding(f"stated {token}", value, tuple(cited), True, found,
                                  label="computed by the engine from the statement facts"))
            continue
        rows.append(Grounding(f"stated {token}", value, tuple(cited), any(i in found for i in cited), found))
    return rows


def _citations(ids: Sequence[int], passages: Sequence[Passage]) -> tuple[Citation, ...]:
    out = []
    for i in dict.fromkeys(ids):
        if 1 <= i <= len(passages):
            p = passages[i - 1]
            out.append(Citation.of(i, p))
    return tuple(out)


def run_answer_program(program: str, settings: AnswerSettings) -> EvalResult:
    """Run an answer's program in the restricted evaluator under the settings' limits."""
    return run_program(extract_program(program), max_steps=settings.program_max_steps,
                       timeout_s=settings.program_timeout_s, max_int_bits=settings.program_max_int_bits,
                       max_seq_len=settings.program_max_seq_len)


def answer_text(question: str, passages: Sequence[Passage], chat: ChatModel, settings: AnswerSettings,
                prompts: PromptSettings, *, facts: Sequence[FactLine] = (), computed: str = "",
                known: Sequence[float] = (), cancel: Callable[[], bool] | None = None) -> tuple[AnswerResult, LlmCall]:
    """A written answer from the curated passages, with ``facts`` (the figures they print,
    :mod:`engine.answer.fact_lines`) listed after them and ``computed`` (metrics the engine computed from the
    statement facts, :mod:`engine.answer.metric_lines`), whose values ``known`` count as grounded. Every figure
    the answer states is checked against the passages it cites (:func:`ground_text`); raises
    :class:`engine.errors.Cancelled` when ``cancel`` fires."""
    block = "\n\n".join(b for b in (render_fact_lines(facts), computed) if b)
    messages = evidence_messages(prompt("answer_text", prompts), question, passages, prompts, block)
    res, call = call_llm(chat, "answer (chain of thought)", messages, text_schema(len(passages)), settings.max_tokens,
                         cancel)
    if res is None:
        return AnswerResult("failed", "", method="cot", reason=call.error), call
    reasoning = "\n".join(step.strip() for step in res.data["reasoning"] if step.strip())
    if res.data["insufficient"]:
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="cot", reasoning=reasoning,
                            reason=res.data["answer"]), call
    text = res.data["answer"].strip()
    cited = list(dict.fromkeys(i for i in res.data["used_ids"] if 1 <= i <= len(passages)))
    grounding = ground_text(text, question, passages, cited, known)
    unsupported = [g.variable.removeprefix("stated ") for g in grounding if not g.verified]
    reason = (f"figure(s) {', '.join(unsupported)} not printed in the cited passages: computed by the model or "
              "unsupported; check them" if unsupported else "")
    return AnswerResult("answered", text, method="cot", reasoning=reasoning,
                        citations=_citations(cited, passages), grounding=tuple(grounding), reason=reason), call
