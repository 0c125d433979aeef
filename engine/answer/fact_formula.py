"""A numeric answer as a formula over the ids of the figures listed (:mod:`engine.answer.fact_lines`: statement
facts, and figures the passages' text prints): the model names which figures the answer needs and how they combine
(``(F3 - F7) / F7``); it writes no figure. The engine fills each id with its value, runs the formula in the
restricted evaluator and states the result in the unit and scale the question asks for. This is the only way a
model's reading becomes a number: no path lets it type one.

The formula language is arithmetic over ``F<n>`` ids and a few constants that are not figures of a filing
(counts of years, days, months, quarters and weeks, and 100). Its meaning is fixed by its dimension, not by the
question's wording: a formula whose value doubles when every fact doubles is an amount, in its facts' unit and
scale; one whose value stays is a ratio, stated as a percentage when the question asks for one. A closing
``* 100`` marks a ratio already written as a percentage. Any other literal is a figure the model typed, and the
formula is rejected.

The formula must also answer the whole question: the words of the asked metric the question reader could not place
(``MetricPlan.unread``) are each a word of a figure the formula uses, or a relation between amounts ("intensity",
"share") that a ratio computes. "R&D intensity" answered with the R&D expense alone is refused.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from typing import Any

from engine.answer.evaluator import ProgramFailed, ProgramRejected
from engine.answer.fact_lines import FactLine, render_fact_lines
from engine.answer.generate import NOT_ANSWERABLE, passage_numbers, run_answer_program
from engine.intent.reader import is_relation, unread_words
from engine.intent.wordlists import stems
from engine.models.base import ChatModel
from engine.prompts import evidence_messages, prompt
from engine.records import (
    AnswerResult,
    Citation,
    Computation,
    FactInputRef,
    Grounding,
    LlmCall,
    Passage,
    ProgramVariable,
    QueryIntent,
)
from engine.settings import AnswerSettings, PromptSettings
from engine.trace import call_llm
from engine.vocab.lexicon import find_metrics
from engine.vocab.numbers import SCALE_FACTORS
from engine.wording import format_value

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


def formula_schema(n_facts: int, max_items: int = 12) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_facts + 1))},
                                 "maxItems": max_items},
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
    rows = [f"    F{i} = {line.value * factor!r}  # {' '.join(line.words.split())[:60]}"
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
    units = {line.unit for line in used}
    asked = intent.unit_hint
    dimension = intent.dimension or _plan_dimension(intent)
    if _close(doubled, value):  # a ratio of amounts
        if dimension == "amount":
            raise FormulaRejected("the question asks for an amount and the formula gives a ratio")
        if asked == "ratio" or not (percent or asked == "percent" or intent.as_percentage):
            return value, "ratio"
        return value * 100, "percent"
    if percent or not _close(doubled, 2 * value) or len(units) != 1:
        raise FormulaRejected("the formula is neither an amount of one unit nor a ratio of amounts")
    if dimension == "ratio":
        raise FormulaRejected("the question asks for a ratio and the formula gives an amount")
    (unit,) = units
    if unit in ("USD", "shares"):
        printed = {line.scale for line in used}
        scale = asked.removeprefix("USD ") if asked and asked.startswith("USD ") and unit == "USD" else (
            next(iter(printed)) if len(printed) == 1 and None not in printed else "millions")
        assert scale is not None
        return value / SCALE_FACTORS[scale], f"{unit} {scale}"
    return value, {"USD/share": "USD per share", "%": "percent"}.get(unit, unit)


def _plan_dimension(intent: QueryIntent) -> str | None:
    """The kind of number a metric the question reader read whole makes, by its dimension: an amount (USD) or a
    ratio of amounts (a ratio, a percentage, days); None when the reader did not read the metric whole."""
    plan = intent.plan
    if plan is None or plan.status != "complete":
        return None
    return "amount" if plan.unit == "USD" else "ratio" if plan.unit in ("ratio", "percent", "days") else None


def _check_periods(used: Sequence[FactLine], intent: QueryIntent) -> None:
    """A question that names its fiscal years is answered from facts of those years (a change also reads the
    years before): a formula whose facts are all of other years answers another period's question. A figure of
    the text has no column: its sentence says its period, and the evidence check of the filings cited holds.

    Raises:
        FormulaRejected: facts used, none of an asked year, and no figure of the text.
    """
    years = set(intent.fiscal_years)
    if years and all(line.fiscal_year is not None and line.fiscal_year not in years for line in used):
        asked = ", ".join(f"FY{y}" for y in sorted(years))
        got = ", ".join(sorted({line.period for line in used}))
        raise FormulaRejected(f"the question asks about {asked} and the facts used are of {got}")


def _ask_formula(question: str, intent: QueryIntent, passages: Sequence[Passage], lines: Sequence[FactLine],
                 chat: ChatModel, settings: AnswerSettings, prompts: PromptSettings,
                 cancel: Callable[[], bool] | None) -> tuple[str | None, LlmCall]:
    """The model's formula over the fact ids ("" when it finds none enough; None when the call failed). A question
    asking one reported figure gets one id chosen under the grammar (``F<n>``), not a formula."""
    facts = render_fact_lines(lines)
    if intent.one_figure:
        messages = evidence_messages(prompt("answer_fact", prompts), question, passages, prompts, facts=facts)
        res, call = call_llm(chat, "answer (one fact)", messages, fact_schema(len(lines)), 16, cancel)
        return (None if res is None else f"F{res.data['fact']}" if res.data["fact"] else ""), call
    messages = evidence_messages(prompt("answer_facts", prompts), question, passages, prompts, facts=facts)
    res, call = call_llm(chat, "answer (formula over facts)", messages,
                         formula_schema(len(lines), settings.max_variables), settings.max_tokens, cancel)
    if res is None:
        return None, call
    return ("" if res.data["insufficient"] else res.data["formula"].strip()), call


def answer_from_fact_formula(question: str, intent: QueryIntent, passages: Sequence[Passage],
                             lines: Sequence[FactLine], chat: ChatModel, settings: AnswerSettings,
                             prompts: PromptSettings, cancel: Callable[[], bool] | None = None,
                             ) -> tuple[AnswerResult, LlmCall]:
    """Ask the model for a formula over ``lines`` (or, for one reported figure, the line that is it); compute it.
    Returns (the answer, the call). The answer is not answerable when the model found no listed figure enough, or
    when the engine refuses its formula (a typed figure, the other dimension than the question asks, facts of
    another year, words of the question it leaves unexplained), with the reason: no figure a model would type
    instead is trusted. ``method`` is "facts-formula" over statement facts alone, "pot" when a figure of the text
    is used (its inputs are then also ``variables``, each grounded where the text prints it)."""
    if intent.one_figure and intent.fiscal_years:
        # one reported figure: only the facts of the years asked can be it (the years before serve changes)
        of_year = [line for line in lines if line.fiscal_year in (*intent.fiscal_years, None)]
        lines = tuple(FactLine(i, line.passage_id, line.stored, line.figure)
                      for i, line in enumerate(of_year, start=1)) or lines
    formula, call = _ask_formula(question, intent, passages, lines, chat, settings, prompts, cancel)
    if formula is None:
        return AnswerResult("failed", "", method="facts-formula", reason=call.error), call
    if not formula:
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="facts-formula",
                            reason="the model found no listed figure enough for a formula"), call
    try:
        expression, ids, percent = parse_formula(formula, len(lines))
        by_id = {i: lines[i - 1] for i in ids}
        used = list(by_id.values())
        _check_periods(used, intent)
        value = run_answer_program(_program(expression, by_id), settings).value
        doubled = run_answer_program(_program(expression, by_id, 2.0), settings).value
        if isinstance(value, bool) or isinstance(doubled, bool) or not (
                isinstance(value, (int, float)) and isinstance(doubled, (int, float))):
            raise FormulaRejected(f"`{formula}` does not compute a number")
        _check_coverage(used, intent, _close(float(doubled), float(value)), lines)
        shown, unit = _express(float(value), float(doubled), percent, used, intent)
    except (FormulaRejected, ProgramRejected, ProgramFailed) as exc:
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="facts-formula",
                            reason=f"the model's formula over the figures listed, `{formula}`, was refused: {exc}"), call
    refs = tuple(_ref(line) for line in used if line.stored)
    printed = {i: passage_numbers(p.prompt_text()) for i, p in enumerate(passages, start=1)}
    figures, grounding = [], []
    for line in used:
        if line.figure is not None:  # read by the engine where the text prints it (as printed): grounded by construction
            figures.append(ProgramVariable(f"F{line.id}", line.value, line.passage_id, line.words))
            found = tuple(i for i, nums in printed.items() if abs(line.figure.value) in nums)
            grounding.append(Grounding(f"F{line.id}", line.figure.value, (line.passage_id,), True, found, line.words))
    program = _program(expression, by_id)
    citations: list[Citation] = []
    for line in used:
        p = passages[line.passage_id - 1]
        if all(c.passage_id != line.passage_id for c in citations):
            citations.append(Citation.of(line.passage_id, p))
    inputs = "\n".join([f"- {r.variable}: {r.describe()}" for r in refs]
                       + [f"- {v.name}: {v.label} | passage [{v.passage_id}]" for v in figures])
    text = format_value(shown, None if unit in ("ratio", "count") else unit, intent.decimals)
    return AnswerResult(
        "answered", text, shown, unit, method="pot" if figures else "facts-formula",
        citations=tuple(sorted(citations, key=lambda c: c.passage_id)), program=program,
        computed=Computation(shown, {**{r.variable: r.value for r in refs}, **{v.name: v.value for v in figures}}),
        inputs=refs, variables=tuple(figures), grounding=tuple(grounding),
        reasoning=f"formula over the figures listed: {formula}" + (" (a percentage)" if percent else "")
                  + f"\n{inputs}",
    ), call


def _check_coverage(used: Sequence[FactLine], intent: QueryIntent, ratio: bool,
                    listed: Sequence[FactLine] = ()) -> None:
    """The formula answers the whole asked metric: each word the question reader could not place is a word of a
    figure used (its row, or the clause the text prints it in — any clause of its passage that prints the same
    amount: "a new $4,200,000,000 five year unsecured revolving credit agreement … enables PepsiCo to borrow up
    to $4,200,000,000"), or a relation between amounts and the formula a ratio; each line item the question names
    that the catalogue does not compute is the row of a figure used. A question that names no metric (plan status
    "none") needs one of its unread words, not all, said by a figure.

    Raises:
        FormulaRejected: the words left unexplained.
    """
    plan = intent.plan
    if plan is None:
        return
    same = [other for line in used if line.figure is not None for other in listed
            if other.figure is not None and other.passage_id == line.passage_id and other.value == line.value]
    said = set().union(*(stems(line.names) for line in (*used, *same)))
    rows = {m for line in used for m in find_metrics(line.names)}
    missing = [f"'{m}'" for m in plan.named if m not in rows]  # a metric the question names, no figure is of
    words = unread_words(plan)
    missing += [f"'{w}' (a relation between amounts, and the formula gives an amount)"
                for w in words if is_relation(w) and not ratio]
    things = [w for w in words if not is_relation(w)]
    unmet = [w for w in things if not stems(w) <= said]
    if plan.status == "none":
        # no metric named: the reader left every word of the question's frame unread ("accruing", "occurred"),
        # so one of them naming what the figures are of is enough ("stores" in "we operated 412 stores")
        unmet = unmet if unmet == things else []
    missing += [f"'{w}'" for w in unmet]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise FormulaRejected(f"the question's {', '.join(missing)} {verb} explained by none of the figures it "
                              "uses: it would answer part of the question")


def _ref(line: FactLine) -> FactInputRef:
    s = line.stored
    assert s is not None
    f = s.fact
    return FactInputRef(f"F{line.id}", f.label, s.id, s.doc_name, f.page_index, s.chunk_id, f.row,
                        f.period.label, f.printed, f.scale, f.scaled_value, FORMULA_FOUND_BY, s.printed_folio)
