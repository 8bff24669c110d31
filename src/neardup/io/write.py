"""Write results atomically: each file goes to a temporary name in the same folder, then is renamed.

Owns the output files (clusters.parquet, pairs.parquet, summary.json, JSONL, gzipped or not) and the
check every command and API call makes on them before any work (:func:`check_outputs`: never an
input, never an existing file unless overwriting, a folder that can be written); must not compute them.
An interrupted run leaves either the previous complete file or none, never a half-written one.

The files of one run's output folder carry that run's id (:func:`new_run_id`): ``run_id`` in ``summary.json``
and :data:`RUN_ID_KEY` in each Parquet file's schema metadata (:func:`with_run_id`, read back by
:func:`parquet_run_id`), so a folder holding files of different runs (an overwrite killed half-way) is
recognised; ``summary.json`` is removed before a run replaces any of its files (:func:`begin_outputs`) and
written last, so a folder without it is an incomplete one.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.io.arrow import arrow_array


#: The key of a run's id in the schema metadata of the Parquet files it writes (``run_id`` in its summary.json).
RUN_ID_KEY = b"neardup.run_id"
#: The summary's key of the run id.
SUMMARY_RUN_ID = "run_id"
#: The file written last in an output folder (removed first when its run is replaced).
SUMMARY_FILE = "summary.json"


class OutputError(ValueError):
    """An output that must not or cannot be written: it is an input, it exists (and overwriting was not
    asked for), or its folder is a file or cannot be written. Raised before any work starts."""


PathLike = str | os.PathLike[str]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def _check_folder(folder: Path, what: str) -> None:
    """``folder`` is a folder that can be written, or can be made: its nearest existing ancestor is a
    writable folder (tried by creating a file there, which also catches read-only mounts: an unnamed one
    where the system has them, so a run killed at that moment leaves no trace)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"{folder}: {what} is not a folder ({existing} is a file)"
                          if existing != folder else f"{folder}: {what} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(prefix=".neardup-probe-", dir=existing):  # O_TMPFILE on Linux: no name
            pass
    except OSError as exc:
        raise OutputError(f"{folder}: {what} is not writable ({exc.strerror or exc})") from None


def check_outputs(files: list[PathLike] | tuple[PathLike, ...] = (), folders: list[PathLike] | tuple[PathLike, ...] = (),
                  inputs: list[PathLike] | tuple[PathLike, ...] = (), overwrite: bool = False) -> None:
    """Refuse, before any work, outputs that would destroy an input or an earlier result, or could not
    be written: each of ``files`` must not be one of ``inputs`` (URLs are not compared) nor exist unless
    ``overwrite``; each of ``folders`` and each file's folder must be (or be creatable as) a writable
    folder. Raises :class:`OutputError` naming the path.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "in.jsonl").write_text("{}")
    >>> check_outputs(files=[d / "out" / "a.parquet"], inputs=[d / "in.jsonl"])
    >>> check_outputs(files=[d / "in.jsonl"], inputs=[d / "in.jsonl"], overwrite=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    neardup.io.write.OutputError: ... is an input: refusing to write over it
    """
    from neardup.io.sources import input_paths

    local_inputs = input_paths(inputs)  # every file of several, a glob's matches; URLs are not compared
    for folder in folders:
        _check_folder(Path(folder), "the output folder")
    seen: set[Path] = set()
    for file in map(Path, files):
        if any(_same_file(file, src) for src in local_inputs):
            raise OutputError(f"{file} is an input: refusing to write over it")
        if file.resolve() in seen:
            raise OutputError(f"{file} is named twice as an output")
        seen.add(file.resolve())
        _check_folder(file.parent, "the folder of this output")
        if file.is_dir():
            raise OutputError(f"{file}: is a folder, not a file")
        if file.exists() and not overwrite:
            raise OutputError(f"{file} exists: give --overwrite (overwrite=True) to replace it")


def clear_stale(files: list[PathLike] | tuple[PathLike, ...]) -> None:
    """Remove the temporary files a killed writer left beside ``files`` (``.NAME.*.tmp``, see :func:`atomic_path`)."""
    for file in map(Path, files):
        if file.parent.is_dir():
            for tmp in file.parent.glob(f".{file.name}.*.tmp"):
                tmp.unlink(missing_ok=True)


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
        try:
            yield tmp
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            if durable:
                with open(tmp, "rb+") as fh:
                    os.fsync(fh.fileno())
        except OSError as exc:  # a write that failed (a full disk): named by the file it was for
            if exc.errno is None or exc.filename is not None:
                raise
            raise OSError(exc.errno, os.strerror(exc.errno), str(target)) from exc
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


def new_run_id() -> str:
    """A fresh id for one run's output files (32 hex digits)."""
    return uuid.uuid4().hex


def with_run_id(schema: pa.Schema, run_id: str | None) -> pa.Schema:
    """``schema`` with ``run_id`` in its metadata (:data:`RUN_ID_KEY`); unchanged for None.

    >>> with_run_id(pa.schema([("a", pa.int64())]), "abc").metadata
    {b'neardup.run_id': b'abc'}
    """
    if run_id is None:
        return schema
    return schema.with_metadata({**(schema.metadata or {}), RUN_ID_KEY: run_id.encode("ascii")})


def parquet_run_id(path: str | os.PathLike[str]) -> str | None:
    """The run id in the Parquet file ``path`` (None for a file written without one, by an older version);
    only the file's footer is read."""
    metadata = pq.read_schema(path).metadata or {}
    value = metadata.get(RUN_ID_KEY)
    return value.decode("ascii", "replace") if value is not None else None


#: The lock file of an output folder (:func:`output_lock`); not an output, and present only while a run holds it.
LOCK_FILE = ".neardup.lock"
#: The output folders this process holds the lock of: resolved path -> (holding thread, depth).
_HELD: dict[Path, tuple[int, int]] = {}
_HELD_LOCK = threading.Lock()


def _busy(folder: Path) -> OutputError:
    return OutputError(f"{folder}: another neardup run is writing to this output folder; wait for it to end "
                       "or give another one")


def _locked_fd(path: Path, create: bool) -> int | None:
    """A descriptor of the lock file ``path`` holding its exclusive lock (``fcntl.flock``), or None where it
    is absent (and not ``create``); :func:`_busy` where another process holds it. A lock taken on a file its
    holder removed meanwhile (it removes it, locked, when it ends) is taken again on the new one."""
    import fcntl

    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if create else 0), 0o644)
        except FileNotFoundError:
            if create:
                raise
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _busy(path.parent) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
        if not create:
            return None


@contextlib.contextmanager
def output_lock(folder: str | os.PathLike[str], check: Callable[[], None] | None = None) -> Iterator[Path]:
    """Hold an exclusive lock on the output folder ``folder`` for a run (``fcntl.flock`` on :data:`LOCK_FILE`
    in it, taken before the run writes anything and removed, still locked, when the block ends): a second run
    into the same folder is an :class:`OutputError` naming it, at once. ``check``: the run's checks before any
    work; they run after a lock file that is there is taken and before one is made, so a run they refuse
    writes nothing (no folder, no lock file). A folder the lock made is removed again if the run leaves it
    empty. Re-entrant in the thread that holds it (the command line holds it around :func:`neardup.dedup`,
    which takes it too); yields the folder.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "out"
    >>> with output_lock(d):
    ...     with output_lock(d):
    ...         (d / LOCK_FILE).exists()
    True
    >>> d.exists()  # made for the lock, left empty
    False
    """
    out = Path(folder)
    try:
        import fcntl  # noqa: F401 - POSIX only
    except ImportError:  # pragma: no cover - elsewhere runs are not locked
        if check is not None:
            check()
        yield out
        return
    key = out.resolve()
    me = threading.get_ident()
    with _HELD_LOCK:
        holder, depth = _HELD.get(key, (me, 0))
        if holder != me:
            raise _busy(out)
        if depth:
            _HELD[key] = (me, depth + 1)
    if depth:
        try:
            if check is not None:
                check()
            yield out
        finally:
            with _HELD_LOCK:
                _HELD[key] = (me, depth)
        return
    path = out / LOCK_FILE
    fd = _locked_fd(path, create=False) if out.is_dir() else None
    made: list[Path] = []
    try:
        if check is not None:
            check()
        if fd is None:
            missing = out
            while not missing.exists() and missing != missing.parent:
                made.append(missing)
                missing = missing.parent
            out.mkdir(parents=True, exist_ok=True)
            fd = _locked_fd(path, create=True)
    except BaseException:
        if fd is not None:
            os.close(fd)
        _remove_empty(made)
        raise
    with _HELD_LOCK:
        _HELD[key] = (me, 1)
    try:
        yield out
    finally:
        with _HELD_LOCK:
            _HELD.pop(key, None)
        path.unlink(missing_ok=True)  # while it is locked: a run waiting on this file takes the next one
        os.close(fd)
        _remove_empty(made)


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders (innermost first) that are empty."""
    for made in folders:
        try:
            made.rmdir()
        except OSError:
            return


def discard_run_outputs(folder: str | os.PathLike[str], run_id: str, names: Iterable[str]) -> None:
    """Remove the files ``names`` of ``folder`` that run ``run_id`` wrote (a run that failed after writing some:
    no partial outputs are left; another run's files stay)."""
    for name in names:
        path = Path(folder) / name
        try:
            if path.is_file() and parquet_run_id(path) == run_id:
                path.unlink()
        except (OSError, pa.ArrowException):
            pass


def discard_incomplete(folder: str | os.PathLike[str], names: Iterable[str]) -> None:
    """Remove the files ``names`` of ``folder`` where it has no ``summary.json`` (after a failed run, under the
    folder's lock: what a run that stopped after :func:`begin_outputs` wrote, or what is left of the run it
    replaced, is no complete output)."""
    out = Path(folder)
    if out.is_dir() and not (out / SUMMARY_FILE).exists():
        for name in names:
            with contextlib.suppress(OSError):
                (out / name).unlink(missing_ok=True)


def begin_outputs(folder: str | os.PathLike[str]) -> Path:
    """Before a run writes its files into ``folder``: make the folder and remove an earlier run's
    ``summary.json`` (durably), so that a run stopped before it writes its own summary (last) leaves a
    folder that is recognisably incomplete, not old results beside some new files. Returns the folder."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    summary = out / SUMMARY_FILE
    if summary.exists():
        summary.unlink()
        _sync_folder(out)
    return out


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so a removal in it survives power loss (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: ``clusters.parquet``: a row a document, in input order. The decision on it: ``kept``, or removed as a copy of
#: the kept document ``copy_of`` by a verified pair of ``score`` (both null where kept; ``score`` also null where a
#: transitive algorithm put the document with ``copy_of`` through other documents); ``cluster`` is the kept
#: document's id, ``is_representative`` the same as ``kept``; ``length`` the text's characters (the order decisions
#: were made in: longest first), which a re-threshold needs.
CLUSTER_SCHEMA = pa.schema([("id", pa.string()), ("kept", pa.bool_()), ("copy_of", pa.string()), ("score", pa.float64()),
                            ("cluster", pa.string()), ("cluster_size", pa.int64()), ("is_representative", pa.bool_()),
                            ("oversized", pa.bool_()), ("length", pa.int64())])


def write_table(path: str | os.PathLike[str], columns: dict[str, Any], run_id: str | None = None) -> None:
    """Write columns (name -> list, NumPy or Arrow array; :func:`~neardup.io.arrow.arrow_array`) as a Parquet
    file, atomically; ``run_id``: the run it belongs to (:func:`with_run_id`)."""
    table = pa.table({k: arrow_array(v) for k, v in columns.items()})
    table = table.replace_schema_metadata(with_run_id(table.schema, run_id).metadata)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def write_jsonl(path: str | os.PathLike[str], records: Iterator[dict[str, Any]], gz: bool = False) -> int:
    """Write records as JSONL (gzip-compressed with ``gz``) atomically; returns the count. A record whose
    strings are not all valid Unicode (a lone surrogate read from a JSON escape) is written with escapes.

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
            line = json.dumps(rec, ensure_ascii=False, default=_json_default)
            if not line.isascii():
                try:
                    line.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate ("\\ud800" in the input): kept as JSON escapes
                    line = json.dumps(rec, ensure_ascii=True, default=_json_default)
            fh.write(line)
            fh.write("\n")
            count += 1
    return count
