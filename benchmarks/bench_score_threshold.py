"""The threshold read from the corpus's own candidate scores (``auto``'s ``scores``, :mod:`neardup.calibrate_scores`),
judged out of distribution: the profile alone against the profile with the score estimate, leaving one noise model out.

Usage::

    python benchmarks/bench_score_threshold.py [--quick] [--json OUT] [--skip days,reuters,campaigns,newsgroups]

Corpora (``$NEARDUP_SHARED_DATA`` or ``../shared/data``), each under ``auto`` as it resolves on them (profile, unit and
threshold: :func:`neardup.calibrate.resolve`), greedy decisions:

* **the five labelled Reuters days alone** under every preset of :mod:`bench_defaults` (nlpaug's two included);
* **the five days inside Reuters-21578**: the whole collection (21,578 stories, the days' among them) under the same
  preset, profiled, sampled and decided as one corpus; scored on the days' stories (ARI: mean over days; a removal
  is correct when its kept story is in its true cluster, so a link to a story outside the days counts as wrong). The
  scores of a large corpus are what the estimate reads; the days alone give it too few candidates (21-143 at word
  4-grams, 500-1,800 at character 5-grams with 8-31 copies);
* **spam campaigns** (:func:`bench_decisions.spam_corpus`: BBC stories busted by the ``adversarial-spam`` preset,
  one unrelated sentence each, among untouched stories);
* **padded campaigns**, light and heavy (:mod:`neardup.synth.campaigns`, built differently from the preset: every
  character intact; sentences shuffled, foreign words inserted, pitch lines, padding with AG News texts): 150
  distinct BBC stories sent 2-30 times among 800 untouched ones;
* **20 Newsgroups** (unlabelled): removals, the largest cluster and the share of removals with at least 80% of
  their word 3-grams inside the post kept for them (:func:`bench_decisions.share_inside`).

Each labelled corpus is represented once; its candidates' sample is drawn and scored once as every engine does
(:meth:`~neardup.methods.base.KeyedMethod.proposals`, :func:`~neardup.calibrate_scores.sample_codes`, the method's
score; random pairs from :func:`~neardup.calibrate_scores.null_codes`); the estimate is then made under each
setting of a small grid (:data:`GRID`, around the shipped :data:`~neardup.calibrate_scores.DEFAULTS`), and the
greedy decisions at each threshold (:func:`neardup.pipeline.run_prepared`, cached) are scored. The shipped setting
is checked against ``neardup.dedup(method="auto")`` on every labelled corpus (same threshold and estimate).

Leave one noise model out (:data:`NOISE_MODELS`; clean text is always fitted on): the grid setting with the best mean
ARI over the other models (each weighing the same; ties: the shipped one) is scored on the held-out model, against
the profile alone. A preset's ARI is the mean of its two Reuters views (days alone, days inside Reuters-21578);
removal precision is pooled over every removal of the model's corpora.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decisions import (DAYS5, corpus_of, distinct_stories, load_newsgroups, records, share_inside,  # noqa: E402
                             spam_corpus)
from bench_defaults import ALL_PRESETS, data_dir, load_days, nlpaug_texts, noisy  # noqa: E402

import neardup  # noqa: E402
from neardup import calibrate_scores as cs  # noqa: E402
from neardup import methods  # noqa: E402
from neardup.eval.metrics import adjusted_rand_index  # noqa: E402

#: Noise models, each held out in turn: presets of one generator family, or a corpus of its own.
NOISE_MODELS: dict[str, tuple[str, ...]] = {
    "ocr": ("ocr-light", "ocr-1970s", "ocr-medium", "ocr-1930s", "ocr-heavy"),
    "typos": ("typos",), "web-aggregator": ("web-aggregator",), "adversarial-spam": ("adversarial-spam",),
    "nlpaug": ("nlpaug-ocr", "nlpaug-heavy"), "spam-campaigns": ("spam-campaigns",),
    "padded-campaigns": ("padded-light", "padded-heavy")}
ALWAYS_FITTED = {"clean": ("clean",)}
#: The grid around the shipped settings: smoothing, valley depth, pairs in the mode.
GRID: list[cs.ScoreSettings] = [cs.DEFAULTS.replace(bandwidth=h, depth=d, min_pairs=m)
                                for h in (0.015, 0.025, 0.04) for d in (0.3, 0.5) for m in (100, 300)]
if cs.DEFAULTS not in GRID:
    GRID.insert(0, cs.DEFAULTS)
#: The share of a removed post's word 3-grams inside its kept post from which it counts as a copy.
INSIDE = 0.8


def auto_config() -> Any:
    from neardup.api import make_config

    return make_config("auto", cluster__algorithm="greedy")


class Labelled:
    """One labelled corpus: auto's resolution on it, its representation, the scored sample (once), and the greedy
    decisions' ARI and removals per threshold (cached). ``judged``: the documents (and their groups, whose mean ARI is
    taken) the scores count on; None: all, one group."""

    def __init__(self, preset: str, view: str, recs: list[dict[str, str]], truth: list[Any],
                 judged: list[tuple[str, list[int]]] | None = None) -> None:
        from neardup.calibrate import resolve
        from neardup.pipeline import prepare

        self.preset, self.view, self.recs, self.truth = preset, view, recs, truth
        self.corpus = corpus_of(recs)
        self.config = resolve(auto_config(), self.corpus.texts)
        self.profile_t = float(self.config.threshold)
        self.prep = prepare(self.corpus, self.config)
        self.judged = judged or [("all", list(range(len(self.corpus))))]
        self.scores, self.null = self.sample()
        self.cache: dict[float, dict[str, Any]] = {}

    def sample(self) -> tuple[np.ndarray, np.ndarray]:
        """The sampled candidate scores and the random pairs' scores, as :func:`neardup.pipeline.score_threshold`
        reads them."""
        rep, n = self.prep.rep, len(self.corpus)
        method = methods.get(self.config).plan(rep)
        left, right = method.proposals(rep)
        codes = cs.sample_codes(left.astype(np.int64) * n + right, cs.DEFAULTS.sample_pairs)
        nulls = cs.null_codes(n, cs.DEFAULTS.null_pairs, cs.DEFAULTS.seed)
        return method.score(rep, codes // n, codes % n), method.score(rep, nulls // n, nulls % n)

    def estimate(self, settings: cs.ScoreSettings) -> cs.ScoreEstimate:
        return cs.estimate(self.scores, self.profile_t, self.null, settings)

    def at(self, threshold: float) -> dict[str, Any]:
        """ARI (mean over the judged groups) and removals (pooled) of the greedy decisions at ``threshold``."""
        from neardup.pipeline import run_prepared

        t = round(float(threshold), 4)
        if t not in self.cache:
            fixed = dataclasses.replace(self.config.replace(threshold=t), calibration=None)  # this threshold, as it is
            labels = run_prepared(self.prep, fixed).clusters.labels
            aris, removed, correct = [], 0, 0
            for _, ix in self.judged:
                aris.append(adjusted_rand_index(labels[ix].tolist(), [self.truth[i] for i in ix]))
                for i in ix:
                    k = int(labels[i])
                    if k != i:
                        removed += 1
                        correct += int(self.truth[i] is not None and self.truth[i] == self.truth[k])
            self.cache[t] = {"ari": float(np.mean(aris)), "removed": removed, "correct": correct}
        return self.cache[t]

    def check(self) -> None:
        """The shipped setting here gives what ``neardup.dedup(method="auto")`` gives: the same estimate and decisions."""
        e = self.estimate(cs.DEFAULTS)
        direct = neardup.dedup(self.recs, engine="memory", method="auto", cluster__algorithm="greedy")
        got = direct.summary["calibration"]["scores"]
        if got != e.to_dict():
            raise SystemExit(f"bench_score_threshold: {self.preset} {self.view}: the estimate here {e.to_dict()} is not "
                             f"neardup.dedup's {got}")
        if self.at(e.threshold)["ari"] != self.at_labels(direct.clusters.labels):
            raise SystemExit(f"bench_score_threshold: {self.preset} {self.view}: run_prepared differs from neardup.dedup")

    def at_labels(self, labels: np.ndarray) -> float:
        return float(np.mean([adjusted_rand_index(labels[ix].tolist(), [self.truth[i] for i in ix])
                              for _, ix in self.judged]))


# ---------------------------------------------------------------- corpora

def day_corpora(days: list[str], presets: list[str]) -> list[Labelled]:
    clean = load_days(days, DAYS5)
    out = []
    for preset in presets:
        t0 = time.perf_counter()
        for day, data in clean.items():
            c = noisy(data, preset).corpus
            out.append(Labelled(preset, f"day {day}", records(list(c.ids), list(c.texts)), list(c.labels)))
        print(f"  days under {preset}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return out


def reuters_corpora(days: list[str], presets: list[str], limit: int | None) -> list[Labelled]:
    """Reuters-21578 under each preset (its first ``limit`` stories and the days' stories), judged on the days."""
    import gzip

    from neardup.synth import apply_noise

    with gzip.open(data_dir() / "reuters21578" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        every = [json.loads(line) for line in f]
    label: dict[str, tuple[str, Any]] = {}
    for day, data in load_days(days, DAYS5).items():
        for i, c in zip(data.corpus.ids, data.corpus.labels):
            label[str(i)] = (day, c)
    every = [r for k, r in enumerate(every) if limit is None or k < limit or str(r["id"]) in label]
    ids, texts = [str(r["id"]) for r in every], [r["text"] for r in every]
    groups: dict[str, list[int]] = {}
    for k, i in enumerate(ids):
        if i in label:
            groups.setdefault(label[i][0], []).append(k)
    truth = [label[i][1] if i in label else None for i in ids]
    out = []
    for preset in presets:
        t0 = time.perf_counter()
        if preset == "clean":
            noisy_texts = texts
        elif preset.startswith("nlpaug"):
            noisy_texts = nlpaug_texts(texts, preset)
        else:
            noisy_texts = [apply_noise(t, preset, seed=0, doc_id=i).text for i, t in zip(ids, texts)]
        out.append(Labelled(preset, "in Reuters-21578", records(ids, noisy_texts), truth, sorted(groups.items())))
        print(f"  Reuters-21578 under {preset} ({len(ids)} stories): {time.perf_counter() - t0:.1f} s", file=sys.stderr,
              flush=True)
    return out


def padded_corpus(preset: str, n_campaigns: int, n_background: int, seed: int = 0
                  ) -> tuple[list[dict[str, str]], list[Any]]:
    """Distinct BBC stories sent as padded campaigns (:func:`neardup.synth.campaigns.campaign_corpus`, padding and
    inserted words from AG News) among untouched ones."""
    from neardup.synth.campaigns import CAMPAIGN_PRESETS, campaign_corpus

    with open(data_dir() / "bbc_news" / "docs.jsonl", encoding="utf-8") as f:
        stories = distinct_stories([json.loads(line) for line in f])
    random.Random(seed).shuffle(stories)
    with open(data_dir() / "ag_news_test" / "docs.jsonl", encoding="utf-8") as f:
        others = [json.loads(line)["text"] for line in f]
    texts, truth = campaign_corpus([s["text"] for s in stories[:n_campaigns]],
                                   [s["text"] for s in stories[n_campaigns : n_campaigns + n_background]], others,
                                   seed=seed, **CAMPAIGN_PRESETS[preset])
    return [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)], truth


def campaign_corpora(quick: bool) -> list[Labelled]:
    out = []
    recs, truth, _ = spam_corpus(40 if quick else 200, 200 if quick else 1000)
    out.append(Labelled("spam-campaigns", "BBC", recs, truth))
    for p in ("light", "heavy"):
        recs, truth = padded_corpus(p, 40 if quick else 150, 200 if quick else 800)
        out.append(Labelled(f"padded-{p}", "BBC + AG News", recs, truth))
    return out


# ---------------------------------------------------------------- scoring

def preset_table(corpora: list[Labelled], pick: dict[str, cs.ScoreSettings | None]) -> dict[str, dict[str, Any]]:
    """Per preset: ARI (mean of its views' means) and pooled removals, with the threshold each corpus takes under the
    setting ``pick[preset]`` (None: the profile alone)."""
    out: dict[str, dict[str, Any]] = {}
    for preset in dict.fromkeys(c.preset for c in corpora):
        mine = [c for c in corpora if c.preset == preset]
        views: dict[str, list[float]] = {}
        removed = correct = decided = 0
        for c in mine:
            st = pick.get(preset)
            t = c.profile_t if st is None else c.estimate(st).threshold
            decided += int(st is not None and c.estimate(st).decided == "scores")
            got = c.at(t)
            views.setdefault(c.view.split()[0], []).append(got["ari"])
            removed += got["removed"]
            correct += got["correct"]
        out[preset] = {"ari": float(np.mean([np.mean(v) for v in views.values()])), "removed": removed,
                       "correct": correct, "precision": correct / removed if removed else float("nan"),
                       "by_scores": decided, "corpora": len(mine)}
    return out


def model_scores(table: dict[str, dict[str, Any]], models: dict[str, tuple[str, ...]]) -> dict[str, dict[str, float]]:
    """Per noise model: mean ARI over its presets, the worst preset's, and removal precision pooled."""
    out = {}
    for m, presets in models.items():
        rows = [table[p] for p in presets if p in table]
        if rows:
            removed, correct = sum(r["removed"] for r in rows), sum(r["correct"] for r in rows)
            out[m] = {"ari": float(np.mean([r["ari"] for r in rows])), "worst": float(min(r["ari"] for r in rows)),
                      "precision": correct / removed if removed else float("nan")}
    return out


def fit(corpora: list[Labelled], groups: list[str], models: dict[str, tuple[str, ...]]) -> cs.ScoreSettings:
    """The grid setting with the best mean ARI over ``groups`` (each weighing the same); ties: the shipped setting,
    then the grid's order."""
    def mean(st: cs.ScoreSettings) -> float:
        ms = model_scores(preset_table(corpora, {p: st for p in set(c.preset for c in corpora)}), models)
        return float(np.mean([ms[g]["ari"] for g in groups if g in ms]))

    scored = [(round(mean(st), 6), st) for st in GRID]
    top = max(s for s, _ in scored)
    best = [st for s, st in scored if s == top]
    return cs.DEFAULTS if cs.DEFAULTS in best else best[0]


def label(st: cs.ScoreSettings | None) -> str:
    if st is None:
        return "profile alone"
    return f"bandwidth {st.bandwidth}, depth {st.depth}, min pairs {st.min_pairs}"


def fmt(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"


# ---------------------------------------------------------------- 20 Newsgroups

def run_newsgroups(limit: int | None) -> list[dict[str, Any]]:
    recs = load_newsgroups(limit)
    rows = []
    for name, options in (("auto, profile alone", {"auto__scores": False}), ("auto (profile + scores)", {})):
        t0 = time.perf_counter()
        result = neardup.dedup(recs, engine="memory", method="auto", **options)
        seconds = time.perf_counter() - t0
        c = result.clusters
        gone = np.flatnonzero(~c.is_representative)
        inside = [share_inside(recs[i]["text"], recs[int(c.labels[i])]["text"]) for i in gone.tolist()]
        cal = result.summary.get("calibration", {})
        rows.append({"run": name, "docs": len(recs), "removed": int(gone.size), "largest": int(c.sizes.max()),
                     "inside": float(np.mean(np.array(inside) >= INSIDE)) if inside else float("nan"),
                     "threshold": result.summary["params"]["threshold"], "scores": cal.get("scores"),
                     "seconds": round(seconds, 1)})
        print(f"  20ng {name}: removed {gone.size}, t={rows[-1]['threshold']} ({seconds:.1f} s)", file=sys.stderr,
              flush=True)
    return rows


# ---------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="one day, three presets, small campaigns, the first 4,000 "
                                                         "stories of Reuters-21578 and posts of 20 Newsgroups")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: days, reuters, campaigns, newsgroups")
    ap.add_argument("--json", type=Path, help="write the tables as JSON here")
    args = ap.parse_args()
    if not (data_dir() / DAYS5["2-MAR"]).exists():
        sys.exit(f"bench_score_threshold: no labelled days under {data_dir()} (set NEARDUP_SHARED_DATA)")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    t0 = time.perf_counter()
    days = ["31-MAR"] if args.quick else list(DAYS5)
    presets = ["clean", "adversarial-spam", "nlpaug-ocr"] if args.quick else list(ALL_PRESETS)
    corpora: list[Labelled] = []
    if "days" not in skip:
        corpora += day_corpora(days, presets)
    if "reuters" not in skip:
        corpora += reuters_corpora(list(DAYS5), presets, 4000 if args.quick else None)
    if "campaigns" not in skip:
        corpora += campaign_corpora(args.quick)
    for c in corpora:
        c.check()
    t_build = time.perf_counter() - t0
    models = {m: ps for m, ps in NOISE_MODELS.items() if any(c.preset in ps for c in corpora)}
    everyone = {**ALWAYS_FITTED, **models}
    alone = preset_table(corpora, {})
    base = model_scores(alone, everyone)
    out: dict[str, Any] = {"grid": [dataclasses.asdict(st) for st in GRID], "shipped": dataclasses.asdict(cs.DEFAULTS)}

    print("## The threshold read from the candidate scores, out of distribution\n")
    print(f"Corpora: {len(corpora)} ({', '.join(sorted(set(c.view for c in corpora)))}); {len(GRID)} settings; "
          f"corpora built, sampled and checked against neardup.dedup in {t_build:.0f} s.\n")
    print("### Leave one noise model out\n")
    print("| held out | setting fitted on the others | ARI profile alone | ARI with scores | worst preset (alone / "
          "scores) | removal precision (alone / scores) |")
    print("| --- | --- | ---: | ---: | --- | --- |")
    loo = {}
    for held in models:
        st = fit(corpora, [g for g in everyone if g != held], everyone)
        ms = model_scores(preset_table(corpora, {p: st for p in set(c.preset for c in corpora)}), everyone)[held]
        loo[held] = {"setting": dataclasses.asdict(st), "alone": base[held], "scores": ms}
        print(f"| {held} | {label(st)} | {base[held]['ari']:.3f} | {ms['ari']:.3f} | {base[held]['worst']:.3f} / "
              f"{ms['worst']:.3f} | {fmt(base[held]['precision'])} / {fmt(ms['precision'])} |")
    a = np.array([v["alone"]["ari"] for v in loo.values()])
    s = np.array([v["scores"]["ari"] for v in loo.values()])
    pa = np.array([v["alone"]["precision"] for v in loo.values()])
    ps = np.array([v["scores"]["precision"] for v in loo.values()])
    names = list(loo)
    print(f"| **mean** | | {a.mean():.3f} | {s.mean():.3f} | | {np.nanmean(pa):.3f} / {np.nanmean(ps):.3f} |")
    print(f"| **worst** | | {a.min():.3f} ({names[int(a.argmin())]}) | {s.min():.3f} ({names[int(s.argmin())]}) | | "
          f"{np.nanmin(pa):.3f} / {np.nanmin(ps):.3f} |")
    ship = bool(s.min() > a.min() and s.mean() >= a.mean())
    print(f"\nShip rule (worst case better, mean no worse): {'ship' if ship else 'keep off'} "
          f"(worst {a.min():.3f} -> {s.min():.3f}, mean {a.mean():.3f} -> {s.mean():.3f}).")
    out["loo"], out["ship"] = loo, ship

    print("\n### Every setting of the grid, fitted on all (sensitivity)\n")
    print("| setting | corpora decided by the scores | mean ARI over noise models and clean | worst noise model |")
    print("| --- | ---: | ---: | --- |")
    out["grid_scores"] = []
    for st in GRID:
        ms = model_scores(preset_table(corpora, {p: st for p in set(c.preset for c in corpora)}), everyone)
        by = sum(c.estimate(st).decided == "scores" for c in corpora)
        worst = min((m for m in ms if m in models), key=lambda m: ms[m]["ari"])
        mean = float(np.mean([v["ari"] for v in ms.values()]))
        out["grid_scores"].append({"setting": dataclasses.asdict(st), "decided": by, "mean": mean, "worst": worst})
        print(f"| {label(st)}{' (shipped)' if st == cs.DEFAULTS else ''} | {by} | {mean:.3f} | {worst} "
              f"{ms[worst]['ari']:.3f} |")
    base_mean = float(np.mean([v["ari"] for v in base.values()]))
    print(f"| profile alone | 0 | {base_mean:.3f} | {min((m for m in base if m in models), key=lambda m: base[m]['ari'])} "
          f"{min(base[m]['ari'] for m in base if m in models):.3f} |")

    shipped = preset_table(corpora, {p: cs.DEFAULTS for p in set(c.preset for c in corpora)})
    print(f"\n### Per preset, shipped setting ({label(cs.DEFAULTS)})\n")
    print("| preset | corpora | decided by the scores | ARI profile alone | ARI with scores | removed (alone / scores) "
          "| removal precision (alone / scores) |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    for p in alone:
        x, y = alone[p], shipped[p]
        print(f"| {p} | {x['corpora']} | {y['by_scores']} | {x['ari']:.3f} | {y['ari']:.3f} | {x['removed']} / "
              f"{y['removed']} | {fmt(x['precision'])} / {fmt(y['precision'])} |")
    print("\nThresholds where the scores decided (shipped setting):\n")
    for c in corpora:
        e = c.estimate(cs.DEFAULTS)
        if e.decided == "scores" or c.preset.startswith(("padded", "spam")):
            r = e.to_dict()
            print(f"- {c.preset} ({c.view}): profile {c.profile_t} -> {e.threshold} ({e.decided}: {e.reason}; valley "
                  f"{r['valley']}, 5-95% {r['low']}-{r['high']}, found in {e.found:.0%} of resamples, depth {r['depth']}, "
                  f"{e.mode_pairs} of {e.sample} sampled pairs above it)")
    out["presets"] = {"alone": alone, "scores": shipped}

    if "newsgroups" not in skip:
        rows = run_newsgroups(4000 if args.quick else None)
        print(f"\n### 20 Newsgroups ({rows[0]['docs']} posts, unlabelled)\n")
        print(f"| run | threshold | removed | largest cluster | removals with >= {INSIDE:.0%} of their word 3-grams "
              f"inside the kept post | the estimate |")
        print("| --- | ---: | ---: | ---: | ---: | --- |")
        for r in rows:
            e = r["scores"]
            note = "off" if e is None else f"{e['decided']}: {e['reason']}"
            print(f"| {r['run']} | {r['threshold']} | {r['removed']} ({100 * r['removed'] / r['docs']:.1f}%) | "
                  f"{r['largest']} | {fmt(r['inside'])} | {note} |")
        out["newsgroups"] = rows
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
