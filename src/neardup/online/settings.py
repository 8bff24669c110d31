"""The online detector's settings: :class:`OnlineConfig`, its defaults per method and shingling unit, and
our recommended values.

Owns what can be configured online and its checks (errors name the setting); must not detect, calibrate
(see :mod:`neardup.online.calibrate`) or read files (see :mod:`neardup.online.settings_file`).
:mod:`neardup.online.detector` re-exports everything here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neardup.config import (
    ConfigError,
    DedupConfig,
    MinHashConfig,
    NormalizeConfig,
    ShingleConfig,
    config_from_dict,
    config_to_dict,
)
from neardup.online.candidates import minhash_method
from neardup.represent.minhash import ALGORITHM as minhash_algorithm

ONLINE_METHODS: tuple[str, ...] = ("auto", "sketch", "minhash")
#: The batch config's settings a store's keys and stored representations may depend on (with the method's own
#: settings, ``DedupConfig.<stage>``); the threshold and the clustering do not.
_KEYED = ("method", "normalize", "shingle", "minhash", "simhash", "verify")


def batch_method_problem(name: str, batch: DedupConfig | None = None) -> str | None:
    """Why the registered batch method ``name`` cannot run online, or None: it must have look-up keys (a
    :class:`~neardup.methods.base.KeyedMethod`) and a pair score that needs no statistics of a whole corpus (no
    IDF weights) and no corpus-derived plan. The online names (:data:`ONLINE_METHODS`) keep their online meaning.

    >>> batch_method_problem("exact") is None, batch_method_problem("retsim")
    (True, "method 'retsim' has no look-up keys (its candidates come from a whole collection): it cannot run online")
    """
    from neardup.methods import method_class
    from neardup.methods.base import KeyedMethod

    cls = method_class(name) if isinstance(name, str) and name not in ONLINE_METHODS else None
    if cls is None:
        return (f"method must be one of {ONLINE_METHODS} or a registered batch method with look-up keys, "
                f"got {name!r}")
    if not issubclass(cls, KeyedMethod):
        return (f"method {name!r} has no look-up keys (its candidates come from a whole collection): "
                "it cannot run online")
    try:
        method = cls(batch if batch is not None else DedupConfig(method=name))
    except ConfigError as exc:
        return f"method {name!r}: {exc}"
    if method.weighted():
        return (f"method {name!r} scores pairs with IDF weights of a whole corpus (verify score "
                f"{method.score_name!r}), which an online store does not have: give it an unweighted score "
                "(batch setting verify.score, e.g. 'overlap' or 'jaccard')")
    if type(method).plan is not KeyedMethod.plan:
        return f"method {name!r} derives settings from a whole corpus before its candidate step: it cannot run online"
    return None

#: The method the command line and the service use when none is given: the calibrated default, which
#: scored above the seed method on every labelled day and noise model measured (docs/online.md).
#: ``OnlineConfig()`` itself keeps the seed paper's method.
DEFAULT_METHOD: str = "auto"
#: MinHash settings that may be given flat (``OnlineConfig(num_perm=64)``): they set the embedded ``minhash``.
MINHASH_SETTINGS: tuple[str, ...] = ("num_perm", "bands", "rows", "lsh_threshold")
#: Settings whose default depends on the shingling unit or (for ``auto``) on the calibration: ``None`` = unset.
#: ``n`` is batch de-duplication's (:data:`neardup.config.ShingleConfig.DEFAULT_N`: 4 words, 5 characters), so that
#: ``neardup serve`` and ``neardup dedup`` shingle alike (the seed paper used 3 words: ``--ngram 3``).
UNIT_DEFAULTS: dict[str, tuple[Any, Any]] = {"n": (ShingleConfig.DEFAULT_N[False], ShingleConfig.DEFAULT_N[True]),
                                             "lsh_threshold": (0.2, 0.3)}
#: Settings ``auto`` chooses when they are not given (with the method): see :mod:`neardup.online.calibrate`.
CALIBRATED: tuple[str, ...] = ("char", "n", "f", "r_overlap", "top_candidates", "lsh_threshold")
#: The seed paper's values of the calibrated settings that are not unit-dependent.
SEED_DEFAULTS: dict[str, Any] = {"char": False, "f": 0.4, "r_overlap": 0.3, "top_candidates": 1}
#: Our recommended settings per shingling unit (False: words, True: characters): :meth:`OnlineConfig.ours`.
OURS: dict[bool, dict[str, Any]] = {
    False: {"char": False, "n": 4, "f": 0.6, "r_overlap": 0.6, "top_candidates": 5, "lsh_threshold": 0.2},
    True: {"char": True, "n": 5, "f": 0.8, "r_overlap": 0.7, "top_candidates": 5, "lsh_threshold": 0.3},
}
#: LSH threshold of the ``minhash`` step on character shingles when none is given (words: 0.2).
CHAR_LSH_THRESHOLD: float = UNIT_DEFAULTS["lsh_threshold"][1]


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ConfigError(message)


@dataclass(frozen=True, init=False)
class OnlineConfig:
    """Every setting of the online detector (defaults: the seed paper's method and values).

    The ``minhash`` method's signatures and bands are a :class:`~neardup.config.MinHashConfig` (its
    ``seed`` is this config's); its fields may be given flat: ``OnlineConfig(num_perm=64, bands=16, rows=4)``.
    ``char``: character n-grams instead of word n-grams. Settings left unset (``None``) take their
    defaults from the unit (``n``: 4 words or 5 characters, as batch de-duplication's; ``lsh_threshold``: 0.2 or
    :data:`CHAR_LSH_THRESHOLD`) and, for ``method="auto"``, from the calibration (:data:`CALIBRATED`);
    :meth:`replace` keeps them following the unit.

    >>> OnlineConfig().method, OnlineConfig(method="minhash").bands_rows(), OnlineConfig(num_perm=64).minhash.num_perm
    ('sketch', (28, 2), 64)
    >>> c = OnlineConfig(method="minhash", char=True); c.n, c.minhash.lsh_threshold, c.replace(char=False).n
    (5, 0.3, 4)
    >>> OnlineConfig(method="auto").n is None, OnlineConfig(method="auto").resolved
    (True, False)
    >>> OnlineConfig(f=1.5)
    Traceback (most recent call last):
    ...
    neardup.config.ConfigError: f must be in (0, 1], got 1.5
    """

    method: str = "sketch"
    n: int | None = None
    char: bool | None = None
    k_sample: int = 1600
    p: int = 20
    t: int = 2
    f: float | None = None
    f_short: float = 1.0
    short_len: int = 100
    r_overlap: float | None = None
    top_candidates: int | None = None
    update_rule: bool = False
    update_min_numbers: int = 1
    update_min_sentences: int = 1
    update_sentence_tokens: int = 8
    update_sentence_shared: float = 0.2
    minhash: MinHashConfig = field(default_factory=MinHashConfig)
    min_bands: int = 1
    max_bucket: int = 1000
    seed: int = 1
    store_text: bool = True
    evidence_snippets: int = 5
    normalize: NormalizeConfig = field(default_factory=NormalizeConfig)
    #: For a registered batch method (``method="exact"``, ...): its batch settings (a
    #: :class:`~neardup.config.DedupConfig`, or its dict; default: the method's defaults, with this config's
    #: ``normalize``); None for the online methods.
    batch: DedupConfig | None = None

    def __init__(self, **settings: Any) -> None:
        flat = {k: settings.pop(k) for k in MINHASH_SETTINGS if k in settings}
        given = set(settings)
        for f in dataclasses.fields(self):
            if f.name in settings:
                value = settings.pop(f.name)
            else:
                value = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
            object.__setattr__(self, f.name, value)
        _check(not settings, f"unknown online setting(s): {', '.join(sorted(settings))}")
        _check(isinstance(self.minhash, MinHashConfig), "minhash must be a MinHashConfig")
        self._init_batch()
        if "minhash" not in given and "lsh_threshold" not in flat:
            flat["lsh_threshold"] = None  # unset: follows the unit
        object.__setattr__(self, "minhash", dataclasses.replace(self.minhash, seed=self.seed, **flat))
        unset = {name for name in CALIBRATED if self._value(name) is None}
        object.__setattr__(self, "_unset", frozenset(unset))
        if self.method != "auto":  # the seed defaults, by unit
            self._fill({name: SEED_DEFAULTS[name] for name in unset if name in SEED_DEFAULTS})
            self._fill({name: UNIT_DEFAULTS[name][bool(self.char)] for name in unset if name in UNIT_DEFAULTS})
        self.__post_init__()

    def _init_batch(self) -> None:
        """Resolve ``batch`` for a batch method (its settings, with this config's ``normalize``)."""
        batch = self.batch
        if self.method in ONLINE_METHODS or not isinstance(self.method, str):
            _check(batch is None, f"batch settings are for a registered batch method, not method {self.method!r}")
            return
        if isinstance(batch, Mapping):
            batch = config_from_dict({**batch, "method": batch.get("method", self.method)})
        if batch is None:
            problem = batch_method_problem(self.method)
            _check(problem is None, str(problem))
            batch = DedupConfig(method=self.method)
        _check(isinstance(batch, DedupConfig), "batch must be a DedupConfig (or its dict)")
        _check(batch.method == self.method, f"batch settings are method {batch.method!r}'s, not {self.method!r}'s")
        if batch.normalize != self.normalize:
            batch = batch.replace(normalize=self.normalize)
        object.__setattr__(self, "batch", batch)

    @property
    def is_batch_method(self) -> bool:
        """True when a registered batch method runs online (:attr:`batch` holds its settings)."""
        return self.batch is not None

    def _value(self, name: str) -> Any:
        return self.minhash.lsh_threshold if name == "lsh_threshold" else getattr(self, name)

    def _fill(self, values: Mapping[str, Any]) -> None:
        for name, value in values.items():
            if name == "lsh_threshold":
                object.__setattr__(self, "minhash", dataclasses.replace(self.minhash, lsh_threshold=value))
            else:
                object.__setattr__(self, name, value)

    @property
    def resolved(self) -> bool:
        """False for ``method="auto"`` before calibration (:mod:`neardup.online.calibrate`) resolves it."""
        return self.method != "auto"

    @property
    def unset(self) -> frozenset[str]:
        """The settings of :data:`CALIBRATED` that were not given (their defaults follow the unit / the calibration)."""
        return self._unset  # type: ignore[attr-defined, no-any-return]

    def __post_init__(self) -> None:
        if self.is_batch_method:
            problem = batch_method_problem(self.method, self.batch)
            _check(problem is None, str(problem))
        else:
            _check(self.method in ONLINE_METHODS, f"method must be one of {ONLINE_METHODS} or a registered batch "
                                                  f"method with look-up keys, got {self.method!r}")
        if self.method == "auto":  # the calibration fills what is unset; the rest is checked as usual
            probe = {name: self._value(name) for name in CALIBRATED}
            for name in CALIBRATED:
                if probe[name] is None:
                    probe[name] = (UNIT_DEFAULTS[name][bool(probe["char"])] if name in UNIT_DEFAULTS
                                   else SEED_DEFAULTS[name])
            flat_probe = {k: v for k, v in probe.items() if k != "lsh_threshold"}
            OnlineConfig(**{**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, **flat_probe,
                            "method": "minhash",
                            "minhash": dataclasses.replace(self.minhash, lsh_threshold=probe["lsh_threshold"])})
            return
        _check(isinstance(self.char, bool), f"char must be true or false, got {self.char!r}")
        _check(_is_int(self.n) and 1 <= self.n <= 16, f"n must be an integer in 1..16, got {self.n!r}")
        _check(_is_int(self.k_sample) and self.k_sample >= 1, f"k_sample must be an integer >= 1, got {self.k_sample!r}")
        _check(_is_int(self.p) and 1 <= self.p <= 256, f"p must be an integer in 1..256, got {self.p!r}")
        _check(_is_int(self.t) and 0 <= self.t < self.p, f"t must be an integer in 0..p-1 ({self.p - 1}), got {self.t!r}")
        for name in ("f", "f_short", "r_overlap"):
            value = getattr(self, name)
            _check(isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1,
                   f"{name} must be in (0, 1], got {value!r}")
        _check(_is_int(self.short_len) and self.short_len >= 0, f"short_len must be an integer >= 0, got {self.short_len!r}")
        _check(_is_int(self.top_candidates) and 1 <= self.top_candidates <= 100,
               f"top_candidates must be an integer in 1..100, got {self.top_candidates!r}")
        _check(isinstance(self.update_rule, bool), f"update_rule must be true or false, got {self.update_rule!r}")
        for name in ("update_min_numbers", "update_min_sentences", "update_sentence_tokens"):
            _check(_is_int(getattr(self, name)) and getattr(self, name) >= 0,
                   f"{name} must be an integer >= 0, got {getattr(self, name)!r}")
        _check(0 <= self.update_sentence_shared < 1,
               f"update_sentence_shared must be in [0, 1), got {self.update_sentence_shared!r}")
        mh = self.minhash
        _check(mh.num_perm <= 1024, f"num_perm must be an integer in 2..1024, got {mh.num_perm!r}")
        _check(mh.rule == "lsh", f"the online minhash step uses LSH bands: minhash rule must be 'lsh', got {mh.rule!r}")
        _check(mh.lsh_threshold is not None, "lsh_threshold must be in (0, 1], got None")
        _check(_is_int(self.min_bands) and self.min_bands >= 1, f"min_bands must be an integer >= 1, got {self.min_bands!r}")
        _check(_is_int(self.max_bucket) and self.max_bucket >= 1, f"max_bucket must be an integer >= 1, got {self.max_bucket!r}")
        _check(_is_int(self.evidence_snippets) and self.evidence_snippets >= 0,
               f"evidence_snippets must be an integer >= 0, got {self.evidence_snippets!r}")
        _check(isinstance(self.normalize, NormalizeConfig), "normalize must be a NormalizeConfig")

    @classmethod
    def ours(cls, **changes: Any) -> OnlineConfig:
        """Our recommended settings: MinHash-LSH candidates, the top 5 verified exactly.

        n = 4, f = 0.6, r_overlap = 0.6 scored best on average over the Reuters day (both halves)
        and the noisy BBC stream (an in-sample choice over all of them; see the tune runs for
        validation -> test figures). The update rule (3 new numbers or 2 new sentences) is off: it
        gains ~0.07 F1 on the BBC stream, whose updates rewrite every figure, but costs recall on
        Reuters, where a corrected figure still makes a duplicate. Turn it on for update-heavy feeds.

        With ``char=True``: character 5-grams, LSH threshold 0.3, f = 0.8, r_overlap = 0.7 (tuned on
        the 2-MAR-1987 Reuters day, clean and under noise; docs/online.md): 4-grams score higher but
        their bands propose a fifth of all stored stories as candidates.

        >>> OnlineConfig.ours().method, OnlineConfig.ours(update_rule=True).update_min_numbers
        ('minhash', 3)
        >>> OnlineConfig.ours(char=True).n, OnlineConfig.ours(char=True).minhash.lsh_threshold
        (5, 0.3)
        """
        base: dict[str, Any] = {"method": "minhash", "update_rule": False, "update_min_numbers": 3,
                                "update_min_sentences": 2, **OURS[bool(changes.get("char", False))]}
        base.update(changes)
        return cls(**base)

    def replace(self, **changes: Any) -> OnlineConfig:
        """A copy with some settings changed (validated again); settings that were unset and are not
        changed stay unset (so ``n`` and ``lsh_threshold`` follow a change of ``char``).

        >>> OnlineConfig().replace(t=3).t, OnlineConfig(n=4).replace(char=True).n
        (3, 4)
        """
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        flat = {k: changes.pop(k) for k in MINHASH_SETTINGS if k in changes}
        values.update(changes)
        if ("method" in changes or "normalize" in changes) and "batch" not in changes and self.batch is not None:
            values["batch"] = None if changes.get("method", self.method) != self.method else \
                config_to_dict(self.batch)  # the batch settings follow a new method (normalize is re-applied)
        reset = {name for name in self.unset if name not in changes and name not in flat}
        for name in reset - {"lsh_threshold"}:
            values[name] = None
        if "lsh_threshold" in reset and "minhash" not in changes:
            values["minhash"] = dataclasses.replace(values["minhash"], lsh_threshold=None)
        return type(self)(**values, **flat)

    def _need_resolved(self) -> None:
        _check(self.resolved, "method 'auto' is resolved on the first documents before it runs "
                              "(neardup.online.calibrate.resolve, or a Detector does it)")

    def bands_rows(self) -> tuple[int, int]:
        """The LSH (bands, rows) of the minhash method."""
        self._need_resolved()
        return minhash_method(self.minhash).bands, minhash_method(self.minhash).rows

    def key_settings(self) -> dict[str, Any]:
        """The settings the stored keys and verification data depend on (fixed for a store's life).

        ``char`` is listed only when true, so stores built before character shingles keep their settings.
        """
        self._need_resolved()
        if self.batch is not None:  # the method's representation and keys: its batch settings but the cut
            from neardup.methods import method_class, stage_of

            own = stage_of(method_class(self.method))
            batch = {k: v for k, v in config_to_dict(self.batch).items() if k in _KEYED or k == own}
            return {"method": self.method, "batch": batch, "normalize": dataclasses.asdict(self.normalize)}
        out: dict[str, Any] = {"method": self.method, "n": self.n, "k_sample": self.k_sample, "seed": self.seed,
                               "normalize": dataclasses.asdict(self.normalize)}
        if self.char:
            out["char"] = True
        if self.method == "sketch":
            out["p"] = self.p
        else:
            out["num_perm"], (out["bands"], out["rows"]) = self.minhash.num_perm, self.bands_rows()
            out["minhash_algorithm"] = minhash_algorithm
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able settings (``batch`` only for a batch method: its batch config's dict)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "batch"}
        out = {k: dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v for k, v in out.items()}
        if self.batch is not None:
            out["batch"] = config_to_dict(self.batch)
        return out

    @classmethod
    def setting_names(cls) -> set[str]:
        """Every name a setting may be given by (fields, and the flat MinHash settings)."""
        return {f.name for f in dataclasses.fields(cls)} | set(MINHASH_SETTINGS)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OnlineConfig:
        """Inverse of :meth:`to_dict`; flat MinHash settings are accepted too (unknown keys are a ConfigError).

        >>> OnlineConfig.from_dict(OnlineConfig(t=4).to_dict()).t, OnlineConfig.from_dict({"bands": 8, "rows": 4}).bands_rows()
        (4, (8, 4))
        """
        unknown = set(data) - cls.setting_names()
        _check(not unknown, f"unknown online setting(s): {', '.join(sorted(unknown))}")
        values = dict(data)
        for name, kind in (("normalize", NormalizeConfig), ("minhash", MinHashConfig)):
            if isinstance(values.get(name), Mapping):
                try:
                    values[name] = kind(**values[name])
                except TypeError as exc:
                    raise ConfigError(f"{name}: {exc}") from None
        return cls(**values)


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)
