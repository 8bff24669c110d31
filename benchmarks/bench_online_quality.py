"""Online detector quality on the labelled Reuters days: word vs character shingles vs the calibrated
default vs the seed method, clean and under noise, tuned on one day and tested on the others.

Owns the noisy day streams, the configurations compared and the report; must not change detection.
Run by hand (not part of the test suite)::

    python benchmarks/bench_online_quality.py [--quick] [--noise clean,ocr-heavy,adversarial-spam,nlpaug-ocr]
        [--tune-day 2-MAR-1987] [--json OUT] [--markdown OUT]

Data: ``$NEARDUP_SHARED_DATA/reuters_days`` (default ../shared/data): three exhaustively labelled days.
A noisy day is the same day with every story noised independently (both copies of a duplicate pair
differ): ``neardup.synth`` presets (``ocr-heavy``, ``adversarial-spam``; seed 0, per story id), or
``nlpaug-ocr``: nlpaug's ``OcrAug`` (an independent OCR model: 30% of words, up to 30% of their
characters; seeded). Streams are replayed in file order (``neardup online eval``; ``--order time`` stops
on a malformed Reuters date of 31-MAR-1987, "31-MAR-1987 605:12:19.12").

Configurations (each replayed through the real detector, SQLite store):

* ``seed``: ``OnlineConfig()``, the paper's sketch method (word 3-grams, one candidate verified);
* ``word``: ``OnlineConfig.ours()`` (MinHash-LSH on word 4-grams, five candidates verified);
* ``char``: ``OnlineConfig.ours(char=True)`` (character 5-grams, the char LSH threshold);
* ``auto``: ``OnlineConfig(method="auto")``: the calibrated default, profiled on the stream's first documents;
* ``tuned``: ``neardup online tune`` on the tuning day (same noise), word and character shingles
  searched; the chosen settings replayed on the test days.

``--quick`` measures the two test days with no tuning (``tuned`` left out).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from neardup.online.detector import OnlineConfig  # noqa: E402
from neardup.online.evaluate import Stream, load_stream, replay, tune  # noqa: E402
from neardup.synth import apply_noise  # noqa: E402

SHARED = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))
DAYS = {"2-MAR-1987": "reuters_days/docs.jsonl", "31-MAR-1987": "reuters_days/31-MAR-1987/docs.jsonl",
        "19-OCT-1987": "reuters_days/19-OCT-1987/docs.jsonl"}
NOISES = ("clean", "ocr-heavy", "adversarial-spam", "nlpaug-ocr")
CONFIGS = ("seed", "word", "char", "auto")


def configs() -> dict[str, OnlineConfig]:
    return {"seed": OnlineConfig(), "word": OnlineConfig.ours(), "char": OnlineConfig.ours(char=True),
            "auto": OnlineConfig(method="auto")}


def noisy(stream: Stream, noise: str) -> Stream:
    """The stream with every text noised (labels, ids and order kept)."""
    if noise == "clean":
        return stream
    if noise == "nlpaug-ocr":
        import nlpaug.augmenter.char as nac

        aug = nac.OcrAug(aug_word_p=0.3, aug_char_p=0.3, aug_word_max=100_000, aug_char_max=100)
        texts = []
        for doc_id, text in zip(stream.ids, stream.texts):
            random.seed(f"nlpaug:{doc_id}")  # nlpaug draws from the global random module
            out = aug.augment(text)
            texts.append(out[0] if isinstance(out, list) else out)
    else:
        texts = [apply_noise(t, noise, 0, doc_id=i).text for i, t in zip(stream.ids, stream.texts)]
    return Stream(stream.ids, texts, stream.labels, stream.times, stream.records, f"{stream.name}/{noise}")


def cell(m: dict[str, Any]) -> dict[str, Any]:
    out = {k: round(m[k], 4) for k in ("f1", "precision", "recall")}
    out.update(tp=m["tp"], fp=m["fp"], fn=m["fn"], n_true=m["n_true_duplicates"])
    if m.get("calibration"):
        out["chose"] = f"{'char' if m['char'] else 'word'} {m['n']}"
        out["damage"] = m["calibration"]["profile"]["damage"]
        out["variant"] = m["calibration"]["profile"]["variant"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="No tuning: the fixed configurations on the test days.")
    ap.add_argument("--noise", default=",".join(NOISES))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--tune-day", default="2-MAR-1987", choices=sorted(DAYS))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    missing = [d for d, rel in DAYS.items() if not (SHARED / rel).exists()]
    if missing:
        sys.exit(f"bench_online_quality: missing labelled days {missing} under {SHARED} (set NEARDUP_SHARED_DATA)")
    streams = {d: load_stream(SHARED / rel) for d, rel in DAYS.items()}
    test_days = [d for d in DAYS if d != args.tune_day]
    chosen = [c for c in args.configs.split(",") if c]
    results: dict[str, Any] = {"tune_day": args.tune_day, "test_days": test_days, "rows": []}
    t0 = time.perf_counter()
    for noise in args.noise.split(","):
        days = {d: noisy(streams[d], noise) for d in DAYS}
        row: dict[str, Any] = {"noise": noise, "cells": {}}
        for name in chosen:
            cfg = configs()[name]
            row["cells"][name] = {d: cell(replay(days[d], cfg)) for d in test_days}
            print(noise, name, {d: row["cells"][name][d]["f1"] for d in test_days}, flush=True)
        if not args.quick:
            out = tune(days[args.tune_day], None, OnlineConfig(method="auto"), update_rules=(False,))
            row["tuned_params"] = out["params"]
            row["tried"] = out["tried"]
            cfg = OnlineConfig.from_dict(out["config"])
            row["cells"]["tuned"] = {d: cell(replay(days[d], cfg)) for d in test_days}
            print(noise, "tuned", out["params"], {d: row["cells"]["tuned"][d]["f1"] for d in test_days}, flush=True)
        results["rows"].append(row)
    results["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    md = markdown(results)
    print(md)
    if args.markdown:
        args.markdown.write_text(md)


def markdown(results: dict[str, Any]) -> str:
    days = results["test_days"]
    names = [n for n in ("seed", "word", "char", "auto", "tuned") if n in results["rows"][0]["cells"]]
    lines = [f"| noise | test day (true pairs) | {' | '.join(names)} |", "| --- | --- |" + " --- |" * len(names)]
    for row in results["rows"]:
        for d in days:
            first = row["cells"][names[0]][d]
            cells = []
            for n in names:
                c = row["cells"][n][d]
                text = f"{c['f1']:.3f} ({c['precision']:.2f} / {c['recall']:.2f})"
                if "chose" in c:
                    text += f" {c['chose']}"
                cells.append(text)
            lines.append(f"| {row['noise']} | {d} ({first['n_true']}) | {' | '.join(cells)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
