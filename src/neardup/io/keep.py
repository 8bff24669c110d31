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


def kept_ids(clusters_parquet: str | os.PathLike[str], drop_oversized: bool = False) -> set[str]:
    """Ids of the representatives in a ``clusters.parquet``; with ``drop_oversized`` none from an oversized cluster."""
    from neardup.io.arrow import numpy_of
    from neardup.io.parquet import read_parquet

    table = read_parquet(clusters_parquet, ["id", "is_representative", "oversized"])
    ids = table["id"].to_pylist()
    rep = numpy_of(table["is_representative"])
    if drop_oversized:
        rep = rep & ~numpy_of(table["oversized"])
    return {ids[i] for i in np.flatnonzero(rep)}


def write_kept(input_path: str | os.PathLike[str], keep: set[str], out_path: str | os.PathLike[str],
               id_field: str = "id", on_error: str = "raise") -> int:
    """Copy the records of ``input_path`` whose id is in ``keep`` to ``out_path`` (JSONL, atomically).

    Returns the count. Only the first record of an id is copied; ``on_error="skip"`` passes over the
    corrupt lines the run skipped.
    """
    remaining = set(keep)

    def records() -> Iterator[dict[str, Any]]:
        for _, rec in iter_records(input_path, skipped=[] if on_error == "skip" else None):
            doc_id = rec.get(id_field)
            if doc_id is not None and str(doc_id) in remaining:
                remaining.discard(str(doc_id))
                yield rec

    return write_jsonl(out_path, records())
