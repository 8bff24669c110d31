"""neardup: find near-duplicate texts in large, noisy corpora.

The public API is small: :func:`dedup` (one collection, on any engine) returns a :class:`DedupResult`,
:func:`match` (queries against a corpus) a :class:`MatchResult`; configuration is typed data
(:class:`DedupConfig` and its stage settings, :class:`ReadConfig`, :class:`EngineConfig`).

>>> import neardup
>>> neardup.dedup(["Stocks rose today in Tokyo.", "stocks rose today in tokyo"]).groups()
[[0, 1]]

The names are imported when first used (``import neardup`` and the command line's ``--help`` load
neither NumPy nor PyArrow).
"""

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from neardup.api import dedup, match
    from neardup.config import (
        ClusterConfig,
        ConfigError,
        DedupConfig,
        EmbedConfig,
        EngineConfig,
        MinHashConfig,
        NormalizeConfig,
        ReadConfig,
        ShingleConfig,
        SimHashConfig,
        VerifyConfig,
    )
    from neardup.io.read import Corpus, InputError, read_corpus
    from neardup.methods.ngram import NgramConfig
    from neardup.results import DedupResult, MatchResult
del TYPE_CHECKING

__version__ = "0.1.0"

__all__ = [
    "dedup", "match", "DedupResult", "MatchResult", "DedupConfig", "ReadConfig", "EngineConfig", "NormalizeConfig",
    "ShingleConfig", "MinHashConfig", "SimHashConfig", "NgramConfig", "VerifyConfig", "ClusterConfig", "EmbedConfig",
    "ConfigError", "Corpus", "InputError", "read_corpus",
]

#: Where each public name lives (imported on first use: :func:`__getattr__`).
_WHERE = {
    "dedup": "neardup.api",
    "match": "neardup.api",
    "DedupResult": "neardup.results",
    "MatchResult": "neardup.results",
    **{name: "neardup.config" for name in ("DedupConfig", "ReadConfig", "EngineConfig", "NormalizeConfig",
                                           "ShingleConfig", "MinHashConfig", "SimHashConfig",
                                           "VerifyConfig", "ClusterConfig", "EmbedConfig", "ConfigError")},
    "NgramConfig": "neardup.methods.ngram",  # a method's settings live in its file
    "Corpus": "neardup.io.read",
    "InputError": "neardup.io.read",
    "read_corpus": "neardup.io.read",
}
#: The submodules ``import neardup`` used to load: still attributes of the package (imported on first use).
_SUBMODULES = ("api", "calibrate", "cluster", "config", "io", "methods", "results", "text")


def __getattr__(name: str) -> object:
    """A public name, imported on first use (then kept in the module); a submodule ``import neardup`` used to load."""
    import importlib

    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    if name in _SUBMODULES:  # (also asked by ``from neardup import methods``: import only that module)
        return importlib.import_module(f"neardup.{name}")
    raise AttributeError(f"module 'neardup' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What ``dir(neardup)`` lists, as when every name was imported up front."""
    shown = [n for n in globals() if n.startswith("__") or not n.startswith("_")]
    return sorted({*shown, *__all__, *_SUBMODULES} - {"__getattr__", "__dir__"})
