"""Exact duplicates: documents whose normalized text (the normalize stage, as configured) is identical; the
first pass users ask for, with no threshold to calibrate.

Owns the exact method: its settings (:class:`ExactConfig`), its representation (the normalized text itself,
losslessly, as a set of position-tagged 4-byte chunks of its UTF-8), its key (a 64-bit hash of that text) and
its bucket rule; must not schedule work. A keyed method on the narrowest contract (one table, one key a
document, whole buckets or stars, the configured set score): copy this file to add a method.

Each value of a document's set is ``position << 32 | 4 bytes`` of its normalized UTF-8 (the last chunk padded
with 0xFF, a byte UTF-8 never holds), so the set is the text: two sets are equal exactly when the texts are,
and their Jaccard (the method's pair score) is 1.0 exactly then. Candidates share the key, and each one is
verified on the texts themselves, never on the hash: a collision scores below 1.0 and is not a duplicate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.arrays import offsets, ranges
from neardup.candidates.buckets import pairs_from_keys
from neardup.config import ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import KeyedMethod, Representation
from neardup.text.normalize import normalized_code_points
from neardup.text.shingle import ShingleSets

#: A bucket of more documents than this (copies of one text) is a star on the document the representative policy
#: decides first, where the clustering reads only that (``greedy`` by length or input order, ``components``):
#: k - 1 pairs, not k (k - 1) / 2, and the same decisions and clusters. Elsewhere buckets stay whole.
STAR_ABOVE = 16
#: Thresholds ``neardup tune`` sweeps: every one gives the same decisions (a candidate is the same text,
#: scoring 1.0, unless its hash collided), so tune keeps the highest, 1.0.
GRID: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(11))


@dataclass(frozen=True)
class ExactConfig:
    """Method exact's settings (``DedupConfig.exact``; the option ``--exact-min-chars``).

    >>> ExactConfig(min_chars=-1)
    Traceback (most recent call last):
    ...
    neardup.config.ConfigError: min_chars must be an integer >= 0, got -1
    """

    min_chars: int = field(default=0, metadata={
        "help": "Method exact: a document whose normalized text has fewer characters than this is compared with "
                "none (short replies such as 'thanks' repeat across unrelated records; default 0: every one)."})

    def __post_init__(self) -> None:
        if not (isinstance(self.min_chars, int) and not isinstance(self.min_chars, bool) and self.min_chars >= 0):
            raise ConfigError(f"min_chars must be an integer >= 0, got {self.min_chars!r}")


def text_chunks(units: np.ndarray, lengths: np.ndarray, keep: np.ndarray) -> ShingleSets:
    """Each kept text (``units``: its code points, text after text, ``lengths`` of each) as the sorted values
    ``position << 32 | 4 bytes`` of its UTF-8, the last chunk padded with 0xFF; a text not kept has none.

    >>> units = np.frombuffer("abcdeé".encode("utf-32-le"), dtype=np.uint32)
    >>> [[hex(v) for v in s] for s in text_chunks(units, np.array([5, 1]), np.array([True, True]))]
    [['0x61626364', '0x165ffffff'], ['0xc3a9ffff']]
    """
    width = 1 + (units >= 0x80).astype(np.int64) + (units >= 0x800) + (units >= 0x10000)  # UTF-8 bytes each
    ends = np.concatenate([[0], np.cumsum(width)])
    bounds = offsets(lengths)
    n_bytes = np.where(keep, ends[bounds[1:]] - ends[bounds[:-1]], 0)
    chunks = -(-n_bytes // 4)
    raw = np.frombuffer(units.tobytes().decode("utf-32-le", "surrogatepass").encode("utf-8", "surrogatepass"),
                        dtype=np.uint8)
    padded = np.full(int(chunks.sum()) * 4, 0xFF, dtype=np.uint8)
    padded[ranges(offsets(chunks)[:-1] * 4, n_bytes)] = raw[ranges(ends[bounds[:-1]], n_bytes)]
    position = np.arange(padded.size // 4, dtype=np.uint64) - np.repeat(offsets(chunks)[:-1], chunks).astype(np.uint64)
    values = (position << np.uint64(32)) | padded.view(">u4").astype(np.uint64)
    return ShingleSets(values, offsets(chunks))


def _mix(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser of each value."""
    with np.errstate(over="ignore"):
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


@register
class Exact(KeyedMethod):
    """Documents with the same normalized text, verified on the texts (score 1.0), at threshold 1.0.

    >>> m = Exact(DedupConfig(method="exact"))
    >>> rep = m.represent(["Stocks rose.", "stocks  ROSE!", "Stocks fell."], 10_000)
    >>> left, right, _ = m.candidates(rep)
    >>> list(zip(left.tolist(), right.tolist())), m.score(rep, left, right).tolist(), m.view()
    ([(0, 1)], [1.0], 'identical normalized text')
    """

    name = "exact"
    settings = ExactConfig
    default_threshold = 1.0
    default_score = "jaccard"
    threshold_grid = GRID

    @classmethod
    def check(cls, config: DedupConfig) -> None:
        if config.verify.score != "jaccard":
            raise ConfigError(f"method {cls.name} verifies that two normalized texts are the same (their Jaccard is "
                              f"1.0 exactly then): verify score must be 'jaccard', got {config.verify.score!r}")

    def __init__(self, config: DedupConfig) -> None:
        super().__init__(config)
        self.min_chars = self.own_settings.min_chars

    def shingle(self, texts: Sequence[str], max_chars: int) -> ShingleSets:
        units, lengths = normalized_code_points([t[:max_chars] for t in texts], self.config.normalize)
        return text_chunks(units, lengths, lengths >= max(1, self.min_chars))

    def sketch(self, sets: ShingleSets) -> np.ndarray:
        """The key of each document: a 64-bit hash of its set (its normalized text)."""
        total = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(_mix(np.asarray(sets.values)),
                                                                         dtype=np.uint64)])
        ends = np.asarray(sets.offsets)
        return _mix(total[ends[1:]] - total[ends[:-1]] + np.asarray(sets.sizes, dtype=np.uint64))

    def representation_key(self) -> tuple[Any, ...]:
        return (self.name, self.config.normalize, self.min_chars)

    def view(self) -> str:
        return "identical normalized text"

    def n_tables(self) -> int:
        return 1

    def table_keys(self, rep: Representation, docs: np.ndarray, tables: range) -> np.ndarray:
        assert rep.sketch is not None
        return np.asarray(rep.sketch[docs], dtype=np.uint64).reshape(-1, 1)

    def _star_above(self) -> int | None:
        """:data:`STAR_ABOVE` where a star's centre is the document the clustering reads first, else None."""
        cluster = self.config.cluster
        if cluster.algorithm == "components":
            return STAR_ABOVE
        if cluster.algorithm == "greedy" and cluster.representative_field is None \
                and cluster.representative in ("longest", "first"):
            return STAR_ABOVE
        return None

    @property
    def reads_representation(self) -> bool:  # type: ignore[override]
        """Under ``greedy`` with the ``longest`` policy a star is centred on the longest text (its length read)."""
        return self._star_above() is not None and self.config.cluster.algorithm == "greedy" \
            and self.config.cluster.representative == "longest"

    def bucket_pairs(self, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every pair of a bucket; a bucket past :data:`STAR_ABOVE`, where it may be, a star on its first document."""
        return pairs_from_keys(keys, docs, star_above=self._star_above(), unique=False)

    def table_pairs(self, rep: Representation, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`bucket_pairs`, the stars centred on their longest text (ties: the first) where that is the one
        kept."""
        if not self.reads_representation:
            return self.bucket_pairs(keys, docs)
        return pairs_from_keys(keys, docs, star_above=self._star_above(), unique=False,
                               centre_rank=-np.asarray(rep.lengths)[docs])

    def score(self, rep: Representation, left: np.ndarray, right: np.ndarray,
              info: dict[str, Any] | None = None) -> np.ndarray:
        """The Jaccard of the pairs' sets: 1.0 exactly when their normalized texts are the same."""
        return self.score_sets(rep.sets, left, right)
