"""Trained on real wire days: leave one day out on the three labelled Reuters days.

Run by hand from the repo root (HF_HUB_OFFLINE=1 is set here; nothing is downloaded):

    python benchmarks/bench_train_days.py [--work DIR] [--threads 2] [--conditions clean,ocr-heavy,nlpaug-ocr]
        [--copies 1] [--epochs 2] [--ce-epochs 2] [--neg-per-pos 1] [--hard-fraction 0.67] [--ce-neg-per-pos N] [--ce-hard-fraction F]
        [--ce-no-self-pairs] [--ce-pair-view text|diff] [--methods "rerank,bi-encoder fine-tuned"]
        [--train-only] [--reuse]

Protocol. The three exhaustively labelled days of ``../shared/data/reuters_days`` rotate: for each test
day, the models are trained on one other day and validated on the third (never on the test day):

    test 2-MAR-1987   train 19-OCT-1987   validate 31-MAR-1987
    test 31-MAR-1987  train 2-MAR-1987    validate 19-OCT-1987
    test 19-OCT-1987  train 31-MAR-1987   validate 2-MAR-1987

* Training data (``neardup train ... --data TRAIN_DAY --val-data VAL_DAY --noisy-copies N``): every
  labelled pair of the training day (positives; the read negatives: templated notices, same-event
  reports, updates, ...) and N generator-made noisy copies of every story (OCR, aggregator, typo and
  spam noise, each copy keeping its original's labelled negatives).
* Models: the packaged all-MiniLM-L6-v2 off the shelf; the bi-encoder fine-tuned from it (2 epochs, 128
  tokens); a cross-encoder started from the fine-tuned bi-encoder (hard negatives mined with it, aligned
  pairs, 2 epochs, 128-token pairs), re-ranking the bi-encoder's 20 nearest neighbours at cosine >= 0.9
  (``--method rerank``, floor and threshold tuned); multiview with the trained views
  (``--views word,char,biencoder[,crossencoder]``) beside word and character shingles alone and together.
  Bi-encoder methods search each document's 20 nearest neighbours.
* Conditions: each day clean and made noisy by two noise models (this repository's ``ocr-heavy`` generator
  and nlpaug's OCR augmenter, ``nlpaug-ocr``, where nlpaug is installed). Every method's settings
  (threshold; multiview: the rule and its fitted model) are chosen on the validation day in the same
  condition and applied unchanged to the test day.

Writes ``WORK/results.json`` and prints one table per condition (test ARI per day and the mean).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))
SHARED = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))

from bench_train import log, train_models  # noqa: E402

from neardup.train.common import TrainConfig, set_threads  # noqa: E402
from neardup.verify.crossencoder import PAIR_VIEWS  # noqa: E402

DAYS = ("2-MAR-1987", "31-MAR-1987", "19-OCT-1987")
#: (test, train, validation) per fold.
FOLDS = (("2-MAR-1987", "19-OCT-1987", "31-MAR-1987"),
         ("31-MAR-1987", "2-MAR-1987", "19-OCT-1987"),
         ("19-OCT-1987", "31-MAR-1987", "2-MAR-1987"))


def day_path(day: str) -> Path:
    root = SHARED / "reuters_days"
    return root / "pair_labels.jsonl" if day == DAYS[0] else root / day / "pair_labels.jsonl"


def train_fold(work: Path, test: str, train: str, val: str, args: argparse.Namespace) -> dict[str, Any]:
    """The fold's bi-encoder and cross-encoder (re-used when a complete report exists and --reuse)."""
    fold = work / f"test-{test}"
    bi_dir, ce_dir = fold / "bi", fold / "ce"
    common = dict(data=(str(day_path(train)),), val_data=(str(day_path(val)),), copies=args.copies, seed=args.seed,
                  threads=args.threads, progress=True, evaluate=False)
    if args.neg_per_pos is not None:
        common["neg_per_pos"] = args.neg_per_pos
    if args.hard_fraction is not None:
        common["hard_fraction"] = args.hard_fraction
    ce_common = dict(common)
    if args.ce_neg_per_pos is not None:
        ce_common["neg_per_pos"] = args.ce_neg_per_pos
    if args.ce_hard_fraction is not None:
        ce_common["hard_fraction"] = args.ce_hard_fraction
    if args.ce_no_self_pairs:
        ce_common["self_pairs"] = False
    if args.ce_pair_view != "text":
        ce_common["pair_view"] = args.ce_pair_view
    reports = train_models({
        "biencoder": TrainConfig(out=str(bi_dir), epochs=args.epochs, max_seq_length=128, **common),
        "crossencoder": TrainConfig(out=str(ce_dir), epochs=args.ce_epochs, max_seq_length=args.ce_seq,
                                    candidates=str(bi_dir), **ce_common)}, args.reuse, tag=f"fold test={test}: ")
    return {"dir": str(fold), "bi": str(bi_dir), "ce": str(ce_dir), "reports": reports}


#: The methods compared, in table order: (name, DedupConfig.replace keywords; MODEL/CE stand for the fold's models).
METHODS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("word 4-grams", {"method": "minhash", "shingle__char": False, "shingle__n": 4}),
    ("char 5-grams", {"method": "minhash", "shingle__char": True, "shingle__n": 5}),
    ("multiview word+char", {"method": "multiview", "multiview__views": ("word", "char")}),
    ("bi-encoder off the shelf", {"method": "biencoder", "embed__k": 20}),
    ("bi-encoder fine-tuned", {"method": "biencoder", "embed__k": 20, "embed__model": "MODEL"}),
    ("rerank", {"method": "rerank", "embed__k": 20, "embed__model": "MODEL", "embed__cross_model": "CE",
                "embed__rerank_floor": 0.9}),
    ("multiview + bi-encoder", {"method": "multiview", "multiview__views": ("word", "char", "biencoder"),
                                "embed__k": 20, "embed__model": "MODEL"}),
    ("multiview + bi-encoder + cross-encoder", {"method": "multiview", "embed__k": 20, "embed__model": "MODEL",
                                                "embed__cross_model": "CE",
                                                "multiview__views": ("word", "char", "biencoder", "crossencoder")}),
)
HASHING = ("word 4-grams", "char 5-grams")


def condition(day: str, cond: str) -> Any:
    """The day's labelled pairs, its texts clean or made noisy by ``cond`` (bench_defaults' noise: this
    repository's generator, or nlpaug)."""
    from bench_defaults import noisy

    from neardup.eval.evaluate import LabelledData, load_labelled
    from neardup.io.read import Corpus

    data = load_labelled(day_path(day))
    texts = data.corpus.texts if cond == "clean" else noisy(data, cond).corpus.texts
    corpus = Corpus(ids=list(data.corpus.ids), texts=list(texts), source=f"{day}/{cond}")
    return LabelledData(corpus=corpus, pairs=data.pairs, name=f"{day}/{cond}")


def evaluate(args: argparse.Namespace, folds: list[tuple[str, str, str]], trained: dict[str, Any]) -> None:
    from neardup.config import DedupConfig
    from neardup.eval.tune import tune

    conds = [c.strip() for c in args.conditions.split(",") if c.strip()]
    if any(c.startswith("nlpaug") for c in conds):
        try:
            import nlpaug  # noqa: F401
        except ImportError:
            log("nlpaug not installed: skipping its condition")
            conds = [c for c in conds if not c.startswith("nlpaug")]
    out_file = args.work / "results.json"
    results: dict[str, Any] = json.loads(out_file.read_text()) if args.reuse and out_file.exists() else {}
    results.setdefault("rows", {})
    results["settings"] = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    results["training"] = {test: {k: {x: rep.get(x) for x in ("steps", "total_steps", "stopped", "seconds_train",
                                                               "seconds_total", "loss_first", "loss_last", "pairs")}
                                  | {"data": rep.get("data")} for k, rep in t["reports"].items()}
                           for test, t in trained.items()}
    for cond in conds:
        for test, train, val in folds:
            models = trained[test]
            vdata, tdata = condition(val, cond), condition(test, cond)
            for name, changes in METHODS:
                if args.methods and name not in args.methods:
                    continue
                key = f"{cond}|{test}|{name}"
                if key in results["rows"]:
                    continue
                fill = {"MODEL": models["bi"], "CE": models["ce"]}
                cfg = DedupConfig().replace(**{k: fill.get(v, v) if isinstance(v, str) else v for k, v in changes.items()})
                t0 = time.time()
                r = tune(vdata, tdata, cfg)
                m = r["test"]
                results["rows"][key] = {"condition": cond, "test": test, "train": train, "validation": val, "method": name,
                                        "params": {k: v for k, v in r["params"].items()},
                                        "validation_ari": round(r["validation"]["ari"], 4),
                                        **{k: round(m[k], 4) for k in ("ari", "precision", "recall", "f1")},
                                        "seconds": round(time.time() - t0, 1)}
                log(f"{cond} test {test} {name}: val ARI {r['validation']['ari']:.3f} -> test ARI {m['ari']:.3f} "
                    f"(P {m['precision']:.3f} R {m['recall']:.3f}; {r['params']}) {time.time() - t0:.0f}s")
                out_file.write_text(json.dumps(results, indent=2, default=str))
    print(table(results["rows"], conds, [f[0] for f in folds]))
    print(f"-> {out_file}")


def table(rows: dict[str, Any], conds: list[str], tests: list[str]) -> str:
    """Markdown: one row per (condition, method), test ARI per test day and the mean."""
    lines = ["| condition | method | " + " | ".join(f"test {t}" for t in tests) + " | mean |",
             "| --- | --- | " + " | ".join("---" for _ in tests) + " | --- |"]
    for cond in conds:
        for name, _ in METHODS:
            vals = [rows.get(f"{cond}|{t}|{name}", {}).get("ari") for t in tests]
            if all(v is None for v in vals):
                continue
            got = [v for v in vals if v is not None]
            cells = " | ".join("" if v is None else f"{v:.3f}" for v in vals)
            lines.append(f"| {cond} | {name} | {cells} | {sum(got) / len(got):.3f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("NEARDUP_BENCH_DIR", "/tmp/neardup-bench")) / "train-days")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--copies", type=int, default=1, help="noisy copies of every training story (train --noisy-copies)")
    ap.add_argument("--epochs", type=int, default=2, help="bi-encoder epochs")
    ap.add_argument("--ce-epochs", type=int, default=2, help="cross-encoder epochs")
    ap.add_argument("--ce-seq", type=int, default=128, help="cross-encoder tokens per pair")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--neg-per-pos", type=float, default=None, help="negative pairs per positive (train --neg-per-pos)")
    ap.add_argument("--hard-fraction", type=float, default=None, help="share of hard negatives (train --hard-fraction)")
    ap.add_argument("--ce-neg-per-pos", type=float, default=None, help="the cross-encoder's alone (default: as the bi-encoder)")
    ap.add_argument("--ce-hard-fraction", type=float, default=None, help="the cross-encoder's alone (default: as the bi-encoder)")
    ap.add_argument("--ce-no-self-pairs", action="store_true",
                    help="the cross-encoder's positives: real duplicates only, no story paired with its own noisy copy "
                         "(train --no-self-pairs)")
    ap.add_argument("--ce-pair-view", default="text", choices=PAIR_VIEWS,
                    help="what the cross-encoder reads of a pair (train crossencoder --pair-view)")
    ap.add_argument("--conditions", default="clean,ocr-heavy,nlpaug-ocr")
    ap.add_argument("--methods", type=lambda v: [m.strip() for m in v.split(",") if m.strip()], default=None,
                    help="evaluate only these rows, by name (comma-separated; default: all): "
                         + "; ".join(name for name, _ in METHODS))
    ap.add_argument("--folds", default=",".join(f[0] for f in FOLDS), help="test days to run")
    ap.add_argument("--train-only", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="re-use trained models with a complete report")
    args = ap.parse_args()
    unknown = sorted(set(args.methods or ()) - {name for name, _ in METHODS})
    if unknown:
        ap.error(f"--methods: no row named {', '.join(unknown)}")
    log(f"torch threads: {set_threads(args.threads)}")
    folds = [f for f in FOLDS if f[0] in args.folds.split(",")]
    trained = {test: train_fold(args.work, test, train, val, args) for test, train, val in folds}
    if args.train_only:
        return
    evaluate(args, folds, trained)


if __name__ == "__main__":
    main()
