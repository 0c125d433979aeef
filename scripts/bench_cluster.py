"""Ingest throughput: this machine's process pool against Ray with 1, 2, … read workers. Prints figures; asserts
nothing. Each mode reads the same files into a fresh library (reading and storing; the index build is the same
for every mode and is not timed). Run it alone: other work on the machine changes the figures.

    python scripts/bench_cluster.py --corpus ../shared/corpus/filings --limit 40 --ray-workers 1 2
    python scripts/bench_cluster.py --corpus ../shared/corpus/filings --ray ADDRESS --ray-workers 1 2 4 8 16
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ingest import discover, ingest  # noqa: E402
from engine.ingest.cluster import VectorCache, connected  # noqa: E402
from engine.settings import Settings  # noqa: E402
from engine.store import Library  # noqa: E402


def run(files: list[Path], settings: Settings, vectors: VectorCache | None) -> tuple[float, int, int]:
    home = settings.library_home()
    shutil.rmtree(home, ignore_errors=True)
    with Library(home) as library:
        t0 = time.perf_counter()
        report = ingest(library, files, settings, vectors=vectors)
        seconds = time.perf_counter() - t0
        pages = library.count("pages")
    if report.count("failed"):
        print(f"  ({report.count('failed')} failed)")
    return seconds, report.count("added"), pages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--limit", type=int, help="the first N files of the sorted listing")
    ap.add_argument("--workers", type=int, default=2, help="processes of the local pool")
    ap.add_argument("--ray", default="local", help="a cluster address, or 'local' (a Ray started here)")
    ap.add_argument("--ray-workers", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--cpus", type=int, help="CPUs of the local Ray (default: the most read workers asked for)")
    ap.add_argument("--home", type=Path, default=Path(tempfile.gettempdir()) / "bench-cluster")
    args = ap.parse_args()

    files = discover([args.corpus])[0][: args.limit]
    size = sum(f.stat().st_size for f in files) / 2**20
    print(f"{len(files)} files, {size:.0f} MB from {args.corpus}")
    base = Settings(home=args.home / "lib")

    seconds, added, pages = run(files, base.with_overrides(ingest={"workers": args.workers}), None)
    print(f"local pool, {args.workers} process(es): {seconds:.1f} s, {added / seconds:.3f} filings/s, "
          f"{pages / seconds:.1f} pages/s ({added} filings, {pages} pages)")
    local = seconds
    cpus = args.cpus or max(args.ray_workers)
    with connected(args.ray, cpus) as ray:
        print(f"Ray at {args.ray}: {ray.cluster_resources().get('CPU', 0):g} CPUs, "
              f"{ray.cluster_resources().get('GPU', 0):g} GPUs")
        for n in args.ray_workers:
            settings = base.with_overrides(ingest={"ray": args.ray, "ray_workers": n})
            vectors = VectorCache()
            seconds, added, pages = run(files, settings, vectors)
            print(f"Ray, {n} read worker(s): {seconds:.1f} s, {added / seconds:.3f} filings/s, "
                  f"{pages / seconds:.1f} pages/s; {len(vectors)} vectors embedded; "
                  f"{local / seconds:.2f}x the local pool")


if __name__ == "__main__":
    main()
