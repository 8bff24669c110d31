"""Training sets: documents with their duplicate cluster, split group and explicit hard negatives.

Owns :class:`TrainingSet`, making one from labelled data or generator records, and the split by cluster;
must not read files (see :mod:`neardup.train.sources`), make pairs or train models.

* **Labelled.** :func:`from_labelled`: cluster-labelled documents (null = singleton) or labelled pairs
  (clusters = connected components of the positive pairs, the negative pairs are kept as hard negatives).
* **Generated.** :func:`from_records`: the clusters of :func:`neardup.train.synthetic.make_clusters`, whose
  hard negatives become explicit negatives of every member of their source's cluster.
* **Several files.** :func:`concat` joins sets (labelled days, say); cluster and group names are
  prefixed by each set's position so two files never share a cluster.
* **Noisy copies.** :func:`with_noisy_copies` adds generator-made copies of every document to its own
  cluster (OCR, aggregator, typo and spam noise, :data:`~neardup.train.synthetic.TRAIN_PRESET_MIX`); a
  copy inherits its original's explicit negatives, so a model sees noise on real duplicates and on real
  template siblings alike.
* **Split.** :func:`split_by_cluster` moves whole *groups* (a cluster with its generated hard
  negatives) to validation, never single pairs: no document is on both sides. Labelled negative pairs
  that would cross the split are dropped.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.eval.evaluate import LabelledData
from neardup.io.read import Corpus
from neardup.synth import derive_seed

__all__ = ["TrainingSet", "concat", "from_labelled", "from_records", "split_by_cluster", "with_noisy_copies"]


#: What a noisy copy's id adds to its original's: ``<id>~n1``, ``<id>~n2``, ... (:func:`copy_id`).
_COPY_MARK = "~n"
_COPY_SUFFIX = re.compile(re.escape(_COPY_MARK) + r"[0-9]+$")


def copy_id(doc_id: str, j: int) -> str:
    """The id of the ``j``-th noisy copy of document ``doc_id`` (what :meth:`TrainingSet.origins` undoes).

    >>> copy_id("a", 2)
    'a~n2'
    """
    return f"{doc_id}{_COPY_MARK}{j}"


@dataclass
class TrainingSet:
    """Documents with their duplicate cluster and split group, plus explicit hard-negative pairs (indices).

    >>> ts = TrainingSet(["a", "b", "c"], ["x", "x", "y"], ["k", "k", "c"], ["k", "k", "c"], negatives=[(0, 2)])
    >>> ts.subset([2, 0]).negatives, ts.cluster_index().tolist(), ts.stats()["n_duplicate_clusters"]
    ([(1, 0)], [0, 0, 1], 1)
    """

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

    def origins(self) -> list[str]:
        """Each document's original: its id without the suffix :func:`copy_id` gives a noisy copy.

        >>> TrainingSet(["a", "b", "a~n1", "b~n2"], list("wxyz"), list("kkkk"), list("kkkk")).origins()
        ['a', 'b', 'a', 'b']
        """
        return [_COPY_SUFFIX.sub("", i) for i in self.ids]

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


def concat(sets: Sequence[TrainingSet]) -> TrainingSet:
    """One set holding every set's documents; cluster and group names get the set's position as a prefix
    (two labelled days never share a cluster), explicit negatives are re-indexed, ``info`` keeps each
    set's under ``parts``.

    >>> a = TrainingSet(["x", "y"], ["t", "t"], ["c", "c"], ["c", "c"], negatives=[(0, 1)])
    >>> b = TrainingSet(["z"], ["u"], ["c"], ["c"])
    >>> m = concat([a, b]); m.clusters, m.negatives
    (['0/c', '0/c', '1/c'], [(0, 1)])
    """
    if len(sets) == 1:
        return sets[0]
    ids: list[str] = []
    texts: list[str] = []
    clusters: list[str] = []
    groups: list[str] = []
    negs: list[tuple[int, int]] = []
    nbs: list[tuple[int, int]] = []
    for k, ts in enumerate(sets):
        base = len(ids)
        ids += ts.ids
        texts += ts.texts
        clusters += [f"{k}/{c}" for c in ts.clusters]
        groups += [f"{k}/{g}" for g in ts.groups]
        negs += [(a + base, b + base) for a, b in ts.negatives]
        nbs += [(a + base, b + base) for a, b in ts.neighbour_negatives]
    info: dict[str, Any] = {"parts": [{"source": ts.source, **ts.info} for ts in sets]}
    kinds: dict[str, int] = defaultdict(int)
    for ts in sets:
        for kind, n in ts.info.get("negative_kinds", {}).items():
            kinds[kind] += n
    if kinds:
        info["negative_kinds"] = dict(sorted(kinds.items()))
    return TrainingSet(ids, texts, clusters, groups, negs, " + ".join(ts.source for ts in sets), info, nbs)


def with_noisy_copies(ts: TrainingSet, copies: int, seed: int = 0, tag: str = "copies",
                      presets: Sequence[tuple[str, float]] | None = None) -> TrainingSet:
    """``ts`` plus ``copies`` noisy copies of every document (ids ``<id>~n1``, ...), each in its original's
    cluster and group, each copy drawing one preset of ``presets`` (default: the training mix). Every
    explicit negative ``(a, b)`` gains ``(copy of a, b)`` and ``(a, copy of b)``: a noisy template sibling is
    still not a duplicate. ``info["noisy_copies"]`` counts the copies by preset.

    >>> ts = TrainingSet(["a", "b"], ["The cat sat on the mat in London at 5 pm.", "A dog ran home."],
    ...                  ["x", "y"], ["x", "y"], negatives=[(0, 1)])
    >>> out = with_noisy_copies(ts, 1); out.ids, out.clusters, sorted(out.negatives)
    (['a', 'b', 'a~n1', 'b~n1'], ['x', 'y', 'x', 'y'], [(0, 1), (0, 3), (2, 1)])
    """
    if copies < 0:
        raise ValueError(f"copies must be >= 0, got {copies!r}")
    if copies == 0:
        return ts
    from neardup.synth import apply_noise
    from neardup.train.synthetic import TRAIN_PRESET_MIX

    mix = list(presets or TRAIN_PRESET_MIX)
    names = [p for p, _ in mix]
    weights = [w for _, w in mix]
    rng = random.Random(derive_seed(seed, "noisy-copies", tag))
    n = len(ts)
    ids, texts, clusters, groups = list(ts.ids), list(ts.texts), list(ts.clusters), list(ts.groups)
    made: dict[int, list[int]] = defaultdict(list)
    used: dict[str, int] = defaultdict(int)
    for j in range(1, copies + 1):
        for i in range(n):
            preset = rng.choices(names, weights)[0]
            cid = copy_id(ts.ids[i], j)
            made[i].append(len(ids))
            ids.append(cid)
            texts.append(apply_noise(ts.texts[i], preset, seed, doc_id=f"{tag}/{cid}").text)
            clusters.append(ts.clusters[i])
            groups.append(ts.groups[i])
            used[preset] += 1
    negs = list(ts.negatives)
    for a, b in ts.negatives:
        negs += [(c, b) for c in made[a]] + [(a, c) for c in made[b]]
    info = {**ts.info, "noisy_copies": {"per_document": copies, "by_preset": dict(sorted(used.items()))}}
    return TrainingSet(ids, texts, clusters, groups, negs, ts.source, info, list(ts.neighbour_negatives))


def from_records(records: Sequence[dict[str, Any]], source: str = "<synthetic>",
                 neighbour_pairs: Sequence[tuple[str, str]] = ()) -> TrainingSet:
    """A :class:`TrainingSet` from :func:`neardup.train.synthetic.make_clusters` records; the generator's
    hard negatives become explicit negative pairs with every member of their source's cluster.

    ``neighbour_pairs``: pairs of source ids that are real neighbours (different stories); every member
    (original or copy) of one source's cluster becomes an explicit negative of every member of the
    other's (recorded in ``neighbour_negatives`` too).

    >>> recs = [{"id": "s", "text": "t", "cluster": "s"}, {"id": "s~1", "text": "t!", "cluster": "s"},
    ...         {"id": "s~h", "text": "u", "cluster": "s~h", "group": "s", "role": "hard_negative", "source_id": "s"}]
    >>> from_records(recs).negatives
    [(0, 2), (1, 2)]
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
