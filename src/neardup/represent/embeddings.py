"""Run the encoder a neural method names; encoders are loaded once per process.

Owns the choice of encoder (RETSim or a sentence-transformer bi-encoder), document and chunk vectors
and the empty-text rule; must not search vectors or score pairs. Both encoders read the raw text (RETSim
is built for noise). Empty texts get a zero vector and no chunks: they never match.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from neardup.config import EmbedConfig
from neardup.text.shingle import concat_offsets

EncoderKind = Literal["retsim", "biencoder"]


@dataclass
class Embeddings:
    """Document embeddings (n, dim) and, for partial matching, chunk embeddings with offsets (n + 1)."""

    docs: np.ndarray
    chunks: np.ndarray | None = None
    offsets: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.docs.shape[0])

    @classmethod
    def concat(cls, parts: Sequence[Embeddings]) -> Embeddings:
        """The embeddings of consecutive batches as one (chunk offsets shifted by the chunks before them).

        >>> a = Embeddings(np.ones((1, 2)), np.ones((2, 2)), np.array([0, 2]))
        >>> b = Embeddings(np.zeros((2, 2)), np.zeros((1, 2)), np.array([0, 0, 1]))
        >>> Embeddings.concat([a, b]).offsets.tolist()
        [0, 2, 2, 3]
        """
        if len(parts) == 1:
            return parts[0]
        docs = np.concatenate([p.docs for p in parts])
        if all(p.chunks is None for p in parts):
            return cls(docs)
        if any(p.chunks is None or p.offsets is None for p in parts):
            raise ValueError("cannot join embeddings with and without chunks")
        return cls(docs, np.concatenate([p.chunks for p in parts]),  # type: ignore[misc]
                   concat_offsets([p.offsets for p in parts]))  # type: ignore[misc]


@lru_cache(maxsize=4)
def _retsim(model: str | None, batch_size: int | None):  # type: ignore[no-untyped-def]
    from neardup.represent.retsim import RETSimEncoder

    return RETSimEncoder(model, batch_size=batch_size, allow_empty=True)


@lru_cache(maxsize=4)
def _transformer(model: str | None):  # type: ignore[no-untyped-def]
    from neardup.represent.transformer import TransformerEncoder

    return TransformerEncoder(model)


def encoder_for(kind: EncoderKind, embed: EmbedConfig):  # type: ignore[no-untyped-def]
    """The (cached) encoder of a kind: ``retsim`` or ``biencoder``."""
    if kind == "biencoder":
        return _transformer(embed.model)
    return _retsim(embed.model, embed.batch_size)


#: Embeddings of recent small corpora, by (encoder, model, settings, texts): tuning and benchmarks embed
#: one validation or test set under several methods (bi-encoder, rerank, multiview), which then share them.
_CACHE: OrderedDict[tuple[object, ...], Embeddings] = OrderedDict()
_CACHE_ENTRIES = 16
#: Only corpora up to this many documents are remembered (bounded memory).
CACHE_MAX_DOCS = 20_000


def _cache_key(texts: Sequence[str], kind: str, embed: EmbedConfig, max_chars: int, chunks: bool) -> tuple[object, ...]:
    h = hashlib.blake2b(digest_size=16)
    for t in texts:
        h.update(t[:max_chars].encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    model = embed.model
    if model is not None:
        import os

        model = os.path.realpath(model)
    return (kind, model, embed.batch_size if kind == "retsim" else None, max_chars, chunks, len(texts), h.hexdigest())


def embed_texts(texts: Sequence[str], kind: EncoderKind, embed: EmbedConfig, max_chars: int, chunks: bool = False,
                progress: bool = False) -> Embeddings:
    """Embed every text (its first ``max_chars`` characters); with ``chunks`` also each 512-character
    chunk (RETSim), a document's vector being then the normalised sum of its chunk vectors, as RETSim's own.
    Corpora of up to :data:`CACHE_MAX_DOCS` documents are remembered (the last few), so a set embedded
    again with the same encoder and settings is not re-encoded.
    """
    key = _cache_key(texts, kind, embed, max_chars, chunks) if len(texts) <= CACHE_MAX_DOCS else None
    if key is not None and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    out = _embed(texts, kind, embed, max_chars, chunks, progress)
    if key is not None:
        for a in (out.docs, out.chunks, out.offsets):  # shared from now on: nobody may change them in place
            if a is not None:
                a.flags.writeable = False
        _CACHE[key] = out
        while len(_CACHE) > _CACHE_ENTRIES:
            _CACHE.popitem(last=False)
    return out


def _embed(texts: Sequence[str], kind: EncoderKind, embed: EmbedConfig, max_chars: int, chunks: bool,
           progress: bool) -> Embeddings:
    clipped = [t[:max_chars] for t in texts]
    empty = np.fromiter((not t.strip() for t in clipped), dtype=bool, count=len(clipped))
    enc = encoder_for(kind, embed)
    if chunks:
        vectors, offsets = enc.encode_chunks(clipped, progress=progress, allow_empty=True)
        counts = np.diff(offsets)
        docs = np.zeros((len(clipped), vectors.shape[1]), dtype=np.float32)
        has = counts > 0
        if has.any():
            sums = np.add.reduceat(vectors, offsets[:-1][has], axis=0)
            docs[has] = sums / np.linalg.norm(sums, axis=1, keepdims=True)
        docs[empty] = 0.0
        return Embeddings(docs=docs, chunks=vectors, offsets=np.asarray(offsets, dtype=np.int64))
    docs = enc.encode(clipped, progress=progress, **({"allow_empty": True} if kind != "biencoder" else {}))
    docs = np.array(docs, dtype=np.float32)
    docs[empty] = 0.0
    return Embeddings(docs=docs)
