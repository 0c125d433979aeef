"""What the CLI's commands share: the settings the options select, the session they open on the library, the
builder lock, building the indexes with progress bars, and the notes they print on stderr."""

from __future__ import annotations

import argparse
import sys
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from engine.settings import Settings, load_preset

if TYPE_CHECKING:
    from engine.indexing import SyncReport
    from engine.ingest.cluster import VectorCache
    from engine.session import Session
    from engine.store import Library


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The settings the global options (--home, --preset) and a command's model options select."""
    home = args.home or Settings().library_home()
    settings = load_preset(args.preset, home)  # built-in, or one saved in this library (GUI "Save as preset")
    overrides: dict = {}
    if args.home:
        overrides["home"] = str(args.home)
    if getattr(args, "workers", None):
        overrides.setdefault("ingest", {})["workers"] = args.workers
    if getattr(args, "chunk_vectors", False):
        overrides.setdefault("retrieval", {})["chunk_vectors"] = True
    if getattr(args, "ray", None) is not None:
        overrides.setdefault("ingest", {})["ray"] = args.ray
    if getattr(args, "ray_workers", None):
        overrides.setdefault("ingest", {})["ray_workers"] = args.ray_workers
    if getattr(args, "model", None):
        overrides.setdefault("models", {})["chat_model"] = args.model
    if getattr(args, "reranker", None):
        reranker_overrides(args.reranker, overrides)
    if getattr(args, "model_intent", False):
        overrides.setdefault("rerank", {})["model_intent"] = True
    if getattr(args, "rerank_seed", None) is not None:
        overrides.setdefault("rerank", {})["seed"] = args.rerank_seed
    if getattr(args, "gpu_layers", None) is not None:
        overrides.setdefault("models", {})["gpu_layers"] = args.gpu_layers
    return settings.with_overrides(**overrides) if overrides else settings


_CARD_MODES = ("cards", "tournament", "tournament-s2", "multiagent")


def reranker_overrides(name: str, overrides: dict) -> None:
    """``--reranker``: a card-based mode (engine.rerank) becomes HiREC's passage stage; ``cross-encoder`` is the
    trained cross-encoder inside the fused ranking; ``none`` is the fused ranking alone; anything else names a
    cross-encoder as ``retrieval.reranker`` does (trained, untrained, a folder)."""
    if name in _CARD_MODES:
        overrides.setdefault("rerank", {})["mode"] = name
        return
    overrides.setdefault("rerank", {})["mode"] = "off"
    overrides.setdefault("retrieval", {})["reranker"] = "trained" if name == "cross-encoder" else name


def open_session(settings: Settings) -> Session:
    """The library in the settings' home, opened as a :class:`engine.session.Session`: its indexes and models
    load when a command first needs them, and what the user must know about the answers (indexes behind the
    library, no chat model) is a note on stderr."""
    from engine.session import Session

    return Session(settings, note=lambda message: say(f"note: {message}"))


def say(message: str) -> None:
    """A note on stderr, at once (progress bars share the stream)."""
    print(message, file=sys.stderr, flush=True)


def build_lock(session: Session, what: str) -> AbstractContextManager[None]:
    """The library's builder lock (:meth:`engine.session.Session.builder_lock`), saying so while waiting."""
    return session.builder_lock(what, on_wait=say)


def sync(session: Session, *, rebuild: bool = False, vectors: VectorCache | None = None) -> SyncReport:
    """Build and publish the indexes (waiting for another builder first, if one is at work), with progress bars
    and a line on stderr saying what was published."""
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage) or bars.setdefault(stage, tqdm(total=total, desc=stage, unit="item", leave=False))
        bar.n = done
        bar.refresh()

    report = session.sync_indexes(rebuild=rebuild, progress=progress, on_wait=say, vectors=vectors)
    for bar in bars.values():
        bar.close()
    if report.published:
        bm25 = "not built (too many chunks)" if report.lexical_skipped else "rebuilt" if report.lexical_rebuilt else "current"
        print(f"indexes: whole-library BM25 {bm25}, summary vectors +{report.summaries_added}"
              f"/-{report.summaries_removed}, chunk vectors +{report.chunk_vectors_added}/-{report.chunk_vectors_removed}"
              f"{'' if report.chunk_vectors_complete else ' (incomplete)'}; published {report.published} "
              f"(generation {report.generation})", file=sys.stderr)
    return report


def refresh_facts(library: Library, settings: Settings) -> None:
    """Read the facts of filings stored before this fact reader (an upgraded library), from their files."""
    from engine import ingest

    done, problems = ingest.refresh_facts(library, settings)
    if done:
        print(f"facts: re-read the statement facts of {done} filing(s) with the current reader", file=sys.stderr)
    for line in problems:
        print(f"facts: {line}", file=sys.stderr)
