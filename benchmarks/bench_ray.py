"""Wall time of the Ray engine against the local chunked engine on one corpus and config; outputs must be identical.

Usage::

    python benchmarks/bench_ray.py [--n 100000] [--workers 2] [--method minhash]
        [--memory-limit 2GB] [--seed 0] [--keep-input] [--ray-first] [--json OUT]

Builds (or re-uses) an ``--n``-document JSONL corpus under /tmp (never in the repo) with
``bench_memory.build_corpus``: real news texts (Reuters-21578, BBC News, 20 Newsgroups from
``$NEARDUP_SHARED_DATA`` or ``../shared/data``), about half distinct originals and half lightly noised
copies (exact, character noise, truncation, prefix, mix; seeded). Then runs, in this process (in this
order, or the other with ``--ray-first``):

* ``run_chunked`` (local engine, ``--workers`` processes);
* ``run_ray`` on a local Ray cluster of ``--workers`` CPUs, started first (its start-up is timed apart);

with the same :class:`DedupConfig`, asserts that ``clusters.parquet`` and ``pairs.parquet`` are identical
(ids, clusters, representatives, pairs, scores to the bit) and prints seconds, documents per second
and the overhead ratio ray/local.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from bench_memory import build_corpus  # same directory: the script's folder is on sys.path

from neardup.config import DedupConfig
from neardup.config import EngineConfig, parse_size
from neardup.engine.local import run_chunked


def _tables(outdir: Path) -> tuple[object, object]:
    return pq.read_table(outdir / "clusters.parquet"), pq.read_table(outdir / "pairs.parquet")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="documents in the corpus")
    ap.add_argument("--workers", type=int, default=2, help="local engine processes = Ray CPUs")
    ap.add_argument("--method", default="minhash", choices=["minhash", "ngram", "simhash"])
    ap.add_argument("--memory-limit", default="2GB")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-input", action="store_true", help="keep the corpus in /tmp for the next run")
    ap.add_argument("--ray-first", action="store_true", help="run the Ray engine before the local one")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    try:
        from neardup.engine.ray import ray_session, run_ray
        import ray  # noqa: F401
    except ImportError:
        print("needs Ray: pip install 'neardup[ray]'", file=sys.stderr)
        raise SystemExit(1)

    base = Path(tempfile.gettempdir()) / "neardup-bench-ray"
    base.mkdir(exist_ok=True)
    corpus = base / f"corpus-{args.n}-{args.seed}.jsonl"
    if not corpus.exists():
        t0 = time.perf_counter()
        tmp = corpus.with_suffix(".tmp")
        kinds = build_corpus(args.n, args.seed, tmp)
        tmp.replace(corpus)
        print(f"corpus: {args.n} docs {kinds} -> {corpus} ({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    size_mb = corpus.stat().st_size / 1e6

    cfg = DedupConfig(method=args.method)
    engine = EngineConfig(memory_limit=parse_size(args.memory_limit), workers=args.workers, progress=False)
    out = Path(tempfile.mkdtemp(prefix="run-", dir=base))
    try:
        def go_local() -> tuple[dict, float]:
            t0 = time.perf_counter()
            summary = run_chunked(corpus, out / "local", cfg, engine)
            return summary, time.perf_counter() - t0

        def go_ray() -> tuple[dict, float, float]:
            t0 = time.perf_counter()
            with ray_session(engine):
                t_start = time.perf_counter() - t0
                t0 = time.perf_counter()
                summary = run_ray(corpus, out / "ray", cfg, engine)
                return summary, time.perf_counter() - t0, t_start

        if args.ray_first:
            ray_summary, t_ray, t_start = go_ray()
            local, t_local = go_local()
        else:
            local, t_local = go_local()
            ray_summary, t_ray, t_start = go_ray()

        a, b = _tables(out / "local"), _tables(out / "ray")
        identical = a[0].equals(b[0]) and a[1].equals(b[1])
        assert identical, "ray and local outputs differ"
        n = local["n_docs"]
        result = {
            "n_docs": n, "corpus_mb": round(size_mb, 1), "method": args.method, "workers": args.workers,
            "n_pairs": local["n_pairs"], "n_candidates": local["n_candidates"],
            "n_duplicates": local["n_duplicates"], "identical_outputs": identical,
            "local_seconds": round(t_local, 2), "local_docs_per_second": round(n / t_local, 1),
            "ray_seconds": round(t_ray, 2), "ray_docs_per_second": round(n / t_ray, 1),
            "ray_cluster_start_seconds": round(t_start, 2),
            "overhead_ray_over_local": round(t_ray / t_local, 2),
            "overhead_with_cluster_start": round((t_ray + t_start) / t_local, 2),
            "local_timings": local["timings"], "ray_timings": ray_summary["timings"],
            "ray_info": ray_summary["engine"]["ray"],
        }
    finally:
        shutil.rmtree(out, ignore_errors=True)
        if not args.keep_input:
            corpus.unlink(missing_ok=True)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
