"""The in-memory engine: the whole corpus in this process, the pipeline run once over it.

Owns running :mod:`neardup.pipeline` on a corpus and writing its result; must not implement a stage or
turn user input into a corpus (:mod:`neardup.api` does).
"""

from __future__ import annotations

import os

from neardup.config import DedupConfig, EngineConfig, ReadConfig
from neardup.io.read import Corpus
from neardup.pipeline import run
from neardup.results import DedupResult


def run_memory(corpus: Corpus, config: DedupConfig, engine: EngineConfig | None = None,
               read: ReadConfig | None = None, output: str | os.PathLike[str] | None = None,
               source: str | None = None) -> DedupResult:
    """De-duplicate ``corpus`` in memory; with ``output``, also write the three files there.

    ``source`` is the input file the corpus was read from (for :meth:`DedupResult.write_kept`).
    """
    result = run(corpus, config, progress=(engine or EngineConfig()).progress)
    result.source = source
    result.id_field = (read or ReadConfig()).id_field
    result.on_error = (read or ReadConfig()).on_error
    if output is not None:
        result.write(output)
    return result


__all__ = ["run_memory"]
