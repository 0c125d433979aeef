"""Cross-encoder inference throughput on real (question, passage) pairs. Prints figures; asserts nothing.

    python scripts/bench_reranker.py --home /tmp/fl-shared [--device cpu|cuda] [--pairs 480]

Pairs come from the library's mined training pairs (``<home>/models/reranker-trained/pairs.jsonl``) when
present, else from the first chunks of the library with a fixed question. Scores the registered trained
reranker (or ``--folder``) after one warm-up batch, and reports pairs/s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.models.cross import SentenceTransformerCrossScorer  # noqa: E402
from engine.store import Library  # noqa: E402
from engine.models.registry import load_registered_reranker  # noqa: E402


def sample_pairs(home: Path, n: int) -> list[tuple[str, str]]:
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--folder", type=Path, help="a CrossEncoder folder (default: the registered trained reranker)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--pairs", type=int, default=480)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    scorer = (SentenceTransformerCrossScorer(args.folder, device=args.device, batch_size=args.batch_size)
              if args.folder else load_registered_reranker(args.home, args.device, batch_size=args.batch_size))
    if scorer is None:
        sys.exit("no trained reranker registered in this library: run `filinglens train-reranker` or pass --folder")
    pairs = sample_pairs(args.home, args.pairs)
    scorer.score_pairs(pairs[: args.batch_size])  # warm-up (CUDA kernels, allocator)
    start = time.perf_counter()
    scorer.score_pairs(pairs)
    elapsed = time.perf_counter() - start
    print(f"device {scorer.device}  pairs {len(pairs)}  batch {args.batch_size}  "
          f"{elapsed:.2f} s  {len(pairs) / elapsed:.1f} pairs/s  ({1000 * elapsed / len(pairs):.1f} ms/pair)")


if __name__ == "__main__":
    main()
