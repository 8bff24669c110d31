"""The stages of a method composed over one corpus held in memory: represent -> candidates -> verify ->
cluster (for ``auto``: candidates -> the threshold read from a sample of their scores -> verify,
:func:`score_threshold`); what the in-memory engine runs, and what tuning re-runs for many settings.

Owns the order of the stages, their timings and the :class:`Prepared` representation; must not
implement a stage (each is a method's operation, :mod:`neardup.methods`) or read files. The
representation is computed once (:func:`prepare`) and re-used for every threshold and every setting it
is compatible with (:func:`run_prepared`), which is what threshold tuning does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup import calibrate_scores, methods
from neardup.calibrate import needs_corpus, resolve
from neardup.cluster import (decide, lazy_greedy, passes, policy_ranks, representative_keys, score_ceiling,
                             score_floor, verify_in_order)
from neardup.config import DEFAULT_MAX_CHARS, DedupConfig, ReadConfig
from neardup.engine.summary import ClusterCounts, build_summary
from neardup.io.read import Corpus
from neardup.methods.base import KeyedMethod, Method, Representation
from neardup.progress import progress_bar
from neardup.represent.embeddings import Embeddings
from neardup.results import DedupResult
from neardup.text.shingle import ShingleSets


@dataclass
class Prepared:
    """The threshold-independent part of a run on a corpus: the method's representation of every document."""

    corpus: Corpus
    config: DedupConfig
    rep: Representation
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def sets(self) -> ShingleSets:
        """Shingle sets of the documents."""
        return self.rep.sets

    @property
    def lengths(self) -> np.ndarray:
        """Characters of each text."""
        return self.rep.lengths

    @property
    def signatures(self) -> np.ndarray | None:
        """MinHash signatures ``(n, num_perm)``, for the methods that compute them."""
        sketch = self.rep.sketch
        return sketch if sketch is not None and sketch.ndim == 2 else None

    @property
    def fingerprints(self) -> np.ndarray | None:
        """SimHash fingerprints ``(n,)``, for the methods that compute them."""
        sketch = self.rep.sketch
        return sketch if sketch is not None and sketch.ndim == 1 else None

    @property
    def embeddings(self) -> Embeddings | None:
        """Embeddings, for the neural methods."""
        return self.rep.vectors

    def weights(self, idf_power: float) -> tuple[np.ndarray, np.ndarray]:
        """IDF weights of the shingles and their per-document totals (once per power)."""
        return self.rep.weights(idf_power)

    def compatible_with(self, config: DedupConfig) -> bool:
        """True when ``config`` would compute the same representation."""
        return methods.get(self.config).representation_key() == methods.get(config).representation_key()


def prepare(corpus: Corpus, config: DedupConfig, progress: bool = False, batch_size: int = 4096,
            max_chars: int | None = None) -> Prepared:
    """Normalize, shingle, sketch and embed every document (the threshold-independent stages): the method's
    map step (:meth:`~neardup.methods.base.Method.represent`, what every engine runs on a batch) over
    batches of ``batch_size`` documents, joined.

    >>> prep = prepare(Corpus.from_texts(["a b c d", "a b c d e"]), DedupConfig())
    >>> prep.signatures.shape
    (2, 128)
    """
    config = resolve(config, corpus.texts)
    method = methods.get(config)
    limit = max_chars or DEFAULT_MAX_CHARS
    n = len(corpus)
    parts: list[Representation] = []
    t0 = time.perf_counter()
    with progress_bar(progress, total=n, desc="representing", unit="doc", leave=False) as bar:
        for start in range(0, max(n, 1), batch_size):  # an empty corpus is one empty batch
            parts.append(method.represent(corpus.texts[start : start + batch_size], limit))
            bar.update(len(parts[-1]))
    rep = Representation.concat(parts)
    if rep.texts is not None:  # the corpus's own list, not a joined copy of the batches' lists
        rep.texts = corpus.texts
    return Prepared(corpus=corpus, config=config, rep=rep, timings={"represent": time.perf_counter() - t0})


def candidate_pairs(prep: Prepared, config: DedupConfig, order: tuple[np.ndarray, float] | None = None,
                    proposed: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Candidates and their scores ``(left, right, score, info)``, before the threshold cut: all of them, or with
    ``order`` (each document's place in the representative policy's order and a score ceiling) those ``greedy``
    reads at thresholds up to the ceiling (:func:`~neardup.cluster.verify_in_order`). ``proposed``: a keyed
    method's proposals, found already (:func:`score_threshold`), screened here.

    ``info`` holds ``n_candidates``, ``n_scored`` and the seconds each stage took (and what the scorer reports).
    """
    method = methods.get(config).plan(prep.rep)
    t0 = time.perf_counter()
    if proposed is None:
        left, right, info = method.candidates(prep.rep)
    else:
        left, right = method.screen(prep.rep, *proposed)
        info = {}
    n_candidates = int(left.size)
    t1 = time.perf_counter()
    scoring: dict[str, Any] = {}
    if order is None:
        scores = method.score(prep.rep, left, right, info=scoring)
    else:
        left, right, scores = verify_in_order(len(prep.rep), left, right, order[0],
                                              lambda a, b: method.score(prep.rep, a, b, info=scoring), order[1])
    t2 = time.perf_counter()
    info = {**info, "n_candidates": n_candidates, "n_scored": int(left.size), "seconds_candidates": t1 - t0,
            "seconds_verify": t2 - t1}
    if scoring:
        info["scoring"] = scoring
    return left, right, scores, info


def find_pairs(prep: Prepared, config: DedupConfig, floor: float | None = None,
               order: tuple[np.ndarray, float] | None = None, proposed: tuple[np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Candidates then verification: the verified pairs ``(left, right, score)`` at ``config.threshold`` (or at the
    lower ``floor``: the scored candidates a re-threshold decides from); ``order``, ``proposed``: as
    :func:`candidate_pairs`."""
    left, right, scores, info = candidate_pairs(prep, config, order, proposed)
    keep = passes(scores, float(config.threshold) if floor is None else floor)  # type: ignore[arg-type]
    info["n_verified"] = int(keep.sum())
    return left[keep], right[keep], scores[keep], info


def score_threshold(prep: Prepared, method: Method) -> tuple[DedupConfig, tuple[np.ndarray, np.ndarray] | None, float]:
    """The threshold read from the candidate scores (:mod:`neardup.calibrate_scores`), for a configuration ``auto``
    chose (:func:`~neardup.calibrate_scores.applies`): the method's config with the estimate in its calibration, the
    proposals it was sampled from (to be screened, not found again), and the seconds it took. Other configurations
    come back as they are."""
    if not (calibrate_scores.applies(method.config) and isinstance(method, KeyedMethod)):
        return method.config, None, 0.0
    t0 = time.perf_counter()
    rep = prep.rep
    n = len(rep)
    proposed = method.proposals(rep)
    codes = proposed[0].astype(np.int64) * n + proposed[1]
    got = calibrate_scores.read_scores(method.config, n, lambda k: calibrate_scores.sample_codes(codes, k),
                                       lambda c: method.score(rep, c // n, c % n))
    return calibrate_scores.combine(method.config, got.to_dict()), proposed, time.perf_counter() - t0


def run_prepared(prep: Prepared, config: DedupConfig | None = None, read: ReadConfig | None = None,
                 all_pairs: bool = False, floor: float = 1.0, ceiling: float | None = None) -> DedupResult:
    """Finish a run from prepared representations (candidates, verify, decide, summary); ``read``: how
    the corpus was read (recorded in the summary); ``all_pairs``: the result holds every verified pair, not
    only the links its decisions rest on (:func:`~neardup.cluster.written_pairs`); ``floor``: the scored
    candidates down to this share of the threshold are kept with the result, for
    :meth:`~neardup.results.DedupResult.rethreshold`, up to ``ceiling`` (its share, as
    :attr:`~neardup.config.EngineConfig.score_ceiling`: ``greedy`` scores only the pairs its decisions up to there
    read). A ``config`` the corpus calibrates (``auto``; multiview
    without view thresholds) is resolved on the prepared texts, as :func:`prepare` resolved its own."""
    if config is None or config.method == "auto":
        cfg = prep.config
    elif needs_corpus(config):
        cfg = resolve(config, prep.corpus.texts)
    else:
        cfg = config
    if not prep.compatible_with(cfg):
        raise ValueError("config needs a different representation than the prepared one; call prepare() again")
    method = methods.get(cfg).plan(prep.rep)
    cfg, proposed, seconds_scores = score_threshold(prep, method)
    if proposed is not None:
        method = methods.get(cfg).plan(prep.rep)
    cfg = method.config
    lowest = score_floor(float(cfg.threshold), floor)  # type: ignore[arg-type]
    corpus = prep.corpus
    keys = representative_keys(corpus.texts, corpus.fields.get(cfg.cluster.representative_field or ""), cfg.cluster)
    highest = score_ceiling(float(cfg.threshold), ceiling) if lazy_greedy(cfg.cluster, all_pairs) else None  # type: ignore[arg-type]
    order = None if highest is None else (policy_ranks(prep.lengths, cfg.cluster, keys), highest)
    scored = find_pairs(prep, cfg, min(lowest, float(cfg.threshold)), order, proposed)  # type: ignore[arg-type]
    info = scored[3]
    t1 = time.perf_counter()
    clusters, (left, right, scores), info["n_verified"] = decide(len(corpus), *scored[:3], prep.lengths, cfg.cluster,
                                                                 keys, float(cfg.threshold), all_pairs)  # type: ignore[arg-type]
    timings = dict(prep.timings)
    timings.update(candidates=info["seconds_candidates"], verify=info["seconds_verify"],
                   cluster=time.perf_counter() - t1)
    if proposed is not None:
        timings["score_threshold"] = seconds_scores
    engine: dict[str, Any] = {"name": "memory"}
    if "scoring" in info:
        engine["scoring"] = info["scoring"]
    counts = ClusterCounts.of(clusters, lambda ix: [corpus.ids[i] for i in ix])
    summary = build_summary(source=corpus.source, clusters=counts, params=method.describe(),
                            n_candidates=info["n_candidates"], n_pairs=info["n_verified"], n_empty=corpus.n_empty,
                            n_truncated=corpus.n_truncated, skipped=corpus.skipped, timings=timings,
                            seconds=sum(timings.values()), engine=engine, read=read, n_written=left.size,
                            floor=lowest, ceiling=highest, n_scored=info["n_scored"])
    result = DedupResult(ids=corpus.ids, clusters=clusters, left=left, right=right, scores=scores, summary=summary)
    result.keep_scored(*scored[:3], prep.lengths)
    return result


def run(corpus: Corpus, config: DedupConfig | None = None, progress: bool = False,
        read: ReadConfig | None = None) -> DedupResult:
    """The whole pipeline on one corpus.

    >>> r = run(Corpus.from_texts(["the cat sat on the mat today", "the cat sat on the mat today!", "dogs bark"]))
    >>> r.groups()
    [['0', '1']]
    """
    cfg = config or DedupConfig()
    return run_prepared(prepare(corpus, cfg, progress=progress), cfg, read)


__all__ = ["Prepared", "candidate_pairs", "find_pairs", "prepare", "run", "run_prepared", "score_threshold"]
