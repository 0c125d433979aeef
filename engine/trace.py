"""The audit trace: model calls recorded as :class:`LlmCall`, stage traces written to and read back from the
library. This module is the one place where trace records (:mod:`engine.records`) become JSON and back;
every reader (CLI, export, eval, the app) gets typed records from :func:`read_run` / :func:`trace_from_json`.
What a run's stages say in words is written here too, once for every reader: :func:`stage_summary` (one line a
stage), :func:`plan_lines` (the metric plan, each leaf with the fact it used) and :func:`explain_lines` (the
whole trace, stage by stage).

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
    PAYLOAD_TYPES,
    AnswerPayload,
    AnswerResult,
    CurationPayload,
    CurationStopPayload,
    DocumentsPayload,
    FactInputRef,
    FactsPayload,
    IntentPayload,
    LlmCall,
    MetricPlan,
    PassagesPayload,
    PlanNode,
    QueryIntent,
    RerankPayload,
    RewritePayload,
    RunCost,
    StagePayload,
    StageTrace,
    StoredRun,
)
from engine.wording import counted

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
    unloaded = getattr(chat, "loaded", True) is False  # a model loaded at its first call (engine.models.deferred)

    def load() -> float:  # the load this call waited for, apart from the call's own seconds
        return float(getattr(chat, "load_seconds", None) or 0.0) if unloaded and getattr(chat, "loaded", False) \
            else 0.0

    try:
        res = chat.complete_json(messages, schema, max_tokens=max_tokens, cancel=cancel)
    except ModelOutputError as exc:
        return None, LlmCall(purpose, chat.model_id, msgs, "", tuple(exc.raw_outputs), exc.prompt_tokens,
                             exc.completion_tokens, time.perf_counter() - started - load(), len(exc.raw_outputs),
                             f"invalid output: {exc}", cached_tokens=exc.cached_tokens, load_seconds=load())
    except ModelError as exc:
        return None, LlmCall(purpose, chat.model_id, msgs, "", (), 0, 0, time.perf_counter() - started - load(), 0,
                             f"model error: {exc}", load_seconds=load())
    return res, LlmCall(purpose, res.model_id, msgs, res.raw, tuple(res.raw_attempts), res.prompt_tokens,
                        res.completion_tokens, res.seconds, res.attempts, cached_tokens=res.cached_tokens,
                        load_seconds=load())


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
        check = f"{p.loaded}; {check}" if p.loaded else check
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
        return (f"{head}: {counted(len(p.inputs), 'input')} from statement facts"
                + (f"; missing: {'; '.join(p.gaps)}" if p.gaps else ""))
    assert isinstance(p, AnswerPayload)
    return f"{p.answer.status}: {p.answer.text or p.answer.reason}"


# --- the metric plan, as the analyst checks it ----------------------------------------------------------------

_OPERATORS = {"add": "+", "sub": "−", "mul": "×", "div": "÷", "percent": "× 100 (a percentage)"}
_INDENT = "  "


def plan_lines(traces: Sequence[StageTrace]) -> list[str]:
    """The metric plan of a run as lines of text: what the question reader read (in words, what it read and what
    it did not), then the plan's tree, one node a line, indented; each leaf is a catalogue line item at a period
    and, when the answer was computed from statement facts, the fact it used (row, column, printed value,
    filing and page). What ``ask --explain``, Inspect › Answer and the exports show; [] when the run has no plan
    (a question that names no metric, or a run stored before plans were read)."""
    intent = next((t.payload.intent for t in reversed(traces) if isinstance(t.payload, IntentPayload)), None)
    plan = intent.plan if intent is not None else None
    if intent is None or plan is None or plan.status == "none":
        return []
    facts = next((t.payload for t in reversed(traces) if isinstance(t.payload, FactsPayload)), None)
    answer = next((t.payload.answer for t in reversed(traces) if isinstance(t.payload, AnswerPayload)), None)
    inputs = answer.inputs if answer is not None and answer.inputs else facts.inputs if facts is not None else ()
    years = intent.annual_years if intent.annual_years is not None else intent.fiscal_years
    latest = facts.fiscal_year if facts is not None else max(years, default=None)
    quarter = intent.quarters[0] if len(intent.quarters) == 1 else ""
    return _plan_head(plan, intent) + ([f"{_INDENT}tree:"]
                                       + _node_lines(plan.tree, 0, 2, _Leaves(latest, quarter, inputs))
                                       if plan.tree is not None else [])


def _plan_head(plan: MetricPlan, intent: QueryIntent) -> list[str]:
    """The plan in words: its status and reader, the company and periods asked, then what was read (the metrics
    the question names, where the reading stopped before composing them) and what was not."""
    unit = f"; unit: {plan.unit}" if plan.unit else ""
    lines = [f"Plan: {plan.status} (read by the {plan.reader}){unit}"]
    periods = intent.quarters or tuple(f"FY{y}" for y in intent.fiscal_years)
    read = "; ".join(plan.read) or (f"metrics named: {', '.join(intent.metrics)}" if intent.metrics else "")
    fields = (("in words", plan.words), ("company", ", ".join(intent.issuers)), ("periods", ", ".join(periods)),
              ("read", read), ("not read", "; ".join(plan.unread) or ("—" if plan.status in ("complete", "unread")
                                                                      else "")),
              ("defined in the question", "; ".join(plan.definitions)), ("scope", "; ".join(plan.scope)),
              ("which", plan.choice), ("note", plan.note), ("closest metrics", ", ".join(plan.suggestions)))
    return lines + [f"{_INDENT}{name}: {value}" for name, value in fields if value]


class _Leaves:
    """Where a leaf sits: its period (``back`` fiscal years before the latest asked), and the fact the answer
    read for it, found by the formula's name for the value (:func:`engine.vocab.catalogue.variable`)."""

    def __init__(self, latest: int | None, quarter: str, inputs: Sequence[FactInputRef]) -> None:
        self.latest, self.quarter = latest, quarter
        self.inputs = {i.variable: i for i in inputs}

    def when(self, back: int) -> str:
        if self.quarter and back == 0:
            return self.quarter
        if self.latest is not None:
            return f"FY{self.latest - back}"
        return "the asked year" if back == 0 else f"{back} year(s) before the asked year"

    def fact(self, item: str, back: int) -> FactInputRef | None:
        from engine.vocab.catalogue import Term, variable

        return self.inputs.get(variable(Term(item, back)))

    def found(self, node: PlanNode, back: int) -> bool:
        """Whether every leaf of ``node`` has its fact (the formula of a metric the answer computed)."""
        if node.kind == "item":
            return self.fact(node.name, back) is not None
        return all(self.found(a, b) for a, b in _children(node, back))


def _children(node: PlanNode, back: int) -> list[tuple[PlanNode, int]]:
    """A node's operands, each with the years back it is taken at: an operation over years takes its operand at
    each of its years."""
    if node.kind == "at":
        return [(node.args[0], back + node.backs[0])]
    if node.kind in ("average", "change", "growth", "cagr", "choice") and node.backs:
        backs = node.backs if node.kind in ("average", "choice") else (node.backs[0], node.backs[-1])
        return [(node.args[0], back + b) for b in backs]
    return [(a, back) for a in node.args]


def _head(node: PlanNode, years: list[str]) -> str:
    """An operator node's line; ``years``: the periods its operands are taken at, latest first."""
    k = node.kind
    if k in ("average", "change", "growth", "cagr") and not node.backs:
        return f"{k} (over years the question does not state)"
    if k == "average":
        return f"average over {', '.join(reversed(years))}"
    if k in ("change", "growth", "cagr"):
        return f"{'CAGR' if k == 'cagr' else k} from {years[-1]} to {years[0]}" + (", %" if k != "change" else "")
    if k == "choice":
        return f"which is the {node.name}"
    if k == "years":
        return f"at {node.name}"
    return _OPERATORS.get(k, k)


def _node_lines(node: PlanNode, back: int, depth: int, leaves: _Leaves) -> list[str]:
    pad = _INDENT * depth
    k = node.kind
    if k == "item":
        line = f"{pad}{node.name} @ {leaves.when(back)}"
        if leaves.inputs:
            ref = leaves.fact(node.name, back)
            line += f" ← {ref.describe()}" if ref is not None else " (no fact used)"
        return [line]
    if k == "number":
        return [f"{pad}{node.value:g}"]
    if k == "at":  # the leaves below name their own period
        return _node_lines(node.args[0], back + node.backs[0], depth, leaves)
    if k == "metric":
        if len(node.args) == 1:
            return [f"{pad}{node.name}", *_node_lines(node.args[0], back, depth + 1, leaves)]
        used = next((n for n, a in enumerate(node.args) if leaves.found(a, back)), None) if leaves.inputs else None
        lines = [f"{pad}{node.name}: the first of {len(node.args)} formulas whose inputs are all found"]
        for n, a in enumerate(node.args):
            mark = "" if used is None else " (used)" if n == used else " (not used)"
            lines += [f"{pad}{_INDENT}formula {n + 1}{mark}", *_node_lines(a, back, depth + 2, leaves)]
        return lines
    children = _children(node, back)
    lines = [f"{pad}{_head(node, [leaves.when(b) for _, b in children])}"]
    for a, b in children:
        lines += _node_lines(a, b, depth + 1, leaves)
    return lines


# --- the whole trace, stage by stage ---------------------------------------------------------------------------


def explain_lines(traces: Sequence[StageTrace]) -> list[str]:
    """The trace of a run as lines of text, stage by stage: each stage's round, time and tokens, then what it
    decided (the intent with the metric plan of :func:`plan_lines`, the top ten documents, passages or reranked
    chunks with their scores, what curation kept, the facts an answer used, the answer's program) and any
    model call that failed. What ``ask --explain`` and ``runs show`` print."""
    lines: list[str] = []
    plan = plan_lines(traces)  # the reading, with the fact each leaf used (answer stages come later in the run)
    for t in traces:
        p = t.payload
        lines.append(f"-- {t.stage} (round {t.round}, {t.seconds:.2f}s, tokens {t.tokens_in}/{t.tokens_out})")
        if isinstance(p, IntentPayload):
            it = p.intent
            lines.append(f"   issuers={list(it.issuers)} forms={list(it.forms)} years={list(it.fiscal_years)} "
                         f"quarters={list(it.quarters)} metrics={list(it.metrics)} numeric={it.numeric}")
            lines.extend(f"   {line}" for line in plan)
        elif isinstance(p, RewritePayload):
            lines.append(f"   q' = {p.rewritten}")
        elif isinstance(p, DocumentsPayload):
            lines += [f"   query: {p.query}", f"   scorer: {p.scorer}"] + ([f"   {p.loaded}"] if p.loaded else [])
            for d in p.candidates[:10]:
                lines.append(f"   {'+' if d.kept else ' '}{d.rank:3d}. {d.doc_name:34s} score={d.score}  {d.why}")
        elif isinstance(p, PassagesPayload):
            lines += [f"   query: {p.query}", f"   scorer: {p.scorer}"]
            for c in p.candidates[:10]:
                extra = f"bm25={c.bm25} (#{c.bm25_rank}) dense={c.dense} (#{c.dense_rank})"
                if c.line_item_rank:
                    extra += f" line item #{c.line_item_rank}: {'; '.join(c.line_items)}"
                where = cite(c.doc_name, c.page_index, c.printed_folio)
                lines.append(f"   {'+' if c.kept else ' '}{c.rank:3d}. {where:34s} score={c.final}  {extra}")
        elif isinstance(p, RerankPayload):
            lines.append(f"   {p.mode} (seed {p.seed}): {p.stage1} of {p.n_chunks} chunks by BM25, {p.finalists} "
                         f"finalists, {len(p.groups)} model calls"
                         + (f", {p.rounds} bootstrap rounds: {p.stop}" if p.rounds else ""))
            lines += [f"   intent: {'; '.join(p.intent_fields)}", f"   cards: {p.cards}"]
            lines.extend(f"   intent pass: {line}" for line in p.intent_pass
                         if not line.startswith("model added "))  # the intent line lists what was added
            for r in p.rows[:10]:
                terms = [f"bm25 #{r.stage1_rank}"] + [f"{k} {v}" for k, v in (
                    ("screen", r.screen_score), ("borda", r.borda), ("judge #", r.listwise_rank), ("elo", r.elo))
                    if v is not None]
                lines.append(f"   {'+' if r.kept else ' '}{r.rank:3d}. "
                             f"{cite(r.doc_name, r.page_index, r.printed_folio):34s} "
                             f"{' · '.join(terms)} · align {r.align} ({r.align_terms})")
                if r.matched:
                    lines.append(f"         matched: {'; '.join(r.matched)}")
                if r.moved:
                    lines.append(f"         moved: {r.moved}")
            lines.extend(f"   fallback: {f}" for f in p.fallbacks)
        elif isinstance(p, CurationPayload):
            lines.append(f"   shown: {'; '.join(cite(s.doc_name, s.page_index, s.printed_folio) for s in p.shown)}")
            lines.append(f"   kept {len(p.kept)}, dropped {len(p.dropped)}, answerable={p.answerable}")
            if p.complementary_question:
                lines += [f"   missing: {p.missing_information}",
                          f"   complementary question: {p.complementary_question}"]
        elif isinstance(p, FactsPayload):
            lines.append(f"   {p.company} FY{p.fiscal_year}: {p.formula}")
            if p.query:
                lines.append(f"   complementary question: {p.query}")
            lines.extend(f"   {i.variable} = {i.item}: {i.describe()}" for i in p.inputs)
            lines.extend(f"   missing: {gap}" for gap in p.gaps)
        elif isinstance(p, AnswerPayload):
            a = p.answer
            if a.program:
                lines += ["   program:", *("     " + ln for ln in a.program.splitlines())]
                lines.append(f"   computed: {a.computed.value if a.computed else None}")
            if a.reasoning:
                lines.append(f"   reasoning: {a.reasoning}")
        lines.extend(f"   model call failed: {call.error}" for call in t.llm_calls if call.error)
    return lines


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
