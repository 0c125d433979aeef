"""A library opened for work: the one object the CLI, the desktop app, eval, querygen and the benchmarks open.

A :class:`Session` owns the library (SQLite), the published indexes (opened once, read-only), the models and the
question path built from them, each loaded on first use: nothing loads until something needs it, and the chat
model is only *found* when the question path is built and loaded by its first call. No front end assembles models or indexes
itself, and no stage opens indexes: the session hands each stage what it uses.

Two callbacks tell the front end what happens: ``status`` (progress: "loading the embedder…") and ``note``
(what the user must know about the answers to come: the indexes lag behind the library; no chat model, so only
questions the statement facts answer can be answered).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Self

from engine.settings import Settings
from engine.store import Library
from engine.store.library import ANY_EVALUATION  # noqa: F401 (the app names "every evaluation's runs" by it)

if TYPE_CHECKING:
    from engine.doctor import DoctorReport
    from engine.eval.runner import EvalOutcome, Evaluator
    from engine.facts.search import FactSearch
    from engine.indexing import IndexStatus, OpenIndexes, Progress, SyncReport, VerifyResult
    from engine.ingest.cluster import VectorCache
    from engine.ingest.runner import IngestEvent, Refreshed
    from engine.models.base import ChatModel, CrossScorer, Embedder
    from engine.models.registry import ModelPack, ModelStatus
    from engine.pipeline import HirecPipeline, Models
    from engine.querygen import QueryGenerator
    from engine.querygen import Summary as QuestionSetSummary
    from engine.records import StoredRun
    from engine.retrieval.search import Searcher
    from engine.store.library import RunStore
    from engine.train import TrainReport

Say = Callable[[str], None]


class Session:
    """The library at ``settings.library_home()`` with what questions over it need, each loaded on first use.

    Args:
        settings: The settings everything is built with (:meth:`reconfigure` changes them).
        chat_loader: Loads the chat model (default: the model registry); tests plug in scripted models.
        status: Told what is being loaded, for progress displays.
        note: Told what the user must know about the answers to come (lagging indexes, no chat model).
    """

    def __init__(self, settings: Settings, *, chat_loader: Callable[[Settings], ChatModel] | None = None,
                 status: Say | None = None, note: Say | None = None) -> None:
        self.settings = settings
        self._library: Library | None = None
        self.chat_loader = chat_loader
        self.status, self.note = status, note  # (None: nobody is told)
        self._embedder: Embedder | None = None
        self._chat: ChatModel | None = None
        self._chat_error: str | None = None  # None: not looked for yet; "": found
        self._cross: CrossScorer | None = None
        self._cross_loaded = False
        self._models: Models | None = None
        self._indexes: OpenIndexes | None = None
        self._pipeline: HirecPipeline | None = None
        self.vectors_reused = 0

    @staticmethod
    def _say(to: Say | None, text: str) -> None:
        if to is not None:
            to(text)

    @property
    def home(self) -> Path:
        return Path(self.settings.library_home())

    @property
    def library(self) -> Library:
        """The library (SQLite), opened on first use: a session that only checks the installation or lists the
        model packs never opens it (``doctor`` must run on a library that cannot be opened)."""
        if self._library is None:
            self._library = Library(self.home)
        return self._library

    def reconfigure(self, settings: Settings) -> None:
        """Use ``settings`` from now on (the same library home): what was loaded with the old ones is dropped."""
        if settings.library_home() != self.home:
            raise ValueError(f"a session stays on its library ({self.home}); open another for "
                             f"{settings.library_home()}")
        self.settings = settings
        self._embedder = self._chat = self._cross = self._models = self._indexes = self._pipeline = None
        self._chat_error, self._cross_loaded = None, False

    def find_chat_again(self) -> bool:
        """Look for the chat model again when none was found (installed since): True when it now is, and the
        question path is then built again with it at next use."""
        if self._chat is not None or self._chat_error is None:
            return False
        self._chat_error = None
        if self.chat_model() is None:
            return False
        self._models = self._pipeline = None
        return True

    def reload_indexes(self) -> None:
        """Open the indexes again at next use (a builder published a new set); the models stay loaded."""
        self._indexes = self._pipeline = None

    # --- models and indexes, each loaded on first use -----------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The bi-encoder the settings name, loaded on first use (a question the facts answer never needs it)."""
        if self._embedder is None:
            from engine.models.registry import load_embedder

            self._say(self.status, "loading the embedder…")
            self._embedder = load_embedder(self.settings.models)
        return self._embedder

    def chat_model(self, *, required: bool = False) -> ChatModel | None:
        """The chat model: found (and checked) on first use, loaded by its first call. One that cannot be found
        is None, and the note says why; ``required`` raises :class:`~engine.errors.ModelError` instead."""
        from engine.errors import ModelError

        if self._chat_error is None:
            from engine.pipeline import find_chat_model

            try:
                self._chat = find_chat_model(self.settings, chat_loader=self.chat_loader, status=self.status)
                self._chat_error = ""
            except ModelError as exc:
                self._chat_error = str(exc)
                self._say(self.note, "no chat model, so only questions the statement facts answer can be "
                          f"answered: {exc}")
        if required and self._chat is None:
            raise ModelError(self._chat_error or "no chat model is loaded")
        return self._chat

    def models(self, *, chat: bool = True, chat_required: bool = False) -> Models:
        """The embedder, the chat model (:meth:`chat_model`) and the reranker the settings name.

        ``chat=False``: retrieval-only work, no chat model. ``chat_required``: a chat model that cannot be
        loaded raises :class:`~engine.errors.ModelError`; otherwise ``chat`` is None and the note says why.
        """
        from engine.pipeline import Models

        chat_model = self.chat_model(required=chat_required) if chat else None
        if self._models is None or self._models.chat is not chat_model:
            if not self._cross_loaded and self.settings.retrieval.reranker != "none":
                from engine.models.registry import load_cross_scorer

                self._say(self.status, f"loading the reranker ({self.settings.retrieval.reranker})…")
                self._cross = load_cross_scorer(self.settings, self.home)
            self._cross_loaded = True
            self._models = Models(self.embedder, chat_model, self._cross, (self._chat_error or "") if chat else "")
        return self._models

    @property
    def indexes(self) -> OpenIndexes:
        """The published indexes, read-only (never written: one that lags behind the library is used as it
        is, with a note)."""
        if self._indexes is None:
            from engine.indexing import open_indexes

            self._say(self.status, "loading the indexes…")
            self._indexes = open_indexes(self.library, self.settings, self.embedder)
            if self._indexes.status.behind:
                self._say(self.note, self._indexes.status.message())
        return self._indexes

    def table_titles(self, filing_id: int, tables: Sequence[tuple[int, int, str, str]]) -> list[tuple[str, str]]:
        """(statement it is listed as, printed heading) of each of a filing's stored tables, given as (page index,
        character its first row starts at, stored statement, stored title): a primary statement only when the
        heading is that statement's own (:func:`engine.facts.tables.table_titles`)."""
        from engine.facts.tables import table_titles

        return table_titles(self.library.page_texts(filing_id), tables)

    def label_lefts(self, filing_id: int, page_index: int, starts: Sequence[int | None]) -> list[float | None]:
        """The left edge (x, points) of the word printed at each character of ``starts`` in a filing's stored page
        text: how far each of a table's row labels is indented (None for an HTML filing, a moved file, a start
        without a word; :func:`engine.ingest.layout.label_lefts`)."""
        from engine.ingest.layout import label_lefts

        return label_lefts(self.library.filing(filing_id).path, page_index,
                           self.library.page_text(filing_id, page_index), starts)

    def search_facts(self, text: str, *, company: str | None = None, limit: int = 200) -> FactSearch:
        """The statement cells whose row (or its heading, or its table's title) holds every line-item word of
        ``text``, across all filings, best first; words naming a company ("accounts payable Corning") or
        ``company`` keep only its filings (:func:`engine.facts.search.search_facts`)."""
        from engine.facts.search import search_facts

        return search_facts(self.library, text, company=company, limit=limit)

    def index_status(self) -> IndexStatus:
        """The published set against the library, from manifests only (cheap: for status lines)."""
        from engine.indexing import index_status

        return index_status(self.library)

    def verify_indexes(self) -> VerifyResult:
        """Check the published indexes against the library (:func:`engine.indexing.verify_indexes`)."""
        from engine.indexing import verify_indexes

        return verify_indexes(self.library, self.settings, self.embedder)

    def published_name(self) -> str | None:
        """The name of the published index set (it changes when a builder publishes another)."""
        from engine.store.index_sets import read_current

        published = read_current(self.library.index_dir)
        return published.name if published else None

    # --- what is built from them ----------------------------------------------------------------------------

    def pipeline(self, *, chat: bool = True) -> HirecPipeline:
        """The HiREC question path, built once. Its retrieval (the embedder, the indexes, a reranker) is built
        by the first question that retrieves, inside that run, so a question the statement facts answer loads no
        model and opens no index, and the run's time includes what it had to load. A chat model that cannot be
        found is in the note and in each run that needs one, not raised. ``chat=False``: without a chat model
        (retrieval-only runs, benchmarks of the stages before the model)."""
        if self._pipeline is None:
            from engine.pipeline import HirecPipeline, RetrievalStages, retrieval_stages

            chat_model = self.chat_model() if chat else None

            def retrieval() -> RetrievalStages:
                return retrieval_stages(self.settings, self.library, self.models(chat=chat), self.indexes)

            self._pipeline = HirecPipeline(self.library, self.settings, retrieval, chat_model,
                                           no_chat_reason=(self._chat_error or "") if chat else "")
        return self._pipeline

    def searcher(self) -> Searcher:
        """Whole-library BM25, dense and fused search over the published indexes."""
        from engine.retrieval.search import Searcher

        return Searcher(self.library, self.settings, self.embedder, self.indexes)

    def write_model_cards(self, doc_names: Sequence[str] = (), cancel: Callable[[], bool] | None = None,
                          progress: Callable[[int, int], None] | None = None) -> tuple[int, int]:
        """The chat model's cards of the narrative passages of the filings named (all when none is), written
        ahead of the questions and kept (the rankers use them when ``rerank.model_cards`` is on); resumable.
        Returns (cards written, model calls).

        Raises:
            ModelError: no chat model can be loaded.
        """
        from engine.rerank.cards import CardMaker
        from engine.retrieval.hierarchical import filing_title

        chat = self.chat_model(required=True)
        assert chat is not None
        filings = [f for f in self.library.filings() if not doc_names or f.identity.doc_name in doc_names]
        titles = {f.id: filing_title(f) for f in filings}
        chunks = self.library.chunks_of_filings([f.id for f in filings])
        batch = CardMaker(self.library, self.settings.prompts).write_model_cards(chunks, titles, chat, cancel,
                                                                                 progress)
        return batch.made, len(batch.calls)

    def evaluator(self, pipelines: Sequence[str]) -> Evaluator:
        """Runs ``pipelines`` on question sets (a chat model only when one of them needs it)."""
        from engine.eval.runner import NEEDS_CHAT, Evaluator

        models = self.models(chat=any(p in NEEDS_CHAT for p in pipelines))
        return Evaluator(self.library, self.settings, models, self.indexes)

    def query_generator(self, threshold: int = 4) -> QueryGenerator:
        """Writes question sets from the library's filings (needs the chat model: raises without one)."""
        from engine.querygen import QueryGenerator

        models = self.models(chat_required=True)
        assert models.chat is not None
        return QueryGenerator(self.library, self.settings, models.chat, models.embedder, threshold=threshold)

    def sync_indexes(self, *, rebuild: bool = False, progress: Progress | None = None,
                     cancel: Callable[[], bool] | None = None, on_wait: Say | None = None,
                     vectors: VectorCache | None = None) -> SyncReport:
        """Build and publish the indexes (waiting for another builder first); the next use opens the new set.

        ``vectors``: what a Ray ingest's cluster embedded (used instead of embedding those texts again)."""
        from engine.indexing import sync_indexes

        embedder: Embedder = self.embedder
        if vectors is not None:
            from engine.ingest.cluster import CachedEmbedder

            embedder = CachedEmbedder(embedder, vectors)
        report = sync_indexes(self.library, self.settings, embedder, rebuild=rebuild, progress=progress,
                              cancel=cancel, on_wait=on_wait)
        self.vectors_reused = getattr(embedder, "hits", 0)  # texts whose cluster-made vector was used
        self.reload_indexes()
        return report

    def refresh_readings(self) -> Refreshed:
        """Read again what an older FilingLens read of the stored filings (an upgraded library;
        :func:`engine.ingest.refresh_readings`: page numbers, sections, statement facts, concepts, CIK and fiscal-year
        end), only for the filings that need it. An index build runs it first (``filinglens index build``, the
        Library's "Update index"), under the builder lock."""
        from engine.ingest import refresh_readings

        return refresh_readings(self.library, self.settings)

    def stale_readings(self) -> dict[str, int]:
        """What of the stored filings an older FilingLens read, and of how many (:func:`engine.ingest.stale_readings`):
        {} when every reading is current."""
        from engine.ingest import stale_readings

        return stale_readings(self.library)

    # --- the library's runs and its writers ------------------------------------------------------------------

    @property
    def runs(self) -> RunStore:
        """The library's stored runs (list, get, delete)."""
        from engine.store.library import RunStore

        return RunStore(self.library)

    def read_run(self, run_id: str) -> StoredRun:
        """A stored run with its typed traces (:func:`engine.trace.read_run`)."""
        from engine.trace import read_run

        return read_run(self.library, run_id)

    def builder_lock(self, what: str, *, on_wait: Say | None = None,
                     cancel: Callable[[], bool] | None = None) -> AbstractContextManager[None]:
        """The library's one-writer lock (:func:`engine.store.index_sets.builder_lock`), waiting while another
        ingest or index build holds it."""
        from engine.store.index_sets import builder_lock

        return builder_lock(self.home, what=what, on_wait=on_wait, cancel=cancel)

    def ingest(self, paths: Iterable[str | Path], *, prune: bool = True, cancel: Callable[[], bool] | None = None,
               vectors: VectorCache | None = None) -> Iterator[IngestEvent]:
        """Read files and folders into the library, one event per file (:func:`engine.ingest.ingest_iter`);
        the indexes are built after, by :meth:`sync_indexes`."""
        from engine.ingest import ingest_iter

        return ingest_iter(self.library, paths, self.settings, prune=prune, cancel=cancel, vectors=vectors)

    def cluster_vectors(self) -> VectorCache | None:
        """For an ingest on the Ray cluster the settings name (``ingest.ray``): the cluster is checked before
        anything is read (:func:`engine.ingest.cluster.preflight` raises when it does not answer) and the cache
        its readers fill with the vectors they embed, for :meth:`sync_indexes`; None without a cluster."""
        if not self.settings.ingest.ray:
            return None
        from engine.ingest.cluster import VectorCache, preflight

        preflight(self.settings.ingest.ray)
        return VectorCache()

    # --- evaluation, question sets, training, checks, exports -------------------------------------------------

    @staticmethod
    def eval_pipelines() -> tuple[str, ...]:
        """The pipelines :meth:`evaluate` knows, in the order reports list them."""
        from engine.eval.runner import PIPELINES

        return tuple(PIPELINES)

    @staticmethod
    def eval_pipeline_description(name: str) -> str:
        """One sentence saying what pipeline ``name`` measures (the Evaluate tab shows it)."""
        from engine.eval.runner import PIPELINE_DESCRIPTIONS

        return PIPELINE_DESCRIPTIONS.get(name, "")

    def evaluate(self, questions: Path, pipelines: Sequence[str], out: Path, *, limit: int = 0,
                 progress: Callable[[int, int, str], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> EvalOutcome:
        """Run ``pipelines`` on a question file (resuming from ``out``), then write the report and the plots."""
        from engine.eval.questions import load_questions
        from engine.eval.runner import evaluate

        names = [f.identity.doc_name for f in self.library.filings()]
        asked = load_questions(questions, doc_names=names)[: limit or None]
        return evaluate(self.evaluator(pipelines), asked, pipelines, out, questions.name, progress=progress,
                        cancel=cancel)

    def link_evaluation(self, results: Path) -> int:
        """File the runs an evaluation stored under it, from its results folder's ``results.jsonl``: runs of an
        evaluation made before runs named their evaluation leave "Your questions" in History. Idempotent and cheap
        (one file read, linked runs are not written again); a folder without results links nothing. Returns how
        many runs were filed."""
        from engine.eval.runner import link_results

        return link_results(self.library, results)

    def link_evaluations(self, folder: Path) -> int:
        """:meth:`link_evaluation` for each results folder directly inside ``folder`` (the Evaluate tab keeps one per
        question set under the library's ``evals``); a missing folder links nothing."""
        if not folder.is_dir():
            return 0
        return sum(self.link_evaluation(sub) for sub in sorted(folder.iterdir()) if (sub / "results.jsonl").is_file())

    @staticmethod
    def compare_evaluations(earlier: Path, later: Path) -> str:
        """Two results folders compared question by question (markdown)."""
        from engine.eval.compare import compare_runs

        return compare_runs(earlier, later)

    def generate_questions(self, selection: str, single: int, multi: int, seed: int, out: Path, *,
                           progress: Callable[[str, int, int], None] | None = None,
                           cancel: Callable[[], bool] | None = None) -> QuestionSetSummary:
        """Write a question set from the filings ``selection`` names (doc names, globs or tickers; "" = all).

        Raises:
            ConfigError: no filing matches the selection.
        """
        from engine.errors import ConfigError
        from engine.querygen import select_filings

        filings = select_filings(self.library, selection)
        if not filings:
            raise ConfigError(f"no filing matches {selection!r}")
        return self.query_generator().run(filings, single, multi, seed, out, progress=progress, cancel=cancel)

    @property
    def reranker_run_dir(self) -> Path:
        """Where a reranker trained on this library is written by default."""
        from engine.models.registry import default_reranker_run_dir

        return default_reranker_run_dir(self.home)

    def reranker_stamp(self, settings: Settings | None = None) -> float | None:
        """When the registered reranker last changed, if the settings (``settings``, else the session's) use it:
        a newly trained model must replace the loaded one; None otherwise."""
        if (settings or self.settings).retrieval.reranker != "trained":
            return None
        from engine.models.registry import reranker_registry_path

        try:
            return reranker_registry_path(self.home).stat().st_mtime
        except OSError:
            return None

    def train_reranker(self, out_dir: Path, *, pairs: int, epochs: int, device: str,
                       exclude_questions: Path | None = None, llm_share: float = 0.0,
                       progress: Callable[[int, int, float], None] | None = None,
                       mining_progress: Callable[[int, int], None] | None = None,
                       cancel: Callable[[], bool] | None = None) -> TrainReport:
        """Train a cross-encoder on pairs mined from the library (:func:`engine.train.train_reranker`), keeping
        the filings of ``exclude_questions`` (an evaluation question file) out; ``llm_share`` of the mined
        questions are reworded by the chat model."""
        from engine.train import excluded_docs_from_questions, train_reranker

        exclude = (excluded_docs_from_questions(exclude_questions, self.library) if exclude_questions
                   else frozenset())
        writer = self.models(chat_required=True).chat if llm_share > 0 else None
        return train_reranker(self.library, self.settings, out_dir, pairs=pairs, epochs=epochs, device=device,
                              exclude_docs=exclude, writer=writer, llm_share=llm_share, progress=progress,
                              cancel=cancel, mining_progress=mining_progress)

    def register_reranker(self, model_dir: Path) -> Path:
        """Make ``model_dir`` the library's trained reranker; returns the registry file written."""
        from engine.models.registry import register_reranker

        return register_reranker(self.home, model_dir)

    def model_statuses(self, *, verify: bool = False) -> list[ModelStatus]:
        """The model packs, installed in this library or not (hashes read again with ``verify``)."""
        from engine.models.registry import list_models

        return list_models(self.home, verify=verify)

    @staticmethod
    def model_pack(name: str) -> ModelPack | None:
        """The chat model pack called ``name`` (its size, description, parts), or None."""
        from engine.models.registry import MODEL_PACKS

        return MODEL_PACKS.get(name)

    def install_model(self, name: str, *, progress: Callable[[int, int], None] | None = None,
                      allow_unverified: bool = False) -> Path:
        """Assemble a model pack into this library's models folder, checked against its sha256."""
        from engine.models.registry import install_model

        return install_model(name, self.home, progress=progress, allow_unverified=allow_unverified)

    def doctor(self, *, verify_hashes: bool = False, repair: bool = False, say: Say | None = None) -> DoctorReport:
        """The installation and library checks (:func:`engine.doctor.run_doctor`)."""
        from engine.doctor import run_doctor

        return run_doctor(self.settings, verify_hashes=verify_hashes, repair=repair, say=say)

    def export(self, run_ids: Sequence[str], fmt: str, target: Path) -> list[Path]:
        """Export runs (json, csv, md, html) to a file or a folder (:func:`engine.export.write_export`)."""
        from engine.export import write_export

        return write_export(self.library, run_ids, fmt, target)

    # --- lifetime --------------------------------------------------------------------------------------------

    def close(self) -> None:
        self._models = self._indexes = self._pipeline = None
        if self._library is not None:
            self._library.close()
            self._library = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
