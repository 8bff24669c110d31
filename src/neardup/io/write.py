"""Write results atomically: each file goes to a temporary name in the same folder, then is renamed.

Owns the output files (clusters.parquet, pairs.parquet, summary.json, JSONL, gzipped or not); must not compute them.
An interrupted run leaves either the previous complete file or none, never a half-written one.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` only if the block succeeds.

    ``durable`` also fsyncs the file before the rename (survives power loss, not only a killed
    process); checkpoints that can be recomputed skip it.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(d / "x.txt") as tmp:
    ...     _ = tmp.write_text("hi")
    >>> (d / "x.txt").read_text()
    'hi'
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextlib.contextmanager
def atomic_text(path: str | os.PathLike[str], gz: bool = False) -> Iterator[IO[str]]:
    """Open a text file for writing that appears at ``path`` only when complete (gzip-compressed with ``gz``)."""
    with atomic_path(path) as tmp, (gzip.open(tmp, "wt", encoding="utf-8") if gz
                                    else open(tmp, "w", encoding="utf-8")) as fh:
        yield fh


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    """Write pretty JSON atomically."""
    with atomic_text(path) as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False, default=_json_default)
        fh.write("\n")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def write_table(path: str | os.PathLike[str], columns: dict[str, Any]) -> None:
    """Write columns (name -> list or array) as a Parquet file, atomically."""
    table = pa.table({k: pa.array(v) for k, v in columns.items()})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def write_jsonl(path: str | os.PathLike[str], records: Iterator[dict[str, Any]], gz: bool = False) -> int:
    """Write records as JSONL (gzip-compressed with ``gz``) atomically; returns the count.

    >>> import gzip, pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl.gz"
    >>> write_jsonl(p, iter([{"id": "a"}, {"id": "b"}]), gz=True)
    2
    >>> gzip.open(p, "rt", encoding="utf-8").read()
    '{"id": "a"}\\n{"id": "b"}\\n'
    """
    count = 0
    with atomic_text(path, gz) as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, default=_json_default))
            fh.write("\n")
            count += 1
    return count
