"""Published index sets and the builder lock: how the derived indexes live on disk so that a reader never sees a
half-written one and only one process builds at a time.

Layout of a library folder::

    builder.lock            an OS file lock (flock) held by the one builder at work; freed when its holder dies
    builder.json            who holds it (pid, host, what, since), for "waiting for ..." messages; advisory only
    index/current.json      the commit point: names the published set (replaced atomically, last)
    index/g00000042-1a2b3c4d/
        set.json            the library generation and filings (id -> stamp) the set was built from, and the
                            size and sha256 of every file in the folder
        lexical.manifest.json, bm25.g42/            BM25 over chunks
        filing-summaries.hnsw (+ .manifest.json)    HNSW over filing summaries: the base graph, hard-linked from the
        filing-summaries.delta.hnsw                 set before while unchanged, and a delta of what was added since
        chunk-vectors[.delta].hnsw (+ .manifest.json)  HNSW over chunks (optional; may lag, see its manifest)
    index/.build-<uuid>/    a build in progress, or what a killed builder left (the next builder deletes it)
    index/.resume/          chunk vectors a build embedded before it was killed (the next build starts from them)

A builder writes a whole new set into its own ``.build-*`` folder (hard-linking the files of the published set that
did not change; they are never written again, so a link is as good as a copy), fsyncs it, renames it to its ``g*`` name and
only then replaces ``current.json``. A published folder is never written again. The set published before stays
on disk until the next publish, so a reader that read ``current.json`` just before a publish still finds the files
it names; a reader slower than two publishes sees a file vanish, reads ``current.json`` again and retries.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import Cancelled, IndexDamagedError
from engine.files import write_atomic

log = logging.getLogger(__name__)

CURRENT = "current.json"
SET_MANIFEST = "set.json"
LOCK_NAME = "builder.lock"
OWNER_NAME = "builder.json"
BUILD_PREFIX = ".build-"
RESUME_DIR = ".resume"
# Files of the layout before index sets (one folder, a manifest per index, rewritten in place): read when no
# set was published yet, removed by the first builder that publishes one.
LEGACY_MANIFESTS = ("lexical.manifest.json", "filing-summaries.manifest.json")


@dataclass(frozen=True)
class PublishedSet:
    """A complete index set on disk, as its manifest describes it.

    Attributes:
        folder: The set's folder (the index folder itself for a legacy, pre-set index).
        generation: The library generation the set was built from.
        filings: Filing id -> stamp (:meth:`Library.filing_stamps`) of every filing the set holds; None for a
            legacy index, which did not record them.
        files: Relative path -> (size in bytes, sha256) of every file of the set; empty for a legacy index.
    """

    folder: Path
    generation: int
    filings: dict[int, str] | None
    files: dict[str, tuple[int, str]]

    @property
    def legacy(self) -> bool:
        return self.filings is None

    @property
    def name(self) -> str:
        return self.folder.name

    def missing_or_torn(self, *, hashes: bool = False) -> list[str]:
        """Files the manifest lists that are missing or of another size (or content, with ``hashes``)."""
        problems: list[str] = []
        for rel, (size, digest) in sorted(self.files.items()):
            path = self.folder / rel
            try:
                found = path.stat().st_size
            except FileNotFoundError:
                problems.append(f"{path} is missing")
                continue
            if found != size:
                problems.append(f"{path} holds {found:,} bytes, its manifest {size:,} (torn or replaced)")
            elif hashes and _sha256(path) != digest:
                problems.append(f"{path} does not match the sha256 its manifest records (damaged)")
        return problems


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def read_current(index_dir: Path) -> PublishedSet | None:
    """The published set ``current.json`` names (or a legacy index), None when nothing was published.

    Raises:
        IndexDamagedError: ``current.json`` names a folder whose manifest is missing or unreadable (a reader
            that lost a race with two publishes reads ``current.json`` again and retries).
    """
    try:
        current = json.loads((index_dir / CURRENT).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _legacy(index_dir)
    except (OSError, json.JSONDecodeError) as exc:  # replaced atomically, so never torn unless damaged
        raise IndexDamagedError(f"{index_dir / CURRENT} is unreadable ({exc}): run `filinglens index rebuild`") from exc
    folder = index_dir / str(current["dir"])
    try:
        manifest = json.loads((folder / SET_MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise IndexDamagedError(f"the published index {folder} is gone or has no {SET_MANIFEST}: "
                                "run `filinglens index rebuild`") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise IndexDamagedError(f"{folder / SET_MANIFEST} is unreadable ({exc}): run `filinglens index rebuild`") from exc
    return PublishedSet(folder, int(manifest["generation"]), {int(k): str(v) for k, v in manifest["filings"].items()},
                        {k: (int(v[0]), str(v[1])) for k, v in manifest["files"].items()})


def _legacy(index_dir: Path) -> PublishedSet | None:
    gens: list[int] = []
    for name in LEGACY_MANIFESTS:
        try:
            gens.append(int(json.loads((index_dir / name).read_text(encoding="utf-8"))["generation"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return PublishedSet(index_dir, min(gens), None, {})


def new_build_dir(index_dir: Path) -> Path:
    """A fresh folder, private to this build, inside the index folder (so publishing is a rename)."""
    index_dir.mkdir(parents=True, exist_ok=True)
    path = index_dir / f"{BUILD_PREFIX}{uuid.uuid4().hex}"
    path.mkdir()
    return path


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":  # pragma: no cover - Windows cannot open a folder for fsync
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _inventory(folder: Path, carried: PublishedSet | None = None) -> dict[str, tuple[int, str]]:
    """Every file under ``folder`` (size, sha256), each fsynced: the set is on disk before it is named.

    ``carried``: the set this one was built from; a file hard-linked from it (the same file, never written since it
    was published) keeps the size and sha256 its manifest records instead of being read again."""
    files: dict[str, tuple[int, str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if (carried is not None and (known := carried.files.get(rel)) is not None
                and _same_file(path, carried.folder / rel) and path.stat().st_size == known[0]):
            files[rel] = known
            continue
        with path.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
            os.fsync(fh.fileno())
        files[path.relative_to(folder).as_posix()] = (path.stat().st_size, digest)
    for sub in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        _fsync_dir(sub)
    return files


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def publish(index_dir: Path, build_dir: Path, generation: int, filings: dict[int, str],
            carried: PublishedSet | None = None) -> PublishedSet:
    """Make ``build_dir`` the published set: manifest, fsync, rename to its final name, then ``current.json``.

    ``carried``: the published set the build started from (its hard-linked files are not hashed again).
    A crash before the last step leaves the previous set published (and a folder the next builder removes).
    """
    files = _inventory(build_dir, carried)
    write_atomic(build_dir / SET_MANIFEST, json.dumps({
        "generation": generation, "filings": {str(k): v for k, v in sorted(filings.items())},
        "files": {k: list(v) for k, v in files.items()}, "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }, indent=1).encode())
    final = index_dir / f"g{generation:08d}-{uuid.uuid4().hex[:8]}"
    os.replace(build_dir, final)
    _fsync_dir(index_dir)
    write_atomic(index_dir / CURRENT, json.dumps({"dir": final.name, "generation": generation}).encode())
    _fsync_dir(index_dir)
    return PublishedSet(final, generation, dict(filings), files)


def remove_leftovers(index_dir: Path, keep: set[str]) -> list[str]:
    """Delete what no reader can be using: build folders (this builder holds the lock, so their builders are
    dead), set folders other than ``keep``, and the legacy layout once a set is published. Returns the names."""
    removed: list[str] = []
    if not index_dir.is_dir():
        return removed
    published = (index_dir / CURRENT).exists()
    for path in index_dir.iterdir():
        name = path.name
        stale = (name.startswith(BUILD_PREFIX) or (name.startswith("g") and path.is_dir() and name not in keep)
                 or (published and _is_legacy_file(name)))
        if not stale:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(name)
    if removed:
        log.info("removed from %s: %s", index_dir, ", ".join(sorted(removed)))
    return removed


def _is_legacy_file(name: str) -> bool:
    return (name.endswith((".hnsw", ".manifest.json")) or name.startswith(("bm25.g", ".bm25.g", f".{CURRENT}."))
            or (name.startswith(".") and name.endswith(".tmp")) or ".manifest.json." in name)


def leftover_builds(index_dir: Path) -> list[Path]:
    return sorted(p for p in index_dir.glob(f"{BUILD_PREFIX}*") if p.is_dir()) if index_dir.is_dir() else []


# -- the builder lock -----------------------------------------------------------------------------------------

def lock_path(home: Path) -> Path:
    return Path(home) / LOCK_NAME


def builder_owner(home: Path) -> dict[str, Any] | None:
    """Who holds the builder lock, from ``builder.json``, when that process is alive on this machine (a file left
    by a killed builder names a dead process: None). Advisory: it never decides who may build."""
    try:
        owner = json.loads((Path(home) / OWNER_NAME).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if owner.get("host") == socket.gethostname():
        import psutil

        try:
            alive = psutil.Process(int(owner["pid"])).create_time() <= float(owner.get("started", 0)) + 1
        except (psutil.Error, OSError, KeyError, TypeError, ValueError):
            alive = False
        if not alive:
            return None
    return owner


def describe_owner(owner: dict[str, Any] | None) -> str:
    if owner is None:
        return "another ingest or index build"
    since = str(owner.get("since", ""))[11:19]
    return f"{owner.get('what', 'an index build')} (pid {owner.get('pid')}, since {since} UTC)"


@contextmanager
def builder_lock(home: Path, *, what: str, on_wait: Callable[[str], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> Iterator[None]:
    """Hold the library's builder lock for the block; wait (saying so through ``on_wait``) while another process
    or thread holds it. Reentrant in one thread: an ingest holding it may call a function that takes it again.

    The lock is ``flock`` on ``builder.lock`` (via filelock): the kernel frees it when its holder dies, SIGKILL
    included, so a killed builder never leaves the library locked.

    Raises:
        Cancelled: ``cancel`` returned true while waiting.
    """
    from filelock import FileLock, Timeout

    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path(home)), is_singleton=True)
    outermost = not lock.is_locked
    try:
        lock.acquire(blocking=False)
    except Timeout:
        message = f"waiting for {describe_owner(builder_owner(home))} to finish with the library at {home}…"
        (on_wait or log.warning)(message)
        try:
            lock.acquire(timeout=-1, poll_interval=0.2, cancel_check=cancel)
        except Timeout as exc:
            raise Cancelled(f"cancelled while {message[0].lower()}{message[1:]}") from exc
    try:
        if outermost:
            _write_owner(home, what)
        yield
    finally:
        if outermost:
            (home / OWNER_NAME).unlink(missing_ok=True)
        lock.release()


def _write_owner(home: Path, what: str) -> None:
    import psutil

    pid = os.getpid()
    owner = {"pid": pid, "host": socket.gethostname(), "what": what, "started": psutil.Process(pid).create_time(),
             "since": datetime.now(UTC).isoformat(timespec="seconds"), "at": time.time()}
    try:
        write_atomic(home / OWNER_NAME, json.dumps(owner).encode())
    except OSError as exc:  # advisory only
        log.debug("cannot write %s: %s", home / OWNER_NAME, exc)


def lock_is_free(home: Path) -> bool:
    """True when no process holds the builder lock (takes and frees it at once: for ``index verify`` and tests;
    readers never call it)."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_path(home)), is_singleton=True)
    if lock.is_locked:
        return False
    try:
        lock.acquire(blocking=False)
    except Timeout:
        return False
    lock.release()
    return True
