"""The default without labels, against tuning and peers: the three labelled Reuters days, clean and noisy.

Usage::

    python benchmarks/bench_defaults.py [--quick] [--presets clean,ocr-light,...] [--json OUT]

Data (``$NEARDUP_SHARED_DATA`` or ``../shared/data``): ``reuters_days`` (2-MAR-1987, 31-MAR-1987,
19-OCT-1987; every story labelled with its duplicate cluster). Noisy versions are made here, per story,
by two independent noise models: neardup's generator (:func:`neardup.synth.apply_noise`, presets
``ocr-light``, ``ocr-medium``, ``ocr-heavy``, ``ocr-1930s``, ``typos``, ``adversarial-spam``,
``web-aggregator``) and, when the ``nlpaug`` package is installed, nlpaug's character augmenters
(``nlpaug-ocr``: OcrAug + deletions; ``nlpaug-heavy``: OcrAug + KeyboardAug + deletions) -- a noise
model we did not write, so the calibration is not only fitted to our own.

Rows, each scored on every day (ARI; pairwise P/R/F1 in the JSON):

* ``default`` -- ``neardup dedup`` as shipped (method ``auto``: calibrated on the corpus, no labels);
* ``previous default`` -- word 4-grams, IDF-weighted overlap >= 0.45 (the default before calibration);
* ``neardup tuned`` -- ``neardup tune`` (:func:`neardup.eval.search.tune_config`: representation, score,
  candidate rule, threshold and clustering, from the default, within ``--tune-budget``), chosen on the
  other two days (pooled), reported on this one (leave one day out: never tuned on the day it is scored on);
* ``default, 1 in K shingles`` (``--sample K,...``) -- the default keeping one shingle in K
  (``shingle.sample``: the same shingles in every document, for MinHash and verification alike);
* ``datasketch tuned``, ``rensa tuned`` -- ``MinHashLSH`` over word 4-grams (128 permutations),
  the LSH threshold chosen the same way, candidates kept when their MinHash estimate reaches it,
  clusters = connected components.

``--quick``: one test day, two presets; ``--presets all``: every preset above. Prints one table per preset and the mean over days.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from neardup.config import DedupConfig
from neardup.eval.evaluate import LabelledData, evaluate, pool
from neardup.eval.loaders import load_any
from neardup.eval.metrics import adjusted_rand_index, pairwise_scores
from neardup.eval.search import tune_config
from neardup.io.read import Corpus
from neardup.synth import apply_noise

DAYS = {"2-MAR": "reuters_days/docs.jsonl", "31-MAR": "reuters_days/31-MAR-1987/docs.jsonl",
        "19-OCT": "reuters_days/19-OCT-1987/docs.jsonl"}
PRESETS = ("clean", "ocr-light", "ocr-heavy", "adversarial-spam", "nlpaug-ocr")
#: Every preset (``--presets all``).
ALL_PRESETS = ("clean", "web-aggregator", "ocr-light", "typos", "ocr-1970s", "adversarial-spam", "ocr-medium",
               "ocr-1930s", "ocr-heavy", "nlpaug-ocr", "nlpaug-heavy")
QUICK_PRESETS = ("clean", "ocr-heavy")
PREVIOUS_DEFAULT = DedupConfig(method="minhash", threshold=0.45)
PEER_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
NUM_PERM = 128
NGRAM = 4
_SPLIT = re.compile(r"\W+")


def data_dir() -> Path:
    default = Path(__file__).resolve().parents[2] / "shared" / "data"
    return Path(os.environ.get("NEARDUP_SHARED_DATA", default))


def nlpaug_texts(texts: list[str], level: str, seed: int = 0) -> list[str]:
    """nlpaug's character noise, reproducible per story."""
    import nlpaug.augmenter.char as nac

    if level == "nlpaug-ocr":
        augs = [nac.OcrAug(aug_char_p=0.2, aug_word_p=0.15, aug_word_max=10**6),
                nac.RandomCharAug(action="delete", aug_char_p=0.1, aug_word_p=0.03, aug_word_max=10**6)]
    else:
        augs = [nac.OcrAug(aug_char_p=0.3, aug_word_p=0.35, aug_word_max=10**6),
                nac.KeyboardAug(aug_char_p=0.1, aug_word_p=0.08, aug_word_max=10**6),
                nac.RandomCharAug(action="delete", aug_char_p=0.15, aug_word_p=0.08, aug_word_max=10**6)]
    out = []
    for i, text in enumerate(texts):
        random.seed(seed * 1000003 + i)
        np.random.seed((seed * 1000003 + i) % 2**32)
        for aug in augs:
            got = aug.augment(text)
            if isinstance(got, list):  # nlpaug answers [] for a text it cannot augment (too short): kept as it is
                got = got[0] if got else text
            text = got
        out.append(text)
    return out


def noisy(data: LabelledData, preset: str) -> LabelledData:
    if preset == "clean":
        return data
    if preset.startswith("nlpaug"):
        texts = nlpaug_texts(list(data.corpus.texts), preset)
    else:
        texts = [apply_noise(t, preset, seed=0, doc_id=i).text for i, t in zip(data.corpus.ids, data.corpus.texts)]
    corpus = Corpus(ids=list(data.corpus.ids), texts=texts, labels=list(data.corpus.labels or []),
                    source=f"{data.name}:{preset}")
    return LabelledData(corpus=corpus, name=f"{data.name}:{preset}")


# ---------------------------------------------------------------- peers: datasketch and rensa

def word_grams(text: str, n: int = NGRAM) -> list[str]:
    tok = [x for x in _SPLIT.split(text.lower()) if x]
    if len(tok) < n:
        return [" ".join(tok)] if tok else []
    return sorted({" ".join(tok[i : i + n]) for i in range(len(tok) - n + 1)})


class Peer:
    """One peer's MinHash-LSH over one labelled set: candidates at LSH threshold t, kept when the
    MinHash estimate reaches t, connected components."""

    def __init__(self, name: str, data: LabelledData) -> None:
        self.name, self.data = name, data
        grams = [word_grams(t) for t in data.corpus.texts]
        self.ok = [i for i, g in enumerate(grams) if g]
        if name == "datasketch":
            from datasketch import MinHash

            self.mhs = {}
            for i in self.ok:
                m = MinHash(num_perm=NUM_PERM)
                m.update_batch([g.encode("utf-8") for g in grams[i]])
                self.mhs[i] = m
        else:
            from rensa import RMinHash

            self.mhs = {}
            for i in self.ok:
                m = RMinHash(num_perm=NUM_PERM, seed=1)
                m.update(grams[i])
                self.mhs[i] = m

    def pairs(self, t: float) -> list[tuple[int, int]]:
        if self.name == "datasketch":
            from datasketch import MinHashLSH

            lsh = MinHashLSH(threshold=t, num_perm=NUM_PERM)
        else:
            from rensa import RMinHashLSH

            # rensa needs bands that divide num_perm: the divisor whose S-curve midpoint is nearest t
            bands = min((b for b in (4, 8, 16, 32, 64) if NUM_PERM % b == 0),
                        key=lambda b: abs((1 / b) ** (b / NUM_PERM) - t))
            lsh = RMinHashLSH(threshold=t, num_perm=NUM_PERM, num_bands=bands)
        for i in self.ok:
            lsh.insert(i, self.mhs[i])
        out = []
        for i in self.ok:
            for j in lsh.query(self.mhs[i]):
                if j > i and self.mhs[i].jaccard(self.mhs[j]) >= t - 1e-12:
                    out.append((i, j))
        return out

    def score(self, t: float) -> dict[str, float]:
        n = len(self.data.corpus)
        parent = list(range(n))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b in self.pairs(t):
            parent[find(a)] = find(b)
        labels = [find(i) for i in range(n)]
        truth = self.data.corpus.labels
        return {"ari": adjusted_rand_index(labels, truth), **pairwise_scores(labels, truth)}


def tune_peer(name: str, val: LabelledData, test: LabelledData) -> dict[str, Any]:
    peer = Peer(name, val)
    trials = [(t, peer.score(t)) for t in PEER_GRID]
    best_t, _ = max(trials, key=lambda x: (round(x[1]["ari"], 12), round(x[1]["f1"], 12), x[0]))
    return {"params": {"threshold": best_t}, **Peer(name, test).score(best_t)}


# ---------------------------------------------------------------- the runs

def load_days(days: list[str], where: dict[str, str]) -> dict[str, Any]:
    """The labelled days named ``days`` (their files under the data folder: ``where``), each named for its day."""
    root = data_dir()
    clean = {d: load_any(root / where[d]) for d in days}
    for d, data in clean.items():
        data.name = d
    return clean


def run(days: list[str], test_days: list[str], presets: list[str], peers: list[str],
        budget: float | None, samples: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    clean = load_days(days, DAYS)
    rows = []
    for preset in presets:
        sets = {d: noisy(data, preset) for d, data in clean.items()}
        for day in test_days:
            test = sets[day]
            val = pool([sets[d] for d in days if d != day])
            t0 = time.perf_counter()
            default = evaluate(test, DedupConfig(method="auto"))
            seconds = time.perf_counter() - t0
            previous = evaluate(test, PREVIOUS_DEFAULT)
            out = {"preset": preset, "day": day,
                   "default": {**{k: default[k] for k in ("ari", "precision", "recall", "f1")},
                               "seconds": round(seconds, 2)},
                   "previous default": {k: previous[k] for k in ("ari", "precision", "recall", "f1")}}
            for k in samples:
                sampled = evaluate(test, DedupConfig(method="auto").replace(shingle__sample=k))
                out[f"default, 1 in {k} shingles"] = {m: sampled[m] for m in ("ari", "precision", "recall", "f1")}
            if budget is not None:
                tuned = tune_config(val, test, DedupConfig(method="auto"), budget=budget)
                out["neardup tuned"] = {**{k: tuned["test"][k] for k in ("ari", "precision", "recall", "f1")},
                                        "params": tuned["params"], "seconds": tuned["seconds"]}
            for peer in peers:
                out[f"{peer} tuned"] = tune_peer(peer, val, test)
            rows.append(out)
            print(f"  {preset:16s} {day:7s} " + "  ".join(f"{k} {v['ari']:.3f}" for k, v in out.items()
                                                        if isinstance(v, dict)), file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """One line per preset: mean ARI over the test days of every row."""
    names = [k for k in rows[0] if isinstance(rows[0][k], dict)]
    lines = ["| noise | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for preset in dict.fromkeys(r["preset"] for r in rows):
        mine = [r for r in rows if r["preset"] == preset]
        means = [np.mean([r[n]["ari"] for r in mine]) for n in names]
        lines.append(f"| {preset} | " + " | ".join(f"{m:.3f}" for m in means) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="one test day, two presets")
    ap.add_argument("--presets", help=f"comma-separated presets, or 'all' (default: {','.join(PRESETS)}; nlpaug "
                                      "ones when installed)")
    ap.add_argument("--tune-budget", type=float, default=60.0, help="seconds each tuning may search (default 60)")
    ap.add_argument("--no-peers", action="store_true", help="skip datasketch and rensa")
    ap.add_argument("--no-tune", action="store_true", help="skip neardup tune (the untuned rows only)")
    ap.add_argument("--json", type=Path, help="write every row as JSON here")
    ap.add_argument("--sample", default="", help="comma-separated K: add the default with one shingle in K kept "
                                                 "(shingle.sample) as rows")
    args = ap.parse_args()
    days = list(DAYS)
    if not (data_dir() / DAYS[days[0]]).exists():
        sys.exit(f"bench_defaults: no labelled days under {data_dir()} (set NEARDUP_SHARED_DATA)")
    presets = (list(ALL_PRESETS) if args.presets == "all" else args.presets.split(",") if args.presets
               else list(QUICK_PRESETS if args.quick else PRESETS))
    try:
        import nlpaug  # noqa: F401
    except ImportError:
        skipped = [p for p in presets if p.startswith("nlpaug")]
        presets = [p for p in presets if not p.startswith("nlpaug")]
        if skipped:
            print(f"bench_defaults: nlpaug not installed, skipping {', '.join(skipped)}", file=sys.stderr)
    peers = []
    if not args.no_peers:
        for peer in ("datasketch", "rensa"):
            try:
                __import__(peer)
                peers.append(peer)
            except ImportError:
                print(f"bench_defaults: {peer} not installed, skipped", file=sys.stderr)
    test_days = days[1:2] if args.quick else days
    t0 = time.perf_counter()
    rows = run(days, test_days, presets, peers, None if args.no_tune else args.tune_budget,
               tuple(int(k) for k in args.sample.split(",") if k.strip()))
    print(f"ARI, mean over test days {', '.join(test_days)} (tuned rows: tuned on the other days)\n")
    print(table(rows))
    print(f"\n{time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
