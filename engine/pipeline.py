"""The question path (HiREC Algorithm 1): intent → hierarchical retrieval → evidence curation rounds →
answer, with every stage's trace persisted in the library as it happens.

:class:`engine.session.Session` (the one object the CLI, the app and eval open) assembles it from
:func:`find_chat_model` and :func:`retrieval_stages`; :func:`build_pipeline` does the same from models already
loaded. Retrieval-only evaluation runs the same stages and stops after the first passage stage.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

from engine.answer.choose import choose_facts
from engine.answer.compound import joined_answer
from engine.answer.from_facts import (
    FactPlan,
    facts_answer,
    facts_payload,
    gap_facts,
    gap_query,
    gather,
    not_reported,
    plan_metric,
)
from engine.answer.generate import NOT_ANSWERABLE
from engine.answer.listing import listing_answer
from engine.answer.metric_lines import computed_metrics, render_metric_lines
from engine.answer.parts import PartsPeriod, joined_parts, mix_answer, parts_answer
from engine.answer.plan_model import propose_plan
from engine.answer.quotes import Settled, answer_from_quotes
from engine.answer.respond import answer_question
from engine.answer.revisions import revision_answer
from engine.answer.series import PeriodFigure, series_answer
from engine.curation import curate
from engine.errors import Cancelled, EngineError
from engine.indexing import SharedIndexes, open_indexes
from engine.intent import lexical_query, parse_intent
from engine.intent.issuers import issuer_refs as issuer_refs  # the question path's company refs (re-exported)
from engine.intent.periods import period_start
from engine.intent.reader import (
    asked_years,
    asks_a_number,
    dimension_of,
    finish_plan,
    metric_node,
    plan_words,
    read_plan,
    unread_answer,
)
from engine.intent.shape import compound_parts, if_any_vocab
from engine.models.base import ChatMessage, ChatModel, CrossScorer, Embedder
from engine.prompts import prompt
from engine.records import (
    AnswerPayload,
    AnswerResult,
    CurationPayload,
    CurationStopPayload,
    DocumentsPayload,
    FilingIdentity,
    IntentPayload,
    IssuerRef,
    LlmCall,
    MetricPlan,
    Passage,
    PassageRef,
    QueryIntent,
    RewritePayload,
    RunCost,
    StageTrace,
    StoredFact,
    annual_reports,
)
from engine.rerank.stage import PassageReranker
from engine.retrieval.companies import check_companies, resolve_latest
from engine.retrieval.hierarchical import HierarchicalRetriever
from engine.settings import Settings
from engine.store.library import Library, RunStore
from engine.trace import call_llm, outcome_to_json, record_trace
from engine.vocab.catalogue import Term, formula_terms, load_catalogue
from engine.vocab.sections import vocab as section_vocab

log = logging.getLogger(__name__)

RETRIEVAL_STAGES = ("intent", "rewrite", "documents", "rerank", "passages")
STAGES = (*RETRIEVAL_STAGES, "curation", "curation-stop", "answer")


@dataclass
class Run:
    id: str
    question: str
    status: str  # answered | not_answerable | failed | cancelled
    answer: AnswerResult
    traces: list[StageTrace] = field(default_factory=list)
    seconds: float = 0.0
    retrieval_seconds: float = 0.0
    setup_seconds: float = 0.0  # from the ask to the first stage (see RunCost)

    @property
    def tokens_in(self) -> int:
        return sum(t.tokens_in for t in self.traces)

    @property
    def tokens_out(self) -> int:
        return sum(t.tokens_out for t in self.traces)

    @property
    def llm_calls(self) -> int:
        return sum(len(t.llm_calls) for t in self.traces)

    @property
    def tokens_cached(self) -> int:
        """Of :attr:`tokens_in`, the prompt tokens the model took from its prefix cache."""
        return sum(t.tokens_cached for t in self.traces)

    @property
    def model_load_seconds(self) -> float:
        """Of :attr:`seconds`, loading the chat model at a model call (the first after the process started)."""
        return sum(c.load_seconds for t in self.traces for c in t.llm_calls)

    @property
    def cost(self) -> RunCost:
        return RunCost(round(self.seconds, 3), round(self.retrieval_seconds, 3), self.tokens_in, self.tokens_out,
                       self.tokens_cached, self.llm_calls, round(self.setup_seconds, 3),
                       round(self.model_load_seconds, 3))

    def stages(self, name: str) -> list[StageTrace]:
        return [t for t in self.traces if t.stage == name]


# --- assembly ---------------------------------------------------------------------------------------------


@dataclass
class Models:
    """The models a pipeline runs with; ``chat`` is None when none is loaded (``chat_error`` says why)."""

    embedder: Embedder
    chat: ChatModel | None = None
    cross: CrossScorer | None = None
    chat_error: str = ""


def find_chat_model(settings: Settings, *, chat_loader: Callable[[Settings], ChatModel] | None = None,
                    status: Callable[[str], None] | None = None) -> ChatModel:
    """The chat model the settings name: its file found and checked now, the model loaded by its first call (a
    question the statement facts answer never loads it). ``chat_loader``: tests plug in scripted models.

    Raises:
        ModelError: the model cannot be found (not installed, a path that is no GGUF file).
    """
    from engine.models.registry import deferred_chat_model

    return (chat_loader(settings) if chat_loader is not None
            else deferred_chat_model(settings.models, settings.library_home(), status))


RetrievalStages = tuple[HierarchicalRetriever, PassageReranker | None]


def retrieval_stages(settings: Settings, library: Library, models: Models, indexes: SharedIndexes) -> RetrievalStages:
    """The question path's retrieval: HiREC's retriever over ``indexes``, and the card-based passage ranking when
    ``settings.rerank.mode`` asks for one."""
    retriever = HierarchicalRetriever(library, settings, models.embedder, indexes, models.cross)
    reranker = (PassageReranker(library, settings, retriever, models.chat)
                if settings.rerank.mode != "off" else None)
    return retriever, reranker


def build_pipeline(settings: Settings, library: Library, models: Models,
                   indexes: SharedIndexes | None = None) -> HirecPipeline:
    """The HiREC question path over ``library`` (the one builder: :class:`engine.session.Session` uses it).

    Args:
        indexes: The published indexes, already opened; when None (tests, scripts) they are opened here. The
            stages are handed them: none opens indexes itself.
    """
    if indexes is None:
        indexes = open_indexes(library, settings, models.embedder)
    return HirecPipeline(library, settings, retrieval_stages(settings, library, models, indexes), models.chat,
                         no_chat_reason=models.chat_error)


def document_query(intent: QueryIntent, refs: dict[str, IssuerRef]) -> str:
    """HiREC's q' built from the parsed intent, in the words of the filing summaries."""
    parts = [refs[k].names[0] for k in intent.issuers if k in refs]
    forms = {"10-K": "annual report on Form 10-K", "10-Q": "quarterly report on Form 10-Q", "8-K": "current report on Form 8-K"}
    parts += [forms.get(f, f) for f in intent.forms]
    parts += [f"fiscal year {y}" for y in intent.fiscal_years] + [f"period {q}" for q in intent.quarters]
    parts += list(intent.metrics)
    return " ".join(parts) if parts else intent.question


def rewrite_schema(max_chars: int) -> dict[str, Any]:
    return {"type": "object", "properties": {"query": {"type": "string", "maxLength": max_chars}},
            "required": ["query"], "additionalProperties": False}


# --- the run ----------------------------------------------------------------------------------------------


class HirecPipeline:
    """Holds loaded models and indexes; one instance answers many questions."""

    def __init__(self, library: Library, settings: Settings,
                 retrieval: RetrievalStages | Callable[[], RetrievalStages], chat: ChatModel | None, *,
                 no_chat_reason: str = "") -> None:
        """``retrieval``: the retriever and the card-based passage ranking (None: HiREC's fused ranking), or what
        builds them at the first question that retrieves (loading the embedder and the indexes then: a question
        the statement facts answer never does)."""
        self.library, self.settings, self.chat = library, settings, chat
        self._retrieval: Callable[[], RetrievalStages] | None = None
        self._built: RetrievalStages | None = None
        if isinstance(retrieval, tuple):
            self._built = retrieval
        else:
            self._retrieval = retrieval
        self._build_lock = threading.Lock()
        self.refs = {r.key: r for r in issuer_refs(library)}
        self.no_chat_reason = no_chat_reason
        self.catalogue = load_catalogue()

    @property
    def retrieval_ready(self) -> bool:
        """Whether the retrieval stages are built (the embedder and the indexes loaded)."""
        return self._built is not None

    def retrieval(self) -> RetrievalStages:
        """The retrieval stages, built on first use."""
        with self._build_lock:
            if self._built is None:
                assert self._retrieval is not None
                self._built = self._retrieval()
            return self._built

    @property
    def retriever(self) -> HierarchicalRetriever:
        return self.retrieval()[0]

    @property
    def reranker(self) -> PassageReranker | None:
        """Card-based passage ranking (settings.rerank.mode), else None: HiREC's fused ranking."""
        return self.retrieval()[1]

    def run(self, question: str, cancel: Callable[[], bool] | None = None, *, stop_after: str | None = None,
            store: bool = True, evaluation: str = "", since: float | None = None) -> Run:
        run = None
        for item in self.run_iter(question, cancel, stop_after=stop_after, store=store, evaluation=evaluation,
                                  since=since):
            if isinstance(item, Run):
                run = item
        assert run is not None
        return run

    def run_iter(self, question: str, cancel: Callable[[], bool] | None = None, *,
                 stop_after: str | None = None, store: bool = True,
                 evaluation: str = "", since: float | None = None) -> Iterator[StageTrace | Run]:
        """Yield each stage's trace as it completes, then the finished :class:`Run`.

        ``cancel`` is checked between stages and polled by the model during each call; once it returns true
        the run ends with status ``cancelled``, keeping the traces of the stages that completed.
        ``stop_after`` names a stage after whose first completion the run ends (``"passages"``: retrieval only,
        the evaluation of retrieval pipelines); the run's answer then says so and its status is ``stopped``.
        ``store`` records the run and its stages in the library (off for retrieval-only evaluation);
        ``evaluation`` names the evaluation asking (its results folder), so History keeps its runs apart.
        ``since``: the :func:`time.perf_counter` of the ask (the analyst's click), when it came before this call
        (the question path was built for it, or it waited for the worker): the run's time counts from it and
        says how much of it came before the first stage.
        """
        if stop_after is not None and stop_after not in STAGES:
            raise ValueError(f"unknown stage {stop_after!r} (known: {', '.join(STAGES)})")
        run = Run(uuid.uuid4().hex[:12], question, "running", AnswerResult("failed", ""))
        if store:
            RunStore(self.library).create(run.id, "hirec", question, self.settings.model_dump_json(),
                                          evaluation=evaluation)
        started = time.perf_counter()
        if since is not None and since <= started:
            run.setup_seconds, started = started - since, since

        def record(trace: StageTrace) -> StageTrace:
            trace = replace(trace, seq=len(run.traces) + 1)
            run.traces.append(trace)
            if store:
                record_trace(self.library, run.id, trace)
            if trace.stage == stop_after:
                raise _Stop
            return trace

        try:
            # One prefix-cache session per run: a later curation round or the answer step that opens with the
            # passages of the previous prompt does not read them again (see engine.models.llama).
            if self.chat is not None:
                with self.chat.prefix_session():
                    yield from self._stages(run, record, cancel, stop_after)
            else:
                yield from self._stages(run, record, cancel, stop_after)
        except _Stop:
            run.status = "stopped"
            run.answer = AnswerResult("failed", "", reason=f"stopped after the {stop_after} stage")
            yield run.traces[-1]
        except GeneratorExit:  # the caller stopped reading (or dropped) the run: recorded as ended, not "running"
            if store:
                run.seconds = time.perf_counter() - started
                reason = "the caller stopped reading the run before it finished"
                RunStore(self.library).finish(run.id, "interrupted",
                                              outcome_to_json(AnswerResult("failed", "", reason=reason), run.cost),
                                              reason)
            raise
        except Cancelled:
            log.info("run %s cancelled after %d stages", run.id, len(run.traces))
            run.status = "cancelled"
            run.answer = AnswerResult("failed", "", reason="cancelled by the user")
        except EngineError as exc:  # a library, index or model that cannot be used: the run says which
            log.warning("run %s failed: %s", run.id, exc)
            run.answer = AnswerResult("failed", "", reason=str(exc))
        except Exception as exc:  # never a traceback for the user: the run records what happened
            log.exception("run %s failed", run.id)
            run.answer = AnswerResult("failed", "", reason=f"internal error: {type(exc).__name__}: {exc}")
        run.status = run.answer.status if run.status == "running" else run.status
        run.seconds = time.perf_counter() - started
        if store:
            RunStore(self.library).finish(run.id, run.status, outcome_to_json(run.answer, run.cost),
                                          run.answer.reason if run.status == "failed" else "")
        yield run

    def _stages(self, run: Run, record: Callable[[StageTrace], StageTrace],
                cancel: Callable[[], bool] | None, stop_after: str | None) -> Iterator[StageTrace]:
        s = self.settings
        question = run.question
        t = time.perf_counter()
        intent = parse_intent(question, list(self.refs.values()))
        # the question reader: what a numeric question asks to be computed, or the words it could not read
        intent = replace(intent, plan=read_plan(intent, self.catalogue, list(self.refs.values())))
        yield record(StageTrace(0, IntentPayload(intent), time.perf_counter() - t))
        if self.library.count("filings") == 0:
            run.answer = AnswerResult("failed", "", reason="the library is empty: ingest filings first")
            return
        t = time.perf_counter()
        check = check_companies(intent, self.library, list(self.refs.values()))
        intent = check.intent
        if check.refusal:  # the question is about a company whose filings are not loaded: no other's answer
            # nothing is ranked or kept: the stage records only the check
            yield record(StageTrace(1, DocumentsPayload(document_query(intent, self.refs), "company check",
                                                        "none", 0, 0, (), 0, check.note), time.perf_counter() - t))
            run.answer = AnswerResult("not_answerable", check.refusal, reason=check.note, choices=check.choices)
            yield record(StageTrace(0, AnswerPayload(run.answer), 0.0))
            return
        if check.assumed:  # the question named no company and the library holds one: the answer says so
            record = _saying(check.assumed, record, run)
        if check.lacking:  # the filing the question names is not loaded: said first, whatever answers it
            record = _saying(check.lacking, record, run)
        intent, latest = resolve_latest(intent, self.library)
        if latest:  # "the most recent 10-Q": the latest of the company's loaded 10-Qs, said in the answer
            record = _saying(latest, record, run)
            # the metric's years are placed again at the period taken
            intent = replace(intent, plan=read_plan(intent, self.catalogue, list(self.refs.values())))
        read = intent.plan
        if _a_run(intent) and s.answer.from_facts and stop_after not in RETRIEVAL_STAGES:
            # one metric over a run of quarters ("in each of the last four quarters", "across these quarters"):
            # each quarter computed from its 10-Q's facts, set side by side
            yield from self._series(run, record, intent, check.note, cancel)
            return
        number: AnswerResult | None = None  # a compound question's number, computed before its words are answered
        rest = what = ""
        settled: tuple[Settled, ...] = ()  # its metric and value: the written half does not state it otherwise
        if (read is not None and read.status == "unread" and asks_a_number(intent) and s.answer.from_facts
                and stop_after not in RETRIEVAL_STAGES and (split := compound_parts(question)) is not None):
            # "What was X's gross margin in FY2023, and what drove it?": the number's clause is read and computed on
            # its own (the company and period are the question's), the rest is answered in words from the filing
            first = replace(intent, question=split[0], plan=None)
            own = read_plan(first, self.catalogue, list(self.refs.values()))
            first = replace(first, plan=own)
            part = plan_metric(first, self.library, self.catalogue) if own.status == "complete" else None
            if _a_run(first):  # "how did inventory change across these quarters, and what does it indicate?"
                yield from self._series(run, record, first, check.note, cancel)
                number, rest = run.answer, split[1]
                intent, read = replace(intent, numeric=False, plan=None), None
            elif part is not None:
                yield from self._facts(run, record, first, part, check.note, cancel)
                number, rest = run.answer, split[1]
                what = f"{part.metric.words}, {part.period}"
                if number.value is not None:
                    settled = (Settled(part.metric.name, number.value, number.unit or "", what),)
                intent, read = replace(intent, numeric=False, plan=None), None
        if (read is not None and read.status == "unread" and asks_a_number(intent) and s.answer.from_facts
                and stop_after not in RETRIEVAL_STAGES):
            if self.chat is not None:
                # the model reads what the grammar could not: a formula over the catalogue, checked by the engine
                t = time.perf_counter()
                read, call = propose_plan(intent, read, self.catalogue, self.chat, s.answer, s.prompts, cancel)
                intent = replace(intent, plan=read)
                yield record(StageTrace(1, IntentPayload(intent), time.perf_counter() - t, (call,)))
            if read.status != "complete":
                # a metric half read is not answered for the half: the answer says what was and was not read
                run.answer = unread_answer(read)
                yield record(StageTrace(0, AnswerPayload(run.answer), 0.0))
                return
        # what the cover page registers (securities, symbols, exchanges) is read from its table, without a model:
        # "is any of its debt listed" asks of the listing, not of a statement amount
        cover_asked = (intent.sections[:1] == (section_vocab().cover_kind,) and not intent.numeric
                       and s.answer.written == "quotes" and stop_after not in RETRIEVAL_STAGES)
        plan = (plan_metric(intent, self.library, self.catalogue)
                if s.answer.from_facts and stop_after not in RETRIEVAL_STAGES and not cover_asked else None)
        undecided = False  # a judgement the facts were to decide and could not: no model says yes or no
        if plan is None and read is not None and s.answer.from_facts and stop_after not in RETRIEVAL_STAGES \
                and not cover_asked and (read.status == "complete" or len(read.named) == 1 and read.named[0] in self.catalogue.metrics):
            # a written question about a metric ("what drove the gross margin change"): a metric that does not fit
            # how the company reports (a bank's gross margin) is said to be so, with its statement's page
            named = read if read.status == "complete" else finish_plan(
                metric_node(read.named[0], self.catalogue, {}), intent, self.catalogue, read.named[0])
            about = plan_metric(replace(intent, plan=named), self.library, self.catalogue, written=True)
            shape = not_reported(about, self.library, self.catalogue) if about is not None else None
            if shape is not None:
                run.answer = shape
                yield record(StageTrace(0, AnswerPayload(shape), 0.0))
                return
        if plan is not None:
            # a catalogue metric of one company's fiscal year: the engine computes it from the statement facts,
            # or says which input is missing; no model writes a figure
            yield from self._facts(run, record, intent, plan, check.note, cancel)
            if not (plan.judge and run.answer.status != "answered" and self.chat is not None):
                return
            undecided = True
            # a judgement the facts cannot decide (an input not read: a split cost line, a bank's statements)
            # is answered in words from the passages, saying what the facts lacked
            record = _saying(f"the facts could not decide it: {run.answer.reason}", record, run)
        if read is not None and read.status == "parts" and s.answer.from_facts and stop_after not in RETRIEVAL_STAGES \
                and not cover_asked:
            # which segment (region, product line) has the largest amount or growth: the parts the filing prints
            # of a total, computed; none printed: the written answer reads the filing
            t = time.perf_counter()
            chosen = self._parts(intent, read)
            if chosen is not None:
                run.answer = chosen
                yield record(StageTrace(0, AnswerPayload(chosen), time.perf_counter() - t))
                return
            read = replace(read, status="scope", scope=(read.parts,))
            intent = replace(intent, plan=read)
            report = "the quarter's report" if intent.quarters else "the annual report"
            record = _saying(f"{report} prints no table whose {read.parts} rows add up to its "
                             f"{read.tree.name if read.tree is not None else 'amount'}", record, run)
        if self.chat is None and stop_after not in RETRIEVAL_STAGES and not cover_asked:
            run.answer = self._no_chat() if number is None else joined_answer(number, self._no_chat(), rest, what)
            if number is not None:
                yield record(StageTrace(0, AnswerPayload(run.answer), 0.0))
            return

        # a measure of part of the company or of its own making (a segment's, an adjusted one, guidance) is
        # answered in words from the passages, never computed from statement facts or figures of the text
        scoped = (intent.plan is not None and intent.plan.status == "scope" and s.answer.from_facts
                  and stop_after not in RETRIEVAL_STAGES)
        # a number no statement line names ("the gain on the separation", "the cash proceeds"): the filing's sentence
        # that prints it, quoted, is the evidence (no model picks a figure out of a passage)
        # (so is a revision's size, "by how much did it increase its credit agreement": the engine reads the pair of
        # figures from the sentences, engine.answer.revisions, whatever the lexicon calls the instrument)
        in_words = intent.plan is not None and intent.numeric and (
            intent.plan.status == "none" or bool(intent.revised) and intent.plan.status == "outside")
        if s.answer.written == "quotes" and (not intent.numeric or scoped or in_words):
            # a written question: one retrieval, the evidence sentences of its passages quoted, and one short
            # synthesis the model may write only from them (engine.answer.quotes); no passage is kept or dropped
            # by a model, so the answer cites only passages of the answer stage's list
            if scoped:  # its figure is printed in the company's text (a release's table row, MD&A), not a statement
                intent = replace(intent, numeric=False)
                record = _saying(scope_note(intent.plan), record, run)
            passages = yield from self._retrieve(run, record, question, intent, 1, cancel, check.note,
                                                 top_k=s.answer.quote_passages)
            _raise_if_cancelled(cancel)
            if cover_asked:
                t = time.perf_counter()
                listed = listing_answer(intent, passages, self.library)
                if listed is not None:
                    run.answer = listed
                    refs = tuple(PassageRef.of(i, p) for i, p in enumerate(passages, start=1))
                    yield record(StageTrace(0, AnswerPayload(listed, refs), time.perf_counter() - t))
                    return
            if self.chat is None:  # (a cover question whose cover prints no table: the model reads the quotes)
                run.answer = self._no_chat()
                return
            passages, older = self._reporting_the_year(passages, intent)
            if older:  # a filing reports its own year and those before: an older one cannot tell of the year asked
                record = _saying(older, record, run)
            t = time.perf_counter()
            metrics = computed_metrics(self.library, intent, self.catalogue) if s.answer.from_facts else ()
            searched = ", ".join(dict.fromkeys(p.chunk.doc_name for p in passages)) or "no filing"
            if intent.sections:
                searched += f" (sections asked: {', '.join(intent.sections)})"
            got = answer_from_quotes(question, intent, passages, self.retriever.embedder, self.chat, s.answer,
                                     s.prompts, computed=render_metric_lines(metrics),
                                     known=[m.value for m in metrics] + [x.value for x in settled], searched=searched,
                                     verdict=not undecided, settled=settled, since=self._period_start(intent, passages),
                                     cancel=cancel, decided=lambda quotes: revision_answer(intent, quotes, passages))
            run.answer = got.result if number is None else joined_answer(number, got.result, rest, what)
            refs = tuple(PassageRef.of(i, p) for i, p in enumerate(passages, start=1))
            yield record(StageTrace(0, AnswerPayload(run.answer, refs), time.perf_counter() - t, got.calls))
            return

        needed = self._fact_holders(intent)
        kept: list[Passage] = []
        shown: list[Passage] = []
        query = question
        for round_no in range(1, s.curation.max_rounds + 1):
            _raise_if_cancelled(cancel)
            round_intent = intent if round_no == 1 else _follow_up_intent(query, intent, list(self.refs.values()))
            new = yield from self._retrieve(run, record, query, round_intent, round_no, cancel, check.note)
            assert self.chat is not None  # (a retrieval-only run stopped above)
            # Algorithm 1, line 9: P_r ← P_r ∪ P_f (earlier kept passages first).
            seen = {p.chunk.id for p in kept}
            shown = kept + [p for p in new if p.chunk.id not in seen]
            t = time.perf_counter()
            cur = curate(question, shown, kept, self.chat, s.curation, s.prompts, cancel)
            holders = needed(cur.dropped)
            held = [p for p in cur.dropped if p.chunk.id in holders]
            kept = list(cur.kept) + held
            yield record(StageTrace(round_no, CurationPayload(
                tuple(PassageRef.of(i, p) for i, p in enumerate(shown, start=1)),
                tuple(p.chunk.id for p in kept), tuple(p.chunk.id for p in cur.dropped if p not in held),
                cur.answerable, cur.missing_information, cur.complementary_question, cur.ok,
                tuple(p.chunk.id for p in held),
            ), time.perf_counter() - t, (cur.call,)))
            if cur.answerable:
                break
            next_query = cur.complementary_question or cur.missing_information
            if round_no == s.curation.max_rounds or not next_query or next_query == query:
                # Algorithm 1, line 11: answer from P_r when i_max is reached. A round without a new question
                # would retrieve the same passages again, so it ends the loop early (recorded in the trace).
                kept = shown
                if round_no < s.curation.max_rounds:
                    yield record(StageTrace(round_no, CurationStopPayload(
                        "the curator gave no new complementary question; answering from the passages shown"), 0.0))
                break
            query = next_query

        _raise_if_cancelled(cancel)
        t = time.perf_counter()
        if not kept:
            run.answer = AnswerResult("not_answerable", NOT_ANSWERABLE, reason="no relevant passage was found")
            yield record(StageTrace(0, AnswerPayload(run.answer), time.perf_counter() - t))
            return
        assert self.chat is not None
        # a measure of part of the company or of its own making (a segment's, an adjusted one, per employee) is
        # answered in words from the passages, never computed from statement facts or figures of the text
        metric_plan = intent.plan
        outside = metric_plan is not None and metric_plan.status == "scope" and s.answer.from_facts
        asked = replace(intent, numeric=False) if outside else intent  # (answer.written "curated")
        metrics = computed_metrics(self.library, asked, self.catalogue) \
            if s.answer.from_facts and not asked.numeric else ()
        result, calls = answer_question(question, asked, kept, self.library, self.chat, s.answer, s.prompts,
                                        computed=render_metric_lines(metrics), known=[m.value for m in metrics],
                                        cancel=cancel)
        if outside and metric_plan is not None:
            result = replace(result, reason="; ".join(x for x in (scope_note(metric_plan), result.reason) if x))
        result = self._check_evidence_date(self._check_evidence_years(result, intent, kept), intent, kept)
        if number is not None:
            result = joined_answer(number, result, rest, what)
        run.answer = result
        refs = tuple(PassageRef.of(i, p) for i, p in enumerate(kept, start=1))
        yield record(StageTrace(0, AnswerPayload(result, refs), time.perf_counter() - t, calls))

    def _no_chat(self) -> AnswerResult:
        reason = "no chat model is loaded (see `filinglens models list`)"
        return AnswerResult("failed", "", reason=f"{reason}: {self.no_chat_reason}" if self.no_chat_reason else reason)

    def _cited(self, result: AnswerResult, passages: Sequence[Passage]) -> dict[str, FilingIdentity | None]:
        """The identity of each filing an answer cites (None: a citation outside the passages it was given)."""
        filings = {p.chunk.doc_name: p.chunk.filing_id for p in passages}
        return {c.doc_name: self.library.filing(filings[c.doc_name]).identity if c.doc_name in filings else None
                for c in result.citations}

    @staticmethod
    def _withdrawn(result: AnswerResult, why: str) -> AnswerResult:
        return replace(result, status="not_answerable", text=NOT_ANSWERABLE, value=None, unit=None,
                       reason=f"the answer {result.text!r} rests on {why}; no answer is given")

    def _period_start(self, intent: QueryIntent, passages: Sequence[Passage]) -> date | None:
        """The first day of the period a question asks whether there was any of something in ("did it announce any
        acquisitions in the Q2 2023 10-Q"): the earliest start of the periods its passages' 10-Qs (a quarter) and
        10-Ks (a year) report; None when it asks no such thing, no period, a filing's period end is not known, or it
        asks for what still stands in the period ("any ongoing legal battles": told with the days they began)."""
        if not intent.any_of or not (intent.quarters or intent.fiscal_years) \
                or if_any_vocab().ongoing.search(intent.question):  # ("any ongoing legal battles": whenever begun)
            return None
        starts = []
        for fid in {p.chunk.filing_id for p in passages}:
            identity = self.library.filing(fid).identity
            months = {"10-Q": 3, "10-K": 12}.get(identity.form or "")
            if months is None or not identity.period_end:
                return None
            starts.append(period_start(date.fromisoformat(identity.period_end), months))
        return min(starts, default=None)

    def _reporting_the_year(self, passages: Sequence[Passage], intent: QueryIntent) -> tuple[list[Passage], str]:
        """The passages of filings that can report the fiscal years asked (their own year or a later one), and a
        note naming the filings left out ("" when none was)."""
        if not intent.fiscal_years or intent.looks_ahead:  # (a plan for a later year is told in an earlier filing)
            return list(passages), ""
        asked = min(intent.fiscal_years)
        years = {fid: self.library.filing(fid).identity.fiscal_year for fid in {p.chunk.filing_id for p in passages}}
        older = [p for p in passages if (y := years[p.chunk.filing_id]) is not None and y < asked]
        if not older:
            return list(passages), ""
        left = ", ".join(dict.fromkeys(p.chunk.doc_name for p in older))
        return ([p for p in passages if p not in older],
                f"left out the passages of {left}: a filing for an earlier year cannot report FY{asked}")

    def _check_evidence_years(self, result: AnswerResult, intent: QueryIntent,
                              passages: Sequence[Passage]) -> AnswerResult:
        """A numeric answer about a fiscal year cannot rest only on filings for earlier years: a filing reports
        its own year and those before, never a later one. Such an answer (the model read another year's figure
        as the asked one) becomes not answerable, naming the years."""
        if result.status != "answered" or not intent.numeric or not intent.fiscal_years or not result.citations:
            return result
        years = {i.fiscal_year if i is not None else None for i in self._cited(result, passages).values()}
        if None in years or max(y for y in years if y is not None) >= min(intent.fiscal_years):
            return result
        cited = ", ".join(f"FY{y}" for y in sorted(y for y in years if y is not None))
        asked = ", ".join(f"FY{y}" for y in intent.fiscal_years)
        return self._withdrawn(result, f"filings for {cited} only, which cannot report {asked}, the year the "
                                       "question asks about")

    def _check_evidence_date(self, result: AnswerResult, intent: QueryIntent,
                             passages: Sequence[Passage]) -> AnswerResult:
        """A numeric answer "as of" a day the question names cannot rest only on filings that report on an
        earlier time: a release for the quarter ended March 31 cannot know a gain booked in August. A filing
        counts up to :data:`REPORTING_LAG` after the last day it reports on (it is filed, with its subsequent
        events, weeks later); a filing whose reporting day is not known (an undated 8-K) is not judged."""
        asked = date.fromisoformat(intent.as_of) if intent.as_of else None
        if result.status != "answered" or not intent.numeric or asked is None or not result.citations:
            return result
        through = {doc: i.reports_through() if i is not None else None
                   for doc, i in self._cited(result, passages).items()}
        if any(d is None or d + REPORTING_LAG >= asked for d in through.values()):
            return result
        cited = ", ".join(f"{doc} (reports through {d})" for doc, d in through.items())
        return self._withdrawn(result, f"{cited} only, which cannot report as of {asked}, the day the question "
                                       "asks about")

    def _facts(self, run: Run, record: Callable[[StageTrace], StageTrace], intent: QueryIntent, plan: FactPlan,
               company_check: str, cancel: Callable[[], bool] | None) -> Generator[StageTrace, None, None]:
        """The sufficiency check and its rounds (HiREC's loop with a computed notion of "missing"): the inputs the
        company's facts leave open become a complementary question (company, line item, period, statement)
        whose retrieved pages are searched for the rows; where the facts print several values for an input, the
        model chooses among them. At most ``curation.max_rounds`` complementary rounds; then the answer is
        computed, or not answerable naming what is still missing."""
        chosen: dict[Term, StoredFact] = {}
        found: dict[Term, list[StoredFact]] = {}
        name = self.refs[plan.company].names[0] if plan.company in self.refs else plan.company
        query = ""
        for round_no in range(self.settings.curation.max_rounds + 1):
            t = time.perf_counter()
            got = gather(plan, self.library, self.catalogue, chosen=chosen, found=found)
            calls: tuple[LlmCall, ...] = ()
            open_choices = [g for g in got.gaps if g.candidates and g.term not in chosen]
            if open_choices and self.chat is not None:
                picks, call = choose_facts(run.question, name, open_choices, self.chat, self.settings.prompts, cancel)
                calls = (call,)
                chosen.update(picks)
                got = gather(plan, self.library, self.catalogue, chosen=chosen, found=found)
            yield record(StageTrace(round_no, facts_payload(plan, got, query), time.perf_counter() - t, calls))
            missing = [g for g in got.gaps if not g.candidates and g.term not in found]
            if not missing or round_no == self.settings.curation.max_rounds:
                break
            _raise_if_cancelled(cancel)
            query = gap_query(missing, name)
            names = {g.term: self.catalogue.metrics_of(g.item.name) for g in missing}
            metrics = tuple(dict.fromkeys(n for v in names.values() for n in v))
            if not plan.quarterly:  # the year's 10-K, or the next one's comparative column
                years = tuple(sorted({y for g in missing for y in (g.fiscal_year, g.fiscal_year + 1)}))
                gap_intent = replace(intent, issuers=(plan.company,), fiscal_years=years, annual_years=years,
                                     quarters=(), forms=("10-K",), metrics=metrics)
            else:  # the quarter's own 10-Q, or its earnings release
                gap_intent = replace(intent, issuers=(plan.company,), forms=("EARNINGS",) if plan.release_ids
                                     else ("10-Q",), metrics=metrics)
            passages = yield from self._retrieve(run, record, query, gap_intent, round_no + 1, cancel, company_check)
            pages = [(p.chunk.filing_id, p.chunk.page_index) for p in passages]
            for gap in missing:
                found[gap.term] = gap_facts(self.library, gap, pages, names[gap.term])
        shape = not_reported(plan, self.library, self.catalogue) if got.gaps else None
        # a line the company's statements do not print at all: the metric does not fit it, which is the answer
        run.answer = shape or facts_answer(plan, got, intent)
        yield record(StageTrace(0, AnswerPayload(run.answer), 0.0))

    def _series(self, run: Run, record: Callable[[StageTrace], StageTrace], intent: QueryIntent,
                company_check: str, cancel: Callable[[], bool] | None) -> Generator[StageTrace, None, None]:
        """One metric in each of the quarters (or whole years) asked, each read and computed as a question of that
        period alone; a change asked over the run ("how has it changed") is the move from the first period to the
        last, so each period is read for the metric's value (engine.answer.series)."""
        figures: list[PeriodFigure] = []
        what = ""
        quarterly = bool(intent.quarters)
        labels = intent.quarters if quarterly else tuple(f"FY{y}" for y in sorted(set(intent.annual_years or ())))
        for label in labels:
            _raise_if_cancelled(cancel)
            year = int(label[:4]) if quarterly else int(label[2:])
            one = replace(intent, quarters=(label,) if quarterly else (), fiscal_years=(year,),
                          annual_years=() if quarterly else (year,), temporal=(label,), quarter_run=0, year_run=0,
                          comparison=False, plan=None)
            own = read_plan(one, self.catalogue, list(self.refs.values()))
            if own.status == "complete" and own.tree is not None and own.tree.kind in ("change", "growth"):
                inner = own.tree.args[0]
                own = replace(own, tree=inner, unit=dimension_of(inner, self.catalogue).unit or own.unit,
                              words=plan_words(inner, self.catalogue))
            one = replace(one, plan=own)
            plan = plan_metric(one, self.library, self.catalogue) if own.status == "complete" else None
            if plan is None:
                why = own.note or ("the quarter's metric could not be read from its 10-Q's statements" if quarterly
                                   else "the year's metric could not be read from its annual report's statements")
                figures.append(PeriodFigure(label, "", AnswerResult("not_answerable", NOT_ANSWERABLE, reason=why)))
                continue
            what = what or plan.metric.words
            yield from self._facts(run, record, one, plan, company_check, cancel)
            # the periods its inputs were read over, as their columns print them ("3M to 2023-07-01", "as of …")
            period = ", ".join(dict.fromkeys(i.period for i in run.answer.inputs if i.period)) if quarterly else ""
            figures.append(PeriodFigure(label, period, run.answer))
        what = what or (intent.plan.words if intent.plan else "the metric")
        if intent.plan is not None:  # the question as read: the metric in each period (not the change its words ask)
            yield record(StageTrace(1, IntentPayload(replace(intent, plan=replace(
                intent.plan, words=f"{what} in each of {', '.join(labels)}"))), 0.0))
        run.answer = series_answer(what, figures, "quarter" if quarterly else "year")
        yield record(StageTrace(0, AnswerPayload(run.answer), 0.0))

    def _parts(self, intent: QueryIntent, read: MetricPlan) -> AnswerResult | None:
        """A choice among the parts of a total (engine.answer.parts) of the one company asked, for the latest year
        asked, from its annual report of that year; several amounts asked of every part ("net sales and operating
        expenses by segment"): each from the table of its own parts, one the filing does not print by part said so,
        as are the words of the question read as no amount."""
        first = self._parts_of(intent, read)
        if first is None or not (read.also or read.unread):
            return first
        others = [(m, self._parts_of(intent, replace(read, tree=metric_node(m, self.catalogue, {}), also=())))
                  for m in read.also]
        return joined_parts(read, first, others)

    def _parts_of(self, intent: QueryIntent, read: MetricPlan) -> AnswerResult | None:
        """The parts of the one amount of ``read``'s tree."""
        filings = self.library.filings_of_companies(intent.issuers)
        years = asked_years(intent)
        if not filings:
            return None
        if intent.quarters:  # a quarter's: the parts its 10-Q prints of the quarter's three months (a segment note),
            # or its share table (a retailer's categories)
            quarter = intent.quarters[-1]
            ids = [f.id for f in filings if f.identity.period == quarter]
            tenq = {f.id: f.identity.period_end for f in filings
                    if f.id in ids and f.identity.form == "10-Q" and f.identity.period_end}
            ends = set(tenq.values())
            chosen = parts_answer(read, intent, self.library, dict.fromkeys(tenq, int(quarter[:4])), PartsPeriod(
                int(quarter[:4]), next(iter(ends)), f"{quarter} (3 months to {next(iter(ends))})")) \
                if len(ends) == 1 else None
            return chosen or mix_answer(read, self.library, ids, 3, quarter, intent.keywords)
        if not years:
            return None
        annual = annual_reports(filings)
        return parts_answer(read, intent, self.library, annual, years[-1]) or mix_answer(
            read, self.library, [fid for fid, fy in annual.items() if fy == years[-1]], 12, f"FY{years[-1]}",
            intent.keywords)

    def _fact_holders(self, intent: QueryIntent) -> Callable[[Sequence[Passage]], set[int]]:
        """Which of some passages hold a statement fact the question needs: a line item of a catalogue metric it
        names, of a company and fiscal year it asks for. The curator may not drop those (its judgement of
        relevance is a small model's; a printed input of the asked metric is relevant by construction)."""
        metric = self.catalogue.metric_for(intent.metrics, relative=False)
        if metric is None:
            return lambda _passages: set()
        terms = [t for f in metric.formulas for t in formula_terms(f)]
        concepts = [c for t in terms for c in self.catalogue.items[t.item].concepts]
        years = {y - t.back for y in intent.fiscal_years for t in terms}  # prior(x), avg(x): a year before too
        companies = set(intent.issuers)

        def holders(passages: Sequence[Passage]) -> set[int]:
            out = set()
            company_of = {f.id: f.identity.company_key
                          for f in self.library.filings(sorted({p.chunk.filing_id for p in passages}))}
            for p in passages:
                c = p.chunk
                if companies and company_of.get(c.filing_id) not in companies:
                    continue
                facts = self.library.facts(filing_ids=[c.filing_id], page_index=c.page_index,
                                           concepts=concepts)
                if any((not years or s.fact.period.fiscal_year in years) and c.char_start <= s.fact.char_start
                       < c.char_end for s in facts):
                    out.add(c.id)
            return out

        return holders

    def _retrieve(self, run: Run, record: Callable[[StageTrace], StageTrace], query: str, intent: QueryIntent,
                  round_no: int, cancel: Callable[[], bool] | None,
                  company_check: str = "", top_k: int | None = None) -> Generator[StageTrace, None, list[Passage]]:
        """The documents and passages stages of one round; ``top_k``: passages kept when not the settings' k_P (a
        written answer chooses its quotes among more)."""
        t0 = time.perf_counter()
        model_seconds = 0.0
        doc_query = document_query(intent, self.refs)
        r = self.settings.retrieval
        if r.rewrite_query and self.chat is not None:
            messages: list[ChatMessage] = [{"role": "system", "content": prompt("rewrite", self.settings.prompts)},
                        {"role": "user", "content": query}]
            res, call = call_llm(self.chat, "query rewrite", messages, rewrite_schema(r.rewrite_max_chars),
                                 r.rewrite_max_tokens, cancel)
            model_seconds = call.seconds
            if res is not None and res.data["query"].strip():
                doc_query = res.data["query"].strip()
            yield record(StageTrace(round_no, RewritePayload(query, doc_query), time.perf_counter() - t0, (call,)))
        t = time.perf_counter()
        loaded = ""
        if not self.retrieval_ready:  # the first question that retrieves loads the embedder and the indexes
            self.retrieval()
            loaded = f"loaded the embedder and the indexes in {time.perf_counter() - t:.1f} s"
        filings, doc_payload = self.retriever.documents(doc_query, intent)
        yield record(StageTrace(round_no, replace(doc_payload, company_check=company_check, loaded=loaded),
                                time.perf_counter() - t))
        t = time.perf_counter()
        if self.reranker is not None:
            got = self.reranker.passages(query, lexical_query(intent, query), filings, intent, cancel)
            model_seconds += sum(c.seconds for c in got.calls)
            run.retrieval_seconds += time.perf_counter() - t0 - model_seconds
            yield record(StageTrace(round_no, got.rerank, got.seconds, tuple(got.calls)))
            yield record(StageTrace(round_no, got.payload, 0.0))
            return got.passages
        passages, pas_payload = self.retriever.passages(query, lexical_query(intent, query), filings, intent,
                                                        top_k)
        run.retrieval_seconds += time.perf_counter() - t0 - model_seconds
        yield record(StageTrace(round_no, pas_payload, time.perf_counter() - t))
        return passages


REPORTING_LAG = timedelta(days=92)  # the latest a filing is filed after the last day it reports on


# scope words that name the company's own measure rather than a part of the company (resources/reader SCOPE)
_OWN_MEASURE = re.compile(r"non.?gaap|adjusted|core|organic|pro forma|underlying|comparable|same store|like for like|"
                          r"excluding|\bex\b|constant currency", re.IGNORECASE)


def scope_note(plan: MetricPlan | None) -> str:
    """What an answer to a question of part of the company or of its own measure says it is."""
    if plan is None:
        return ""
    note = f"the question's metric is no statement metric ({plan.note}): answered from the text"
    if any(_OWN_MEASURE.search(w) for w in plan.scope):
        note += "; a company-defined (non-GAAP) measure, as the company prints it, not computed from GAAP statement facts"
    return note


class _Stop(Exception):
    """Raised by the recorder after the stage a run was asked to stop after."""


def _a_run(intent: QueryIntent) -> bool:
    """Whether a question asks one metric over a run of periods (engine.answer.series): a complete plan, no
    judgement or choice, and quarters of more than one quarter number ("each of the last four quarters"), or whole
    years asked as a run ("each of the last three fiscal years") or one value at three years or more ("revenue in
    FY2020, FY2021 and FY2022": a table of values, not one computation)."""
    read = intent.plan
    if read is None or read.status != "complete" or read.judge or read.choice or read.tree is None:
        return False
    if intent.quarters:
        return len({q[4:] for q in intent.quarters}) > 1
    years = set(intent.annual_years or ())
    if intent.year_run and len(years) >= 2:
        return read.tree.kind not in ("average", "cagr")
    return len(years) >= 3 and read.tree.kind not in ("average", "cagr", "change", "growth")


def _raise_if_cancelled(cancel: Callable[[], bool] | None) -> None:
    """Between stages: the same exit as a cancel noticed inside a model call."""
    if cancel is not None and cancel():
        raise Cancelled("cancelled by the user")


def _saying(note: str, record: Callable[[StageTrace], StageTrace], run: Run) -> Callable[[StageTrace], StageTrace]:
    """A recorder that adds ``note`` to the reason of the answer it records (and to the run's answer)."""

    def said(trace: StageTrace) -> StageTrace:
        if isinstance(trace.payload, AnswerPayload):
            answer = trace.payload.answer
            if note not in answer.reason:  # (a compound answer carries its number's notes already)
                answer = replace(answer, reason="; ".join(x for x in (note, answer.reason) if x))
            run.answer = answer
            trace = replace(trace, payload=replace(trace.payload, answer=answer))
        return record(trace)

    return said


def _follow_up_intent(query: str, original: QueryIntent, refs: list[IssuerRef]) -> QueryIntent:
    """Intent of a complementary question; it is about the original's companies, whatever company it names (the
    curator's question cannot carry the answer to another company's filings)."""
    follow = parse_intent(query, refs)
    if original.issuers:
        follow = replace(follow, issuers=original.issuers)
    return follow
