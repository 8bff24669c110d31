"""The online detector's calibrated default (``OnlineConfig(method="auto")``): word or character shingles
and thresholds chosen from the noise profile of the first documents a store receives.

Owns the mapping from a :class:`~neardup.calibrate.NoiseProfile` to online settings, and what a store
records about it; must not measure the profile (that is :func:`neardup.calibrate.profile`, shared with
the batch pipeline) or touch the store (the detector reads and writes its meta).

The profile and the word/character decision are the batch pipeline's (:func:`neardup.calibrate.choose`:
character damage and the word-variant rate; spaceless scripts such as Chinese, Japanese or Thai get
character shingles of their size). The online settings of each unit differ from the batch ones because
online verification is another score (the overlap coefficient of the first fraction ``f`` of each
document, see :mod:`neardup.online.verify`, not the IDF-weighted overlap of whole documents):

* word shingles: :data:`WORD_CHOICE` (``OnlineConfig.ours``: MinHash-LSH, five candidates verified);
* character shingles: :data:`CHAR_CHOICE`, with ``r_overlap`` lowered as damage grows
  (``top * exp(-decay * damage)``, :data:`CHAR_R_OVERLAP`): every corrupted character removes up to
  ``n`` character n-grams from both copies;
* spaceless scripts: character n-grams of the script's size (``neardup.calibrate.SPACELESS``) with
  :data:`SPACELESS_CHOICE`.

The values were chosen with ``neardup online tune`` on one labelled Reuters day under the noise presets and
tested on the other two (``benchmarks/bench_online.py --quality``, docs/online.md).

A store records ``{"profile", "choice"}`` in its meta (``calibration``) the first time it is calibrated;
any later detector with ``method="auto"`` uses that choice. A store built with explicit settings (or
before calibration existed) is used with its own settings (:func:`stored_choice`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from neardup.calibrate import SAMPLE_DOCS, NoiseProfile, decay, profile
from neardup.calibrate import choose as batch_choose
from neardup.config import NormalizeConfig
from neardup.online.settings import CALIBRATED, OURS, OnlineConfig

#: Online settings for word shingles (clean text): ``OnlineConfig.ours()``.
WORD_CHOICE: dict[str, Any] = {"method": "minhash", **OURS[False]}
#: Online settings for character shingles (damaged or tampered text): ``OnlineConfig.ours(char=True)``, with
#: ``r_overlap`` from :data:`CHAR_R_OVERLAP`.
CHAR_CHOICE: dict[str, Any] = {"method": "minhash", **OURS[True]}
#: ``r_overlap`` of character shingles: ``top * exp(-decay * damage)``. Fitted on the 2-MAR-1987 day: the
#: best r_overlap was 0.70 clean (damage 0), 0.55 hash-busting spam (0.01), 0.50 nlpaug OCR (0.063) and
#: 0.45 heavy OCR (0.115).
CHAR_R_OVERLAP: tuple[float, float] = (0.7, 3.8)
#: Online settings for text written without spaces (``n`` is the script's, from ``neardup.calibrate.SPACELESS``).
SPACELESS_CHOICE: dict[str, Any] = {**CHAR_CHOICE, "r_overlap": 0.5}


def choose(p: NoiseProfile, char: bool | None = None) -> dict[str, Any]:
    """The online settings a profile calls for (:data:`CALIBRATED` plus the method). ``char`` fixes the
    unit (the user chose words or characters); the other settings are then the ones for that unit.

    >>> clean = NoiseProfile(docs=500, words=60000, chars=400000, damage=0.0, variant=0.01, spaceless=0.0,
    ...                      script="spaced")
    >>> choose(clean)["char"], choose(clean, char=True)["n"]
    (False, 5)
    >>> choose(NoiseProfile(docs=9, words=0, chars=900, damage=0.0, variant=0.0, spaceless=1.0, script="han"))["n"]
    2
    """
    batch = batch_choose(p, char=char)
    if p.script != "spaced" and batch["shingle__char"]:
        return {**SPACELESS_CHOICE, "n": batch["shingle__n"]}
    if not batch["shingle__char"]:
        return dict(WORD_CHOICE)
    return {**CHAR_CHOICE, "r_overlap": decay(CHAR_R_OVERLAP, p.damage)}


def apply(config: OnlineConfig, choice: Mapping[str, Any]) -> OnlineConfig:
    """``config`` with the method and every calibrated setting it left unset taken from ``choice``.

    >>> apply(OnlineConfig(method="auto", r_overlap=0.7), WORD_CHOICE).r_overlap
    0.7
    """
    if config.resolved:
        return config
    batch = {"batch": choice["batch"]} if choice.get("batch") is not None else {}  # a batch method's settings
    return config.replace(method=choice["method"], **batch,
                          **{k: choice[k] for k in CALIBRATED if k in config.unset and k in choice})


def resolve(config: OnlineConfig, texts: Iterable[str], normalize_config: NormalizeConfig | None = None
            ) -> tuple[OnlineConfig, dict[str, Any] | None]:
    """``(config, None)`` for a resolved config; for ``auto`` the config the texts' profile calls for and
    the record ``{"profile", "choice"}`` (what a store keeps as its calibration).

    >>> cfg, record = resolve(OnlineConfig(method="auto"), ["Stocks rose in Tokyo on Monday."] * 3)
    >>> cfg.method, cfg.char, record["choice"]["n"]
    ('minhash', False, 4)
    """
    if config.resolved:
        return config, None
    p = profile(texts, normalize_config or config.normalize)
    choice = choose(p, char=None if "char" in config.unset else bool(config.char))
    return apply(config, choice), {"profile": p.to_dict(), "choice": choice}


def stored_choice(meta: Mapping[str, str], has_documents: bool) -> dict[str, Any] | None:
    """The choice a store holds: its calibration, or for a store with documents but no calibration (built
    with explicit settings, or before calibration existed) the settings it was built with; else None.

    >>> import json
    >>> stored_choice({"calibration": json.dumps({"choice": WORD_CHOICE})}, False)["n"]
    4
    >>> stored_choice({"config": json.dumps(OnlineConfig().to_dict())}, True)["method"]
    'sketch'
    >>> apply(OnlineConfig(method="auto"), stored_choice({"config": json.dumps(OnlineConfig(method="exact").to_dict())},
    ...                                                  True)).batch.method
    'exact'
    """
    import json

    if "calibration" in meta:
        return dict(json.loads(meta["calibration"])["choice"])
    if has_documents and "config" in meta:
        built = OnlineConfig.from_dict(json.loads(meta["config"]))
        if built.resolved:
            batch = {"batch": built.to_dict()["batch"]} if built.batch is not None else {}
            return {"method": built.method, **batch, **{k: built._value(k) for k in CALIBRATED}}
    return None


__all__ = ["CHAR_CHOICE", "CHAR_R_OVERLAP", "SAMPLE_DOCS", "SPACELESS_CHOICE", "WORD_CHOICE", "apply", "choose",
           "resolve", "stored_choice"]
