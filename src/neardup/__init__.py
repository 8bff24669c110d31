"""neardup: find near-duplicate texts in large, noisy corpora.

>>> import neardup
>>> neardup.dedup(["Stocks rose today in Tokyo.", "stocks rose today in tokyo"]).groups()
[['0', '1']]
"""

from neardup.api import dedup
from neardup.config import (
    ClusterConfig,
    ConfigError,
    DedupConfig,
    MinHashConfig,
    NgramConfig,
    NormalizeConfig,
    ShingleConfig,
    SimHashConfig,
    VerifyConfig,
)
from neardup.io.read import Corpus, InputError, read_corpus
from neardup.pipeline import DedupResult

__version__ = "0.1.0"

__all__ = [
    "dedup", "DedupResult", "DedupConfig", "NormalizeConfig", "ShingleConfig", "MinHashConfig", "SimHashConfig",
    "NgramConfig", "VerifyConfig", "ClusterConfig", "ConfigError", "Corpus", "InputError", "read_corpus",
]
