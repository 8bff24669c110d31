"""The search of the whole configuration behind ``neardup tune``: which representation, candidate rule,
pair score, clustering and threshold cluster a labelled validation set best, within a time budget.

Owns the search space (:class:`SearchSpace`, typed data), the order its points are tried in, the caches
that make each part run once, the budget, the report of what was tried and skipped, and writing the
choice as a configuration file; must not implement a stage (the methods and :mod:`neardup.cluster` do),
a metric (:mod:`neardup.eval.evaluate`) or the file format (:mod:`neardup.io.config_file`).

A *point* is a whole configuration: a representation (word or character n-grams of a shingle method,
or a neural encoder), a candidate rule (a method and one of its
:meth:`~neardup.methods.base.Method.tuning_settings`), a pair score, a clustering algorithm and a
threshold. A *cell* is a point without its threshold. Each representation is prepared once (per
:meth:`~neardup.methods.base.Method.representation_key`), each cell's candidates are found once per
(representation, rule) and scored once per score; every threshold is then a cheap filter followed by
clustering and metrics.

The search goes by coordinates, cheapest and most promising first, and stops when the budget is spent:

1. ``start``: ``base`` resolved on the validation texts (for ``method="auto"``, the calibrated default,
   :func:`neardup.calibrate.resolve`), at every threshold of its grid and at its own;
2. ``representation``: every other representation (the start's neighbours first: same unit, nearest
   size; neural encoders last), with the start's rule, score and clustering;
3. ``score``, 4. ``candidates``, 5. ``cluster``: every pair score, candidate rule and clustering
   algorithm, each tried on the best cell of each of the ``beam`` best representations so far.

The best point has the highest validation ARI (ties: F1, then the cell tried first, then the higher
threshold): the start point itself wins every tie, so the choice is never worse than it on validation
and differs from it only where the labels say it is better.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup import methods
from neardup.calibrate import resolve
from neardup.cluster import cluster_pairs, passes
from neardup.config import CLUSTER_ALGORITHMS, VERIFY_SCORES, ConfigError, DedupConfig, ShingleConfig, config_to_dict
from neardup.eval.evaluate import LabelledData, evaluate, score
from neardup.eval.tune import pair_labels, split_warnings
from neardup.methods.base import KeyedMethod, VectorMethod
from neardup.pipeline import Prepared, prepare
from neardup.progress import progress_bar
from neardup.results import DedupResult
from neardup.verify.overlap import SCORES as SET_SCORES

#: Shingles searched by default, as ``(char, n)``: word 3-, 4- and 5-grams, character 4-, 5- and 6-grams.
DEFAULT_SHINGLES: tuple[tuple[bool, int], ...] = ((False, 3), (False, 4), (False, 5), (True, 4), (True, 5), (True, 6))
#: Methods searched by default (one not registered, or whose extra or model is missing, is left out).
DEFAULT_METHODS: tuple[str, ...] = ("minhash", "ngram", "retsim", "biencoder", "multiview")
#: Methods whose representation is the shingles searched (the others are searched as they are).
SHINGLED: tuple[str, ...] = ("minhash", "ngram")
#: Modules a clustering algorithm needs.
CLUSTER_NEEDS: dict[str, tuple[str, ...]] = {"louvain": ("igraph",), "leiden": ("igraph", "leidenalg")}
#: The stages of the search, in order.
STAGES: tuple[str, ...] = ("start", "representation", "score", "candidates", "cluster")
_PARTS = ("represent", "candidates", "verify", "cluster", "metrics")


@dataclass(frozen=True)
class SearchSpace:
    """What ``neardup tune`` searches.

    ``methods``: the methods tried; those in ``shingled`` are tried on each of ``shingles``
    (``(char, n)``), the others as they are. ``model``: a local model (a RETSim ``.onnx`` file, or a
    sentence-transformers folder: the bi-encoder is searched only with one; nothing is downloaded);
    ``cross_model``: a cross-encoder folder (``neardup train crossencoder``): method rerank is searched, and
    multiview gains it as a view (with a bi-encoder ``model``, that view too).
    ``scores``: pair scores (for the methods that verify shingle sets); ``clusters``: clustering
    algorithms; ``thresholds``: the grid (None: each method's ``threshold_grid``); ``beam``: of how many
    of the best representations each later stage varies the best cell.

    >>> SearchSpace.fixing(char=True).shingles
    ((True, 4), (True, 5), (True, 6))
    >>> SearchSpace.fixing(method="hybrid").methods
    ('hybrid',)
    """

    methods: tuple[str, ...] = DEFAULT_METHODS
    shingled: tuple[str, ...] = SHINGLED
    shingles: tuple[tuple[bool, int], ...] = DEFAULT_SHINGLES
    model: str | None = None
    cross_model: str | None = None
    scores: tuple[str, ...] = VERIFY_SCORES
    clusters: tuple[str, ...] = CLUSTER_ALGORITHMS
    thresholds: tuple[float, ...] | None = None
    beam: int = 2

    def __post_init__(self) -> None:
        def check(cond: bool, message: str) -> None:
            if not cond:
                raise ConfigError(message)

        check(bool(self.methods), "the search space needs at least one method")
        for char, n in self.shingles:
            ShingleConfig(n=n, char=char)
        bad = [s for s in self.scores if s not in VERIFY_SCORES]
        check(bool(self.scores) and not bad, f"search scores must be among {VERIFY_SCORES}, got {list(self.scores)}")
        bad = [c for c in self.clusters if c not in CLUSTER_ALGORITHMS]
        check(bool(self.clusters) and not bad,
              f"search clusters must be among {CLUSTER_ALGORITHMS}, got {list(self.clusters)}")
        if self.thresholds is not None:
            check(bool(self.thresholds) and all(0 < t <= 1 for t in self.thresholds),
                  f"every threshold must be in (0, 1], got {list(self.thresholds)}")
        check(isinstance(self.beam, int) and self.beam >= 1, f"beam must be an integer >= 1, got {self.beam!r}")

    @classmethod
    def fixing(cls, method: str | None = None, char: bool | None = None, n: int | None = None,
               score: str | None = None, cluster: str | None = None, model: str | None = None,
               thresholds: Sequence[float] | None = None, cross_model: str | None = None) -> SearchSpace:
        """The default space less what a user fixed: a method (``auto`` fixes none), the shingle unit or size
        (then only shingle methods are searched), the pair score, the clustering; ``model`` and
        ``thresholds`` and ``cross_model`` (which adds method rerank) as in the class."""
        space = cls(model=model, cross_model=cross_model, thresholds=tuple(thresholds) if thresholds else None)
        changes: dict[str, Any] = {}
        if cross_model is not None:
            changes["methods"] = (*DEFAULT_METHODS, "rerank")
        if method is not None and method != "auto":
            changes["methods"] = (method,)
        if char is not None or n is not None:
            if "methods" not in changes:
                changes["methods"] = SHINGLED
            units = (char,) if char is not None else (False, True)
            changes["shingles"] = tuple((c, size) for c in units
                                        for size in ((n,) if n is not None else tuple(s for u, s in DEFAULT_SHINGLES
                                                                                       if u == c)))
        if score is not None:
            changes["scores"] = (score,)
        if cluster is not None:
            changes["clusters"] = (cluster,)
        return dataclasses.replace(space, **changes) if changes else space


@dataclass(frozen=True)
class _Rep:
    """One representation: its label, the ``DedupConfig.replace`` keywords that select it (besides the
    method), and the methods whose candidate rules run on it (the first one in the representation stage)."""

    label: str
    changes: tuple[tuple[str, Any], ...]
    rules: tuple[str, ...]


@dataclass(frozen=True)
class _Cell:
    """A point of the space without its threshold."""

    rep: _Rep
    method: str
    rule: tuple[tuple[str, Any], ...] = ()
    score: str | None = None
    cluster: str = "greedy"

    def changes(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, **dict(self.rep.changes), **dict(self.rule),
                               "cluster__algorithm": self.cluster}
        if self.score is not None:
            out["verify__score"] = self.score
        return out

    def label(self) -> str:
        rule = ", ".join(f"{k.split('__', 1)[-1]}={v}" for k, v in self.rule) or "default"
        return f"{self.rep.label} | {self.method} ({rule}) | {self.score or 'own score'} | {self.cluster}"


@dataclass
class _Tried:
    """A cell's result: each threshold's validation metrics, and settings fitted on the labels (hybrid)."""

    cell: _Cell
    order: int
    stage: str
    points: list[tuple[float, dict[str, Any]]]
    fitted: dict[str, Any]
    seconds: float
    preferred: float | None = None  # the start point's threshold: it wins ties in its cell

    def best(self) -> tuple[float, dict[str, Any]]:
        return max(self.points, key=lambda p: (_rank(p[1]), p[0] == self.preferred, p[0]))

    def key(self) -> tuple[Any, ...]:
        t, m = self.best()
        return (*_rank(m), -self.order, t)


def _rank(metrics: dict[str, Any]) -> tuple[float, float]:
    return (round(metrics["ari"], 12), round(metrics["f1"], 12))


def _short(changes: dict[str, Any]) -> dict[str, Any]:
    """Readable names of ``DedupConfig.replace`` keywords (``shingle__n`` -> ``ngram``, ``verify__score`` -> ``verify``)."""
    names = {"shingle__n": "ngram", "shingle__char": "char", "verify__score": "verify", "cluster__algorithm": "cluster",
             "embed__model": "model"}
    return {names.get(k, k.split("__", 1)[-1]): v for k, v in changes.items()}


def _missing(modules: Sequence[str]) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


@dataclass
class SearchResult:
    """What :func:`search` found: the ``chosen`` configuration and its ``params`` (the point, readable) and
    validation ``metrics``; the ``start`` point and its metrics; every point tried (``trials``); the
    ``report`` (space size, what was tried and skipped, seconds per part and per representation)."""

    chosen: DedupConfig
    params: dict[str, Any]
    metrics: dict[str, Any]
    start: DedupConfig
    start_params: dict[str, Any]
    start_metrics: dict[str, Any]
    trials: list[dict[str, Any]]
    report: dict[str, Any]
    prepared: Prepared | None = field(default=None, repr=False)


class _Search:
    """One search: its caches (representations, candidates, scores), clock and findings."""

    def __init__(self, data: LabelledData, base: DedupConfig, space: SearchSpace, budget: float | None,
                 progress: bool) -> None:
        self.t0 = time.perf_counter()
        self.data, self.space, self.budget = data, space, budget
        self.start = resolve(base, data.corpus.texts)
        self.preps: dict[Any, Prepared] = {}
        self.cands: dict[Any, tuple[np.ndarray, np.ndarray, dict[str, Any]]] = {}
        self.scored: dict[Any, np.ndarray] = {}
        self.pair_store: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        self.tried: dict[DedupConfig, _Tried] = {}
        self.skipped: list[dict[str, str]] = []
        self.skipped_for_budget: dict[str, list[str]] = {}
        self.seconds = dict.fromkeys(_PARTS, 0.0)
        self.rep_seconds: dict[str, float] = {}
        self.bar = progress_bar(progress, desc="tuning", unit="cell", leave=False)
        self.reps = self._representations()
        self.clusters = self._clusters()

    # -- the space ---------------------------------------------------------------------------------

    def _unavailable(self, method: str) -> str | None:
        """Why a method cannot be searched here (None: it can)."""
        cls = methods.method_class(method)
        if not issubclass(cls, VectorMethod) or method == "multiview":  # multiview drops its RETSim view itself
            return None
        missing = _missing(("faiss",)) if self.start.embed.index == "flat" else _missing(("usearch",))
        model = self.space.model
        if method == "rerank" and self.space.cross_model is None:
            return "needs a cross-encoder (--cross-model FOLDER, from `neardup train crossencoder`)"
        if cls.encoder == "biencoder":
            if model is None or model.endswith(".onnx"):
                return "needs a bi-encoder model (--model FOLDER); none is downloaded"
            missing += _missing(("sentence_transformers", "torch"))
        else:
            missing += _missing(("onnxruntime",))
            if model is None or not model.endswith(".onnx"):
                try:
                    from neardup.represent.retsim import default_model_path

                    default_model_path()
                except (ImportError, FileNotFoundError) as exc:
                    return str(exc)
        if missing:
            return f"needs {', '.join(missing)}: install neardup[neural]"
        return None

    def _model_changes(self, method: str) -> tuple[tuple[str, Any], ...]:
        cls = methods.method_class(method)
        cross = (("embed__cross_model", self.space.cross_model),) if self.space.cross_model else ()
        model = self.space.model
        if method == "multiview":  # a folder: the bi-encoder view; an .onnx file: RETSim's model
            return ((("embed__model", model),) if model else ()) + cross
        if method == "rerank":
            return ((("embed__model", model),) if model and not model.endswith(".onnx") else ()) + cross
        if not issubclass(cls, VectorMethod) or self.space.model is None:
            return ()
        onnx = self.space.model.endswith(".onnx")
        if (cls.encoder == "biencoder") == onnx:
            return (("embed__model", None),)
        return (("embed__model", self.space.model),)

    def _representations(self) -> list[_Rep]:
        """Every representation, the start's first, then its neighbours, then the rest (neural last)."""
        space, start = self.space, self.start
        registered = set(methods.names())
        shingled = [m for m in space.methods if m in space.shingled and m in registered]
        reps: list[_Rep] = []

        def shingle_rep(char: bool, n: int, first: str | None = None) -> _Rep:
            rules = tuple(dict.fromkeys([first, *shingled] if first else shingled))
            return _Rep(f"{'char' if char else 'word'} {n}-grams", (("shingle__char", char), ("shingle__n", n)),
                        rules)

        if start.method in space.shingled:
            reps.append(shingle_rep(bool(start.shingle.char), int(start.shingle.n), start.method))  # type: ignore[arg-type]
        else:
            reps.append(_Rep(start.method, (), (start.method,)))
        c0, n0 = bool(start.shingle.char), int(start.shingle.n)  # type: ignore[arg-type]
        if shingled:
            def near(x: tuple[bool, int]) -> tuple[int, int]:
                char, n = x
                return (char != c0, abs(n - (n0 if char == c0 else ShingleConfig.DEFAULT_N[char])))

            for char, n in sorted(dict.fromkeys(space.shingles), key=near):
                rep = shingle_rep(char, n)
                if rep.label != reps[0].label:
                    reps.append(rep)
        for method in space.methods:
            if method in space.shingled or method == start.method or method not in registered:
                continue
            why = self._unavailable(method)
            if why is not None:
                self.skipped.append({"what": method, "reason": why})
                continue
            reps.append(_Rep(method, self._model_changes(method), (method,)))
        return reps

    def _clusters(self) -> list[str]:
        out = []
        for name in dict.fromkeys([str(self.start.cluster.algorithm), *self.space.clusters]):
            missing = _missing(CLUSTER_NEEDS.get(name, ()))
            if missing:
                self.skipped.append({"what": f"cluster {name}", "reason": f"needs {', '.join(missing)}"})
            else:
                out.append(name)
        return out

    def _scores(self, method: str) -> list[str | None]:
        """The pair scores a method can verify with (None: its own, for methods that do not verify sets)."""
        if not issubclass(methods.method_class(method), KeyedMethod):
            return [None]
        out: list[str | None] = []
        for s in self.space.scores:
            try:
                m = methods.get(self.start.replace(method=method, verify__score=s))
            except ConfigError:
                continue
            if m.scores_from == "sets" and s not in SET_SCORES:  # e.g. "none" (a sketch's estimate) without one
                continue
            out.append(s)
        return out or [None]

    def _rules(self, rep: _Rep, method: str) -> list[tuple[tuple[str, Any], ...]]:
        """The candidate rules of a method on a representation: its own setting, then its tuning settings."""
        cfg = self.start.replace(method=method, **dict(rep.changes))
        rules: list[tuple[tuple[str, Any], ...]] = [()]
        seen = {cfg}
        for setting in methods.get(cfg).tuning_settings():
            other = cfg.replace(**setting)
            if other not in seen:
                seen.add(other)
                rules.append(tuple(sorted(setting.items())))
        return rules

    def _grid(self, method: str) -> list[float]:
        grid = set(self.space.thresholds or methods.method_class(method).threshold_grid)
        if method == self.start.method:
            grid.add(float(self.start.threshold))  # type: ignore[arg-type]
        return sorted(grid)

    def _config(self, cell: _Cell, threshold: float) -> DedupConfig:
        return self.start.replace(**cell.changes(), threshold=threshold)

    def size(self) -> int:
        """Points in the whole space (every representation x rule x score x clustering x threshold)."""
        total = 0
        for rep in self.reps:
            for method in rep.rules:
                try:
                    rules = len(self._rules(rep, method))
                except ConfigError:
                    continue
                total += rules * len(self._scores(method)) * len(self.clusters) * len(self._grid(method))
        return total

    # -- one cell ----------------------------------------------------------------------------------

    def _over_budget(self) -> bool:
        return self.budget is not None and time.perf_counter() - self.t0 >= self.budget and bool(self.tried)

    def attempt(self, cell: _Cell, stage: str) -> None:
        """Try a cell (once), unless the budget is spent (it is then listed as skipped)."""
        try:
            identity = self._config(cell, 1.0)
        except ConfigError as exc:
            self.skipped.append({"what": cell.label(), "reason": str(exc)})
            return
        if identity in self.tried:
            return
        if self._over_budget():
            self.skipped_for_budget.setdefault(stage, []).append(cell.label())
            return
        t0 = time.perf_counter()
        try:
            points, fitted = self._evaluate(cell)
        except (ValueError, ImportError, FileNotFoundError) as exc:  # ConfigError too: e.g. a candidate cap
            self.skipped.append({"what": cell.label(), "reason": str(exc)})
            self.tried[identity] = _Tried(cell, len(self.tried), stage, [], {}, 0.0)
            return
        seconds = time.perf_counter() - t0
        self.rep_seconds[cell.rep.label] = self.rep_seconds.get(cell.rep.label, 0.0) + seconds
        self.tried[identity] = _Tried(cell, len(self.tried), stage, points, fitted, seconds)
        self.bar.update(1)

    def _prepared(self, cfg: DedupConfig) -> Prepared:
        key = methods.get(cfg).representation_key()
        if key not in self.preps:
            t0 = time.perf_counter()
            self.preps[key] = prepare(self.data.corpus, cfg)
            self.seconds["represent"] += time.perf_counter() - t0
        return self.preps[key]

    def _evaluate(self, cell: _Cell) -> tuple[list[tuple[float, dict[str, Any]]], dict[str, Any]]:
        """Each threshold's metrics: candidates found and scored once per candidate plan, then filtered."""
        grid = self._grid(cell.method)
        groups: dict[Any, list[float]] = {}
        for t in grid:  # thresholds that give the same candidate plan share candidates (the loosest's)
            method = methods.get(self._config(cell, t))
            groups.setdefault(repr(sorted(method.params().items())), []).append(t)
        points: list[tuple[float, dict[str, Any]]] = []
        fitted: dict[str, Any] = {}
        n = len(self.data.corpus)
        for plan, thresholds in groups.items():
            loosest = self._config(cell, thresholds[0])
            prep = self._prepared(loosest)
            left, right, scores, fitted = self._scored(prep, loosest, plan)
            for t in thresholds:
                cfg = loosest if t == thresholds[0] else self._config(cell, t)
                t0 = time.perf_counter()
                keep = passes(scores, t)
                clusters = cluster_pairs(n, left[keep], right[keep], scores[keep], prep.lengths, cfg.cluster,
                                         threshold=t)
                t1 = time.perf_counter()
                result = DedupResult(ids=self.data.corpus.ids, clusters=clusters, left=left[keep], right=right[keep],
                                     scores=scores[keep], summary={})
                points.append((t, score(result, self.data)))
                self.seconds["cluster"] += t1 - t0
                self.seconds["metrics"] += time.perf_counter() - t1
        return points, fitted

    def _scored(self, prep: Prepared, config: DedupConfig, plan: str
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Candidate pairs of a cell and their scores (cached per representation, rule and score)."""
        rep_key = methods.get(config).representation_key()
        cand_key = (rep_key, config.method, plan, config.minhash, config.method_settings, config.simhash, config.embed,
                    config.threshold if issubclass(methods.method_class(config.method), VectorMethod) else None)
        score_key = (cand_key, config.verify)
        method = methods.get(config)
        if method.fits():  # a model fitted on the labelled candidate pairs (hybrid's, multiview's logistic rule)
            method = method.plan(prep.rep)
            left, right = self._candidates(method, prep, cand_key)
            t0 = time.perf_counter()
            fitted = method.fit(prep.rep, left, right, *pair_labels(self.data, left, right)) or {}
            scores = methods.get(config.replace(**fitted)).plan(prep.rep).score(prep.rep, left, right)
            self.seconds["verify"] += time.perf_counter() - t0
            return left, right, np.asarray(scores, dtype=np.float64), fitted
        if score_key not in self.scored:
            method = method.plan(prep.rep)
            left, right = self._candidates(method, prep, cand_key)
            t0 = time.perf_counter()
            self.scored[score_key] = self._pair_scores(method, prep, (rep_key, config.verify), left, right)
            self.seconds["verify"] += time.perf_counter() - t0
        left, right, _ = self.cands[cand_key]
        return left, right, self.scored[score_key], {}

    def _candidates(self, method: Any, prep: Prepared, cand_key: Any) -> tuple[np.ndarray, np.ndarray]:
        """A cell's candidate pairs (cached per representation and rule)."""
        if cand_key not in self.cands:
            t0 = time.perf_counter()
            left, right, _ = method.candidates(prep.rep)
            self.seconds["candidates"] += time.perf_counter() - t0
            self.cands[cand_key] = (left, right, {})
        left, right, _ = self.cands[cand_key]
        return left, right

    def _pair_scores(self, method: Any, prep: Prepared, key: Any, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Scores of pairs, each pair scored once per representation and score: candidate rules of one
        representation propose overlapping pairs (a looser rule's are mostly a superset)."""
        n = len(self.data.corpus)
        codes = left.astype(np.int64) * n + right.astype(np.int64)
        known, known_scores = self.pair_store.get(key, (np.empty(0, dtype=np.int64), np.empty(0)))
        pos = np.minimum(np.searchsorted(known, codes), max(known.size - 1, 0))
        found = (known[pos] == codes) if known.size else np.zeros(codes.size, dtype=bool)
        scores = np.empty(codes.size, dtype=np.float64)
        scores[found] = known_scores[pos[found]]
        new = ~found
        if new.any():
            scores[new] = method.score(prep.rep, left[new], right[new])
            merged = np.concatenate([known, codes[new]])
            order = np.argsort(merged, kind="stable")
            self.pair_store[key] = (merged[order], np.concatenate([known_scores, scores[new]])[order])
        return scores

    # -- the search --------------------------------------------------------------------------------

    def beam(self) -> list[_Cell]:
        """The best cell of each of the ``beam`` best representations so far."""
        best: dict[str, _Cell] = {}
        for tr in sorted((tr for tr in self.tried.values() if tr.points), key=_Tried.key, reverse=True):
            if len(best) < self.space.beam:
                best.setdefault(tr.cell.rep.label, tr.cell)
        return list(best.values())

    def run(self) -> SearchResult:
        start = self.start
        first = self.reps[0]
        start_score = start.verify.score if issubclass(methods.method_class(start.method), KeyedMethod) else None
        start_cell = _Cell(first, start.method, (), start_score, str(start.cluster.algorithm))
        self.attempt(start_cell, "start")
        start_tried = self.tried[self._config(start_cell, 1.0)]
        start_tried.preferred = float(start.threshold)  # type: ignore[arg-type]
        if not start_tried.points:
            raise ConfigError(f"the start configuration cannot run: {self.skipped[-1]['reason']}")
        for rep in self.reps[1:]:
            method = rep.rules[0]
            scores = self._scores(method)
            self.attempt(_Cell(rep, method, (), start_score if start_score in scores else scores[0],
                               start_cell.cluster), "representation")
        for cell in self.beam():
            for s in self._scores(cell.method):
                self.attempt(dataclasses.replace(cell, score=s), "score")
        for cell in self.beam():
            for method in cell.rep.rules:
                scores = self._scores(method)
                for rule in self._rules(cell.rep, method):
                    self.attempt(dataclasses.replace(cell, method=method, rule=rule,
                                                     score=cell.score if cell.score in scores else scores[0]),
                                 "candidates")
        for cell in self.beam():
            for name in self.clusters:
                self.attempt(dataclasses.replace(cell, cluster=name), "cluster")
        self.bar.close()
        return self._result(start_tried)

    def _result(self, start_tried: _Tried) -> SearchResult:
        best = max((tr for tr in self.tried.values() if tr.points), key=_Tried.key)
        t, metrics = best.best()
        chosen = dataclasses.replace(self._config(best.cell, t).replace(**best.fitted), calibration=None)
        params = _short({**best.cell.changes(), **best.fitted, "threshold": t})
        st = float(self.start.threshold)  # type: ignore[arg-type]
        start_metrics = next(m for th, m in start_tried.points if th == st)
        trials = []
        for tr in sorted(self.tried.values(), key=lambda x: x.order):
            for th, m in tr.points:
                trials.append({"stage": tr.stage, "representation": tr.cell.rep.label,
                               **_short({**tr.cell.changes(), **tr.fitted, "threshold": th}),
                               **{k: m[k] for k in ("ari", "precision", "recall", "f1")}})
        by_rep: dict[str, dict[str, Any]] = {}
        for tr in self.tried.values():
            if not tr.points:
                continue
            _, m = tr.best()
            row = by_rep.setdefault(tr.cell.rep.label, {"best_ari": -1.0, "best_f1": 0.0, "cells": 0,
                                                         "seconds": round(self.rep_seconds.get(tr.cell.rep.label, 0), 3)})
            row["cells"] += 1
            if _rank(m) > (row["best_ari"], row["best_f1"]):
                row["best_ari"], row["best_f1"] = m["ari"], m["f1"]
        skipped = list(self.skipped)
        for stage, cells in self.skipped_for_budget.items():
            skipped.append({"what": f"{len(cells)} cells of stage {stage}", "reason": "budget", "cells": cells})
        report = {
            "space_size": self.size(),
            "cells_tried": sum(1 for tr in self.tried.values() if tr.points),
            "points_tried": len(trials),
            "budget_seconds": self.budget,
            "seconds": round(time.perf_counter() - self.t0, 3),
            "seconds_by_part": {k: round(v, 3) for k, v in self.seconds.items()},
            "stages": {s: sum(1 for tr in self.tried.values() if tr.stage == s and tr.points) for s in STAGES},
            "by_representation": by_rep,
            "skipped": skipped,
        }
        prep = self._prepared(chosen) if methods.get(chosen).representation_key() in self.preps else None
        return SearchResult(chosen=chosen, params=params, metrics=metrics, start=self.start,
                            start_params=_short({**start_tried.cell.changes(), "threshold": st}),
                            start_metrics=start_metrics, trials=trials, report=report, prepared=prep)


def search(validation: LabelledData, base: DedupConfig | None = None, space: SearchSpace | None = None,
           budget: float | None = None, progress: bool = False) -> SearchResult:
    """Search ``space`` on ``validation`` from ``base`` (default: the calibrated default, ``method="auto"``);
    ``budget``: seconds after which no new cell is started (the start cell always runs).

    >>> from neardup.io.read import read_records
    >>> texts = ["the cat sat on the mat by the door today", "the cat sat on the mat by the door today!",
    ...          "dogs bark at the moon all night long here", "a quite different story about trade"]
    >>> data = LabelledData(read_records([{"id": str(i), "text": t, "cluster": c}
    ...                                  for i, (t, c) in enumerate(zip(texts, ["a", "a", None, None]))],
    ...                                 label_field="cluster"))
    >>> found = search(data, space=SearchSpace(methods=("minhash",), clusters=("components",)))
    >>> found.metrics["ari"], found.chosen.method
    (1.0, 'minhash')
    """
    return _Search(validation, base or DedupConfig(method="auto"), space or SearchSpace(), budget, progress).run()


def tune_config(validation: LabelledData, test: LabelledData | None = None, base: DedupConfig | None = None,
                space: SearchSpace | None = None, budget: float | None = None, progress: bool = False,
                out: str | os.PathLike[str] | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Search the whole configuration on ``validation`` (:func:`search`), report the choice on ``test``, and
    with ``out`` write it as a configuration file that every command reads (``--config``).

    Returns ``params`` (the chosen point, readable), ``chosen`` (its :class:`DedupConfig`), ``config`` (the
    same as a dict), ``validation`` and ``test`` metrics (as :func:`evaluate`), ``default`` (the start
    point -- the calibrated default unless ``base`` names a method -- with its validation and test
    figures), ``search`` (the report), ``warnings``, ``n_trials``, ``seconds`` and ``trials``. An existing
    ``out`` is an error unless ``overwrite`` (checked before the search).
    """
    from neardup import __version__
    from neardup.io.config_file import save_config
    from neardup.io.write import check_outputs

    if out is not None:
        check_outputs(files=[out], overwrite=overwrite)
    t0 = time.perf_counter()
    base = base or DedupConfig(method="auto")
    found = search(validation, base, space, budget=budget, progress=progress)
    chosen = found.chosen
    val_metrics = evaluate(validation, chosen, prepared=found.prepared)
    test_metrics = evaluate(test, chosen) if test is not None else None
    # the default on test is the base as given: for method auto, calibrated on the test texts themselves
    default_test = None
    if test is not None:
        default_test = test_metrics if base == chosen else evaluate(test, base)
    figures = ("ari", "precision", "recall", "f1")
    default = {"params": found.start_params, "validation": {k: found.start_metrics[k] for k in figures},
               "test": {k: default_test[k] for k in figures} if default_test is not None else None}
    result: dict[str, Any] = {
        "method": chosen.method,
        "params": found.params,
        "chosen": chosen,
        "config": config_to_dict(chosen),
        "validation": val_metrics,
        "test": test_metrics,
        "default": default,
        "search": found.report,
        "warnings": split_warnings(validation, test),
        "n_trials": len(found.trials),
        "seconds": round(time.perf_counter() - t0, 3),
        "trials": found.trials,
    }
    if out is not None:
        def split(data: LabelledData, metrics: dict[str, Any]) -> dict[str, Any]:
            return {"data": data.corpus.source or data.name, "n_docs": len(data.corpus),
                    **{k: metrics[k] for k in figures}}

        report = {k: v for k, v in found.report.items() if k != "skipped"}
        report["skipped"] = [{k: v for k, v in s.items() if k != "cells"} for s in found.report["skipped"]]
        save_config(out, chosen, tuned={
            "by": f"neardup {__version__} tune", "params": found.params,
            "validation": split(validation, val_metrics),
            "test": split(test, test_metrics) if test is not None and test_metrics is not None else None,
            "default": default, "search": report, "seconds": result["seconds"],
        })
    return result


__all__ = ["DEFAULT_METHODS", "DEFAULT_SHINGLES", "SHINGLED", "STAGES", "SearchResult", "SearchSpace", "search",
           "tune_config"]
