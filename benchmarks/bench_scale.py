"""Scaling curve of `neardup dedup --method minhash`: 10k, 100k, 1M documents on this machine.

Run by hand:  python benchmarks/bench_scale.py [--sizes 10000,100000,1000000] [--memory-limit 2GB]

Builds corpora (in a temporary folder, never in the repository) from real sentences of the shared
news corpora: each document is 3-8 random sentences, and 15% are noisy copies (character edits,
truncation) of an earlier document. Two builders (``--corpus``):

* ``fresh`` (the default): every use of a sentence has a quarter of its words replaced by words drawn
  from the pool's own running text, so stories that draw the same sentence share few shingles and the
  duplicate rate (candidates and pairs per document) stays the same at every size: what a corpus of
  10M distinct stories would show. Files ``corpus-fresh-N.jsonl``.
* ``pool``: the sentences verbatim (bench_end_to_end's corpus: docs/speed.md's 200k and 1M tables).
  The pool holds about 370k sentences, so each is drawn ~16 times per million stories and chance
  overlaps grow with the corpus (candidates per document 0.73 at 200k, 2.69 at 1M for the default).
  Files ``corpus-N.jsonl``. Runs the real CLI as a subprocess and samples the memory of its
whole process tree (the main process, the fork server and its workers): the summed RSS every 50 ms
(pages shared between processes, such as a memory-mapped file two workers read, count once per
process: an over-estimate), the summed PSS every second (shared pages split between the processes
that map them), and the summed anonymous resident memory (``RssAnon`` of /proc/PID/status: what the
kernel cannot reclaim without swap; the rest of RSS is clean page cache mapped from the work files,
which it drops under memory pressure), each with the stage running at its peak. Prints seconds,
docs/s, peak RSS, bytes per document, the fitted growth exponent (seconds ~ n^k) and a projection
to 10M documents from the measured curve (a projection, not a measurement).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))
SPLIT = re.compile(r"(?<=[.!?])\s+")


def sentences() -> list[str]:
    out: list[str] = []
    sources = [("bbc_news/docs.jsonl", "text"), ("reuters21578/docs.jsonl.gz", "text"),
               ("20newsgroups/docs.jsonl.gz", "body")]
    for rel, field in sources:
        path = DATA / rel
        if not path.exists():
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                text = json.loads(line).get(field) or ""
                out.extend(s.strip() for s in SPLIT.split(text) if 40 <= len(s.strip()) <= 400)
    return out


def noisy(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(max(1, len(chars) // 50)):
        i = rng.randrange(len(chars))
        chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz ")
    cut = rng.random()
    out = "".join(chars)
    return out[: int(len(out) * (0.6 + 0.4 * cut))]


def pool_stories(pool: list[str], rng: random.Random) -> Iterator[str]:
    """Originals of the ``pool`` corpus: 3-8 sentences of the pool, verbatim."""
    while True:
        yield " ".join(rng.choice(pool) for _ in range(rng.randint(3, 8)))


def fresh_stories(pool: list[str], rng: random.Random, replace: float = 0.25, chunk: int = 20_000) -> Iterator[str]:
    """Originals of the ``fresh`` corpus: 3-8 sentences of the pool, each word replaced with probability
    ``replace`` by a word of the pool's running text (so by the words' own frequencies); made ``chunk``
    stories at a time with NumPy."""
    vocab: dict[str, int] = {}
    ids = [vocab.setdefault(w, len(vocab)) for s in pool for w in s.split()]
    flat = np.asarray(ids, dtype=np.int32)
    lens = np.asarray([len(s.split()) for s in pool], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    words = np.asarray(list(vocab), dtype=object)
    gen = np.random.default_rng(rng.getrandbits(64))
    while True:
        per_story = gen.integers(3, 9, chunk)
        sent = gen.integers(0, len(pool), int(per_story.sum()))
        n_words = lens[sent]
        total = int(n_words.sum())
        first = np.repeat(starts[sent] - (np.cumsum(n_words) - n_words), n_words)
        tokens = flat[first + np.arange(total)]
        swap = gen.random(total) < replace
        tokens[swap] = flat[gen.integers(0, flat.size, int(swap.sum()))]
        text = words[tokens].tolist()
        ends = np.cumsum(np.add.reduceat(n_words, np.concatenate([[0], np.cumsum(per_story)[:-1]])))
        start = 0
        for end in ends.tolist():
            yield " ".join(text[start:end])
            start = end


#: The corpus builders (``--corpus``): originals of each kind.
STORIES = {"fresh": fresh_stories, "pool": pool_stories}


def corpus_file(folder: Path, n: int, kind: str, copies: int = 0) -> Path:
    """Where a corpus of ``n`` documents of builder ``kind`` (``copies``: clusters of that many) lives in
    ``folder`` (the pool corpus keeps its old name)."""
    name = f"corpus-{n}" if kind == "pool" else f"corpus-{kind}-{n}"
    return folder / (f"{name}-x{copies}.jsonl" if copies else f"{name}.jsonl")


def build(path: Path, n: int, pool: list[str], seed: int = 0, kind: str = "pool", copies: int = 0) -> None:
    """Write ``n`` documents to ``path``: originals of builder ``kind`` and, for 15% of them, a noisy copy
    of one of the last 5,000 originals; with ``copies``, clusters of that many instead (an original and
    ``copies - 1`` noisy copies of it, spread over the next documents: the heavily duplicated corpora users
    de-duplicate). Written through a temporary file, so an interrupted build leaves no corpus behind."""
    rng = random.Random(seed)
    stories = STORIES[kind](pool, rng)
    if copies:
        _build_clusters(path, n, stories, rng, copies)
        return
    recent: list[str] = []
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for i in range(n):
            if recent and rng.random() < 0.15:
                text = noisy(rng.choice(recent), rng)
            else:
                text = next(stories)
                recent.append(text)
                if len(recent) > 5000:
                    recent.pop(rng.randrange(len(recent)))
            fh.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    os.replace(tmp, path)


def _build_clusters(path: Path, n: int, stories: Iterator[str], rng: random.Random, copies: int) -> None:
    """``n`` documents in clusters of ``copies``: each original, then its noisy copies, shuffled within windows
    of 20 clusters (a copy comes soon after its original, as in a crawl)."""
    tmp = path.with_name(path.name + ".tmp")
    window = 20 * copies
    written = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        while written < n:
            block: list[str] = []
            for _ in range(20):
                original = next(stories)
                block.append(original)
                block.extend(noisy(original, rng) for _ in range(copies - 1))
            rng.shuffle(block)
            for text in block[: min(window, n - written)]:
                fh.write(json.dumps({"id": f"d{written}", "text": text}) + "\n")
                written += 1
    os.replace(tmp, path)


def _stage(workdir: Path) -> str:
    """The stage running now, from the work directory's completion marks (stages run in this order). The
    evidence stage begins once the evidence's text store is marked written (``texts.done``): the store's
    folder appears earlier, when a worker begins it beside the cluster and write stages."""
    if not workdir.exists():
        return "start/write"
    done = {p.stem for p in workdir.glob("*.done")}
    for name in ("join", "candidates", "weights", "verify"):
        if name not in done:
            return "map+join" if name == "join" else name
    return "evidence" if "texts" in done else "cluster/write"


from neardup.engine.processes import held_bytes as _anon_bytes  # noqa: E402  (RssAnon of a process)


def watch(proc: subprocess.Popen, sample: Callable[[list[psutil.Process]], None], every: float = 0.05) -> float:
    """Call ``sample`` with the process tree of the running command ``proc`` every ``every`` seconds until it
    exits (processes that end meanwhile are skipped); returns its wall seconds from now."""
    t0 = time.perf_counter()
    parent = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            sample([parent, *parent.children(recursive=True)])
        except (psutil.Error, OSError):
            pass
        time.sleep(every)
    return time.perf_counter() - t0


def run(path: Path, outdir: Path, memory_limit: str, workers: int, evidence: bool = True) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "neardup", "dedup", str(path), "-o", str(outdir), "--method", "minhash",
           "--memory-limit", memory_limit, "--workers", str(workers), "--quiet",
           "--evidence" if evidence else "--no-evidence"]
    peaks: dict[str, Any] = {"rss": (0, ""), "anon": (0, ""), "pss": (0, ""), "last_pss": 0.0}
    by_stage: dict[str, list[int]] = {}  # stage -> [peak summed RSS, peak summed anonymous]
    workdir = outdir / ".neardup-work"

    def sample(procs: list[psutil.Process]) -> None:
        figures = {"rss": sum(p.memory_info().rss for p in procs), "anon": sum(_anon_bytes(p.pid) for p in procs)}
        stage = by_stage.setdefault(_stage(workdir), [0, 0])
        stage[0], stage[1] = max(stage[0], figures["rss"]), max(stage[1], figures["anon"])
        if time.perf_counter() - peaks["last_pss"] >= 1.0:  # PSS is slow to read: once a second
            peaks["last_pss"] = time.perf_counter()
            figures["pss"] = sum(p.memory_full_info().pss for p in procs)
        for name, value in figures.items():
            if value > peaks[name][0]:
                peaks[name] = (value, _stage(workdir))

    proc = subprocess.Popen(cmd)
    seconds = watch(proc, sample)
    if proc.returncode != 0:
        raise SystemExit(f"neardup dedup failed with exit code {proc.returncode}")
    (peak, peak_stage), (peak_pss, pss_stage), (peak_anon, anon_stage) = peaks["rss"], peaks["pss"], peaks["anon"]
    summary = json.loads((outdir / "summary.json").read_text())
    return {"seconds": seconds, "peak_rss": peak, "peak_rss_stage": peak_stage, "peak_pss": peak_pss,
            "peak_pss_stage": pss_stage, "peak_anon": peak_anon, "peak_anon_stage": anon_stage,
            "peaks_by_stage": {k: {"rss": v[0], "anon": v[1]} for k, v in by_stage.items()},
            "n_pairs": summary["n_pairs"],
            "n_candidates": summary.get("n_candidates"), "timings": summary["timings"],
            "plan": summary["engine"]["plan"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--memory-limit", default="2GB")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--corpus-dir", type=Path, help="keep the built corpora here and re-use them next time")
    ap.add_argument("--no-evidence", action="store_true", help="run without evidence.parquet (its cost: compare)")
    ap.add_argument("--corpus", choices=sorted(STORIES), default="fresh",
                    help="the corpus builder (module docstring); default: fresh")
    args = ap.parse_args()
    pool = sentences()
    if not pool:
        raise SystemExit(f"shared data not found under {DATA}: nothing to build the corpus from")
    rows = []
    with tempfile.TemporaryDirectory(prefix="neardup-scale-") as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            keep = args.corpus_dir is not None
            path = corpus_file(args.corpus_dir if keep else Path(tmp), n, args.corpus)
            if not (keep and path.exists()):
                path.parent.mkdir(parents=True, exist_ok=True)
                build(path, n, pool, kind=args.corpus)
            res = run(path, Path(tmp) / f"out-{n}", args.memory_limit, args.workers, evidence=not args.no_evidence)
            res.update(n=n, input_mb=path.stat().st_size / 1e6)
            rows.append(res)
            if not keep:
                path.unlink()
            print(f"{n:>9,} docs  {res['seconds']:8.1f} s  {n / res['seconds']:9,.0f} docs/s  "
                  f"peak RSS sum {res['peak_rss'] / 2**20:6.0f} MiB ({res['peak_rss_stage']})  "
                  f"PSS sum {res['peak_pss'] / 2**20:6.0f} MiB ({res['peak_pss_stage']})  "
                  f"anonymous {res['peak_anon'] / 2**20:6.0f} MiB ({res['peak_anon_stage']})  "
                  f"{res['peak_pss'] / n:7.0f} B/doc  input {res['input_mb']:.0f} MB  candidates {res['n_candidates']:,}  "
                  f"pairs {res['n_pairs']:,}",
                  flush=True)
    if len(rows) >= 2:
        # Growth between the two largest runs: the fixed start-up cost dominates small runs and would
        # flatten a fit over all of them.
        a, b = rows[-2], rows[-1]
        k = math.log(b["seconds"] / a["seconds"]) / math.log(b["n"] / a["n"])
        projected = b["seconds"] * (10_000_000 / b["n"]) ** k
        print(f"growth from {a['n']:,} to {b['n']:,} docs: seconds ~ n^{k:.2f}; projection (not a measurement) "
              f"for 10M documents: {projected / 60:.0f} min at this machine's 2 cores")
    print(f"memory limit {args.memory_limit}, workers {args.workers}; timings per stage of the largest run: "
          f"{rows[-1]['timings']}")
    print("peak summed RSS / anonymous memory by stage of the largest run (MiB): " + ", ".join(
        f"{k} {v['rss'] / 2**20:.0f}/{v['anon'] / 2**20:.0f}" for k, v in rows[-1]["peaks_by_stage"].items()))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
