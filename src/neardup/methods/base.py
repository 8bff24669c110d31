"""What a method offers every executor: represent a batch, look-up keys or vector candidates, scores of
pairs, and its parameters; and :class:`Representation`, the arrays a method computes for documents.

Owns the method interface, written once for every engine (in memory, chunked, Ray), ``match`` and
tuning; must not schedule work (engines do), read files, or cluster.

A method is a choice of stage implementations and the settings it resolves once from its
:class:`~neardup.config.DedupConfig` (bands and rows, collision count, Hamming distance, shingling):

* :class:`KeyedMethod` (MinHash, n-gram, SimHash): documents that share a key in one of its tables are
  candidates. Executors ask for the keys of any documents and tables (:meth:`KeyedMethod.keys`), turn
  the rows of one table's buckets into pairs (:meth:`KeyedMethod.bucket_pairs`), keep the pairs that
  share ``min_shared`` tables, and score them from shingle sets or sketches, at any scale.
* :class:`VectorMethod` (RETSim, bi-encoder, hybrid, re-rank): candidates come from a vector index over
  the whole collection, so its :meth:`Method.candidates` runs where all vectors are.
"""

from __future__ import annotations

import abc

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np

from neardup.candidates.buckets import count_pairs, unique_pairs
from neardup.config import ConfigError, DedupConfig, config_to_dict
from neardup.jit import pays
from neardup.represent.embeddings import Embeddings
from neardup.text.normalize import normalize, normalize_words, normalized_code_points, only_words_and_spaces
from neardup.text.shingle import ShingleSets, char_shingle_sets, shingle_many, shingle_words, word_shingle_sets
from neardup.verify.overlap import doc_weight_totals, idf_weights, idf_weights_of_codes, score_pairs, value_codes

#: Thresholds ``neardup tune`` sweeps for set scores; heavy OCR noise pushes the best very low.
SET_SCORE_GRID: tuple[float, ...] = (0.01, 0.02, 0.03, 0.04) + tuple(round(float(x), 3)
                                                                    for x in np.arange(0.05, 0.951, 0.025))
#: Thresholds swept for combined scores (a rule or a model over several signals): up to 0.99.
COMBINED_SCORE_GRID: tuple[float, ...] = SET_SCORE_GRID + (0.96, 0.97, 0.98, 0.99)
#: Thresholds swept for cosine similarities.
COSINE_GRID: tuple[float, ...] = tuple(round(float(x), 3) for x in np.arange(0.50, 0.9951, 0.01))
_EMPTY = np.empty(0, dtype=np.int64)


@dataclass
class Representation:
    """What a method computed for a run of documents (a batch, a shard, or a whole corpus), in order.

    ``sets``: shingle hashes (every method; an empty set marks an empty document, never a candidate);
    ``lengths``: characters of each text (the longest text represents its cluster); ``sketch``: MinHash
    signatures ``(n, num_perm)`` or SimHash fingerprints ``(n,)``; ``vectors``: embeddings; ``texts``:
    kept only for a method that reads them when scoring (the cross-encoder).
    """

    sets: ShingleSets
    lengths: np.ndarray
    sketch: np.ndarray | None = None
    vectors: Embeddings | None = None
    texts: Sequence[str] | None = None
    _weights: dict[float, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    _codes: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.sets)

    @classmethod
    def concat(cls, parts: Sequence[Representation]) -> Representation:
        """The representations of consecutive batches as one (what a batched map step computed), in order."""
        if len(parts) == 1:
            return parts[0]
        sketches = [p.sketch for p in parts if p.sketch is not None]
        vectors = [p.vectors for p in parts if p.vectors is not None]
        texts = [p.texts for p in parts if p.texts is not None]
        return cls(sets=ShingleSets.concat([p.sets for p in parts]),
                   lengths=np.concatenate([p.lengths for p in parts]),
                   sketch=np.concatenate(sketches) if sketches else None,
                   vectors=Embeddings.concat(vectors) if vectors else None,
                   texts=[t for batch in texts for t in batch] if texts else None)

    @property
    def empty(self) -> np.ndarray:
        """True for documents without a shingle (empty or whitespace-only texts)."""
        return np.asarray(self.sets.sizes == 0)

    def weights(self, idf_power: float) -> tuple[np.ndarray, np.ndarray]:
        """IDF weights of the shingles (aligned with ``sets.values``) and each document's total, once per power."""
        if idf_power not in self._weights:
            codes = self.codes()
            if codes is None:
                w = idf_weights(self.sets, idf_power)
            else:
                assert self._codes is not None
                w = idf_weights_of_codes(codes, self._codes[1], len(self.sets), idf_power)
            self._weights[idf_power] = (w, doc_weight_totals(self.sets, w))
        return self._weights[idf_power]

    def codes(self) -> np.ndarray | None:
        """A dense code per shingle value (:func:`~neardup.verify.overlap.value_codes`), computed once, for
        sets held in memory (they make exact scores faster); None for memory-mapped sets (the chunked
        engines score tile by tile without them, to the same figures)."""
        if isinstance(self.sets.values, np.memmap) or not isinstance(self.sets.values, np.ndarray):
            return None
        if self._codes is None:
            self._codes = value_codes(self.sets.values)
        return self._codes[0]

    def set_weights(self, idf_power: float, weights: np.ndarray, totals: np.ndarray) -> None:
        """Weights computed elsewhere (the chunked engines compute them by hash partition)."""
        self._weights[idf_power] = (weights, totals)


class Candidates(NamedTuple):
    """Candidate pairs (``left < right``, document indices) and what the candidate step reports."""

    left: np.ndarray
    right: np.ndarray
    info: dict[str, Any]


class Method(abc.ABC):
    """A de-duplication method: its defaults, its representation, its candidate rule and its pair score.

    Subclasses set the class attributes and implement :meth:`candidates` and :meth:`score_pairs_of`;
    ``__init__`` resolves every derived setting once, from a :class:`~neardup.config.DedupConfig`
    whose ``method`` names this class.
    """

    name: ClassVar[str]
    #: The method's own settings, where it has any: a frozen dataclass of this method's file, with a default for
    #: every field; a config holds them as ``config.<stage>`` (the name, ``-`` as ``_``), a config file and
    #: ``summary.json`` under that key, and each field whose ``metadata`` has a ``help`` (and optionally a
    #: ``flag``) is a command-line option (``--<stage>-<field>``; :func:`neardup.methods.catalog`).
    settings: ClassVar[type | None] = None
    #: Defaults a :class:`~neardup.config.DedupConfig` takes for this method when unset.
    default_threshold: ClassVar[float]
    default_cluster: ClassVar[str] = "greedy"
    default_score: ClassVar[str] = "weighted-overlap"
    default_char: ClassVar[bool] = False
    #: Thresholds ``neardup tune`` sweeps.
    threshold_grid: ClassVar[tuple[float, ...]] = SET_SCORE_GRID
    #: Whether the pair score reads the texts themselves (then engines keep them).
    needs_texts: ClassVar[bool] = False
    #: Whether ``neardup match`` supports the method (its candidates can be probed batch by batch).
    matchable: ClassVar[bool] = False

    @classmethod
    def default_ngram(cls, char: bool) -> int | None:
        """Shingle size when none is given (None: :data:`neardup.config.ShingleConfig.DEFAULT_N`)."""
        return None

    @classmethod
    def unit_defaults(cls, char: bool) -> dict[str, Any]:
        """Settings of other stages (``stage__field``) the method takes for a shingle unit when they are unset;
        they follow the unit when it changes (:meth:`~neardup.config.DedupConfig.replace`)."""
        return {}

    @classmethod
    def check(cls, config: DedupConfig) -> None:
        """Method-specific validation of a config (raise :class:`~neardup.config.ConfigError`)."""

    def __init__(self, config: DedupConfig) -> None:
        if config.method != self.name:
            raise ConfigError(f"{type(self).__name__} runs method {self.name!r}, not {config.method!r}")
        self.config = config
        self.threshold = float(config.threshold)  # type: ignore[arg-type]
        self.score_name = str(config.verify.score)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params()})"

    @property
    def own_settings(self) -> Any:
        """This method's own settings in its config (an instance of :attr:`settings`; None without any)."""
        from neardup.methods import stage_of

        return getattr(self.config, stage_of(type(self))) if self.settings is not None else None

    # -- represent --------------------------------------------------------------------------------

    def shingle(self, texts: Sequence[str], max_chars: int) -> ShingleSets:
        """Normalize and shingle texts (their first ``max_chars`` characters) as the config says."""
        cfg = self.config
        if not cfg.shingle.char and only_words_and_spaces(cfg.normalize):
            clipped = [t[:max_chars] for t in texts]
            if pays(sum(map(len, clipped))):  # normalized, split and hashed by compiled loops
                units, lengths = normalized_code_points(clipped, cfg.normalize)
                return word_shingle_sets(units, lengths, int(cfg.shingle.n), cfg.shingle.sample)  # type: ignore[arg-type]
            return shingle_words([normalize_words(t, cfg.normalize) for t in clipped], int(cfg.shingle.n),  # type: ignore[arg-type]
                                 cfg.shingle.sample)
        if cfg.shingle.char:
            units, lengths = normalized_code_points([t[:max_chars] for t in texts], cfg.normalize)
            return char_shingle_sets(units, lengths, cfg.shingle)
        normalized = [normalize(t[:max_chars], cfg.normalize) for t in texts]
        return shingle_many(normalized, cfg.shingle, batch_size=max(len(normalized), 1))

    def sketch(self, sets: ShingleSets) -> np.ndarray | None:
        """The method's sketch of each set (MinHash signatures, SimHash fingerprints), or None."""
        return None

    def embed(self, texts: Sequence[str], max_chars: int, progress: bool = False) -> Embeddings | None:
        """The method's embeddings of the texts, or None (hashing methods)."""
        return None

    def represent(self, texts: Sequence[str], max_chars: int, progress: bool = False) -> Representation:
        """Everything the method computes for a batch of texts: the map step every executor runs."""
        sets = self.shingle(texts, max_chars)
        lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        return Representation(sets=sets, lengths=lengths, sketch=self.sketch(sets),
                              vectors=self.embed(texts, max_chars, progress),
                              texts=list(texts) if self.needs_texts else None)

    def representation_key(self) -> tuple[Any, ...]:
        """What the representation depends on: two configs with equal keys can share one."""
        cfg = self.config
        return (self.name, cfg.normalize, cfg.shingle)

    def plan(self, rep: Representation) -> Method:
        """The method with the settings it derives from the corpus itself fixed in its config (e.g. the LSH
        threshold a candidate budget calls for): every executor plans on the joined representation before
        its candidate step, so all of them run the same settings. This one derives none."""
        return self

    # -- candidates and scores --------------------------------------------------------------------

    @abc.abstractmethod
    def candidates(self, rep: Representation) -> Candidates:
        """Candidate pairs of a whole representation (where every document is at hand)."""

    @abc.abstractmethod
    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        """The score of each candidate pair (float64; a pair is a duplicate at ``>= threshold``)."""

    def weighted(self) -> bool:
        """Whether scores need IDF weights (:meth:`Representation.weights`)."""
        return self.score_name.startswith("weighted-")

    def view(self) -> str:
        """The name of what the method compares, e.g. ``"word 4-grams"`` (a pair's evidence names it)."""
        sh = self.config.shingle
        return f"{'char' if sh.char else 'word'} {sh.n}-grams"

    def views(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              scores: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Each view that matched the verified pairs and every pair's score in it: the method's
        representation and the pair score, unless a method compares several views (hybrid, re-rank)."""
        return [(self.view(), scores)]

    def score_sets(self, sets: ShingleSets, left: np.ndarray, right: np.ndarray,
                   weights: Any = None, totals: np.ndarray | None = None,
                   codes: np.ndarray | None = None) -> np.ndarray:
        """The configured set score of pairs (weights aligned with ``sets.values`` for weighted scores;
        ``codes``, when the sets are in memory, for the faster intersection)."""
        return score_pairs(sets, left, right, self.score_name, weights=weights, totals=totals, codes=codes)

    # -- description ------------------------------------------------------------------------------

    def params(self) -> dict[str, Any]:
        """The settings derived once from the config (bands and rows, collision count, ...), for summaries."""
        return {}

    def describe(self) -> dict[str, Any]:
        """The config with its defaults filled in, plus :meth:`params`: a run's ``params``."""
        return {**config_to_dict(self.config), **self.params()}

    def tuning_settings(self) -> list[dict[str, Any]]:
        """Candidate-rule settings ``neardup tune`` sweeps (as ``DedupConfig.replace`` keywords)."""
        return [{}]

    def fits(self) -> bool:
        """Whether the method has settings to fit on labelled candidate pairs (:meth:`fit`) before tuning
        sweeps its thresholds."""
        return False

    def fit(self, rep: Representation, left: np.ndarray, right: np.ndarray, usable: np.ndarray,
            positive: np.ndarray) -> dict[str, Any] | None:
        """Settings fitted on candidate pairs ``(left, right)`` of which ``usable`` ones are labelled
        (``positive``: a duplicate), as ``DedupConfig.replace`` keywords; None: nothing fitted."""
        return None


class KeyedMethod(Method):
    """Candidates from look-up keys: documents that share a key in one of the method's tables.

    A pair is a candidate when it shares at least ``min_shared`` tables (1: any), and passes
    :meth:`keep_candidates`. The same rows and rules run in memory (:meth:`candidates`), in chunks
    and on Ray, so every executor finds the same pairs.
    """

    #: Pairs must share this many tables (the collisions rule counts them).
    min_shared: int = 1
    #: Where scores come from: the shingle sets (exact scores) or the sketch (its own estimate).
    scores_from: str = "sets"
    #: A key held by more documents than this is no evidence (cross-collection look-ups skip it).
    max_key_docs: int | None = None
    #: One key per document and table (:meth:`table_keys`); else variable rows (:meth:`keys`).
    fixed_width: bool = True
    #: :meth:`table_pairs` reads the representation (to keep fewer pairs than :meth:`bucket_pairs`, or to centre
    #: an oversized bucket on the document decided first): Ray's workers then load the work directory's to
    #: call it; else they call :meth:`bucket_pairs`.
    reads_representation: bool = False
    matchable = True

    @abc.abstractmethod
    def n_tables(self) -> int:
        """How many key tables there are."""

    def key_counts(self, rep: Representation, docs: np.ndarray) -> np.ndarray:
        """How many key rows each of ``docs`` gives over all tables (for planning work)."""
        return np.full(docs.size, self.n_tables(), dtype=np.int64)

    def table_keys(self, rep: Representation, docs: np.ndarray, tables: range) -> np.ndarray:
        """The ``(len(docs), len(tables))`` keys of a method with one key per document and table
        (``fixed_width``); ``docs`` are ascending indices of non-empty documents."""
        raise TypeError(f"method {self.name} gives a variable number of keys per document: use keys()")

    def keys(self, rep: Representation, docs: np.ndarray, tables: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows ``(key, doc, table)`` of ``docs`` (ascending indices of non-empty documents) in ``tables``,
        grouped by table (ascending), each table's rows in the order of ``docs``."""
        table = self.table_keys(rep, docs, tables)
        return (table.T.ravel(), np.tile(docs, len(tables)),
                np.repeat(np.arange(tables.start, tables.stop, dtype=np.int64), docs.size))

    def table_rows(self, rep: Representation, docs: np.ndarray, tables: range
                   ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """``(table, keys, docs)`` of each table in turn (a fixed-width method's keys are one matrix, its
        documents shared by every table: no per-row copies)."""
        if self.fixed_width:
            matrix = self.table_keys(rep, docs, tables)
            for j, t in enumerate(tables):
                yield t, matrix[:, j], docs
            return
        keys, key_docs, table = self.keys(rep, docs, tables)
        bounds = np.flatnonzero(np.diff(table)) + 1
        for k, d, t in zip(np.split(keys, bounds), np.split(key_docs, bounds), np.split(table, bounds)):
            if k.size:
                yield int(t[0]), k, d

    @abc.abstractmethod
    def bucket_pairs(self, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of one table's rows (whole buckets): documents with equal keys, by the method's rule."""

    def keep_candidates(self, a: np.ndarray, b: np.ndarray, sizes_a: np.ndarray | None = None,
                        sizes_b: np.ndarray | None = None) -> np.ndarray | None:
        """Given the sketches (and shingle set sizes, where known) of both sides of candidate pairs, which
        to keep (None: all)."""
        return None

    def keep_rows(self, rows: np.ndarray, ia: np.ndarray, ib: np.ndarray, sizes_a: np.ndarray | None = None,
                  sizes_b: np.ndarray | None = None) -> np.ndarray | None:
        """:meth:`keep_candidates` of pairs given as two indices into sketch ``rows`` (as the chunked engines read
        them): a method may screen them without gathering each pair's rows."""
        return self.keep_candidates(rows[ia], rows[ib], sizes_a, sizes_b)

    def table_pairs(self, rep: Representation, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One table's pairs, given the representation: those of :meth:`bucket_pairs`, or of them only those
        :meth:`keep_candidates` keeps where a method screens them as it makes them (:attr:`reads_representation`; the
        same candidates either way: the screen runs on them again)."""
        return self.bucket_pairs(keys, docs)

    def score_sketches(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Scores of pairs from their sketches (methods whose ``scores_from`` is ``"sketch"``)."""
        raise TypeError(f"method {self.name} scores pairs from their shingle sets, not from sketches")

    def candidate_cap(self, n_docs: int) -> int | None:
        """Candidate pairs (repeats across tables included) beyond which a run stops (None: no cap)."""
        return None

    def check_candidates(self, count: int, n_docs: int) -> None:
        """Stop with an error naming the settings when ``count`` candidate pairs pass the cap."""
        cap = self.candidate_cap(n_docs)
        if cap is not None and count > cap:
            raise ConfigError(
                f"method {self.name}: the candidate step yields over {cap:,} pairs for {n_docs:,} documents "
                f"({count / max(1, n_docs):,.0f} per document so far) with {self.params()}: {self.candidate_remedy()}")

    def candidate_remedy(self) -> str:
        """What to change when the candidate pairs pass the cap (the end of :meth:`check_candidates`' error)."""
        return "choose stricter candidates"

    def candidates(self, rep: Representation) -> Candidates:
        left, right = self.screen(rep, *self.proposals(rep))
        return Candidates(left, right, {})

    def proposals(self, rep: Representation) -> tuple[np.ndarray, np.ndarray]:
        """The distinct pairs the key tables propose (those sharing ``min_shared`` tables), sorted, before
        :meth:`keep_candidates`' screen: what the chunked engines spill (the screen runs as they score)."""
        docs = np.flatnonzero(~rep.empty).astype(np.int64)
        lefts, rights = [], []
        found = 0
        if docs.size >= 2:
            for _, keys, key_docs in self.table_rows(rep, docs, range(self.n_tables())):
                left, right = self.table_pairs(rep, keys, key_docs)
                found += left.size
                self.check_candidates(found, docs.size)
                lefts.append(left)
                rights.append(right)
        return combine_tables(lefts, rights, self.min_shared)

    def screen(self, rep: Representation, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The proposed pairs :meth:`keep_candidates` keeps (all where the method screens none)."""
        if left.size and rep.sketch is not None:
            sizes = rep.sets.sizes
            keep = self.keep_candidates(np.asarray(rep.sketch[left]), np.asarray(rep.sketch[right]),
                                        sizes[left], sizes[right])
            if keep is not None:
                left, right = left[keep], right[keep]
        return left, right

    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        if self.scores_from == "sketch":
            assert rep.sketch is not None
            if left.size == 0:
                return np.empty(0, dtype=np.float64)
            return self.score_sketches(np.asarray(rep.sketch[left]), np.asarray(rep.sketch[right]))
        weights, totals = rep.weights(self.config.verify.idf_power) if self.weighted() else (None, None)
        return self.score_sets(rep.sets, left, right, weights, totals, codes=rep.codes())

    def weighted(self) -> bool:
        return self.scores_from == "sets" and super().weighted()


def combine_tables(lefts: list[np.ndarray], rights: list[np.ndarray], min_shared: int = 1
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs found in at least ``min_shared`` of the tables' pair lists, sorted.

    >>> l, r = combine_tables([np.array([0, 1]), np.array([0])], [np.array([2, 3]), np.array([2])], 2)
    >>> list(zip(l.tolist(), r.tolist()))
    [(0, 2)]
    """
    if not lefts:
        return _EMPTY, _EMPTY
    left, right = np.concatenate(lefts), np.concatenate(rights)
    if min_shared <= 1:
        return unique_pairs(left, right)
    left, right, counts = count_pairs(left, right)
    keep = counts >= min_shared
    return left[keep], right[keep]


class VectorMethod(Method):
    """Candidates from nearest neighbours in embedding space (FAISS flat or USearch HNSW)."""

    threshold_grid = COSINE_GRID
    #: Which encoder embeds the texts, and whether RETSim's chunk vectors are kept.
    encoder: ClassVar[str] = "retsim"
    chunks: ClassVar[bool] = False

    def embed(self, texts: Sequence[str], max_chars: int, progress: bool = False) -> Embeddings | None:
        from neardup.represent.embeddings import embed_texts

        return embed_texts(texts, self.encoder, self.config.embed, max_chars, chunks=self.chunks,  # type: ignore[arg-type]
                           progress=progress)

    def representation_key(self) -> tuple[Any, ...]:
        embed = self.config.embed
        return (*super().representation_key(), self.encoder, self.chunks, embed.model, embed.batch_size)

    def view(self) -> str:
        return f"{self.encoder} chunks" if self.chunks else self.encoder

    def floor(self) -> float:
        """Cosine a neighbour needs to be a candidate."""
        return self.threshold

    def neighbours(self, rep: Representation) -> tuple[np.ndarray, np.ndarray]:
        """Each non-empty document's ``k`` nearest neighbours with cosine >= :meth:`floor`, as pairs."""
        from neardup.candidates.vectors import knn_pairs

        assert rep.vectors is not None
        ok = np.flatnonzero(~rep.empty)
        left, right, _ = knn_pairs(np.asarray(rep.vectors.docs)[ok], k=self.config.embed.k, threshold=self.floor(),
                                   index=self.config.embed.index)
        return ok[left], ok[right]

    def candidates(self, rep: Representation) -> Candidates:
        left, right = self.neighbours(rep)
        return Candidates(left, right, {})

    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        from neardup.verify.cosine import cosine_scores

        assert rep.vectors is not None
        return cosine_scores(rep.vectors.docs, left, right)

    def params(self) -> dict[str, Any]:
        return {"k": self.config.embed.k, "index": self.config.embed.index}


__all__ = ["COMBINED_SCORE_GRID", "COSINE_GRID", "SET_SCORE_GRID", "Candidates", "KeyedMethod", "Method", "Representation", "VectorMethod",
           "combine_tables"]
