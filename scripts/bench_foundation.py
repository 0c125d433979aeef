"""Benchmark ingest + indexing + search. Prints figures; asserts nothing.

    python scripts/bench_foundation.py --corpus ../shared/corpus/filings --home /tmp/bench-shared
    python scripts/bench_foundation.py --generate 10000 --home /tmp/bench-10k
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.eval.metrics import percentile  # noqa: E402
from engine.indexing import sync_indexes  # noqa: E402
from engine.ingest import ingest  # noqa: E402
from engine.models.registry import load_embedder  # noqa: E402
from engine.retrieval.search import MetadataFilter  # noqa: E402
from engine.session import Session  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.store import Library  # noqa: E402


class RssSampler(threading.Thread):
    """Samples the RSS of this process plus its children (the parser workers) every 0.5 s."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        while not self.stop.is_set():
            rss = me.memory_info().rss
            for child in me.children(recursive=True):
                try:
                    rss += child.memory_info().rss
                except psutil.Error:
                    pass
            self.samples.append((time.perf_counter(), rss))
            time.sleep(0.5)


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--generate", type=int, help="generate N fictional filings first")
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=Path, help="FinanceBench-style JSONL for query texts")
    ap.add_argument("--chunk-vector-sample", type=int, default=512)
    args = ap.parse_args()
    shutil.rmtree(args.home, ignore_errors=True)
    corpus = args.corpus
    if args.generate:
        from engine.demo_corpus import generate_corpus

        corpus = args.home.parent / f"{args.home.name}-corpus"
        if not (corpus / "documents.jsonl").exists():
            t = time.perf_counter()
            generate_corpus(corpus, args.generate, seed=0)
            print(f"generated {args.generate} filings in {time.perf_counter() - t:.1f}s")
    settings = Settings(home=args.home)
    lib = Library(args.home)
    embedder = load_embedder(settings.models)  # loaded before timing: model load is not ingest work
    sampler = RssSampler()
    sampler.start()
    t0 = time.perf_counter()
    report = ingest(lib, [corpus], settings)
    t1 = time.perf_counter()
    sync = sync_indexes(lib, settings, embedder)
    t2 = time.perf_counter()
    sampler.stop.set()
    sampler.join()
    pages = lib.count("pages")
    rss = [r for _, r in sampler.samples]
    quarters = [max(rss[: max(1, len(rss) * q // 4)]) for q in (1, 2, 3, 4)]
    print(f"== ingest {corpus}")
    print(f"files: {report.summary()}")
    print(f"filings {lib.count('filings')}, pages {pages}, chunks {lib.count('chunks')}")
    print(f"parse+store wall {t1 - t0:.1f}s ({pages / (t1 - t0):.0f} pages/s); BM25 + summary vectors {t2 - t1:.1f}s "
          f"(lexical rebuilt={sync.lexical_rebuilt}, summaries +{sync.summaries_added}); total {t2 - t0:.1f}s")
    print(f"DB {du(args.home) - du(lib.index_dir)} bytes ({(du(args.home) - du(lib.index_dir)) / 2**20:.0f} MiB), "
          f"indexes {du(lib.index_dir) / 2**20:.1f} MiB")
    print("peak RSS (process + workers) by quarter of the run: " + ", ".join(f"{q / 2**20:.0f} MiB" for q in quarters))
    failed = [e for e in report.events if e.status == "failed"]
    for e in failed[:10]:
        print(f"  failed: {e.path}: {e.reason}")

    # Chunk-vector throughput on a sample (full chunk embedding is optional and slow on CPU).
    texts = [t for batch in lib.iter_chunk_texts(batch=args.chunk_vector_sample) for _, t in batch][: args.chunk_vector_sample]
    t = time.perf_counter()
    embedder.embed_batch(texts)
    dt = time.perf_counter() - t
    print(f"chunk vectors: {len(texts) / dt:.1f} chunks/s on {os.cpu_count()} CPU(s) "
          f"(full corpus would take {lib.count('chunks') / (len(texts) / dt) / 60:.1f} min)")

    # Query latency.
    queries = []
    if args.queries and args.queries.exists():
        queries = [json.loads(line)["question"] for line in args.queries.open()][:100]
    if not queries:
        queries = [f"What was {m} in fiscal {y}?" for m in ("total revenue", "net income", "capital expenditures",
                   "total assets", "operating income", "long-term debt", "cash and cash equivalents", "diluted EPS")
                   for y in (2019, 2020, 2021, 2022, 2023)]
    searcher = Session(settings).searcher()
    searcher.search(queries[0], 10)
    lat: dict[str, list[float]] = {"bm25": [], "embed": [], "dense": [], "total": []}
    for q in queries:
        res = searcher.search(q, 10)
        lat["bm25"].append(res.timings_ms["bm25"])
        lat["embed"].append(res.timings_ms["embed"])
        lat["dense"].append(res.timings_ms["embed"] + res.timings_ms["dense"])
        lat["total"].append(res.timings_ms["total"])
    filtered = [searcher.search(q, 10, MetadataFilter(form="10-K", period="2022")).timings_ms["total"] for q in queries]
    print(f"== search latency over {len(queries)} queries (ms, p50 / p95)")
    for name, values in [("bm25", lat["bm25"]), ("dense (query embed + HNSW)", lat["dense"]),
                         ("fused (bm25 + dense + RRF + fetch)", lat["total"]), ("fused with form/period filter", filtered)]:
        print(f"  {name:38s} {percentile(values, 50):7.1f} / {percentile(values, 95):7.1f}")


if __name__ == "__main__":
    main()
