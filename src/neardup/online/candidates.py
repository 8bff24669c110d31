"""The candidate step of the online detector: which stored documents a new one is compared with.

Owns the look-up keys (the seed method's sketch; MinHash LSH band keys, computed by the batch method's
own :class:`~neardup.methods.minhash.MinHash` object) and the small interface a further step (e.g. a
RETSim vector index) implements; must not verify or decide (see detector).

A step turns a document's features into a :class:`Probe` (its look-up keys, plus anything else it
needs), answers :meth:`CandidateStep.candidates` with ``(seq, votes)`` best first, and hears about
documents added or removed. Key-based steps keep their keys in the store's indexed ``keys`` table;
a vector step would return no keys and keep its own index, updated in ``on_added``/``on_removed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from neardup.candidates.lsh import band_keys
from neardup.config import DedupConfig, MinHashConfig
from neardup.methods.base import Representation
from neardup.methods.minhash import MinHash
from neardup.online.features import DocFeatures, first_distinct
from neardup.text.shingle import ShingleSets

_NO_KEYS = np.empty(0, dtype=np.int64)


@dataclass
class Probe:
    """What a step computed for one document: its keys (int64) and step-specific extras."""

    keys: np.ndarray = field(default_factory=lambda: _NO_KEYS)
    extra: Any = None


class KeyIndex(Protocol):
    """Where key-based steps look keys up: a :class:`~neardup.online.store.Store`, or the detector's
    view of one inside a write batch."""

    def lookup(self, keys: np.ndarray, per_key_limit: int) -> dict[int, int]:
        """seq -> number of ``keys`` it shares (each key counting its ``per_key_limit`` newest documents)."""
        ...


class CandidateStep(Protocol):
    """The interface of a candidate step (see the module docstring)."""

    name: str

    def probe(self, features: DocFeatures) -> Probe:
        """Compute the document's keys (no store access; runs outside the write lock)."""
        ...

    def candidates(self, probe: Probe, store: KeyIndex, limit: int) -> list[tuple[int, int]]:
        """Up to ``limit`` stored documents ``(seq, votes)``, most votes first (ties: earliest first)."""
        ...

    def on_added(self, seq: int, probe: Probe) -> None:
        """A document was stored with this seq (inside the write transaction)."""
        ...

    def on_removed(self, seq: int) -> None:
        """A document was deleted."""
        ...


@lru_cache(maxsize=16)
def minhash_method(config: MinHashConfig) -> MinHash:
    """The batch MinHash method of a :class:`~neardup.config.MinHashConfig` (signatures, bands and keys)."""
    return MinHash(DedupConfig(method="minhash", minhash=config))


def rank_votes(votes: dict[int, int], min_votes: int, limit: int) -> list[tuple[int, int]]:
    """``(seq, votes)`` with at least ``min_votes``, most votes first, ties by arrival; at most ``limit``.

    >>> rank_votes({5: 3, 2: 3, 9: 1, 4: 7}, min_votes=2, limit=2)
    [(4, 7), (2, 3)]
    """
    ranked = sorted(((s, v) for s, v in votes.items() if v >= min_votes), key=lambda sv: (-sv[1], sv[0]))
    return ranked[:limit]


class _KeyStep:
    """Shared logic of the steps whose keys live in the store's key table."""

    name = "keys"
    min_votes = 1
    max_bucket = 1000

    def candidates(self, probe: Probe, store: KeyIndex, limit: int) -> list[tuple[int, int]]:
        if probe.keys.size == 0:
            return []
        return rank_votes(store.lookup(probe.keys, self.max_bucket), self.min_votes, limit)

    def on_added(self, seq: int, probe: Probe) -> None:
        return None

    def on_removed(self, seq: int) -> None:
        return None


class SketchStep(_KeyStep):
    """The seed method: a sketch of ``p`` values over a sample of the first ``k`` distinct shingles.

    Value i is ``min over the sample of (fingerprint XOR r_i)`` for p fixed random 64-bit numbers
    ``r_i`` (seeded); a stored document is a candidate when more than ``t`` positions agree.

    >>> from neardup.online.features import featurize
    >>> step = SketchStep(p=20, k=1600, t=2, seed=1)
    >>> a = step.probe(featurize("one two three four five six seven", 3))
    >>> b = step.probe(featurize("one two three four five six seven", 3))
    >>> a.keys.size, bool((a.keys == b.keys).all())
    (20, True)
    """

    name = "sketch"

    def __init__(self, p: int, k: int, t: int, seed: int, max_bucket: int = 1000) -> None:
        self.p, self.k, self.t = p, k, t
        self.min_votes = t + 1
        self.max_bucket = max_bucket
        self.random = np.random.default_rng(seed).integers(0, 2**64 - 1, size=p, dtype=np.uint64, endpoint=True)

    def sketch(self, features: DocFeatures) -> np.ndarray:
        """The p sketch values (uint64) of a document (empty for an empty document)."""
        sample = first_distinct(features.seq, self.k)
        if sample.size == 0:
            return np.empty(0, dtype=np.uint64)
        return np.bitwise_xor(sample[:, None], self.random[None, :]).min(axis=0)

    def probe(self, features: DocFeatures) -> Probe:
        values = self.sketch(features)
        if values.size == 0:
            return Probe()
        # One key per (position, value): band_keys with one row per band mixes the position in.
        return Probe(keys=band_keys(values[None, :], bands=self.p, rows=1)[0].view(np.int64))


class MinHashStep(_KeyStep):
    """Our candidate step: MinHash of the same sample (a :class:`~neardup.config.MinHashConfig`), keyed
    by LSH bands exactly as the batch method keys a document; a stored document is a candidate when it
    shares at least ``min_bands`` band keys.

    >>> from neardup.online.features import featurize
    >>> step = MinHashStep(MinHashConfig(num_perm=32, bands=8, rows=4), k=1600)
    >>> step.probe(featurize("one two three four five", 3)).keys.size
    8
    """

    name = "minhash"

    def __init__(self, config: MinHashConfig, k: int, min_bands: int = 1, max_bucket: int = 1000) -> None:
        self.config, self.k = config, k
        self.method = minhash_method(config)
        self.min_votes = min_bands
        self.max_bucket = max_bucket

    def probe(self, features: DocFeatures) -> Probe:
        sample = first_distinct(features.seq, self.k)
        if sample.size == 0:
            return Probe()
        sets = ShingleSets(sample, np.array([0, sample.size], dtype=np.int64))
        rep = Representation(sets=sets, lengths=np.zeros(1, dtype=np.int64), sketch=self.method.sketch(sets))
        keys, _, _ = self.method.keys(rep, np.zeros(1, dtype=np.int64), range(self.method.n_tables()))
        return Probe(keys=keys.view(np.int64))


#: A stored document's representation under a batch method (the ``features`` column): this tag, then ``np.save``
#: blocks (header ``[has_sketch, length]``, the set's values, and the sketch row where the method has one).
_METHOD_BLOB = b"NDM1"
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix(h: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


def table_mixed(keys: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """Each key with its table index mixed in, as int64 (one key space for all of a method's tables).

    >>> k = np.array([7, 7], dtype=np.uint64)
    >>> a, b = table_mixed(k, np.array([0, 1])); bool(a != b), a.dtype.name
    (True, 'int64')
    """
    with np.errstate(over="ignore"):
        mixed = np.asarray(keys).astype(np.uint64) + (np.asarray(tables).astype(np.uint64) + np.uint64(1)) * _GOLDEN
    return _splitmix(mixed).view(np.int64)


class MethodStep(_KeyStep):
    """A registered batch method with look-up keys (:class:`~neardup.methods.base.KeyedMethod`, e.g. ``exact``) as
    the candidate step: the method's own ``represent`` and ``keys`` of the one document, each key with its table
    index mixed in (:func:`table_mixed`), kept in the store's key index; a stored document is a candidate when it
    shares at least the method's ``min_shared`` keys. The probe's ``extra`` is the document's
    :class:`~neardup.methods.base.Representation`; :meth:`pack` stores it and :meth:`score` scores a new document
    against stored ones with the method's own pair score (the detector cuts it at :attr:`threshold`).

    >>> from neardup.online.features import featurize
    >>> step = MethodStep(DedupConfig(method="exact"))
    >>> a, b = step.probe(featurize("Stocks rose.", 3)), step.probe(featurize("stocks  ROSE!", 3))
    >>> bool((a.keys == b.keys).all()), step.score(a, [step.pack(b)]).tolist(), step.threshold
    (True, [1.0], 1.0)
    """

    def __init__(self, config: DedupConfig, max_bucket: int = 1000, max_chars: int | None = None) -> None:
        from neardup.config import DEFAULT_MAX_CHARS
        from neardup.methods import get

        self.config = config
        self.method = get(config)
        self.name = str(config.method)
        self.min_votes = max(1, int(self.method.min_shared))
        self.max_bucket = max_bucket
        self.max_chars = max_chars or DEFAULT_MAX_CHARS
        self.threshold = float(self.method.threshold)
        self.label = self.method.view()

    def probe(self, features: DocFeatures) -> Probe:
        rep = self.method.represent([features.raw], self.max_chars)
        if bool(rep.empty[0]):
            return Probe(extra=rep)
        keys, _, tables = self.method.keys(rep, np.zeros(1, dtype=np.int64), range(self.method.n_tables()))
        return Probe(keys=table_mixed(keys, tables), extra=rep)

    def pack(self, probe: Probe) -> bytes:
        """The document's representation as the store keeps it (its ``features``)."""
        import io

        rep: Representation = probe.extra
        out = io.BytesIO()
        out.write(_METHOD_BLOB)
        sketch = None if rep.sketch is None else np.asarray(rep.sketch[:1])
        np.save(out, np.array([sketch is not None, int(rep.lengths[0])], dtype=np.int64), allow_pickle=False)
        np.save(out, np.asarray(rep.sets.values[rep.sets.offsets[0]:rep.sets.offsets[1]]), allow_pickle=False)
        if sketch is not None:
            np.save(out, sketch, allow_pickle=False)
        return out.getvalue()

    @staticmethod
    def unpack(blob: bytes) -> Representation:
        """Inverse of :meth:`pack`."""
        import io

        if bytes(blob[:4]) != _METHOD_BLOB:
            raise ValueError("not a stored method representation")
        src = io.BytesIO(bytes(blob[4:]))
        has_sketch, length = np.load(src, allow_pickle=False).tolist()
        values = np.load(src, allow_pickle=False)
        sketch = np.load(src, allow_pickle=False) if has_sketch else None
        return Representation(sets=ShingleSets(values, np.array([0, values.size], dtype=np.int64)),
                              lengths=np.array([length], dtype=np.int64), sketch=sketch)

    def score(self, probe: Probe, stored: list[bytes]) -> np.ndarray:
        """The method's score of the new document against each stored one (NaN where its screen drops the pair)."""
        if not stored:
            return np.empty(0, dtype=np.float64)
        parts = [probe.extra] + [self.unpack(b) for b in stored]
        rep = Representation.concat(parts) if len(parts) > 1 else parts[0]
        if rep.sketch is None and any(p.sketch is not None for p in parts):
            raise ValueError("stored representations differ from the method's")
        right = np.arange(1, len(parts), dtype=np.int64)
        left = np.zeros(right.size, dtype=np.int64)
        scores = np.asarray(self.method.score(rep, left, right), dtype=np.float64)
        if rep.sketch is not None:
            keep = self.method.keep_candidates(np.asarray(rep.sketch[left]), np.asarray(rep.sketch[right]),
                                               rep.sets.sizes[left], rep.sets.sizes[right])
            if keep is not None:
                scores = np.where(keep, scores, np.nan)
        return scores
