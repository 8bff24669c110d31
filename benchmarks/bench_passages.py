"""Shared passages (the evidence's spans): the NumPy code against the compiled loops, on real stories.

Run by hand from the repo root:

    python benchmarks/bench_passages.py [--corpus FILE.jsonl] [--docs 4000] [--pairs 5000] [--rounds 5]

Reads the first ``--docs`` stories of a JSONL corpus (default: the Reuters-21578 stories,
``../shared/data/reuters21578/docs.jsonl.gz``), and times, best of ``--rounds``, in one process:

* reading words (:func:`neardup.verify.passages.words_of`) of the stories as they are (mostly ASCII) and
  made non-ASCII two ways (every word that starts with "e" accented, "ue"/"ss" as "ü"/"ß"), so every
  story takes the path of non-ASCII texts;
* aligning ``--pairs`` pairs (:func:`~neardup.verify.passages.passages`): each story with a copy of itself
  cut by a tenth and with a word changed every 40 words, and random pairs of stories.

Each with compiled loops off (``NEARDUP_JIT=0``, the NumPy code) and on (``NEARDUP_JIT=1``; compiled once
before timing), checking that both give the same words and passages. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
SHARED = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))

from neardup.verify.passages import passages, words_of  # noqa: E402


def stories(path: Path, n: int) -> list[str]:
    out = []
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line).get("text", "")
            if text.strip():
                out.append(text)
            if len(out) >= n:
                break
    return out


def best(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None, help="JSONL with a text field")
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--pairs", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    corpus = args.corpus or SHARED / "reuters21578" / "docs.jsonl.gz"
    if not corpus.exists():
        sys.exit(f"no corpus at {corpus}: pass --corpus")
    texts = stories(corpus, args.docs)
    rng = np.random.default_rng(0)
    copies = []
    for t in texts:
        words = t[: int(len(t) * 0.9)].split(" ")
        words[::40] = ["changed"] * len(words[::40])
        copies.append(" ".join(words))
    n = len(texts)
    sets = {"as read": texts,
            "accented": [re.sub(r"\be", "é", t) for t in texts],
            "umlauts": [t.replace("ue", "ü").replace("ss", "ß") for t in texts]}
    half = args.pairs // 2
    a = np.concatenate([rng.integers(0, n, half), rng.integers(0, n, args.pairs - half)])
    b = np.concatenate([a[:half] + n, rng.integers(0, n, args.pairs - half)])
    rows = []
    for name, docs in sets.items():
        both = docs + [re.sub(r"\be", "é", c) if name == "accented" else c for c in copies]
        timings, results = {}, {}
        for jit in ("0", "1"):
            os.environ["NEARDUP_JIT"] = jit
            words_of(both[:50])
            passages(both, a[:200], b[:200])  # compiled (or loaded) before timing
            w = words_of(both)
            results[jit] = ([w.hashes, w.starts, w.ends, w.offsets], passages(both, a, b, words=w))
            timings[jit] = (best(lambda: words_of(docs), args.rounds), best(lambda: passages(both, a, b, words=w), args.rounds))
        (w0, p0), (w1, p1) = results["0"], results["1"]
        if not (all(np.array_equal(x, y) for x, y in zip(w0, w1)) and p0 == p1):
            sys.exit(f"{name}: the compiled loops disagree with the NumPy code")
        ascii_share = sum(t.isascii() for t in docs) / n
        rows.append((name, ascii_share, *(1e3 * x / n for x in (timings["0"][0], timings["1"][0])),
                     *(1e3 * x / args.pairs for x in (timings["0"][1], timings["1"][1])), sum(map(len, p1))))
    print(f"{n} stories of {corpus}, {args.pairs} pairs; ms per story (words) and per pair (passages), best of {args.rounds}\n")
    print("| stories | ASCII | words, NumPy | words, compiled | passages, NumPy | passages, compiled | passages found |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, share, w0_, w1_, p0_, p1_, found in rows:
        print(f"| {name} | {share:.0%} | {w0_:.3f} | {w1_:.3f} ({w0_ / w1_:.1f}x) | {p0_:.3f} | {p1_:.3f} ({p0_ / p1_:.1f}x) "
              f"| {found} |")


if __name__ == "__main__":
    main()
