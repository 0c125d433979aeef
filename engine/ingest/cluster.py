"""Read files on a Ray cluster (``filinglens ingest --ray``): the same reading as the local process pool, spread
over a cluster's CPU workers, with the filings' vectors embedded by actors of their own (on GPUs when the cluster
has them), and stored by one writer (the driver) as before.

The pipeline is a Ray Data streaming dataset::

    files to read (driver: listed, hashed, skipped when stored)
      → read: parse, identity, chunks, statement facts, cover summary   (actors, one CPU each; each keeps one
                                                                       pebble process, so a file past
                                                                       ``ingest.file_timeout_s`` is abandoned
                                                                       and a crash in a native reader is that
                                                                       file's failure, as in the local pool)
      → embed: the summary document, and every chunk when chunk vectors are configured   (actors; a GPU each
                                                                       when the cluster has GPUs)
      → driver: one SQLite transaction per filing (:func:`engine.ingest.runner.ingest_iter`)

Ray retries the tasks of a worker that dies (its actor is restarted); the driver stores each sha256 once, so a
retried file is never stored twice. A killed driver leaves every filing stored or absent, and a re-run skips what
is stored. The vectors come back to the driver in a :class:`VectorCache`, which the index build reads instead of
embedding the same texts again (:class:`CachedEmbedder`).

Ray is an optional extra (``filinglens[cluster]``); without it, ``--ray`` says how to install it.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing as mp
import pickle
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import EngineError
from engine.records import ParsedFiling, indexed_text
from engine.settings import Settings

log = logging.getLogger(__name__)

INSTALL_HINT = ("Ray is not installed: `pip install 'filinglens[cluster]'` in FilingLens's environment "
                "(`bash scripts/setup.sh` installs it), on this machine and on every machine of the cluster")
LOCAL = "local"  # settings.ingest.ray: a Ray started for this ingest, on this machine, and stopped after it


class RayUnavailableError(EngineError):
    """``--ray`` was asked for and Ray cannot be imported."""


def import_ray() -> Any:
    """The ``ray`` module with Ray Data, or :class:`RayUnavailableError` saying how to install it."""
    try:
        import ray
        import ray.data  # the pipeline needs Ray Data, a part the bare `ray` wheel may lack
    except ImportError as exc:
        raise RayUnavailableError(f"{INSTALL_HINT} ({exc})") from exc
    return ray


def preflight(address: str) -> None:
    """Before anything is read: Ray is installed, and a cluster named by address answers (a TCP connection to its
    head within 5 s; Ray itself would retry for minutes). ``local`` and ``auto`` need no probe."""
    import_ray()
    if address in ("", LOCAL, "auto") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise EngineError(f"not a Ray cluster address: {address!r} (give HOST:PORT, 'auto', or nothing for a "
                          "Ray started here)")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise EngineError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc} (is `ray start "
                          "--head` running there, and is the port open?)") from exc


def text_key(text: str) -> str:
    """The key of a text's vector in a :class:`VectorCache`."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class VectorCache:
    """Vectors the pipeline embedded, by text (:func:`text_key`), for the embedder that made them. Held in the
    driver's memory until the index build: a summary vector per filing is 1.5 KB (220 MB for LOFin's 145,897
    filings); chunk vectors are that per chunk, so an ingest with ``retrieval.chunk_vectors`` needs memory for
    every chunk it adds."""

    fingerprint: str = ""
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        for text, vector in zip(texts, vectors):
            self.vectors[text_key(text)] = np.asarray(vector, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.vectors)


class CachedEmbedder:
    """An :class:`engine.models.base.Embedder` that takes a text's vector from a :class:`VectorCache` when the
    cache was made by the same weights, and embeds the rest with ``base``."""

    def __init__(self, base: Any, cache: VectorCache) -> None:
        self.base, self.cache = base, cache
        self.model_id, self.dims = base.model_id, base.dims
        self.hits = 0

    @property
    def fingerprint(self) -> str:
        return str(self.base.fingerprint)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        usable = self.cache.fingerprint == self.fingerprint
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        missing: list[int] = []
        for i, text in enumerate(texts):
            vector = self.cache.vectors.get(text_key(text)) if usable else None
            if vector is None:
                missing.append(i)
            else:
                out[i] = vector
        self.hits += len(texts) - len(missing)
        if missing:
            out[missing] = self.base.embed_batch([texts[i] for i in missing])
        return out


@dataclass(frozen=True)
class ClusterPlan:
    """What the ingest asks of the cluster (from settings and what the cluster has)."""

    readers: int
    embedders: int
    gpus_per_embedder: float
    cpus_per_embedder: float
    chunk_vectors: bool


def plan(resources: dict[str, float], settings: Settings, embed: bool) -> ClusterPlan:
    """Readers: ``ingest.ray_workers``, or one per cluster CPU less what the embedders take. Embedders: one per
    GPU; on a cluster without GPUs, one, which takes a CPU of its own only when it embeds every chunk (a summary
    per filing is a few milliseconds of a reader's CPU)."""
    cpus = max(1, int(resources.get("CPU", 1)))
    gpus = int(resources.get("GPU", 0))
    chunk_vectors = settings.retrieval.chunk_vectors
    embedders = (gpus or 1) if embed else 0
    cpus_per_embedder = 0.0 if gpus or not chunk_vectors else 1.0
    readers = settings.ingest.ray_workers or max(1, cpus - int(embedders * cpus_per_embedder))
    return ClusterPlan(readers, embedders, 1.0 if gpus else 0.0, cpus_per_embedder, chunk_vectors)


class _Reader:
    """A read actor: keeps one pebble process that reads one file at a time under the file time limit."""

    def __init__(self, settings_json: str, timeout: float) -> None:
        from pebble import ProcessPool

        self.settings_json, self.timeout = settings_json, timeout
        from engine.ingest.parse import warm_worker

        self.pool = ProcessPool(max_workers=1, context=mp.get_context("spawn"), initializer=warm_worker)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list[Any]]:
        from engine.indexing import summary_document
        from engine.ingest.parse import parse_job, pool_outcome

        out: dict[str, list[Any]] = {k: [] for k in ("path", "sha", "error", "parsed", "summary_doc", "chunk_texts")}
        for path, sha, lofin in zip(batch["path"], batch["sha"], batch["lofin"]):
            future = self.pool.schedule(parse_job, args=(str(path), str(sha), self.settings_json, str(lofin) or None),
                                        timeout=self.timeout)
            outcome = pool_outcome(future, self.timeout)
            out["path"].append(str(path))
            out["sha"].append(str(sha))
            if isinstance(outcome, str):
                out["error"].append(outcome)
                out["parsed"].append(b"")
                out["summary_doc"].append("")
                out["chunk_texts"].append([])
            else:
                out["error"].append("")
                out["parsed"].append(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
                out["summary_doc"].append(summary_document(outcome.summary, outcome.lofin_summary))
                out["chunk_texts"].append([indexed_text(c.context, c.text) for c in outcome.chunks])
        return out

    def __del__(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.stop()


class _Embedder:
    """An embed actor: the bi-encoder, loaded once, on the actor's GPU when it was given one."""

    def __init__(self, models_json: str, chunk_vectors: bool) -> None:
        from engine.models.registry import load_embedder
        from engine.settings import ModelSettings

        self.embedder = load_embedder(ModelSettings.model_validate_json(models_json), device="auto")
        self.chunk_vectors = chunk_vectors

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        docs = [str(d) for d in batch["summary_doc"]]
        ok = [i for i, e in enumerate(batch["error"]) if not e]
        summary = np.zeros((len(docs), self.embedder.dims), dtype=np.float32)
        if ok:
            summary[ok] = self.embedder.embed_batch([docs[i] for i in ok])
        chunk_vectors: list[bytes] = []
        for texts in batch["chunk_texts"]:
            texts = [str(t) for t in texts] if self.chunk_vectors else []
            chunk_vectors.append(self.embedder.embed_batch(texts).tobytes() if texts else b"")
        return {**batch, "summary_vec": [v.tobytes() for v in summary], "chunk_vecs": chunk_vectors,
                "fingerprint": [self.embedder.fingerprint] * len(docs)}


def _bound(cls: type, *args: Any) -> type:
    """``cls`` with its constructor arguments bound (pickled with the class, by value)."""

    class Bound(cls):
        def __init__(self) -> None:
            super().__init__(*args)

    Bound.__name__ = Bound.__qualname__ = cls.__name__.lstrip("_")
    return Bound


@contextmanager
def connected(address: str, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray, connected to ``address`` (``"local"``: a Ray started here and stopped on exit, with ``num_cpus``).
    An already initialised Ray (a caller's own session) is used as it is and left running."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    preflight(address)
    local = address in ("", LOCAL)
    try:
        ray.init(address=None if local else address, num_cpus=num_cpus if local else None, include_dashboard=False,
                 log_to_driver=False, logging_level=logging.WARNING, configure_logging=False)
    except ConnectionError as exc:
        raise EngineError(f"cannot reach the Ray cluster at {address!r}: {exc}") from exc
    try:
        yield ray
    finally:
        ray.shutdown()


def read_on_ray(ray: Any, todo: list[tuple[Path, str]], settings: Settings, lofin: dict[str, str],
                vectors: VectorCache | None, cancel: Callable[[], bool] | None
                ) -> Iterator[tuple[Path, str, ParsedFiling | str]]:
    """Read ``todo`` (path, sha256) on the cluster; yields (path, sha256, parsed filing or why it failed) as the
    filings come back, in no fixed order. Vectors go into ``vectors`` (none are made when it is None)."""
    if not todo:
        return
    import ray.data
    from ray.data import ActorPoolStrategy

    logging.getLogger("ray.data").setLevel(logging.WARNING)
    cluster = plan(ray.cluster_resources(), settings, vectors is not None)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.verbose_stats_logs = False
    items = [{"path": str(f), "sha": sha, "lofin": lofin.get(f.stem, "")} for f, sha in todo]
    ds = ray.data.from_items(items, override_num_blocks=min(len(items), 8 * cluster.readers))
    # Ray Data restarts a dead actor and retries its batch without limit (its actor pools' max_restarts and
    # max_task_retries are -1; tests/engine/test_cluster.py kills a reader). The actors' arguments are bound into
    # their classes: constructor arguments live in the object store, where a restarted actor may not find them.
    ds = ds.map_batches(_bound(_Reader, settings.model_dump_json(), settings.ingest.file_timeout_s), batch_size=1,
                        compute=ActorPoolStrategy(size=cluster.readers), num_cpus=1)
    if vectors is not None:
        ds = ds.map_batches(_bound(_Embedder, settings.models.model_dump_json(), cluster.chunk_vectors),
                            batch_size=settings.models.embed_batch, compute=ActorPoolStrategy(size=cluster.embedders),
                            num_gpus=cluster.gpus_per_embedder, num_cpus=cluster.cpus_per_embedder)
    log.info("reading %d file(s) on Ray: %d reader(s), %d embedder(s)%s", len(todo), cluster.readers,
             cluster.embedders, " on GPUs" if cluster.gpus_per_embedder else "")
    rows = ds.iter_rows()
    seen: set[str] = set()
    try:
        for row in rows:
            path, sha = Path(row["path"]), str(row["sha"])
            if sha in seen:  # a retried read that came back twice: stored once
                continue
            seen.add(sha)
            if row["error"]:
                yield path, sha, str(row["error"])
                continue
            parsed: ParsedFiling = pickle.loads(row["parsed"])
            if vectors is not None:
                _keep_vectors(vectors, row, parsed)
            yield path, sha, parsed
            if cancel and cancel():
                return
    finally:
        close = getattr(rows, "close", None)
        if close:
            close()


def _keep_vectors(vectors: VectorCache, row: dict[str, Any], parsed: ParsedFiling) -> None:
    fingerprint = str(row["fingerprint"])
    if vectors.fingerprint != fingerprint:
        vectors.fingerprint, vectors.vectors = fingerprint, {}
    summary = np.frombuffer(row["summary_vec"], dtype=np.float32)
    vectors.put([str(row["summary_doc"])], summary[None, :])
    if row["chunk_vecs"]:
        chunk = np.frombuffer(row["chunk_vecs"], dtype=np.float32).reshape(len(parsed.chunks), -1)
        vectors.put([indexed_text(c.context, c.text) for c in parsed.chunks], chunk)
