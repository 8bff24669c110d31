"""Training for the corpus at hand: a fine-tuned bi-encoder and a cross-encoder re-ranker.

Owns training data (labelled clusters/pairs or synthetic clusters from the noise generator), the
split by cluster, hard-negative mining, the training loop (checkpoints, resume, time budget) and the
two trainers; must not run the de-duplication pipeline (models it writes are loaded by
``--method biencoder --model DIR`` and ``--method rerank --cross-model DIR``).

Python API (torch is imported only when training starts)::

    from neardup.train import TrainConfig, train_biencoder, train_crossencoder
    report = train_biencoder(TrainConfig(data="texts.jsonl", synthetic=True, out="models/bi"))

Command line: ``neardup train biencoder`` / ``neardup train crossencoder`` (:mod:`neardup.cli.train`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["TrainConfig", "TrainingSet", "build_pairs", "load_training_set", "make_clusters", "mine_hard_negatives",
           "split_by_cluster", "train_biencoder", "train_crossencoder"]

_WHERE = {
    "TrainConfig": "neardup.train.common",
    "TrainingSet": "neardup.train.dataset",
    "build_pairs": "neardup.train.pairs",
    "load_training_set": "neardup.train.sources",
    "mine_hard_negatives": "neardup.train.mining",
    "split_by_cluster": "neardup.train.dataset",
    "make_clusters": "neardup.train.synthetic",
    "train_biencoder": "neardup.train.biencoder",
    "train_crossencoder": "neardup.train.crossencoder",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'neardup.train' has no attribute {name!r}")
