"""The public entry point: ``neardup.dedup(texts_or_path, method=..., ...)``.

Owns turning user input (a path, a list of strings, or records) into a run; must not implement stages.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from neardup.config import DedupConfig
from neardup.io.read import Corpus, read_corpus, read_records
from neardup.pipeline import DedupResult, run


def dedup(
    data: str | os.PathLike[str] | Iterable[str] | Iterable[Mapping[str, Any]] | Corpus,
    method: str | None = None,
    threshold: float | None = None,
    config: DedupConfig | None = None,
    *,
    text_field: str = "text",
    id_field: str = "id",
    on_error: str = "raise",
    progress: bool = False,
    **stage_options: Any,
) -> DedupResult:
    """Find near-duplicates in a file, folder, list of texts or list of records.

    ``stage_options`` are ``stage__field`` settings, e.g. ``shingle__n=5`` or ``cluster__algorithm="leiden"``.

    >>> r = dedup(["The cat sat on the mat.", "the cat sat on the mat", "A dog barked."])
    >>> r.groups(), r.representatives
    ([['0', '1']], ['0', '2'])
    """
    cfg = config or DedupConfig(method=method or "minhash", threshold=threshold)
    if config is not None and (method is not None or threshold is not None):
        cfg = cfg.replace(**{k: v for k, v in (("method", method), ("threshold", threshold)) if v is not None})
    if stage_options:
        cfg = cfg.replace(**stage_options)
    if isinstance(data, Corpus):
        corpus = data
    elif isinstance(data, (str, os.PathLike)):
        corpus = read_corpus(data, text_field=text_field, id_field=id_field, on_error=on_error)
    else:
        items = list(data)
        if items and all(isinstance(x, str) for x in items):
            corpus = Corpus.from_texts(items)  # type: ignore[arg-type]
        else:
            corpus = read_records((dict(x) for x in items), text_field=text_field, id_field=id_field,  # type: ignore[arg-type]
                                  on_error=on_error)
    return run(corpus, cfg, progress=progress)
