"""A numeric answer as a formula over fact ids: the model names which listed facts the answer needs and how they
combine (``(F3 - F7) / F7``); it writes no figure. The engine fills each id with its cell's value, runs the formula
in the restricted evaluator and states the result in the unit and scale the question asks for.

The formula language is arithmetic over ``F<n>`` ids and a few constants that are not figures of a filing
(counts of years, days, months, quarters and weeks, and 100). Its meaning is fixed by its dimension, not by the
question's wording: a formula whose value doubles when every fact doubles is an amount, in its facts' unit and
scale; one whose value stays is a ratio, stated as a percentage when the question asks for one. A closing
``* 100`` marks a ratio already written as a percentage. Any other literal is a figure the model typed, and the
formula is rejected (the caller falls back to the model-written program, which checks every figure it types).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from typing import Any

from engine.answer.evaluator import ProgramFailed, ProgramRejected
from engine.answer.fact_lines import FactLine, render_fact_lines
from engine.answer.generate import NOT_ANSWERABLE, format_value, run_answer_program
from engine.facts.numbers import SCALE_FACTORS
from engine.intent.units import asked_dimension, asks_one_figure, asks_percentage
from engine.models.base import ChatModel
from engine.prompts import evidence_messages, prompt
from engine.records import AnswerResult, Citation, Computation, FactInputRef, LlmCall, Passage, QueryIntent
from engine.settings import AnswerSettings, PromptSettings
from engine.trace import call_llm

__all__ = ["CONSTANTS", "FORMULA_FOUND_BY", "FormulaRejected", "answer_from_fact_formula", "fact_schema",
           "formula_schema", "parse_formula"]

# literals a formula may hold: they count years, days, months, quarters or weeks, or make a percentage
CONSTANTS = frozenset({*range(1, 11), 12, 52, 100, 360, 365})
FORMULA_FOUND_BY = "named by the model's formula over the facts listed"
_ID = re.compile(r"F([1-9]\d*)")
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Load, ast.Add, ast.Sub, ast.Mult,
          ast.Div, ast.Pow, ast.USub, ast.UAdd)

class FormulaRejected(ValueError):
    """The formula is not arithmetic over the listed fact ids and the allowed constants."""


def formula_schema(n_facts: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_facts + 1))},
                                 "maxItems": 12},
                       "formula": {"type": "string", "maxLength": 160},
                       "insufficient": {"type": "boolean"}},
        "required": ["facts", "formula", "insufficient"],
        "additionalProperties": False,
    }


def fact_schema(n_facts: int) -> dict[str, Any]:
    """One listed fact's id, or 0 for none (a question asking one reported figure)."""
    return {"type": "object", "properties": {"fact": {"type": "integer", "enum": list(range(n_facts + 1))}},
            "required": ["fact"], "additionalProperties": False}


def parse_formula(formula: str, n_facts: int) -> tuple[str, tuple[int, ...], bool]:
    """The formula checked: (the expression to compute, the fact ids it uses, whether a closing ``* 100`` made
    it a percentage; the expression is then the ratio before it).

    Raises:
        FormulaRejected: not an expression; a name that is no listed fact id; a literal that is not one of
            :data:`CONSTANTS` (a figure typed, not read from a fact); any other construct.
    """
    text = " ".join(formula.split())
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise FormulaRejected(f"`{text}` is not an arithmetic expression") from exc
    ids: list[tuple[int, int]] = []  # (column, id): in the order written
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise FormulaRejected(f"`{text}` uses {type(node).__name__}: only + - * / ** and parentheses")
        if isinstance(node, ast.Name):
            m = _ID.fullmatch(node.id)
            if m is None or int(m[1]) > n_facts:
                raise FormulaRejected(f"`{node.id}` in `{text}` is not one of the facts F1..F{n_facts}")
            ids.append((node.col_offset, int(m[1])))
        elif isinstance(node, ast.Constant) and (isinstance(node.value, bool) or node.value not in CONSTANTS):
            raise FormulaRejected(f"`{text}` writes the figure {node.value!r}: values come from the facts")
    if not ids:
        raise FormulaRejected(f"`{text}` names no fact")
    used = tuple(dict.fromkeys(i for _, i in sorted(ids)))
    body = tree.body
    if isinstance(body, ast.BinOp) and isinstance(body.op, ast.Mult):
        for side, other in ((body.right, body.left), (body.left, body.right)):
            if isinstance(side, ast.Constant) and side.value == 100:
                return ast.unparse(other), used, True
    return ast.unparse(body), used, False


def _program(expression: str, lines: dict[int, FactLine], factor: float = 1.0) -> str:
    rows = [f"    F{i} = {line.stored.fact.scaled_value * factor!r}  # {line.stored.fact.row[:60]}"
            for i, line in sorted(lines.items())]
    return "def solution():\n" + "\n".join(rows) + f"\n    return {expression}\n"


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _express(value: float, doubled: float, percent: bool, used: Sequence[FactLine],
             intent: QueryIntent) -> tuple[float, str | None]:
    """The result in the unit the question asks for: (value, unit); see the module's docstring.

    Raises:
        FormulaRejected: an amount multiplied by 100, or a formula over facts of different units.
    """
    units = {line.stored.fact.unit for line in used}
    asked = intent.unit_hint
    dimension = asked_dimension(intent.question, asked)
    if _close(doubled, value):  # a ratio of amounts
        if dimension == "amount":
            raise FormulaRejected("the question asks for an amount and the formula gives a ratio")
        if asked == "ratio" or not (percent or asked == "percent" or asks_percentage(intent.question)):
            return value, "ratio"
        return value * 100, "percent"
    if percent or not _close(doubled, 2 * value) or len(units) != 1:
        raise FormulaRejected("the formula is neither an amount of one unit nor a ratio of amounts")
    if dimension == "ratio":
        raise FormulaRejected("the question asks for a ratio and the formula gives an amount")
    (unit,) = units
    if unit in ("USD", "shares"):
        printed = {line.stored.fact.scale for line in used}
        scale = asked.removeprefix("USD ") if asked and asked.startswith("USD ") and unit == "USD" else (
            next(iter(printed)) if len(printed) == 1 and None not in printed else "millions")
        assert scale is not None
        return value / SCALE_FACTORS[scale], f"{unit} {scale}"
    return value, {"USD/share": "USD per share", "%": "percent"}.get(unit, unit)


def _check_periods(used: Sequence[FactLine], intent: QueryIntent) -> None:
    """A question that names its fiscal years is answered from facts of those years (a change also reads the
    years before): a formula none of whose facts is of a year asked answers another period's question.

    Raises:
        FormulaRejected: no fact of an asked year among ``used``.
    """
    years = set(intent.fiscal_years)
    if years and not any(line.stored.fact.period.fiscal_year in years for line in used):
        asked = ", ".join(f"FY{y}" for y in sorted(years))
        got = ", ".join(sorted({line.stored.fact.period.label for line in used}))
        raise FormulaRejected(f"the question asks about {asked} and the facts used are of {got}")


def _ask_formula(question: str, intent: QueryIntent, passages: Sequence[Passage], lines: Sequence[FactLine],
                 chat: ChatModel, settings: AnswerSettings, prompts: PromptSettings,
                 cancel: Callable[[], bool] | None) -> tuple[str | None, LlmCall]:
    """The model's formula over the fact ids ("" when it finds none enough; None when the call failed). A question
    asking one reported figure gets one id chosen under the grammar (``F<n>``), not a formula."""
    facts = render_fact_lines(lines)
    if asks_one_figure(question, intent.unit_hint):
        messages = evidence_messages(prompt("answer_fact", prompts), question, passages, prompts, facts=facts)
        res, call = call_llm(chat, "answer (one fact)", messages, fact_schema(len(lines)), 16, cancel)
        return (None if res is None else f"F{res.data['fact']}" if res.data["fact"] else ""), call
    messages = evidence_messages(prompt("answer_facts", prompts), question, passages, prompts, facts=facts)
    res, call = call_llm(chat, "answer (formula over facts)", messages, formula_schema(len(lines)),
                         settings.max_tokens, cancel)
    if res is None:
        return None, call
    return ("" if res.data["insufficient"] else res.data["formula"].strip()), call


def answer_from_fact_formula(question: str, intent: QueryIntent, passages: Sequence[Passage],
                             lines: Sequence[FactLine], chat: ChatModel, settings: AnswerSettings,
                             prompts: PromptSettings, cancel: Callable[[], bool] | None = None,
                             ) -> tuple[AnswerResult | None, LlmCall, str]:
    """Ask the model for a formula over ``lines`` (or, for one reported figure, the fact that is it); compute it.
    Returns (the answer, the call, a note). The answer is None when the model found no listed fact enough (the
    note says so): the caller may answer from the passages' text. A formula the engine refuses (a typed figure,
    the other dimension than the question asks, facts of another year) ends not answerable, with the reason: the
    model's reading of the facts was wrong in kind, and no figure it would type instead is trusted."""
    if asks_one_figure(question, intent.unit_hint) and intent.fiscal_years:
        # one reported figure: only the facts of the years asked can be it (the years before serve changes)
        of_year = [line for line in lines if line.stored.fact.period.fiscal_year in intent.fiscal_years]
        lines = tuple(FactLine(i, line.passage_id, line.stored) for i, line in enumerate(of_year, start=1)) or lines
    formula, call = _ask_formula(question, intent, passages, lines, chat, settings, prompts, cancel)
    if formula is None:
        return AnswerResult("failed", "", method="facts-formula", reason=call.error), call, ""
    if not formula:
        return None, call, "the model found no listed fact enough for a formula"
    try:
        expression, ids, percent = parse_formula(formula, len(lines))
        by_id = {i: lines[i - 1] for i in ids}
        _check_periods(list(by_id.values()), intent)
        value = run_answer_program(_program(expression, by_id), settings).value
        doubled = run_answer_program(_program(expression, by_id, 2.0), settings).value
        if isinstance(value, bool) or isinstance(doubled, bool) or not (
                isinstance(value, (int, float)) and isinstance(doubled, (int, float))):
            raise FormulaRejected(f"`{formula}` does not compute a number")
        shown, unit = _express(float(value), float(doubled), percent, list(by_id.values()), intent)
    except (FormulaRejected, ProgramRejected, ProgramFailed) as exc:
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="facts-formula",
                            reason=f"the model's formula over the facts, `{formula}`, was refused: {exc}"), call, ""
    refs = tuple(_ref(line) for line in by_id.values())
    program = _program(expression, by_id)
    citations: list[Citation] = []
    for line in by_id.values():
        p = passages[line.passage_id - 1]
        if all(c.passage_id != line.passage_id for c in citations):
            citations.append(Citation.of(line.passage_id, p))
    inputs = "\n".join(f"- {r.variable}: {r.describe()}" for r in refs)
    text = format_value(shown, None if unit == "ratio" else unit, intent.decimals)
    return AnswerResult(
        "answered", text, shown, unit, method="facts-formula", citations=tuple(sorted(citations,
                                                                                     key=lambda c: c.passage_id)),
        program=program, computed=Computation(shown, {r.variable: r.value for r in refs}), inputs=refs,
        reasoning=f"formula over the facts: {formula}" + (" (a percentage)" if percent else "") + f"\n{inputs}",
    ), call, ""


def _ref(line: FactLine) -> FactInputRef:
    s = line.stored
    f = s.fact
    return FactInputRef(f"F{line.id}", f.label, s.id, s.doc_name, f.page_index, s.chunk_id, f.row,
                        f.period.label, f.printed, f.scale, f.scaled_value, FORMULA_FOUND_BY, s.printed_folio)
