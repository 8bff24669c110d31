"""The neural path at scale: RETSim embeddings of N documents on CPU, exact (FAISS flat) and approximate
(USearch HNSW) neighbour search, seconds per stage, and what HNSW loses against exact search.

Run by hand:  python benchmarks/bench_neural_scale.py [--n 100000] [--k 20] [--threshold 0.9]
                  [--corpus-dir DIR] [--json OUT]

Corpus: the same synthetic news corpus as ``bench_scale.py`` (3-8 real sentences of the shared corpora
per document, 15% noisy copies of earlier documents), built in a temporary folder or re-used from
``--corpus-dir``. Stages, each timed on its own in this process:

* embed: neardup's RETSim encoder (ONNX model shipped in ``unisim``; all cores), 256-d float32;
* flat: ``knn_pairs(index="flat")``: every document's k nearest neighbours by exact inner product
  (FAISS ``IndexFlatIP``), pairs with cosine >= threshold;
* hnsw: ``knn_pairs(index="hnsw")``: the same through a USearch HNSW index (build included);
* recall: Recall@10 of HNSW against exact search on 2,000 sampled queries (``search_recall``), and the
  fraction of the flat method's pairs that the HNSW method also finds (pair recall at the threshold);
* cluster: connected components of each method's pairs.

Peak RSS of this process is printed (the encoder and both indexes live here).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_scale  # noqa: E402  (the corpus builder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=20, help="neighbours per document")
    ap.add_argument("--threshold", type=float, default=0.9, help="cosine for a candidate pair")
    ap.add_argument("--corpus-dir", type=Path, help="keep the built corpus here and re-use it")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from neardup.candidates.vectors import knn_pairs, search_recall
    from neardup.cluster import connected_components
    from neardup.io.read import read_corpus
    from neardup.represent.retsim import RETSimEncoder

    with tempfile.TemporaryDirectory(prefix="neardup-neural-") as tmp:
        folder = args.corpus_dir or Path(tmp)
        path = folder / f"corpus-{args.n}.jsonl"
        if not path.exists():
            pool = bench_scale.sentences()
            if not pool:
                raise SystemExit(f"shared data not found under {bench_scale.DATA}")
            folder.mkdir(parents=True, exist_ok=True)
            bench_scale.build(path, args.n, pool)
        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        corpus = read_corpus(path)
        seconds["read"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        encoder = RETSimEncoder(allow_empty=True)
        emb = encoder.encode(corpus.texts, progress=True)
        seconds["embed"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        fl, fr, _ = knn_pairs(emb, k=args.k, threshold=args.threshold, index="flat")
        seconds["flat"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        hl, hr, _ = knn_pairs(emb, k=args.k, threshold=args.threshold, index="hnsw")
        seconds["hnsw"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        recall10 = search_recall(emb, k=10)
        n = len(corpus)
        flat_codes = fl.astype(np.int64) * n + fr
        hnsw_codes = hl.astype(np.int64) * n + hr
        pair_recall = float(np.isin(flat_codes, hnsw_codes).mean()) if flat_codes.size else 1.0
        seconds["recall"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        flat_labels = connected_components(n, fl, fr)
        hnsw_labels = connected_components(n, hl, hr)
        seconds["cluster"] = time.perf_counter() - t0

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    dups = {name: int(n - np.unique(lab).size) for name, lab in (("flat", flat_labels), ("hnsw", hnsw_labels))}
    print(f"{n:,} documents, {emb.shape[1]}-d RETSim embeddings, k={args.k}, cosine >= {args.threshold}")
    for stage, s in seconds.items():
        rate = f"  ({n / s:,.0f} docs/s)" if stage in ("embed", "flat", "hnsw") and s > 0 else ""
        print(f"  {stage:<8} {s:8.1f} s{rate}")
    print(f"  pairs: flat {fl.size:,}, hnsw {hl.size:,}; HNSW finds {pair_recall:.4f} of the flat pairs; "
          f"Recall@10 of HNSW vs exact {recall10:.4f}")
    print(f"  duplicates (documents - clusters): flat {dups['flat']:,}, hnsw {dups['hnsw']:,}; "
          f"peak RSS {peak_mb:,.0f} MiB")
    if args.json:
        args.json.write_text(json.dumps({"n": n, "k": args.k, "threshold": args.threshold, "seconds": seconds,
                                         "pairs_flat": int(fl.size), "pairs_hnsw": int(hl.size),
                                         "pair_recall": pair_recall, "recall_at_10": recall10,
                                         "duplicates": dups, "peak_rss_mib": peak_mb}, indent=2))


if __name__ == "__main__":
    main()
