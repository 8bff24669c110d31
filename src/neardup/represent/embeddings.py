"""Choose and run the encoder a neural method needs; encoders are loaded once per process.

Owns the mapping method -> encoder and the empty-text rule; must not search vectors or score pairs.
RETSim (``retsim``, ``retsim-partial``, ``hybrid``) encodes the raw text (it is built for noise);
the bi-encoder (``biencoder``) too. Empty texts get a zero vector and no chunks: they never match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from neardup.config import DedupConfig, EmbedConfig


@dataclass
class Embeddings:
    """Document embeddings (n, dim) and, for partial matching, chunk embeddings with offsets (n + 1)."""

    docs: np.ndarray
    chunks: np.ndarray | None = None
    offsets: np.ndarray | None = None


@lru_cache(maxsize=4)
def _retsim(model: str | None, batch_size: int | None):  # type: ignore[no-untyped-def]
    from neardup.represent.retsim import RETSimEncoder

    return RETSimEncoder(model, batch_size=batch_size, allow_empty=True)


@lru_cache(maxsize=4)
def _transformer(model: str | None):  # type: ignore[no-untyped-def]
    from neardup.represent.transformer import TransformerEncoder

    return TransformerEncoder(model)


def encoder_for(method: str, embed: EmbedConfig):  # type: ignore[no-untyped-def]
    """The (cached) encoder of a neural method."""
    if method == "biencoder":
        return _transformer(embed.model)
    return _retsim(embed.model, embed.batch_size)


def embed_texts(texts: Sequence[str], config: DedupConfig, max_chars: int, progress: bool = False) -> Embeddings:
    """Embed every text as the method needs (documents; plus chunks for ``retsim-partial`` and ``hybrid``).

    With chunks, a document's vector is the normalised sum of its chunk vectors, as RETSim's own.
    """
    clipped = [t[:max_chars] for t in texts]
    empty = np.fromiter((not t.strip() for t in clipped), dtype=bool, count=len(clipped))
    enc = encoder_for(config.method, config.embed)
    if config.method in ("retsim-partial", "hybrid"):  # hybrid's learned rule uses the partial score
        chunks, offsets = enc.encode_chunks(clipped, progress=progress, allow_empty=True)
        counts = np.diff(offsets)
        docs = np.zeros((len(clipped), chunks.shape[1]), dtype=np.float32)
        has = counts > 0
        if has.any():
            sums = np.add.reduceat(chunks, offsets[:-1][has], axis=0)
            docs[has] = sums / np.linalg.norm(sums, axis=1, keepdims=True)
        docs[empty] = 0.0
        return Embeddings(docs=docs, chunks=chunks, offsets=offsets)
    docs = enc.encode(clipped, progress=progress, **({"allow_empty": True} if config.method != "biencoder" else {}))
    docs = np.array(docs, dtype=np.float32)
    docs[empty] = 0.0
    return Embeddings(docs=docs)
