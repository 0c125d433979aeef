"""Background work: ingest, asking, export and other engine calls off the GUI thread.

Every worker opens its own :class:`engine.session.Session`, and with it its own library (SQLite connections are
never shared across threads), reports progress through Qt signals (delivered to GUI-thread slots by queued connections),
and stops early when its ``threading.Event`` cancel flag is set. Errors arrive as one readable line,
never as a traceback.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThread, Signal, Slot

from engine.errors import Cancelled, EngineError, ModelError
from engine.records import StageTrace
from engine.settings import Settings

log = logging.getLogger(__name__)


def freeze_heap() -> None:
    """Move every object alive now (loaded models, indexes) out of the garbage collector's reach.

    With torch, transformers and llama.cpp loaded the heap holds ~450k objects, and a full collection
    takes 300–600 ms on a busy 2-core machine. Whichever thread triggers it holds the GIL meanwhile, so
    the GUI froze for that long at random moments of a run. Long-lived model objects never become
    garbage; freezing them keeps later collections short.
    """
    gc.freeze()


def readable_error(exc: BaseException) -> str:
    """The message a user sees: the engine's own sentence, or the exception's type and text."""
    if isinstance(exc, EngineError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "out of memory"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class JobSignals(QObject):
    """Signals of a :class:`Job`; created on the GUI thread so slots run there."""

    progress = Signal(str, int, int)  # stage, done, total (total 0 = unknown)
    item = Signal(object)  # one streamed result (an IngestEvent, ...)
    done = Signal(object)  # the job's result
    failed = Signal(str)  # a readable message


class Job(QRunnable):
    """A cancellable unit of work for ``QThreadPool``; subclasses implement :meth:`work`."""

    name = "job"

    def __init__(self) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the window keeps a reference until ``done``/``failed`` arrive
        self.signals = JobSignals()
        self.cancel_event = threading.Event()
        self.finished = threading.Event()

    def cancel(self) -> None:
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def run(self) -> None:
        try:
            result = self.work()
        except Exception as exc:
            if not isinstance(exc, EngineError):
                log.exception("%s failed", self.name)
            self._emit(self.signals.failed, readable_error(exc))
        else:
            self._emit(self.signals.done, result)
        finally:
            self.finished.set()

    @staticmethod
    def _emit(signal: Any, *args: Any) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:  # the window (and the signals object) is gone
            pass

    def work(self) -> Any:
        raise NotImplementedError

    def _progress(self, stage: str, done: int, total: int) -> None:
        self._emit(self.signals.progress, stage, done, total)


class CallJob(Job):
    """Run ``fn(session, *args)`` with a :class:`engine.session.Session` opened in the worker thread on
    ``settings`` (or on the library folder ``settings`` names, with the default settings): export, removal,
    checks, model lists. Only what ``fn`` uses is loaded."""

    def __init__(self, name: str, settings: Settings | Path, fn: Callable[..., Any], *args: Any) -> None:
        super().__init__()
        self.name, self.fn, self.args = name, fn, args
        self.settings = settings if isinstance(settings, Settings) else Settings(home=settings)

    def work(self) -> Any:
        from engine.session import Session

        with Session(self.settings) as session:
            return self.fn(session, *self.args)


@dataclass
class IngestSummary:
    """What an ingest job did, for the status bar and the tests."""

    counts: dict[str, int] = field(default_factory=dict)
    cancelled: bool = False
    indexed: bool = False
    index_error: str = ""
    refreshed: str = ""  # what "Update index" read again of an upgraded library's filings ("" for nothing)
    refresh_problems: tuple[str, ...] = ()  # files whose facts could not be read again, and why

    def text(self) -> str:
        parts = [f"{n} {s}" for s, n in self.counts.items() if n]
        head = ", ".join(parts) or "nothing to do"
        if self.cancelled:
            head = "cancelled after " + head
        if self.index_error:
            head += f"; indexes not updated: {self.index_error}"
        return head


class IngestJob(Job):
    """``ingest_iter`` over files/folders, then ``sync_indexes``, holding the library's builder lock throughout
    (stage ``waiting`` while another ingest holds it). A cancelled ingest still publishes the indexes of the
    filings it stored, without chunk vectors (the next build embeds them). With no paths it only brings the
    indexes up to date (the Library's "Update index", what ``filinglens index build`` does)."""

    name = "ingest"

    def __init__(self, home: Path, settings: Settings, paths: Sequence[str | Path], *, prune: bool = True) -> None:
        super().__init__()
        self.home, self.settings, self.paths, self.prune = home, settings, [str(p) for p in paths], prune

    def work(self) -> IngestSummary:
        from engine.session import Session

        summary = IngestSummary()
        with Session(self.settings.with_overrides(home=str(self.home))) as session:
            try:
                with session.builder_lock("an ingest (FilingLens app)", on_wait=self._waiting,
                                          cancel=self.cancel_event.is_set):
                    self._ingest(session, summary)
            except Cancelled:  # while waiting for another ingest: nothing was done
                summary.cancelled = True
        return summary

    def _waiting(self, message: str) -> None:
        self._emit(self.signals.progress, "waiting", 0, 0)
        log.info("%s", message)

    def _ingest(self, session: Any, summary: IngestSummary) -> None:
        vectors = session.cluster_vectors() if self.paths else None  # the cluster embeds the filings it reads
        if self.paths:
            self._emit(self.signals.progress, "scanning", 0, 0)
            for ev in session.ingest(self.paths, prune=self.prune, cancel=self.cancel_event.is_set,
                                     vectors=vectors):
                summary.counts[ev.status] = summary.counts.get(ev.status, 0) + 1
                self._emit(self.signals.item, ev)
                self._emit(self.signals.progress, "ingest", ev.done, ev.total)
        if not self.paths:  # "Update index" does what `filinglens index build` does: what an older FilingLens read
            # of the stored filings is read again first (facts, sections, CIK …), then the indexes
            self._emit(self.signals.progress, "reading again", 0, 0)
            refreshed = session.refresh_readings()
            summary.refreshed, summary.refresh_problems = refreshed.text(), refreshed.problems
        summary.cancelled = self.cancelled
        changed = any(summary.counts.get(s) for s in ("added", "removed"))
        status = session.index_status()
        if changed or status.behind or (status.filings and not status.ready):
            try:  # cancelled: BM25 and summaries still (quick), chunk vectors stop at once
                sync(session, self.cancel_event.is_set, self._progress, vectors)
                summary.indexed = True
            except EngineError as exc:  # the filings are stored; `filinglens index build` or the next ingest
                summary.index_error = str(exc)



def sync(session: Any, cancel: Callable[[], bool] | None, progress: Callable[[str, int, int], None] | None = None,
         vectors: Any = None) -> None:
    """Build and publish the session's library's indexes (loads the embedder; cached per process by the
    registry). Waits while another builder holds the library's lock (stage ``waiting``). ``vectors``: a
    :class:`engine.ingest.cluster.VectorCache` of what a Ray ingest embedded, used instead of embedding again."""
    if progress:
        progress("loading embedder", 0, 0)
    session.embedder  # noqa: B018 - loaded here, under the stage named above
    freeze_heap()
    session.sync_indexes(progress=progress, cancel=cancel, vectors=vectors,
                         on_wait=(lambda _message: progress("waiting", 0, 0)) if progress else None)


def remove_and_sync(session: Any, ids: list[int]) -> int:
    """Remove filings from the session's library and publish its indexes without them."""
    n = session.library.remove_filings(ids)
    sync(session, None)
    return n


def search_facts(session: Any, text: str, limit: int) -> Any:
    """The Tables panel's line-item search (:meth:`engine.session.Session.search_facts`), run in a worker."""
    return session.search_facts(text, limit=limit)


# -- reranker training -------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrainOptions:
    """What the analyst chose for a reranker training run (the CLI's ``train-reranker`` options)."""

    pairs: int = 2000
    epochs: int = 1
    device: str = "auto"
    exclude_questions: Path | None = None  # an evaluation question file whose filings stay out of training
    llm_share: float = 0.0
    register: bool = True


@dataclass(frozen=True)
class TrainOutcome:
    """A finished training call and, when it was registered, the registry file written."""

    report: Any  # engine.train.TrainReport (what Session.train_reranker returns)
    registry: Path | None = None


class TrainRerankerJob(Job):
    """``train_reranker`` on pairs mined from the library, then ``register_reranker`` when asked.

    Progress: stage ``mining`` until the first optimizer step (mining, loading the base model and scoring
    the held-out set), one ``item`` ``{"step", "total", "eta"}`` per step (eta in seconds), then stage
    ``registering``. Cancel stops after the current step with a checkpoint that the next run with the
    same options resumes from.
    """

    name = "reranker training"

    def __init__(self, settings: Settings, options: TrainOptions) -> None:
        super().__init__()
        self.settings, self.options = settings, options
        from engine.session import Session

        with Session(settings) as session:
            self.out_dir = session.reranker_run_dir

    def work(self) -> TrainOutcome:
        from engine.session import Session

        opts = self.options
        self._emit(self.signals.progress, "mining", 0, 0)
        with Session(self.settings) as session:
            report = session.train_reranker(self.out_dir, pairs=opts.pairs, epochs=opts.epochs, device=opts.device,
                                            exclude_questions=opts.exclude_questions, llm_share=opts.llm_share,
                                            progress=self._step, cancel=self.cancel_event.is_set,
                                            mining_progress=self._mined)
            if not (report.completed and opts.register):
                return TrainOutcome(report)
            self._emit(self.signals.progress, "registering", 0, 0)
            return TrainOutcome(report, session.register_reranker(report.model_dir))

    def _mined(self, done: int, total: int) -> None:
        self._emit(self.signals.progress, "mining", done, total)

    def _step(self, step: int, total: int, eta: float) -> None:
        self._emit(self.signals.item, {"step": step, "total": total, "eta": eta})


# -- asking ------------------------------------------------------------------------------------------

@dataclass
class AskRequest:
    """One question with the settings it runs under and its own cancel flag."""

    question: str
    settings: Settings
    home: Path
    cancel: threading.Event = field(default_factory=threading.Event)
    asked_at: float = field(default_factory=time.perf_counter)  # the click: the run's time counts from it


class AskWorker(QObject):
    """Answers questions in its own thread and keeps the loaded models and pipeline between runs.

    The pipeline (and the Library connection it reads through) lives in this worker's thread only;
    it is rebuilt when the settings or the library's generation change.
    """

    status = Signal(str)  # "loading the chat model…"
    stage = Signal(object)  # a StageTrace
    finished = Signal(object)  # the finished engine Run
    failed = Signal(str)  # a readable message; no run was recorded
    _request = Signal(object)
    _prepare = Signal(object)
    prepared = Signal(float)  # seconds the question path took to build ahead of the first question

    def __init__(self) -> None:
        super().__init__()
        # How the chat model is loaded: the registry by default; tests plug in a scripted model.
        self.chat_loader: Callable[[Settings], Any] | None = None
        self._session: Any = None
        self._key: tuple[Any, ...] | None = None
        self._request.connect(self._run)
        self._prepare.connect(self._build)

    def submit(self, request: AskRequest) -> None:
        """Queue a request; it runs in the worker's thread (thread-safe)."""
        self._request.emit(request)

    def prepare(self, request: AskRequest) -> None:
        """Build the question path for ``request``'s settings and library ahead of the first question (the window
        is idle), so that question starts at once; thread-safe. A question asked meanwhile waits for it, and its
        time counts the wait."""
        self._prepare.emit(request)

    @Slot(object)
    def _build(self, req: AskRequest) -> None:
        t = time.perf_counter()
        try:
            self._pipeline_for(req)
        except Exception as exc:  # noqa: BLE001 - the first question builds it again and reports the error
            log.info("preparing the question path failed: %s", exc)
            self._key = None
            return
        self.prepared.emit(time.perf_counter() - t)

    def _pipeline_for(self, req: AskRequest) -> Any:
        from engine.session import Session

        settings = req.settings.with_overrides(home=str(req.home))
        if self._session is None or self._session.home != req.home:
            self.close()
            self._session = Session(settings, chat_loader=self.chat_loader, status=self.status.emit,
                                    note=self.status.emit)
        session = self._session
        session.chat_loader = self.chat_loader  # (tests swap the loader between questions)
        key = (settings.model_dump_json(), session.library.generation(), session.published_name(),
               session.reranker_stamp(settings), id(self.chat_loader))
        if self._key != key:
            # the library, its published indexes or the settings changed: reload (the indexes are only read; an
            # ingest publishes new ones); a chat model that cannot be loaded leaves the pipeline without one:
            # questions the statement facts answer still run; the others end with the loader's message (see _run)
            session.reconfigure(settings)
            session.pipeline()
            self._key = key
            freeze_heap()
        elif session.pipeline().no_chat_reason and session.find_chat_again():
            freeze_heap()  # the chat model was installed since: the path is built again with it
        return session.pipeline()

    @Slot(object)
    def _run(self, req: AskRequest) -> None:
        freeze_heap()  # before loading models too: their imports allocate enough to trigger a full collection
        try:
            if req.cancel.is_set():
                self.failed.emit("cancelled before the run started")
                return
            pipeline = self._pipeline_for(req)
            if req.cancel.is_set():
                self.failed.emit("cancelled before the run started")
                return
            self.status.emit("running…")
            run = None
            for item in pipeline.run_iter(req.question, cancel=req.cancel.is_set, since=req.asked_at):
                if isinstance(item, StageTrace):
                    self.stage.emit(item)
                else:
                    run = item
            if run.status == "failed" and pipeline.chat is None and pipeline.no_chat_reason:
                self.failed.emit(f"the chat model could not be loaded: {pipeline.no_chat_reason}")
            else:
                self.finished.emit(run)
        except ModelError as exc:
            self.failed.emit(f"the chat model could not be loaded: {exc}")
        except Exception as exc:
            if not isinstance(exc, EngineError):
                log.exception("ask failed")
            self._key = None
            self.failed.emit(readable_error(exc))

    @Slot()
    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = self._key = None


class AskThread:
    """The dedicated thread the :class:`AskWorker` lives in."""

    def __init__(self) -> None:
        self.thread = QThread()
        self.thread.setObjectName("filinglens-ask")
        self.worker = AskWorker()
        self.worker.moveToThread(self.thread)
        self.thread.start()

    def stop(self, timeout_ms: int = 30000) -> bool:
        """Finish the current run (callers set its cancel flag first) and end the thread."""
        if not self.thread.isRunning():
            return True
        self.thread.quit()
        ok = self.thread.wait(timeout_ms)
        if ok:
            self.worker.close()
        return ok


# -- evaluation ----------------------------------------------------------------------------------------

@dataclass
class EvalRequest:
    """One evaluation: a question file, the pipelines side by side, where results go (a re-run resumes there)."""

    questions: Path
    pipelines: tuple[str, ...]
    out: Path
    limit: int = 0


class RequestJob(Job):
    """A job over one request that loads the models itself (``chat_loader`` stands in for the chat model's
    loader: tests script the model)."""

    def __init__(self, settings: Settings, request: Any, chat_loader: Callable[[Settings], Any] | None = None) -> None:
        super().__init__()
        self.settings, self.request, self.chat_loader = settings, request, chat_loader


class EvalJob(RequestJob):
    """``engine.eval.runner.evaluate`` in the pool: progress per (question, pipeline); cancel between questions,
    keeping what finished (the same request resumes)."""

    name = "evaluation"

    def work(self) -> Any:
        from engine.session import Session

        r = self.request
        self._progress("loading models", 0, 0)
        with Session(self.settings, chat_loader=self.chat_loader) as session:
            return session.evaluate(r.questions, r.pipelines, r.out, limit=r.limit,
                                    progress=lambda done, total, p: self._progress(p, done, total),
                                    cancel=self.cancel_event.is_set)


@dataclass
class QueryGenRequest:
    """Generate a question set from the library's filings (engine.querygen)."""

    filings: str  # selection: doc names, globs or tickers; "" = every filing
    single: int
    multi: int
    seed: int
    out: Path


class QueryGenJob(RequestJob):
    """``QueryGenerator.run`` in the pool, with progress per item; cancel keeps what finished (the same request
    resumes from the progress log)."""

    name = "question generation"

    def work(self) -> Any:
        from engine.session import Session

        r = self.request
        self._progress("loading models", 0, 0)
        with Session(self.settings, chat_loader=self.chat_loader) as session:
            return session.generate_questions(r.filings, r.single, r.multi, r.seed, r.out, progress=self._progress,
                                              cancel=self.cancel_event.is_set)
