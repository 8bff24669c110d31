"""Online settings from a file (``--config`` of ``neardup online eval|tune|load`` and ``neardup serve``).

Owns reading a settings file and mapping the batch configuration (:class:`~neardup.config.DedupConfig`,
the file ``neardup tune --out chosen.json`` writes) onto online settings; must not choose settings or
run anything. Three forms are accepted:

* an object of online settings (``{"method": "minhash", "char": true, ...}``);
* an ``online tune`` output (its ``config``);
* the batch configuration file ``{"neardup_config": 1, "config": {...}}`` or a bare batch config object
  (read by :func:`neardup.io.config_file.load_config`), mapped as :func:`from_dedup_config` documents.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from neardup.config import DedupConfig, MinHashConfig, method_stages, setting_names
from neardup.io.read import InputError
from neardup.online.settings import ONLINE_METHODS, OnlineConfig, batch_method_problem

#: Batch verify scores that are a Jaccard level; their threshold ``t`` becomes the overlap ``2t / (1 + t)``
#: (the overlap coefficient of two sets of equal size with Jaccard ``t``).
_JACCARD_SCORES = ("jaccard", "weighted-jaccard", "none")


def from_dedup_config(config: DedupConfig) -> tuple[dict[str, Any], list[str]]:
    """Online settings for a batch configuration, and notes on what was mapped loosely or ignored.

    Mapping:

    * ``method``: ``auto`` stays ``auto`` (the online calibration chooses the unit, n and threshold, so
      the file's shingle and threshold are not used); ``minhash`` is ``minhash``; a method that runs online
      itself (look-up keys and an unweighted score, e.g. ``exact``:
      :func:`~neardup.online.settings.batch_method_problem`) runs with the whole file as its batch settings
      (``batch``) and its ``normalize``, and nothing below applies; any other method becomes ``minhash``
      (its own settings have no online form; noted);
    * ``shingle.char``, ``shingle.n`` -> ``char``, ``n`` (``shingle.sample`` is ignored, noted: the
      online steps sample the first ``k_sample`` distinct shingles);
    * ``threshold`` -> ``r_overlap``, verified over the whole document (``f = f_short = 1.0``, as the
      batch pipeline compares whole documents); a Jaccard-scale threshold (``verify.score`` jaccard,
      weighted-jaccard or none) is converted to the overlap ``2t / (1 + t)``; an IDF-weighted overlap
      is used as the plain overlap (noted);
    * ``minhash``: ``num_perm``, ``bands``/``rows``, ``lsh_threshold`` and ``seed``; ``rule``
      collisions, a candidate budget (``candidates_per_doc``: the threshold was planned on a corpus the
      online detector does not have; a configured ``lsh_threshold`` is kept as the lower bound it was) and
      the batch bucket limits are ignored, noted;
    * ``normalize`` -> ``normalize``;
    * ``simhash``, ``embed``, ``cluster``, the settings every method file declares (``ngram``, ...:
      :func:`neardup.config.method_stages`) and ``verify.idf_power``: no online meaning, ignored (noted when they
      differ from the defaults).

    >>> s, notes = from_dedup_config(DedupConfig(threshold=0.5).replace(shingle__char=True, shingle__n=5))
    >>> s["method"], s["char"], s["n"], s["r_overlap"], s["f"]
    ('minhash', True, 5, 0.5, 1.0)
    >>> s, notes = from_dedup_config(DedupConfig(method="exact").replace(exact__min_chars=20))
    >>> s["method"], s["batch"].exact.min_chars, notes
    ('exact', 20, [])
    """
    notes: list[str] = []
    settings: dict[str, Any] = {}
    if config.method not in ONLINE_METHODS and batch_method_problem(config.method, config) is None:
        return {"method": config.method, "batch": config, "normalize": config.normalize}, notes
    default = DedupConfig(method=config.method)
    if config.method == "auto":
        settings["method"] = "auto"
        notes.append("method auto: the online calibration chooses the shingling, n and threshold "
                     "(the file's shingle and threshold are not used)")
    else:
        settings["method"] = "minhash"
        if config.method != "minhash":
            notes.append(f"method {config.method!r} has no online form: the online detector uses minhash "
                         "candidates with the file's shingling and threshold")
        settings["char"] = bool(config.shingle.char)
        settings["n"] = config.shingle.n
        score = config.verify.score
        if score in _JACCARD_SCORES:
            settings["r_overlap"] = round(2 * config.threshold / (1 + config.threshold), 4)
            notes.append(f"threshold {config.threshold} is a Jaccard level ({score}): r_overlap "
                         f"{settings['r_overlap']} is the overlap of equal-size sets with that Jaccard")
        else:
            settings["r_overlap"] = config.threshold
            if score == "weighted-overlap":
                notes.append(f"threshold {config.threshold} was chosen for the IDF-weighted overlap; online "
                             "verification uses the plain overlap coefficient of the shingles")
        settings["f"] = settings["f_short"] = 1.0
    if config.shingle.sample != 1:
        notes.append(f"shingle.sample {config.shingle.sample} ignored: online steps sample the first k_sample "
                     "distinct shingles")
    mh, mh0 = config.minhash, MinHashConfig()
    minhash: dict[str, Any] = {"num_perm": mh.num_perm, "seed": mh.seed}
    if mh.bands is not None:
        minhash.update(bands=mh.bands, rows=mh.rows)
    if mh.rule != "lsh":
        notes.append(f"minhash.rule {mh.rule!r} ignored: the online minhash step uses LSH bands")
    budget_default = mh.candidates_per_doc is not None and mh.lsh_threshold == mh0.lsh_threshold
    if mh.candidates_per_doc is not None:  # character shingles always have one (the unit's default)
        notes.append(f"minhash.candidates_per_doc {mh.candidates_per_doc} ignored: the LSH threshold is planned "
                     "on a corpus; online it takes " + ("the unit's default" if budget_default
                                                        else f"the configured lower bound {mh.lsh_threshold}"))
    if not budget_default and mh.lsh_threshold is not None and mh.bands is None and settings["method"] != "auto":
        minhash["lsh_threshold"] = mh.lsh_threshold
    for name in ("max_bucket", "max_candidates_per_doc", "min_collisions", "estimate_floor"):
        if getattr(mh, name) != getattr(mh0, name):
            notes.append(f"minhash.{name} ignored (no online meaning)")
    settings.update({k: v for k, v in minhash.items() if k != "seed"})
    settings["seed"] = minhash["seed"]
    settings["normalize"] = config.normalize
    for stage in ("simhash", "embed", "cluster", *method_stages()):
        if getattr(config, stage) != getattr(default, stage):
            notes.append(f"{stage} settings ignored (no online meaning)")
    if config.verify.idf_power != default.verify.idf_power:
        notes.append("verify.idf_power ignored (online verification is unweighted)")
    return settings, notes


def read_settings(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[str]]:
    """Online settings from a file (see the module docstring) and notes on a batch file's mapping.

    Errors name the file (:class:`~neardup.io.read.InputError`, or the batch reader's ``ConfigError``).
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise InputError(p, None, "no such file") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(p, None, f"not valid JSON ({exc})") from None
    batch_only = {"threshold", "shingle", "verify", "cluster", "embed", "simhash", "calibration", *method_stages()}
    if isinstance(data, dict) and ("neardup_config" in data or (set(data) & batch_only
                                                                 and not set(data) - setting_names())):
        from neardup.io.config_file import load_config

        settings, notes = from_dedup_config(load_config(p))
        return settings, [f"{p}: {note}" for note in notes]
    if isinstance(data, dict) and isinstance(data.get("config"), dict):
        data = data["config"]
    if not isinstance(data, dict):
        raise InputError(p, None, "expected a JSON object of online settings")
    unknown = sorted(set(data) - OnlineConfig.setting_names())
    if unknown:
        raise InputError(p, None, f"unknown online setting(s): {', '.join(unknown)} (a batch configuration file "
                                  "is recognised by its 'neardup_config' field)")
    return data, []


__all__ = ["from_dedup_config", "read_settings"]
