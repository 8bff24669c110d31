"""RETSim: character-level neural embeddings built for noisy text (the packaged ONNX model), candidates
by nearest neighbours, scored by cosine.

Owns the method's defaults; must not load models itself (:mod:`neardup.represent.embeddings`).
"""

from __future__ import annotations

from neardup.methods import register
from neardup.methods.base import VectorMethod


@register
class RETSim(VectorMethod):
    """Each document's ``k`` nearest RETSim neighbours with cosine >= the threshold (0.9)."""

    name = "retsim"
    default_threshold = 0.9
    matchable = True
