"""Throughput and parity of neardup's RETSimEncoder against unisim's own TextSim, on real texts.

Run by hand from the repo root:

    .venv/bin/python benchmarks/bench_retsim.py [--n 1000] [--data PATH] [--batch-size 2]
        [--threads N] [--intra-op-threads K] [--quantize] [--no-dedup] [--rounds 4]
        [--config bs=16,intra=2 --config quantize=1 ...]   # extra variants of ours, same run

Reads ../shared/data/bbc_news/docs.jsonl, ../shared/data/reuters_days/docs.jsonl and
../shared/data/reuters21578/docs.jsonl.gz (JSONL with "id","text"; skipped with a message where
absent) or the --data files.  Both encoders embed the same
documents in the same process; the work is split into --rounds slices run alternately (unisim first
on even rounds, ours first on odd ones) so load from other processes hits both alike.  Prints
docs/s, chunks/s, speed-up over unisim (total and median per round), CPU ms per chunk, peak RSS
during each encoder's runs (rise above the RSS before each run), min/mean cosine to unisim, and
clustering agreement: adjusted Rand index between the clusters (connected components of cosine >=
--threshold, neardup's retsim default 0.9) of each encoder's embeddings and of unisim's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from neardup.candidates.vectors import range_pairs  # noqa: E402
from neardup.cluster import connected_components  # noqa: E402
from neardup.eval.metrics import adjusted_rand_index  # noqa: E402
from neardup.represent.retsim import RETSimEncoder, chunk_count  # noqa: E402

DEFAULT_DATA = [
    REPO.parent / "shared" / "data" / "bbc_news" / "docs.jsonl",
    REPO.parent / "shared" / "data" / "reuters_days" / "docs.jsonl",
    REPO.parent / "shared" / "data" / "reuters21578" / "docs.jsonl.gz",
]


def read_texts(path: Path, n: int) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    texts: list[str] = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line).get("text") or ""
            if text:
                texts.append(text)
            if len(texts) >= n:
                break
    return texts


def clusters(emb: np.ndarray, threshold: float) -> np.ndarray:
    """Cluster label per row: connected components of the pairs with cosine >= threshold."""
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    left, right, _ = range_pairs(emb.astype(np.float32), threshold)
    return connected_components(len(emb), left, right)


def reset_peak_rss() -> None:
    try:  # Linux >= 4.0: "5" resets the peak RSS (VmHWM) of this process
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def rss_mib(field: str = "VmHWM") -> float:
    """Peak (VmHWM) or current (VmRSS) resident memory of this process, MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parse_config(spec: str) -> dict:
    keys = {
        "bs": "batch_size",
        "threads": "num_threads",
        "intra": "intra_op_threads",
        "quantize": "quantize",
        "dedup": "dedup",
    }
    out: dict = {}
    for item in filter(None, spec.split(",")):
        k, _, v = item.partition("=")
        if k not in keys:
            raise SystemExit(f"unknown config key {k!r} (use {', '.join(keys)})")
        out[keys[k]] = v.lower() in ("1", "true", "yes") if k in ("quantize", "dedup") else int(v)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="documents per data set")
    ap.add_argument("--data", type=Path, action="append", help="JSONL(.gz) file with a 'text' field (repeatable)")
    ap.add_argument("--batch-size", type=int, default=None, help="ours: chunks per onnxruntime call")
    ap.add_argument("--threads", type=int, default=None, help="ours: threads in total (default: all cores)")
    ap.add_argument("--intra-op-threads", type=int, default=None, help="ours: onnxruntime threads per batch")
    ap.add_argument("--quantize", action="store_true", help="ours: dynamic int8 model")
    ap.add_argument("--no-dedup", action="store_true", help="ours: embed duplicate chunks again")
    ap.add_argument("--config", action="append", default=[], help="extra 'ours' variant, e.g. bs=8,threads=1")
    ap.add_argument("--unisim-batch", type=int, default=128, help="TextSim batch_size (its default: 128)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threshold", type=float, default=0.9, help="cosine threshold of the clustering-agreement ARI")
    args = ap.parse_args(argv)

    os.environ.setdefault("BACKEND", "onnx")
    logging.disable(logging.WARNING)  # unisim logs "ONNX is running on CPU" on import
    from unisim import TextSim

    paths = args.data or DEFAULT_DATA
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"cpus={os.cpu_count()} load(1/5/15 min)={load} n={args.n} rounds={args.rounds}")

    t = time.perf_counter()
    unisim = TextSim(batch_size=args.unisim_batch, store_data=False)
    t_unisim_load = time.perf_counter() - t
    main_cfg = {"batch_size": args.batch_size, "num_threads": args.threads, "quantize": args.quantize}
    main_cfg["intra_op_threads"] = args.intra_op_threads
    main_cfg["dedup"] = not args.no_dedup
    variants: dict[str, RETSimEncoder] = {}
    t = time.perf_counter()
    for cfg in [main_cfg] + [parse_config(c) for c in args.config]:
        enc = RETSimEncoder(**{k: v for k, v in cfg.items() if v is not None})
        label = f"ours[bs={enc.batch_size},thr={enc.workers}x{enc.intra_op_threads}{',int8' if enc.quantize else ''}"
        label += ",nodedup]" if not enc.dedup else "]"
        variants[label] = enc
    t_ours_load = (time.perf_counter() - t) / len(variants)
    print(f"load: unisim {t_unisim_load:.2f}s, ours {t_ours_load:.2f}s per encoder")

    for path in paths:
        if not path.exists():
            print(f"\n{path}: not found, skipped")
            continue
        texts = read_texts(path, args.n)
        if not texts:
            print(f"\n{path}: no texts, skipped")
            continue
        n_chunks = sum(chunk_count(len(t)) for t in texts)
        lens = np.array([len(t) for t in texts])
        print(
            f"\n== {path.relative_to(REPO.parent) if path.is_relative_to(REPO.parent) else path}: "
            f"{len(texts)} docs, {n_chunks} chunks, chars median {int(np.median(lens))} max {lens.max()}"
        )
        unisim.embed(texts[:8])  # warm-up
        for enc in variants.values():
            enc.encode(texts[:8])

        names = ["unisim"] + list(variants)
        times = {k: 0.0 for k in names}
        cpu = {k: 0.0 for k in names}
        round_times: dict[str, list[float]] = {k: [] for k in names}
        peaks = {k: 0.0 for k in names}
        outs: dict[str, list[np.ndarray]] = {k: [] for k in names}
        bounds = np.linspace(0, len(texts), args.rounds + 1).astype(int)
        for r in range(args.rounds):
            part = texts[bounds[r] : bounds[r + 1]]
            order = names if r % 2 == 0 else names[::-1]
            for name in order:
                fn = unisim.embed if name == "unisim" else variants[name].encode
                reset_peak_rss()
                before = rss_mib("VmRSS")
                t, c = time.perf_counter(), time.process_time()
                emb = np.asarray(fn(part), dtype=np.float32)
                dt = time.perf_counter() - t
                cpu[name] += time.process_time() - c
                peaks[name] = max(peaks[name], rss_mib("VmHWM") - before)
                times[name] += dt
                round_times[name].append(dt)
                outs[name].append(emb)

        ref = np.concatenate(outs["unisim"])
        ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
        ref_groups = clusters(ref, args.threshold)
        cols = ("docs/s", "chunks/s", "ratio", "med.r", "+peakMiB", "cpu-ms/ch")
        print(f"{'encoder':34s} " + " ".join(f"{c:>9s}" for c in cols) + "  cosine min/mean       ARI(clusters)")
        for name in names:
            emb = np.concatenate(outs[name])
            cos = (emb * ref).sum(1)
            ratio = times["unisim"] / times[name]
            med = float(np.median(np.array(round_times["unisim"]) / np.array(round_times[name])))
            print(
                f"{name:34s} {len(texts) / times[name]:9.1f} {n_chunks / times[name]:9.1f} {ratio:9.2f} {med:9.2f} "
                f"{peaks[name]:9.0f} {1000 * cpu[name] / n_chunks:9.1f}  {cos.min():.6f} / {cos.mean():.6f}"
                f"  {adjusted_rand_index(clusters(emb, args.threshold), ref_groups):.4f}"
            )
        print(f"unisim clusters at cosine >= {args.threshold}: {len(set(ref_groups.tolist()))} for {len(texts)} docs")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nprocess peak RSS {rss_mib('VmHWM'):.0f} MiB (since last reset), load(1/5/15 min) at end: {load}")
    print("+peakMiB: largest rise of resident memory above its level before a run (arenas kept between runs)")
    print("cpu-ms/ch: CPU time (all threads, spinning included) per chunk; ratio/med.r: unisim time / ours")


if __name__ == "__main__":
    main()
