r"""Labelled benchmark sets built from real texts: realistic cluster sizes, noise presets, hard negatives.

Owns choosing source documents (after removing the real duplicates the corpora already hold), the
cluster-size mix, validation/test splits and the set files; must not implement noise ops (see
:mod:`neardup.synth`) or score anything (see :mod:`neardup.eval.suite`).

Sources (``$NEARDUP_SHARED_DATA`` or ``<repo>/../shared/data``; see each folder's SOURCE.md):

=========  =====================  ===========  ============  =======================  ============
name       folder                 text field   topic field   flagged exact groups     min chars
=========  =====================  ===========  ============  =======================  ============
bbc        bbc_news               text         category      exact_dup_group          200
reuters    reuters21578           text         topics[0]     exact_body_dup_group     300
20ng       20newsgroups           body         newsgroup     exact_body_dup_group     300
ag         ag_news_test           text         label_name    exact_desc_dup_group     100
=========  =====================  ===========  ============  =======================  ============

Texts longer than 20,000 characters are skipped too (uuencoded binaries, FAQ dumps in 20NG).

**Real duplicates in the sources.** The corpora already contain duplicates; a method that finds one
must not be scored as wrong. So, per source, documents are grouped by (a) the flagged exact-duplicate
groups and (b) neardup's own ``minhash`` pipeline run over the whole pool with a loose setting
(:data:`SOURCE_DEDUP_CONFIG`: word 4-grams, 128 permutations, LSH bands derived for Jaccard 0.1
(64 x 2), every candidate verified by the exact unweighted overlap coefficient >= 0.3, connected
components); only the first document (input order) of each group is eligible as a source. The
number dropped for each reason is in the manifest (``sources.<name>``). (On BBC this finds 216 of
the 218 pairs the exhaustive ``ngram`` all-pairs pass finds at the same threshold, 200x faster.)

**Cluster sizes.** Each source document becomes a cluster of ``k`` documents: ``k = 1`` (a singleton)
with probability ``p_singleton = 0.8``, otherwise ``k`` is drawn from a truncated discrete power
law ``P(k) ~ k^-alpha`` on ``k = 2..200`` with ``alpha = 2.1787`` (solved so the mean duplicate-cluster
size is 6.0; :class:`ClusterSizeDistribution`). Draws are stratified in blocks of 20 (inverse CDF of
jittered quantiles, shuffled) so a set of a few hundred clusters has close to the target mix; the last
cluster of a split is cut to fit the size budget. For splits under 1,000 documents ``kmax`` is
size / 5 (and ``alpha`` re-solved for mean 6) so one cluster cannot swamp a tiny set. Measured mean
sizes are in the manifest.

**Documents.** In a cluster the first member is the source text unchanged (the "original"), the
others are independent noisy copies (``apply_noise(text, preset, seed, doc_id)``); a singleton is a
noisy copy. About 10% of sources (``p_hard``) also get one hard negative (``make_hard_negative``:
``update``, ``template_sibling`` and ``same_event_rewrite`` in turn; the rewrite pool is other
sources of the same topic in the same split), which is then noised like a copy and labelled as its
own singleton, i.e. NOT in its source's cluster.

**Splits.** Eligible sources are shuffled (seeded) and cut in halves: validation draws its sources
from the first half, test from the second, so the splits never share a source document. The same
sources and cluster sizes are used at every preset (only the noise differs), which is what makes
"quality as noise grows" comparable.

Files: ``DIR/<source>-<preset>/validation.jsonl`` and ``test.jsonl`` (``id``, ``text``, ``cluster``
(null = singleton), ``source_id``, ``ops``, ``role`` = original | copy | hard_negative) and
``DIR/manifest.json``.
"""

from __future__ import annotations

import bisect
import fnmatch
import json
import os
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neardup.config import DedupConfig
from neardup.eval.evaluate import LabelledData
from neardup.io.read import Corpus, InputError, iter_jsonl, read_jsonl
from neardup.io.write import write_json, write_jsonl
from neardup.synth import HARD_NEGATIVE_KINDS, apply_noise, derive_seed, get_preset, make_hard_negative, ngram_jaccard

__all__ = [
    "DEFAULT_PRESETS",
    "DEFAULT_SIZE",
    "DEFAULT_SOURCES",
    "NOISE_PROGRESSION",
    "SOURCES",
    "SOURCE_DEDUP_CONFIG",
    "BenchSet",
    "ClusterSizeDistribution",
    "SourceDoc",
    "SourceSpec",
    "bench_dir",
    "build_split",
    "cluster_size_stats",
    "data_dir",
    "dedup_sources",
    "distribution_for",
    "list_sets",
    "load_source",
    "make_quick_set",
    "make_sets",
    "plan_split",
    "read_manifest",
    "set_name",
]

REPO = Path(__file__).resolve().parents[3]

#: The default presets: light/heavy OCR, a web aggregator, spam evasion, and an OCR progression.
DEFAULT_PRESETS: tuple[str, ...] = (
    "ocr-1970s", "ocr-1930s", "web-aggregator", "adversarial-spam", "ocr-light", "ocr-medium", "ocr-heavy",
)
#: Presets in order of growing noise, for the "ARI as noise grows" plot.
NOISE_PROGRESSION: tuple[str, ...] = ("ocr-light", "ocr-medium", "ocr-heavy")
DEFAULT_SOURCES: tuple[str, ...] = ("bbc", "reuters", "20ng", "ag")
DEFAULT_SIZE = 1000  # documents per split

#: The loose setting used to find near-duplicates among the source documents themselves.
SOURCE_DEDUP_CONFIG = DedupConfig(method="minhash", threshold=0.3).replace(
    verify__score="overlap", minhash__lsh_threshold=0.1, cluster__max_cluster_size=None)


def data_dir() -> Path:
    """The shared data folder: ``$NEARDUP_SHARED_DATA`` or ``<repo>/../shared/data``."""
    env = os.environ.get("NEARDUP_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


#: The folder ``bench make``, ``bench run`` and ``bench report`` share when none is given (in the current folder).
BENCH_DIR = "neardup-bench"


def bench_dir() -> Path:
    """Where benchmark sets and results go: ``$NEARDUP_BENCH_DIR``, or ``neardup-bench`` in the current folder
    (``bench make`` writes the sets there, ``bench run`` reads them and writes its results and report beside
    them, ``bench report`` re-renders them)."""
    env = os.environ.get("NEARDUP_BENCH_DIR")
    return Path(env).expanduser() if env else Path(BENCH_DIR)


def set_name(source: str, preset: str) -> str:
    """Folder name of a set.

    >>> set_name("bbc", "ocr-1930s")
    'bbc-ocr-1930s'
    """
    return f"{source}-{preset}"


# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceSpec:
    """Where a source corpus lives and which fields hold its text, topic and flagged exact duplicates."""

    name: str
    folder: str
    text_field: str
    topic_field: str
    exact_field: str | None
    min_chars: int = 200
    max_chars: int = 20_000

    def path(self, root: Path) -> Path:
        """``docs.jsonl`` or ``docs.jsonl.gz`` in the source's folder (the first that exists)."""
        for name in ("docs.jsonl", "docs.jsonl.gz"):
            p = root / self.folder / name
            if p.exists():
                return p
        return root / self.folder / "docs.jsonl"


SOURCES: dict[str, SourceSpec] = {
    "bbc": SourceSpec("bbc", "bbc_news", "text", "category", "exact_dup_group", 200),
    "reuters": SourceSpec("reuters", "reuters21578", "text", "topics", "exact_body_dup_group", 300),
    "20ng": SourceSpec("20ng", "20newsgroups", "body", "newsgroup", "exact_body_dup_group", 300),
    "ag": SourceSpec("ag", "ag_news_test", "text", "label_name", "exact_desc_dup_group", 100),
}


@dataclass(frozen=True)
class SourceDoc:
    """One document of a source corpus."""

    id: str
    text: str
    topic: str
    exact_group: str | None = None


def _topic(rec: dict[str, Any], spec: SourceSpec) -> str:
    value = rec.get(spec.topic_field)
    if isinstance(value, list):
        if value:
            return str(value[0])
        places = rec.get("places")
        return f"place:{places[0]}" if isinstance(places, list) and places else "none"
    return "none" if value is None else str(value)


def load_source(name: str, root: Path | None = None) -> tuple[list[SourceDoc], dict[str, int]]:
    """The usable documents of a source (length-filtered), and counts of what was read and skipped."""
    if name not in SOURCES:
        raise ValueError(f"unknown source {name!r}; known: {', '.join(SOURCES)}")
    spec = SOURCES[name]
    path = spec.path(root or data_dir())
    if not path.exists():
        raise InputError(path, None, f"source {name!r} not found (set NEARDUP_SHARED_DATA)")
    docs: list[SourceDoc] = []
    counts = {"n_records": 0, "n_too_short": 0, "n_too_long": 0}
    for _, rec in iter_jsonl(path):
        counts["n_records"] += 1
        text = rec.get(spec.text_field)
        if not isinstance(text, str) or len(text.strip()) < spec.min_chars:
            counts["n_too_short"] += 1
            continue
        if len(text) > spec.max_chars:
            counts["n_too_long"] += 1
            continue
        group = rec.get(spec.exact_field) if spec.exact_field else None
        docs.append(SourceDoc(str(rec["id"]), text, _topic(rec, spec), None if group is None else str(group)))
    counts["n_pool"] = len(docs)
    return docs, counts


def _components(n: int, edges: Iterable[tuple[int, int]]) -> list[int]:
    """Connected-component label of each node (neardup's array union-find)."""
    import numpy as np

    from neardup.cluster import connected_components

    pairs = list(edges)
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    return connected_components(n, left, right).tolist()


def dedup_sources(docs: Sequence[SourceDoc], config: DedupConfig | None = SOURCE_DEDUP_CONFIG
                  ) -> tuple[list[SourceDoc], dict[str, Any]]:
    """Keep one document per group of real duplicates (flagged exact groups + neardup near-duplicates).

    ``config=None`` uses the flagged exact groups only. Returns the kept documents (input order)
    and counts: groups and documents dropped for exact and (additionally) near duplication.

    >>> d = [SourceDoc("a", "one two three four five six seven", "t", "g"),
    ...      SourceDoc("b", "one two three four five six seven", "t", "g"),
    ...      SourceDoc("c", "eight nine ten eleven twelve", "t")]
    >>> kept, info = dedup_sources(d); [x.id for x in kept], info["exact_dropped"]
    (['a', 'c'], 1)
    """
    n = len(docs)
    first: dict[str, int] = {}
    exact_edges: list[tuple[int, int]] = []
    for i, d in enumerate(docs):
        if d.exact_group is not None:
            exact_edges.append((first.setdefault(d.exact_group, i), i))
    exact = _components(n, exact_edges)
    n_exact_groups = sum(1 for c in Counter(exact).values() if c > 1)
    exact_dropped = n - len(set(exact))
    near_edges: list[tuple[int, int]] = []
    seconds = 0.0
    if config is not None and n > 1:
        from neardup.pipeline import run

        t0 = time.perf_counter()
        result = run(Corpus(ids=[str(i) for i in range(n)], texts=[d.text for d in docs]), config)
        seconds = time.perf_counter() - t0
        labels = result.clusters.labels.tolist()
        near_edges = [(int(labels[i]), i) for i in range(n) if labels[i] != i]
    combined = _components(n, exact_edges + near_edges)
    sizes = Counter(combined)
    # groups the near-duplicate pass added: components of the combined graph not explained by exact groups
    exact_sizes = Counter(exact)
    n_near_groups = sum(1 for root, size in sizes.items() if size > 1 and size != exact_sizes.get(root, 1))
    kept = [d for i, d in enumerate(docs) if combined[i] == i]
    total_dropped = n - len(kept)
    info = {
        "n_pool": n,
        "exact_groups": n_exact_groups,
        "exact_dropped": exact_dropped,
        "near_groups": n_near_groups,
        "near_dropped": total_dropped - exact_dropped,
        "dropped": total_dropped,
        "largest_group": max(sizes.values()) if sizes else 0,
        "n_eligible": len(kept),
        "near_config": None if config is None else {
            "method": config.method, "threshold": config.threshold, "ngram": config.shingle.n,
            "verify": config.verify.score, "lsh_threshold": config.minhash.lsh_threshold if config.method == "minhash"
            else None, "seconds": round(seconds, 2)},
    }
    return kept, info


# --------------------------------------------------------------------------------------------
# Cluster sizes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterSizeDistribution:
    """Singletons with probability ``p_singleton``; else ``P(k) ~ k^-alpha`` on ``kmin..kmax``.

    >>> d = ClusterSizeDistribution.for_mean(6.0)
    >>> round(d.alpha, 2), round(d.mean_duplicate_size(), 2)
    (2.18, 6.0)
    """

    alpha: float = 2.1787
    kmin: int = 2
    kmax: int = 200
    p_singleton: float = 0.8
    block: int = 20

    @classmethod
    def for_mean(cls, mean: float, kmin: int = 2, kmax: int = 200, p_singleton: float = 0.8) -> ClusterSizeDistribution:
        """The power-law exponent (bisection) whose truncated mean is ``mean``."""
        if not kmin < mean < kmax:
            raise ValueError(f"mean cluster size must be in ({kmin}, {kmax}), got {mean}")
        lo, hi = 0.0, 10.0
        for _ in range(100):
            mid = (lo + hi) / 2
            if cls(mid, kmin, kmax, p_singleton).mean_duplicate_size() > mean:
                lo = mid
            else:
                hi = mid
        return cls(round((lo + hi) / 2, 4), kmin, kmax, p_singleton)

    def pmf(self) -> np.ndarray:
        """Probabilities of the duplicate-cluster sizes ``kmin..kmax``."""
        k = np.arange(self.kmin, self.kmax + 1, dtype=float)
        p = k ** -self.alpha
        return p / p.sum()

    def mean_duplicate_size(self) -> float:
        """Expected size of a duplicate cluster (size >= 2)."""
        return float((np.arange(self.kmin, self.kmax + 1) * self.pmf()).sum())

    def expected_docs_per_source(self) -> float:
        """Expected documents a source contributes (singletons included)."""
        return self.p_singleton + (1 - self.p_singleton) * self.mean_duplicate_size()

    def sampler(self, rng: random.Random) -> Callable[[], int]:
        """A function drawing sizes; duplicate sizes are stratified in blocks of ``block`` draws."""
        cdf = np.cumsum(self.pmf()).tolist()
        cdf[-1] = 1.0
        queue: list[int] = []

        def dup_size() -> int:
            if not queue:
                us = [(i + rng.random()) / self.block for i in range(self.block)]
                rng.shuffle(us)
                queue.extend(self.kmin + min(bisect.bisect_left(cdf, u), len(cdf) - 1) for u in us)
            return queue.pop()

        def draw() -> int:
            return 1 if rng.random() < self.p_singleton else dup_size()

        return draw

    def describe(self) -> dict[str, Any]:
        """JSON summary for the manifest."""
        return {"kind": "singleton w.p. p_singleton, else truncated discrete power law P(k) ~ k^-alpha",
                **asdict(self), "expected_mean_duplicate_size": round(self.mean_duplicate_size(), 3),
                "expected_docs_per_source": round(self.expected_docs_per_source(), 3)}


DEFAULT_DISTRIBUTION = ClusterSizeDistribution()


def cluster_size_stats(labels: Sequence[str | None]) -> dict[str, Any]:
    """Sizes of the true clusters of a labelled split (null label = singleton).

    >>> cluster_size_stats(["a", "a", None, "b", "b", "b"])["mean_duplicate_size"]
    2.5
    """
    sizes = Counter(lab for lab in labels if lab is not None)
    dup = sorted(sizes.values())
    n_single = sum(1 for lab in labels if lab is None) + sum(1 for s in dup if s == 1)
    dup = [s for s in dup if s > 1]
    n_clusters = n_single + len(dup)
    hist = Counter(dup)
    return {
        "n_docs": len(labels),
        "n_clusters": n_clusters,
        "n_singletons": n_single,
        "n_duplicate_clusters": len(dup),
        "docs_in_duplicate_clusters": sum(dup),
        "mean_duplicate_size": round(sum(dup) / len(dup), 3) if dup else 0.0,
        "median_duplicate_size": float(np.median(dup)) if dup else 0.0,
        "max_size": max(dup) if dup else 1,
        "mean_cluster_size": round(len(labels) / n_clusters, 3) if n_clusters else 0.0,
        "singleton_fraction_of_clusters": round(n_single / n_clusters, 3) if n_clusters else 0.0,
        "true_pairs": sum(s * (s - 1) // 2 for s in dup),
        "size_histogram": {str(k): hist[k] for k in sorted(hist)},
    }


# --------------------------------------------------------------------------------------------
# Plans and sets
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedSource:
    """One source document in a split: its cluster size and optional hard-negative kind."""

    doc: SourceDoc
    size: int
    hard_negative: str | None = None


def plan_split(sources: Sequence[SourceDoc], budget: int, seed: int, tag: str,
               dist: ClusterSizeDistribution = DEFAULT_DISTRIBUTION, p_hard: float = 0.1) -> list[PlannedSource]:
    """Cluster sizes (and hard negatives) for ``sources`` in order until ``budget`` documents are planned.

    The last cluster is cut to fit; a hard negative is planned only when a document is left for it.

    >>> docs = [SourceDoc(str(i), "x", "t") for i in range(100)]
    >>> sum(p.size + (p.hard_negative is not None) for p in plan_split(docs, 50, 0, "v"))
    50
    """
    rng = random.Random(derive_seed(seed, "plan", tag))
    draw = dist.sampler(rng)
    out: list[PlannedSource] = []
    used = 0
    n_hard = 0
    for doc in sources:
        if used >= budget:
            break
        k = min(draw(), budget - used)
        used += k
        kind = None
        if used < budget and rng.random() < p_hard:
            kind = HARD_NEGATIVE_KINDS[n_hard % len(HARD_NEGATIVE_KINDS)]
            n_hard += 1
            used += 1
        out.append(PlannedSource(doc, k, kind))
    return out


def build_split(plan: Sequence[PlannedSource], source: str, preset: str, seed: int, tag: str,
                pool_size: int = 50) -> list[dict[str, Any]]:
    """The records of one split: originals, noisy copies and hard negatives, in a seeded shuffled order."""
    spec = get_preset(preset)
    by_topic: dict[str, list[str]] = defaultdict(list)
    for p in plan:
        by_topic[p.doc.topic].append(p.doc.text)
    records: list[dict[str, Any]] = []
    for p in plan:
        base = f"{source}:{p.doc.id}"
        cluster = base if p.size > 1 else None
        for j in range(p.size):
            rid = f"{base}~{j}"
            if p.size > 1 and j == 0:
                records.append({"id": rid, "text": p.doc.text, "cluster": cluster, "source_id": p.doc.id,
                                "ops": [], "role": "original"})
                continue
            noisy = apply_noise(p.doc.text, spec, seed, doc_id=rid)
            records.append({"id": rid, "text": noisy.text, "cluster": cluster, "source_id": p.doc.id,
                            "ops": noisy.ops, "role": "copy"})
        if p.hard_negative is not None:
            rid = f"{base}~hn"
            rng = random.Random(derive_seed(seed, "pool", tag, rid))
            pool = [t for t in by_topic[p.doc.topic] if t != p.doc.text]
            if len(pool) > pool_size:
                pool = rng.sample(pool, pool_size)
            hard = make_hard_negative(p.doc.text, p.hard_negative, seed, pool=pool, doc_id=rid)
            noisy = apply_noise(hard.text, spec, seed, doc_id=rid)
            records.append({"id": rid, "text": noisy.text, "cluster": None, "source_id": p.doc.id,
                            "ops": ["hard_negative:" + "+".join(hard.ops)] + noisy.ops, "role": "hard_negative"})
    random.Random(derive_seed(seed, "order", tag, preset)).shuffle(records)
    return records


def _similarity_stats(records: Sequence[dict[str, Any]], seed: int, max_pairs: int = 300) -> dict[str, Any]:
    """Mean word-3-gram Jaccard of (original, copy), (copy, copy) and (source text, hard negative) pairs."""
    by_cluster: dict[str, dict[str, list[str]]] = defaultdict(lambda: {"original": [], "copy": []})
    originals: dict[str, str] = {}
    hards: list[tuple[str, str]] = []
    for r in records:
        if r["cluster"] is not None:
            by_cluster[r["cluster"]][r["role"]].append(r["text"])
            if r["role"] == "original":
                originals[r["source_id"]] = r["text"]
        elif r["role"] == "hard_negative":
            hards.append((r["source_id"], r["text"]))
    rng = random.Random(seed)
    oc, cc = [], []
    for c in by_cluster.values():
        for o in c["original"]:
            oc += [(o, x) for x in c["copy"][:3]]
        cc += list(zip(c["copy"][0::2], c["copy"][1::2]))[:3]
    hn = [(originals[s], t) for s, t in hards if s in originals]

    def mean(pairs: list[tuple[str, str]]) -> float | None:
        if not pairs:
            return None
        if len(pairs) > max_pairs:
            pairs = rng.sample(pairs, max_pairs)
        return round(sum(ngram_jaccard(a, b, 3) for a, b in pairs) / len(pairs), 3)

    return {"mean_j3_original_copy": mean(oc), "mean_j3_copy_copy": mean(cc), "mean_j3_original_hard_negative": mean(hn)}


def _split_summary(records: Sequence[dict[str, Any]], plan: Sequence[PlannedSource], seed: int) -> dict[str, Any]:
    roles = Counter(r["role"] for r in records)
    kinds = Counter(p.hard_negative for p in plan if p.hard_negative)
    out = {"n_docs": len(records), "n_sources": len(plan), "n_originals": roles["original"], "n_copies": roles["copy"],
           "n_hard_negatives": roles["hard_negative"], "hard_negative_kinds": dict(sorted(kinds.items()))}
    out["cluster_sizes"] = cluster_size_stats([r["cluster"] for r in records])
    out["similarity"] = _similarity_stats(records, seed)
    return out


def read_manifest(out: Path) -> dict[str, Any]:
    """``DIR/manifest.json`` (an empty manifest when absent)."""
    path = Path(out) / "manifest.json"
    if not path.exists():
        return {"sets": {}, "sources": {}}
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def distribution_for(size: int, mean: float = 6.0) -> ClusterSizeDistribution:
    """The cluster-size mix for splits of ``size`` documents: sizes 2..200 (``kmax`` = size / 5 for
    splits under 1,000 documents, so one cluster cannot swamp a tiny set), exponent solved for ``mean``.

    >>> distribution_for(1000) == ClusterSizeDistribution.for_mean(6.0)
    True
    >>> distribution_for(200).kmax
    40
    """
    return ClusterSizeDistribution.for_mean(mean, kmax=min(200, max(10, size // 5)))


def make_sets(out: Path | None = None, sources: Sequence[str] = DEFAULT_SOURCES,
              presets: Sequence[str] = DEFAULT_PRESETS, seed: int = 0, size: int = DEFAULT_SIZE,
              root: Path | None = None, dist: ClusterSizeDistribution | None = None, p_hard: float = 0.1,
              near_config: DedupConfig | None = SOURCE_DEDUP_CONFIG,
              source_docs: dict[str, list[SourceDoc]] | None = None,
              log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build ``<source>-<preset>`` sets (validation + test) into ``out`` and update its manifest.

    ``source_docs`` gives a source's documents directly (tests); otherwise they are read from
    ``root`` (default :func:`data_dir`). Returns the manifest.
    """
    out = Path(out) if out is not None else bench_dir()
    if size < 2:
        raise ValueError(f"--size must be at least 2 documents per split, got {size}")
    for p in presets:
        get_preset(p)
    say = log or (lambda _msg: None)
    dist = dist or distribution_for(size)
    manifest = read_manifest(out)
    manifest.setdefault("sets", {})
    manifest.setdefault("sources", {})
    manifest.update({"format": 1, "cluster_size_distribution": dist.describe(), "p_hard_negative": p_hard,
                     "noise_progression": list(NOISE_PROGRESSION), "data_dir": str(root or data_dir())})
    for source in sources:
        t0 = time.perf_counter()
        if source_docs is not None and source in source_docs:
            docs, counts = list(source_docs[source]), {"n_records": len(source_docs[source])}
        else:
            docs, counts = load_source(source, root)
        kept, info = dedup_sources(docs, near_config)
        info = {**counts, **info}
        say(f"{source}: {info['n_pool']} usable documents, dropped {info['exact_dropped']} exact and "
            f"{info['near_dropped']} near duplicates ({info['exact_groups']} + {info['near_groups']} groups)")
        order = list(kept)
        random.Random(derive_seed(seed, "sources", source)).shuffle(order)
        half = len(order) // 2
        halves = {"validation": order[:half], "test": order[half:]}
        plans = {split: plan_split(halves[split], size, seed, f"{source}/{split}", dist, p_hard)
                 for split in ("validation", "test")}
        used = {split: {p.doc.id for p in plans[split]} for split in plans}
        assert not used["validation"] & used["test"]
        info["sources_used"] = {split: len(plans[split]) for split in plans}
        manifest["sources"][source] = info
        for preset in presets:
            name = set_name(source, preset)
            entry: dict[str, Any] = {"source": source, "preset": preset, "seed": seed, "size": size,
                                     "path": name, "splits": {}}
            for split in ("validation", "test"):
                records = build_split(plans[split], source, preset, seed, f"{source}/{split}")
                write_jsonl(out / name / f"{split}.jsonl", iter(records))
                entry["splits"][split] = _split_summary(records, plans[split], seed)
                if len(records) < size:
                    entry.setdefault("warnings", []).append(
                        f"{split}: only {len(records)} documents (source pool exhausted; asked for {size})")
            manifest["sets"][name] = entry
            cs = entry["splits"]["validation"]["cluster_sizes"]
            say(f"  {name}: validation {entry['splits']['validation']['n_docs']} / test "
                f"{entry['splits']['test']['n_docs']} docs, mean duplicate-cluster size {cs['mean_duplicate_size']}")
        manifest["sources"][source]["seconds"] = round(time.perf_counter() - t0, 2)
    all_sizes = [s for e in manifest["sets"].values() for sp in e["splits"].values()
                 for k, c in sp["cluster_sizes"]["size_histogram"].items() for s in [int(k)] * c]
    manifest["measured_mean_duplicate_size"] = round(sum(all_sizes) / len(all_sizes), 3) if all_sizes else None
    write_json(out / "manifest.json", manifest)
    return manifest


def _fallback_example_set(out: Path, seed: int) -> dict[str, Any]:
    """Split the bundled ``examples/news.jsonl`` (already labelled) into validation/test by cluster."""
    path = REPO / "examples" / "news.jsonl"
    if not path.exists():
        raise InputError(path, None, "neither shared data nor the bundled example corpus is available")
    recs = read_jsonl(path)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in recs:
        groups[r["cluster"] if r.get("cluster") is not None else f"single:{r['id']}"].append(r)
    keys = sorted(groups)
    random.Random(derive_seed(seed, "quick-example")).shuffle(keys)
    target = len(recs) // 2
    splits: dict[str, list[dict[str, Any]]] = {"validation": [], "test": []}
    for k in keys:
        which = "validation" if len(splits["validation"]) < target else "test"
        splits[which] += [{"id": r["id"], "text": r["text"], "cluster": r.get("cluster"), "source_id": k,
                           "ops": [], "role": "example"} for r in groups[k]]
    name = "example-news"
    entry: dict[str, Any] = {"source": "example", "preset": "planted", "seed": seed, "size": target, "path": name,
                             "splits": {}}
    for split, rows in splits.items():
        write_jsonl(out / name / f"{split}.jsonl", iter(rows))
        entry["splits"][split] = {"n_docs": len(rows),
                                  "cluster_sizes": cluster_size_stats([r["cluster"] for r in rows])}
    manifest = {"format": 1, "sets": {name: entry}, "sources": {"example": {"path": str(path)}},
                "note": "quick set from the bundled example corpus (shared data not found)"}
    write_json(out / "manifest.json", manifest)
    return manifest


def make_quick_set(out: Path, seed: int = 0, size: int = 200, preset: str = "ocr-1970s",
                   root: Path | None = None) -> dict[str, Any]:
    """A tiny set for ``bench run --quick``: ``size`` documents per split from BBC (first 800 articles),
    or the bundled example corpus when the shared data is absent."""
    root = root or data_dir()
    spec = SOURCES["bbc"]
    if not spec.path(root).exists():
        return _fallback_example_set(Path(out), seed)
    docs, _ = load_source("bbc", root)
    return make_sets(out, sources=["bbc"], presets=[preset], seed=seed, size=size, root=root,
                     source_docs={"bbc": docs[:800]})


# --------------------------------------------------------------------------------------------
# Reading sets back
# --------------------------------------------------------------------------------------------


@dataclass
class BenchSet:
    """A built set: its name, folder, and manifest entry (source, preset, split summaries)."""

    name: str
    path: Path
    info: dict[str, Any] = field(default_factory=dict)

    def split_path(self, split: str) -> Path:
        """The file of a split (``validation`` or ``test``), any format :func:`neardup.eval.loaders.load_any` reads."""
        for suffix in (".jsonl", ".jsonl.gz", ".json"):
            p = self.path / f"{split}{suffix}"
            if p.exists():
                return p
        raise InputError(self.path, None, f"set {self.name!r} has no {split} split ({split}.jsonl)")

    def load(self, split: str) -> LabelledData:
        """The labelled documents of a split."""
        from neardup.eval.loaders import load_any

        data = load_any(self.split_path(split))
        data.name = f"{self.name}/{split}"
        return data

    @property
    def source(self) -> str:
        return str(self.info.get("source", ""))

    @property
    def preset(self) -> str:
        return str(self.info.get("preset", ""))


def list_sets(out: Path | None = None, patterns: Sequence[str] | None = None) -> list[BenchSet]:
    """The sets in ``out`` (manifest order), optionally filtered by names or glob patterns.

    A pattern that is a folder holding ``validation.*`` and ``test.*`` files is used directly.
    """
    out = Path(out) if out is not None else bench_dir()
    manifest = read_manifest(out)
    sets = [BenchSet(name, out / e.get("path", name), e) for name, e in manifest.get("sets", {}).items()]
    if not patterns:
        return sets
    chosen: list[BenchSet] = []
    for pat in patterns:
        p = Path(pat).expanduser()
        if p.is_dir() and any(p.glob("validation.*")):
            chosen.append(BenchSet(p.name, p, {"source": p.name, "preset": ""}))
            continue
        hits = [s for s in sets if fnmatch.fnmatchcase(s.name, pat)]
        if not hits:
            known = ", ".join(s.name for s in sets) or "none: run `neardup bench make` first"
            raise ValueError(f"no benchmark set matches {pat!r} in {out} (known: {known})")
        chosen += [s for s in hits if s.name not in {c.name for c in chosen}]
    return chosen

