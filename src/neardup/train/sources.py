"""Where training sets come from: a labelled file, or any file of documents made synthetic.

Owns reading a training file into a :class:`~neardup.train.dataset.TrainingSet` (sampling the sources,
collapsing their real duplicates, keeping excluded documents out, drawing real neighbourhoods); must not
make pairs, mine negatives or train models.

* **Labelled.** A cluster-labelled file (``cluster`` field, null = singleton) or a labelled-pair file
  (``a, b, label``, an optional ``reason`` naming the kind of each pair), both read by
  :func:`neardup.eval.evaluate.load_labelled`, then :func:`~neardup.train.dataset.from_labelled`; the
  negatives' kinds are counted in ``info["negative_kinds"]``. :func:`load_labelled_sets` reads several
  (labelled days) into one set, each with ``copies`` generator-made noisy copies of every document.
* **Synthetic** (``synthetic=True``). Any document file whose texts become clusters of noisy copies and
  hard negatives (:mod:`neardup.train.synthetic`); sources that duplicate each other are collapsed first
  (:func:`~neardup.eval.benchsets.dedup_sources`).
* **Real neighbours** (synthetic only, ``neighbours=FRACTION``, off by default): that fraction of the
  sources is drawn as neighbourhoods of real near neighbours that are not duplicates
  (:mod:`neardup.train.neighbours`).
* **Exclusion** (``exclude=``): documents of other files (test sets), or near-duplicates of them, never
  enter, not even as a neighbour.
"""

from __future__ import annotations

import os
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from neardup.io.read import Corpus
from neardup.synth import derive_seed
from neardup.train.dataset import TrainingSet, from_labelled, from_records
from neardup.train.neighbours import NEIGHBOUR_BAND, NEIGHBOUR_MAX, NeighbourGraph, real_neighbours

__all__ = ["NEIGHBOUR_POOL", "load_labelled_sets", "load_training_set", "negative_kinds"]

#: Texts (the first of the seeded shuffle) searched for real neighbours; bounds the cost on big files.
NEIGHBOUR_POOL = 100_000


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
    real near neighbours that are not duplicates (see :mod:`neardup.train.neighbours`);
    ``neighbour_band`` is their IDF-weighted overlap band, ``neighbour_max`` the neighbours per seed.
    The in-band pairs among the kept sources become explicit hard negatives and share a split group;
    ``info`` reports them (``neighbour_pairs``: source ids, weighted and plain overlap).

    >>> import json, tempfile; from pathlib import Path; p = Path(tempfile.mkdtemp()) / "clusters.jsonl"
    >>> _ = p.write_text("".join(json.dumps({"id": str(i), "text": f"story {i // 2}", "cluster": str(i // 2)}) + "\\n"
    ...                          for i in range(4)))
    >>> load_training_set(p).clusters
    ['c:0', 'c:0', 'c:1', 'c:1']
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
        if data.pairs is not None:
            kinds = negative_kinds(path)
            if kinds:
                ts.info["negative_kinds"] = kinds
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


def negative_kinds(path: str | os.PathLike[str]) -> dict[str, int]:
    """Negative pairs of a labelled-pair file counted by their ``reason`` (empty when the file names none).

    >>> import json, tempfile; from pathlib import Path; p = Path(tempfile.mkdtemp()) / "pairs.jsonl"
    >>> _ = p.write_text("".join(json.dumps(r) + "\\n" for r in [{"a": 1, "b": 2, "label": 0, "reason": "template"},
    ...                                                      {"a": 1, "b": 3, "label": 1, "reason": "resend"}]))
    >>> negative_kinds(p)
    {'template': 1}
    """
    from neardup.io.read import iter_jsonl, pair_label

    out: dict[str, int] = defaultdict(int)
    for lineno, rec in iter_jsonl(path):
        if "reason" in rec and not pair_label(rec.get("label"), path, lineno):
            out[str(rec["reason"])] += 1
    return dict(sorted(out.items()))


def load_labelled_sets(paths: Sequence[str | os.PathLike[str]], copies: int = 0, seed: int = 0, tag: str = "train",
                       docs: str | None = None, text_field: str = "text", id_field: str = "id",
                       exclude: Sequence[str] = (), log: Callable[[str], None] | None = None) -> TrainingSet:
    """Several labelled files (days, say) as one :class:`TrainingSet` (:func:`~neardup.train.dataset.concat`),
    each document with ``copies`` generator-made noisy copies in its cluster
    (:func:`~neardup.train.dataset.with_noisy_copies`, seeded by ``seed`` and ``tag``: training and
    validation copies differ). ``docs`` applies to a single pair file only (else each file's
    ``docs.jsonl`` beside it)."""
    from neardup.train.dataset import concat, with_noisy_copies

    say = log or (lambda _m: None)
    if docs is not None and len(paths) > 1:
        raise ValueError("docs= names the documents of one pair file; with several, each reads docs.jsonl beside it")
    parts = []
    for k, path in enumerate(paths):
        ts = load_training_set(path, docs=docs, text_field=text_field, id_field=id_field, exclude=exclude, log=say)
        ts = with_noisy_copies(ts, copies, seed=seed, tag=f"{tag}/{k}")
        st = ts.stats()
        say(f"labelled: {path}: {st['n_docs']} documents ({st['n_duplicate_clusters']} duplicate clusters, "
            f"{st['n_explicit_negatives']} labelled negatives{' with their noisy copies' if copies else ''})")
        parts.append(ts)
    return concat(parts)


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
