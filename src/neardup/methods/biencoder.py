"""Bi-encoder: sentence-transformer embeddings (the packaged all-MiniLM-L6-v2, or a model you trained
with ``neardup train biencoder``), candidates by nearest neighbours, scored by cosine.

Owns the method's defaults; must not load models itself (:mod:`neardup.represent.embeddings`).
"""

from __future__ import annotations

from neardup.methods import register
from neardup.methods.base import VectorMethod


@register
class BiEncoder(VectorMethod):
    """Each document's ``k`` nearest bi-encoder neighbours with cosine >= the threshold (0.9)."""

    name = "biencoder"
    default_threshold = 0.9
    encoder = "biencoder"
    matchable = True
