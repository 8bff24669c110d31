"""``auto``: the default method, which is no method of its own: it stands for the configuration the
corpus's profile calls for (:mod:`neardup.calibrate`), chosen where the texts are first seen.

Owns the name and its place in the registry; must not be run: entry points resolve it first.
"""

from __future__ import annotations

from neardup.config import ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import Method


@register
class Auto(Method):
    """Word 4-grams for clean text, character 5-grams for noisy text, character shingles for text written
    without spaces, each at the threshold the noise calls for (:func:`neardup.calibrate.choose`)."""

    name = "auto"
    default_threshold = 0.45

    def __init__(self, config: DedupConfig) -> None:
        raise ConfigError("method auto is resolved on the corpus before a run (neardup.calibrate.resolve); "
                          "a run needs the resolved method")
