"""The compiled loops of the map and evidence stages, each alone in one process: normalizing, character
5-grams, MinHash signatures and the evidence's shared passages, on the first ``--n`` stories of a JSONL corpus
in batches of 2,500 (the chunked engine's), best of ``--rounds``. Each ``--src NAME=SRC`` (another checkout's
``src``) is timed in a process of its own, in alternating rounds, beside this checkout (``here``).

Usage::

    python benchmarks/bench_loops.py --corpus corpus-200000.jsonl [--n 20000] [--rounds 5]
        [--src before=/path/to/other/checkout/src]

The pairs whose passages are timed are those the default method verifies among the stories (found once, with
this checkout). Every checkout's outputs are compared with the first's (``same``: equal to the bit).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOOPS = ("normalize", "char 5-grams", "MinHash signatures", "shared passages")


def _digest(*arrays) -> str:  # type: ignore[no-untyped-def]
    h = hashlib.sha256()
    for a in arrays:
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def first_texts(corpus: str, n: int) -> list[str]:
    """The texts of the corpus's first ``n`` documents (with the checkout first on ``sys.path``)."""
    from neardup.config import ReadConfig
    from neardup.io.read import iter_batches

    texts: list[str] = []
    for batch in iter_batches(corpus, ReadConfig(), 2500):
        texts += [d.text for d in batch]
        if len(texts) >= n:
            break
    return texts[:n]


def measure(corpus: str, n: int, rounds: int, pairs_file: str) -> dict[str, dict[str, object]]:
    """In this process (the checkout first on ``sys.path``): each loop's best seconds and its outputs' digest."""
    import numpy as np

    from neardup.config import NormalizeConfig, ShingleConfig
    from neardup.represent.minhash import signatures
    from neardup.text.normalize import normalized_code_points
    from neardup.text.shingle import char_shingle_sets
    from neardup.verify.passages import passage_table

    texts = first_texts(corpus, n)
    batches = [texts[i : i + 2500] for i in range(0, len(texts), 2500)]
    pairs = np.load(pairs_file)
    state: dict[str, object] = {}

    def normalize() -> list:  # type: ignore[type-arg]
        return [normalized_code_points(b, NormalizeConfig()) for b in batches]

    def grams() -> list:  # type: ignore[type-arg]
        char5 = ShingleConfig(n=5, char=True)
        return [char_shingle_sets(u, lens, char5) for u, lens in state["units"]]  # type: ignore[attr-defined]

    def sketch() -> list:  # type: ignore[type-arg]
        return [signatures(s, 128, 1) for s in state["sets"]]  # type: ignore[attr-defined]

    docs, inverse = np.unique(np.concatenate([pairs["left"], pairs["right"]]), return_inverse=True)
    paired = [texts[d] for d in docs.tolist()]  # as the evidence stage gives them: the texts of the pairs only

    def passages():  # type: ignore[no-untyped-def]
        return passage_table(paired, inverse[: pairs["left"].size], inverse[pairs["left"].size :])

    out: dict[str, dict[str, object]] = {}
    for name, fn in zip(LOOPS, (normalize, grams, sketch, passages)):
        result = fn()  # compiled (or loaded from the cache) before the timed rounds
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            result = fn()
            best = min(best, time.perf_counter() - t0)
        if name == "normalize":
            state["units"] = result
            digest = _digest(*(a for pair in result for a in pair))
        elif name == "char 5-grams":
            state["sets"] = result
            digest = _digest(*(a for s in result for a in (s.values, s.offsets)))
        elif name == "MinHash signatures":
            digest = _digest(*result)
        else:
            digest = _digest(result.pair, result.left_start, result.left_end, result.right_start, result.right_end)
        out[name] = {"seconds": best, "digest": digest}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--src", action="append", default=[], help="NAME=SRC: another checkout's src to time")
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # a child: the pairs file; prints its figures as JSON
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.corpus, args.n, args.rounds, args.measure)))
        return
    import tempfile

    import numpy as np

    sources = {"here": str(HERE.parent / "src"), **dict(s.split("=", 1) for s in args.src)}
    with tempfile.TemporaryDirectory() as tmp:
        pairs_file = os.path.join(tmp, "pairs.npz")
        sys.path.insert(0, sources["here"])
        from neardup.api import dedup

        result = dedup(first_texts(args.corpus, args.n), evidence=False)
        np.savez(pairs_file, left=result._left, right=result._right)
        figures: dict[str, list[dict[str, dict[str, object]]]] = {name: [] for name in sources}
        for _ in range(2):  # two alternating passes, each with its own best of --rounds
            for name, src in sources.items():
                env = dict(os.environ, PYTHONPATH=src)
                run = subprocess.run([sys.executable, __file__, "--corpus", args.corpus, "--n", str(args.n),
                                      "--rounds", str(args.rounds), "--measure", pairs_file],
                                     env=env, capture_output=True, text=True, check=True)
                figures[name].append(json.loads(run.stdout.strip().splitlines()[-1]))
    first = next(iter(sources))
    print(f"{args.n} stories, batches of 2,500, best of {args.rounds} rounds in each of 2 passes "
          f"({int(result._left.size)} pairs for the passages)\n")
    print("| loop | " + " | ".join(sources) + " |")
    print("| --- |" + " --- |" * len(sources))
    for loop in LOOPS:
        cells = []
        for name in sources:
            seconds = min(f[loop]["seconds"] for f in figures[name])  # type: ignore[type-var]
            same = all(f[loop]["digest"] == figures[first][0][loop]["digest"] for f in figures[name])
            cells.append(f"{seconds:.3f} s" + ("" if same else " (outputs differ)"))
        print(f"| {loop} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
