"""Training data: labelled clusters, the train/validation split by cluster, pairs, and hard-negative mining.

Owns turning labelled files (or unlabelled text plus the noise generator) into a :class:`TrainingSet`
and that into training pairs; must not train models.

* **Sources.** A cluster-labelled file (``cluster`` field, null = singleton) or a labelled-pair file
  (``a, b, label``; clusters = connected components of the positive pairs, the negative pairs are kept
  as hard negatives), both read by :func:`neardup.eval.evaluate.load_labelled`; or, with
  ``synthetic=True``, any document file whose texts become clusters of noisy copies and hard
  negatives (:mod:`neardup.train.synthetic`).
* **Split.** :func:`split_by_cluster` moves whole *groups* (a cluster with its generated hard
  negatives) to validation, never single pairs: no document is on both sides. Labelled negative pairs
  that would cross the split are dropped.
* **Pairs.** :func:`build_pairs`: every within-cluster pair (capped per cluster) is a positive;
  ``neg_per_pos`` negatives per positive, of which ``hard_fraction`` (default 2/3, the NEWS-COPY mix)
  come from the hard pool (generator/labelled hard negatives plus mined ones) and the rest are random
  pairs of different clusters. When the hard pool is smaller than its share, random negatives fill in
  (the realised counts are reported).
* **Mining.** :func:`mine_hard_negatives`: pairs that MinHash (neardup's LSH + weighted overlap) or an
  encoder (k nearest neighbours by cosine) ranks close although their labels differ, closest first.
* **Real neighbours** (synthetic only, ``neighbours=FRACTION``, off by default). Random sources rarely
  include real *template siblings* (dividend, earnings or bond notices that share most words and differ
  in names and figures) or separate reports of one event, the hard negatives of real wire data. With
  ``neighbours > 0`` that fraction of the sources is drawn as *neighbourhoods*: a source plus up to
  ``neighbour_max`` of its real nearest neighbours in the same file, i.e. documents that MinHash-LSH finds
  and whose IDF-weighted overlap (weights from the whole file) lies in ``neighbour_band`` (default
  0.15-0.6) and that are *not* duplicates by the source-dedup rule (:data:`SOURCE_DEDUP_CONFIG
  <neardup.eval.benchsets.SOURCE_DEDUP_CONFIG>`: plain overlap < 0.3), so they are never collapsed by
  :func:`~neardup.eval.benchsets.dedup_sources`. Each such pair becomes two different clusters, an
  explicit hard negative (every member of one cluster with every member of the other, like the
  generator's), and one split group (connected components of the in-band pairs among the kept
  sources), so no neighbourhood straddles the train/validation split. See :func:`real_neighbours`.
"""

from __future__ import annotations

import os
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.eval.evaluate import LabelledData
from neardup.io.read import Corpus
from neardup.synth import derive_seed

#: Default share of negatives that are hard (NEWS-COPY used about two thirds).
HARD_FRACTION = 2.0 / 3.0
MINERS: tuple[str, ...] = ("minhash", "encoder", "both", "none")
#: IDF-weighted overlap band of real neighbours (``neighbours=``): similar, yet below the dedup rule.
NEIGHBOUR_BAND: tuple[float, float] = (0.15, 0.6)
#: Neighbours drawn with each neighbourhood's seed source.
NEIGHBOUR_MAX = 2
#: Texts (the first of the seeded shuffle) searched for real neighbours; bounds the cost on big files.
NEIGHBOUR_POOL = 100_000


@dataclass
class TrainingSet:
    """Documents with their duplicate cluster and split group, plus explicit hard-negative pairs (indices)."""

    ids: list[str]
    texts: list[str]
    clusters: list[str]
    groups: list[str]
    negatives: list[tuple[int, int]] = field(default_factory=list)
    source: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    #: The explicit negatives that join real neighbours (``neighbours=``), a subset of ``negatives``.
    neighbour_negatives: list[tuple[int, int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, indices: Sequence[int]) -> TrainingSet:
        """The documents at ``indices`` (explicit negatives kept when both ends are inside)."""
        idx = list(indices)
        where = {old: new for new, old in enumerate(idx)}
        negs = [(where[a], where[b]) for a, b in self.negatives if a in where and b in where]
        nbs = [(where[a], where[b]) for a, b in self.neighbour_negatives if a in where and b in where]
        return TrainingSet([self.ids[i] for i in idx], [self.texts[i] for i in idx],
                           [self.clusters[i] for i in idx], [self.groups[i] for i in idx], negs, self.source,
                           dict(self.info), nbs)

    def cluster_index(self) -> np.ndarray:
        """An integer per document: equal for documents of one cluster."""
        lookup: dict[str, int] = {}
        return np.array([lookup.setdefault(c, len(lookup)) for c in self.clusters], dtype=np.int64)

    def labelled(self, name: str = "") -> LabelledData:
        """The set as cluster-labelled data for :mod:`neardup.eval` (size-1 clusters are singletons)."""
        sizes: dict[str, int] = defaultdict(int)
        for c in self.clusters:
            sizes[c] += 1
        labels: list[str | None] = [c if sizes[c] > 1 else None for c in self.clusters]
        corpus = Corpus(ids=list(self.ids), texts=list(self.texts), labels=labels, source=self.source)
        return LabelledData(corpus=corpus, name=name or self.source)

    def stats(self) -> dict[str, Any]:
        """Counts: documents, clusters, duplicate clusters, groups, explicit negatives."""
        sizes: dict[str, int] = defaultdict(int)
        for c in self.clusters:
            sizes[c] += 1
        out = {"n_docs": len(self), "n_clusters": len(sizes), "n_duplicate_clusters": sum(s > 1 for s in sizes.values()),
               "n_groups": len(set(self.groups)), "n_explicit_negatives": len(self.negatives)}
        if self.neighbour_negatives:
            out["n_neighbour_negatives"] = len(self.neighbour_negatives)
        return out


def from_labelled(data: LabelledData) -> TrainingSet:
    """A :class:`TrainingSet` from cluster-labelled documents or labelled pairs.

    >>> from neardup.io.read import read_records
    >>> c = read_records([{"id": "a", "text": "x", "cluster": "k"}, {"id": "b", "text": "y", "cluster": "k"},
    ...                   {"id": "c", "text": "z", "cluster": None}], label_field="cluster")
    >>> ts = from_labelled(LabelledData(c)); ts.clusters[0] == ts.clusters[1] != ts.clusters[2]
    True
    """
    corpus = data.corpus
    n = len(corpus)
    if data.pairs is None:
        labels = corpus.labels or [None] * n
        clusters = [f"c:{lab}" if lab is not None else f"s:{corpus.ids[i]}" for i, lab in enumerate(labels)]
        return TrainingSet(list(corpus.ids), list(corpus.texts), clusters, list(clusters), [], corpus.source)
    from neardup.cluster import connected_components

    index = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    pos = [(index[a], index[b]) for a, b, lab in data.pairs if lab]
    neg = [(index[a], index[b]) for a, b, lab in data.pairs if not lab]
    comp = connected_components(n, np.array([a for a, _ in pos], dtype=np.int64),
                                np.array([b for _, b in pos], dtype=np.int64))
    clusters = [f"c:{corpus.ids[int(r)]}" for r in comp]
    same = {(a, b) for a, b in neg if clusters[a] == clusters[b]}
    info = {"n_negative_pairs_inside_a_cluster_dropped": len(same)} if same else {}
    negs = [(a, b) for a, b in neg if (a, b) not in same]
    return TrainingSet(list(corpus.ids), list(corpus.texts), clusters, list(clusters), negs, corpus.source, info)


def from_records(records: Sequence[dict[str, Any]], source: str = "<synthetic>",
                 neighbour_pairs: Sequence[tuple[str, str]] = ()) -> TrainingSet:
    """A :class:`TrainingSet` from :func:`neardup.train.synthetic.make_clusters` records; the generator's
    hard negatives become explicit negative pairs with every member of their source's cluster.

    ``neighbour_pairs``: pairs of source ids that are real neighbours (different stories); every member
    (original or copy) of one source's cluster becomes an explicit negative of every member of the
    other's (recorded in ``neighbour_negatives`` too).
    """
    ids = [str(r["id"]) for r in records]
    texts = [str(r["text"]) for r in records]
    clusters = [str(r["cluster"]) for r in records]
    groups = [str(r.get("group", r["cluster"])) for r in records]
    members: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        if r.get("role") != "hard_negative":
            members[str(r.get("source_id", r["cluster"]))].append(i)
    negs = [(j, i) for i, r in enumerate(records) if r.get("role") == "hard_negative"
            for j in members.get(str(r.get("source_id")), [])]
    nbs = [(a, b) for sa, sb in neighbour_pairs for a in members.get(str(sa), []) for b in members.get(str(sb), [])
           if clusters[a] != clusters[b]]
    return TrainingSet(ids, texts, clusters, groups, negs + nbs, source, neighbour_negatives=nbs)


def load_training_set(path: str | os.PathLike[str], synthetic: bool = False, docs: str | None = None,
                      text_field: str = "text", id_field: str = "id", max_sources: int | None = None,
                      seed: int = 0, synthetic_config: Any = None, exclude: Sequence[str] = (),
                      min_chars: int = 200, max_chars: int = 20_000,
                      log: Callable[[str], None] | None = None, neighbours: float = 0.0,
                      neighbour_band: tuple[float, float] = NEIGHBOUR_BAND,
                      neighbour_max: int = NEIGHBOUR_MAX) -> TrainingSet:
    """Read ``path`` into a :class:`TrainingSet` (labelled, or ``synthetic`` from its texts).

    Synthetic: texts shorter than ``min_chars`` or longer than ``max_chars`` are skipped, ``max_sources``
    are sampled (seeded), real duplicates among them are collapsed (neardup's MinHash pass, see
    :func:`neardup.eval.benchsets.dedup_sources`) so two sources never duplicate each other, then each
    source becomes a cluster. ``exclude``: documents whose id appears in these files, or which are
    near-duplicates of one of their documents, are dropped first (keep test sets out of training).

    ``neighbours`` (synthetic only; 0 = off): this fraction of the sources is drawn as neighbourhoods of
    real near neighbours that are not duplicates (see the module docstring and :func:`real_neighbours`);
    ``neighbour_band`` is their IDF-weighted overlap band, ``neighbour_max`` the neighbours per seed.
    The in-band pairs among the kept sources become explicit hard negatives and share a split group;
    ``info`` reports them (``neighbour_pairs``: source ids, weighted and plain overlap).
    """
    from neardup.eval.evaluate import load_labelled
    from neardup.io.read import InputError, is_pair_file, read_corpus

    if not 0.0 <= neighbours <= 1.0:
        raise ValueError(f"neighbours must be a fraction in [0, 1], got {neighbours!r}")
    lo_band, hi_band = neighbour_band
    if not 0.0 <= lo_band < hi_band <= 1.0:
        raise ValueError(f"neighbour_band must be (lo, hi) with 0 <= lo < hi <= 1, got {neighbour_band!r}")
    if neighbour_max < 1:
        raise ValueError(f"neighbour_max must be >= 1, got {neighbour_max!r}")
    say = log or (lambda _m: None)
    if not synthetic:
        data = load_labelled(path, docs=docs, text_field=text_field, id_field=id_field)
        ts = from_labelled(data)
        if exclude:
            keep = _not_excluded(ts.ids, ts.texts, exclude, text_field, id_field, say)
            ts = ts.subset(keep)
        return ts
    from neardup.eval.benchsets import SOURCE_DEDUP_CONFIG, SourceDoc, dedup_sources
    from neardup.train.synthetic import SyntheticConfig, make_clusters

    p = str(path)
    if is_pair_file(p):
        data = load_labelled(p, docs=docs, text_field=text_field, id_field=id_field)
        corpus = data.corpus
    else:
        corpus = read_corpus(p, text_field=text_field, id_field=id_field)
    idx = [i for i, t in enumerate(corpus.texts) if min_chars <= len(t.strip()) and len(t) <= max_chars]
    if not idx:
        raise InputError(p, None, f"no text between {min_chars} and {max_chars} characters to make training data from")
    rng = random.Random(derive_seed(seed, "sources"))
    rng.shuffle(idx)
    hoods: list[list[int]] = []
    graph: NeighbourGraph | None = None
    n_rest = max_sources
    if neighbours > 0:
        target = int(round(neighbours * (max_sources if max_sources is not None else len(idx))))
        graph = _neighbour_graph(corpus, idx[:NEIGHBOUR_POOL], neighbour_band, exclude, text_field, id_field, say)
        hoods = graph.neighbourhoods(target, neighbour_max)
        taken = {i for h in hoods for i in h}
        idx = [i for i in idx if i not in taken]
        if max_sources is not None:
            n_rest = max(0, max_sources - len(taken))
        say(f"neighbours: {len(hoods)} neighbourhoods of real neighbours ({len(taken)} sources, target {target}) "
            f"from {graph.n_pairs} in-band pairs among {graph.n_searched} texts")
    if n_rest is not None:
        idx = idx[: int(n_rest * 1.5) + 20]  # room for the excluded and duplicate texts dropped next
    first = [i for h in hoods for i in h]
    idx = first + idx
    if exclude:
        keep = set(_not_excluded([corpus.ids[i] for i in idx], [corpus.texts[i] for i in idx], exclude,
                                 text_field, id_field, say))
        idx = [i for k, i in enumerate(idx) if k in keep]
    pool = [SourceDoc(corpus.ids[i], corpus.texts[i], "none") for i in idx]
    kept, dinfo = dedup_sources(pool, SOURCE_DEDUP_CONFIG)
    if max_sources is not None:
        kept = kept[:max_sources]
    say(f"synthetic: {len(kept)} source texts ({dinfo['dropped']} near-duplicate sources dropped)")
    cfg = synthetic_config or SyntheticConfig()
    kept_ids = [d.id for d in kept]
    groups: list[str] | None = None
    pairs: list[tuple[str, str, float, float]] = []
    if graph is not None:
        where = {corpus.ids[i]: i for i in idx}
        groups, pairs = graph.groups_and_pairs(kept_ids, [where[d] for d in kept_ids])
    records = make_clusters(kept_ids, [d.text for d in kept], seed=seed, config=cfg, groups=groups)
    ts = from_records(records, source=f"synthetic:{p}", neighbour_pairs=[(a, b) for a, b, _, _ in pairs])
    ts.info.update(n_sources=len(kept), near_duplicate_sources_dropped=dinfo["dropped"], hard_kinds=list(cfg.hard_kinds))
    if graph is not None:
        sizes: dict[str, int] = defaultdict(int)
        for g in groups or []:
            sizes[g] += 1
        ts.info.update(neighbours=neighbours, neighbour_band=list(neighbour_band), n_neighbourhoods=len(hoods),
                       n_neighbourhood_sources=len(first),
                       n_neighbourhood_sources_kept=len(set(first) & {where[d] for d in kept_ids}),
                       n_neighbour_groups=sum(1 for v in sizes.values() if v > 1),
                       n_neighbour_pairs=len(pairs),
                       neighbour_pairs=[[a, b, round(w, 4), round(o, 4)] for a, b, w, o in pairs])
        say(f"neighbours: {len(pairs)} real neighbour pairs among the {len(kept)} sources, in "
            f"{ts.info['n_neighbour_groups']} split groups; {len(ts.neighbour_negatives)} explicit negatives")
    return ts


@dataclass
class NeighbourGraph:
    """Real neighbours among ``positions`` (indices into a corpus, in sampling order): pairs found by
    MinHash-LSH with their IDF-weighted overlap ``weighted`` and plain overlap ``overlap``, ``band`` the
    weighted-overlap band of a usable neighbour and ``dup_threshold`` the plain overlap at which the
    source-dedup rule calls a pair a duplicate. Built by :func:`real_neighbours`."""

    positions: list[int]
    left: np.ndarray
    right: np.ndarray
    weighted: np.ndarray
    overlap: np.ndarray
    band: tuple[float, float]
    dup_threshold: float
    blocked: set[int] = field(default_factory=set)

    @property
    def n_searched(self) -> int:
        return len(self.positions)

    def in_band(self) -> np.ndarray:
        """Mask of the pairs that are usable neighbours: weighted overlap in the band, not duplicates."""
        lo, hi = self.band
        return (self.weighted >= lo) & (self.weighted < hi) & (self.overlap < self.dup_threshold)

    def close(self) -> np.ndarray:
        """Mask of the pairs too similar to sit in different neighbourhoods: in the band or above it, or
        duplicates by the dedup rule."""
        return (self.weighted >= self.band[0]) | (self.overlap >= self.dup_threshold)

    @property
    def n_pairs(self) -> int:
        ok = self.in_band()
        if self.blocked:
            bl = np.array(sorted(self.blocked), dtype=np.int64)
            ok &= ~np.isin(self.left, bl) & ~np.isin(self.right, bl)
        return int(ok.sum())

    def neighbourhoods(self, target: int, max_neighbours: int = NEIGHBOUR_MAX) -> list[list[int]]:
        """Seed sources (in sampling order) with up to ``max_neighbours`` in-band neighbours each (closest
        first), until ``target`` documents are taken; corpus indices. A document joins only when it is
        not close (:meth:`close`) to any document of another neighbourhood, and neighbours of one seed
        are not duplicates of each other, so neighbourhoods stay apart and survive the dedup pass."""
        band = self.in_band()
        close = self.close()
        nb: dict[int, list[tuple[float, int]]] = defaultdict(list)
        near: dict[int, set[int]] = defaultdict(set)
        dup: set[tuple[int, int]] = set()
        for a, b, w, ok, c in zip(self.left.tolist(), self.right.tolist(), self.weighted.tolist(), band.tolist(),
                                  close.tolist()):
            if a in self.blocked or b in self.blocked:
                continue
            if ok:
                nb[a].append((w, b))
                nb[b].append((w, a))
            if c:
                near[a].add(b)
                near[b].add(a)
            if c and not ok:  # too similar to be neighbours: above the band, or duplicates by the dedup rule
                dup.add((min(a, b), max(a, b)))
        taken: set[int] = set()
        out: list[list[int]] = []
        for seed_pos in range(len(self.positions)):
            if len(taken) >= target:
                break
            if seed_pos in taken or seed_pos in self.blocked or not nb.get(seed_pos) or near[seed_pos] & taken:
                continue
            hood = [seed_pos]
            for _, b in sorted(nb[seed_pos], key=lambda t: (-t[0], t[1])):
                if len(hood) > max_neighbours or (len(hood) > 1 and len(taken) + len(hood) >= target):
                    break
                if b in taken or near[b] & taken or any((min(b, h), max(b, h)) in dup for h in hood):
                    continue
                hood.append(b)
            if len(hood) > 1:
                taken.update(hood)
                out.append([self.positions[h] for h in hood])
        return out

    def groups_and_pairs(self, ids: Sequence[str], positions: Sequence[int]
                         ) -> tuple[list[str], list[tuple[str, str, float, float]]]:
        """For the kept sources (``ids`` with their corpus ``positions``): a split group each (connected
        components of the in-band pairs among them, named after their first member; a source with no
        in-band pair is its own group) and the in-band pairs ``(id_a, id_b, weighted, overlap)``."""
        from neardup.cluster import connected_components

        local = {pos: k for k, pos in enumerate(self.positions)}
        kept = {local[p]: j for j, p in enumerate(positions) if p in local}
        band = self.in_band()
        la: list[int] = []
        lb: list[int] = []
        pairs: list[tuple[str, str, float, float]] = []
        for a, b, w, o, ok in zip(self.left.tolist(), self.right.tolist(), self.weighted.tolist(),
                                  self.overlap.tolist(), band.tolist()):
            if ok and a in kept and b in kept:
                ja, jb = sorted((kept[a], kept[b]))
                la.append(ja)
                lb.append(jb)
                pairs.append((str(ids[ja]), str(ids[jb]), float(w), float(o)))
        comp = connected_components(len(ids), np.array(la, dtype=np.int64), np.array(lb, dtype=np.int64))
        first: dict[int, str] = {}
        for j, c in enumerate(comp.tolist()):
            first.setdefault(c, str(ids[j]))
        return [first[c] for c in comp.tolist()], pairs


def real_neighbours(texts: Sequence[str], band: tuple[float, float] = NEIGHBOUR_BAND,
                    positions: Sequence[int] | None = None) -> NeighbourGraph:
    """Candidate pairs of ``texts`` with their IDF-weighted and plain overlap, as a :class:`NeighbourGraph`.

    Uses the source-dedup settings (:data:`~neardup.eval.benchsets.SOURCE_DEDUP_CONFIG`: word 4-grams,
    MinHash-LSH bands for Jaccard 0.1), so the plain overlap is exactly the score ``dedup_sources``
    compares with its threshold (0.3), and the IDF weights (power 2) come from ``texts``.

    >>> g = real_neighbours(["a b c d e f g h i j k l", "a b c d e f g h x y z w", "n o p q r s t u"], (0.1, 0.9))
    >>> g.left.tolist(), g.right.tolist(), bool(g.in_band()[0])
    ([0], [1], False)
    """
    from neardup.eval.benchsets import SOURCE_DEDUP_CONFIG
    from neardup.pipeline import candidate_pairs, prepare
    from neardup.verify.overlap import score_pairs

    n = len(texts)
    pos = list(range(n)) if positions is None else list(positions)
    cfg = SOURCE_DEDUP_CONFIG
    empty = np.empty(0, np.int64)
    if n < 2:
        return NeighbourGraph(pos, empty, empty, np.empty(0), np.empty(0), band, float(cfg.threshold))
    prep = prepare(Corpus(ids=[str(i) for i in range(n)], texts=list(texts)), cfg)
    left, right, overlap, _ = candidate_pairs(prep, cfg)
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    weights, totals = prep.weights(cfg.verify.idf_power)
    weighted = score_pairs(prep.sets, left, right, "weighted-overlap", weights=weights, totals=totals)
    return NeighbourGraph(pos, left, right, np.asarray(weighted, np.float64), np.asarray(overlap, np.float64),
                          band, float(cfg.threshold))


def _neighbour_graph(corpus: Corpus, positions: Sequence[int], band: tuple[float, float], exclude: Sequence[str],
                     text_field: str, id_field: str, say: Callable[[str], None]) -> NeighbourGraph:
    """:func:`real_neighbours` of the texts at ``positions``; with ``exclude``, documents of in-band or
    close pairs that are excluded (in, or near-duplicates of, those files) are blocked from neighbourhoods."""
    t0 = time.time()
    g = real_neighbours([corpus.texts[i] for i in positions], band, positions)
    if exclude:
        close = g.close()
        involved = sorted(set(g.left[close].tolist()) | set(g.right[close].tolist()))
        keep = set(_not_excluded([corpus.ids[positions[k]] for k in involved],
                                 [corpus.texts[positions[k]] for k in involved], exclude, text_field, id_field, say))
        g.blocked = {k for j, k in enumerate(involved) if j not in keep}
    say(f"neighbours: {g.left.size} MinHash candidate pairs among {len(positions)} texts "
        f"({time.time() - t0:.0f}s)")
    return g


def _not_excluded(ids: Sequence[str], texts: Sequence[str], exclude: Sequence[str], text_field: str,
                  id_field: str, say: Callable[[str], None]) -> list[int]:
    """Positions of the documents that are neither in, nor near-duplicates of, the ``exclude`` files."""
    from neardup.eval.benchsets import SOURCE_DEDUP_CONFIG
    from neardup.io.read import read_corpus
    from neardup.pipeline import run

    ex_ids: set[str] = set()
    ex_texts: list[str] = []
    for path in exclude:
        c = read_corpus(path, text_field=text_field, id_field=id_field)
        ex_ids.update(c.ids)
        ex_texts += c.texts
    n = len(ids)
    by_id = {i for i in range(n) if ids[i] in ex_ids}
    result = run(Corpus(ids=[str(i) for i in range(n + len(ex_texts))], texts=list(texts) + ex_texts),
                 SOURCE_DEDUP_CONFIG)
    labels = result.clusters.labels
    ex_clusters = set(labels[n:].tolist())
    near = {i for i in range(n) if labels[i] in ex_clusters} - by_id
    say(f"exclude: dropped {len(by_id)} documents by id and {len(near)} near-duplicates of excluded documents")
    return [i for i in range(n) if i not in by_id and i not in near]


def split_by_cluster(ts: TrainingSet, val_fraction: float = 0.15, seed: int = 0) -> tuple[TrainingSet, TrainingSet]:
    """Train and validation sets that never share a group (hence never a cluster or a document).

    Groups holding a duplicate cluster and the other groups are shuffled (seeded) separately and the
    first ``val_fraction`` of the documents of each kind go to validation, so both sides get duplicates.

    >>> ts = TrainingSet([str(i) for i in range(8)], ["t"] * 8, list("aabbccdd"), list("aabbccdd"))
    >>> tr, va = split_by_cluster(ts, 0.25); sorted(set(va.clusters)), len(tr)
    (['d'], 6)
    """
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in (0, 1), got {val_fraction!r}")
    members: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(ts.groups):
        members[g].append(i)
    csize: dict[str, int] = defaultdict(int)
    for c in ts.clusters:
        csize[c] += 1
    has_dup = {g: any(csize[ts.clusters[i]] > 1 for i in m) for g, m in members.items()}
    val: list[int] = []
    for kind in (True, False):
        keys = sorted(g for g in members if has_dup[g] == kind)
        random.Random(derive_seed(seed, "split", str(kind))).shuffle(keys)
        total = sum(len(members[g]) for g in keys)
        target = val_fraction * total
        taken = 0
        for g in keys:
            if taken >= target or (taken > 0 and taken + len(members[g]) > target * 1.5):
                continue
            val += members[g]
            taken += len(members[g])
    in_val = set(val)
    train_idx = [i for i in range(len(ts)) if i not in in_val]
    val_idx = sorted(in_val)
    return ts.subset(train_idx), ts.subset(val_idx)


@dataclass
class PairSet:
    """Training pairs (document indices into a :class:`TrainingSet`), label 1 = duplicate, and each
    pair's origin: ``positive``, ``hard`` (generator/labelled), ``mined`` or ``random``."""

    a: np.ndarray
    b: np.ndarray
    label: np.ndarray
    kind: list[str]
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.a.size)


def positive_pairs(ts: TrainingSet, max_per_cluster: int = 10, seed: int = 0) -> list[tuple[int, int]]:
    """Within-cluster pairs, at most ``max_per_cluster`` per cluster (a seeded sample beyond that)."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, c in enumerate(ts.clusters):
        members[c].append(i)
    rng = random.Random(derive_seed(seed, "positives"))
    out: list[tuple[int, int]] = []
    for c in sorted(members):
        m = members[c]
        pairs = [(m[x], m[y]) for x in range(len(m)) for y in range(x + 1, len(m))]
        if len(pairs) > max_per_cluster:
            pairs = rng.sample(pairs, max_per_cluster)
        out += pairs
    return out


def build_pairs(ts: TrainingSet, neg_per_pos: float = 1.0, hard_fraction: float = HARD_FRACTION,
                mined: Sequence[tuple[int, int]] = (), max_pos_per_cluster: int = 10, max_pairs: int | None = None,
                seed: int = 0) -> PairSet:
    """Positive pairs plus negatives in the documented hard/random mix (see the module docstring).

    ``mined``: extra hard negatives (index pairs, closest first), e.g. from :func:`mine_hard_negatives`.
    ``max_pairs`` caps the total (positives and negatives shrink in proportion).
    """
    if not 0.0 <= hard_fraction <= 1.0:
        raise ValueError(f"hard_fraction must be in [0, 1], got {hard_fraction!r}")
    if neg_per_pos < 0:
        raise ValueError(f"neg_per_pos must be >= 0, got {neg_per_pos!r}")
    rng = random.Random(derive_seed(seed, "pairs"))
    pos = positive_pairs(ts, max_pos_per_cluster, seed)
    rng.shuffle(pos)
    if max_pairs is not None and pos:
        pos = pos[: max(1, int(round(max_pairs / (1.0 + neg_per_pos))))]
    n_neg = int(round(neg_per_pos * len(pos)))
    n_hard_target = int(round(hard_fraction * n_neg))
    clusters = ts.clusters

    def key(a: int, b: int) -> tuple[int, int]:
        return (a, b) if a < b else (b, a)

    seen: set[tuple[int, int]] = set()
    explicit = [key(a, b) for a, b in ts.negatives if clusters[a] != clusters[b]]
    rng.shuffle(explicit)
    mined_k = [key(a, b) for a, b in mined if clusters[a] != clusters[b]]
    # Alternate explicit and mined hard negatives so both kinds are used when the pool is larger than needed.
    hard: list[tuple[tuple[int, int], str]] = []
    for t in range(max(len(explicit), len(mined_k))):
        for lst, kind in ((explicit, "hard"), (mined_k, "mined")):
            if t < len(lst) and lst[t] not in seen and len(hard) < n_hard_target:
                seen.add(lst[t])
                hard.append((lst[t], kind))
        if len(hard) >= n_hard_target:
            break
    n_random = n_neg - len(hard)
    rand: list[tuple[int, int]] = []
    n = len(ts)
    tries = 0
    while len(rand) < n_random and n > 1 and tries < 50 * max(n_random, 1):
        tries += 1
        a, b = rng.randrange(n), rng.randrange(n)
        if a == b or clusters[a] == clusters[b]:
            continue
        k = key(a, b)
        if k in seen:
            continue
        seen.add(k)
        rand.append(k)
    rows = [(a, b, 1, "positive") for a, b in pos] + [(a, b, 0, kind) for (a, b), kind in hard] + \
           [(a, b, 0, "random") for a, b in rand]
    rng.shuffle(rows)
    counts = {"positive": len(pos), "hard": sum(k == "hard" for _, k in hard),
              "mined": sum(k == "mined" for _, k in hard), "random": len(rand)}
    negs = len(hard) + len(rand)
    info = {"counts": counts, "hard_fraction_target": round(hard_fraction, 4),
            "hard_fraction_realised": round(len(hard) / negs, 4) if negs else 0.0,
            "hard_pool": {"explicit": len(explicit), "mined": len(mined_k)}}
    if ts.neighbour_negatives:  # real neighbours (load_training_set(neighbours=...)) among the hard negatives
        nbk = {key(a, b) for a, b in ts.neighbour_negatives}
        info["hard_pool"]["neighbour"] = len(nbk)
        info["neighbour_negatives"] = {"explicit": sum(k == "hard" and p in nbk for p, k in hard),
                                       "mined": sum(k == "mined" and p in nbk for p, k in hard),
                                       "mined_pool": sum(p in nbk for p in mined_k)}
    return PairSet(np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64),
                   np.array([r[2] for r in rows], dtype=np.int64), [r[3] for r in rows], info)


def mine_hard_negatives(texts: Sequence[str], clusters: Sequence[str], method: str = "minhash", k: int = 10,
                        embeddings: np.ndarray | None = None, encode: Callable[[list[str]], np.ndarray] | None = None,
                        max_pairs: int | None = None, min_score: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs ranked close by MinHash or an encoder although their clusters differ: ``(left, right, score)``,
    closest first.

    ``minhash``: neardup's MinHash-LSH candidates (bands for Jaccard 0.1) scored by weighted overlap;
    ``encoder``: each document's ``k`` nearest neighbours by cosine, from ``embeddings`` or
    ``encode(texts)``. At most ``k`` pairs per document are kept (its closest).
    """
    n = len(texts)
    if method not in ("minhash", "encoder"):
        raise ValueError(f"mining method must be minhash or encoder, got {method!r}")
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64))
    if n < 2:
        return empty
    lab: dict[str, int] = {}
    cl = np.array([lab.setdefault(c, len(lab)) for c in clusters], dtype=np.int64)
    if method == "minhash":
        from neardup.config import DedupConfig
        from neardup.pipeline import candidate_pairs, prepare

        cfg = DedupConfig(method="minhash", threshold=0.05).replace(minhash__lsh_threshold=0.1,
                                                                   cluster__max_cluster_size=None)
        prep = prepare(Corpus(ids=[str(i) for i in range(n)], texts=list(texts)), cfg)
        left, right, scores, _ = candidate_pairs(prep, cfg)
    else:
        from neardup.candidates.vectors import knn_pairs

        emb = embeddings if embeddings is not None else (encode(list(texts)) if encode is not None else None)
        if emb is None:
            raise ValueError("encoder mining needs embeddings or an encode function")
        left, right, scores = knn_pairs(np.asarray(emb, dtype=np.float32), k=k, threshold=-1.0)
    left, right, scores = np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(scores, np.float64)
    keep = (cl[left] != cl[right]) & (scores >= min_score)
    left, right, scores = left[keep], right[keep], scores[keep]
    order = np.lexsort((right, left, -scores))
    left, right, scores = left[order], right[order], scores[order]
    # at most k per document (counted on either end), closest first
    used = np.zeros(n, dtype=np.int64)
    sel = np.zeros(left.size, dtype=bool)
    for t in range(left.size):
        a, b = left[t], right[t]
        if used[a] < k or used[b] < k:
            sel[t] = True
            used[a] += 1
            used[b] += 1
    left, right, scores = left[sel], right[sel], scores[sel]
    if max_pairs is not None:
        left, right, scores = left[:max_pairs], right[:max_pairs], scores[:max_pairs]
    return left, right, scores


__all__ = ["HARD_FRACTION", "MINERS", "NEIGHBOUR_BAND", "NEIGHBOUR_MAX", "NEIGHBOUR_POOL", "NeighbourGraph", "PairSet",
           "TrainingSet", "build_pairs", "from_labelled", "from_records", "load_training_set", "mine_hard_negatives",
           "positive_pairs", "real_neighbours", "split_by_cluster"]
