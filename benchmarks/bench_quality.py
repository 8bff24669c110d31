"""Quality side by side: neardup methods vs datasketch MinHashLSH, tuned on validation, reported on test.

Usage::

    python benchmarks/bench_quality.py [--quick] [--sources 300] [--neural] [--reuters-only] [--json OUT]

Data (``$NEARDUP_SHARED_DATA`` or ``../shared/data``):

* ``reuters_days/docs.jsonl`` (one exhaustively labelled day, 565 stories). The day is split into two
  halves along connected components of a "related" graph: an edge joins two stories that share >= 1% of
  their word 5-grams (overlap coefficient, 5-grams in > 60 stories ignored: the labelling protocol's
  candidate rule), or that form a labelled candidate pair (pair_labels.jsonl, which also holds
  similar-title pairs), or that carry the same cluster label. So no duplicate pair and no labelled hard
  negative crosses halves. Components are dealt largest first to the smaller half. Reported: tune on
  half A / test on half B, the reverse, and tune-on-all/test-on-all (IN-SAMPLE, optimistic).
* Noisy sets built here from BBC News (``bbc_news/docs.jsonl``). BBC is not free of duplicates: besides
  the 100 exact-duplicate pairs flagged in its SOURCE.md (``exact_dup_group``), about 140 more article
  pairs share >= 20% of their word 5-grams (many ~100%: the same story with small edits). Sources are
  therefore grouped by connected components of (same exact_dup_group) or (5-gram overlap coefficient >= 0.2)
  and only ONE article per group is eligible, so a correct detection between two sources is never
  scored as a false positive. ``2 x --sources`` eligible articles are drawn with ``--seed``; validation
  and test get disjoint sources. ~70% of sources stay singletons, the rest get 1-5 noisy copies, each
  labelled with its source's cluster. Levels (the same sources / copy counts at every level):

    clean-copies  only line breaks / spacing reformatted
    ocr-light     word typos (0.5% of words) + OCR confusions (rn->m, m->rn, l->1, e->c, o->0, cl->d, ...)
                  at 1% of confusable sites                          (mean word-3-gram Jaccard ~0.80)
    ocr-heavy     OCR confusions at 6% of sites + 0.5% char drops + 0.5% spacing errors + 1% word typos
                  (mean J3 ~0.28, about NEWS-COPY's 1930s scans, 0.30)
    abridged      tail cut by 20-50%, dateline added, lead paragraph dropped (p=0.5), 0.5% word typos
                  (mean J3 ~0.60)
  The realised mean J3 (lower-cased \\w+ tokens) of the validation copies is printed per level.

Methods: neardup via ``neardup.eval.tune.tune(val, test, DedupConfig(...))`` (its own grid: thresholds and,
for minhash, LSH/collision candidate rules), for minhash (verify weighted-overlap = default, overlap,
jaccard; word n = 3/4/5; char 5-grams with LSH bands fixed for Jaccard 0.3, threshold tuned), ngram and
simhash. datasketch: ``MinHashLSH(threshold=t,
num_perm=128)`` over ``MinHash`` of word n-grams (``lower()``, ``\\W+`` split, " ".join; n = neardup's
default), t swept over neardup's minhash grid on validation by ARI (ties: F1, then higher t), clusters
= union-find over all LSH candidates; also ``datasketch+est``: the same candidates kept only when the
MinHash Jaccard estimate is >= t. All metrics come from ``neardup.eval.metrics`` (ARI, pairwise P/R/F1).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from neardup.candidates.lsh import optimal_bands_rows
from neardup.config import DedupConfig
from neardup.eval.evaluate import LabelledData, load_labelled
from neardup.eval.metrics import adjusted_rand_index, pairwise_scores
from neardup.eval.tune import DEFAULT_GRIDS, tune
from neardup.io.read import Corpus

NGRAM = DedupConfig().shingle.n
NUM_PERM = 128
LEVELS = ("clean-copies", "ocr-light", "ocr-heavy", "abridged")
_W = re.compile(r"\w+")
_SPLIT = re.compile(r"\W+")

NEARDUP_METHODS: list[tuple[str, DedupConfig]] = [
    ("minhash (w-overlap, n=4)", DedupConfig(method="minhash")),
    ("minhash overlap", DedupConfig(method="minhash").replace(verify__score="overlap")),
    ("minhash jaccard", DedupConfig(method="minhash").replace(verify__score="jaccard")),
    ("minhash n=3", DedupConfig(method="minhash").replace(shingle__n=3)),
    ("minhash n=5", DedupConfig(method="minhash").replace(shingle__n=5)),
    # Character 5-grams: LSH fixed at bands/rows for Jaccard 0.3 (only the threshold is tuned). With
    # neardup's full candidate sweep (LSH at 0.1/0.2, collisions >= 3) nearly every pair of English
    # texts becomes a candidate and exact verification takes ~1 min per BBC set (see README notes).
    ("minhash char5 lsh@0.3", DedupConfig(method="minhash").replace(
        shingle__char=True, shingle__n=5,
        minhash__bands=optimal_bands_rows(0.3, NUM_PERM)[0], minhash__rows=optimal_bands_rows(0.3, NUM_PERM)[1])),
    ("ngram", DedupConfig(method="ngram")),
    ("simhash", DedupConfig(method="simhash")),
]
# With --neural (needs neardup[neural]; RETSim embeds ~100 docs/s on 2 cores, the bi-encoder ~5-20).
NEURAL_METHODS: list[tuple[str, DedupConfig]] = [
    ("retsim", DedupConfig(method="retsim")),
    ("retsim-partial", DedupConfig(method="retsim-partial")),
    ("biencoder (MiniLM)", DedupConfig(method="biencoder")),
    ("hybrid", DedupConfig(method="hybrid")),
]
QUICK_METHODS = {"minhash (w-overlap, n=4)", "ngram", "simhash"}


def data_dir() -> Path:
    env = os.environ.get("NEARDUP_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def word_grams(text: str, n: int = 5) -> set[str]:
    tok = _W.findall(text.lower())
    return {" ".join(tok[i : i + n]) for i in range(len(tok) - n + 1)}


def overlap_edges(gram_sets: list[set[str]], min_overlap: float, max_df: int) -> list[tuple[int, int]]:
    """Pairs whose overlap coefficient of (not too frequent) grams is >= min_overlap."""
    post: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(gram_sets):
        for x in g:
            post[x].append(i)
    shared: dict[tuple[int, int], int] = defaultdict(int)
    for docs in post.values():
        if len(docs) < 2 or len(docs) > max_df:
            continue
        for a in range(len(docs)):
            for b in range(a + 1, len(docs)):
                shared[(docs[a], docs[b])] += 1
    return [(a, b) for (a, b), k in shared.items()
            if k / max(1, min(len(gram_sets[a]), len(gram_sets[b]))) >= min_overlap]


def components(n: int, edges) -> list[int]:
    """Connected-component label of each node (neardup's array union-find)."""
    import numpy as np

    from neardup.cluster import connected_components

    pairs = list(edges)
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    return connected_components(n, left, right).tolist()


# ---------------------------------------------------------------- noise

OCR_CONFUSIONS: dict[str, list[tuple[str, str]]] = defaultdict(list)
for _src, _dst in [("rn", "m"), ("m", "rn"), ("l", "1"), ("1", "l"), ("e", "c"), ("c", "e"), ("o", "0"),
                   ("0", "o"), ("i", "l"), ("h", "b"), ("cl", "d"), ("d", "cl"), ("u", "v"), ("n", "u"),
                   ("S", "5"), ("B", "8"), ("a", "o"), ("t", "f"), ("I", "l"), ("vv", "w"), ("w", "vv"),
                   (",", "."), ("f", "t"), ("s", "a")]:
    OCR_CONFUSIONS[_src[0]].append((_src, _dst))
LETTERS = "abcdefghijklmnopqrstuvwxyz"
DATELINES = ["LONDON (BBC) - ", "LONDON, Feb 3 - ", "MANCHESTER - ", "(BBC News) ", "NEW YORK, March 1 (BBC) - "]


def ocr(text: str, rng: random.Random, rate: float, drop: float = 0.0, spacing: float = 0.0) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if drop and ch != "\n" and rng.random() < drop:
            i += 1
            continue
        if spacing and rng.random() < spacing:
            if ch == " ":
                i += 1  # two words run together
                continue
            out.append(" ")  # a word split in two
        for src, dst in OCR_CONFUSIONS.get(ch, ()):
            if text.startswith(src, i) and rng.random() < rate:
                out.append(dst)
                i += len(src)
                break
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def typos(text: str, rng: random.Random, rate: float) -> str:
    def edit(m: re.Match[str]) -> str:
        w = m.group(0)
        if len(w) < 3 or rng.random() >= rate:
            return w
        p = rng.randrange(len(w))
        op = rng.randrange(4)
        if op == 0:
            return w[:p] + w[p + 1 :]
        if op == 1:
            return w[:p] + rng.choice(LETTERS) + w[p + 1 :]
        if op == 2:
            return w[:p] + rng.choice(LETTERS) + w[p:]
        q = min(p + 1, len(w) - 1)
        return w[:p] + w[q] + w[p] + w[q + 1 :] if q != p else w
    return _W.sub(edit, text)


def reformat(text: str, rng: random.Random) -> str:
    paras = [p.strip() for p in text.split("\n\n") if p.strip()]
    sep = rng.choice(["\n", "\n\n", "\n \n", "\n\n\n"])
    return sep.join("  ".join(p.split(" ")) if rng.random() < 0.3 else p for p in paras)


def abridge(text: str, rng: random.Random) -> str:
    paras = [p for p in text.split("\n\n") if p.strip()]
    head, body = (paras[0], paras[1:]) if len(paras) > 1 else ("", paras)
    if len(body) > 1 and rng.random() < 0.5:
        body = body[1:]  # drop the lead paragraph
    rest = "\n\n".join(body)
    rest = rest[: max(1, int(len(rest) * (1 - rng.uniform(0.2, 0.5))))]
    rest = rng.choice(DATELINES) + rest
    out = (head + "\n\n" + rest) if head and rng.random() < 0.7 else rest
    return typos(out, rng, 0.005)


def make_copy(text: str, level: str, rng: random.Random) -> str:
    if level == "clean-copies":
        return reformat(text, rng)
    if level == "ocr-light":
        return ocr(typos(text, rng, 0.005), rng, 0.01)
    if level == "ocr-heavy":
        return ocr(typos(text, rng, 0.01), rng, 0.06, drop=0.005, spacing=0.005)
    if level == "abridged":
        return abridge(text, rng)
    raise ValueError(level)


# ---------------------------------------------------------------- data sets

def bbc_sources(root: Path, n_sources: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict]:
    docs = read_jsonl(root / "bbc_news" / "docs.jsonl")
    grams = [word_grams(d["text"]) for d in docs]
    edges = overlap_edges(grams, 0.2, max_df=50)
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        if d.get("exact_dup_group"):
            by_group[d["exact_dup_group"]].append(i)
    n_exact_edges = sum(len(v) - 1 for v in by_group.values())
    group = [d.get("exact_dup_group") for d in docs]
    n_near = sum(1 for a, b in edges if not (group[a] and group[a] == group[b]))
    edges += [(v[0], j) for v in by_group.values() for j in v[1:]]
    comp = components(len(docs), edges)
    eligible = sorted({c for c in comp})  # one representative (the lowest index) per group
    rng = random.Random(seed)
    rng.shuffle(eligible)
    if len(eligible) < 2 * n_sources:
        raise SystemExit(f"only {len(eligible)} independent BBC articles, need {2 * n_sources}")
    chosen = [docs[i] for i in eligible[: 2 * n_sources]]
    info = {"bbc_docs": len(docs), "exact_dup_links": n_exact_edges,
            "other_pairs_5gram_overlap_ge_0.2": n_near, "independent_articles": len(eligible),
            "dropped_as_twins": len(docs) - len(eligible)}
    return chosen[:n_sources], chosen[n_sources:], info


def noisy_set(sources: list[dict[str, Any]], level: str, split: str, seed: int) -> LabelledData:
    plan = random.Random(f"{seed}/{split}/plan")  # same sources and copy counts at every level
    ids: list[str] = []
    texts: list[str] = []
    labels: list[str | None] = []
    for src in sources:
        k = plan.randint(1, 5) if plan.random() < 0.3 else 0
        label = f"c:{src['id']}" if k else None
        ids.append(src["id"])
        texts.append(src["text"])
        labels.append(label)
        for j in range(k):
            rng = random.Random(f"{seed}/{level}/{src['id']}/{j}")
            ids.append(f"{src['id']}~{level}~{j}")
            texts.append(make_copy(src["text"], level, rng))
            labels.append(label)
    order = list(range(len(ids)))
    random.Random(f"{seed}/{split}/{level}/order").shuffle(order)
    corpus = Corpus(ids=[ids[i] for i in order], texts=[texts[i] for i in order],
                    labels=[labels[i] for i in order], source=f"bbc-{level}-{split}")
    return LabelledData(corpus=corpus, name=f"bbc {level} {split}")


def subset(data: LabelledData, idx: list[int], name: str) -> LabelledData:
    return LabelledData(corpus=data.corpus.subset(idx), name=name)


def reuters_halves(root: Path) -> tuple[LabelledData, LabelledData, LabelledData, dict]:
    path = root / "reuters_days" / "docs.jsonl"
    data = load_labelled(path)
    c = data.corpus
    n = len(c)
    index = {d: i for i, d in enumerate(c.ids)}
    grams = [word_grams(t) for t in c.texts]
    edges = overlap_edges(grams, 0.01, max_df=60)
    pairs_path = root / "reuters_days" / "pair_labels.jsonl"
    if pairs_path.exists():
        edges += [(index[p["a"]], index[p["b"]]) for p in read_jsonl(pairs_path)
                  if p["a"] in index and p["b"] in index]
    first: dict[str, int] = {}
    for i, lab in enumerate(c.labels or []):
        if lab is not None:
            edges.append((first.setdefault(lab, i), i))
    comp = components(n, edges)
    members: dict[int, list[int]] = defaultdict(list)
    for i, r in enumerate(comp):
        members[r].append(i)
    halves: tuple[list[int], list[int]] = ([], [])
    for group in sorted(members.values(), key=lambda g: (-len(g), g[0])):
        (halves[0] if len(halves[0]) <= len(halves[1]) else halves[1]).extend(group)
    a, b = sorted(halves[0]), sorted(halves[1])
    la = {c.labels[i] for i in a if c.labels[i] is not None}
    lb = {c.labels[i] for i in b if c.labels[i] is not None}
    assert not (la & lb), "a cluster crosses the halves"
    info = {"docs": n, "largest_component": max(len(g) for g in members.values()), "n_components": len(members),
            "half_A": {"docs": len(a), "dup_clusters": len(la)}, "half_B": {"docs": len(b), "dup_clusters": len(lb)}}
    return subset(data, a, "reuters half A"), subset(data, b, "reuters half B"), data, info


# ---------------------------------------------------------------- datasketch

def ds_minhashes(texts: list[str], n: int) -> list[Any]:
    from datasketch import MinHash

    out = []
    for t in texts:
        tok = [x for x in _SPLIT.split(t.lower()) if x]
        grams = {" ".join(tok[i : i + n]) for i in range(len(tok) - n + 1)} if len(tok) >= n else (
            {" ".join(tok)} if tok else set())
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch([g.encode("utf-8") for g in grams])
        out.append(m)
    return out


class DatasketchRuns:
    """MinHashLSH results for one labelled set; LSH candidates are cached per (bands, rows).

    ``MinHashLSH(threshold=t)`` only uses t to pick (b, r), so thresholds mapping to the same (b, r)
    give the same candidates: computing them once is an exact shortcut, not an approximation.
    """

    def __init__(self, data: LabelledData) -> None:
        self.data = data
        self.mhs = ds_minhashes(data.corpus.texts, NGRAM)
        self.empty = [m.is_empty() for m in self.mhs]
        self._cache: dict[tuple[int, int], list[tuple[int, int, float]]] = {}

    def candidates(self, threshold: float) -> list[tuple[int, int, float]]:
        from datasketch import MinHashLSH

        lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
        key = (lsh.b, lsh.r)
        if key not in self._cache:
            for i, m in enumerate(self.mhs):
                if not self.empty[i]:
                    lsh.insert(i, m, check_duplication=False)
            pairs = []
            for i, m in enumerate(self.mhs):
                if not self.empty[i]:
                    pairs += [(i, j, m.jaccard(self.mhs[j])) for j in lsh.query(m) if j > i]
            self._cache[key] = pairs
        return self._cache[key]

    def score(self, threshold: float, estimate: bool) -> dict[str, float]:
        pairs = [(i, j) for i, j, est in self.candidates(threshold) if not estimate or est >= threshold - 1e-12]
        labels = components(len(self.mhs), pairs)
        truth = self.data.corpus.labels
        out = {"ari": adjusted_rand_index(labels, truth)}
        out.update(pairwise_scores(labels, truth))
        return out


def tune_datasketch(val: LabelledData, test: LabelledData, grid: list[float]) -> dict[bool, dict[str, Any]]:
    """Both datasketch variants (plain LSH, LSH + estimate filter): best t on val by ARI, then test."""
    t0 = time.perf_counter()
    rv = DatasketchRuns(val)
    rt = rv if test is val else DatasketchRuns(test)
    out: dict[bool, dict[str, Any]] = {}
    for estimate in (False, True):
        trials = [(t, rv.score(t, estimate)) for t in grid]
        best_t, best_m = max(trials, key=lambda x: (round(x[1]["ari"], 12), round(x[1]["f1"], 12), x[0]))
        out[estimate] = {"params": {"threshold": best_t}, "validation": best_m, "test": rt.score(best_t, estimate)}
    seconds = round(time.perf_counter() - t0, 2)
    for r in out.values():
        r["seconds"] = seconds
    return out


def mean_j3(data: LabelledData) -> float:
    """Mean word-3-gram Jaccard between each copy and its source (ids ``src~level~j``)."""
    c = data.corpus
    text = dict(zip(c.ids, c.texts))
    vals = []
    for doc_id, t in text.items():
        if "~" in doc_id:
            a, b = word_grams(text[doc_id.split("~")[0]], 3), word_grams(t, 3)
            vals.append(len(a & b) / max(1, len(a | b)))
    return sum(vals) / len(vals) if vals else float("nan")


# ---------------------------------------------------------------- driver

def fmt_params(p: dict[str, Any]) -> str:
    s = f"t={p['threshold']:g}"
    if p.get("rule") == "lsh":
        s += f" lsh@{p.get('lsh_threshold')}"
    elif p.get("rule") == "collisions":
        s += f" c>={p.get('min_collisions')}"
    if p.get("hybrid_rule") == "linear":
        s += f" linear w={p.get('hybrid_weight'):g}"
    elif p.get("hybrid_rule") == "logistic":
        s += " logistic"
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sources, coarser grid, fewer methods")
    ap.add_argument("--sources", type=int, help="BBC sources per split (default 300, quick 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write the numbers here")
    ap.add_argument("--neural", action="store_true", help="also RETSim, RETSim-partial, bi-encoder and hybrid")
    ap.add_argument("--only", help="comma-separated method names to run, e.g. minhash,retsim,hybrid (default: all)")
    ap.add_argument("--reuters-only", action="store_true", help="only the real Reuters day (skip the BBC sets)")
    args = ap.parse_args()
    root = data_dir()
    needed = [root / "reuters_days" / "docs.jsonl", root / "bbc_news" / "docs.jsonl"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        print(f"shared data not found: {', '.join(missing)} (set NEARDUP_SHARED_DATA)", file=sys.stderr)
        raise SystemExit(0)  # nothing to measure: a clean skip, not an error
    n_sources = args.sources or (100 if args.quick else 300)
    methods = [m for m in NEARDUP_METHODS if not args.quick or m[0] in QUICK_METHODS]
    if args.neural:
        methods += NEURAL_METHODS
    if args.only:
        # a name may be given whole or without its parenthesised note ("minhash" = "minhash (w-overlap, n=4)"),
        # since some names hold commas
        wanted = set(args.only.split(","))
        methods = [m for m in methods if m[0] in wanted or m[0].split(" (")[0] in wanted]
    grids = None
    if args.quick:
        grids = {k: v[::2] for k, v in DEFAULT_GRIDS.items()}
    t_start = time.perf_counter()

    ra, rb, rall, rinfo = reuters_halves(root)
    val_src, test_src, binfo = bbc_sources(root, n_sources, args.seed)
    print(f"reuters_days split: {json.dumps(rinfo)}")
    print(f"bbc sources: {json.dumps(binfo)}; {n_sources} sources per split (disjoint)")
    experiments: list[tuple[str, LabelledData, LabelledData]] = [
        ("reuters A->B", ra, rb)]
    if not args.quick:
        experiments.append(("reuters B->A", rb, ra))
    experiments.append(("reuters all (IN-SAMPLE)", rall, rall))
    for level in [] if args.reuters_only else LEVELS:
        val = noisy_set(val_src, level, "val", args.seed)
        test = noisy_set(test_src, level, "test", args.seed)
        experiments.append((f"bbc {level}", val, test))
        print(f"bbc {level}: mean J3 copy vs source (val) {mean_j3(val):.3f}")

    results: list[dict[str, Any]] = []
    for set_name, val, test in experiments:
        n_true = pairwise_scores([0] * len(test.corpus), test.corpus.labels)["n_true_pairs"]
        print(f"\n== {set_name}: val {len(val.corpus)} docs, test {len(test.corpus)} docs ({n_true} true pairs)",
              flush=True)
        print(f"   {'method':<26} {'ARI':>6} {'F1':>6} {'P':>6} {'R':>6}  {'val ARI':>7} {'sec':>5}  params")
        rows = [(name, "neardup", cfg) for name, cfg in methods]
        rows += [("datasketch LSH", "datasketch", False), ("datasketch LSH+est", "datasketch", True)]
        ds: dict[bool, dict[str, Any]] = {}
        for name, kind, cfg in rows:
            if kind == "neardup":
                grid = grids[cfg.method] if grids else None
                r = tune(val, test, cfg, thresholds=grid)
            else:
                if not ds:
                    ds = tune_datasketch(val, test, (grids or DEFAULT_GRIDS)["minhash"])
                r = ds[cfg]
            te, va = r["test"], r["validation"]
            row = {"set": set_name, "method": name, "params": r["params"], "seconds": r["seconds"],
                   "test": {k: te[k] for k in ("ari", "f1", "precision", "recall", "n_pred_pairs", "n_true_pairs")},
                   "validation": {k: va[k] for k in ("ari", "f1", "precision", "recall")}}
            results.append(row)
            print(f"   {name:<26} {te['ari']:>6.3f} {te['f1']:>6.3f} {te['precision']:>6.3f} {te['recall']:>6.3f}"
                  f"  {va['ari']:>7.3f} {r['seconds']:>5.0f}  {fmt_params(r['params'])}", flush=True)
        write_json(args, n_sources, rinfo, binfo, results, time.perf_counter() - t_start)
    total = time.perf_counter() - t_start
    cpu = time.process_time()
    print(f"\ntotal {total:.0f}s wall, {cpu:.0f}s CPU (load average {os.getloadavg()[0]:.1f})")
    write_json(args, n_sources, rinfo, binfo, results, total, cpu)
    if args.json:
        print(f"wrote {args.json}")


def write_json(args, n_sources, rinfo, binfo, results, seconds, cpu=None) -> None:
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "quick": args.quick, "seed": args.seed, "n_sources_per_split": n_sources, "ngram": NGRAM,
            "reuters_split": rinfo, "bbc": binfo, "seconds": round(seconds, 1),
            "cpu_seconds": None if cpu is None else round(cpu, 1), "complete": cpu is not None,
            "results": results}, indent=2))


if __name__ == "__main__":
    main()
