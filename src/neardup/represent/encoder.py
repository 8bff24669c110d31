"""The dense text-encoder interface (``Encoder``) and the helpers every encoder shares.

Owns the encoder contract and the missing-extra error; must not load models or import optional deps at import time.

An encoder maps texts to a float32 matrix of L2-normalised rows, one row per input text,
in input order, so cosine similarity is a plain dot product. Any object with ``name``,
``dim`` and ``encode`` satisfies :class:`Encoder`; subclassing it is optional.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["Encoder", "require_extra", "l2_normalize", "check_embeddings"]


@runtime_checkable
class Encoder(Protocol):
    """Texts in, ``(len(texts), dim)`` float32 L2-normalised rows out, in input order.

    ``name`` identifies the model (and its version) so stored vectors can be checked against
    the encoder that produced them; ``dim`` is the row length.
    """

    name: str
    dim: int

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int | None = None,
        progress: bool = False,
    ) -> np.ndarray:
        """Embed ``texts``; ``batch_size=None`` means the encoder's own default."""
        ...


def require_extra(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise ``ImportError`` naming the neardup extra that provides it.

    >>> require_extra("json", "neural").__name__
    'json'
    >>> require_extra("no_such_module_xyz", "neural")
    Traceback (most recent call last):
    ...
    ImportError: install neardup[neural]: pip install 'neardup[neural]'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"install neardup[{extra}]: pip install 'neardup[{extra}]'") from exc


def l2_normalize(x: np.ndarray, *, eps: float = 1e-12) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm, as float32 (all-zero rows stay zero).

    >>> l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.maximum(norms, eps)).astype(np.float32, copy=False)


def check_embeddings(emb: np.ndarray, n: int, dim: int, *, atol: float = 1e-3) -> np.ndarray:
    """Validate a plug-in encoder's output (shape, dtype, finite, unit rows) and return it.

    >>> check_embeddings(np.eye(2, dtype=np.float32), 2, 2).shape
    (2, 2)
    """
    if not isinstance(emb, np.ndarray) or emb.shape != (n, dim):
        shape = getattr(emb, "shape", type(emb).__name__)
        raise ValueError(f"encoder returned {shape}, expected ({n}, {dim})")
    if emb.dtype != np.float32:
        raise ValueError(f"encoder returned dtype {emb.dtype}, expected float32")
    if n and not np.isfinite(emb).all():
        raise ValueError("encoder returned non-finite values")
    if n and not np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=atol):
        raise ValueError("encoder rows are not L2-normalised")
    return emb
