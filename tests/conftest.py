from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# remembered model hashes (engine.models.hashing) go to a folder of this test session, not the user's cache
os.environ.setdefault("FILINGLENS_CACHE_DIR", tempfile.mkdtemp(prefix="filinglens-cache-"))
# Models a developer installed for their own libraries stay out of the tests' libraries.
os.environ.setdefault("FILINGLENS_MODELS_DIR", tempfile.mkdtemp(prefix="filinglens-models-"))


def needs_shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the shared evaluation kit is not beside this checkout)")
    return path


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small fictional corpus (8 filings, every 4th written as SEC-style HTML)."""
    from engine.demo_corpus import generate_corpus

    out = tmp_path_factory.mktemp("demo")
    generate_corpus(out, 8, seed=7, html_every=4)
    return out


@pytest.fixture(scope="session")
def demo_truth(demo_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (demo_dir / "truth.jsonl").open()]


@pytest.fixture(scope="session")
def demo_documents(demo_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (demo_dir / "documents.jsonl").open()]


@pytest.fixture(scope="session")
def embedder():
    from engine.models.registry import load_embedder
    from engine.settings import ModelSettings

    return load_embedder(ModelSettings())


@pytest.fixture()
def settings(tmp_path: Path):
    from engine.settings import Settings

    return Settings(home=tmp_path / "lib")


@pytest.fixture(scope="session")
def ingested_demo(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path, embedder):
    """The demo corpus ingested and indexed once for read-only tests."""
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.settings import Settings
    from engine.store import Library

    home = tmp_path_factory.mktemp("lib")
    settings = Settings(home=home)
    library = Library(home)
    report = ingest(library, [demo_dir], settings)
    sync_indexes(library, settings, embedder)
    return library, settings, report


@pytest.fixture()
def library_copy(ingested_demo, tmp_path: Path):
    """A private copy of the ingested demo library, for tests that alter it (facts, chunks, cards)."""
    import shutil

    from engine.store import Library

    library, settings, _ = ingested_demo
    library.conn.execute("PRAGMA wal_checkpoint(FULL)")
    shutil.copytree(library.home, tmp_path / "lib")
    return Library(tmp_path / "lib"), type(settings)(home=tmp_path / "lib")
