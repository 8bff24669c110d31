"""``auto``: the default method, which is no method of its own: it stands for the configuration the
corpus's profile calls for (:mod:`neardup.calibrate`), chosen where the texts are first seen, with the threshold
lowered where the corpus's own candidate scores show that the profile's cuts a mode of copies
(:mod:`neardup.calibrate_scores`).

Owns the name, its place in the registry and its settings (:class:`AutoConfig`); must not be run: entry points
resolve it first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neardup.config import ConfigError, DedupConfig
from neardup.methods import register
from neardup.methods.base import Method


@dataclass(frozen=True)
class AutoConfig:
    """Method auto's settings (``DedupConfig.auto``).

    ``scores``: read the threshold from the candidate scores as well as from the profile (the profile decides where
    they show no second mode; :mod:`neardup.calibrate_scores`, measured in docs/quality.md).

    >>> AutoConfig().scores
    True
    """

    scores: bool = field(default=True, metadata={
        "help": "Method auto: where the profile's threshold cuts a mode of the candidate scores (copies hidden by "
                "padding, inserted words or hash-busting), lower it to the valley below that mode; the profile "
                "decides where the scores show no such mode (default on; summary.json: calibration.scores)."})

    def __post_init__(self) -> None:
        if not isinstance(self.scores, bool):
            raise ConfigError(f"auto scores must be true or false, got {self.scores!r}")


@register
class Auto(Method):
    """Word 4-grams for clean text, character 5-grams for noisy text, character shingles for text written
    without spaces, each at the threshold the noise calls for (:func:`neardup.calibrate.choose`), lowered to the
    valley of the candidate scores where the profile's threshold cuts a mode of copies."""

    name = "auto"
    settings = AutoConfig
    default_threshold = 0.45

    def __init__(self, config: DedupConfig) -> None:
        raise ConfigError("method auto is resolved on the corpus before a run (neardup.calibrate.resolve); "
                          "a run needs the resolved method")
