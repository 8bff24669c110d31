"""The method registry: each file of this package defines one method and registers it under its name.

Owns the name -> method class mapping and finding the method files; must not implement a method
(see :mod:`neardup.methods.base` for what a method offers every executor). Adding a method is adding a
file here (copy ``ngram.py``) and its name to :data:`neardup.config.MethodName`; see docs/architecture.md.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

_REGISTRY: dict[str, Any] = {}
_loaded = False


def register(cls: Any) -> Any:
    """Class decorator: make the method class available under its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    """Import every module of this package once (each registers the method it defines)."""
    global _loaded
    if not _loaded:
        _loaded = True
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")


def method_class(name: str) -> Any:
    """The class registered under ``name``, or None."""
    _load()
    return _REGISTRY.get(name)


def names() -> tuple[str, ...]:
    """Every registered method name, sorted.

    >>> "minhash" in names()
    True
    """
    _load()
    return tuple(sorted(_REGISTRY))


def get(config: Any) -> Any:
    """The method object of a :class:`~neardup.config.DedupConfig` (its settings resolved once)."""
    cls = method_class(config.method)
    if cls is None:
        raise KeyError(config.method)
    return cls(config)


__all__ = ["get", "method_class", "names", "register"]
