"""Read one Parquet file that neardup wrote (a run's outputs, a work directory's shards) into an Arrow table.

Owns reading such a file through its own reader (:class:`pyarrow.parquet.ParquetFile`). ``pyarrow.parquet.read_table``
goes through PyArrow's dataset layer, built for folders of files and filters: importing it costs a process
about 0.35 s the first time (it imports pandas, where installed), and each call about 1 ms more than the
file's own reader (80 shards of a 200k run, read four times). Must not read inputs (:mod:`neardup.io.read`
does, with its checks and errors), write files or decide a column's meaning.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq


def read_parquet(path: str | os.PathLike[str], columns: Sequence[str] | None = None) -> pa.Table:
    """The table in the Parquet file ``path``, only ``columns`` where given (in that order), as
    ``pyarrow.parquet.read_table(path, columns=columns)`` reads it.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
    >>> pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), p)
    >>> read_parquet(p, ["b"]).to_pydict()
    {'b': ['x', 'y']}
    """
    with pq.ParquetFile(path) as pf:
        return pf.read(columns=list(columns) if columns is not None else None)


__all__ = ["read_parquet"]


def present_columns(path: str | os.PathLike[str], columns: Sequence[str]) -> list[str]:
    """Those of ``columns`` that the Parquet file ``path`` has (a file written by an older version may lack
    the newer ones); only its footer is read."""
    with pq.ParquetFile(path) as pf:
        have = set(pf.schema_arrow.names)
    return [c for c in columns if c in have]
