"""Multiview: each document seen in several views (word shingles, character shingles, RETSim or a trained
bi-encoder's vectors, a trained cross-encoder), candidates from every view, every candidate pair scored in
all of them, the scores combined by a rule that needs no labels (the calibrated maximum) or by a logistic
model fitted on labelled pairs.

Owns the views' settings resolved once (each view's shingling, LSH bands and threshold), packing the
shingle views into one representation and unpacking it, the union of candidates, the pair features and
the combining rules; must not schedule work, implement a view (each shingle view is a
:class:`~neardup.methods.minhash.MinHash`) or choose thresholds (tuning calls :meth:`MultiView.fit`).

The shingle views travel in the one :class:`~neardup.methods.base.Representation` every engine already
stores: each view's shingle hashes lose their lowest bit and carry the view in their top bit, so one
document's set holds both views' shingles (word first) and IDF weights computed over it are each view's
own; the sketch is the views' MinHash signatures side by side; the vector view (RETSim or a bi-encoder
from ``neardup train biencoder``) is the representation's vectors. Candidates need every document at hand
(the union includes the vector view's neighbours), so the chunked engines run them over the joined
representation, as they do for vector methods. A cross-encoder (``neardup train crossencoder``) proposes
no candidates: it reads both texts of the candidates the other views rate at least
``crossencoder_floor`` (calibrated) and gives the rest 0, so its cost follows the close pairs only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import numpy as np

from neardup.candidates.buckets import unique_pairs
from neardup.cluster import passes
from neardup.config import VECTOR_VIEWS, VIEWS, ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import COMBINED_SCORE_GRID, Candidates, Representation, VectorMethod
from neardup.methods.minhash import MinHash
from neardup.represent import minhash
from neardup.represent.embeddings import Embeddings
from neardup.text.shingle import ShingleSets

#: The view each shingle kind's hashes are tagged with (top bit), in the order they sit in a document's set.
SHINGLE_VIEWS: tuple[str, ...] = ("word", "char")
#: Thresholds of each view when the corpus's noise profile has not set them (clean text): those of
#: :mod:`neardup.calibrate` at no damage, RETSim's cosine at 0.95 (docs/multiview.md); a bi-encoder's
#: cosine at 0.95 and a cross-encoder's probability at 0.5 where the model's training report names none
#: (:func:`view_default_threshold`).
DEFAULT_VIEW_THRESHOLDS: dict[str, float] = {"word": 0.45, "char": 0.80, "retsim": 0.95, "biencoder": 0.95,
                                             "crossencoder": 0.5}
_TOP = np.uint64(63)


def neural_available() -> bool:
    """Whether the ``neural`` extra (RETSim's packaged model, ONNX Runtime, FAISS) is importable."""
    return all(importlib.util.find_spec(m) is not None for m in ("unisim", "onnxruntime", "faiss"))


def trained_threshold(model: str | None) -> float | None:
    """The threshold a trained model's own validation chose (``validation_after`` in the report
    ``neardup train`` wrote into its folder), if it has one.

    >>> trained_threshold(None) is None
    True
    """
    from neardup.represent.transformer import training_report

    try:
        t = float(training_report(model)["validation_after"]["threshold"])
    except (KeyError, TypeError, ValueError):
        return None
    return t if 0 < t <= 1 else None


def view_default_threshold(view: str, config: DedupConfig) -> float:
    """A view's threshold when none is given: a trained model's validated one (bi-encoder, cross-encoder),
    else :data:`DEFAULT_VIEW_THRESHOLDS`."""
    model = {"biencoder": config.embed.model, "crossencoder": config.embed.cross_model}.get(view)
    found = trained_threshold(model)
    return found if found is not None else DEFAULT_VIEW_THRESHOLDS[view]


def default_views(config: DedupConfig | None = None) -> tuple[str, ...]:
    """The views when none are named: word and char; then a bi-encoder where ``embed.model`` names a
    sentence-transformers folder (a trained one), else retsim where the neural extra is installed; then a
    cross-encoder where ``embed.cross_model`` names one.

    >>> default_views(DedupConfig(method="multiview").replace(embed__cross_model="ce"))[-1]
    'crossencoder'
    """
    from pathlib import Path

    embed = config.embed if config is not None else None
    out: tuple[str, ...] = ("word", "char")
    if embed is not None and embed.model and Path(embed.model).is_dir():
        out += ("biencoder",)
    elif neural_available():
        out += ("retsim",)
    if embed is not None and embed.cross_model:
        out += ("crossencoder",)
    return out


def calibrated(score: np.ndarray, threshold: float) -> np.ndarray:
    """A view's scores mapped piecewise-linearly onto [0, 1] so that its own ``threshold`` lands at 0.5.

    >>> calibrated(np.array([0.0, 0.2, 0.4, 0.7, 1.0]), 0.4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    s = np.clip(np.asarray(score, dtype=np.float64), 0.0, 1.0)
    t = min(max(float(threshold), 1e-9), 1.0)
    above = 0.5 + 0.5 * (s - t) / max(1.0 - t, 1e-9)
    return np.where(s < t, 0.5 * s / t, np.minimum(above, 1.0))


def merge_views(parts: Sequence[ShingleSets], tags: Sequence[int]) -> ShingleSets:
    """The shingle sets of several views as one: each hash shifted right by one bit, its view's ``tag``
    (0 or 1) in the top bit; a document's values stay sorted and unique.

    >>> a = ShingleSets(np.array([4, 8], dtype=np.uint64), np.array([0, 2, 2]))
    >>> b = ShingleSets(np.array([6], dtype=np.uint64), np.array([0, 0, 1]))
    >>> m = merge_views([a, b], [0, 1])
    >>> m.sizes.tolist(), [int(v) >> 63 for v in m.values]
    ([2, 1], [0, 0, 1])
    """
    n = len(parts[0])
    sizes = np.zeros(n, dtype=np.int64)
    for p in parts:
        sizes += np.asarray(p.sizes, dtype=np.int64)
    offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(sizes)])
    values = np.empty(int(offsets[-1]), dtype=np.uint64)
    start = offsets[:-1].copy()
    for p, tag in zip(parts, tags):
        p_sizes = np.asarray(p.sizes, dtype=np.int64)
        p_off = np.asarray(p.offsets, dtype=np.int64)
        pos = np.repeat(start - p_off[:-1], p_sizes) + np.arange(int(p_off[-1]), dtype=np.int64)
        values[pos] = (np.asarray(p.values, dtype=np.uint64) >> np.uint64(1)) | (np.uint64(tag) << _TOP)
        start += p_sizes
    if values.size > 1:  # two hashes one bit apart become one
        doc = np.repeat(np.arange(n, dtype=np.int64), sizes)
        keep = np.ones(values.size, dtype=bool)
        keep[1:] = (values[1:] != values[:-1]) | (doc[1:] != doc[:-1])
        if not keep.all():
            values = values[keep]
            sizes = np.bincount(doc[keep], minlength=n).astype(np.int64)
            offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(sizes)])
    return ShingleSets(values, offsets)


def split_view(sets: ShingleSets, tag: int) -> tuple[ShingleSets, np.ndarray]:
    """One view's sets out of :func:`merge_views`'s, and the positions of its values in ``sets.values``."""
    values = np.asarray(sets.values)
    mask = (values >> _TOP) == np.uint64(tag)
    sizes = np.bincount(np.asarray(sets.doc_index)[mask], minlength=len(sets)).astype(np.int64)
    offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(sizes)])
    return ShingleSets(values[mask], offsets), np.flatnonzero(mask)


@register
class MultiView(VectorMethod):
    """Word 4-grams and character 5-grams (each its own MinHash-LSH bands) and, with the neural extra,
    RETSim neighbours; every candidate scored in every view; score: the largest of the views' scores,
    each mapped so that its calibrated threshold is 0.5 (threshold 0.5), or a fitted logistic model.
    Its candidates need every document at hand, as a vector method's do (the chunked engines run them
    over the joined representation), with or without vectors.

    >>> m = MultiView(DedupConfig(method="multiview").replace(multiview__views=("word", "char")))
    >>> m.kinds, m.view_thresholds
    (('word', 'char'), (0.45, 0.8))
    >>> m.shingles["word"].params() != m.shingles["char"].params()
    True
    """

    name = "multiview"
    default_threshold = 0.5
    threshold_grid = COMBINED_SCORE_GRID

    @classmethod
    def check(cls, config: DedupConfig) -> None:
        mv = config.multiview
        views = mv.views or default_views(config)
        if "crossencoder" in views and not config.embed.cross_model:
            raise ConfigError("multiview view 'crossencoder' needs a cross-encoder: cross_model (--cross-model DIR, "
                              "from `neardup train crossencoder`)")
        if mv.view_thresholds is not None and len(mv.view_thresholds) != len(views):
            raise ConfigError(f"multiview view_thresholds must give one threshold per view {views}, "
                              f"got {mv.view_thresholds!r}")
        if mv.coef is not None and len(mv.coef) != len(views) + 2:
            raise ConfigError(f"multiview coef must be {len(views) + 2} numbers (one per view {views}, the length "
                              f"ratio, the intercept), got {mv.coef!r}")
        if mv.combine in VIEWS and mv.combine not in views:
            raise ConfigError(f"multiview combine {mv.combine!r} names a view that is not among the views {views}")

    def __init__(self, config: DedupConfig) -> None:
        super().__init__(config)
        mv = config.multiview
        #: The views compared, as named in the config (``word``, ``char``, ``retsim``, ``biencoder``, ``crossencoder``).
        self.kinds: tuple[str, ...] = tuple(mv.views or default_views(config))
        #: The vector view (``retsim`` or ``biencoder``), if any.
        self.vector_view: str | None = next((v for v in self.kinds if v in VECTOR_VIEWS), None)
        #: The cross-encoder reads both texts of a pair.
        self.needs_texts = "crossencoder" in self.kinds
        if "retsim" in self.kinds and not neural_available():
            raise ConfigError("multiview view 'retsim' needs the neural extra (pip install 'neardup[neural]'); "
                              "without it use views word and char (--views word,char)")
        self.view_thresholds: tuple[float, ...] = tuple(
            mv.view_thresholds or tuple(view_default_threshold(v, config) for v in self.kinds))
        self.combine = mv.combine
        #: Each shingle view as a MinHash method of its own shingling, LSH level, budget and threshold.
        self.shingles: dict[str, MinHash] = {}
        for view, t in zip(self.kinds, self.view_thresholds):
            if view not in SHINGLE_VIEWS:
                continue
            char = view == "char"
            sub = config.replace(
                method="minhash", threshold=t, shingle__char=char, shingle__n=mv.char_n if char else mv.word_n,
                minhash__rule="lsh", minhash__bands=None, minhash__rows=None,
                minhash__lsh_threshold=mv.char_lsh_threshold if char else mv.word_lsh_threshold,
                minhash__candidates_per_doc=mv.candidates_per_doc)
            self.shingles[view] = MinHash(sub)
        self._parts: tuple[Representation, dict[str, Representation]] | None = None

    # -- represent --------------------------------------------------------------------------------

    def shingle(self, texts: Sequence[str], max_chars: int) -> ShingleSets:
        """Every shingle view's sets of the texts, packed into one (:func:`merge_views`)."""
        views = [v for v in SHINGLE_VIEWS if v in self.shingles]
        return merge_views([self.shingles[v].shingle(texts, max_chars) for v in views],
                           [SHINGLE_VIEWS.index(v) for v in views])

    def sketch(self, sets: ShingleSets) -> np.ndarray:
        """Each shingle view's MinHash signatures of its own shingles, side by side (word first)."""
        return np.hstack([self.shingles[v].sketch(split_view(sets, SHINGLE_VIEWS.index(v))[0])
                          for v in SHINGLE_VIEWS if v in self.shingles])

    def embed(self, texts: Sequence[str], max_chars: int, progress: bool = False) -> Embeddings | None:
        if self.vector_view is None:
            return None
        from neardup.represent.embeddings import embed_texts

        return embed_texts(texts, self.vector_view, self.config.embed, max_chars, progress=progress)  # type: ignore[arg-type]

    def representation_key(self) -> tuple[Any, ...]:
        embed = self.config.embed
        return (self.name, self.config.normalize, *(s.representation_key() for s in self.shingles.values()),
                self.vector_view, embed.model if self.vector_view else None)

    def view_representations(self, rep: Representation) -> dict[str, Representation]:
        """Each shingle view's own representation of the documents (its sets, signatures and IDF weights),
        unpacked once per representation."""
        if self._parts is not None and self._parts[0] is rep:
            return self._parts[1]
        out: dict[str, Representation] = {}
        weights = rep.weights(self.config.verify.idf_power) if self.weighted() else None
        column = 0
        for view in SHINGLE_VIEWS:
            if view not in self.shingles:
                continue
            sub = self.shingles[view]
            sets, at = split_view(rep.sets, SHINGLE_VIEWS.index(view))
            sketch = None if rep.sketch is None else rep.sketch[:, column : column + sub.num_perm]
            column += sub.num_perm
            part = Representation(sets=sets, lengths=rep.lengths, sketch=sketch)
            if weights is not None:
                from neardup.verify.overlap import doc_weight_totals

                w = np.asarray(weights[0])[at]
                part.set_weights(self.config.verify.idf_power, w, doc_weight_totals(sets, w))
            out[view] = part
        self._parts = (rep, out)
        return out

    def plan(self, rep: Representation) -> MultiView:
        """Each shingle view's LSH level planned on its own signatures of this corpus (the candidate budget)."""
        parts = self.view_representations(rep)
        changes: dict[str, Any] = {}
        for view, sub in self.shingles.items():
            planned = sub.plan(parts[view]).config.minhash.lsh_threshold
            if planned != sub.config.minhash.lsh_threshold:
                changes[f"multiview__{view}_lsh_threshold"] = planned
        if not changes:
            return self
        return MultiView(self.config.replace(**changes))

    # -- candidates and scores --------------------------------------------------------------------

    def view_candidates(self, rep: Representation) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each view's own candidate pairs."""
        parts = self.view_representations(rep)
        out = {}
        for view in self.kinds:
            if view == "crossencoder":
                continue
            if view == self.vector_view:
                from neardup.candidates.vectors import knn_pairs

                assert rep.vectors is not None
                ok = np.flatnonzero(~rep.empty)
                left, right, _ = knn_pairs(np.asarray(rep.vectors.docs)[ok], k=self.config.embed.k,
                                           threshold=self.config.multiview.min_cosine, index=self.config.embed.index)
                out[view] = unique_pairs(ok[left], ok[right])
            else:
                found = self.shingles[view].candidates(parts[view])
                out[view] = (found.left, found.right)
        return out

    def candidates(self, rep: Representation) -> Candidates:
        found = self.view_candidates(rep)
        left, right = unique_pairs(np.concatenate([lr[0] for lr in found.values()]),
                                   np.concatenate([lr[1] for lr in found.values()]))
        return Candidates(left, right, {"candidates_by_view": {v: int(lr[0].size) for v, lr in found.items()}})

    def view_scores(self, rep: Representation, left: np.ndarray, right: np.ndarray) -> dict[str, np.ndarray]:
        """Every pair's score in every view: the shingle views' verify score, the vector view's cosine, the
        cross-encoder's probability (0 for pairs the other views rate below ``crossencoder_floor``)."""
        parts = self.view_representations(rep)
        out = {}
        for view in self.kinds:
            if view == self.vector_view:
                from neardup.verify.cosine import cosine_scores

                assert rep.vectors is not None
                out[view] = np.asarray(cosine_scores(rep.vectors.docs, left, right), dtype=np.float64)
            elif view in self.shingles:
                out[view] = np.asarray(self.shingles[view].score(parts[view], left, right), dtype=np.float64)
        if "crossencoder" in self.kinds:
            out["crossencoder"] = self.crossencoder_scores(rep, left, right, out)
        return out

    def crossencoder_scores(self, rep: Representation, left: np.ndarray, right: np.ndarray,
                            scores: dict[str, np.ndarray]) -> np.ndarray:
        """The cross-encoder's probability of the close pairs, 0 for the rest. Close: a shingle view's
        calibrated score reaches ``crossencoder_floor`` (0.25: half its threshold), or the vector view's
        cosine reaches its threshold (cosines of unrelated news crowd just below it: a lower floor would
        send most neighbours to the cross-encoder)."""
        from neardup.verify.crossencoder import rerank_scores

        if rep.texts is None:
            raise ConfigError("multiview view 'crossencoder' reads the texts of each pair, and this representation "
                              "was made without them")
        thresholds = dict(zip(self.kinds, self.view_thresholds))
        close = np.zeros(left.size, dtype=bool)
        for view, s in scores.items():
            if view in self.shingles:
                close |= calibrated(s, thresholds[view]) >= self.config.multiview.crossencoder_floor
            elif view == self.vector_view:
                close |= passes(s, thresholds[view])
        out = np.zeros(left.size, dtype=np.float64)
        at = np.flatnonzero(close)
        if at.size:
            out[at] = rerank_scores(rep.texts, left[at], right[at], self.config.embed.cross_model)
        return out

    def features(self, rep: Representation, left: np.ndarray, right: np.ndarray,
                 scores: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """The logistic model's features of pairs: each view's score (clipped to [0, 1]), in the order of
        the views, then the length ratio (shorter / longer text, in characters)."""
        scores = scores if scores is not None else self.view_scores(rep, left, right)
        ln = np.asarray(rep.lengths, dtype=np.float64)
        a, b = ln[left], ln[right]
        ratio = np.minimum(a, b) / np.maximum(np.maximum(a, b), 1.0)
        return np.column_stack([np.clip(scores[v], 0.0, 1.0) for v in self.kinds] + [ratio]).reshape(
            -1, len(self.kinds) + 1)

    def combined(self, rep: Representation, left: np.ndarray, right: np.ndarray,
                 scores: dict[str, np.ndarray]) -> np.ndarray:
        """The configured rule over the views' scores of pairs."""
        if left.size == 0:
            return np.empty(0, dtype=np.float64)
        if self.combine == "logistic":
            from neardup.verify.hybrid import logistic_scores

            return logistic_scores(self.features(rep, left, right, scores), self.coef())
        thresholds = dict(zip(self.kinds, self.view_thresholds))
        chosen = self.kinds if self.combine == "max" else (self.combine,)
        return np.max(np.vstack([calibrated(scores[v], thresholds[v]) for v in chosen]), axis=0)

    def coef(self) -> tuple[float, ...]:
        """The logistic model's coefficients (without fitted ones: the max rule's equivalent, each view's
        score over its threshold)."""
        if self.config.multiview.coef is not None:
            return self.config.multiview.coef
        # untuned: a steep logistic of the mean of score / threshold, 0.5 where the mean reaches 1
        k = 8.0 / len(self.kinds)
        return tuple(k / t for t in self.view_thresholds) + (0.0, -8.0)

    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        return self.combined(rep, left, right, self.view_scores(rep, left, right))

    def weighted(self) -> bool:
        return any(sub.weighted() for sub in self.shingles.values())

    def view(self) -> str:
        return " + ".join(self.view_names())

    def view_names(self) -> list[str]:
        """What each view compares, as a pair's evidence names it ("word 4-grams", "char 5-grams", "retsim")."""
        return [self.shingles[v].view() if v in self.shingles else "cross-encoder" if v == "crossencoder" else v
                for v in self.kinds]

    def views(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              scores: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Every view and each pair's score in it (the shingle views' verify score, the vector view's cosine,
        the cross-encoder's probability)."""
        found = self.view_scores(rep, left, right)
        return [(name, found[v]) for name, v in zip(self.view_names(), self.kinds)]

    # -- fitting and description -------------------------------------------------------------------

    def fits(self) -> bool:
        return self.combine == "logistic"

    def fit(self, rep: Representation, left: np.ndarray, right: np.ndarray, usable: np.ndarray,
            positive: np.ndarray) -> dict[str, Any] | None:
        """For ``combine="logistic"``: the model fitted on the labelled candidate pairs (``usable``, with
        ``positive`` labels), as ``DedupConfig.replace`` keywords; None for the other rules."""
        if self.combine != "logistic":
            return None
        from neardup.verify.hybrid import fit_logistic

        x = self.features(rep, left, right)
        coef = fit_logistic(x[usable], np.asarray(positive)[usable])
        return {"multiview__views": self.kinds, "multiview__coef": tuple(coef) if coef else self.coef()}

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"views": list(self.kinds), "view_thresholds": list(self.view_thresholds),
                               "combine": self.combine}
        for view, sub in self.shingles.items():
            out[f"{view}_bands"], out[f"{view}_rows"] = sub.bands, sub.rows
        if self.combine == "logistic":
            out["coef"] = list(self.coef())
        return out

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["minhash"]["algorithm"] = minhash.ALGORITHM
        return out

    def tuning_settings(self) -> list[dict[str, Any]]:
        # the fitted model first (tune calls fit), then the label-free rule, then each view alone
        return [{"multiview__combine": c} for c in ("logistic", "max", *self.kinds)]
