"""neardup: find near-duplicate texts in large, noisy corpora.

The public API is small: :func:`dedup` (one collection, on any engine) returns a :class:`DedupResult`,
:func:`match` (queries against a corpus) a :class:`MatchResult`; configuration is typed data
(:class:`DedupConfig` and its stage settings, :class:`ReadConfig`, :class:`EngineConfig`).

>>> import neardup
>>> neardup.dedup(["Stocks rose today in Tokyo.", "stocks rose today in tokyo"]).groups()
[['0', '1']]
"""

from neardup.api import dedup, match
from neardup.config import (
    ClusterConfig,
    ConfigError,
    DedupConfig,
    EmbedConfig,
    EngineConfig,
    MinHashConfig,
    NgramConfig,
    NormalizeConfig,
    ReadConfig,
    ShingleConfig,
    SimHashConfig,
    VerifyConfig,
)
from neardup.io.read import Corpus, InputError, read_corpus
from neardup.results import DedupResult, MatchResult

__version__ = "0.1.0"

__all__ = [
    "dedup", "match", "DedupResult", "MatchResult", "DedupConfig", "ReadConfig", "EngineConfig", "NormalizeConfig",
    "ShingleConfig", "MinHashConfig", "SimHashConfig", "NgramConfig", "VerifyConfig", "ClusterConfig", "EmbedConfig",
    "ConfigError", "Corpus", "InputError", "read_corpus",
]
