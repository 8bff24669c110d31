"""``neardup tune`` on real labelled news: tune on one Reuters day, test on the other two, clean and noisy.

Usage::

    python benchmarks/bench_tune.py [--work /tmp/neardup-bench-tune] [--presets ocr-heavy,adversarial-spam]
                                    [--budget 10m] [--seed 0]

Data (``$NEARDUP_SHARED_DATA`` or ``../shared/data``): ``reuters_days/`` -- three exhaustively labelled
days (2-MAR-1987, the validation day; 31-MAR-1987 and 19-OCT-1987, the test days, pooled). Each noisy
variant noises every document of every day with one preset of :mod:`neardup.synth` (seeded per document,
labels kept), so a duplicate pair becomes two independently damaged copies of one story.

For each variant it runs, as a user would (the command is printed)::

    neardup tune VAL.jsonl TEST1.jsonl TEST2.jsonl --out WORK/VARIANT/chosen.json --overwrite -f json -q

and prints one table row: the chosen configuration, validation and test ARI of the choice and of the
calibrated default (``-m auto``, untuned; on test calibrated on the test days themselves), the size of
the space, what was tried, and the seconds. Noisy files and chosen configurations go to ``--work``
(never into the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

DAYS = ("docs.jsonl", "31-MAR-1987/docs.jsonl", "19-OCT-1987/docs.jsonl")


def data_dir() -> Path:
    root = Path(os.environ.get("NEARDUP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    return root / "reuters_days"


def noisy_days(root: Path, preset: str, seed: int, work: Path) -> list[Path]:
    """Each day with every text noised by ``preset`` (ids and labels kept)."""
    from neardup.synth import apply_noise

    out = []
    for day in DAYS:
        target = work / preset / (day.replace("/", "_"))
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(root / day, encoding="utf-8") as src, open(target, "w", encoding="utf-8") as dst:
            for line in src:
                rec = json.loads(line)
                rec["text"] = apply_noise(rec["text"], preset, seed, doc_id=str(rec["id"])).text
                dst.write(json.dumps(rec) + "\n")
        out.append(target)
    return out


def tune(files: list[Path], chosen: Path, budget: str | None) -> tuple[dict, float, list[str]]:
    cmd = ["neardup", "tune", *map(str, files), "--out", str(chosen), "--overwrite", "-f", "json", "-q"]
    if budget:
        cmd += ["--budget", budget]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    return json.loads(proc.stdout), time.perf_counter() - t0, cmd


def describe(params: dict) -> str:
    unit = ""
    if "ngram" in params:
        unit = f"{'char' if params.get('char') else 'word'} {params['ngram']}-grams, "
    rule = ", ".join(f"{k} {v}" for k, v in params.items() if k in ("rule", "lsh_threshold", "min_collisions"))
    return (f"{params['method']} {unit}{params.get('verify', '')} {params['cluster']} t={params['threshold']}"
            + (f" ({rule})" if rule else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/neardup-bench-tune"))
    ap.add_argument("--presets", default="ocr-heavy,adversarial-spam")
    ap.add_argument("--budget", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    root = data_dir()
    if not (root / DAYS[0]).exists():
        sys.exit(f"labelled Reuters days not found under {root}")
    variants = [("clean", [root / d for d in DAYS])]
    variants += [(p, noisy_days(root, p, args.seed, args.work)) for p in args.presets.split(",") if p]
    print("| data | chosen (tuned on 2-MAR) | val ARI tuned / default | test ARI tuned / default "
          "(31-MAR + 19-OCT) | space / tried | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, files in variants:
        (args.work / name).mkdir(parents=True, exist_ok=True)
        res, seconds, cmd = tune(files, args.work / name / "chosen.json", args.budget)
        print(f"<!-- {shlex.join(cmd)} -->", file=sys.stderr)
        s, d = res["search"], res["default"]
        print(f"| {name} | {describe(res['params'])} | {res['validation']['ari']:.3f} / {d['validation']['ari']:.3f} | "
              f"{res['test']['ari']:.3f} / {d['test']['ari']:.3f} | {s['space_size']:,} / {s['points_tried']:,} "
              f"({s['cells_tried']} cells) | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
