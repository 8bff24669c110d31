"""The threshold read from the corpus's own candidate scores (method ``auto``): where the profile's threshold
(:mod:`neardup.calibrate`) cuts through a mode of copies, the valley below that mode.

Owns the score-based estimate and its defaults (:class:`ScoreSettings`), the deterministic samples it reads
(:func:`sample_codes`, :func:`null_codes`), and how it is combined with the profile (:func:`combine`); must not
find or score candidates itself (each engine scores the sample with the method's own score) nor run the pipeline.

Why: the profile maps how damaged a corpus's text looks to a threshold. Text that is tampered with but not
damaged -- hash-busting spam, copies padded with other texts and broken by inserted words -- reads as clean or
lightly damaged, and the profile's threshold then falls inside the copies' own scores (bench_decisions: spam
campaigns whose copies score .4-.55 cut at .674). Copies that many form a mode of their own among the candidate
scores, apart from the unrelated pairs near 0.

How, on a sample of at most :attr:`ScoreSettings.sample_pairs` distinct candidate pairs (the bottom of a hash of
each pair's code: the same pairs whatever the partitioning, so every engine draws the same sample):

1. the density of their scores (a histogram of 400 bins on [0, 1], smoothed by a Gaussian kernel of
   :attr:`~ScoreSettings.bandwidth`, reflected at both ends);
2. from the profile's threshold, the mode it lies in or just above: to the left while the density rises (the
   threshold is above a mode: climb to its peak), else the mode on its right; then down to the first local
   minimum below that peak, the **valley**. None where the density falls all the way to 0 (no second mode);
3. the valley counts when it is deep (its density at most :attr:`~ScoreSettings.depth` of the mode's peak), the
   mode holds at least :attr:`~ScoreSettings.min_pairs` sampled pairs, the valley is found again in at least
   :attr:`~ScoreSettings.stable` of :attr:`~ScoreSettings.bootstrap` resamples (their 5-95% range is the
   estimate's uncertainty), and it is above the scores of unrelated documents (the
   :attr:`~ScoreSettings.null_quantile` of random document pairs' scores);
4. the run's threshold is then the valley (to 3 decimals): it only ever **lowers** the profile's threshold.
   Above the profile's threshold the scores also show modes -- exact re-sends at 1.0 on real news -- but the
   labelled days say their valley (.6-.75) is far too high a threshold: abridged and corrected copies score
   .45-.75 among templated notices. Where no valley counts, the profile decides.

``summary.json``'s ``calibration`` records the estimate under ``scores`` (:meth:`ScoreEstimate.to_dict`: the valley,
its range, the checks, and ``decided``: ``scores`` or ``profile``). Measured out of distribution in
docs/quality.md (``benchmarks/bench_score_threshold.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.config import DedupConfig

#: Histogram bins of the score density on [0, 1].
BINS = 400
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


@dataclass(frozen=True)
class ScoreSettings:
    """The estimate's defaults (see the module docstring for what each one checks).

    >>> ScoreSettings().sample_pairs, ScoreSettings().depth
    (20000, 0.5)
    """

    #: Candidate pairs scored for the estimate (at most), and random document pairs for the null's quantile.
    sample_pairs: int = 20_000
    null_pairs: int = 2_000
    #: Smoothing of the score density (a standard deviation, in score units).
    bandwidth: float = 0.025
    #: The valley's density at most this share of its mode's peak.
    depth: float = 0.5
    #: Sampled pairs at or above the valley, at least.
    min_pairs: int = 100
    #: Bootstrap resamples, and the share of them that must find a valley that counts.
    bootstrap: int = 100
    stable: float = 0.9
    #: The valley must lie above this quantile of random document pairs' scores.
    null_quantile: float = 0.95
    #: Seed of the null pairs and of the bootstrap.
    seed: int = 0

    def replace(self, **changes: Any) -> ScoreSettings:
        return dataclasses.replace(self, **changes)


#: The shipped settings.
DEFAULTS = ScoreSettings()


@dataclass(frozen=True)
class ScoreEstimate:
    """What the candidate scores said, and which threshold the run takes (``threshold``).

    ``valley``: the valley below the mode the profile's threshold lies in or above (None: none found);
    ``low``/``high``: the 5% and 95% quantiles of the valley over the bootstrap resamples that found one that counts;
    ``found``: the share of resamples that did; ``depth``: the valley's density over its mode's peak;
    ``mode_pairs``: sampled pairs at or above the valley; ``null``: the quantile of random pairs' scores;
    ``decided``: ``"scores"`` (the valley) or ``"profile"``; ``reason``: why.
    """

    profile_threshold: float
    threshold: float
    decided: str
    reason: str
    sample: int
    valley: float | None = None
    low: float | None = None
    high: float | None = None
    found: float = 0.0
    depth: float | None = None
    mode_pairs: int = 0
    null: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (``summary.json``'s ``calibration.scores``)."""
        out = dataclasses.asdict(self)
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


def _hash(codes: np.ndarray) -> np.ndarray:
    """A 64-bit mix of each code (splitmix64's finaliser): the sample's order, independent of partitioning."""
    z = np.asarray(codes, dtype=np.int64).view(np.uint64) + _MIX[0]
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _MIX[1]
        z = (z ^ (z >> np.uint64(27))) * _MIX[2]
    return z ^ (z >> np.uint64(31))


def sample_codes(codes: np.ndarray, k: int) -> np.ndarray:
    """The (at most) ``k`` distinct ``codes`` with the smallest hash, sorted: the sample of candidate pairs. The
    bottom ``k`` of any union is the bottom ``k`` of its parts' bottoms, so partitions are sampled apart and merged.

    >>> c = np.arange(100, dtype=np.int64)
    >>> s = sample_codes(c, 10)
    >>> s.size, bool((sample_codes(np.concatenate([sample_codes(c[:50], 10), sample_codes(c[50:], 10)]), 10) == s).all())
    (10, True)
    """
    codes = np.unique(np.asarray(codes, dtype=np.int64))
    if codes.size <= k:
        return codes
    h = _hash(codes)
    keep = np.argpartition(h, k - 1)[:k]
    return np.sort(codes[keep])


def null_codes(n: int, k: int, seed: int = 0) -> np.ndarray:
    """Codes ``left * n + right`` (``left < right``) of at most ``k`` distinct random pairs of ``n`` documents, drawn
    from ``seed`` (the same on every engine), sorted.

    >>> codes = null_codes(10, 5)
    >>> bool((codes // 10 < codes % 10).all()), codes.size <= 5
    (True, True)
    """
    if n < 2 or k < 1:
        return np.empty(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, k), rng.integers(0, n, k)
    ok = a != b
    lo, hi = np.minimum(a, b)[ok], np.maximum(a, b)[ok]
    return np.unique(lo.astype(np.int64) * n + hi)


def density(scores: np.ndarray, bandwidth: float) -> np.ndarray:
    """The density of ``scores`` on :data:`BINS` bins of [0, 1]: a histogram smoothed by a Gaussian kernel,
    reflected at 0 and 1 (a mean of 1 over the bins).

    >>> f = density(np.full(100, 0.5), 0.02)
    >>> int(f.argmax()) in (199, 200), round(float(f.mean()), 6)
    (True, 1.0)
    """
    s = np.asarray(scores, dtype=np.float64)
    counts = np.bincount(np.clip((s * BINS).astype(np.int64), 0, BINS - 1), minlength=BINS).astype(np.float64)
    width = max(1, int(np.ceil(4 * bandwidth * BINS)))
    x = np.arange(-width, width + 1) / BINS
    kernel = np.exp(-0.5 * (x / bandwidth) ** 2)
    kernel /= kernel.sum()
    padded = np.concatenate([counts[::-1], counts, counts[::-1]])
    f = np.convolve(padded, kernel, mode="same")[BINS : 2 * BINS]
    return f * (BINS / max(1, s.size))


def valley_below(f: np.ndarray, threshold: float) -> tuple[int, int] | None:
    """``(valley, peak)`` bins of density ``f`` for ``threshold``: the mode the threshold lies above (the density
    rises to its left: climb to the peak) or in (the peak is the top to its right), and the first local minimum below
    that peak. None where the density falls to the lowest bin (no mode below the one the scores start with).

    >>> f = np.concatenate([np.linspace(5, 0.1, 100), np.linspace(0.2, 3, 100), np.linspace(2.9, 0, 200)])
    >>> valley_below(f, 0.75), valley_below(f, 0.45), valley_below(f, 0.1)
    ((99, 199), (99, 199), None)
    """
    i = min(f.size - 1, max(0, int(threshold * f.size)))
    j = i
    if j > 0 and f[j - 1] > f[j]:  # above a mode: climb to its peak
        while j > 0 and f[j - 1] >= f[j]:
            j -= 1
        peak = j
    else:  # in a mode (or at a valley): its peak is to the right
        peak = i
        while peak < f.size - 1 and f[peak + 1] >= f[peak]:
            peak += 1
    while j > 0 and f[j - 1] <= f[j]:
        j -= 1
    return None if j == 0 else (j, peak)


def _valley(scores: np.ndarray, threshold: float, settings: ScoreSettings) -> tuple[float, float, int] | None:
    """``(valley score, depth, pairs at or above)`` where a valley that counts (depth and pairs; not the null) is
    found, else None."""
    f = density(scores, settings.bandwidth)
    found = valley_below(f, threshold)
    if found is None:
        return None
    j, peak = found
    depth = float(f[j] / f[peak]) if f[peak] > 0 else 1.0
    v = (j + 0.5) / BINS
    pairs = int(np.count_nonzero(scores >= v))
    return v, depth, pairs


def estimate(scores: np.ndarray, profile_threshold: float, null_scores: np.ndarray | None = None,
             settings: ScoreSettings = DEFAULTS) -> ScoreEstimate:
    """The score-based threshold of a sample of candidate ``scores`` for a run whose profile chose
    ``profile_threshold`` (see the module docstring); ``null_scores``: scores of random document pairs.

    >>> rng = np.random.default_rng(1)
    >>> copies = np.clip(rng.normal(0.47, 0.04, 3000), 0, 1)  # a campaign's copies, cut by a profile at 0.674
    >>> unrelated = rng.beta(1, 12, 5000)
    >>> e = estimate(np.concatenate([copies, unrelated]), 0.674, rng.beta(1, 30, 2000))
    >>> e.decided, 0.25 < e.threshold < 0.38, e.low <= e.valley <= e.high
    ('scores', True, True)
    >>> estimate(unrelated, 0.45).decided  # one mode: the profile decides
    'profile'
    """
    s = np.sort(np.asarray(scores, dtype=np.float64))
    s = s[np.isfinite(s)]
    null = float(np.quantile(null_scores, settings.null_quantile)) if null_scores is not None and len(null_scores) else None
    base = {"profile_threshold": float(profile_threshold), "sample": int(s.size), "null": null}
    if s.size < settings.min_pairs:
        return ScoreEstimate(threshold=float(profile_threshold), decided="profile",
                             reason=f"{s.size} sampled candidate pairs, fewer than {settings.min_pairs}", **base)
    got = _valley(s, profile_threshold, settings)
    if got is None:
        return ScoreEstimate(threshold=float(profile_threshold), decided="profile",
                             reason="no mode below the profile's threshold apart from the unrelated pairs'", **base)
    v, depth, pairs = got

    def counts(x: tuple[float, float, int] | None) -> bool:
        return x is not None and x[1] <= settings.depth and x[2] >= settings.min_pairs

    rng = np.random.default_rng(settings.seed)
    again = []
    for _ in range(settings.bootstrap):
        b = _valley(np.sort(s[rng.integers(0, s.size, s.size)]), profile_threshold, settings)
        if counts(b):
            again.append(b[0])  # type: ignore[index]
    found = len(again) / max(1, settings.bootstrap)
    low, high = (float(np.quantile(again, 0.05)), float(np.quantile(again, 0.95))) if again else (None, None)
    seen = {**base, "valley": v, "low": low, "high": high, "found": found, "depth": depth, "mode_pairs": pairs}
    why = None
    if depth > settings.depth:
        why = f"the valley is shallow (its density {depth:.2f} of its mode's peak, more than {settings.depth})"
    elif pairs < settings.min_pairs:
        why = f"{pairs} sampled pairs above the valley, fewer than {settings.min_pairs}"
    elif found < settings.stable:
        why = f"found in {found:.0%} of {settings.bootstrap} resamples, fewer than {settings.stable:.0%}"
    elif null is not None and v <= null:
        why = f"the valley ({v:.3f}) is within random pairs' scores (their {settings.null_quantile} quantile {null:.3f})"
    elif round(v, 3) >= profile_threshold:
        why = "the valley is not below the profile's threshold"
    if why is not None:
        return ScoreEstimate(threshold=float(profile_threshold), decided="profile", reason=why, **seen)
    return ScoreEstimate(threshold=round(v, 3), decided="scores",
                         reason="the profile's threshold cuts a mode of the candidate scores: the valley below it",
                         **seen)


def read_scores(config: DedupConfig, n: int, sample: Callable[[int], np.ndarray], score: Callable[[np.ndarray], np.ndarray],
                settings: ScoreSettings = DEFAULTS) -> ScoreEstimate:
    """The estimate for a run of ``config`` over ``n`` documents, where the engine gives the sample of its candidate
    pairs (``sample(k)``: :func:`sample_codes` of its distinct candidate codes ``left * n + right``, before the
    method's screen) and their scores (``score(codes)``: the method's own, unscreened): every engine computes it here.

    >>> codes = np.arange(1, 10, dtype=np.int64)  # pairs (0, 1) .. (0, 9) of 10 documents
    >>> read_scores(DedupConfig(threshold=0.45), 10, lambda k: codes[:k], lambda c: np.ones(c.size)).decided
    'profile'
    """
    codes = np.asarray(sample(settings.sample_pairs), dtype=np.int64)
    nulls = null_codes(n, settings.null_pairs, settings.seed)
    scores = np.asarray(score(np.concatenate([codes, nulls])), dtype=np.float64)
    return estimate(scores[: codes.size], float(config.threshold), scores[codes.size :], settings)  # type: ignore[arg-type]


def applies(config: DedupConfig) -> bool:
    """Whether a run of ``config`` reads its threshold from its candidate scores: ``config`` is what ``auto`` chose
    (:func:`neardup.calibrate.resolve`'s record: the method, shingling and threshold it chose, the threshold not given
    by the user), not yet estimated, ``auto.scores`` is on, and the method's candidates do not depend on the
    threshold (the same candidates then serve the threshold the scores call for).

    >>> from neardup.calibrate import resolve
    >>> texts = ["the cat sat on the mat today"] * 3
    >>> applies(resolve(DedupConfig(method="auto"), texts)), applies(resolve(DedupConfig(method="auto", threshold=0.5), texts))
    (True, False)
    >>> applies(resolve(DedupConfig(method="auto").replace(auto__scores=False), texts)), applies(DedupConfig())
    (False, False)
    """
    cal = config.calibration
    if not isinstance(cal, dict) or "scores" in cal or not config.auto.scores:
        return False
    choice = cal.get("choice") or {}
    if "threshold" in cal.get("given", ()) or choice.get("method") != config.method:
        return False
    chosen = {"threshold": config.threshold, "shingle__char": config.shingle.char, "shingle__n": config.shingle.n}
    if any(k in choice and choice[k] != v for k, v in chosen.items()):
        return False
    from neardup import methods

    lower = dataclasses.replace(config, threshold=float(config.threshold) / 2)  # type: ignore[arg-type]
    return bool(methods.get(config).params() == methods.get(lower).params())


def combine(config: DedupConfig, record: dict[str, Any]) -> DedupConfig:
    """``config`` with the threshold the estimate decided (``record``: :meth:`ScoreEstimate.to_dict`, as a chunked
    run's work directory keeps it) and the record in its calibration, under ``scores``.

    >>> from neardup.calibrate import resolve
    >>> cfg = resolve(DedupConfig(method="auto"), ["a b c d e"])
    >>> out = combine(cfg, {"threshold": 0.3, "decided": "scores"})
    >>> out.threshold, out.calibration["scores"]["decided"], applies(out)
    (0.3, 'scores', False)
    """
    calibration = {**(config.calibration or {}), "scores": dict(record)}
    threshold = float(record["threshold"]) if record.get("decided") == "scores" else config.threshold
    return dataclasses.replace(config, threshold=threshold, calibration=calibration)


__all__ = ["BINS", "DEFAULTS", "ScoreEstimate", "ScoreSettings", "applies", "combine", "density", "estimate", "null_codes", "read_scores",
           "sample_codes", "valley_below"]
