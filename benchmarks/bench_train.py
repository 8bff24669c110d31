"""Does training pay? Off-the-shelf bi-encoder vs fine-tuned bi-encoder vs cross-encoder re-ranking.

Run by hand from the repo root (HF_HUB_OFFLINE=1 is set here; nothing is downloaded):

    python benchmarks/bench_train.py [--work DIR] [--max-sources 300] [--bbc-val 120]
        [--bbc-test 120] [--threads N] [--lr 2e-5] [--epochs 1] [--ce-epochs 3] [--max-minutes M] [--reuse]
        [--neighbours FRACTION] [--ce-mine encoder|minhash|both|none] [--no-align] [--ce-from-packaged]

Protocol (thresholds are always chosen on a validation set and applied unchanged to the test set):

* Training data: Reuters-21578 texts (``../shared/data/reuters21578``) minus every story of the Reuters
  validation day (its ids are Reuters NEWIDs) and minus near-duplicates of them (``--exclude``), made
  into clusters by the noise generator (``--synthetic``: source + 1-3 noisy copies of mixed presets +
  hard negatives). No BBC text is used for training. ``--neighbours FRACTION`` (default 0, off) draws that
  share of the sources together with their real nearest neighbours in the file (template siblings and
  other similar-but-not-duplicate stories; ``neardup train --neighbours``), each pair an explicit hard
  negative and one split group; the day's stories and their near-duplicates are excluded as before.
* Test set 1, noisy BBC: BBC articles (real duplicates among them removed) are split by source into
  validation (``--bbc-val`` sources) and test (``--bbc-test`` sources); each source is a singleton
  (probability 0.5) or a cluster with 1-3 noisy copies, and gets a hard negative with probability 0.5.
  Tuned on the BBC validation split. Validation and test are the same size by default: a threshold
  tuned on a smaller split transfers badly, because a bigger set has more close non-duplicate pairs
  (measured with a 60-source validation split: fine-tuned bi-encoder test ARI .744 against .852 at the
  test set's own best threshold; with 120 sources .877, equal to it).
* Test set 2, the Reuters day (``../shared/data/reuters_days``: 565 real stories, 20 labelled
  duplicate pairs, real hard negatives). Tuned on the held-out validation split of the (synthetic,
  Reuters) training data.
* Test sets 3 and 4, the Reuters day tuned on itself: split in two halves that no duplicate and no
  5-gram link crosses (``neardup online split``'s component split); tuned on one half, tested on the
  other, both ways.
* Methods: ``biencoder`` with the packaged all-MiniLM-L6-v2 (off the shelf) and with the fine-tuned
  model (1 epoch, lr 2e-5); ``rerank``: the fine-tuned bi-encoder's 20 nearest neighbours above a cosine
  floor (candidates: the highest floor keeping 98% of the validation duplicate pairs) re-scored by the
  trained cross-encoder (started from the fine-tuned bi-encoder's weights, 3 epochs, lr 3e-5, head 1e-3,
  256-token pairs, aligned on a shared opening, hard negatives mined with the fine-tuned bi-encoder:
  ``--ce-from-packaged``, ``--ce-mine``, ``--no-align``); a pair is kept
  when its cosine reaches a floor and its probability a threshold, both chosen on validation.
  Embeddings use 512 tokens per text, as the pipeline does. "oracle" = best threshold on the test set
  itself (an upper bound, for context only).

Writes ``WORK/results.json`` and prints a table. Embeddings are cached in ``WORK/emb`` (``--reuse``
also re-uses trained models whose report is complete).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
SHARED = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))

from neardup.eval.evaluate import LabelledData, load_labelled  # noqa: E402
from neardup.represent.transformer import default_model_path  # noqa: E402
from neardup.train.common import TrainConfig, prepare_data, read_report, set_threads  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def make_data(work: Path, bbc_val: int, bbc_test: int, seed: int) -> dict[str, Path]:
    """Reuters training texts (the day's stories removed) and the noisy BBC validation/test splits."""
    from neardup.eval.benchsets import dedup_sources, load_source
    from neardup.synth import derive_seed
    from neardup.train.synthetic import SyntheticConfig, make_clusters

    work.mkdir(parents=True, exist_ok=True)
    day = SHARED / "reuters_days" / "docs.jsonl"
    out = {"day": day, "reuters": work / "reuters_train_texts.jsonl", "bbc_val": work / "bbc_val.jsonl",
           "bbc_test": work / "bbc_test.jsonl"}
    if not out["reuters"].exists():
        day_ids = {json.loads(line)["id"] for line in open(day, encoding="utf-8")}
        rows = []
        with gzip.open(SHARED / "reuters21578" / "docs.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if r["id"] in day_ids or str(r.get("date", "")).startswith("2-MAR-1987"):
                    continue
                rows.append({"id": r["id"], "text": r["text"]})
        write_jsonl(out["reuters"], rows)
        log(f"reuters training texts: {len(rows)} (the day's {len(day_ids)} stories removed)")
    if not out["bbc_test"].exists():
        docs, _ = load_source("bbc", SHARED)
        kept, info = dedup_sources(docs)
        order = list(kept)
        random.Random(derive_seed(seed, "bbc-split")).shuffle(order)
        cfg = SyntheticConfig(copies=(1, 3), p_hard=0.5, p_singleton=0.5)
        for name, part in (("bbc_val", order[:bbc_val]), ("bbc_test", order[bbc_val : bbc_val + bbc_test])):
            recs = make_clusters([d.id for d in part], [d.text for d in part], seed=seed, config=cfg, tag=name)
            sizes: dict[str, int] = {}
            for r in recs:
                sizes[r["cluster"]] = sizes.get(r["cluster"], 0) + 1
            rows = [{"id": r["id"], "text": r["text"], "cluster": r["cluster"] if sizes[r["cluster"]] > 1 else None,
                     "role": r["role"], "ops": r["ops"]} for r in recs]
            random.Random(derive_seed(seed, "order", name)).shuffle(rows)
            write_jsonl(out[name], rows)
            log(f"{name}: {len(rows)} docs from {len(part)} BBC sources ({info['dropped']} real duplicates removed first)")
    return out


def embeddings(tag: str, model_path: str | None, data: LabelledData, work: Path, cache: dict) -> np.ndarray:
    from neardup.train.biencoder import load_sentence_transformer
    from neardup.train.evaluate import encode_texts

    f = work / "emb" / f"{tag}--{data.name}.npy"
    if f.exists():
        return np.load(f)
    if tag not in cache:
        cache.clear()
        cache[tag] = load_sentence_transformer(model_path)
    t0 = time.time()
    emb = encode_texts(cache[tag], data.corpus.texts, max_tokens=512)
    log(f"embedded {data.name} with {tag}: {len(emb)} docs in {time.time() - t0:.0f}s")
    f.parent.mkdir(parents=True, exist_ok=True)
    np.save(f, emb)
    return emb


def train_models(cfgs: dict[str, TrainConfig], reuse: bool, tag: str = "") -> dict[str, Any]:
    """Train each model (``biencoder`` / ``crossencoder``: its config), in order; with ``reuse``, a folder
    whose report is complete is re-used. Exits when a run was interrupted (its checkpoint stays)."""
    import neardup.train as T

    reports: dict[str, Any] = {}
    for name, cfg in cfgs.items():
        prev = read_report(cfg.out)
        if reuse and prev and prev.get("complete"):
            reports[name] = prev
            log(f"re-using {cfg.out}")
            continue
        t0 = time.time()
        reports[name] = (T.train_biencoder if name == "biencoder" else T.train_crossencoder)(cfg, log=log)
        if reports[name]["stopped"] == "interrupted":
            sys.exit(f"{name} interrupted at step {reports[name]['steps']} (checkpoint in {cfg.out}/checkpoints)")
        log(f"{tag}trained {name} in {(time.time() - t0) / 60:.1f} min")
    return reports


def short(m: dict[str, Any]) -> dict[str, Any]:
    keys = ("ari", "precision", "recall", "f1", "threshold", "n_pred_pairs", "n_scored", "seconds_scoring", "n_docs")
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in m.items() if k in keys}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("NEARDUP_BENCH_DIR", "/tmp/neardup-bench")) / "train")
    ap.add_argument("--max-sources", type=int, default=300)
    ap.add_argument("--bbc-val", type=int, default=120)
    ap.add_argument("--bbc-test", type=int, default=120)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--lr", type=float, default=None, help="bi-encoder learning rate (default 2e-5)")
    ap.add_argument("--ce-lr", type=float, default=None, help="cross-encoder learning rate (default 3e-5)")
    ap.add_argument("--epochs", type=int, default=1, help="bi-encoder epochs")
    ap.add_argument("--ce-epochs", type=int, default=3, help="cross-encoder epochs")
    ap.add_argument("--loss", default="online-contrastive")
    ap.add_argument("--max-minutes", type=float, default=None, help="budget of each training run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reuse", action="store_true", help="re-use trained models with a complete report")
    ap.add_argument("--ce-mine", default=None, help="cross-encoder hard-negative mining (train --mine; default "
                    "encoder: the fine-tuned bi-encoder's neighbours) | minhash | both | none")
    ap.add_argument("--ce-from-packaged", action="store_true", help="start the cross-encoder from the packaged model "
                    "(train crossencoder --base PACKAGED) instead of the fine-tuned bi-encoder it re-ranks (the default)")
    ap.add_argument("--no-align", action="store_true", help="train the cross-encoder on unaligned pairs (train --no-align)")
    ap.add_argument("--neighbours", type=float, default=0.0,
                    help="share of training sources drawn with their real neighbours (0 = off; train --neighbours)")
    ap.add_argument("--hard-kinds", default=None, help="generated hard negatives, comma-separated (train --hard-kinds)")
    args = ap.parse_args()
    work: Path = args.work
    log(f"torch threads: {set_threads(args.threads)}")
    paths = make_data(work, args.bbc_val, args.bbc_test, args.seed)
    bi_dir, ce_dir = work / f"bi-{args.loss}", work / "ce"
    common = dict(data=str(paths["reuters"]), synthetic=True, max_sources=args.max_sources, exclude=(str(paths["day"]),),
                  seed=args.seed, threads=args.threads, progress=True, neighbours=args.neighbours,
                  hard_kinds=tuple(args.hard_kinds.split(",")) if args.hard_kinds else None)
    bi_cfg = TrainConfig(out=str(bi_dir), loss=args.loss, lr=args.lr, epochs=args.epochs, max_seq_length=128, max_minutes=args.max_minutes, **common)
    ce_cfg = TrainConfig(out=str(ce_dir), lr=args.ce_lr, epochs=args.ce_epochs, max_seq_length=256, candidates=str(bi_dir), max_minutes=args.max_minutes,
                         mine=args.ce_mine, align_pairs=not args.no_align,
                         base=str(default_model_path()) if args.ce_from_packaged else None, **common)
    reports = train_models({"biencoder": bi_cfg, "crossencoder": ce_cfg}, args.reuse)

    # evaluation sets: (validation, test)
    _, reuters_val = prepare_data(bi_cfg, log)
    sets = {
        "bbc-noisy": (load_labelled(paths["bbc_val"]), load_labelled(paths["bbc_test"])),
        "reuters-day": (reuters_val.labelled("reuters-synthetic-val"), load_labelled(paths["day"])),
    }
    sets["bbc-noisy"][0].name, sets["bbc-noisy"][1].name = "bbc-val", "bbc-test"
    sets["reuters-day"][1].name = "reuters-day"
    # The real day tuned on itself: its two halves (no duplicate or n-gram link crosses them), each
    # half the validation of the other, as every other Reuters-day figure in the README is made.
    halves = work / "reuters_day_a.jsonl", work / "reuters_day_b.jsonl"
    if not halves[1].exists():
        from neardup.online.evaluate import split_components

        log(f"reuters day halves: {split_components(paths['day'], *halves)}")
    day_a, day_b = load_labelled(halves[0]), load_labelled(halves[1])
    day_a.name, day_b.name = "reuters-day-a", "reuters-day-b"
    sets["reuters-day A->B"] = (day_a, day_b)
    sets["reuters-day B->A"] = (day_b, day_a)
    from neardup.train.evaluate import floor_for_recall, rerank_candidates, tune_biencoder, tune_rerank
    from neardup.verify.crossencoder import CrossEncoderScorer

    cache: dict = {}
    results: dict[str, Any] = {"settings": vars(args) | {"work": str(work)},
                               "training": {k: {x: reports[k].get(x) for x in ("steps", "total_steps", "stopped",
                                                                                "seconds_train", "seconds_total",
                                                                                "validation_before", "validation_after",
                                                                                "pairs", "loss_first", "loss_last")}
                                            | {"data": {x: y for x, y in (reports[k].get("data") or {}).items()
                                                        if x != "neighbour_pairs"}}
                                            for k in reports}, "sets": {}}
    models = {"off-the-shelf": None, "fine-tuned": str(bi_dir)}
    embs: dict[tuple[str, str], np.ndarray] = {}
    for tag, path in models.items():
        for sname, (val, test) in sets.items():
            for d in (val, test):
                embs[(tag, d.name)] = embeddings(tag, path, d, work, cache)
    cache.clear()
    scorer = CrossEncoderScorer(ce_dir)

    def score_pairs(items: list[tuple[str, str]]) -> np.ndarray:
        return scorer.score(items, batch_size=16)

    for sname, (val, test) in sets.items():
        row: dict[str, Any] = {}
        for tag in models:
            r = tune_biencoder(val, embs[(tag, val.name)], test, embs[(tag, test.name)])
            oracle = tune_biencoder(test, embs[(tag, test.name)])["validation"]
            row[tag] = {"validation": short(r["validation"]), "test": short(r["test"]), "test_oracle": short(oracle)}
            log(f"{sname} {tag}: val ARI {r['validation']['ari']:.4f} @ {r['threshold']:.2f} -> test ARI "
                f"{r['test']['ari']:.4f} (oracle {oracle['ari']:.4f} @ {oracle['threshold']:.2f})")
        femb_val, femb_test = embs[("fine-tuned", val.name)], embs[("fine-tuned", test.name)]
        floor = floor_for_recall(val, femb_val, 0.98, k=20)
        cv = rerank_candidates(val, femb_val, score_pairs, floor, k=20)
        ct = rerank_candidates(test, femb_test, score_pairs, floor, k=20)
        r = tune_rerank(val, cv, test, ct)
        oracle = tune_rerank(test, ct)["validation"]
        row["rerank"] = {"loosest_floor": floor, "floor": r["floor"], "validation": short(r["validation"]),
                         "test": short(r["test"]), "test_oracle": short(oracle) | {"floor": oracle["floor"]}}
        log(f"{sname} rerank (candidates: cosine >= {floor:.2f}; chosen floor {r['floor']:.2f}, CE threshold "
            f"{r['threshold']:.3f}): val ARI {r['validation']['ari']:.4f} -> test ARI "
            f"{r['test']['ari']:.4f} (oracle {oracle['ari']:.4f}); scored {cv.left.size}+{ct.left.size} pairs in "
            f"{cv.seconds_scoring + ct.seconds_scoring:.0f}s")
        results["sets"][sname] = row
    with open(work / "results.json", "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2, default=str)
    print(f"\n{'set':<17} {'method':<14} {'val ARI':>8} {'thr':>6} {'test ARI':>9} {'P':>6} {'R':>6} {'oracle':>7}")
    for sname, row in results["sets"].items():
        for tag, m in row.items():
            print(f"{sname:<17} {tag:<14} {m['validation']['ari']:>8.4f} {m['validation']['threshold']:>6.3f} "
                  f"{m['test']['ari']:>9.4f} {m['test']['precision']:>6.3f} {m['test']['recall']:>6.3f} "
                  f"{m['test_oracle']['ari']:>7.4f}")
    for k, rep in reports.items():
        print(f"{k}: {rep['steps']}/{rep['total_steps']} steps ({rep['stopped']}), train {rep['seconds_train'] / 60:.1f} min, "
              f"total {rep['seconds_total'] / 60:.1f} min")
        data, pinfo = rep.get("data") or {}, rep.get("pairs") or {}
        if data.get("n_neighbour_pairs") is not None:
            print(f"  neighbours {data.get('neighbours')}: {data['n_neighbour_pairs']} real neighbour pairs in "
                  f"{data.get('n_neighbour_groups')} groups; in the training hard negatives: "
                  f"{pinfo.get('neighbour_negatives')} (counts {pinfo.get('counts')})")
    print(f"-> {work / 'results.json'}")


if __name__ == "__main__":
    main()
