"""Compare BM25 implementations on a library's chunks: bm25s (chosen), SQLite FTS5, rank-bm25.

    python scripts/bench_lexical.py --home /tmp/fl-shared --queries ../shared/eval/financebench_dev.jsonl

rank-bm25 is not a dependency: `pip install rank-bm25==0.2.2` to include it.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.eval.metrics import percentile  # noqa: E402
from engine.indexing import lexical_index  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.store import Library  # noqa: E402
from engine.store.bm25 import LexicalIndex  # noqa: E402


def timed(fn, queries):  # noqa: ANN001, ANN201
    out = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t) * 1e3)
    return percentile(out, 50), percentile(out, 95)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--rank-bm25-queries", type=int, default=10)
    args = ap.parse_args()
    settings = Settings(home=args.home)
    lib = Library(args.home)
    queries = [json.loads(line)["question"] for line in args.queries.open()][:100]
    texts = [t for batch in lib.iter_chunk_texts() for _, t in batch]
    print(f"{len(texts)} chunks, {len(queries)} queries (ms per query, p50 / p95)")

    lex = LexicalIndex(Path(tempfile.mkdtemp()), lexical_index(lib, settings).identity)  # never touch the library's index
    t = time.perf_counter()
    lex.build(lib)
    print(f"bm25s     build {time.perf_counter() - t:6.1f}s   query {'%.1f / %.1f' % timed(lambda q: lex.search(q, 10), queries)}")

    fts = sqlite3.connect(":memory:")
    t = time.perf_counter()
    fts.execute("CREATE VIRTUAL TABLE c USING fts5(text, tokenize='porter unicode61')")
    fts.executemany("INSERT INTO c(text) VALUES (?)", ((x,) for x in texts))
    build = time.perf_counter() - t

    def fts_query(q: str) -> list:
        terms = " OR ".join(f'"{w}"' for w in q.replace('"', " ").split() if w.isalnum())
        return fts.execute("SELECT rowid FROM c WHERE c MATCH ? ORDER BY rank LIMIT 10", (terms,)).fetchall()

    print(f"FTS5      build {build:6.1f}s   query {'%.1f / %.1f' % timed(fts_query, queries)}")
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        print("rank-bm25 not installed: skipped")
        return
    t = time.perf_counter()
    rb = BM25Okapi([x.lower().split() for x in texts])
    build = time.perf_counter() - t
    p50, p95 = timed(lambda q: rb.get_top_n(q.lower().split(), texts, n=10), queries[: args.rank_bm25_queries])
    print(f"rank-bm25 build {build:6.1f}s   query {p50:.1f} / {p95:.1f} (first {args.rank_bm25_queries} queries)")


if __name__ == "__main__":
    main()
