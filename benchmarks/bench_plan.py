"""The candidate budget's plan on a corpus: the candidate pairs a document each LSH level proposes, counted as
``MinHash.plan`` counts them, and what the plan's former estimate (20k random pairs) saw of them.

Usage::

    python benchmarks/bench_plan.py CORPUS.jsonl [--sample 10000] [--seeds 1,2,3] [--budgets 5,20] [--json OUT]

For each seed: ``--sample`` seeded lines of CORPUS (JSONL with ``id`` and ``text``) are represented as the default
represents news (``method="minhash"``, character 5-grams, 128 permutations: what ``auto`` calibrates to on the
corpora of docs/speed.md), and every pair of the sample that an LSH level's bands propose is counted
(:meth:`neardup.methods.minhash.MinHash.level_rates`, what the plan counts). Per level:

* ``per doc``: the candidate pairs a document at the corpus's size, ``count * (N - 1) / (m * (m - 1))``;
* ``in 20k``: the collisions 20,000 random pairs would have met on average (the former estimate's sample);
* for each budget, the level the plan takes: the loosest whose ``per doc`` fits it (or the plan's floor of
  500,000 pairs in all).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from neardup import methods, pipeline
from neardup.config import DedupConfig
from neardup.io.read import read_records
from neardup.methods import minhash as minhash_method


def sample_lines(path: Path, n_lines: int, m: int, seed: int) -> list[dict]:
    """``m`` seeded lines of ``path`` (all of them when it has no more), parsed."""
    picked = set(np.random.default_rng(seed).choice(n_lines, min(m, n_lines), replace=False).tolist())
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for i, line in enumerate(fh) if i in picked]


def levels_of(path: Path, n_lines: int, m: int, seed: int, budgets: list[float]) -> dict:
    config = DedupConfig().replace(method="minhash", shingle__char=True, shingle__n=5)
    prep = pipeline.prepare(read_records(sample_lines(path, n_lines, m, seed)), config)
    size = int(np.count_nonzero(~prep.rep.empty))
    rows, planned = [], {}
    for lt, bands, r, per_doc in methods.get(config).level_rates(prep.rep):  # pairs a document of the sample
        per_doc *= (n_lines - 1) / (size - 1)  # ... and of the corpus it was drawn from
        rows.append({"level": lt, "bands": bands, "rows": r, "per_doc": per_doc,
                     "in_20k_random_pairs": 20_000 * per_doc * 2 / (n_lines - 1)})
        for budget in budgets:
            if budget not in planned and per_doc * n_lines <= max(budget * n_lines, minhash_method.PLAN_FLOOR):
                planned[budget] = lt
    return {"seed": seed, "sample": size, "levels": rows, "planned": {str(b): planned.get(b) for b in budgets}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--sample", type=int, default=minhash_method.PLAN_DOCS)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--budgets", default="5,20")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with open(args.corpus, "rb") as fh:
        n_lines = sum(1 for _ in fh)
    budgets = [float(b) for b in args.budgets.split(",")]
    results = [levels_of(args.corpus, n_lines, args.sample, int(s), budgets) for s in args.seeds.split(",")]
    print(f"{args.corpus}: {n_lines:,} documents, samples of {args.sample:,}; per doc (in 20k random pairs) by seed")
    print("| level | bands x rows | " + " | ".join(f"seed {r['seed']}" for r in results) + " |")
    print("| --- | --- |" + " --- |" * len(results))
    for i, level in enumerate(results[0]["levels"]):
        cells = [f"{r['levels'][i]['per_doc']:.2f} ({r['levels'][i]['in_20k_random_pairs']:.2f})" for r in results]
        print(f"| {level['level']} | {level['bands']} x {level['rows']} | " + " | ".join(cells) + " |")
    for b in budgets:
        print(f"planned at a budget of {b:g} a document: " + ", ".join(str(r["planned"][str(b)]) for r in results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
