"""N-gram overlap: every pair that shares a shingle (an inverted index over shingles), scored exactly.

Owns the inverted-index method's settings (:class:`NgramConfig`), its keys and its boilerplate rule (shingles
held by more than ``max_df`` documents propose no pair; the score still counts them); must not schedule work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neardup.candidates.buckets import pairs_from_keys
from neardup.config import ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import KeyedMethod, Representation


@dataclass(frozen=True)
class NgramConfig:
    """All-pairs n-gram overlap through an inverted index over shingles (``DedupConfig.ngram``).

    Shingles held by more than ``max_df`` documents (boilerplate, templates) are skipped when
    generating candidates; the verified score still counts them.

    >>> NgramConfig(max_df=1)
    Traceback (most recent call last):
    ...
    neardup.config.ConfigError: max_df must be >= 2, got 1
    """

    max_df: int = field(default=200, metadata={
        "help": "Method ngram: a shingle held by more than this many documents proposes no pair (boilerplate; "
                "the score still counts it; default 200)."})

    def __post_init__(self) -> None:
        if not (isinstance(self.max_df, int) and not isinstance(self.max_df, bool) and self.max_df >= 2):
            raise ConfigError(f"max_df must be >= 2, got {self.max_df!r}")


@register
class Ngram(KeyedMethod):
    """All pairs sharing a word 4-gram (by default) held by at most ``max_df`` documents, scored by the
    IDF-weighted overlap coefficient.

    >>> Ngram(DedupConfig(method="ngram")).n_tables()
    1
    """

    name = "ngram"
    settings = NgramConfig
    default_threshold = 0.45
    fixed_width = False

    def __init__(self, config: DedupConfig) -> None:
        super().__init__(config)
        self.max_df = self.max_key_docs = config.ngram.max_df

    def n_tables(self) -> int:
        return 1

    def key_counts(self, rep: Representation, docs: np.ndarray) -> np.ndarray:
        return np.asarray(rep.sets.sizes[docs], dtype=np.int64)

    def keys(self, rep: Representation, docs: np.ndarray, tables: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        offsets = np.asarray(rep.sets.offsets)
        sizes = offsets[docs + 1] - offsets[docs]
        position = rep.sets.positions(docs, sizes)
        return (np.asarray(rep.sets.values[position]), np.repeat(docs, sizes), np.zeros(position.size, dtype=np.int64))

    def bucket_pairs(self, keys: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return pairs_from_keys(keys, docs, max_group=self.max_df)
