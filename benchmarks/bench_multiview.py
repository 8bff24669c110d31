"""Method multiview against each of its views alone, on the three labelled Reuters days under several
noise models: the table of docs/multiview.md.

Run from the repo root:

    .venv/bin/python benchmarks/bench_multiview.py [--quick] [--data ../shared/data/reuters_days] [--seed 0]

For each day and noise model (the synth presets clean, ocr-heavy and adversarial-spam, and nlpaug's
OcrAug followed by KeyboardAug, an independent noise model, where nlpaug is installed) every document is
noised independently (labels kept), the multiview representation is computed once (word 4-grams, char
5-grams, RETSim), and every candidate pair of every view is scored in every view. Reported (ARI):

* each view alone, on its own candidates, with its threshold chosen leave-one-day-out (the best mean ARI
  over the two other days of the same noise model) and, in brackets, the oracle threshold of the day itself;
* ``max``: the label-free rule (each view's score over its calibrated threshold, the largest >= 0.5),
  untuned, over all views and over word + char only (the default without the neural extra);
* ``logistic``: the model fitted on the two other days' candidate pairs (same noise), threshold chosen there;
* ``tuned``: what ``neardup tune --method multiview`` chooses when the two other days are its validation
  set: the best of the model, the max rule and each view alone (on the union's candidates) by mean ARI there.

``--quick``: clean and ocr-heavy, word and char views only (no RETSim): a minute or two.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from neardup import methods  # noqa: E402
from neardup.cluster import cluster_pairs  # noqa: E402
from neardup.config import DedupConfig  # noqa: E402
from neardup.eval.evaluate import LabelledData, score  # noqa: E402
from neardup.eval.loaders import load_any  # noqa: E402
from neardup.methods.base import COSINE_GRID, SET_SCORE_GRID  # noqa: E402
from neardup.methods.multiview import MultiView, calibrated  # noqa: E402
from neardup.pipeline import prepare  # noqa: E402
from neardup.results import DedupResult  # noqa: E402
from neardup.synth import apply_noise, get_preset  # noqa: E402
from neardup.verify.hybrid import fit_logistic, logistic_scores  # noqa: E402

DAYS = ("2-MAR-1987", "31-MAR-1987", "19-OCT-1987")
NOISES = ("clean", "ocr-heavy", "adversarial-spam", "nlpaug")
GRID = MultiView.threshold_grid


def day_path(root: Path, day: str) -> Path:
    return root / "docs.jsonl" if day == DAYS[0] else root / day / "docs.jsonl"


def noised(data: LabelledData, noise: str, seed: int) -> LabelledData:
    """Every document of ``data`` noised independently (ids and labels kept)."""
    texts = data.corpus.texts
    if noise == "nlpaug":
        import nlpaug.augmenter.char as nac

        ocr = nac.OcrAug(aug_char_p=0.3, aug_word_p=0.15, aug_word_max=100_000)
        kbd = nac.KeyboardAug(aug_char_p=0.3, aug_word_p=0.1, aug_word_max=100_000)
        out = []
        for i, t in enumerate(texts):
            random.seed(seed * 100_003 + i)
            np.random.seed((seed * 100_003 + i) % 2**32)
            noisy = kbd.augment(ocr.augment(t)[0])[0] if t.strip() else t
            out.append(noisy)
    else:
        spec = get_preset(noise)
        out = [apply_noise(t, spec, seed, doc_id=doc_id).text for t, doc_id in zip(texts, data.corpus.ids)]
    return LabelledData(corpus=replace(data.corpus, texts=out), pairs=data.pairs, name=f"{data.name}:{noise}")


class Scored:
    """One labelled set's candidates: each view's own, their union, and every view's score of the union."""

    def __init__(self, data: LabelledData, views: tuple[str, ...]) -> None:
        self.data = data
        cfg = DedupConfig(method="multiview").replace(multiview__views=views)
        prep = prepare(data.corpus, cfg)
        self.method = methods.get(prep.config).plan(prep.rep)
        rep = prep.rep
        self.lengths = rep.lengths
        own = self.method.view_candidates(rep)
        self.left, self.right, _ = self.method.candidates(rep)
        self.scores = self.method.view_scores(rep, self.left, self.right)
        self.features = self.method.features(rep, self.left, self.right, self.scores)
        index = {(a, b): k for k, (a, b) in enumerate(zip(self.left.tolist(), self.right.tolist()))}
        self.own = {v: np.array([index[p] for p in zip(*[x.tolist() for x in own[v]])], dtype=np.int64)
                    for v in views}
        labels = data.corpus.labels
        assert labels is not None
        self.positive = np.array([labels[a] is not None and labels[a] == labels[b]
                                  for a, b in zip(self.left.tolist(), self.right.tolist())], dtype=bool)

    def ari(self, rows: np.ndarray, s: np.ndarray, t: float) -> float:
        keep = rows[s >= t - 1e-12]
        sc = s[s >= t - 1e-12]
        clusters = cluster_pairs(len(self.data.corpus), self.left[keep], self.right[keep], sc, self.lengths,
                                 self.method.config.cluster, threshold=t)
        result = DedupResult(ids=self.data.corpus.ids, clusters=clusters, left=self.left[keep],
                             right=self.right[keep], scores=sc, summary={})
        return float(score(result, self.data)["ari"])

    def curve(self, rows: np.ndarray, s: np.ndarray, grid: tuple[float, ...]) -> np.ndarray:
        return np.array([self.ari(rows, s, t) for t in grid])

    def combined(self, rule: str, coef: tuple[float, ...] | None = None) -> np.ndarray:
        m = self.method
        if rule == "logistic":
            assert coef is not None
            return logistic_scores(self.features, coef)
        th = dict(zip(m.kinds, m.view_thresholds))
        chosen = m.kinds if rule == "max" else tuple(rule.split("+"))
        return np.max(np.vstack([calibrated(self.scores[v], th[v]) for v in chosen]), axis=0)


def loo(sets: dict[str, Scored], test: str, curves: dict[str, np.ndarray], grid: tuple[float, ...]
        ) -> tuple[float, float]:
    """Threshold with the best mean ARI over the days other than ``test``, and the ARI it gets on ``test``."""
    train = [d for d in sets if d != test]
    mean = np.mean([curves[d] for d in train], axis=0)
    k = int(np.argmax(mean + 1e-9 * np.arange(mean.size)))  # ties: the higher threshold
    return grid[k], float(curves[test][k])


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    views = ("word", "char") if args.quick else ("word", "char", "retsim")
    noises = ("clean", "ocr-heavy") if args.quick else NOISES
    if "nlpaug" in noises and importlib.util.find_spec("nlpaug") is None:
        print("  (nlpaug is not installed: its rows are skipped)", file=sys.stderr)
        noises = tuple(n for n in noises if n != "nlpaug")
    base = {d: load_any(day_path(args.data, d)) for d in DAYS}
    rows: list[dict[str, Any]] = []
    for noise in noises:
        t0 = time.perf_counter()
        sets = {d: Scored(noised(base[d], noise, args.seed), views) for d in DAYS}
        own, union = {}, {}
        for v in views:
            grid = COSINE_GRID if v == "retsim" else SET_SCORE_GRID
            own[v] = {d: s.curve(s.own[v], s.scores[v][s.own[v]], grid) for d, s in sets.items()}
        all_rows = {d: np.arange(s.left.size) for d, s in sets.items()}
        rules = ["max", "word+char"] if "retsim" in views else ["max"]
        fixed = {r: {d: s.ari(all_rows[d], s.combined(r), 0.5) for d, s in sets.items()} for r in rules}
        settings = ["max", *views]
        union = {r: {d: s.curve(all_rows[d], s.combined(r), GRID) for d, s in sets.items()} for r in settings}
        for test in DAYS:
            train = [d for d in DAYS if d != test]
            x = np.vstack([sets[d].features for d in train])
            y = np.concatenate([sets[d].positive for d in train])
            coef = fit_logistic(x, y)
            assert coef is not None
            logit = {d: s.curve(all_rows[d], s.combined("logistic", coef), GRID) for d, s in sets.items()}
            row: dict[str, Any] = {"noise": noise, "day": test}
            for v in views:
                grid = COSINE_GRID if v == "retsim" else SET_SCORE_GRID
                t, a = loo(sets, test, own[v], grid)
                row[v] = a
                row[f"{v}_t"] = t
                row[f"{v}_oracle"] = float(own[v][test].max())
            for r in rules:
                row[r] = fixed[r][test]
            row["logistic"] = loo(sets, test, logit, GRID)[1]
            # tune's choice: the model, the max rule and each view alone, by mean ARI on the other two days
            options = {"logistic": logit, **union}
            best = max(options, key=lambda o: (max(np.mean([options[o][d] for d in train], axis=0)), o == "logistic"))
            row["tuned"], row["tuned_choice"] = loo(sets, test, options[best], GRID)[1], best
            rows.append(row)
            print(format_row(row, views, rules), flush=True)
        print(f"  ({noise}: {time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return rows


def format_row(row: dict[str, Any], views: tuple[str, ...], rules: list[str]) -> str:
    cells = [row["noise"], row["day"]]
    cells += [f"{row[v]:.3f} ({row[f'{v}_oracle']:.3f})" for v in views]
    cells += [f"{row[r]:.3f}" for r in rules]
    cells += [f"{row['logistic']:.3f}", f"{row['tuned']:.3f} {row['tuned_choice']}"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "reuters_days")
    p.add_argument("--quick", action="store_true", help="clean and ocr-heavy, word and char views only")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if not (args.data / "docs.jsonl").exists():
        sys.exit(f"no labelled days at {args.data} (give --data)")
    views = ("word", "char") if args.quick else ("word", "char", "retsim")
    rules = ["max", "word+char"] if "retsim" in views else ["max"]
    head = ["noise", "day", *[f"{v} LOO (oracle)" for v in views], *[f"{r} untuned" for r in rules],
            "logistic LOO", "tuned LOO (choice)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    rows = run(args)
    print()
    print("mean ARI over the rows:")
    for key in [*views, *rules, "logistic", "tuned"]:
        print(f"  {key:>10}: {np.mean([r[key] for r in rows]):.3f}")
    best_view = np.mean([max(r[v] for v in views) for r in rows])
    print(f"  best view per row (LOO): {best_view:.3f}")


if __name__ == "__main__":
    main()
