"""Bi-encoder speed: chunk vectors per second through the product's embedder, on each device asked for.

Prints figures; asserts nothing. Run it alone: other work on the machine changes the figures.

Texts are a library's chunks as the index embeds them (context line + text), the first ``--n`` in id order::

    python scripts/bench_embedder.py --home /tmp/fl-shared --n 4000 [--device cpu cuda] [--threads 2 16]
    python scripts/bench_embedder.py --home /tmp/fl-shared --n 4000 --export chunks.jsonl.gz   # texts to carry
    python scripts/bench_embedder.py --texts chunks.jsonl.gz --model FOLDER --device cuda cpu --threads 2 16

``--model`` is a sentence-transformers folder (default: the bundled MiniLM). A folder whose safetensors are
float16 (a copy small enough to carry) is upcast to float32 first, so every device starts from the same
float32 weights. On CUDA the embedder runs as the product runs it (float32), and then once more in float16
to show what halving would buy; the float16 vectors are compared with the float32 ones (cosine).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_reranker import fp32_base  # this folder is on sys.path when run as a script

from engine.models.embedder import DEFAULT_EMBEDDER, SentenceTransformerEmbedder


def library_texts(home: Path, n: int) -> list[str]:
    from engine.store import Library

    texts: list[str] = []
    with Library(home) as lib:
        for batch in lib.iter_chunk_texts(batch=min(n, 5000)):
            texts += [t for _, t in batch]
            if len(texts) >= n:
                break
    return texts[:n]


def read_texts(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh if line.strip()]


def timed(embedder: SentenceTransformerEmbedder, texts: list[str]) -> tuple[float, np.ndarray]:
    embedder.embed_batch(texts[: embedder.batch_size])  # warm-up (CUDA kernels, allocator, tokenizer)
    if embedder.device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    start = time.perf_counter()
    vectors = embedder.embed_batch(texts)
    return time.perf_counter() - start, vectors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, help="library whose chunks are embedded")
    ap.add_argument("--texts", type=Path, help="texts exported by --export (instead of --home)")
    ap.add_argument("--n", type=int, default=4000, help="chunks taken from --home")
    ap.add_argument("--export", type=Path, help="write the texts to this .jsonl.gz and stop")
    ap.add_argument("--model", default=DEFAULT_EMBEDDER, help="bundled package name or sentence-transformers folder")
    ap.add_argument("--device", nargs="+", default=["cpu"])
    ap.add_argument("--threads", type=int, nargs="+", default=[0], help="torch CPU threads (0: all cores)")
    ap.add_argument("--batch-size", type=int, nargs="+", default=[64])
    args = ap.parse_args()

    if args.texts:
        texts = read_texts(args.texts)
    elif args.home:
        texts = library_texts(args.home, args.n)
    else:
        sys.exit("pass --home or --texts")
    if args.export:
        with gzip.open(args.export, "wt", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"text": t}) + "\n" for t in texts)
        print(f"{len(texts)} texts written to {args.export}")
        return
    chars = sum(len(t) for t in texts) / max(1, len(texts))
    print(f"{len(texts)} chunk texts, {chars:.0f} characters on average; {os.cpu_count()} CPU(s)", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-embedder-") as tmp:
        model = str(fp32_base(Path(args.model), Path(tmp))) if Path(args.model).is_dir() else args.model
        reference: np.ndarray | None = None
        for device in args.device:
            for threads in (args.threads if device == "cpu" else [0]):
                for batch in args.batch_size:
                    embedder = SentenceTransformerEmbedder(model, device=device, batch_size=batch,
                                                           threads=threads or None)
                    where = device
                    if device == "cpu":
                        import torch

                        where = f"cpu, {torch.get_num_threads()} thread(s)"
                    for dtype in ("float32", "float16") if device.startswith("cuda") else ("float32",):
                        if dtype == "float16":
                            embedder._model.half()  # what halving would buy (the product embeds in float32)
                        seconds, vectors = timed(embedder, texts)
                        line = (f"embed  {where:<18} {dtype:<8} batch {batch:<4} {seconds:7.2f} s  "
                                f"{len(texts) / seconds:8.1f} chunks/s")
                        if reference is None:
                            reference = vectors
                        else:
                            cos = np.sum(reference * vectors, axis=1)
                            line += f"  cosine to the first run: min {cos.min():.5f}, mean {cos.mean():.6f}"
                        print(line, flush=True)
                    del embedder


if __name__ == "__main__":
    main()
