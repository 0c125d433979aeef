"""HiREC answer generation (§4.3): program of thought for numeric questions (run by the restricted
evaluator, never exec), chain of thought for textual ones. Every figure in a program is checked
against the passages it cites, and the answer is normalised (value, unit, scale)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from engine.answer.evaluator import EvalResult, ProgramFailed, ProgramRejected, extract_program, run_program
from engine.answer.fact_lines import FactLine, render_fact_lines
from engine.facts.numbers import NUMBER, numbers_in, parse_number, printed_scale
from engine.models.base import ChatModel
from engine.prompts import evidence_messages, prompt
from engine.records import (
    AnswerResult,
    Citation,
    Computation,
    Grounding,
    LlmCall,
    Passage,
    ProgramVariable,
    QueryIntent,
)
from engine.settings import AnswerSettings, PromptSettings
from engine.trace import call_llm

NOT_ANSWERABLE = "not answerable from the loaded filings"


def _ids(n: int) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "integer", "enum": list(range(1, n + 1)) or [1]}, "maxItems": 10}


def program_schema(n_passages: int, max_variables: int = 12) -> dict[str, Any]:
    variable = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 60},
            "value": {"type": "number"},
            "passage_id": {"type": "integer", "enum": list(range(1, n_passages + 1)) or [1]},
            "label": {"type": "string", "maxLength": 100},
        },
        "required": ["name", "value", "passage_id", "label"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"variables": {"type": "array", "items": variable, "maxItems": max_variables},
                       "formula": {"type": "string", "maxLength": 240}, "insufficient": {"type": "boolean"}},
        "required": ["variables", "formula", "insufficient"],
        "additionalProperties": False,
    }


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


def _printed_in(value: float, nums: dict[int, set[float]]) -> list[int]:
    """Passages printing ``value`` as is or a thousand times larger or smaller (billions written for a
    table in millions), sign ignored."""
    forms = {round(abs(value) * f, 6) for f in (1, 1000, 0.001)}
    return [i for i, ns in nums.items() if forms & {round(abs(n), 6) for n in ns}]


def ground(variables: Sequence[ProgramVariable], passages: Sequence[Passage]) -> list[Grounding]:
    """Check each figure against the passage the model says it came from (and find where else it is printed).

    ``variables`` are as the program names them (see :func:`program_variables`)."""
    nums = {i: passage_numbers(p.prompt_text()) for i, p in enumerate(passages, start=1)}
    rows = []
    for v in variables:
        value, pid = float(v.value), v.passage_id
        found = tuple(_printed_in(value, nums))
        rows.append(Grounding(v.name, value, (pid,), pid in found, found, v.label))
    return rows


_YEAR = re.compile(r"^(?:19|20)\d\d$")


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
        if value is None or _YEAR.match(digits) or abs(value) in asked:
            continue
        found = tuple(_printed_in(value, nums))
        places = len(token.split(".", 1)[1].rstrip("%").strip()) if "." in token else 0
        if any(round(abs(k), places) == round(abs(value), places) for k in known):
            rows.append(Grounding(f"stated {token}", value, tuple(cited), True, found,
                                  label="computed by the engine from the statement facts"))
            continue
        rows.append(Grounding(f"stated {token}", value, tuple(cited), any(i in found for i in cited), found))
    return rows


def _unit(intent: QueryIntent, passages: Sequence[Passage]) -> str | None:
    if intent.unit_hint:
        return intent.unit_hint
    scale = printed_scale(" ".join(p.prompt_text()[:400] for p in passages))
    return f"USD {scale}" if scale else None


def format_value(value: float, unit: str | None, decimals: int | None) -> str:
    if unit == "percent":
        return f"{value:.{2 if decimals is None else decimals}f}%"
    if decimals is not None:
        body = f"{value:,.{decimals}f}"
    elif float(value).is_integer():
        body = f"{value:,.0f}"
    else:
        body = f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4f}"
    return f"{body} {unit}" if unit else body


def _citations(ids: Sequence[int], passages: Sequence[Passage]) -> tuple[Citation, ...]:
    out = []
    for i in dict.fromkeys(ids):
        if 1 <= i <= len(passages):
            p = passages[i - 1]
            out.append(Citation.of(i, p))
    return tuple(out)


def answer_question(question: str, intent: QueryIntent, passages: Sequence[Passage], chat: ChatModel,
                    settings: AnswerSettings, prompts: PromptSettings, *, facts: Sequence[FactLine] = (),
                    computed: str = "", known: Sequence[float] = (),
                    cancel: Callable[[], bool] | None = None) -> tuple[AnswerResult, LlmCall]:
    """Answer from the curated passages, with ``facts`` (the statement facts they print) listed after them and,
    for a written answer, ``computed`` (metrics the engine computed from the facts,
    :mod:`engine.answer.metric_lines`) whose values ``known`` count as grounded; raises
    :class:`engine.errors.Cancelled` when ``cancel`` fires."""
    block = render_fact_lines(facts)
    if intent.numeric and settings.numeric_mode == "pot":
        return _answer_program(question, intent, passages, block, chat, settings, prompts, cancel)
    block = "\n\n".join(b for b in (block, computed) if b)
    return _answer_text(question, passages, block, chat, settings, prompts, cancel, known)


_NAME = re.compile(r"[^a-z0-9_]")


def _program_name(name: str) -> str:
    out = _NAME.sub("_", name.strip().lower()) or "x"
    return out if out[0].isalpha() else f"v_{out}"


def program_variables(variables: Sequence[ProgramVariable]) -> tuple[ProgramVariable, ...]:
    """The model's figures as the program names them: identifiers for names, labels on one line."""
    return tuple(ProgramVariable(_program_name(v.name), v.value, v.passage_id, " ".join(str(v.label).split())[:100])
                 for v in variables)


def build_program(variables: Sequence[ProgramVariable], formula: str) -> tuple[str, dict[str, str]]:
    """``def solution()`` from the model's figures and formula; returns the program and name renames.

    The program is text for the restricted evaluator (and the audit trail), never run by Python itself.
    """
    renames, lines = {}, ["def solution():"]
    for var, named in zip(variables, program_variables(variables)):
        renames[var.name] = named.name
        lines.append(f"    {named.name} = {named.value!r}  # [{named.passage_id}] {named.label}")
    expr = " ".join(formula.split())
    for old, new in sorted(renames.items(), key=lambda kv: -len(kv[0])):
        if old != new:
            expr = re.sub(rf"(?<![\w.]){re.escape(old)}(?![\w])", new, expr)
    # The grammar caps a variable's name at its maxLength while the formula may spell it in full
    # ("capex_2018_purchases_of_..._equipment" named "capex_2018_purchases_of_"): a name in the formula
    # that only one variable's name begins is that variable.
    names = set(renames.values())

    def resolve(m: re.Match[str]) -> str:
        word = m.group(0)
        if word in names or word in _FORMULA_WORDS:
            return word
        owners = [n for n in names if len(n) >= 8 and word.lower().startswith(n)]
        return owners[0] if len(owners) == 1 else word

    expr = re.sub(r"(?<![\w.])[A-Za-z_]\w*", resolve, expr)
    lines.append(f"    return {expr}")
    return "\n".join(lines) + "\n", renames


_FORMULA_WORDS = frozenset({"round", "abs", "min", "max", "sum"})


def run_answer_program(program: str, settings: AnswerSettings) -> EvalResult:
    """Run an answer's program in the restricted evaluator under the settings' limits."""
    return run_program(extract_program(program), max_steps=settings.program_max_steps,
                       timeout_s=settings.program_timeout_s, max_int_bits=settings.program_max_int_bits,
                       max_seq_len=settings.program_max_seq_len)


def _answer_program(question: str, intent: QueryIntent, passages: Sequence[Passage], facts: str, chat: ChatModel,
                    settings: AnswerSettings, prompts: PromptSettings,
                    cancel: Callable[[], bool] | None) -> tuple[AnswerResult, LlmCall]:
    messages = evidence_messages(prompt("answer_program", prompts), question, passages, prompts, facts)
    res, call = call_llm(chat, "answer (program of thought)", messages,
                         program_schema(len(passages), settings.max_variables), settings.max_tokens, cancel)
    if res is None:
        return AnswerResult("failed", "", method="pot", reason=call.error), call
    variables = [ProgramVariable(v["name"], v["value"], v["passage_id"], v["label"]) for v in res.data["variables"]]
    formula = res.data["formula"].strip()
    if res.data["insufficient"] or not variables or not formula:
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="pot",
                            reason="the model found the figures missing from the curated passages"), call
    program, _ = build_program(variables, formula)
    named = program_variables(variables)
    try:
        result = run_answer_program(program, settings)
    except (ProgramRejected, ProgramFailed) as exc:
        kind = "rejected" if isinstance(exc, ProgramRejected) else "failed"
        return AnswerResult("failed", "", method="pot", program=program, variables=named,
                            reason=f"the model's program was {kind} by the restricted evaluator: {exc}"), call
    value = result.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return AnswerResult("failed", "", method="pot", program=program, variables=named,
                            reason=f"the program returned {type(value).__name__}, not a number"), call
    grounding = ground(named, passages)
    computed = Computation(value, result.variables, result.steps)
    unprinted = [g for g in grounding if not g.found_in]
    if unprinted:
        # A figure printed in none of the passages was recalled or invented by the model: never an answer.
        figures = ", ".join(f"{g.value:g} ({g.variable})" for g in unprinted)
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="pot", program=program, variables=named,
                            grounding=tuple(grounding), computed=computed,
                            reason=f"the model's figure(s) {figures} are printed in none of the passages it was given, "
                                   "so they were recalled or made up; no answer is given"), call
    cited = {i for g in grounding for i in g.cited}
    unit = _unit(intent, passages)
    notes = [f"figure {g.value:g} ({g.variable}) is not printed in passage [{g.cited[0]}]"
             for g in grounding if not g.verified]
    return AnswerResult(
        "answered", format_value(float(value), unit, intent.decimals), value=value, unit=unit, method="pot",
        citations=_citations(sorted(cited), passages), program=program, variables=named, computed=computed,
        grounding=tuple(grounding), reason="; ".join(notes),
    ), call


def _answer_text(question: str, passages: Sequence[Passage], facts: str, chat: ChatModel, settings: AnswerSettings,
                 prompts: PromptSettings, cancel: Callable[[], bool] | None,
                 known: Sequence[float] = ()) -> tuple[AnswerResult, LlmCall]:
    messages = evidence_messages(prompt("answer_text", prompts), question, passages, prompts, facts)
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
