"""Cross-encoder verification: the probability that two texts are duplicates, read jointly by one model.

Owns loading a trained cross-encoder (``neardup train crossencoder``; a sentence-transformers
``CrossEncoder`` folder with one output) and scoring text pairs in batches; must not find candidates or
cluster. Used by the ``rerank`` method: bi-encoder candidates above a loose cosine floor are re-scored
here and the pipeline's threshold applies to this probability. torch and sentence-transformers are
imported only when a scorer is built. Local folders only: nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from neardup.represent.encoder import require_extra

#: Characters of each text handed to the tokenizer (the model reads max_length tokens of the pair anyway).
MAX_CHARS = 20_000


class CrossEncoderScorer:
    """A trained pair classifier: ``score(pairs)`` gives duplicate probabilities in [0, 1].

    ``stats`` holds the pairs scored and seconds spent, for the last call (``last_*``) and in total.

    >>> s = CrossEncoderScorer("model-dir")                      # doctest: +SKIP
    >>> s.score([("a story", "a story"), ("a story", "other")])  # doctest: +SKIP
    array([0.97, 0.02], dtype=float32)
    """

    def __init__(self, path: str | os.PathLike[str], max_length: int | None = None, device: str = "cpu",
                 threads: int | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        p = Path(path)
        if not p.is_dir():
            raise FileNotFoundError(f"cross-encoder model directory not found: {p}")
        if not (p / "config.json").exists():
            raise ValueError(f"{p} is not a cross-encoder model directory (no config.json)")
        torch = require_extra("torch", "transformers")
        st = require_extra("sentence_transformers", "transformers")
        if threads:
            torch.set_num_threads(threads)
        self.model = st.CrossEncoder(str(p), device=device, local_files_only=True)
        if self.model.num_labels != 1:
            raise ValueError(f"{p}: expected a cross-encoder with one output (num_labels=1), "
                             f"got {self.model.num_labels}")
        if max_length is not None:
            self.model.max_seq_length = max_length
        self.path = p
        self.stats: dict[str, float] = {"n_pairs": 0, "seconds": 0.0, "last_n_pairs": 0, "last_seconds": 0.0}

    def score(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16, progress: bool = False) -> np.ndarray:
        """Duplicate probability (sigmoid of the logit) of each pair, float32, in input order."""
        t0 = time.perf_counter()
        if len(pairs) == 0:
            out = np.zeros(0, dtype=np.float32)
        else:
            clipped = [(a[:MAX_CHARS], b[:MAX_CHARS]) for a, b in pairs]
            scores = self.model.predict(clipped, batch_size=batch_size, show_progress_bar=progress,
                                        convert_to_numpy=True)
            out = np.asarray(scores, dtype=np.float32).reshape(-1)
        dt = time.perf_counter() - t0
        self.stats.update(last_n_pairs=len(pairs), last_seconds=dt, n_pairs=self.stats["n_pairs"] + len(pairs),
                          seconds=self.stats["seconds"] + dt)
        return out


@lru_cache(maxsize=2)
def load_scorer(path: str) -> CrossEncoderScorer:
    """A cached scorer per model folder (loaded once per process)."""
    return CrossEncoderScorer(path)


#: Scores already computed in this process, per (model folder, text digest, text digest), oldest first.
_CACHE: OrderedDict[tuple[str, bytes, bytes], float] = OrderedDict()
_CACHE_SIZE = 2_000_000


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()


def rerank_scores(texts: Sequence[str], left: np.ndarray, right: np.ndarray, cross_model: str | None,
                  batch_size: int = 16, info: dict[str, Any] | None = None, progress: bool = False) -> np.ndarray:
    """Cross-encoder probability for each candidate pair ``(texts[left[i]], texts[right[i]])``.

    Scores are remembered per (model, text pair) for the process, so threshold tuning that asks again
    for the same candidates (or, sweeping the cosine floor, for a subset of them) scores nothing twice.
    ``info`` (if given) receives ``n_scored`` (pairs actually run through the model),
    ``n_rerank_candidates`` and ``seconds_rerank``.
    """
    if not cross_model:
        raise ValueError("method rerank needs a cross-encoder: give --cross-model DIR "
                         "(trained with `neardup train crossencoder`)")
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    t0 = time.perf_counter()
    scores = np.zeros(left.size, dtype=np.float32)
    n_scored = 0
    if left.size:
        model_key = str(Path(cross_model).resolve())
        digests = {i: _digest(texts[i]) for i in np.unique(np.concatenate([left, right])).tolist()}
        keys = [(model_key, digests[a], digests[b]) for a, b in zip(left.tolist(), right.tolist())]
        todo = [i for i, k in enumerate(keys) if k not in _CACHE]
        if todo:
            scorer = load_scorer(str(cross_model))
            new = scorer.score([(texts[left[i]], texts[right[i]]) for i in todo], batch_size=batch_size,
                               progress=progress)
            for i, v in zip(todo, new.tolist()):
                _CACHE[keys[i]] = float(v)
            n_scored = len(todo)
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        scores = np.array([_CACHE[k] for k in keys], dtype=np.float32)
    if info is not None:
        info.update(n_scored=n_scored, n_rerank_candidates=int(left.size),
                    seconds_rerank=round(time.perf_counter() - t0, 4))
    return scores


__all__ = ["CrossEncoderScorer", "load_scorer", "rerank_scores"]
