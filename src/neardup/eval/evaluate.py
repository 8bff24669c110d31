"""Run the real pipeline on labelled data and score it: the numbers behind every quality claim.

Owns loading labelled files (cluster-labelled documents, or labelled pairs) and turning a result into
metrics; must not implement any stage of the pipeline.

Two label forms are accepted:

* documents with a ``cluster`` field (null = singleton), e.g. ``../shared/data/*/docs.jsonl``:
  ARI and pairwise P/R/F1 over all pairs implied by the clusters;
* labelled pairs (``a``, ``b``, ``label``), e.g. ``pairs.jsonl``, with the documents in a
  ``docs.jsonl`` beside it (or given): P/R/F1 over the labelled pairs (a pair is predicted a
  duplicate when both documents land in one cluster); ARI over the documents in labelled pairs,
  with the components of the positive pairs as truth.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup.arrays import distinct
from neardup.calibrate import resolve
from neardup.config import DedupConfig
from neardup.eval.metrics import adjusted_rand_index, pair_label_scores, pairwise_scores
from neardup.io.read import Corpus, InputError, is_pair_file, read_corpus, read_pair_labels
from neardup.pipeline import Prepared, prepare, run_prepared
from neardup.results import DedupResult


@dataclass
class LabelledData:
    """A corpus with its truth: cluster labels on the corpus, or labelled pairs."""

    corpus: Corpus
    pairs: list[tuple[str, str, int]] | None = None
    name: str = ""


def load_labelled(path: str | os.PathLike[str], docs: str | os.PathLike[str] | None = None,
                  text_field: str = "text", id_field: str = "id", label_field: str = "cluster") -> LabelledData:
    """Load a labelled file in either form (see the module docstring)."""
    p = Path(path)
    if is_pair_file(p):
        pairs = read_pair_labels(p)
        doc_path = Path(docs) if docs else p.with_name("docs.jsonl")
        if not doc_path.exists() and not docs:
            gz = p.with_name("docs.jsonl.gz")
            doc_path = gz if gz.exists() else doc_path
        if not doc_path.exists():
            raise InputError(p, None, f"pair labels need their documents: {doc_path} not found (give --docs)")
        corpus = read_corpus(doc_path, text_field=text_field, id_field=id_field)
        known = set(corpus.ids)
        for a, b, _ in pairs:
            for x in (a, b):
                if x not in known:
                    raise InputError(p, None, f"labelled pair names id {x!r}, which is not in {doc_path}")
        return LabelledData(corpus=corpus, pairs=pairs, name=p.parent.name or p.stem)
    corpus = read_corpus(p, text_field=text_field, id_field=id_field, label_field=label_field)
    assert corpus.labels is not None
    if all(label is None for label in corpus.labels):
        raise InputError(p, None, f"no document has a {label_field!r} label: nothing to evaluate against", label_field)
    return LabelledData(corpus=corpus, name=p.parent.name or p.stem)


def score(result: DedupResult, data: LabelledData) -> dict[str, Any]:
    """Metrics of a result against the data's labels (keys as in :func:`evaluate`)."""
    pred = result.clusters.labels
    if data.pairs is None:
        labels = data.corpus.labels
        assert labels is not None
        out: dict[str, Any] = {"ari": adjusted_rand_index(pred.tolist(), labels)}
        out.update(pairwise_scores(pred.tolist(), labels))
        return out
    index = {doc_id: i for i, doc_id in enumerate(data.corpus.ids)}
    a = np.array([index[x] for x, _, _ in data.pairs])
    b = np.array([index[y] for _, y, _ in data.pairs])
    gold = [lab for _, _, lab in data.pairs]
    out = pair_label_scores((pred[a] == pred[b]).tolist(), gold)
    # ARI over documents in labelled pairs; truth = components of positive pairs.
    from neardup.cluster import connected_components

    involved = distinct(np.concatenate([a, b]))
    local = {int(d): i for i, d in enumerate(involved)}
    pos = [(local[int(x)], local[int(y)]) for x, y, g in zip(a, b, gold) if g]
    truth = connected_components(involved.size, np.array([p for p, _ in pos], dtype=np.int64),
                                 np.array([q for _, q in pos], dtype=np.int64))
    out = {"ari": adjusted_rand_index(pred[involved].tolist(), truth.tolist()), **out}
    return out


def evaluate(data: LabelledData | str | os.PathLike[str], config: DedupConfig | None = None,
             progress: bool = False, prepared: Prepared | None = None) -> dict[str, Any]:
    """Run the pipeline on labelled data; returns ``ari``, ``precision``, ``recall``, ``f1``,
    ``n_docs``, ``n_pred_pairs``, ``seconds`` and more.

    >>> from neardup.io.read import read_records
    >>> c = read_records([{"id": "a", "text": "one two three four", "cluster": "x"},
    ...                   {"id": "b", "text": "one two three four", "cluster": "x"},
    ...                   {"id": "c", "text": "five six seven", "cluster": None}], label_field="cluster")
    >>> evaluate(LabelledData(c), DedupConfig())["ari"]
    1.0
    """
    d = data if isinstance(data, LabelledData) else load_labelled(data)
    cfg = resolve(config or DedupConfig(), d.corpus.texts)
    t0 = time.perf_counter()
    if prepared is not None and prepared.corpus is d.corpus and prepared.compatible_with(cfg):
        # Re-use the representation (embeddings are expensive); count the time it took.
        result = run_prepared(prepared, cfg)
        seconds = time.perf_counter() - t0 + sum(prepared.timings.values())
    else:
        result = run_prepared(prepare(d.corpus, cfg, progress=progress), cfg)
        seconds = time.perf_counter() - t0
    out = score(result, d)
    out.update(n_docs=len(d.corpus), seconds=round(seconds, 4),
               docs_per_second=round(len(d.corpus) / seconds, 1) if seconds > 0 else None,
               method=cfg.method, threshold=cfg.threshold)
    return out


def pool(datasets: list[LabelledData]) -> LabelledData:
    """Several labelled sets as one (e.g. several test days); ids that clash are prefixed by set number.

    Cluster labels are prefixed too, so clusters never join across sets.
    """
    if len(datasets) == 1:
        return datasets[0]
    if any(d.pairs is not None for d in datasets):
        raise ValueError("pooling is only supported for cluster-labelled documents, not labelled pairs")
    all_ids = [i for d in datasets for i in d.corpus.ids]
    clash = len(set(all_ids)) != len(all_ids)
    ids: list[str] = []
    texts: list[str] = []
    labels: list[str | None] = []
    for k, d in enumerate(datasets):
        assert d.corpus.labels is not None
        ids += [f"{k}:{i}" if clash else i for i in d.corpus.ids]
        texts += d.corpus.texts
        labels += [None if lab is None else f"{k}:{lab}" for lab in d.corpus.labels]
    corpus = Corpus(ids=ids, texts=texts, labels=labels, source="+".join(d.corpus.source for d in datasets))
    corpus.n_empty = sum(d.corpus.n_empty for d in datasets)
    return LabelledData(corpus=corpus, name="+".join(d.name for d in datasets))
