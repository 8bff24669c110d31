"""MinHash speed: neardup vs datasketch vs rensa on the same real news documents.

Usage::

    python benchmarks/bench_minhash_speed.py [--n 20000] [--ngram 4] [--reps 3] [--json OUT]
    python benchmarks/bench_minhash_speed.py --profile      # cProfile of neardup's (a) path

Corpus: the first ``--n`` non-empty documents of each of Reuters-21578, BBC News and 20 Newsgroups
(``$NEARDUP_SHARED_DATA`` or ``../shared/data``), pooled, shuffled with ``--seed`` and cut to ``--n``.
128 permutations, word ``--ngram``-grams (default: neardup's, ``DedupConfig().shingle.n``).

Every path runs in its own fresh child process (so peak RSS is per path and nothing is shared between
paths; the kernel's peak-RSS mark is reset after set-up via /proc/self/clear_refs, so "peak RSS" is the
peak during the timed repetitions and "+RSS" is that minus the RSS when timing began), ``--reps`` times; the best time is reported, both wall time and process CPU time
(``time.process_time``: user+sys of all the process's threads). On a shared, loaded machine CPU time is
the steadier number; for single-threaded paths the two agree on an idle machine. The load average at
start and end is printed. Reading the files is never timed: the texts are
in memory (a Python list / a neardup ``Corpus``) before the clock starts. neardup's per-process token
hash cache is cleared before each repetition, so every neardup repetition is a cold run.

What each timed path includes
-----------------------------
(a) text -> signatures
  neardup          ``neardup.pipeline.prepare(corpus, DedupConfig(method="minhash"))``: full normalisation
                   (NFKC, invisible chars, homoglyphs, de-hyphenation, casefold, punctuation, whitespace),
                   ``\\w+`` tokens, XXH3 token hashes combined into n-gram hashes, per-doc sort/unique,
                   NumPy MinHash -> (n, 128) uint32 matrix.
  datasketch       per doc: ``text.lower()``, ``re.split(r"\\W+")``, ``set`` of n-gram strings (" ".join),
                   ``MinHash(num_perm=128)`` + ``update_batch([g.encode() ...])`` + ``digest()``.
  datasketch-bulk  same shingles, then ``MinHash.bulk(list_of_encoded_sets, num_perm=128)`` (shares the
                   permutation set-up across docs; datasketch's own bulk API).
  rensa            per doc: same Python shingles, ``RMinHash(num_perm=128, seed=1)``, ``update(list)``,
                   ``digest()``.
  rensa-matrix     same Python shingles, ``RMinHash.digest_matrix_from_token_sets(sets, 128, 1)`` (rensa's
                   bulk API; one call for all docs).
  Peers' shingling = lower() + \\W+ split + n-gram join; a text with fewer than n tokens gives one gram
  of all its tokens (as neardup does). Peers do NOT do NFKC/homoglyph/punctuation folding.
(b) signatures only (shingles pre-built outside the clock)
  neardup              ``minhash.signatures(ShingleSets)`` (the uint64 shingle hashes from ``prepare``).
  datasketch[-bulk]    from pre-built lists of encoded n-gram bytes (SHA1-32 hashing of each gram included).
  rensa[-matrix]       from pre-built lists of n-gram strings (rensa hashes the strings itself).
  rensa-flat-hashes    ``RMinHash.digest_matrix_from_flat_token_hashes(values, offsets, 128, 1)`` on
                       neardup's own uint64 ShingleSets: the same input as neardup's row, like for like.
(c) end to end, no file reading
  neardup          ``neardup.pipeline.run(corpus, DedupConfig(method="minhash"))``: CLI defaults, i.e. LSH
                   bands for Jaccard 0.2, exact weighted-overlap verification of candidates, threshold 0.45,
                   connected components.
  neardup-lsh0.5   same but ``minhash__lsh_threshold=0.5`` (bands derived for 0.5, like the peers' LSH).
  datasketch       (a)'s shingles + MinHash per doc, ``MinHashLSH(threshold=0.5, num_perm=128)`` (25 bands x
                   5 rows), insert all, query all, union-find over every returned candidate (no verification).
  rensa            (a)'s shingles + RMinHash per doc, ``RMinHashLSH(threshold=0.5, num_perm=128,
                   num_bands=32)`` (32 x 4: rensa needs bands to divide 128; 25 is datasketch's choice),
                   insert all, query all, union-find (no verification).
(d) a command from the JSONL file to results on disk, each run as a fresh process (interpreter start-up,
    imports, reading, writing included; CPU time and peak RSS are those of the child processes)
  neardup          ``neardup dedup FILE -o DIR --method minhash --quiet``: the chunked engine with its
                   default one worker process per core; writes clusters/pairs parquet + summary.json.
                   CPU time is not reported for it (its workers are started by a fork server, so they
                   are not this process's children); its peak RSS is its largest single process.
  neardup-1worker  the same with ``--workers 1``.
  datasketch       this script's (c) datasketch pipeline as a command: reads the JSONL, writes the
                   cluster labels as JSON.
  rensa            the same with (c)'s rensa pipeline.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

NUM_PERM = 128
SEED = 1
PHASES: dict[str, list[str]] = {
    "a": ["neardup", "datasketch", "datasketch-bulk", "rensa", "rensa-matrix"],
    "b": ["neardup", "datasketch", "datasketch-bulk", "rensa", "rensa-matrix", "rensa-flat-hashes"],
    "c": ["neardup", "neardup-lsh0.5", "datasketch", "rensa"],
    "d": ["neardup", "neardup-1worker", "datasketch", "rensa"],
}
PHASE_NAMES = {"a": "text -> signatures", "b": "signatures only", "c": "end to end, no reading",
               "d": "command, file to file"}
SOURCES = [("reuters21578", "docs.jsonl.gz"), ("bbc_news", "docs.jsonl"), ("20newsgroups", "docs.jsonl.gz")]
_SPLIT_RE = re.compile(r"\W+")


def data_dir() -> Path:
    env = os.environ.get("NEARDUP_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def require_data(files: list[Path]) -> None:
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        print(f"shared data not found: {', '.join(missing)} (set NEARDUP_SHARED_DATA)", file=sys.stderr)
        raise SystemExit(0)  # nothing to measure: a clean skip, not an error


def _iter_jsonl(path: Path):
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def build_mix(n: int, seed: int) -> tuple[list[dict[str, str]], dict[str, int]]:
    """First ``n`` non-empty docs of each source, pooled, shuffled with ``seed``, cut to ``n``."""
    root = data_dir()
    paths = [root / d / f for d, f in SOURCES]
    require_data(paths)
    pool: list[dict[str, str]] = []
    for (name, _), path in zip(SOURCES, paths):
        taken = 0
        for rec in _iter_jsonl(path):
            if taken >= n:
                break
            text = rec.get("text")
            if isinstance(text, str) and text.strip():
                pool.append({"id": f"{name}:{rec['id']}", "text": text, "source": name})
                taken += 1
    random.Random(seed).shuffle(pool)
    docs = pool[:n]
    counts: dict[str, int] = {}
    for d in docs:
        counts[d["source"]] = counts.get(d["source"], 0) + 1
    return docs, counts


# ---------------------------------------------------------------- peers' shingling (the usual way)

def py_shingles(text: str, n: int) -> set[str]:
    tokens = [t for t in _SPLIT_RE.split(text.lower()) if t]
    if not tokens:
        return set()
    if len(tokens) < n:
        return {" ".join(tokens)}
    return {" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def union_find_components(n: int, pairs) -> list[int]:
    """Connected-component label of each node (neardup's array union-find)."""
    import numpy as np

    from neardup.cluster import connected_components

    pairs = list(pairs)
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    return connected_components(n, left, right).tolist()


def cluster_stats(labels) -> dict[str, int]:
    sizes: dict[int, int] = {}
    for lab in labels:
        sizes[int(lab)] = sizes.get(int(lab), 0) + 1
    dup_clusters = sum(1 for s in sizes.values() if s > 1)
    return {"n_clusters": len(sizes), "n_duplicate_clusters": dup_clusters,
            "n_duplicates": len(labels) - len(sizes), "largest_cluster": max(sizes.values()) if sizes else 0}


# ---------------------------------------------------------------- the timed paths

def make_path(phase: str, path: str, texts: list[str], ngram: int,
              cache: Path | None = None) -> tuple[Callable[[], Any], Callable[[], None]]:
    """(function to time, reset before each repetition). Set-up work happens here, untimed."""
    import numpy as np

    from neardup.config import DedupConfig, ShingleConfig
    from neardup.io.read import Corpus
    from neardup.text import shingle as nd_shingle

    def reset() -> None:
        nd_shingle._TOKEN_CACHE.clear()  # cold token cache for every neardup repetition
        gc.collect()

    cfg = DedupConfig(method="minhash", shingle=ShingleConfig(n=ngram))
    if phase == "d":
        assert cache is not None, "phase d runs commands on the cached JSONL file"
        return _command_path(path, ngram, cache), gc.collect
    corpus = Corpus.from_texts(texts) if path.startswith("neardup") or phase == "b" else None

    if path.startswith("neardup"):
        from neardup.pipeline import prepare, run
        from neardup.represent import minhash

        if phase == "a":
            return (lambda: prepare(corpus, cfg).signatures), reset
        if phase == "b":
            sets = prepare(corpus, cfg).sets
            return (lambda: minhash.signatures(sets, NUM_PERM, SEED)), reset
        c_cfg = cfg if path == "neardup" else cfg.replace(minhash__lsh_threshold=0.5)

        def e2e():
            res = run(corpus, c_cfg)
            return res.clusters.labels
        return e2e, reset

    if path.startswith("datasketch"):
        from datasketch import MinHash, MinHashLSH

        if phase == "a":
            if path == "datasketch":
                def a_ds():
                    out = []
                    for t in texts:
                        m = MinHash(num_perm=NUM_PERM)
                        m.update_batch([g.encode("utf-8") for g in py_shingles(t, ngram)])
                        out.append(m.digest())
                    return out
                return a_ds, reset

            def a_dsb():
                enc = [[g.encode("utf-8") for g in py_shingles(t, ngram)] for t in texts]
                return [m.digest() for m in MinHash.bulk(enc, num_perm=NUM_PERM)]
            return a_dsb, reset
        if phase == "b":
            enc = [[g.encode("utf-8") for g in py_shingles(t, ngram)] for t in texts]
            if path == "datasketch":
                def b_ds():
                    out = []
                    for grams in enc:
                        m = MinHash(num_perm=NUM_PERM)
                        m.update_batch(grams)
                        out.append(m.digest())
                    return out
                return b_ds, reset
            return (lambda: [m.digest() for m in MinHash.bulk(enc, num_perm=NUM_PERM)]), reset

        def c_ds():
            lsh = MinHashLSH(threshold=0.5, num_perm=NUM_PERM)
            mhs = []
            for i, t in enumerate(texts):
                m = MinHash(num_perm=NUM_PERM)
                m.update_batch([g.encode("utf-8") for g in py_shingles(t, ngram)])
                mhs.append(m)
                lsh.insert(i, m, check_duplication=False)
            pairs = ((i, j) for i, m in enumerate(mhs) for j in lsh.query(m) if j != i)
            return union_find_components(len(texts), pairs)
        return c_ds, reset

    from rensa import RMinHash, RMinHashLSH

    if phase == "a":
        if path == "rensa":
            def a_r():
                out = []
                for t in texts:
                    m = RMinHash(num_perm=NUM_PERM, seed=SEED)
                    m.update(list(py_shingles(t, ngram)))
                    out.append(m.digest())
                return out
            return a_r, reset
        return (lambda: RMinHash.digest_matrix_from_token_sets(
            [list(py_shingles(t, ngram)) for t in texts], NUM_PERM, SEED)), reset
    if phase == "b":
        if path == "rensa-flat-hashes":
            sets = prepare_sets(corpus, cfg)
            values = np.ascontiguousarray(sets.values)
            offsets = np.ascontiguousarray(sets.offsets.astype(np.uint64))
            return (lambda: RMinHash.digest_matrix_from_flat_token_hashes(values, offsets, NUM_PERM, SEED)), reset
        grams = [list(py_shingles(t, ngram)) for t in texts]
        if path == "rensa":
            def b_r():
                out = []
                for g in grams:
                    m = RMinHash(num_perm=NUM_PERM, seed=SEED)
                    m.update(g)
                    out.append(m.digest())
                return out
            return b_r, reset
        return (lambda: RMinHash.digest_matrix_from_token_sets(grams, NUM_PERM, SEED)), reset

    def c_r():
        lsh = RMinHashLSH(threshold=0.5, num_perm=NUM_PERM, num_bands=32)
        mhs = []
        for i, t in enumerate(texts):
            m = RMinHash(num_perm=NUM_PERM, seed=SEED)
            m.update(list(py_shingles(t, ngram)))
            mhs.append(m)
            lsh.insert(i, m)
        pairs = ((i, j) for i, m in enumerate(mhs) for j in lsh.query(m) if j != i)
        return union_find_components(len(texts), pairs)
    return c_r, reset


def _command_path(path: str, ngram: int, cache: Path) -> Callable[[], Any]:
    """Phase (d): run one command on the cached JSONL file as a child process."""
    def run_command():
        with tempfile.TemporaryDirectory(prefix="neardup_bench_out_") as out:
            if path.startswith("neardup"):
                cmd = [sys.executable, "-m", "neardup", "dedup", str(cache), "-o", out, "--method", "minhash",
                       "--ngram", str(ngram), "--quiet"] + (["--workers", "1"] if path == "neardup-1worker" else [])
            else:
                cmd = [sys.executable, str(Path(__file__).resolve()), "--script", path, "--cache", str(cache),
                       "--ngram", str(ngram), "--out", os.path.join(out, "labels.json")]
            subprocess.run(cmd, check=True, capture_output=True)
            if path.startswith("neardup"):
                import pyarrow.parquet as pq

                table = pq.read_table(os.path.join(out, "clusters.parquet"), columns=["cluster"])
                names = table["cluster"].to_pylist()
                index = {name: i for i, name in enumerate(dict.fromkeys(names))}
                return [index[name] for name in names]
            return json.loads(Path(out, "labels.json").read_text())
    return run_command


def script(path: str, cache: Path, ngram: int, out: Path) -> None:
    """Phase (d) peers as a command: read the JSONL, run (c)'s pipeline, write the labels."""
    texts = [json.loads(line)["text"] for line in cache.open(encoding="utf-8")]
    fn, _ = make_path("c", path, texts, ngram)
    out.write_text(json.dumps([int(x) for x in fn()]))


def prepare_sets(corpus, cfg):
    from neardup.pipeline import prepare

    return prepare(corpus, cfg).sets


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def _vm_hwm_mb() -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (Linux >= 4.0), so set-up work does not count in the peak."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def worker(phase: str, path: str, cache: Path, ngram: int, reps: int) -> dict[str, Any]:
    texts = [json.loads(line)["text"] for line in cache.open(encoding="utf-8")]
    fn, reset = make_path(phase, path, texts, ngram, cache)
    gc.collect()
    base = rss_mb()
    peak_reset = _reset_peak()
    times, cpu = [], []
    out = None
    for _ in range(reps):
        out = None
        reset()
        c0, k0, t0 = time.process_time(), _children_cpu(), time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0 + _children_cpu() - k0)
    hwm = _vm_hwm_mb() if peak_reset else None
    # Peak of the timed repetitions only when the mark could be reset; else the process peak.
    peak = hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if phase == "d":  # the work ran in child processes: the largest child's peak
        hwm, base = None, 0.0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    res: dict[str, Any] = {"phase": phase, "path": path, "times": [round(t, 4) for t in times],
                           "best_s": round(min(times), 4), "docs_per_s": round(len(texts) / min(times), 1),
                           "cpu_times": [round(t, 4) for t in cpu], "best_cpu_s": round(min(cpu), 4),
                           "docs_per_cpu_s": round(len(texts) / min(cpu), 1),
                           "rss_before_mb": round(base, 1), "peak_rss_mb": round(peak, 1),
                           "peak_minus_before_mb": round(peak - base, 1), "peak_excludes_setup": hwm is not None}
    if phase in ("c", "d"):
        res["clusters"] = cluster_stats(list(out))
    if phase == "d" and path == "neardup":  # its workers are grandchildren (fork server): CPU not countable
        res["best_cpu_s"] = res["docs_per_cpu_s"] = None
    return res


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


def run_child(phase: str, path: str, cache: Path, ngram: int, reps: int) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", f"{phase}:{path}", "--cache", str(cache),
           "--ngram", str(ngram), "--reps", str(reps)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"phase": phase, "path": path, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def profile(cache: Path, ngram: int) -> None:
    import cProfile
    import pstats

    texts = [json.loads(line)["text"] for line in cache.open(encoding="utf-8")]
    for phase in ("a", "c"):
        fn, reset = make_path(phase, "neardup", texts, ngram)
        reset()
        prof = cProfile.Profile()
        prof.enable()
        fn()
        prof.disable()
        print(f"\n=== cProfile neardup phase ({phase}) {PHASE_NAMES[phase]}: top 15 by tottime")
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def main() -> None:
    from neardup.config import DedupConfig

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20_000, help="documents (default 20000)")
    ap.add_argument("--ngram", type=int, default=DedupConfig().shingle.n, help="word n-gram size (neardup default)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per path; best is reported")
    ap.add_argument("--seed", type=int, default=0, help="shuffle seed")
    ap.add_argument("--phases", default="abcd", help="subset of 'abcd'")
    ap.add_argument("--json", type=Path, help="write the numbers here")
    ap.add_argument("--profile", action="store_true", help="cProfile neardup's (a) and (c) paths and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--script", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.script:
        script(args.script, args.cache, args.ngram, args.out)
        return
    if args.worker:
        phase, path = args.worker.split(":", 1)
        print(json.dumps(worker(phase, path, args.cache, args.ngram, args.reps)))
        return

    docs, counts = build_mix(args.n, args.seed)
    n_chars = sum(len(d["text"]) for d in docs)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", prefix="neardup_bench_mix_", dir="/tmp",
                                     delete=False, encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps({"id": d["id"], "text": d["text"]}) + "\n")
        cache = Path(fh.name)
    try:
        if args.profile:
            profile(cache, args.ngram)
            return
        load0 = round(os.getloadavg()[0], 2)
        print(f"{len(docs)} docs ({', '.join(f'{k} {v}' for k, v in counts.items())}), "
              f"{n_chars / len(docs):.0f} chars/doc, {NUM_PERM} perms, word {args.ngram}-grams, "
              f"best of {args.reps}, each path in a fresh process", flush=True)
        results: dict[str, dict[str, Any]] = {}
        for phase in args.phases:
            for path in PHASES[phase]:
                r = run_child(phase, path, cache, args.ngram, args.reps)
                results[f"{phase}:{path}"] = r
                msg = r.get("error") or (f"{r['docs_per_s']:>9,.0f} docs/s {_num(r['docs_per_cpu_s']):>9} docs/cpu-s  "
                                         f"peak {r['peak_rss_mb']:.0f} MB")
                print(f"  ({phase}) {path:<18} {msg}", flush=True)
    finally:
        cache.unlink(missing_ok=True)

    ratios: dict[str, dict[str, float]] = {}
    cpu_ratios: dict[str, dict[str, float]] = {}
    print(f"\nload average at start {load0}, at end {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    print(f"{'phase':<26} {'path':<18} {'docs/s':>9} {'docs/cpu-s':>10} {'best s':>7} {'peak RSS':>9} {'+RSS':>7}"
          "  clusters")
    for phase in args.phases:
        for path in PHASES[phase]:
            r = results[f"{phase}:{path}"]
            if "error" in r:
                print(f"({phase}) {PHASE_NAMES[phase]:<22} {path:<18} ERROR {r['error']}")
                continue
            cl = r.get("clusters")
            extra = f"  {cl['n_duplicates']} dups in {cl['n_duplicate_clusters']} groups" if cl else ""
            print(f"({phase}) {PHASE_NAMES[phase]:<22} {path:<18} {r['docs_per_s']:>9,.0f} {_num(r['docs_per_cpu_s']):>10}"
                  f" {r['best_s']:>7.2f} {r['peak_rss_mb']:>7.0f}MB {r['peak_minus_before_mb']:>5.0f}MB{extra}")
        ratios[phase], cpu_ratios[phase] = {}, {}
        nd = results.get(f"{phase}:neardup", {})
        for peer in PHASES[phase]:
            pr = results.get(f"{phase}:{peer}", {})
            if peer != "neardup" and nd.get("docs_per_s") and pr.get("docs_per_s"):
                ratios[phase][f"neardup/{peer}"] = round(nd["docs_per_s"] / pr["docs_per_s"], 2)
                cpu_ratios[phase][f"neardup/{peer}"] = (round(nd["docs_per_cpu_s"] / pr["docs_per_cpu_s"], 2)
                                                        if nd["docs_per_cpu_s"] and pr["docs_per_cpu_s"] else None)
    print("\nspeed ratios, neardup / peer (>1 = neardup faster); wall-clock [CPU-time]:")
    for phase, rs in ratios.items():
        print(f"  ({phase}) " + "  ".join(
            f"{k} {v:.2f}x [{'n/a' if cpu_ratios[phase][k] is None else f'{cpu_ratios[phase][k]:.2f}x'}]"
            for k, v in rs.items()))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "n_docs": len(docs), "sources": counts, "chars_per_doc": round(n_chars / len(docs), 1),
            "num_perm": NUM_PERM, "ngram": args.ngram, "reps": args.reps, "seed": args.seed,
            "cpu_count": os.cpu_count(), "load_average_start": load0, "load_average_end": os.getloadavg()[0],
            "results": results, "ratios_wall": ratios, "ratios_cpu": cpu_ratios,
            "notes": "best of reps; each path in a fresh process; reading files not timed except in phase d; "
                     "LSH threshold 0.5 for peers (datasketch 25x5, rensa 32x4)",
        }, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
