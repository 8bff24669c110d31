"""Write the documents to keep (one per cluster) as JSONL, streaming the original input again.

Owns the keep output; must not decide which documents are duplicates.
The input is re-read rather than held in memory, so every original field is preserved.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from neardup.io.read import iter_records
from neardup.io.write import write_jsonl
from neardup.pipeline import DedupResult


def kept_ids(result: DedupResult, drop_oversized: bool = False) -> set[str]:
    """Ids of the representatives; with ``drop_oversized`` none from an oversized cluster."""
    mask = result.clusters.is_representative.copy()
    if drop_oversized:
        mask &= ~result.clusters.oversized
    return {result.ids[i] for i in np.flatnonzero(mask)}


def write_kept(input_path: str | os.PathLike[str], result: DedupResult, out_path: str | os.PathLike[str],
               id_field: str = "id", drop_oversized: bool = False) -> int:
    """Copy the kept records of ``input_path`` to ``out_path`` (JSONL, atomically); returns the count."""
    keep = kept_ids(result, drop_oversized)

    def records() -> Iterator[dict[str, Any]]:
        for _, rec in iter_records(input_path):
            doc_id = rec.get(id_field)
            if doc_id is not None and str(doc_id) in keep:
                keep.discard(str(doc_id))  # first occurrence only
                yield rec

    return write_jsonl(out_path, records())
