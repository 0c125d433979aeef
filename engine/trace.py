"""The audit trace: model calls recorded as :class:`LlmCall`, stage traces written to and read back from the
library. This module is the one place where trace records (:mod:`engine.records`) become JSON and back;
every reader (CLI, export, eval, the app) gets typed records from :func:`read_run` / :func:`trace_from_json`.

Stored runs written before the payloads were typed (no ``"schema"`` key) are read by :func:`_upgrade_v1`; runs
written before pages were named ``page_index`` (layouts 1 and 2: ``"page"``, ``"page_no"``) by
:func:`_upgrade_v2`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from engine.errors import StoreError
from engine.models.base import ChatMessage, ChatModel, ChatResult
from engine.pages import cite
from engine.records import (
    PAYLOAD_TYPES, AnswerPayload, AnswerResult, CurationPayload, CurationStopPayload, DocumentsPayload, FactsPayload,
    IntentPayload, LlmCall, PassagesPayload, RerankPayload, RewritePayload, RunCost, StagePayload, StageTrace,
    StoredRun,
)

if TYPE_CHECKING:
    from engine.store.library import Library

SCHEMA = 3  # the stored payload layout; runs without the key were written by the dict-protocol code (v1)
_PAGE_KEYS = ("page", "page_no")  # what layouts 1 and 2 called a 0-based page index


def call_llm(chat: ChatModel, purpose: str, messages: Sequence[ChatMessage], schema: dict[str, Any],
             max_tokens: int, cancel: Callable[[], bool] | None = None) -> tuple[ChatResult | None, LlmCall]:
    """Call the model under a schema; never raises for model failures — the LlmCall records the error.

    Raises:
        Cancelled: ``cancel`` returned true while the model was working; the runner ends the run there.
    """
    from engine.errors import ModelError, ModelOutputError

    started = time.perf_counter()
    msgs = tuple({"role": m["role"], "content": m["content"]} for m in messages)
    try:
        res = chat.complete_json(messages, schema, max_tokens=max_tokens, cancel=cancel)
    except ModelOutputError as exc:
        return None, LlmCall(purpose, chat.model_id, msgs, "", tuple(exc.raw_outputs), exc.prompt_tokens,
                             exc.completion_tokens, time.perf_counter() - started, len(exc.raw_outputs),
                             f"invalid output: {exc}", cached_tokens=exc.cached_tokens)
    except ModelError as exc:
        return None, LlmCall(purpose, chat.model_id, msgs, "", (), 0, 0, time.perf_counter() - started, 0,
                             f"model error: {exc}")
    return res, LlmCall(purpose, res.model_id, msgs, res.raw, tuple(res.raw_attempts), res.prompt_tokens,
                        res.completion_tokens, res.seconds, res.attempts, cached_tokens=res.cached_tokens)


# --- JSON -----------------------------------------------------------------------------------------------


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(tp: Any) -> TypeAdapter[Any]:
    """One pydantic adapter per record type (building one costs milliseconds; a run reads dozens)."""
    if tp not in _ADAPTERS:
        _ADAPTERS[tp] = TypeAdapter(tp)
    return _ADAPTERS[tp]


def to_json(record: Any) -> Any:
    """Any trace record (payload, answer, model call, ...) as JSON-ready data."""
    return _adapter(type(record)).dump_python(record, mode="json")


def payload_from_json(stage: str, data: dict[str, Any]) -> StagePayload:
    """The typed payload of a stage from its stored JSON (current layout)."""
    kind = PAYLOAD_TYPES.get(stage)
    if kind is None:
        raise StoreError(f"unknown stage {stage!r} in a stored run")
    payload: StagePayload = _adapter(kind).validate_python(data)
    return payload


def answer_from_json(data: dict[str, Any]) -> AnswerResult:
    result: AnswerResult = _adapter(AnswerResult).validate_python(data)
    return result


def trace_to_json(trace: StageTrace) -> dict[str, Any]:
    """The stored form of a stage: its payload's fields, the model calls and the layout version."""
    calls = [{**to_json(c), "seconds": round(c.seconds, 3)} for c in trace.llm_calls]
    return {**to_json(trace.payload), "llm_calls": calls, "schema": SCHEMA}


def event_json(trace: StageTrace) -> dict[str, Any]:
    """A stage as the audit views and the JSON export show it: its place in the run, cost and stored payload."""
    return {"seq": trace.seq, "stage": trace.stage, "round": trace.round, "seconds": trace.seconds,
            "tokens_in": trace.tokens_in, "tokens_out": trace.tokens_out, "payload": trace_to_json(trace)}


def trace_from_json(stage: str, round_no: int, seconds: float, data: dict[str, Any], seq: int = 0) -> StageTrace:
    """A stored stage back as a :class:`StageTrace` (either layout)."""
    data = dict(data)
    calls = tuple(_adapter(LlmCall).validate_python(c) for c in data.pop("llm_calls", []))
    schema = data.pop("schema", 1)
    if schema < 2:
        data = _upgrade_v1(stage, data)
    if schema < 3:
        data = _upgrade_v2(data)
    return StageTrace(round_no, payload_from_json(stage, data), seconds, calls, seq)


def outcome_to_json(answer: AnswerResult, cost: RunCost) -> dict[str, Any]:
    return {"answer": to_json(answer), **to_json(cost), "schema": SCHEMA}


def outcome_from_json(data: dict[str, Any]) -> tuple[AnswerResult | None, RunCost | None]:
    if not data:
        return None, None
    data = dict(data)
    answer = data.pop("answer", None)
    schema = data.pop("schema", 1)
    if answer is not None and schema < 2:
        answer = _upgrade_answer_v1(answer)
    if answer is not None and schema < 3:
        answer = _upgrade_v2(answer)
    cost = _adapter(RunCost).validate_python(data)
    return (answer_from_json(answer) if answer is not None else None), cost


# --- one line per stage -----------------------------------------------------------------------------------


def stage_summary(trace: StageTrace) -> str:
    """What a stage decided, in one line (the app's progress table, reports; pages as people cite them)."""
    p = trace.payload
    if isinstance(p, IntentPayload):
        it = p.intent
        bits = [", ".join(v) for v in (it.issuers, it.forms, it.metrics)]
        years = ", ".join(str(y) for y in it.fiscal_years)
        return " · ".join(b for b in [*bits, years] if b) or "no company, period or metric recognised"
    if isinstance(p, RewritePayload):
        return f"q' = {p.rewritten}"
    if isinstance(p, DocumentsPayload):
        check = f"companies: {p.company_check}; " if p.company_check else ""
        return (f"{check}scorer {p.scorer}; kept {len(p.kept)} of {len(p.candidates)}: "
                + ", ".join(c.doc_name for c in p.kept))
    if isinstance(p, PassagesPayload):
        return (f"scorer {p.scorer}; kept {len(p.kept)} of {len(p.candidates)}: "
                + ", ".join(cite(c.doc_name, c.page_index, c.printed_folio) for c in p.kept))
    if isinstance(p, RerankPayload):
        top = p.rows[:5]
        return (f"{p.mode}: {p.stage1} of {p.n_chunks} chunks by BM25, {p.finalists} finalists, "
                f"{len(p.groups)} model calls" + (f", {p.rounds} rounds ({p.stop})" if p.rounds else "")
                + "; top: " + ", ".join(cite(r.doc_name, r.page_index, r.printed_folio) for r in top)
                + (f"; {len(p.fallbacks)} fallback(s)" if p.fallbacks else ""))
    if isinstance(p, CurationPayload):
        return (f"answerable: {'yes' if p.answerable else 'no'}; kept {len(p.kept)}, dropped {len(p.dropped)}"
                + (f"; missing: {p.missing_information}; next question: {p.complementary_question}"
                   if p.complementary_question else ""))
    if isinstance(p, CurationStopPayload):
        return p.reason
    if isinstance(p, FactsPayload):
        head = f"{p.company} FY{p.fiscal_year} {p.metric}" + ("" if p.mode == "value" else f" ({p.mode})")
        return (f"{head}: {len(p.inputs)} inputs from statement facts"
                + (f"; missing: {'; '.join(p.gaps)}" if p.gaps else ""))
    assert isinstance(p, AnswerPayload)
    return f"{p.answer.status}: {p.answer.text or p.answer.reason}"


# --- the library's runs -------------------------------------------------------------------------------------


def read_run(library: Library, run_id: str) -> StoredRun:
    """A stored run with typed stages (``run_id`` may be a unique prefix).

    Raises:
        StoreError: no such run, an ambiguous prefix, or a stage that cannot be read.
    """
    from engine.store.library import RunStore

    store = RunStore(library)
    row = store.get(run_id)
    answer, cost = outcome_from_json(json.loads(row["result"] or "{}"))
    traces = tuple(trace_from_json(e["stage"], e["round"], e["seconds"], e["payload"], e["seq"])
                   for e in store.events(row["id"]))
    return StoredRun(row["id"], row["kind"], row["question"], row["status"], row["started_at"], row["finished_at"],
                     row["error"] or "", answer, cost, traces, row["settings"] or "")


def record_trace(library: Library, run_id: str, trace: StageTrace) -> None:
    from engine.store.library import RunStore

    RunStore(library).add_event(run_id, trace.seq, trace.stage, trace.round, trace_to_json(trace), trace.seconds,
                                trace.tokens_in, trace.tokens_out)


# --- runs stored by the dict-protocol code (layout 1) --------------------------------------------------------


def _cited(passage: Any) -> list[int]:
    """Layout 1 wrote a figure's passage as a number (program figures) or "1,3" (figures of a written answer)."""
    if isinstance(passage, int):
        return [passage]
    return [int(p) for p in str(passage or "").split(",") if p.strip().isdigit()]


def _upgrade_answer_v1(a: dict[str, Any]) -> dict[str, Any]:
    a = dict(a)
    a["grounding"] = [{**{k: v for k, v in g.items() if k != "passage"}, "cited": _cited(g.get("passage"))}
                      for g in a.get("grounding") or []]
    computed = a.get("computed") or None
    a["computed"] = computed if computed and computed.get("value") is not None else None
    a.setdefault("variables", [])
    return a


def _upgrade_v1(stage: str, data: dict[str, Any]) -> dict[str, Any]:
    if stage == "answer":
        return {**data, "answer": _upgrade_answer_v1(data.get("answer") or {"status": "failed", "text": ""})}
    return data


# --- runs stored before pages were named page_index (layouts 1 and 2) ---------------------------------------


def _upgrade_v2(data: Any) -> Any:
    """Every record's ``"page"`` or ``"page_no"`` (a 0-based page index then as now) as ``"page_index"``. A
    computation's ``variables`` map the program's own names to values: a name there is left as it is."""
    if isinstance(data, list):
        return [_upgrade_v2(x) for x in data]
    if not isinstance(data, dict):
        return data
    return {("page_index" if k in _PAGE_KEYS and "page_index" not in data else k):
            (v if k == "variables" and isinstance(v, dict) else _upgrade_v2(v)) for k, v in data.items()}
