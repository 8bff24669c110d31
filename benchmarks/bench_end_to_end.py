"""End to end, whole processes: `neardup dedup` (the default, word and character shingles, and the same
commands of another checkout) against a rensa MinHashLSH script, on one corpus, in alternating rounds.

Usage::

    python benchmarks/bench_end_to_end.py [--n 200000] [--rounds 3] [--corpus-dir DIR]
        [--src before=/path/to/other/checkout/src] [--paths default,word,char,simhash,ngram,rensa,before:default]
        [--json OUT]

Corpus: the scale bench's (:mod:`bench_scale`: real news sentences, 15% noisy copies), ``--n`` documents,
built once into ``--corpus-dir`` (default: a temporary folder) and re-used; ``--corpus pool`` (the default:
the corpus of the tables in docs/speed.md) or ``fresh`` (sentences re-worded at every use, so the duplicate
rate does not grow with ``--n``). Every path is one command
started fresh (interpreter start-up, reading the JSONL, writing the outputs included):

* ``default``: ``neardup dedup CORPUS -o OUT -q`` (method ``auto``: calibrated on the corpus; exact
  IDF-weighted verification of every candidate; evidence.parquet written);
* ``word``: the same with ``-m minhash`` (word 4-grams at .45);
* ``char``: the same with ``-m minhash --char-ngrams --ngram 5`` (character 5-grams, the unit's own threshold);
* ``simhash``: the same with ``-m simhash`` (64-bit SimHash of character 4-grams, pairs within 9 bits);
* ``ngram``: the same with ``-m ngram`` (every pair sharing a word 4-gram held by at most 200 stories);
* ``NAME:PATH`` for each ``--src NAME=SRC``: that checkout's ``neardup`` (``PYTHONPATH=SRC``) running
  PATH's command, e.g. ``before:default``;
* ``rensa``: ``bench_minhash_speed.py``'s rensa script (read the JSONL with ``json``, word 4-grams per
  document in Python, ``RMinHash`` + ``RMinHashLSH`` (32 bands of 4), union-find; no verification;
  labels written as JSON).

Each round runs every path once, in the order given (so the machine's drift falls on all of them alike);
the table gives median wall seconds, documents per second, the peak summed RSS of the process tree
(sampled every 50 ms), candidates and verified pairs per document, and each path's ratio to the others
taken round by round (the median of the per-round ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_scale import STORIES, _anon_bytes, build, corpus_file, sentences, watch  # noqa: E402

COMMANDS = {"default": [], "word": ["-m", "minhash"], "char": ["-m", "minhash", "--char-ngrams", "--ngram", "5"],
            "simhash": ["-m", "simhash"], "ngram": ["-m", "ngram"]}


def command(path: str, corpus: Path, out: Path, sources: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of one path."""
    env = dict(os.environ)
    if path == "rensa":
        out.mkdir(parents=True, exist_ok=True)
        return ([sys.executable, str(HERE / "bench_minhash_speed.py"), "--script", "rensa", "--cache", str(corpus),
                 "--ngram", "4", "--out", str(out / "labels.json")], env)
    name, _, base = path.rpartition(":")
    env["PYTHONPATH"] = sources[name] if name else str(REPO / "src")
    return [sys.executable, "-m", "neardup", "dedup", str(corpus), "-o", str(out), "-q", *COMMANDS[base]], env


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, int, int]:
    """Wall seconds, the peak summed RSS of the command's process tree and its peak summed anonymous
    memory (RssAnon: RSS less the pages of files and shared libraries, which RSS counts once per process)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = {"rss": 0, "anon": 0}

    def sample(procs: list[Any]) -> None:
        rss, anon = sum(p.memory_info().rss for p in procs), sum(_anon_bytes(p.pid) for p in procs)
        peak["rss"], peak["anon"] = max(peak["rss"], rss), max(peak["anon"], anon)

    seconds = watch(proc, sample)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")
    return seconds, peak["rss"], peak["anon"]


def run(corpus: Path, n: int, paths: list[str], rounds: int, sources: dict[str, str]) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {p: {"seconds": [], "peak_rss": [], "peak_anon": []} for p in paths}
    for r in range(rounds):
        for path in paths:
            with tempfile.TemporaryDirectory(prefix="neardup_e2e_") as tmp:
                out = Path(tmp) / "out"
                seconds, peak, anon = measure(*command(path, corpus, out, sources))
                row = rows[path]
                row["seconds"].append(seconds)
                row["peak_rss"].append(peak)
                row["peak_anon"].append(anon)
                if path != "rensa":
                    summary = json.loads((out / "summary.json").read_text())
                    row.update(candidates=summary["n_candidates"], pairs=summary["n_pairs"],
                               timings=summary["timings"], calibration=summary.get("calibration", {}).get("choice"))
            print(f"  round {r + 1} {path:18s} {seconds:7.1f} s  {peak / 2**20:6.0f} MiB ({anon / 2**20:.0f} MiB anonymous)",
                  file=sys.stderr, flush=True)
    for path, row in rows.items():
        row["median_seconds"] = statistics.median(row["seconds"])
        row["docs_per_second"] = n / row["median_seconds"]
        row["median_peak_rss"] = statistics.median(row["peak_rss"])
        row["median_peak_anon"] = statistics.median(row["peak_anon"])
        row["ratios"] = {other: statistics.median(a / b for a, b in zip(rows[other]["seconds"], row["seconds"]))
                         for other in rows if other != path}  # throughput of this path / that path
    return {"n": n, "rounds": rounds, "load": os.getloadavg(), "paths": rows}


def table(result: dict[str, Any]) -> str:
    n = result["n"]
    paths = list(result["paths"])
    head = "| path | wall (median) | docs/s | peak RSS (tree) | anonymous | candidates/doc | pairs/doc | " + \
        " | ".join(f"throughput vs {p}" for p in paths) + " |"
    lines = [head, "|" + " --- |" * (7 + len(paths))]
    for p, row in result["paths"].items():
        cand = f"{row['candidates'] / n:.2f}" if "candidates" in row else ""
        pairs = f"{row['pairs'] / n:.3f}" if "pairs" in row else ""
        ratios = " | ".join("" if o == p else f"{row['ratios'][o]:.2f}x" for o in paths)
        lines.append(f"| {p} | {row['median_seconds']:.1f} s | {row['docs_per_second']:,.0f} | "
                     f"{row['median_peak_rss'] / 2**20:,.0f} MiB | {row['median_peak_anon'] / 2**20:,.0f} MiB | "
                     f"{cand} | {pairs} | {ratios} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--paths", default="default,word,rensa")
    ap.add_argument("--src", action="append", default=[], help="NAME=PATH of another checkout's src (repeatable)")
    ap.add_argument("--corpus-dir", type=Path, help="keep the built corpus here and re-use it next time")
    ap.add_argument("--corpus", choices=sorted(STORIES), default="pool", help="the corpus builder (bench_scale)")
    ap.add_argument("--copies", type=int, default=0,
                    help="clusters of this many documents (an original and its noisy copies) instead of 15%% copies")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sources = dict(s.split("=", 1) for s in args.src)
    paths = args.paths.split(",")
    for p in paths:
        name, _, base = p.rpartition(":")
        if (p != "rensa" and base not in COMMANDS) or (name and name not in sources):
            raise SystemExit(f"unknown path {p!r}: rensa, {', '.join(COMMANDS)}, or NAME:one of those with --src NAME=SRC")
    folder = args.corpus_dir or Path(tempfile.mkdtemp(prefix="neardup_e2e_corpus_"))
    folder.mkdir(parents=True, exist_ok=True)
    corpus = corpus_file(folder, args.n, args.corpus, args.copies)
    if not corpus.exists():
        print(f"building {corpus} ...", file=sys.stderr)
        build(corpus, args.n, sentences(), kind=args.corpus, copies=args.copies)
    result = run(corpus, args.n, paths, args.rounds, sources)
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
