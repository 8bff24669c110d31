"""The clustering decision, side by side: ``components`` (the old rule) against ``greedy`` (the new default).

Usage::

    python benchmarks/bench_decisions.py [--quick] [--presets all|clean,ocr-heavy,...] [--json OUT]
                                         [--sample-out SAMPLE.json] [--skip days,spam,newsgroups]

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
"""

from __future__ import annotations

import argparse
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

from bench_defaults import ALL_PRESETS, DAYS, PRESETS, QUICK_PRESETS, data_dir, noisy  # noqa: E402

import neardup  # noqa: E402
from neardup.eval.loaders import load_any  # noqa: E402
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
    root = data_dir()
    clean = {d: load_any(root / DAYS5[d]) for d in days}
    for d, data in clean.items():
        data.name = d
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


def run_newsgroups(limit: int | None, sample_out: Path | None, n_sample: int = 50) -> list[dict[str, Any]]:
    recs = []
    with gzip.open(data_dir() / "20newsgroups" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            recs.append({"id": rec["id"], "text": rec["text"]})
            if limit is not None and len(recs) >= limit:
                break
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
                       "text": recs[i]["text"][:600], "copy_of_text": recs[int(c.labels[i])]["text"][:600]}
                      for i in picked]
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
    args = ap.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if not (data_dir() / DAYS5["2-MAR"]).exists():
        sys.exit(f"bench_decisions: no labelled days under {data_dir()} (set NEARDUP_SHARED_DATA)")
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
