"""The in-memory engine: the whole corpus in this process, the pipeline run once over it.

Owns running :mod:`neardup.pipeline` on a corpus and writing its result; must not implement a stage or
turn user input into a corpus (:mod:`neardup.api` does).
"""

from __future__ import annotations

import os

from neardup import methods
from neardup.config import DedupConfig, EngineConfig, ReadConfig
from neardup.io.read import Corpus
from neardup.pipeline import prepare, run_prepared
from neardup.results import DedupResult


def run_memory(corpus: Corpus, config: DedupConfig, engine: EngineConfig | None = None,
               read: ReadConfig | None = None, output: str | os.PathLike[str] | None = None,
               source: str | None = None) -> DedupResult:
    """De-duplicate ``corpus`` in memory; with ``output``, also write the output files there.

    ``source`` is the input file the corpus was read from (for :meth:`DedupResult.write_kept`). Unless
    evidence is off, the result keeps the texts and the pairs' views: its evidence is computed when first
    asked for (or written).
    """
    eng, rd = engine or EngineConfig(), read or ReadConfig()
    prep = prepare(corpus, config, progress=eng.progress)
    result = run_prepared(prep, config, read=rd, all_pairs=eng.all_pairs, floor=eng.score_floor,
                          ceiling=eng.score_ceiling)
    result.source = source
    result.id_field, result.text_field = rd.id_field, rd.text_field
    result.on_error = rd.on_error
    if eng.evidence:
        result.keep_texts(corpus.texts, methods.get(config).views(prep.rep, result.left, result.right, result.scores))
    if output is not None:
        result.write(output)
    return result


__all__ = ["run_memory"]
