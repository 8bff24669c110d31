"""Configuration files: the one JSON format ``neardup tune`` writes and ``dedup``, ``eval``, ``match``,
``online`` and ``serve`` read with ``--config``.

Owns the file format and its errors; must not choose settings (the tuner does) or know the commands.
A file is ``{"neardup_config": 1, "config": <config_to_dict of a DedupConfig>, "tuned": {...}}``; the
``tuned`` part (what was searched, the validation figures) is for people and is not read back. A bare
``config_to_dict`` object is accepted too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from neardup.config import ConfigError, DedupConfig, config_from_dict, config_to_dict

#: The format's version (the ``neardup_config`` key).
FORMAT_VERSION = 1


def save_config(path: str | os.PathLike[str], config: DedupConfig, tuned: dict[str, Any] | None = None) -> None:
    """Write ``config`` (and what produced it) to ``path``, atomically."""
    from neardup.io.write import write_json  # (PyArrow comes with it: reading a configuration does not need it)

    data: dict[str, Any] = {"neardup_config": FORMAT_VERSION, "config": config_to_dict(config)}
    if tuned is not None:
        data["tuned"] = tuned
    write_json(path, data)


def load_config(path: str | os.PathLike[str]) -> DedupConfig:
    """The :class:`DedupConfig` in a configuration file; a ConfigError naming the file otherwise.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
    >>> save_config(p, DedupConfig(threshold=0.4).replace(shingle__char=True, shingle__n=5))
    >>> c = load_config(p); (c.threshold, c.shingle.char, c.shingle.n)
    (0.4, True, 5)
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such configuration file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{p}: not a JSON configuration file ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: a configuration file holds a JSON object, got {type(data).__name__}")
    if "neardup_config" in data:
        if data["neardup_config"] != FORMAT_VERSION:
            raise ConfigError(f"{p}: configuration format {data['neardup_config']!r} is not known "
                              f"(this neardup reads {FORMAT_VERSION})")
        data = data.get("config")
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: field 'config' must be a JSON object")
    try:
        return config_from_dict(data)
    except (ConfigError, TypeError, ValueError) as exc:
        raise ConfigError(f"{p}: {exc}") from None


__all__ = ["FORMAT_VERSION", "load_config", "save_config"]
