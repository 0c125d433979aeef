"""Cross-encoder speed: inference throughput, and training throughput through the real trainer.

Prints figures; asserts nothing.

Inference on a trained reranker (the product's scorer, fp16 on CUDA)::

    python scripts/bench_reranker.py --home /tmp/fl-shared [--device cpu|cuda] [--pairs 480] [--batch-size 32]

Pairs come from the library's mined training pairs (``<home>/models/reranker-trained/pairs.jsonl``) when
present, else from the first chunks of the library with a fixed question. Scores the registered trained
reranker (or ``--folder``) after one warm-up batch, and reports pairs/s.

Training (``engine.train.train_reranker`` with already-mined examples, so no library is needed)::

    python scripts/bench_reranker.py --train pairs.jsonl[.gz] --base FOLDER --device cuda \\
        [--steps 40] [--train-batch 16] [--max-length 256] [--max-eval 300] \\
        [--pairs 2000] [--batch-size 32 128] [--infer-device cuda cpu]

``--steps 0`` (the default) trains one whole epoch: the run completes, saves the model and evaluates the
held-out examples (MRR, hit@1); ``--steps N`` stops the run after N optimizer steps through the
trainer's ``cancel`` hook (its seconds per epoch are then extrapolated). A ``--base`` folder whose
safetensors are float16 (a copy small enough to carry) is upcast to float32 into a temporary folder
first, so training keeps float32 master weights like a run from the original base model. Inference
then scores ``--pairs`` pairs (the held-out examples' pairs first, then training pairs) with the
trained model (the base model when the run was stopped early) through the product's scorer, on each
``--infer-device`` and at each ``--batch-size``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.models.cross import SentenceTransformerCrossScorer
from engine.train.mining import HELDOUT, TRAIN, MinedExample, read_examples


def sample_pairs(home: Path, n: int) -> list[tuple[str, str]]:
    from engine.store import Library

    mined = home / "models" / "reranker-trained" / "pairs.jsonl"
    pairs: list[tuple[str, str]] = []
    if mined.exists():
        for line in mined.open(encoding="utf-8"):
            row = json.loads(line)
            for passage in [row["positive"], *row["negatives"]]:
                pairs.append((row["query"], passage["text"]))
            if len(pairs) >= n:
                return pairs[:n]
    with Library(home) as lib:
        for batch in lib.iter_chunk_texts(batch=n):
            pairs += [("What was total revenue in fiscal 2022?", text) for _, text in batch]
            break
    return pairs[:n]


def load_examples(path: Path) -> list[MinedExample]:
    """Mined examples from the trainer's ``pairs.jsonl`` format, optionally gzipped."""
    if path.suffix != ".gz":
        return read_examples(path)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [MinedExample.from_dict(json.loads(line)) for line in fh if line.strip()]


def fp32_base(folder: Path, tmp: Path) -> Path:
    """``folder`` itself, or a copy under ``tmp`` with its float16 safetensors upcast to float32."""
    import torch
    from safetensors.torch import load_file, save_file

    weights = sorted(folder.rglob("*.safetensors"))
    tensors = {w: load_file(str(w)) for w in weights}
    if not any(t.dtype == torch.float16 for ts in tensors.values() for t in ts.values()):
        return folder
    out = tmp / folder.name
    shutil.copytree(folder, out, ignore=shutil.ignore_patterns("*.safetensors"))
    for w, ts in tensors.items():
        upcast = {k: t.float() if t.dtype == torch.float16 else t for k, t in ts.items()}
        save_file(upcast, str(out / w.relative_to(folder)), metadata={"format": "pt"})
    print(f"base {folder}: float16 weights upcast to float32 in {out}")
    return out


def flat_pairs(examples: Sequence[MinedExample]) -> list[tuple[str, str]]:
    return [(e.query, p.text) for e in examples for p in (e.positive, *e.negatives)]


def bench_inference(folder: Path, device: str, batch: int, pairs: list[tuple[str, str]]) -> None:
    scorer = SentenceTransformerCrossScorer(folder, device=device, batch_size=batch)
    scorer.score_pairs(pairs[:batch])  # warm-up (CUDA kernels, allocator)
    start = time.perf_counter()
    scorer.score_pairs(pairs)
    elapsed = time.perf_counter() - start
    print(f"infer  device {scorer.device}  pairs {len(pairs)}  batch {batch}  {elapsed:.2f} s  "
          f"{len(pairs) / elapsed:.1f} pairs/s  ({1000 * elapsed / len(pairs):.2f} ms/pair)", flush=True)
    del scorer


def run_training(args: argparse.Namespace) -> None:
    import torch

    from engine.train import train_reranker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    examples = load_examples(args.train)
    train = [e for e in examples if e.split == TRAIN]
    heldout = [e for e in examples if e.split == HELDOUT]
    n_train_pairs = len(flat_pairs(train))
    per_epoch = math.ceil(n_train_pairs / args.train_batch)
    steps = per_epoch if args.steps <= 0 else min(args.steps, per_epoch)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    print(f"torch {torch.__version__}  cuda {torch.version.cuda}  gpu {gpu}  threads {torch.get_num_threads()}")
    print(f"examples {len(examples)} (train {len(train)}, held-out {len(heldout)})  train pairs {n_train_pairs}  "
          f"steps/epoch {per_epoch}", flush=True)

    stamps: list[float] = []

    def progress(step: int, total: int, eta: float) -> None:
        stamps.append(time.perf_counter())
        if step % 50 == 0:
            print(f"  step {step}/{total}  eta {eta:.0f} s", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-reranker-") as tmp_name:
        tmp = Path(tmp_name)
        base = fp32_base(args.base.resolve(), tmp)
        start = time.perf_counter()
        report = train_reranker(None, None, tmp / "run", pairs=examples, epochs=1, device=args.device,
                                max_length=args.max_length, batch_size=args.train_batch,
                                max_eval=args.max_eval, base_model=str(base), progress=progress,
                                cancel=lambda: len(stamps) >= steps, resume=False,
                                checkpoint_every=per_epoch + 1)
        wall = time.perf_counter() - start
        done = report.steps_done
        print(f"train  device {report.device}  steps {done}/{report.total_steps}  batch {args.train_batch}  "
              f"max_length {args.max_length}  completed {report.completed}  call wall {wall:.1f} s")
        if report.train_pairs_per_s and report.seconds_per_epoch:
            print(f"train  trainer timing: {report.train_pairs_per_s:.2f} pairs/s  "
                  f"{report.seconds_per_epoch:.1f} s/epoch ({report.train_pairs} pairs)")
        warm = max(1, min(args.warmup_steps, done - 1))
        if done > warm:
            # Steady state: wall time between the progress calls that close step ``warm`` and the last step.
            pairs = min(done * args.train_batch, n_train_pairs) - warm * args.train_batch
            rate = pairs / (stamps[done - 1] - stamps[warm - 1])
            print(f"train  steady (steps {warm + 1}-{done}): {rate:.2f} pairs/s  "
                  f"{n_train_pairs / rate:.1f} s/epoch extrapolated")
        b = report.before
        print(f"held-out before: hit@1 {b.hit_at_1:.3f}  MRR {b.mrr:.3f}  ({b.examples} examples)")
        if report.after is not None:
            a = report.after
            print(f"held-out after:  hit@1 {a.hit_at_1:.3f}  MRR {a.mrr:.3f}  by kind {a.by_kind}  "
                  f"(trainer's scoring, batch {2 * args.train_batch}, fp32 weights"
                  f"{' + fp16 autocast' if report.device == 'cuda' else ''}: "
                  f"{report.infer_pairs_per_s:.1f} pairs/s)")
        folder = report.model_dir or base
        del report
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        pool = flat_pairs(heldout) + flat_pairs(train)
        pairs_list = [pool[i % len(pool)] for i in range(args.pairs)]
        print(f"inference on {'the trained model' if folder != base else 'the base model (run stopped early)'}",
              flush=True)
        for device in args.infer_device or [args.device]:
            for batch in args.batch_size:
                bench_inference(folder, device, batch, pairs_list)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, help="library folder (inference mode)")
    ap.add_argument("--folder", type=Path, help="a CrossEncoder folder (default: the registered trained reranker)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--pairs", type=int, default=480, help="pairs scored by the inference benchmark")
    ap.add_argument("--batch-size", type=int, nargs="+", default=[32], help="inference batch size(s)")
    ap.add_argument("--train", type=Path, help="mined examples (pairs.jsonl, or .jsonl.gz): benchmark training")
    ap.add_argument("--base", type=Path, help="base model folder for --train (float16 weights are upcast)")
    ap.add_argument("--steps", type=int, default=0, help="optimizer steps (0: one whole epoch)")
    ap.add_argument("--train-batch", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--max-eval", type=int, default=300, help="held-out examples evaluated before/after")
    ap.add_argument("--warmup-steps", type=int, default=5, help="steps left out of the steady-state rate")
    ap.add_argument("--infer-device", nargs="+", help="devices for the inference part of --train "
                    "(default: --device)")
    args = ap.parse_args()
    if args.train:
        if args.base is None:
            sys.exit("--train needs --base (a sentence-transformers model folder)")
        run_training(args)
        return
    if args.home is None:
        sys.exit("pass --home (inference on a library's reranker) or --train (training benchmark)")
    from engine.models.registry import load_registered_reranker

    for batch in args.batch_size:
        scorer = (SentenceTransformerCrossScorer(args.folder, device=args.device, batch_size=batch)
                  if args.folder else load_registered_reranker(args.home, args.device, batch_size=batch))
        if scorer is None:
            sys.exit("no trained reranker registered in this library: run `filinglens train-reranker` "
                     "or pass --folder")
        pairs = sample_pairs(args.home, args.pairs)
        scorer.score_pairs(pairs[:batch])  # warm-up (CUDA kernels, allocator)
        start = time.perf_counter()
        scorer.score_pairs(pairs)
        elapsed = time.perf_counter() - start
        print(f"device {scorer.device}  pairs {len(pairs)}  batch {batch}  "
              f"{elapsed:.2f} s  {len(pairs) / elapsed:.1f} pairs/s  ({1000 * elapsed / len(pairs):.1f} ms/pair)")


if __name__ == "__main__":
    main()
