"""What the estimate floor of character shingles skips: candidates and verified pairs at each floor, on the three
labelled Reuters days under every noise model of ``bench_defaults.py``.

Usage::

    python benchmarks/bench_estimate_floor.py [--floors 0.3,0.4,0.5] [--thresholds 0.4,0.6] [--presets all]

A candidate is verified only when its MinHash-estimated overlap reaches ``minhash.estimate_floor`` times the
threshold (``methods/minhash.py: CHAR_ESTIMATE_FLOOR``). A floor is free where it finds every pair the lowest
floor finds: the ``lost`` column counts the pairs of the first floor that a floor does not find (pairs by id,
character 5-grams, the threshold fixed so the floor is the only difference). Data as ``bench_defaults.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import neardup

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import ALL_PRESETS, DAYS, PRESETS, data_dir, noisy  # noqa: E402

from neardup.eval.loaders import load_any  # noqa: E402


def pairs_at(records: list[dict[str, str]], threshold: float, floor: float) -> tuple[set[tuple[str, str]], int]:
    """The verified pairs (by id) and the candidate count of character 5-grams at ``threshold`` and ``floor``."""
    res = neardup.dedup(records, method="minhash", shingle__char=True, shingle__n=5, threshold=threshold,
                        minhash__estimate_floor=floor)
    return {(a, b) for a, b, _ in res.pairs_by_id()}, int(res.summary["n_candidates"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--floors", default="0.3,0.4,0.5")
    ap.add_argument("--thresholds", default="0.4,0.6")
    ap.add_argument("--presets", default=",".join(p for p in PRESETS if p != "clean"),
                    help="comma-separated, or 'all' (nlpaug's need the nlpaug package)")
    args = ap.parse_args()
    floors = [float(x) for x in args.floors.split(",")]
    thresholds = [float(x) for x in args.thresholds.split(",")]
    presets = ALL_PRESETS if args.presets == "all" else tuple(args.presets.split(","))
    totals = {(t, f): [0, 0, 0] for t in thresholds for f in floors}  # pairs, lost, candidates
    print("| day | noise | threshold | " + " | ".join(f"floor {f}: pairs / lost / candidates" for f in floors) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in floors) + " |")
    for day, rel in DAYS.items():
        data = load_any(data_dir() / rel)
        for preset in presets:
            corpus = noisy(data, preset).corpus
            records = [{"id": i, "text": t} for i, t in zip(corpus.ids, corpus.texts)]
            for t in thresholds:
                found = [pairs_at(records, t, f) for f in floors]
                cells = []
                for f, (pairs, cands) in zip(floors, found):
                    lost = len(found[0][0] - pairs)
                    cells.append(f"{len(pairs)} / {lost} / {cands}")
                    for k, v in enumerate((len(pairs), lost, cands)):
                        totals[(t, f)][k] += v
                print(f"| {day} | {preset} | {t} | " + " | ".join(cells) + " |", flush=True)
    for t in thresholds:
        print(f"threshold {t}: " + "; ".join(f"floor {f}: {p} pairs, {lost} lost, {c} candidates"
                                            for f in floors for p, lost, c in [totals[(t, f)]]))


if __name__ == "__main__":
    main()
