"""Cross-encoder verification: the probability that two texts are duplicates, read jointly by one model.

Owns loading a trained cross-encoder (``neardup train crossencoder``; a sentence-transformers
``CrossEncoder`` folder with one output) and scoring text pairs in batches; must not find candidates or
cluster. Used by the ``rerank`` method: bi-encoder candidates above a loose cosine floor are re-scored
here and the pipeline's threshold applies to this probability. torch and sentence-transformers are
imported only when a scorer is built. Local folders only: nothing is ever downloaded.

A cross-encoder reads only the first ``max_length`` tokens of the pair (about 120 tokens of each text at
the default 256), so a copy whose lead paragraph was dropped, or that starts with an added headline,
shows it a different passage on each side. :func:`align_pair` cuts the text in which the other's
opening reappears so both sides start on the same passage; training (``neardup train crossencoder``)
and scoring prepare pairs the same way, and the model folder records it (:data:`PAIR_FORMAT_FILE`).

A second view of a pair, ``diff`` (:func:`diff_pair`), shows the model only where the texts differ: the
words of each text that the other lacks, in order, after the share of its words they are. Candidates that
reach a cross-encoder are already close; whether they are duplicates is decided by what differs (garbled
spellings of the same words, an added headline, or a changed state, fund and amount), which the opening of
each text hides in the shared 128 tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np


#: Characters of each text handed to the tokenizer (the model reads max_length tokens of the pair anyway).
MAX_CHARS = 20_000
#: File in a cross-encoder folder recording how its training pairs were prepared (absent: as given).
PAIR_FORMAT_FILE = "neardup_pairs.json"
#: Characters of a text's opening that :func:`align_pair` looks for in the other text (~120 tokens).
ALIGN_HEAD = 500
#: Containment gain (share of the opening's character trigrams) a cut must bring over not cutting.
ALIGN_GAIN = 0.15
#: Cut points considered: the start and every sentence or line boundary, up to this many.
ALIGN_MAX_STARTS = 256
_BOUNDARY = re.compile(r"(?<=[.!?\n])\s+")
#: How a pair is shown to the model: ``text`` (both texts, clipped and aligned) or ``diff`` (:func:`diff_pair`).
PAIR_VIEWS = ("text", "diff")
_WORD = re.compile(r"\w+(?:[.,'\u2019-]\w+)*")


def _fold(text: str) -> str:
    low = text.lower()
    return low if len(low) == len(text) else text


def _locate(opening: str, text: str) -> tuple[float, float, int]:
    """How much of ``opening`` (its character trigrams) a window of ``text`` as long as the opening holds at
    the start, and at the best sentence boundary: ``(at_start, best, best_start)``."""
    if len(opening) < 3 or len(text) < 3:
        return 0.0, 0.0, 0
    grams = {opening[i : i + 3] for i in range(len(opening) - 2)}
    hits = np.fromiter((text[i : i + 3] in grams for i in range(len(text) - 2)), dtype=np.int32, count=len(text) - 2)
    csum = np.concatenate([[0], np.cumsum(hits)])
    width = len(opening) - 2
    starts = np.array([0] + [m.end() for m in _BOUNDARY.finditer(text, 0, max(0, len(text) - 3))][: ALIGN_MAX_STARTS - 1])
    ends = np.minimum(starts + width, hits.size)
    share = (csum[ends] - csum[starts]) / width
    best = int(np.argmax(share))  # the first of equal shares: the earliest cut
    return float(share[0]), float(share[best]), int(starts[best])


def align_pair(a: str, b: str, head: int = ALIGN_HEAD, gain: float = ALIGN_GAIN) -> tuple[str, str]:
    """``(a, b)`` with one of them cut at a sentence boundary when the other's opening reappears there.

    The opening (``head`` characters) of each text is looked for in the other, by the share of its
    character trigrams found in a window of the same length starting at each sentence or line boundary.
    The better of the two cuts is made when it holds at least ``gain`` more of the opening than the
    uncut start; otherwise the pair is returned unchanged. Order is kept.

    >>> lead, story = "Markets fell sharply today. ", "The central bank raised rates by half a point on Tuesday."
    >>> align_pair(story, lead + story) == (story, story)
    True
    >>> align_pair("One story about rain.", "Another about sun.")
    ('One story about rain.', 'Another about sun.')
    """
    fa, fb = _fold(a), _fold(b)
    a0, a_best, a_at = _locate(fa[:head], fb)  # a's opening inside b: cut b
    b0, b_best, b_at = _locate(fb[:head], fa)  # b's opening inside a: cut a
    base = max(a0, b0)
    if max(a_best, b_best) < base + gain:
        return a, b
    return (a, b[a_at:]) if a_best >= b_best else (a[b_at:], b)


def diff_pair(a: str, b: str) -> tuple[str, str]:
    """Each text reduced to the words the other lacks (compared case-folded; each word once, in order),
    after the share of its words that are missing from the other, in percent.

    >>> diff_pair("Franklin California fund pays 5.2 cts", "Franklin Ohio fund pays 3.1 cts")
    ('33% California 5.2', '33% Ohio 3.1')
    >>> diff_pair("The market fell", "Tbe market fell")
    ('33% The', '33% Tbe')
    >>> diff_pair("Same words here", "same words HERE.")
    ('0%', '0%')
    """
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    fa, fb = [w.casefold() for w in wa], [w.casefold() for w in wb]
    sa, sb = set(fa), set(fb)

    def side(words: list[str], folded: list[str], lacks: set[str]) -> str:
        first: dict[str, str] = {}  # each missing word's first spelling, in order
        n_missing = 0
        for w, f in zip(words, folded):
            if f in lacks:
                n_missing += 1
                first.setdefault(f, w)
        share = round(100 * n_missing / len(words)) if words else 0
        return " ".join([f"{share}%", *first.values()])

    return side(wa, fa, sa - sb), side(wb, fb, sb - sa)


def read_pair_format(path: str | os.PathLike[str]) -> dict[str, Any]:
    """How a cross-encoder folder's training pairs were prepared: ``{"align": bool, "view": "text" | "diff"}``
    (absent file: unaligned text; absent view: text)."""
    f = Path(path) / PAIR_FORMAT_FILE
    if not f.exists():
        return {"align": False, "view": "text"}
    try:
        fmt = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{f}: unreadable pair format ({e}); re-save it or delete it to score pairs unaligned") from e
    if not isinstance(fmt, dict) or not isinstance(fmt.get("align"), bool):
        raise ValueError(f"{f}: field 'align' must be true or false")
    fmt.setdefault("view", "text")
    if fmt["view"] not in PAIR_VIEWS:
        raise ValueError(f"{f}: field 'view' must be one of {', '.join(PAIR_VIEWS)}, got {fmt['view']!r}")
    return fmt


def write_pair_format(path: str | os.PathLike[str], align: bool, view: str = "text") -> None:
    """Record in a cross-encoder folder how its pairs are prepared (written by the trainer)."""
    fmt: dict[str, Any] = {"align": align} if view == "text" else {"align": align, "view": view}
    (Path(path) / PAIR_FORMAT_FILE).write_text(json.dumps(fmt) + "\n", encoding="utf-8")


def prepare_pairs(pairs: Sequence[tuple[str, str]], align: bool, view: str = "text") -> list[tuple[str, str]]:
    """The model's view of each pair: clipped to :data:`MAX_CHARS` characters a side, then aligned if
    ``align`` (view ``text``) or reduced to what differs (view ``diff``, where alignment does not apply)."""
    if view not in PAIR_VIEWS:
        raise ValueError(f"pair view must be one of {', '.join(PAIR_VIEWS)}, got {view!r}")
    clipped = [(a[:MAX_CHARS], b[:MAX_CHARS]) for a, b in pairs]
    if view == "diff":
        return [diff_pair(a, b) for a, b in clipped]
    return [align_pair(a, b) for a, b in clipped] if align else clipped


class CrossEncoderScorer:
    """A trained pair classifier: ``score(pairs)`` gives duplicate probabilities in [0, 1].

    ``stats`` holds the pairs scored and seconds spent, for the last call (``last_*``) and in total.

    >>> s = CrossEncoderScorer("model-dir")                      # doctest: +SKIP
    >>> s.score([("a story", "a story"), ("a story", "other")])  # doctest: +SKIP
    array([0.97, 0.02], dtype=float32)
    """

    def __init__(self, path: str | os.PathLike[str], max_length: int | None = None, device: str = "cpu",
                 threads: int | None = None) -> None:
        from neardup.represent.transformer import load_local_model

        p = Path(path)
        self.model = load_local_model("CrossEncoder", p, what="cross-encoder model", marker=("config.json",),
                                      threads=threads, device=device)
        if self.model.num_labels != 1:
            raise ValueError(f"{p}: expected a cross-encoder with one output (num_labels=1), "
                             f"got {self.model.num_labels}")
        if max_length is not None:
            self.model.max_seq_length = max_length
        self.path = p
        fmt = read_pair_format(p)
        self.align: bool = fmt["align"]
        self.view: str = fmt["view"]
        self.stats: dict[str, float] = {"n_pairs": 0, "seconds": 0.0, "last_n_pairs": 0, "last_seconds": 0.0}

    def score(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16, progress: bool = False) -> np.ndarray:
        """Duplicate probability (sigmoid of the logit) of each pair, float32, in input order."""
        t0 = time.perf_counter()
        if len(pairs) == 0:
            out = np.zeros(0, dtype=np.float32)
        else:
            scores = self.model.predict(prepare_pairs(pairs, self.align, self.view), batch_size=batch_size,
                                        show_progress_bar=progress, convert_to_numpy=True)
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


__all__ = ["ALIGN_GAIN", "ALIGN_HEAD", "PAIR_FORMAT_FILE", "PAIR_VIEWS", "CrossEncoderScorer", "align_pair", "diff_pair",
           "load_scorer", "prepare_pairs", "read_pair_format", "rerank_scores", "write_pair_format"]
