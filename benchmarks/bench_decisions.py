"""The clustering decision, side by side: ``components`` (the old rule) against ``greedy`` (the new default).

Usage::

    python benchmarks/bench_decisions.py [--quick] [--presets all|clean,ocr-heavy,...] [--json OUT]
                                         [--sample-out SAMPLE.json] [--skip days,spam,newsgroups]
    python benchmarks/bench_decisions.py --sweep [--quick] [--show SCORE:THRESHOLD] [--json OUT]
    python benchmarks/bench_decisions.py --calibrate [--quick] [--campaigns N] [--background N] [--json OUT]

Both rules run on the same method, ``auto`` untuned unless a row says otherwise (``neardup.dedup`` with
``engine="memory"`` on lists of records; ``cluster__algorithm="components"`` or ``"greedy"``). Measured:

* **ARI** (:func:`neardup.eval.metrics.adjusted_rand_index`) of the clusters against the labels;
* **removal precision**: the share of removed documents (not kept) whose kept document
  (``clusters.labels[i]``) is in the same true cluster as they are. A removed document whose kept
  document is a different story (or that is a labelled singleton) is a wrong removal.

Three parts:

1. **Labelled Reuters days** (``$NEARDUP_SHARED_DATA/reuters_days``, or ``../shared/data``): all five days
   (2-MAR, 31-MAR, 19-OCT from :mod:`bench_defaults`, plus 13-APR and 17-MAR), clean and under the noise
   presets of :mod:`bench_defaults` (its loading and noise functions are imported, not copied; nlpaug presets
   only when ``nlpaug`` is installed). Per preset: means over days, and removals pooled over days.
2. **Spam campaigns**: BBC news stories (``bbc_news``; every story sharing 5% or more of its word 5-grams
   with another dropped first, :func:`distinct_stories`, so the labels hold no unlabelled duplicate) sent
   in campaigns of 2-30 copies, each copy busted by neardup's ``adversarial-spam`` preset
   (:func:`neardup.synth.apply_noise`) with one unrelated sentence (from a story used nowhere else) inserted
   at a random paragraph break; mixed with untouched background stories (true singletons). Scored with
   character 5-grams and the weighted overlap (what ``auto`` picks on damaged text: ``method="minhash"``,
   ``shingle__char=True``, ``shingle__n=5``) at thresholds 0.3, 0.2 and 0.15, and with ``auto`` itself
   (which reads the corpus's own noise profile and may pick otherwise: the table says what it resolved to).
3. **20 Newsgroups** (``20newsgroups/docs.jsonl.gz``, 18,846 posts, no duplicate labels): removal rate,
   largest cluster, and how many removed documents have no verified pair with the document kept for them
   (counted from every verified pair, ``all_pairs=True``; and by ``clusters.unlinked()`` as a check), for
   components, greedy, and greedy with ``verify__score="weighted-jaccard"`` at its default threshold.
   ``--sample-out``: 50 random removals (seed 0) of the greedy default, with both texts, for a human to read.

``--quick``: one day, two presets, a smaller spam corpus, the first 4,000 posts of 20 Newsgroups.

``--sweep``: what counts as a copy on clean text, by score and threshold, instead of the three parts. The
representation ``auto`` resolves to on clean text (:func:`neardup.calibrate.choose`: ``method="minhash"``,
word 4-grams, every other setting the method's default; checked against ``resolve`` before the sweep), the
greedy rule, ``verify__score`` in :data:`SWEEP_SCORES` and the thresholds :data:`SWEEP_THRESHOLDS`; each
corpus is represented once (:func:`neardup.pipeline.prepare`) and re-run per setting
(:func:`neardup.pipeline.run_prepared`, which gives what ``neardup.dedup`` gives: checked on 20 Newsgroups).

* the five labelled days under :data:`SWEEP_PRESETS` (the same fixed settings on every preset, also where
  ``auto`` would lower the threshold or pick character shingles): mean ARI over days and presets, pooled
  removal precision, and pooled recall: the share of the documents that are not the first of their true
  cluster that were removed (and, in brackets, correct removals over those documents);
* 20 Newsgroups: the removal rate, and for every removal the share of the removed post's body words (the
  header block, lines up to the first empty line, dropped) that lie inside passages it shares with its kept
  document (:func:`neardup.verify.passages.passage_table`, runs of 4 words or more, up to 256 passages);
  the share of removals whose body is covered 80% and 90%. In brackets, the same with an order-free check:
  a body word is covered when a word 4-gram holding it is one of the kept document's word 4-grams;
* ``--show SCORE:THRESHOLD`` (default: the recommendation printed with the tables): 10 random removals
  (seed 0) at that setting, their coverage and the first 300 characters of their body, for a human to read.

``--calibrate``: auto's mapping from noise profile to threshold, refit for greedy and judged out of distribution,
instead of the three parts. Corpora: the five labelled days under every preset (nlpaug needed) and the spam
campaigns. Each corpus is profiled once (:func:`neardup.calibrate.profile`) and represented once in the unit
auto picks for it (calibrate's word/character cut-offs, kept: the same unit under every mapping); a mapping
(:class:`Mapping`: word and character ``top * exp(-rate * damage)``, an optional variant term
``exp(-vrate * max(0, variant - from))`` and an optional ceiling on the character threshold) is run at the
thresholds it gives (:func:`neardup.pipeline.run_prepared`, greedy, ARI cached per threshold; the shipped
mapping is checked against ``calibrate.choose`` and against ``neardup.dedup(method="auto")`` on every corpus).
The grid (:data:`CAL_WORD_TOP` ... :data:`CAL_CHAR_MAX`) is fitted (:func:`fit`: the best mean ARI over noise
models, each model weighing the same, no Reuters preset more than :data:`MAX_DROP` below :data:`BASELINE`)
leaving one noise model of :data:`NOISE_MODELS` out at a time, and scored on the one left out: per model, the
baseline against the refit, their mean and worst case; then fitted on all, per preset. The refit ships only if
it beats the baseline's leave-one-out mean and worst case and loses no preset more than :data:`MAX_DROP`.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_defaults import ALL_PRESETS, DAYS, PRESETS, QUICK_PRESETS, data_dir, load_days, noisy  # noqa: E402

import neardup  # noqa: E402
from neardup.eval.metrics import adjusted_rand_index, pairwise_scores  # noqa: E402
from neardup.synth import apply_noise  # noqa: E402

#: The five labelled days: bench_defaults' three, then the two labelled since.
DAYS5 = {**DAYS, "13-APR": "reuters_days/13-APR-1987/docs.jsonl", "17-MAR": "reuters_days/17-MAR-1987/docs.jsonl"}
ALGORITHMS = ("components", "greedy")
#: Character 5-grams, weighted overlap: the representation ``auto`` picks on damaged text.
CHAR5 = {"method": "minhash", "shingle__char": True, "shingle__n": 5}
SPAM_THRESHOLDS = (0.3, 0.2, 0.15)
SPAM_SIZES = (2, 30)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
_WORD = re.compile(r"\w+")


def records(ids: list[str], texts: list[str]) -> list[dict[str, str]]:
    return [{"id": str(i), "text": t} for i, t in zip(ids, texts)]


def decisions(labels: np.ndarray, truth: list[Any]) -> dict[str, Any]:
    """ARI, pairwise P/R/F1, and the removals: how many, and how many went with a document of their own true
    cluster (a labelled singleton, truth None, is never correctly removed)."""
    n = labels.size
    removed = np.flatnonzero(labels != np.arange(n))
    correct = sum(1 for i in removed.tolist() if truth[i] is not None and truth[i] == truth[int(labels[i])])
    return {"ari": adjusted_rand_index(labels.tolist(), truth), **pairwise_scores(labels.tolist(), truth),
            "removed": int(removed.size), "correct": int(correct),
            "removal_precision": correct / removed.size if removed.size else float("nan")}


def run_both(recs: list[dict[str, str]], truth: list[Any], **options: Any) -> dict[str, dict[str, Any]]:
    """One dedup per algorithm, the same method and options; the decisions of each scored against ``truth``."""
    out = {}
    for alg in ALGORITHMS:
        t0 = time.perf_counter()
        result = neardup.dedup(recs, engine="memory", cluster__algorithm=alg, **options)
        seconds = time.perf_counter() - t0
        params = result.summary.get("params", {})
        out[alg] = {**decisions(result.clusters.labels, truth), "seconds": round(seconds, 2),
                    "method": params.get("method"), "threshold": params.get("threshold"),
                    "char": params.get("shingle", {}).get("char"), "n": params.get("shingle", {}).get("n")}
    return out


def fmt(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"


# ---------------------------------------------------------------- 1. the labelled days

def run_days(days: list[str], presets: list[str]) -> list[dict[str, Any]]:
    clean = load_days(days, DAYS5)
    rows = []
    for preset in presets:
        for day, data in clean.items():
            t0 = time.perf_counter()
            noisy_day = noisy(data, preset)
            noise_s = time.perf_counter() - t0
            corpus = noisy_day.corpus
            got = run_both(records(list(corpus.ids), list(corpus.texts)), list(corpus.labels), method="auto")
            rows.append({"preset": preset, "day": day, "n_docs": len(corpus), "noise_seconds": round(noise_s, 2),
                         **got})
            print(f"  {preset:16s} {day:7s} " + "  ".join(
                f"{a} ARI {got[a]['ari']:.3f} removed {got[a]['removed']} ({got[a]['correct']} right)"
                for a in ALGORITHMS), file=sys.stderr, flush=True)
    return rows


def days_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| preset | ARI components | ARI greedy | removal precision components | removal precision greedy "
             "| removed (components/greedy) | correct (components/greedy) | pooled removal precision (c/g) |",
             "| --- |" + " ---: |" * 7]
    groups = {p: [r for r in rows if r["preset"] == p] for p in dict.fromkeys(r["preset"] for r in rows)}
    groups["mean over presets"] = rows
    for preset, mine in groups.items():
        ari = {a: float(np.mean([r[a]["ari"] for r in mine])) for a in ALGORITHMS}
        # mean over days of the days' precision (a day with no removal has none: left out of the mean)
        prec = {a: float(np.nanmean([r[a]["removal_precision"] for r in mine]))
                if any(r[a]["removed"] for r in mine) else float("nan") for a in ALGORITHMS}
        removed = {a: sum(r[a]["removed"] for r in mine) for a in ALGORITHMS}
        correct = {a: sum(r[a]["correct"] for r in mine) for a in ALGORITHMS}
        pooled = {a: correct[a] / removed[a] if removed[a] else float("nan") for a in ALGORITHMS}
        lines.append(f"| {preset} | {ari['components']:.3f} | {ari['greedy']:.3f} | {fmt(prec['components'])} | "
                     f"{fmt(prec['greedy'])} | {removed['components']}/{removed['greedy']} | "
                     f"{correct['components']}/{correct['greedy']} | "
                     f"{fmt(pooled['components'])}/{fmt(pooled['greedy'])} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- 2. spam campaigns

def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if 40 <= len(s.strip()) <= 220]


def distinct_stories(stories: list[dict[str, Any]], overlap: float = 0.05, max_df: int = 50) -> list[dict[str, Any]]:
    """The stories that share less than ``overlap`` of their word 5-grams (overlap coefficient, 5-grams held by
    at most ``max_df`` stories) with every other: the BBC set holds exact twins and many unlabelled near-duplicates
    (re-written headlines, updates), which would otherwise be scored as wrong removals. Independent of neardup."""
    grams = []
    for rec in stories:
        words = _WORD.findall(rec["text"].lower())
        grams.append({" ".join(words[i : i + 5]) for i in range(len(words) - 4)})
    index: dict[str, list[int]] = {}
    for i, g in enumerate(grams):
        for x in g:
            index.setdefault(x, []).append(i)
    shared: dict[tuple[int, int], int] = {}
    for docs in index.values():
        if 1 < len(docs) <= max_df:
            for a in range(len(docs)):
                for b in docs[a + 1 :]:
                    shared[docs[a], b] = shared.get((docs[a], b), 0) + 1
    near = {i for (a, b), c in shared.items() if c >= overlap * max(1, min(len(grams[a]), len(grams[b])))
            for i in (a, b)}
    return [rec for i, rec in enumerate(stories) if i not in near]


def spam_corpus(n_campaigns: int, n_background: int,
                seed: int = 0) -> tuple[list[dict[str, str]], list[Any], dict[str, Any]]:
    """Campaigns of 2-30 busted copies of a story each (truth: the campaign), plus untouched background
    stories (truth: None). Reproducible from ``seed``."""
    with open(data_dir() / "bbc_news" / "docs.jsonl", encoding="utf-8") as f:
        every = [json.loads(line) for line in f]
    stories = distinct_stories(every)
    rng = random.Random(seed)
    rng.shuffle(stories)
    if n_campaigns + n_background >= len(stories) - 200:
        raise SystemExit(f"bench_decisions: {len(stories)} BBC stories: too few for {n_campaigns} campaigns and "
                         f"{n_background} background stories (and 200 for unrelated sentences)")
    campaigns, background = stories[:n_campaigns], stories[n_campaigns:n_campaigns + n_background]
    pool = [s for rec in stories[n_campaigns + n_background:] for s in sentences(rec["text"])]
    recs, truth = [], []
    sizes = []
    for c, story in enumerate(campaigns):
        size = rng.randint(*SPAM_SIZES)
        sizes.append(size)
        for k in range(size):
            doc_id = f"spam{c}-{k}"
            busted = apply_noise(story["text"], "adversarial-spam", seed=seed, doc_id=doc_id).text
            paragraphs = busted.split("\n\n")
            paragraphs.insert(rng.randint(0, len(paragraphs)), rng.choice(pool))
            recs.append({"id": doc_id, "text": "\n\n".join(paragraphs)})
            truth.append(f"campaign{c}")
    for story in background:
        recs.append({"id": f"news-{story['id']}", "text": story["text"]})
        truth.append(None)
    order = list(range(len(recs)))
    rng.shuffle(order)  # campaigns interleaved with the news, as a crawl would see them
    info = {"bbc_stories": len(every), "distinct_stories": len(stories), "campaigns": n_campaigns,
            "copies": sum(sizes), "background": len(background), "docs": len(recs),
            "sentence_pool": len(pool), "mean_campaign": round(float(np.mean(sizes)), 2)}
    return [recs[i] for i in order], [truth[i] for i in order], info


def run_spam(n_campaigns: int, n_background: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    recs, truth, info = spam_corpus(n_campaigns, n_background)
    settings: list[tuple[str, dict[str, Any]]] = [(f"char 5-grams, t={t}", {**CHAR5, "threshold": t})
                                                  for t in SPAM_THRESHOLDS]
    settings.append(("auto (default)", {"method": "auto"}))
    rows = []
    for name, options in settings:
        got = run_both(recs, truth, **options)
        rows.append({"setting": name, "options": options, **got})
        print(f"  spam {name:22s} " + "  ".join(
            f"{a} ARI {got[a]['ari']:.3f} removed {got[a]['removed']} ({got[a]['correct']} right) {got[a]['seconds']} s"
            for a in ALGORITHMS), file=sys.stderr, flush=True)
    return rows, info


def spam_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| setting | resolved | ARI components | ARI greedy | removal precision components | "
             "removal precision greedy | removed (components/greedy) | correct (components/greedy) |",
             "| --- | --- |" + " ---: |" * 6]
    for r in rows:
        c, g = r["components"], r["greedy"]
        unit = f"{'char' if g['char'] else 'word'} {g['n']}-grams, {g['method']} t={g['threshold']}"
        lines.append(f"| {r['setting']} | {unit} | {c['ari']:.3f} | {g['ari']:.3f} | {fmt(c['removal_precision'])} | "
                     f"{fmt(g['removal_precision'])} | {c['removed']}/{g['removed']} | {c['correct']}/{g['correct']} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- 3. 20 Newsgroups

def unlinked_by_pairs(labels: np.ndarray, left: np.ndarray, right: np.ndarray) -> int:
    """Removed documents with no verified pair (among ``left``/``right``: every verified pair) with their kept
    document."""
    n = labels.size
    removed = np.flatnonzero(labels != np.arange(n))
    keys = np.minimum(left, right).astype(np.int64) * n + np.maximum(left, right)
    kept = labels[removed]
    wanted = np.minimum(removed, kept).astype(np.int64) * n + np.maximum(removed, kept)
    return int((~np.isin(wanted, keys)).sum())


def load_newsgroups(limit: int | None) -> list[dict[str, str]]:
    recs = []
    with gzip.open(data_dir() / "20newsgroups" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            recs.append({"id": rec["id"], "text": rec["text"]})
            if limit is not None and len(recs) >= limit:
                break
    return recs


def share_inside(text: str, kept: str, n: int = 3) -> float:
    """The share of ``text``'s distinct word ``n``-grams (lower-cased) that ``kept`` holds too.

    >>> share_inside("a b c d", "x a b c y"), share_inside("a b", "a b")
    (0.5, 0.0)
    """
    def grams(t: str) -> set[tuple[str, ...]]:
        w = re.findall(r"\w+", t.lower())
        return {tuple(w[j : j + n]) for j in range(len(w) - n + 1)}

    mine = grams(text)
    return len(mine & grams(kept)) / len(mine) if mine else 0.0


def run_newsgroups(limit: int | None, sample_out: Path | None, n_sample: int = 50) -> list[dict[str, Any]]:
    recs = load_newsgroups(limit)
    runs = [("components", {"cluster__algorithm": "components"}),
            ("greedy (default)", {"cluster__algorithm": "greedy"}),
            ("greedy, weighted-jaccard", {"cluster__algorithm": "greedy", "verify__score": "weighted-jaccard"})]
    rows = []
    for name, options in runs:
        t0 = time.perf_counter()
        result = neardup.dedup(recs, engine="memory", method="auto", all_pairs=True, **options)
        seconds = time.perf_counter() - t0
        c = result.clusters
        n = c.labels.size
        removed = int((~c.is_representative).sum())
        by_pairs = unlinked_by_pairs(c.labels, np.asarray(result.left), np.asarray(result.right))
        by_clusters = int(c.unlinked().size) if hasattr(c, "unlinked") else None
        params = result.summary.get("params", {})
        row = {"run": name, "docs": n, "removed": removed, "removal_rate": removed / n,
               "largest_cluster": int(c.sizes.max()),
               "clusters_over_1": int(((c.sizes > 1) & c.is_representative).sum()),
               "verified_pairs": int(len(result.left)),
               "unlinked_by_pairs": by_pairs, "unlinked_by_clusters": by_clusters, "seconds": round(seconds, 2),
               "method": params.get("method"), "threshold": params.get("threshold"),
               "score": params.get("verify", {}).get("score"), "char": params.get("shingle", {}).get("char"),
               "n": params.get("shingle", {}).get("n")}
        rows.append(row)
        print(f"  20ng {name:26s} removed {removed} largest {row['largest_cluster']} unlinked {by_pairs}/{by_clusters} "
              f"{seconds:.1f} s", file=sys.stderr, flush=True)
        if name.startswith("greedy (default)") and sample_out is not None:
            links = c.link_scores_of(0, n)
            gone = np.flatnonzero(~c.is_representative).tolist()
            picked = sorted(random.Random(0).sample(gone, min(n_sample, len(gone))))
            sample = [{"id": recs[i]["id"], "copy_of": recs[int(c.labels[i])]["id"],
                       "score": None if np.isnan(links[i]) else round(float(links[i]), 4),
                       "inside": round(share_inside(recs[i]["text"], recs[int(c.labels[i])]["text"]), 3),
                       "text": recs[i]["text"][:2000], "copy_of_text": recs[int(c.labels[i])]["text"][:4000]}
                      for i in picked]
            sample.sort(key=lambda x: x["inside"])  # the ones to read closely first
            print(f"  20ng sample of {len(sample)} removals: {sum(x['inside'] >= 0.8 for x in sample)} with 80% or "
                  f"more of their word 3-grams inside the kept post -> {sample_out}", file=sys.stderr, flush=True)
            sample_out.write_text(json.dumps(sample, indent=1, ensure_ascii=False), encoding="utf-8")
    return rows


def newsgroups_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| run | resolved | removed | removal rate | largest cluster | clusters > 1 | verified pairs "
             "| removed without a verified pair to their kept doc (pairs / clusters.unlinked()) |",
             "| --- | --- |" + " ---: |" * 6]
    for r in rows:
        unit = f"{'char' if r['char'] else 'word'} {r['n']}-grams, {r['score']} >= {r['threshold']}"
        lines.append(f"| {r['run']} | {unit} | {r['removed']} | {100 * r['removal_rate']:.2f}% | "
                     f"{r['largest_cluster']} | {r['clusters_over_1']} | {r['verified_pairs']} | "
                     f"{r['unlinked_by_pairs']} / {r['unlinked_by_clusters']} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- --sweep: what counts as a copy on clean text

#: The presets of clean text the sweep scores on the labelled days.
SWEEP_PRESETS = ("clean", "web-aggregator", "ocr-light", "typos")
SWEEP_SCORES = ("weighted-overlap", "weighted-jaccard")
SWEEP_THRESHOLDS = (0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
#: What ``auto`` resolves to on clean text (neardup.calibrate.choose), less the threshold.
WORD4 = {"method": "minhash", "shingle__char": False, "shingle__n": 4}
#: The fewest words of a shared passage that counts towards a removed post's coverage, and the most passages.
COVER_WORDS = 4
COVER_PASSAGES = 256
#: Coverage levels reported, and the share of removals at the first that stands for 48 of 50 true copies.
COVER_LEVELS = (0.8, 0.9)
COPY_SHARE = 0.96
_BLANK = re.compile(r"\n[ \t]*\n")


def sweep_config(score: str, threshold: float) -> Any:
    from neardup.api import make_config

    return make_config(**WORD4, threshold=threshold, verify__score=score, cluster__algorithm="greedy")


def check_word4(texts: list[str]) -> dict[str, Any]:
    """The configuration ``auto`` resolves to on ``texts`` (clean text) is :data:`WORD4` at its threshold, setting
    for setting: else the sweep would not measure the default, and stops."""
    from neardup.api import make_config
    from neardup.calibrate import resolve

    auto = resolve(make_config("auto", cluster__algorithm="greedy"), texts)
    ours = sweep_config(str(auto.verify.score), float(auto.threshold))  # type: ignore[arg-type]
    fields = [f.name for f in dataclasses.fields(auto) if f.name != "calibration"]
    differ = [f for f in fields if getattr(auto, f) != getattr(ours, f)]
    if differ:
        raise SystemExit(f"bench_decisions --sweep: auto resolves to settings other than {WORD4} on clean text: "
                         f"{differ}")
    return {"score": auto.verify.score, "threshold": auto.threshold, "choice": auto.calibration["choice"]}


def corpus_of(recs: list[dict[str, str]]) -> Any:
    """The corpus ``neardup.dedup`` reads from a list of records."""
    from neardup.api import make_read
    from neardup.io.frames import rows_of

    return rows_of(recs).corpus(make_read())


def recall_counts(labels: np.ndarray, truth: list[Any]) -> tuple[int, int]:
    """True duplicates (documents that are not the first of their true cluster) and how many were removed."""
    seen: set[Any] = set()
    dups = removed = 0
    for i, t in enumerate(truth):
        if t is None:
            continue
        if t in seen:
            dups += 1
            removed += int(labels[i] != i)
        seen.add(t)
    return dups, removed


def sweep_days(days: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """Every (score, threshold) on every day under every preset of :data:`SWEEP_PRESETS`, each noisy day
    represented once; and ``auto`` as shipped (greedy) on each, for reference. Also the coverage (as on 20
    Newsgroups, of the whole text: a story has no header block) of every removal at the default, weighted-overlap
    0.45, and whether it was correct."""
    from neardup.pipeline import prepare, run_prepared

    clean = load_days(days, DAYS5)
    check = check_word4(list(clean[days[0]].corpus.texts))
    rows, covered = [], []
    for preset in SWEEP_PRESETS:
        for day, data in clean.items():
            t0 = time.perf_counter()
            corpus_in = noisy(data, preset).corpus
            truth = list(corpus_in.labels)
            recs = records(list(corpus_in.ids), list(corpus_in.texts))
            corpus = corpus_of(recs)
            prep = prepare(corpus, sweep_config(SWEEP_SCORES[0], SWEEP_THRESHOLDS[0]))
            auto = neardup.dedup(recs, engine="memory", method="auto", cluster__algorithm="greedy")
            params = auto.summary.get("params", {})
            rows.append({"preset": preset, "day": day, "score": "auto", "threshold": params.get("threshold"),
                         "resolved": f"{'char' if params['shingle']['char'] else 'word'} {params['shingle']['n']}"
                                     f"-grams",
                         **decisions(auto.clusters.labels, truth),
                         **dict(zip(("dups", "dups_removed"), recall_counts(auto.clusters.labels, truth)))})
            for score in SWEEP_SCORES:
                for threshold in SWEEP_THRESHOLDS:
                    labels = run_prepared(prep, sweep_config(score, threshold)).clusters.labels
                    if (score, threshold) == (SWEEP_SCORES[0], SWEEP_THRESHOLDS[0]):
                        gone = np.flatnonzero(labels != np.arange(labels.size))
                        cover = Coverage(list(corpus.texts), headers=False)
                        for i, (c, _) in zip(gone.tolist(), cover.of(gone, labels[gone]).tolist()):
                            covered.append({"preset": preset, "day": day, "coverage": c,
                                            "correct": truth[i] is not None and truth[i] == truth[int(labels[i])]})
                    rows.append({"preset": preset, "day": day, "score": score, "threshold": threshold,
                                 **decisions(labels, truth),
                                 **dict(zip(("dups", "dups_removed"), recall_counts(labels, truth)))})
            print(f"  sweep {preset:16s} {day:7s} {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return rows, check, covered


def pooled_days(rows: list[dict[str, Any]]) -> dict[str, float]:
    removed, correct = sum(r["removed"] for r in rows), sum(r["correct"] for r in rows)
    dups, gone = sum(r["dups"] for r in rows), sum(r["dups_removed"] for r in rows)
    return {"ari": float(np.mean([r["ari"] for r in rows])), "removed": removed, "correct": correct,
            "precision": correct / removed if removed else float("nan"), "dups": dups,
            "recall": correct / dups if dups else float("nan"), "recall_literal": gone / dups if dups else float("nan")}


def body_start(text: str) -> int:
    """Where a post's body begins: after its header block (the lines up to the first empty line); a post
    without an empty line is all header."""
    m = _BLANK.search(text)
    return m.end() if m else len(text)


class Coverage:
    """The share of a removed post's body words inside passages it shares with its kept post, per pair
    (cached: the same pairs recur across settings), by passages and by the order-free 4-gram check."""

    def __init__(self, texts: list[str], headers: bool = True) -> None:
        from neardup.verify.passages import words_of

        self.texts = texts
        self.words = words_of(texts)
        self.body = np.array([body_start(t) if headers else 0 for t in texts], dtype=np.int64)
        self.cache: dict[tuple[int, int], tuple[float, float]] = {}

    def _body_words(self, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        hashes, starts, ends = self.words.of(d)
        first = int(np.searchsorted(starts, self.body[d]))
        return hashes, starts, ends, first

    def of(self, removed: np.ndarray, kept: np.ndarray) -> np.ndarray:
        """``(passages, 4-grams)`` coverage of each pair ``(removed[p], kept[p])``: shape ``(pairs, 2)``; NaN
        where the removed post has no body word."""
        from neardup.verify.passages import passage_table

        pairs = list(zip(removed.tolist(), kept.tolist()))
        new = sorted({p for p in pairs if p not in self.cache})
        if new:
            a = np.array([p[0] for p in new], dtype=np.int64)
            b = np.array([p[1] for p in new], dtype=np.int64)
            table = passage_table(self.texts, a, b, self.words, max_passages=COVER_PASSAGES, min_words=COVER_WORDS)
            spans: list[list[tuple[int, int]]] = [[] for _ in new]
            for q, lo, hi in zip(table.pair.tolist(), table.left_start.tolist(), table.left_end.tolist()):
                spans[q].append((lo, hi))
            for q, (d, k) in enumerate(new):
                self.cache[d, k] = (self._by_passages(d, spans[q]), self._by_grams(d, k))
        return np.array([self.cache[p] for p in pairs], dtype=np.float64).reshape(-1, 2)

    def _by_passages(self, d: int, spans: list[tuple[int, int]]) -> float:
        _, starts, ends, first = self._body_words(d)
        starts, ends = starts[first:], ends[first:]
        if starts.size == 0:
            return float("nan")
        covered = np.zeros(starts.size, dtype=bool)
        for lo, hi in spans:
            covered |= (starts >= lo) & (ends <= hi)
        return float(covered.mean())

    def _by_grams(self, d: int, k: int, n: int = COVER_WORDS) -> float:
        hashes, _, _, first = self._body_words(d)
        if hashes.size - first <= 0:
            return float("nan")
        theirs, _, _ = self.words.of(k)
        grams = {tuple(theirs[i : i + n].tolist()) for i in range(theirs.size - n + 1)}
        mine = hashes.tolist()
        covered = np.zeros(len(mine), dtype=bool)
        for i in range(len(mine) - n + 1):
            if tuple(mine[i : i + n]) in grams:
                covered[i : i + n] = True
        return float(covered[first:].mean())


def sweep_newsgroups(limit: int | None) -> tuple[list[dict[str, Any]], Any, Any, Coverage]:
    """Every (score, threshold) on 20 Newsgroups: removals and their coverage. The prepared corpus and the
    coverage cache come back for :func:`show_removals`."""
    from neardup.pipeline import prepare, run_prepared

    recs = load_newsgroups(limit)
    corpus = corpus_of(recs)
    prep = prepare(corpus, sweep_config(SWEEP_SCORES[0], SWEEP_THRESHOLDS[0]))
    cover = Coverage(list(corpus.texts))
    n = len(corpus)
    rows = []
    for score in SWEEP_SCORES:
        for threshold in SWEEP_THRESHOLDS:
            t0 = time.perf_counter()
            labels = run_prepared(prep, sweep_config(score, threshold)).clusters.labels
            if score == "weighted-overlap" and threshold == 0.45:  # the default, as neardup.dedup runs it
                direct = neardup.dedup(recs, engine="memory", method="auto", cluster__algorithm="greedy")
                if not np.array_equal(direct.clusters.labels, labels):
                    raise SystemExit("bench_decisions --sweep: run_prepared differs from neardup.dedup on "
                                     "20 Newsgroups")
            removed = np.flatnonzero(labels != np.arange(n))
            cov = cover.of(removed, labels[removed])
            row = {"score": score, "threshold": threshold, "docs": n, "removed": int(removed.size),
                   "removal_rate": removed.size / n, "no_body": int(np.isnan(cov[:, 0]).sum())}
            for level in COVER_LEVELS:
                for j, how in enumerate(("passages", "grams")):
                    hits = int((cov[:, j] >= level).sum())  # NaN (no body word) is never a copy
                    row[f"{how}_{level}"] = hits / removed.size if removed.size else float("nan")
            rows.append(row)
            print(f"  sweep 20ng {score} {threshold}: removed {removed.size} "
                  f"copies(.8) {row['passages_0.8']:.3f} ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    return rows, prep, recs, cover


def recommend(table: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The setting that meets both aims, or None: 20 Newsgroups' removals copies (80% covered) in
    :data:`COPY_SHARE` of cases, and Reuters ARI and pooled removal precision no lower than the default's
    (weighted-overlap 0.45, the first row); among those, the highest Reuters recall, then ARI. And the setting
    that meets the first aim with the highest Reuters ARI (then recall), or None."""
    base = table[0]
    copies = [r for r in table if r["ng"]["passages_0.8"] >= COPY_SHARE]
    fit = [r for r in copies if r["days"]["ari"] >= base["days"]["ari"] - 1e-9
           and r["days"]["precision"] >= base["days"]["precision"] - 1e-9]
    both = max(fit, key=lambda r: (r["days"]["recall"], r["days"]["ari"], -r["threshold"])) if fit else None
    first = max(copies, key=lambda r: (r["days"]["ari"], r["days"]["recall"], -r["threshold"])) if copies else None
    return both, first


def sweep_tables(day_rows: list[dict[str, Any]], ng_rows: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    table = []
    for score in SWEEP_SCORES:
        for threshold in SWEEP_THRESHOLDS:
            mine = [r for r in day_rows if r["score"] == score and r["threshold"] == threshold]
            ng = next(r for r in ng_rows if r["score"] == score and r["threshold"] == threshold)
            table.append({"score": score, "threshold": threshold, "days": pooled_days(mine),
                          "per_preset": {p: pooled_days([r for r in mine if r["preset"] == p]) for p in SWEEP_PRESETS},
                          "ng": ng})
    auto_rows = [r for r in day_rows if r["score"] == "auto"]
    auto = pooled_days(auto_rows)
    lines = []
    for score in SWEEP_SCORES:
        lines += [f"### {score} (word 4-grams, minhash, greedy)\n",
                  "| threshold | Reuters ARI (4 presets mean) | Reuters removal precision (correct/removed) "
                  "| Reuters recall (non-first removed) | 20ng removal rate "
                  "| 20ng removals with body coverage >= .8 (4-gram check) | >= .9 (4-gram check) |",
                  "| ---: |" + " ---: |" * 6]
        for r in (r for r in table if r["score"] == score):
            d, ng = r["days"], r["ng"]
            lines.append(f"| {r['threshold']:.2f} | {d['ari']:.4f} | {fmt(d['precision'])} "
                         f"({d['correct']}/{d['removed']}) | {fmt(d['recall'])} ({fmt(d['recall_literal'])}) | "
                         f"{100 * ng['removal_rate']:.2f}% ({ng['removed']}) | "
                         f"{fmt(ng['passages_0.8'])} ({fmt(ng['grams_0.8'])}) | "
                         f"{fmt(ng['passages_0.9'])} ({fmt(ng['grams_0.9'])}) |")
        lines.append(f"| auto as shipped | {auto['ari']:.4f} | {fmt(auto['precision'])} ({auto['correct']}/"
                     f"{auto['removed']}) | {fmt(auto['recall'])} ({fmt(auto['recall_literal'])}) | | | |")
        lines.append("")
    lines += ["### Per preset: ARI (mean over days) / removed / correct\n",
              "| score | threshold | " + " | ".join(SWEEP_PRESETS) + " |",
              "| --- | ---: |" + " ---: |" * len(SWEEP_PRESETS)]
    for r in table:
        lines.append(f"| {r['score']} | {r['threshold']:.2f} | " + " | ".join(
            f"{r['per_preset'][p]['ari']:.4f} / {r['per_preset'][p]['removed']} / {r['per_preset'][p]['correct']}"
            for p in SWEEP_PRESETS) + " |")
    resolved = {p: sorted({f"{r['resolved']} t={r['threshold']}" for r in auto_rows if r["preset"] == p})
                for p in SWEEP_PRESETS}
    lines.append("| auto as shipped | | " + " | ".join(
        f"{pooled_days([r for r in auto_rows if r['preset'] == p])['ari']:.4f} / "
        f"{pooled_days([r for r in auto_rows if r['preset'] == p])['removed']} / "
        f"{pooled_days([r for r in auto_rows if r['preset'] == p])['correct']}" for p in SWEEP_PRESETS) + " |")
    lines.append("\nauto as shipped resolved to: " + "; ".join(f"{p}: {', '.join(v)}" for p, v in resolved.items()))
    return "\n".join(lines), table


def show_removals(prep: Any, recs: list[dict[str, str]], cover: Coverage, score: str, threshold: float,
                  k: int = 10, chars: int = 300) -> str:
    from neardup.pipeline import run_prepared

    result = run_prepared(prep, sweep_config(score, threshold))
    c = result.clusters
    n = c.labels.size
    links = c.link_scores_of(0, n)
    gone = np.flatnonzero(c.labels != np.arange(n)).tolist()
    picked = sorted(random.Random(0).sample(gone, min(k, len(gone))))
    cov = cover.of(np.array(picked, dtype=np.int64), c.labels[picked])
    out = [f"### {k} random removals (seed 0) at {score} >= {threshold}\n"]
    for i, (by_passages, by_grams) in zip(picked, cov.tolist()):
        kept = int(c.labels[i])
        body = recs[i]["text"][cover.body[i]:]
        out.append(f"- **{recs[i]['id']}** removed for **{recs[kept]['id']}** (score {links[i]:.3f}, body coverage "
                   f"{by_passages:.2f}, 4-gram check {by_grams:.2f}):\n\n```\n{body[:chars]}\n```\n")
    return "\n".join(out)


def run_sweep(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    days = ["31-MAR"] if args.quick else list(DAYS5)
    day_rows, check, covered = sweep_days(days)
    ng_rows, prep, recs, cover = sweep_newsgroups(4000 if args.quick else None)
    text, table = sweep_tables(day_rows, ng_rows)
    print(f"## What counts as a copy on clean text: score x threshold (greedy)\n")
    print(f"auto on clean text ({days[0]}) resolves to {check['choice']} with verify score {check['score']}: the "
          f"sweep's settings, less score and threshold (checked setting for setting).")
    print(f"Reuters: days {', '.join(days)} under {', '.join(SWEEP_PRESETS)} (the same fixed settings on every "
          f"preset); ARI: mean over days and presets; precision and recall pooled. Recall: correct removals (kept "
          f"document in the same true cluster) / documents that are not the first of their true cluster "
          f"({table[0]['days']['dups']}), i.e. the share of true duplicates removed; in brackets the documents that "
          f"are not the first of their true cluster and were removed, over the same (lower: greedy keeps the longest "
          f"of a cluster, often not its first). 20 Newsgroups: {ng_rows[0]['docs']} posts, every removal; "
          f"body coverage: share of the removed post's body words (after its header block) inside passages of "
          f">= {COVER_WORDS} words it shares with its kept post (passage_table); in brackets the order-free "
          f"word 4-gram check.\n")
    print(text)
    print("\nThe same coverage of the Reuters removals at weighted-overlap 0.45 (whole text), pooled over days:\n")
    print("| preset | correct removals | covered >= .8 | >= .9 | wrong removals | covered >= .8 | >= .9 |")
    print("| --- |" + " ---: |" * 6)
    for preset in (*SWEEP_PRESETS, "all"):
        mine = [r for r in covered if preset in ("all", r["preset"])]
        cells = []
        for ok in (True, False):
            cov = np.array([r["coverage"] for r in mine if r["correct"] == ok], dtype=np.float64)
            cells += [str(cov.size), *(fmt(float((cov >= level).mean())) if cov.size else "n/a"
                                       for level in COVER_LEVELS)]
        print(f"| {preset} | " + " | ".join(cells) + " |")
    best, first = recommend(table)
    print(f"\nRecommendation rule: 20ng removals with body coverage >= .8 at least {COPY_SHARE} (48 of 50), "
          f"Reuters ARI and pooled precision at least weighted-overlap 0.45's; then highest Reuters recall, ARI.")
    print("meets both: " + (f"{best['score']} >= {best['threshold']}" if best else "none"))
    print("meets the 20ng aim with the highest Reuters ARI: " + (
        f"{first['score']} >= {first['threshold']} (Reuters ARI {first['days']['ari']:.4f}, precision "
        f"{fmt(first['days']['precision'])}, recall {fmt(first['days']['recall'])})" if first else "none"))
    best = best or first
    if args.show:
        score, threshold = args.show.rsplit(":", 1)
        shown = (score, float(threshold))
    elif best:
        shown = (best["score"], best["threshold"])
    else:
        shown = None
    if shown:
        print()
        print(show_removals(prep, recs, cover, *shown))
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"days": day_rows, "newsgroups": ng_rows, "table": table, "check": check,
                                         "reuters_coverage": covered, "recommended": best}, indent=1, default=str))


# ---------------------------------------------------------------- --calibrate: auto's mapping refit for greedy

#: The noise models, each held out in turn (leave one noise model out): the presets of one generator family.
#: ``spam-campaigns`` is :func:`spam_corpus` (its own generator); ``clean`` is no noise model: always fitted on.
NOISE_MODELS: dict[str, tuple[str, ...]] = {
    "ocr": ("ocr-light", "ocr-1970s", "ocr-medium", "ocr-1930s", "ocr-heavy"),
    "typos": ("typos",), "web-aggregator": ("web-aggregator",), "adversarial-spam": ("adversarial-spam",),
    "nlpaug": ("nlpaug-ocr", "nlpaug-heavy"), "spam-campaigns": ("spam-campaigns",)}
ALWAYS_FITTED = {"clean": ("clean",)}
#: The grid. Word 4-grams' top is not taken below 0.45: --sweep measured what 20 Newsgroups removes from 0.45
#: up, and 20 Newsgroups (unlabelled) is not in this objective.
CAL_WORD_TOP = (0.45, 0.5, 0.55)
CAL_WORD_RATE = (3.0, 5.6, 8.0)
CAL_CHAR_TOP = (0.7, 0.8, 0.9)
CAL_CHAR_RATE = (5.0, 7.0, 9.0)
#: The variant term ``(vrate, from)``: ``exp(-vrate * max(0, variant - from))`` on the character threshold.
CAL_VARIANT = ((0.0, 0.035), (10.0, 0.035), (20.0, 0.035), (20.0, 0.015))
#: The character threshold's ceiling (1.0: none).
CAL_CHAR_MAX = (1.0, 0.65, 0.6, 0.55)
#: No Reuters preset may lose more than this ARI (mean over days) against the baseline, in a fit or to ship.
MAX_DROP = 0.01
#: Fits within this mean ARI of the best count as ties (one day's pair moves a preset's mean by .01 to .02).
FIT_TIE = 0.002


@dataclasses.dataclass(frozen=True)
class Mapping:
    """A mapping from a noise profile to auto's threshold (the word/character decision is calibrate's own cut-offs).
    Word 4-grams: ``word_top * exp(-word_rate * damage)``; character 5-grams:
    ``min(char_max, char_top * exp(-char_rate * damage - vrate * max(0, variant - vfrom)))``; both to 3 decimals."""

    word_top: float
    word_rate: float
    char_top: float
    char_rate: float
    vrate: float = 0.0
    vfrom: float = 0.035
    char_max: float = 1.0

    def choice(self, p: Any) -> tuple[bool, float]:
        import math

        from neardup import calibrate as cal

        char = not (p.chars < cal.MIN_CHARS or (p.damage < cal.WORD_MAX_DAMAGE and p.variant < cal.WORD_MAX_VARIANT))
        if not char:
            return False, round(self.word_top * math.exp(-self.word_rate * p.damage), 3)
        exponent = self.char_rate * p.damage + self.vrate * max(0.0, p.variant - self.vfrom)
        t = round(self.char_top * math.exp(-exponent), 3)
        return True, round(min(self.char_max, t), 3)

    def label(self) -> str:
        s = f"word {self.word_top:g}*exp(-{self.word_rate:g}d); char {self.char_top:g}*exp(-{self.char_rate:g}d"
        s += f" - {self.vrate:g}*max(0, v-{self.vfrom:g}))" if self.vrate else ")"
        return s + (f", at most {self.char_max:g}" if self.char_max < 1 else "")


#: The mapping fitted under components (calibrate.py before this refit).
BASELINE = Mapping(0.45, 5.6, 0.8, 7.0)


def shipped_mapping() -> Mapping:
    """calibrate.py's constants as a :class:`Mapping` (its optional terms read when it has them)."""
    from neardup import calibrate as cal

    vrate, vfrom = getattr(cal, "CHAR_VARIANT", (0.0, cal.WORD_MAX_VARIANT))
    return Mapping(*cal.WORD_THRESHOLD, *cal.CHAR_THRESHOLD, vrate, vfrom, getattr(cal, "CHAR_MAX", 1.0))


def grid() -> list[Mapping]:
    import itertools

    out = [Mapping(wt, wr, ct, cr, vr, vf, cm) for wt, wr, ct, cr, (vr, vf), cm in itertools.product(
        CAL_WORD_TOP, CAL_WORD_RATE, CAL_CHAR_TOP, CAL_CHAR_RATE, CAL_VARIANT, CAL_CHAR_MAX)]
    return out if BASELINE in out else [BASELINE, *out]


def unit_config(char: bool, threshold: float) -> Any:
    """What auto resolves to for that unit and threshold (checked against ``resolve`` in :func:`cal_corpora`)."""
    from neardup.api import make_config

    return make_config(method="minhash", shingle__char=char, shingle__n=5 if char else 4, threshold=threshold,
                       cluster__algorithm="greedy")


class CalCorpus:
    """One labelled corpus: its profile (once), the representation of the unit auto picks (once; the unit is
    calibrate's cut-offs, the same for every mapping), and the greedy ARI per threshold (cached)."""

    def __init__(self, preset: str, day: str, recs: list[dict[str, str]], truth: list[Any]) -> None:
        from neardup.calibrate import profile
        from neardup.pipeline import prepare

        self.preset, self.day, self.recs, self.truth = preset, day, recs, truth
        self.corpus = corpus_of(recs)
        self.profile = profile(self.corpus.texts)
        self.char, _ = BASELINE.choice(self.profile)
        self.prep = prepare(self.corpus, unit_config(self.char, 0.5))
        self.ari: dict[float, float] = {}

    def score(self, threshold: float) -> float:
        from neardup.pipeline import run_prepared

        if threshold not in self.ari:
            labels = run_prepared(self.prep, unit_config(self.char, threshold)).clusters.labels
            self.ari[threshold] = adjusted_rand_index(labels.tolist(), self.truth)
        return self.ari[threshold]

    def check(self, mapping: Mapping) -> None:
        """``mapping`` is what calibrate.choose gives on this profile, and run_prepared at its threshold gives
        what neardup.dedup(method="auto", greedy) gives."""
        from neardup.api import make_config
        from neardup.calibrate import choose, resolve

        char, t = mapping.choice(self.profile)
        chosen = choose(self.profile)
        if (chosen["shingle__char"], chosen["threshold"]) != (char, t):
            raise SystemExit(f"bench_decisions --calibrate: {self.preset} {self.day}: calibrate.choose gives {chosen}, "
                             f"the shipped mapping {mapping.label()} gives char={char} t={t}")
        auto = resolve(make_config("auto", cluster__algorithm="greedy"), self.corpus.texts)
        ours = unit_config(char, t)
        differ = [f.name for f in dataclasses.fields(auto) if f.name not in ("calibration", "defaulted")
                  and getattr(auto, f.name) != getattr(ours, f.name)]  # defaulted: which the user set, not a setting
        if differ:
            raise SystemExit(f"bench_decisions --calibrate: auto resolves to other settings than {ours}: {differ}")
        direct = neardup.dedup(self.recs, engine="memory", method="auto", cluster__algorithm="greedy")
        if adjusted_rand_index(direct.clusters.labels.tolist(), self.truth) != self.score(t):
            raise SystemExit(f"bench_decisions --calibrate: run_prepared differs from neardup.dedup on "
                             f"{self.preset} {self.day}")


def cal_corpora(days: list[str], presets: list[str], campaigns: int, background: int) -> list[CalCorpus]:
    clean = load_days(days, DAYS5)
    out = []
    for preset in presets:
        t0 = time.perf_counter()
        for day, data in clean.items():
            corpus = noisy(data, preset).corpus
            out.append(CalCorpus(preset, day, records(list(corpus.ids), list(corpus.texts)), list(corpus.labels)))
        print(f"  calibrate: {preset} profiled and represented ({time.perf_counter() - t0:.1f} s)",
              file=sys.stderr, flush=True)
    recs, truth, _ = spam_corpus(campaigns, background)
    out.append(CalCorpus("spam-campaigns", "-", recs, truth))
    return out


def preset_scores(corpora: list[CalCorpus], mapping: Mapping) -> dict[str, float]:
    """ARI per preset (mean over days; spam-campaigns: its one corpus) under ``mapping``."""
    by: dict[str, list[float]] = {}
    for c in corpora:
        by.setdefault(c.preset, []).append(c.score(mapping.choice(c.profile)[1]))
    return {p: float(np.mean(v)) for p, v in by.items()}


def group_scores(per_preset: dict[str, float]) -> dict[str, float]:
    """ARI per noise model (mean over its presets) and of clean text."""
    return {g: float(np.mean([per_preset[p] for p in ps])) for g, ps in {**ALWAYS_FITTED, **NOISE_MODELS}.items()
            if all(p in per_preset for p in ps)}


def fit(table: dict[Mapping, dict[str, float]], groups: list[str]) -> Mapping:
    """The mapping with the best mean ARI over ``groups`` (each noise model weighs the same, whatever its number
    of presets) among those that lose no Reuters preset of ``groups`` more than :data:`MAX_DROP` against
    :data:`BASELINE`; within :data:`FIT_TIE` of the best, the fewest parameters changed from the baseline, then
    the best mean, then the grid's order."""
    base = table[BASELINE]
    presets = [p for g in groups for p in {**ALWAYS_FITTED, **NOISE_MODELS}[g] if p != "spam-campaigns"]

    def mean(m: Mapping) -> float:
        gs = group_scores(table[m])
        return float(np.mean([gs[g] for g in groups]))

    def changed(m: Mapping) -> int:
        return sum(a != b for a, b in zip(dataclasses.astuple(m), dataclasses.astuple(BASELINE)))

    allowed = [m for m in table if all(table[m][p] >= base[p] - MAX_DROP for p in presets)]
    top = max(mean(m) for m in allowed)
    return min((m for m in allowed if mean(m) >= top - FIT_TIE), key=lambda m: (changed(m), -mean(m)))


def run_calibrate(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    days = ["31-MAR"] if args.quick else list(DAYS5)
    presets = list(ALL_PRESETS)
    try:
        import nlpaug  # noqa: F401
    except ImportError:
        sys.exit("bench_decisions --calibrate: needs nlpaug (one of the noise models held out)")
    campaigns = args.campaigns if args.campaigns is not None else (40 if args.quick else 200)
    background = args.background if args.background is not None else (200 if args.quick else 1000)
    corpora = cal_corpora(days, presets, campaigns, background)
    shipped = shipped_mapping()
    for c in corpora:
        c.check(shipped)
    t_prep = time.perf_counter() - t0
    mappings = grid()
    if shipped not in mappings:
        mappings.append(shipped)
    table = {}
    for k, m in enumerate(mappings):
        table[m] = preset_scores(corpora, m)
        if k % 100 == 0:
            print(f"  calibrate: {k}/{len(mappings)} mappings, {sum(len(c.ari) for c in corpora)} runs "
                  f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    t_grid = time.perf_counter() - t0 - t_prep
    models = list(NOISE_MODELS)
    base_g = group_scores(table[BASELINE])

    print(f"## Calibrating auto for greedy, out of distribution\n")
    print(f"Corpora: Reuters days {', '.join(days)} under {', '.join(presets)}; spam campaigns ({campaigns} "
          f"campaigns, {background} background stories). Each corpus profiled once (calibrate.profile) and "
          f"represented once in the unit auto picks (calibrate's cut-offs: the same for every mapping); every mapping "
          f"of the grid run at its thresholds (neardup.pipeline.run_prepared, greedy; checked equal to "
          f"neardup.dedup(method='auto') under the shipped mapping on every corpus). {len(mappings)} mappings, "
          f"{sum(len(c.ari) for c in corpora)} runs; profiles and representations {t_prep:.0f} s, grid "
          f"{t_grid:.0f} s.\n")
    print("Grid: word top " + ", ".join(map(str, CAL_WORD_TOP)) + "; word rate " + ", ".join(map(str, CAL_WORD_RATE))
          + "; char top " + ", ".join(map(str, CAL_CHAR_TOP)) + "; char rate " + ", ".join(map(str, CAL_CHAR_RATE))
          + "; variant term (vrate, from) " + ", ".join(map(str, CAL_VARIANT)) + "; char ceiling "
          + ", ".join(map(str, CAL_CHAR_MAX)) + " (1.0: none).")
    print(f"Fit: the best mean ARI over the fitted noise models (and clean text), each model weighing the same, among "
          f"mappings that lose no fitted Reuters preset more than {MAX_DROP} against the baseline "
          f"({BASELINE.label()}); "
          f"within {FIT_TIE} of the best: the fewest parameters changed, then the best.\n")
    print("### Profiles (mean over days)\n")
    print("| preset | damage | variant | unit | baseline threshold | shipped threshold |")
    print("| --- | ---: | ---: | --- | --- | --- |")
    for p in dict.fromkeys(c.preset for c in corpora):
        mine = [c for c in corpora if c.preset == p]
        ts = lambda m: ", ".join(f"{m.choice(c.profile)[1]:.3f}" for c in mine)  # noqa: E731
        damage, variant = np.mean([c.profile.damage for c in mine]), np.mean([c.profile.variant for c in mine])
        print(f"| {p} | {damage:.4f} | {variant:.4f}"
              f" | {'char 5' if mine[0].char else 'word 4'} | {ts(BASELINE)} | {ts(shipped)} |")

    print("\n### Leave one noise model out (greedy ARI on the held-out model)\n")
    print("| held out | baseline | refit (fitted on the others) | refit mapping |")
    print("| --- | ---: | ---: | --- |")
    loo = {}
    for held in models:
        m = fit(table, [g for g in (*ALWAYS_FITTED, *models) if g != held])
        loo[held] = (base_g[held], group_scores(table[m])[held], m)
        print(f"| {held} | {base_g[held]:.3f} | {loo[held][1]:.3f} | {m.label()} |")
    b, r = np.array([v[0] for v in loo.values()]), np.array([v[1] for v in loo.values()])
    print(f"| **mean** | {b.mean():.3f} | {r.mean():.3f} | |")
    print(f"| **worst** | {b.min():.3f} ({models[int(b.argmin())]}) | {r.min():.3f} ({models[int(r.argmin())]}) | |")

    best = fit(table, [*ALWAYS_FITTED, *models])
    cols = [("baseline", BASELINE), ("refit on all", best)] + ([("shipped", shipped)] if shipped not in (BASELINE, best)
                                                              else [])
    print(f"\n### Refit on every noise model: {best.label()}\n")
    print("| preset | " + " | ".join(n for n, _ in cols) + " | refit - baseline |")
    print("| --- |" + " ---: |" * (len(cols) + 1))
    for p in table[BASELINE]:
        print(f"| {p} | " + " | ".join(f"{table[m][p]:.3f}" for _, m in cols)
              + f" | {table[best][p] - table[BASELINE][p]:+.3f} |")
    for name, fn in (("mean over presets", lambda t: np.mean(list(t.values()))),
                     ("mean over noise models and clean", lambda t: np.mean(list(group_scores(t).values())))):
        print(f"| {name} | " + " | ".join(f"{fn(table[m]):.3f}" for _, m in cols)
              + f" | {fn(table[best]) - fn(table[BASELINE]):+.3f} |")
    drops = {p: table[best][p] - table[BASELINE][p] for p in table[BASELINE] if p != "spam-campaigns"}
    worst_drop = min(drops.values())
    ok = r.min() > b.min() and r.mean() > b.mean() and worst_drop >= -MAX_DROP
    print(f"\nShip rule: leave-one-out worst {r.min():.3f} vs {b.min():.3f}, mean {r.mean():.3f} vs {b.mean():.3f}, "
          f"largest Reuters preset drop of the refit {worst_drop:+.3f} (at most {MAX_DROP}): "
          + ("ship the refit." if ok else "keep the baseline."))
    print(f"shipped now (calibrate.py): {shipped.label()}"
          + (" = the refit" if shipped == best else " = the baseline" if shipped == BASELINE else ""))
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({
            "profiles": [{"preset": c.preset, "day": c.day, **c.profile.to_dict()} for c in corpora],
            "table": [{"mapping": dataclasses.asdict(m), "presets": t} for m, t in table.items()],
            "loo": {h: {"baseline": v[0], "refit": v[1], "mapping": dataclasses.asdict(v[2])} for h, v in loo.items()},
            "refit": dataclasses.asdict(best), "ship": ok}, indent=1))


# ---------------------------------------------------------------- main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="one day, two presets, a small spam corpus, 4,000 posts")
    ap.add_argument("--presets", help=f"comma-separated presets, or 'all' ({','.join(ALL_PRESETS)}); default: "
                                      f"{','.join(PRESETS)}")
    ap.add_argument("--campaigns", type=int, help="spam campaigns (default 200; --quick 40)")
    ap.add_argument("--background", type=int, help="untouched background stories (default 1000; --quick 200)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: days, spam, newsgroups")
    ap.add_argument("--json", type=Path, help="write every row as JSON here")
    ap.add_argument("--sample-out", type=Path, help="write 50 random removals of the greedy default on 20 Newsgroups "
                                                    "(seed 0, both texts) as JSON here")
    ap.add_argument("--sweep", action="store_true", help="instead of the three parts: score x threshold of word "
                                                          "4-grams on the labelled days and 20 Newsgroups")
    ap.add_argument("--show", help="--sweep: show 10 random 20 Newsgroups removals at SCORE:THRESHOLD "
                                   "(default: the recommended setting)")
    ap.add_argument("--calibrate", action="store_true", help="instead of the three parts: refit auto's mapping for "
                                                              "greedy, leaving one noise model out at a time")
    args = ap.parse_args()
    if not (data_dir() / DAYS5["2-MAR"]).exists():
        sys.exit(f"bench_decisions: no labelled days under {data_dir()} (set NEARDUP_SHARED_DATA)")
    if args.calibrate:
        run_calibrate(args)
        return
    if args.sweep:
        run_sweep(args)
        return
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    presets = (list(ALL_PRESETS) if args.presets == "all" else args.presets.split(",") if args.presets
               else list(QUICK_PRESETS if args.quick else PRESETS))
    notes = []
    try:
        import nlpaug  # noqa: F401
    except ImportError:
        skipped = [p for p in presets if p.startswith("nlpaug")]
        presets = [p for p in presets if not p.startswith("nlpaug")]
        if skipped:
            notes.append(f"nlpaug not installed: skipped {', '.join(skipped)}")
    days = ["31-MAR"] if args.quick else list(DAYS5)
    campaigns = args.campaigns if args.campaigns is not None else (40 if args.quick else 200)
    background = args.background if args.background is not None else (200 if args.quick else 1000)
    t0 = time.perf_counter()
    out: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "notes": notes}

    if "days" not in skip:
        t = time.perf_counter()
        rows = run_days(days, presets)
        out["days"] = rows
        print(f"## 1. Labelled Reuters days ({', '.join(days)}): method auto, untuned\n")
        print("Means over days (removal precision: a day without removals left out); "
              "removed/correct: pooled over days.\n")
        print(days_table(rows))
        print(f"\n({time.perf_counter() - t:.0f} s)\n")
    if "spam" not in skip:
        t = time.perf_counter()
        rows, info = run_spam(campaigns, background)
        out["spam"], out["spam_corpus"] = rows, info
        print(f"## 2. Spam campaigns: of {info['bbc_stories']} BBC stories, {info['distinct_stories']} "
              f"near-duplicate-free; "
              f"{info['campaigns']} of them sent {info['copies']} times (2-30 copies, mean "
              f"{info['mean_campaign']}; adversarial-spam + one unrelated sentence each) among {info['background']} "
              f"untouched stories: {info['docs']} documents\n")
        print(spam_table(rows))
        print(f"\n({time.perf_counter() - t:.0f} s)\n")
    if "newsgroups" not in skip:
        t = time.perf_counter()
        rows = run_newsgroups(4000 if args.quick else None, args.sample_out)
        out["newsgroups"] = rows
        print(f"## 3. 20 Newsgroups ({rows[0]['docs']} posts, unlabelled): method auto\n")
        print(newsgroups_table(rows))
        if args.sample_out:
            print(f"\n50 random removals of the greedy default (seed 0): {args.sample_out}")
        print(f"\n({time.perf_counter() - t:.0f} s)\n")
    for note in notes:
        print(f"note: {note}")
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
