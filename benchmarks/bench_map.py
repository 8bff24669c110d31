"""The map stage's character shingles: normalized strings against normalized code points, on real stories.

Run by hand from the repo root:

    python benchmarks/bench_map.py [--corpus FILE.jsonl] [--docs 20000] [--batch 2500] [--rounds 5]

Reads the first ``--docs`` stories of a JSONL corpus (default: the Reuters-21578 stories,
``../shared/data/reuters21578/docs.jsonl.gz``) and times, in one process, batch by batch as a map worker
takes them (best of ``--rounds``, compiled loops compiled before timing), the default method's character
5-gram sets two ways:

* ``strings``: each story normalized by :func:`neardup.text.normalize.normalize` (Python string methods),
  then :func:`neardup.text.shingle.shingle_many` of the normalized strings (what the map did before);
* ``code points``: :func:`neardup.text.normalize.normalized_code_points` (a compiled loop normalizes from
  code points: all of an ASCII story, the rest of another after its character-level steps in Python), then
  :func:`neardup.text.shingle.char_shingle_sets` (what ``Method.shingle`` does now);

checking that both give the same sets, for the stories as read and made non-ASCII (every word that starts
with "e" accented). The same for word 4-grams: :func:`neardup.text.normalize.normalize_words` and
:func:`neardup.text.shingle.shingle_words` (each word a Python string, hashed by xxhash) against
:func:`~neardup.text.normalize.normalized_code_points` and :func:`neardup.text.shingle.word_shingle_sets` (the
words hashed from the code points by a compiled XXH3). Also the MinHash signatures of the
sets (:func:`neardup.represent.minhash.signatures`) two ways, checked equal: rensa's kernel, then its rows
into an array (``NEARDUP_JIT=0``), and the compiled loop that reproduces rensa's sketch. Prints Markdown
tables, milliseconds per story.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
SHARED = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))

os.environ["NEARDUP_JIT"] = "1"  # the compiled loops on every batch, as on a map worker's
from neardup.config import NormalizeConfig, ShingleConfig  # noqa: E402
from neardup.represent.minhash import signatures  # noqa: E402
from neardup.text.normalize import normalize, normalize_words, normalized_code_points  # noqa: E402
from neardup.text.shingle import (ShingleSets, char_shingle_sets, shingle_many, shingle_words,  # noqa: E402
                                  word_shingle_sets)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_passages import best, stories  # noqa: E402  (reading stories, best of rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=SHARED / "reuters21578" / "docs.jsonl.gz")
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=2500)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if not args.corpus.exists():
        sys.exit(f"no corpus at {args.corpus} (set NEARDUP_SHARED_DATA or pass --corpus)")
    read = stories(args.corpus, args.docs)
    norm, shingles = NormalizeConfig(), ShingleConfig(n=5, char=True)

    def by_strings(texts: list[str]) -> list[ShingleSets]:
        return [shingle_many([normalize(t, norm) for t in texts[i : i + args.batch]], shingles,
                             batch_size=args.batch) for i in range(0, len(texts), args.batch)]

    def by_code_points(texts: list[str]) -> list[ShingleSets]:
        return [char_shingle_sets(*normalized_code_points(texts[i : i + args.batch], norm), shingles)
                for i in range(0, len(texts), args.batch)]

    accented = [re.sub(r"\be", "é", t) for t in read]
    print(f"{len(read)} stories from {args.corpus}, batches of {args.batch}, best of {args.rounds}\n")
    print("| stories | ASCII | strings (ms/story) | code points (ms/story) | speed-up |")
    print("| --- | --- | --- | --- | --- |")
    sets = None
    for name, texts in (("as read", read), ("accented", accented)):
        a, b = by_strings(texts), by_code_points(texts)  # compiles, and checks
        assert all(np.array_equal(x.values, y.values) and np.array_equal(x.offsets, y.offsets) for x, y in zip(a, b))
        sets = sets or b
        old, new = best(lambda: by_strings(texts), args.rounds), best(lambda: by_code_points(texts), args.rounds)
        ascii_share = sum(t.isascii() for t in texts) / len(texts)
        print(f"| {name} | {ascii_share:.0%} | {old / len(texts) * 1e3:.4f} | {new / len(texts) * 1e3:.4f} | "
              f"{old / new:.1f}x |")
    def words_by_strings(texts: list[str]) -> list[ShingleSets]:
        return [shingle_words([normalize_words(t, norm) for t in texts[i : i + args.batch]], 4)
                for i in range(0, len(texts), args.batch)]

    def words_by_code_points(texts: list[str]) -> list[ShingleSets]:
        return [word_shingle_sets(*normalized_code_points(texts[i : i + args.batch], norm), 4)
                for i in range(0, len(texts), args.batch)]

    print("\n| word 4-grams | strings, xxhash (ms/story) | code points, compiled XXH3 (ms/story) | speed-up |")
    print("| --- | --- | --- | --- |")
    for name, texts in (("as read", read), ("accented", accented)):
        a, b = words_by_strings(texts), words_by_code_points(texts)  # compiles, and checks
        assert all(np.array_equal(x.values, y.values) and np.array_equal(x.offsets, y.offsets) for x, y in zip(a, b))
        old = best(lambda: words_by_strings(texts), args.rounds)
        new = best(lambda: words_by_code_points(texts), args.rounds)
        print(f"| {name} | {old / len(texts) * 1e3:.4f} | {new / len(texts) * 1e3:.4f} | {old / new:.1f}x |")
    print("\n| MinHash signatures (128 permutations), sets as read | ms/story |\n| --- | --- |")
    timed = {}
    for name, jit in (("rensa's kernel, rows into an array", "0"), ("compiled loop", "1")):
        os.environ["NEARDUP_JIT"] = jit
        timed[name] = [signatures(s) for s in sets]  # compiles, and keeps the signatures to compare
        print(f"| {name} | {best(lambda: [signatures(s) for s in sets], args.rounds) / len(read) * 1e3:.4f} |")
    os.environ["NEARDUP_JIT"] = "1"
    assert all(np.array_equal(x, y) for x, y in zip(*timed.values())), "the compiled loop differs from rensa"


if __name__ == "__main__":
    main()
