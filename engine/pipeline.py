"""The question path (HiREC Algorithm 1): intent → hierarchical retrieval → evidence curation rounds →
answer, with every stage's trace persisted in the library as it happens."""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from engine.answer.generate import NOT_ANSWERABLE, AnswerResult, answer_question
from engine.curation import curate
from engine.errors import Cancelled
from engine.intent import IssuerRef, QueryIntent, lexical_query, parse_intent
from engine.models.base import ChatModel, CrossScorer, Embedder
from engine.retrieval.hierarchical import HierarchicalRetriever, Passage
from engine.settings import Settings
from engine.store.library import Library, RunStore
from engine.trace import StageTrace, call_llm, prompt

log = logging.getLogger(__name__)


@dataclass
class Run:
    id: str
    question: str
    status: str  # answered | not_answerable | failed | cancelled
    answer: AnswerResult
    traces: list[StageTrace] = field(default_factory=list)
    seconds: float = 0.0
    retrieval_seconds: float = 0.0

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
        return sum(c.cached_tokens for t in self.traces for c in t.llm_calls)


def issuer_refs(library: Library) -> list[IssuerRef]:
    names: dict[str, set[str]] = {}
    for f in library.filings():
        i = f.identity
        key = i.issuer_key or i.ticker or i.doc_name
        names.setdefault(key, set()).update(n for n in (i.registrant, i.ticker, i.issuer_key) if n)
    return [IssuerRef(key, tuple(sorted(v, key=len, reverse=True))) for key, v in names.items()]


def document_query(intent: QueryIntent, refs: dict[str, IssuerRef]) -> str:
    """HiREC's q' built from the parsed intent, in the words of the filing summaries."""
    parts = [refs[k].names[0] for k in intent.issuers if k in refs]
    forms = {"10-K": "annual report on Form 10-K", "10-Q": "quarterly report on Form 10-Q", "8-K": "current report on Form 8-K"}
    parts += [forms.get(f, f) for f in intent.forms]
    parts += [f"fiscal year {y}" for y in intent.fiscal_years] + [f"period {q}" for q in intent.quarters]
    parts += list(intent.metrics)
    return " ".join(parts) if parts else intent.question


class HirecPipeline:
    """Holds loaded models and indexes; one instance answers many questions."""

    def __init__(self, library: Library, settings: Settings, embedder: Embedder, chat: ChatModel | None,
                 cross: CrossScorer | None = None, *, retriever: HierarchicalRetriever | None = None) -> None:
        self.library, self.settings, self.chat = library, settings, chat
        self.retriever = retriever or HierarchicalRetriever(library, settings, embedder, cross)
        self.refs = {r.key: r for r in issuer_refs(library)}
        self.runs = RunStore(library)

    def run(self, question: str, cancel: Callable[[], bool] | None = None) -> Run:
        run = None
        for item in self.run_iter(question, cancel):
            if isinstance(item, Run):
                run = item
        assert run is not None
        return run

    def run_iter(self, question: str, cancel: Callable[[], bool] | None = None) -> Iterator[StageTrace | Run]:
        """Yield each stage's trace as it completes, then the finished :class:`Run`.

        ``cancel`` is checked between stages and polled by the model during each call; once it returns true
        the run ends with status ``cancelled``, keeping the traces of the stages that completed.
        """
        run = Run(uuid.uuid4().hex[:12], question, "running", AnswerResult("failed", ""))
        self.runs.create(run.id, "hirec", question, self.settings.model_dump_json())
        started = time.perf_counter()

        def record(trace: StageTrace) -> StageTrace:
            run.traces.append(trace)
            self.runs.add_event(run.id, len(run.traces), trace.stage, trace.round, trace.to_dict(), trace.seconds,
                                trace.tokens_in, trace.tokens_out)
            return trace

        # One prefix-cache session per run: a later curation round or the answer step that opens with the
        # passages of the previous prompt does not read them again (see engine.models.llama).
        session = getattr(self.chat, "prefix_session", None)
        try:
            with session() if session is not None else contextlib.nullcontext():
                yield from self._stages(run, record, cancel)
        except Cancelled:
            log.info("run %s cancelled after %d stages", run.id, len(run.traces))
            run.status = "cancelled"
            run.answer = AnswerResult("failed", "", reason="cancelled by the user")
        except Exception as exc:  # never a traceback for the user: the run records what happened
            log.exception("run %s failed", run.id)
            run.answer = AnswerResult("failed", "", reason=f"internal error: {type(exc).__name__}: {exc}")
        run.status = run.answer.status if run.status == "running" else run.status
        run.seconds = time.perf_counter() - started
        outcome = {"answer": run.answer.to_dict(), "seconds": round(run.seconds, 3),
                   "retrieval_seconds": round(run.retrieval_seconds, 3), "tokens_in": run.tokens_in,
                   "tokens_out": run.tokens_out, "tokens_cached": run.tokens_cached, "llm_calls": run.llm_calls}
        self.runs.finish(run.id, run.status, outcome, run.answer.reason if run.status == "failed" else "")
        yield run

    def _stages(self, run: Run, record: Callable[[StageTrace], StageTrace],
                cancel: Callable[[], bool] | None) -> Iterator[StageTrace]:
        s = self.settings
        question = run.question
        t = time.perf_counter()
        intent = parse_intent(question, list(self.refs.values()))
        yield record(StageTrace("intent", 0, {"intent": intent.to_dict()}, time.perf_counter() - t))
        if self.library.count("filings") == 0:
            run.answer = AnswerResult("failed", "", reason="the library is empty: ingest filings first")
            return
        if self.chat is None:
            run.answer = AnswerResult("failed", "", reason="no chat model is loaded (see `filinglens models list`)")
            return

        kept: list[Passage] = []
        shown: list[Passage] = []
        query = question
        for round_no in range(1, s.curation.max_rounds + 1):
            _raise_if_cancelled(cancel)
            round_intent = intent if round_no == 1 else _follow_up_intent(query, intent, list(self.refs.values()))
            new = yield from self._retrieve(run, record, query, round_intent, round_no, cancel)
            # Algorithm 1, line 9: P_r ← P_r ∪ P_f (earlier kept passages first).
            seen = {p.chunk.id for p in kept}
            shown = kept + [p for p in new if p.chunk.id not in seen]
            t = time.perf_counter()
            cur = curate(question, shown, kept, self.chat, s.curation.max_kept, cancel)
            kept = list(cur.kept)
            yield record(StageTrace("curation", round_no, {
                "shown": [_pid(i, p) for i, p in enumerate(shown, start=1)],
                "kept": [p.chunk.id for p in cur.kept], "dropped": [p.chunk.id for p in cur.dropped],
                "answerable": cur.answerable, "missing_information": cur.missing_information,
                "complementary_question": cur.complementary_question, "model_output_usable": cur.ok,
            }, time.perf_counter() - t, (cur.call,)))
            if cur.answerable:
                break
            next_query = cur.complementary_question or cur.missing_information
            if round_no == s.curation.max_rounds or not next_query or next_query == query:
                # Algorithm 1, line 11: answer from P_r when i_max is reached. A round without a new question
                # would retrieve the same passages again, so it ends the loop early (recorded in the trace).
                kept = shown
                if round_no < s.curation.max_rounds:
                    yield record(StageTrace("curation-stop", round_no, {
                        "reason": "the curator gave no new complementary question; answering from the passages shown"}, 0.0))
                break
            query = next_query

        _raise_if_cancelled(cancel)
        t = time.perf_counter()
        if not kept:
            run.answer = AnswerResult("not_answerable", NOT_ANSWERABLE, reason="no relevant passage was found")
            yield record(StageTrace("answer", 0, {"answer": run.answer.to_dict()}, time.perf_counter() - t))
            return
        result, call = answer_question(question, intent, kept, self.chat, numeric_mode=s.answer.numeric_mode,
                                       max_tokens=s.answer.max_tokens, cancel=cancel)
        run.answer = result
        yield record(StageTrace("answer", 0, {"passages": [_pid(i, p) for i, p in enumerate(kept, start=1)],
                                              "answer": result.to_dict()}, time.perf_counter() - t, (call,)))

    def _retrieve(self, run: Run, record: Callable[[StageTrace], StageTrace], query: str, intent: QueryIntent,
                  round_no: int, cancel: Callable[[], bool] | None) -> Iterator[StageTrace]:
        t0 = time.perf_counter()
        calls = ()
        doc_query = document_query(intent, self.refs)
        if self.settings.retrieval.rewrite_query and self.chat is not None:
            schema = {"type": "object", "properties": {"query": {"type": "string", "maxLength": 200}},
                      "required": ["query"], "additionalProperties": False}
            messages = [{"role": "system", "content": prompt("rewrite")}, {"role": "user", "content": query}]
            res, call = call_llm(self.chat, "query rewrite", messages, schema, 96, cancel)
            calls = (call,)
            if res is not None and res.data["query"].strip():
                doc_query = res.data["query"].strip()
            yield record(StageTrace("rewrite", round_no, {"question": query, "rewritten": doc_query},
                                    time.perf_counter() - t0, calls))
        t = time.perf_counter()
        docs, doc_payload = self.retriever.documents(doc_query, intent)
        yield record(StageTrace("documents", round_no, doc_payload, time.perf_counter() - t))
        t = time.perf_counter()
        filings = [d.filing for d in docs if d.kept]
        passages, pas_payload = self.retriever.passages(query, lexical_query(intent, query), filings, intent)
        yield record(StageTrace("passages", round_no, pas_payload, time.perf_counter() - t))
        run.retrieval_seconds += time.perf_counter() - t0 - sum(c.seconds for c in calls)
        return passages


def _raise_if_cancelled(cancel: Callable[[], bool] | None) -> None:
    """Between stages: the same exit as a cancel noticed inside a model call."""
    if cancel is not None and cancel():
        raise Cancelled("cancelled by the user")


def _pid(i: int, p: Passage) -> dict:
    return {"id": i, "chunk_id": p.chunk.id, "doc_name": p.chunk.doc_name, "page": p.chunk.page_no, "title": p.title}


def _follow_up_intent(query: str, original: QueryIntent, refs: list[IssuerRef]) -> QueryIntent:
    """Intent of a complementary question; it inherits the original's companies when it names none."""
    from dataclasses import replace

    follow = parse_intent(query, refs)
    if not follow.issuers and original.issuers:
        follow = replace(follow, issuers=original.issuers)
    return follow
