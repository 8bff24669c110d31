"""Peak memory and wall time of ``neardup dedup --method minhash`` on a large noisy corpus (a subprocess).

Usage::

    python benchmarks/bench_memory.py [--n 100000] [--seed 0] [--keep-input] [--json OUT]

Builds an ``--n``-document JSONL corpus under /tmp (never in the repo) from real news texts
(Reuters-21578, BBC News, 20 Newsgroups from ``$NEARDUP_SHARED_DATA`` or ``../shared/data``): about
half the documents are distinct originals, the rest are copies of random originals with simple
deterministic noise (seeded ``random.Random``): exact copy, ~2% random character deletions/substitutions,
truncation to 50-95%, an added prefix (dateline / "UPDATE" line), or a mix. Then runs

    neardup dedup INPUT -o OUTDIR --method minhash --quiet

as a child process (the ``neardup`` console script beside ``sys.executable``, else ``python -m neardup``)
and measures its wall time (including reading the file and writing the Parquet output), the CPU
seconds of the whole process tree (``getrusage(RUSAGE_CHILDREN)`` user+sys; steadier than wall time on
a loaded machine) and its peak RSS. The CLI may run worker processes (the local engine's map stage), so
the reported peak is the SUM of RSS over the child and all its descendants, polled every 20 ms with
psutil; ``ru_maxrss`` (the largest single process's high-water mark) is shown too. Target: peak RSS of
the process tree under 2 GB at 100,000 documents.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SOURCES = [("reuters21578", "docs.jsonl.gz"), ("bbc_news", "docs.jsonl"), ("20newsgroups", "docs.jsonl.gz")]
TARGET_BYTES = 2 * 1024**3
ALPHABET = "abcdefghijklmnopqrstuvwxyz      etaoin"
PREFIXES = ["LONDON (Reuters) - ", "UPDATE 1-", "NEW YORK, March 3 - ", "From the wires: ", "BREAKING: ",
            "Reposted from the archive.\n\n", "-- forwarded message --\n"]


def data_dir() -> Path:
    env = os.environ.get("NEARDUP_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_pool() -> list[str]:
    root = data_dir()
    paths = [root / d / f for d, f in SOURCES]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        print(f"shared data not found: {', '.join(missing)} (set NEARDUP_SHARED_DATA)", file=sys.stderr)
        raise SystemExit(0)  # nothing to measure: a clean skip, not an error
    texts: list[str] = []
    for path in paths:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    t = json.loads(line).get("text")
                    if isinstance(t, str) and t.strip():
                        texts.append(t)
    return texts


def char_noise(text: str, rng: random.Random, rate: float = 0.02) -> str:
    if not text:
        return text
    chars = list(text)
    k = max(1, int(len(chars) * rate * rng.uniform(0.5, 1.5)))
    positions = sorted(rng.sample(range(len(chars)), min(k, len(chars))), reverse=True)
    for p in positions:
        if rng.random() < 0.5:
            del chars[p]
        else:
            chars[p] = rng.choice(ALPHABET)
    return "".join(chars)


def noisy_copy(text: str, rng: random.Random) -> tuple[str, str]:
    r = rng.random()
    if r < 0.10:
        return text, "exact"
    if r < 0.55:
        return char_noise(text, rng), "chars"
    if r < 0.75:
        return text[: max(1, int(len(text) * rng.uniform(0.5, 0.95)))], "truncate"
    if r < 0.90:
        return rng.choice(PREFIXES) + text, "prefix"
    t = rng.choice(PREFIXES) + text[: max(1, int(len(text) * rng.uniform(0.6, 0.95)))]
    return char_noise(t, rng), "mix"


def build_corpus(n: int, seed: int, out: Path) -> dict[str, int]:
    pool = load_pool()
    rng = random.Random(seed)
    rng.shuffle(pool)
    n_orig = min(len(pool), n // 2)
    originals = pool[:n_orig]
    kinds: dict[str, int] = {"original": n_orig}
    docs = [(f"o{i}", t) for i, t in enumerate(originals)]
    for j in range(n - n_orig):
        src = rng.randrange(n_orig)
        text, kind = noisy_copy(originals[src], rng)
        kinds[kind] = kinds.get(kind, 0) + 1
        docs.append((f"c{j}-of-o{src}", text))
    rng.shuffle(docs)
    with out.open("w", encoding="utf-8") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    return kinds


def neardup_command() -> list[str]:
    exe = Path(sys.executable).with_name("neardup")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "neardup"]


def run_measured(cmd: list[str]) -> dict[str, float | int]:
    import psutil

    peak = 0
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ps = psutil.Process(proc.pid)
    done = threading.Event()
    out: dict[str, str] = {}

    def drain() -> None:
        out["stdout"], out["stderr"] = proc.communicate()
        done.set()

    threading.Thread(target=drain, daemon=True).start()
    while not done.is_set():
        try:
            rss = ps.memory_info().rss + sum(c.memory_info().rss for c in ps.children(recursive=True))
            peak = max(peak, rss)
        except psutil.Error:
            pass
        done.wait(0.02)
    seconds = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    maxrss = ru.ru_maxrss * 1024  # KiB on Linux; largest single waited-for descendant
    if proc.returncode != 0:
        print(out.get("stderr", ""), file=sys.stderr)
        raise SystemExit(f"neardup exited with {proc.returncode}")
    return {"seconds": seconds, "cpu_seconds": ru.ru_utime + ru.ru_stime, "peak_rss_polled": peak,
            "peak_rss_ru_maxrss": maxrss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000, help="documents (default 100000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-input", action="store_true", help="do not delete the generated /tmp input and output")
    ap.add_argument("--json", type=Path, help="write the numbers here")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="neardup_bench_mem_", dir="/tmp"))
    inp, outdir = work / f"corpus_{args.n}.jsonl", work / "out"
    try:
        t0 = time.perf_counter()
        kinds = build_corpus(args.n, args.seed, inp)
        size = inp.stat().st_size
        print(f"built {args.n:,} docs ({', '.join(f'{k} {v}' for k, v in kinds.items())}), "
              f"{size / 2**20:.0f} MiB JSONL in {time.perf_counter() - t0:.1f}s -> {inp}", flush=True)
        cmd = neardup_command() + ["dedup", str(inp), "-o", str(outdir), "--method", "minhash", "--quiet"]
        print("running: " + " ".join(cmd), flush=True)
        m = run_measured(cmd)
        summary = json.loads((outdir / "summary.json").read_text())
    finally:
        if not args.keep_input:
            shutil.rmtree(work, ignore_errors=True)
    peak = max(m["peak_rss_polled"], m["peak_rss_ru_maxrss"])  # polled tree sum; ru_maxrss if polling missed it
    res = {
        "n_docs": args.n, "input_bytes": size, "command": " ".join(cmd), "kinds": kinds,
        "seconds": round(m["seconds"], 2), "docs_per_s": round(args.n / m["seconds"], 1),
        "cpu_seconds": round(m["cpu_seconds"], 1), "cpu_count": os.cpu_count(),
        "load_average_end": round(os.getloadavg()[0], 2),
        "engine": {k: v for k, v in summary.items() if k in ("engine", "plan", "workers", "memory_limit")},
        "peak_rss_bytes": int(peak), "peak_rss_polled_bytes": int(m["peak_rss_polled"]),
        "peak_rss_ru_maxrss_bytes": int(m["peak_rss_ru_maxrss"]),
        "bytes_per_doc": round(peak / args.n, 1), "under_2gb": peak < TARGET_BYTES,
        "n_duplicates": summary.get("n_duplicates"), "n_duplicate_clusters": summary.get("n_duplicate_clusters"),
        "stage_timings": summary.get("timings"),
    }
    print(f"\n{'docs':>9} {'seconds':>8} {'docs/s':>8} {'CPU s':>7} {'peak RSS':>10} {'bytes/doc':>10}  target <2 GB")
    print(f"{args.n:>9,} {res['seconds']:>8.1f} {res['docs_per_s']:>8,.0f} {res['cpu_seconds']:>7.0f} "
          f"{peak / 2**20:>7,.0f} MiB {res['bytes_per_doc']:>10,.0f}  {'PASS' if res['under_2gb'] else 'FAIL'}")
    print(f"(peak RSS: process-tree sum polled {m['peak_rss_polled'] / 2**20:,.0f} MiB, largest single process "
          f"ru_maxrss {m['peak_rss_ru_maxrss'] / 2**20:,.0f} MiB;"
          f" input {size / 2**20:.0f} MiB; found {res['n_duplicates']:,} duplicates in "
          f"{res['n_duplicate_clusters']:,} groups; wall time includes reading + writing output)")
    if res["engine"]:
        print(f"engine (from summary.json): {json.dumps(res['engine'])[:300]}")
    print(f"load average at end {res['load_average_end']} on {os.cpu_count()} CPUs")
    print("stage timings (s, from summary.json): "
          + ", ".join(f"{k} {v:.1f}" for k, v in (res["stage_timings"] or {}).items()))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
