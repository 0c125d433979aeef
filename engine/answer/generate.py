"""HiREC answer generation (§4.3): program of thought for numeric questions (run by the restricted
evaluator, never exec), chain of thought for textual ones. Every figure in a program is checked
against the passages it cites, and the answer is normalised (value, unit, scale)."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.answer.evaluator import ProgramFailed, ProgramRejected, extract_program, run_program
from engine.curation import render_passages
from engine.intent import QueryIntent
from engine.models.base import ChatModel
from engine.retrieval.hierarchical import Passage
from engine.trace import LlmCall, call_llm, prompt

NOT_ANSWERABLE = "not answerable from the loaded filings"
_NUM = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?")
_TRIVIAL = {0, 1, 2, 3, 4, 10, 12, 100, 1000, 1_000_000, 1_000_000_000, 365}


@dataclass(frozen=True)
class Citation:
    passage_id: int
    chunk_id: int
    doc_name: str
    page: int
    title: str


@dataclass(frozen=True)
class AnswerResult:
    status: str  # answered | not_answerable | failed
    text: str
    value: float | None = None
    unit: str | None = None
    method: str = ""  # pot | cot
    citations: tuple[Citation, ...] = ()
    program: str = ""
    computed: dict = field(default_factory=dict)
    reasoning: str = ""
    grounding: tuple[dict, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict:
        return {
            "status": self.status, "text": self.text, "value": self.value, "unit": self.unit, "method": self.method,
            "citations": [c.__dict__ for c in self.citations], "program": self.program, "computed": self.computed,
            "reasoning": self.reasoning, "grounding": list(self.grounding), "reason": self.reason,
        }


def _ids(n: int) -> dict:
    return {"type": "array", "items": {"type": "integer", "enum": list(range(1, n + 1)) or [1]}, "maxItems": 10}


def program_schema(n_passages: int) -> dict:
    return {
        "type": "object",
        "properties": {"program": {"type": "string", "maxLength": 1500}, "used_ids": _ids(n_passages),
                       "insufficient": {"type": "boolean"}},
        "required": ["program", "used_ids", "insufficient"],
        "additionalProperties": False,
    }


def text_schema(n_passages: int) -> dict:
    return {
        "type": "object",
        "properties": {"reasoning": {"type": "string", "maxLength": 1200}, "answer": {"type": "string", "maxLength": 400},
                       "used_ids": _ids(n_passages), "insufficient": {"type": "boolean"}},
        "required": ["reasoning", "answer", "used_ids", "insufficient"],
        "additionalProperties": False,
    }


def _number_value(token: str) -> float | None:
    neg = token.strip().startswith("(") and token.strip().endswith(")")
    digits = re.sub(r"[^\d.\-]", "", token)
    try:
        v = float(digits)
    except ValueError:
        return None
    return -abs(v) if neg else v


def passage_numbers(text: str) -> set[float]:
    out = set()
    for tok in _NUM.findall(text):
        v = _number_value(tok)
        if v is not None:
            out.update({v, abs(v)})
    return out


def program_literals(program: str) -> list[tuple[str, float]]:
    """(variable or '?', value) for each numeric literal in the program; parsing only, nothing runs."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, RecursionError, ValueError, MemoryError):
        return []
    found: list[tuple[str, float]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.UnaryOp)):
            target = node.targets[0].id if isinstance(node.targets[0], ast.Name) else "?"
            val = node.value
            sign = -1 if isinstance(val, ast.UnaryOp) and isinstance(val.op, ast.USub) else 1
            const = val.operand if isinstance(val, ast.UnaryOp) else val
            if isinstance(const, ast.Constant) and isinstance(const.value, (int, float)) and not isinstance(const.value, bool):
                found.append((target, sign * float(const.value)))
    return found


def ground(program: str, passages: Sequence[Passage]) -> list[dict]:
    """For each figure the program assigns, which shown passages contain it (1-based ids)."""
    nums = [passage_numbers(p.prompt_text()) for p in passages]
    rows = []
    for name, value in program_literals(program):
        if abs(value) in _TRIVIAL:
            continue
        where = [i for i, ns in enumerate(nums, start=1) if value in ns or abs(value) in ns]
        rows.append({"variable": name, "value": value, "found_in": where})
    return rows


def _unit(intent: QueryIntent, passages: Sequence[Passage]) -> str | None:
    if intent.unit_hint:
        return intent.unit_hint
    text = " ".join(p.prompt_text()[:400].lower() for p in passages)
    for words, unit in (("in millions", "USD millions"), ("(millions)", "USD millions"), ("in thousands", "USD thousands"),
                        ("in billions", "USD billions")):
        if words in text:
            return unit
    return None


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
            out.append(Citation(i, p.chunk.id, p.chunk.doc_name, p.chunk.page_no, p.title))
    return tuple(out)


def answer_question(question: str, intent: QueryIntent, passages: Sequence[Passage], chat: ChatModel,
                    *, numeric_mode: str = "pot", max_tokens: int = 768) -> tuple[AnswerResult, LlmCall]:
    if intent.numeric and numeric_mode == "pot":
        return _answer_program(question, intent, passages, chat, max_tokens)
    return _answer_text(question, passages, chat, max_tokens)


def _messages(system: str, question: str, passages: Sequence[Passage]) -> list[dict[str, str]]:
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Passages:\n\n{render_passages(passages)}\n\nQuestion: {question}"}]


def _answer_program(question: str, intent: QueryIntent, passages: Sequence[Passage], chat: ChatModel,
                    max_tokens: int) -> tuple[AnswerResult, LlmCall]:
    res, call = call_llm(chat, "answer (program of thought)", _messages(prompt("answer_program"), question, passages),
                         program_schema(len(passages)), max_tokens)
    if res is None:
        return AnswerResult("failed", "", method="pot", reason=call.error), call
    program_text = res.data["program"]
    if res.data["insufficient"]:
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="pot", program=program_text,
                            reason="the model found the figures missing from the curated passages"), call
    try:
        program = extract_program(program_text)
        result = run_program(program)
    except (ProgramRejected, ProgramFailed) as exc:
        kind = "rejected" if isinstance(exc, ProgramRejected) else "failed"
        return AnswerResult("failed", "", method="pot", program=program_text,
                            reason=f"the model's program was {kind} by the restricted evaluator: {exc}"), call
    value = result.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return AnswerResult("failed", "", method="pot", program=program,
                            reason=f"the program returned {type(value).__name__}, not a number"), call
    grounding = ground(program, passages)
    used = list(res.data["used_ids"]) or sorted({i for g in grounding for i in g["found_in"]})
    unit = _unit(intent, passages)
    computed = {"value": value, "variables": result.variables, "steps": result.steps}
    return AnswerResult(
        "answered", format_value(float(value), unit, intent.decimals), value=float(value), unit=unit, method="pot",
        citations=_citations(used, passages), program=program, computed=computed, grounding=tuple(grounding),
        reason="; ".join(f"figure {g['value']:g} ({g['variable']}) not found in any passage"
                         for g in grounding if not g["found_in"]),
    ), call


def _answer_text(question: str, passages: Sequence[Passage], chat: ChatModel, max_tokens: int) -> tuple[AnswerResult, LlmCall]:
    res, call = call_llm(chat, "answer (chain of thought)", _messages(prompt("answer_text"), question, passages),
                         text_schema(len(passages)), max_tokens)
    if res is None:
        return AnswerResult("failed", "", method="cot", reason=call.error), call
    if res.data["insufficient"]:
        return AnswerResult("not_answerable", NOT_ANSWERABLE, method="cot", reasoning=res.data["reasoning"],
                            reason=res.data["answer"]), call
    return AnswerResult("answered", res.data["answer"].strip(), method="cot", reasoning=res.data["reasoning"],
                        citations=_citations(res.data["used_ids"], passages)), call
