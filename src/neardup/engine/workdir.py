"""The on-disk state of a chunked run: shards, stage markers and the run's fingerprint.

Owns file names, atomic array writes and "is this step done?"; must not compute anything.

A work directory is neardup's own: a folder given to it must be new or empty (or one an earlier run made),
never the output folder, inside it (the default ``OUTDIR/.neardup-work`` aside) or around it, and never hold
an input (:func:`check_work_dir`, before any work). neardup marks a folder it takes (:data:`MARKER`) and
clears only a marked one: its own files, then the marker, then the folder if it made it.

Layout of a work directory::

    .neardup-workdir              written first when neardup takes the folder, removed last: it is neardup's
    manifest.json                 what run this is (input, size, mtime, config); resume refuses others
    shards/NNNNNN.ids.parquet     id, text length, input line (representative key) of each document of shard NNNNNN
    shards/NNNNNN.values.npy      the shard's shingle hashes (CSR values) ...
    shards/NNNNNN.offsets.npy     ... and offsets
    shards/NNNNNN.sketch.npy      MinHash signatures or SimHash fingerprints (methods with a sketch)
    shards/NNNNNN.vectors.npy     document embeddings; chunks.npy, chunk_offsets.npy: chunk embeddings
    shards/NNNNNN.texts.parquet   the texts (only for a method whose score reads them)
    shards/NNNNNN.done            written last: the shard is complete
    values.npy offsets.npy sketch.npy vectors.npy chunks.npy chunk_offsets.npy lengths.npy
    representative_keys.npy       the shards joined (memory-mapped later)
    NAME.tmp, join.json           a joined array while shards are appended to it, and how far they are
    idf-table.npy                 the IDF weight of each distinct value (a hash table's slots), or else ...
    weights.npy                   ... the weight of each value (also kept for a method scoring in one process)
    totals.npy                    ... and each document's summed IDF weight
    pairs/PPP-TAG.npy             candidate pair codes spilled by partition PPP
    discarded/                    files no later step reads, being deleted in the background (:meth:`WorkDir.discard`)
    verified.npz                  verified pairs (left, right, score)
    <stage>.done                  stage markers
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import math
import mmap
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from neardup.io.read import is_url, source_info
from neardup.io.sources import Sources
from neardup.io.write import atomic_path, write_json
from neardup.methods.base import Representation
from neardup.represent.embeddings import Embeddings
from neardup.text.shingle import ShingleSets

#: The work directory's name inside the output folder, when no other is given.
DEFAULT_NAME = ".neardup-work"
#: The file that makes a folder a work directory of neardup's (JSON: whether neardup made the folder).
MARKER = ".neardup-workdir"


def work_root(outdir: str | os.PathLike[str], work_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a run writing to ``outdir`` keeps its work: ``work_dir``, or ``OUTDIR/.neardup-work``."""
    return Path(work_dir) if work_dir else Path(outdir) / DEFAULT_NAME


class WorkDirError(ValueError):
    """The work directory belongs to another run, is damaged, or is not neardup's to use (it holds files
    neardup did not write, is or surrounds the output folder, or holds an input)."""


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both resolved)."""
    return path == folder or folder in path.parents


def check_work_dir(work: str | os.PathLike[str], outdir: str | os.PathLike[str],
                   inputs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Refuse, before any work, a work directory whose clearing would destroy what neardup did not write: one
    that is the output folder, inside it (but for the default ``OUTDIR/.neardup-work``) or around it; one that
    is, holds or lies inside an input (URLs are not compared); an existing folder with content that no neardup
    run made (:func:`owned`). A :class:`WorkDirError` naming the folder.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "in.jsonl").write_text("{}")
    >>> check_work_dir(d / "work", d / "out", [d / "in.jsonl"])
    >>> check_work_dir(d, d / "out", [d / "in.jsonl"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    neardup.engine.workdir.WorkDirError: ...: --work-dir contains the output folder ...
    """
    given, out = Path(work), Path(outdir).resolve()
    root = given.resolve()
    if root != out / DEFAULT_NAME:
        if root == out:
            raise WorkDirError(f"{given}: --work-dir is the output folder; give it a folder of its own "
                               "(neardup deletes what it leaves there)")
        if _within(out, root):
            raise WorkDirError(f"{given}: --work-dir contains the output folder {outdir}; give it a folder of its own")
        if _within(root, out):
            raise WorkDirError(f"{given}: --work-dir is inside the output folder {outdir}; give it a folder of its "
                               "own (or leave it out: the default is OUTDIR/.neardup-work)")
    from neardup.io.sources import input_paths

    for source in input_paths(inputs):  # every file of several, and each folder named
        src = source.resolve()
        if _within(src, root):
            raise WorkDirError(f"{given}: --work-dir holds the input {source}; give it a folder of its own")
        if src.is_dir() and _within(root, src):
            raise WorkDirError(f"{given}: --work-dir is inside the input folder {source}; give it a folder of its own")
    if root.is_dir() and not owned(root) and any(root.iterdir()):
        raise WorkDirError(f"{given}: --work-dir holds files neardup did not write; give it a new or empty folder "
                           "(neardup deletes what it writes there)")


def owned(root: str | os.PathLike[str]) -> bool:
    """Whether the folder ``root`` is a work directory neardup made: it holds :data:`MARKER`, or it is an
    older version's (named :data:`DEFAULT_NAME`, or holding such a run's ``manifest.json``)."""
    r = Path(root)
    if (r / MARKER).is_file() or r.name == DEFAULT_NAME:
        return True
    try:
        manifest = json.loads((r / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and {"input", "config", "batch_docs"} <= manifest.keys()


class WorkDir:
    """A run's work directory (see the module docstring for the layout)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.shards = self.root / "shards"
        self.pairs = self.root / "pairs"
        self.discarded = self.root / "discarded"
        self.marker = self.root / MARKER
        self._deleting: list[threading.Thread] = []

    def claim(self) -> None:
        """Make the directory neardup's: create it (and :data:`MARKER` in it, first) where it is absent, mark an
        empty folder or an older version's work directory; refuse a folder holding anything else."""
        if self.marker.is_file():
            return
        made = not self.root.exists() or self.root.name == DEFAULT_NAME
        if not made:
            if not self.root.is_dir():
                raise WorkDirError(f"{self.root}: the work directory is a file, not a folder")
            if any(self.root.iterdir()) and not owned(self.root):
                raise WorkDirError(f"{self.root}: the work directory holds files neardup did not write; give "
                                   "--work-dir a new or empty folder")
            made = owned(self.root)  # an older version's: it made the folder
        self.root.mkdir(parents=True, exist_ok=True)
        write_json(self.marker, {"made_folder": made})

    def made_folder(self) -> bool:
        """Whether neardup made the directory's folder itself (and so removes it in :meth:`clean`)."""
        if self.root.name == DEFAULT_NAME:
            return True
        try:
            return bool(json.loads(self.marker.read_text()).get("made_folder"))
        except (OSError, ValueError, AttributeError):
            return False

    def prepare(self, manifest: dict[str, Any], resume: bool) -> bool:
        """Take the directory (:meth:`claim`); returns True when an earlier run's work is re-used.

        Without ``resume`` any earlier work is discarded. With it, the earlier manifest must match.
        """
        self.claim()
        path = self.root / "manifest.json"
        if resume and path.exists():
            try:
                old = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise WorkDirError(f"{path}: unreadable manifest ({exc}); delete {self.root} to start over") from None
            if old != manifest:
                raise WorkDirError(f"{self.root} holds a run with other input or settings; "
                                   "run without --resume to start over")
            return True
        self._clear()
        self.shards.mkdir(parents=True)
        self.pairs.mkdir(parents=True)
        write_json(path, manifest)
        return False

    def done(self, name: str) -> bool:
        """Whether the step ``name`` completed."""
        return (self.root / f"{name}.done").exists()

    def mark(self, name: str) -> None:
        """Record that the step ``name`` completed (after its outputs are in place)."""
        with atomic_path(self.root / f"{name}.done", durable=False) as tmp:
            tmp.write_text("ok\n")

    def shard(self, index: int, part: str) -> Path:
        """Path of one part of shard ``index``."""
        return self.shards / f"{index:06d}.{part}"

    def shard_done(self, index: int) -> bool:
        """Whether shard ``index`` is complete."""
        return self.shard(index, "done").exists()

    def discard(self, paths: Iterable[Path]) -> None:
        """Delete files or folders that no later step reads, in a background thread: each is first renamed
        into ``discarded/`` (at once, so its name is free again), then deleted while the run goes on.
        Deleting the 80 shards' arrays at 200k stories took 0.4 s of the join; the kernel does most of it, the
        thread holds no lock a stage needs. :meth:`settle` waits for the deletions."""
        moved: list[Path] = []
        batch: Path | None = None
        for path in list(paths):  # listed first: a folder's listing is not renamed from while it is read
            if path.exists():
                if batch is None:  # a folder of its own (a resumed run may find an earlier run's left here)
                    self.discarded.mkdir(exist_ok=True)
                    batch = Path(tempfile.mkdtemp(dir=self.discarded))
                target = batch / f"{len(moved)}-{path.name}"
                os.replace(path, target)
                moved.append(target)
        if moved:
            thread = threading.Thread(target=_delete, args=(moved,), name="neardup-discard", daemon=True)
            thread.start()
            self._deleting.append(thread)

    def settle(self) -> None:
        """Wait until what :meth:`discard` was given is deleted (and whatever an interrupted run left there)."""
        while self._deleting:
            self._deleting.pop().join()
        shutil.rmtree(self.discarded, ignore_errors=True)

    def clean(self) -> None:
        """Remove the work directory's content: the manifest first, so a removal cut short is never resumed
        from, the marker last; then the folder, where neardup made it. A folder that is not neardup's
        (:func:`owned`) is left as it is."""
        self.settle()
        if not self.root.is_dir() or not owned(self.root):
            return
        made = self.made_folder()
        (self.root / "manifest.json").unlink(missing_ok=True)
        self._clear()
        self.marker.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):  # something was put there meanwhile: it stays
                self.root.rmdir()

    def _clear(self) -> None:
        """Delete everything in the (claimed) directory but :data:`MARKER`."""
        _delete([entry for entry in self.root.iterdir() if entry.name != MARKER])


def _delete(paths: list[Path]) -> None:
    """Delete files and folders, ignoring what is already gone (a daemon thread of :meth:`WorkDir.discard`)."""
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def save_shard(wd: WorkDir, index: int, rep: Representation, ids: list[str], texts: list[str], lines: list[int],
               max_chars: int, keys: np.ndarray | None = None) -> int:
    """Write a shard's representation, ids, lengths, input lines (and representative keys, when the
    cluster policy has them); ``done`` last (with the counts of empty and truncated texts). Returns its size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from neardup.io.arrow import arrow_array

    save_array(wd.shard(index, "values.npy"), rep.sets.values)
    save_array(wd.shard(index, "offsets.npy"), rep.sets.offsets)
    if rep.sketch is not None:
        save_array(wd.shard(index, "sketch.npy"), rep.sketch)
    if rep.vectors is not None:
        save_array(wd.shard(index, "vectors.npy"), rep.vectors.docs)
        if rep.vectors.chunks is not None and rep.vectors.offsets is not None:
            save_array(wd.shard(index, "chunks.npy"), rep.vectors.chunks)
            save_array(wd.shard(index, "chunk_offsets.npy"), rep.vectors.offsets)
    if rep.texts is not None:
        with atomic_path(wd.shard(index, "texts.parquet"), durable=False) as tmp:
            pq.write_table(pa.table({"text": arrow_array(list(rep.texts), pa.string())}), tmp)
    table = pa.table({"id": arrow_array(ids, pa.string()), "length": arrow_array(rep.lengths),
                      "line": arrow_array(lines, pa.int64())})
    if keys is not None:
        table = table.append_column("representative_key", arrow_array(keys, pa.float64()))
    with atomic_path(wd.shard(index, "ids.parquet"), durable=False) as tmp:
        pq.write_table(table, tmp)
    n_empty = sum(1 for t in texts if not t.strip())
    n_truncated = sum(1 for t in texts if len(t) > max_chars)
    with atomic_path(wd.shard(index, "done"), durable=False) as tmp:
        tmp.write_text(f"{len(ids)} {n_empty} {n_truncated}\n")
    return len(ids)


def shard_files(wd: WorkDir, index: int) -> list[str]:
    """The parts shard ``index`` has on disk (``done`` last)."""
    prefix = f"{index:06d}."
    parts = sorted(p.name[len(prefix):] for p in wd.shards.glob(prefix + "*"))
    return [p for p in parts if p != "done"] + (["done"] if "done" in parts else [])


def joined(root: str | os.PathLike[str]) -> Representation:
    """The representation of a work directory after the join stage (large arrays memory-mapped)."""
    r = Path(root)
    sets = ShingleSets(load_array(r / "values.npy"), load_array(r / "offsets.npy", mmap=False))
    vectors = None
    if (r / "vectors.npy").exists():
        chunks = (load_array(r / "chunks.npy"), load_array(r / "chunk_offsets.npy", mmap=False)) \
            if (r / "chunks.npy").exists() else (None, None)
        vectors = Embeddings(docs=load_array(r / "vectors.npy"), chunks=chunks[0], offsets=chunks[1])
    texts = None
    if (r / "texts.parquet").exists():
        from neardup.io.parquet import read_parquet

        texts = read_parquet(r / "texts.parquet", ["text"])["text"].to_pylist()
    return Representation(sets=sets, lengths=load_array(r / "lengths.npy", mmap=False),
                          sketch=load_array(r / "sketch.npy") if (r / "sketch.npy").exists() else None,
                          vectors=vectors, texts=texts)


def save_array(path: str | os.PathLike[str], array: np.ndarray) -> None:
    """``np.save`` atomically."""
    with atomic_path(path, durable=False) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array)


def save_npz(path: str | os.PathLike[str], **arrays: np.ndarray) -> None:
    """``np.savez`` atomically."""
    with atomic_path(path, durable=False) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


# The header NumPy writes (``np.lib.format``: keys sorted, one space after each colon and comma), parsed
# without ``ast.literal_eval`` (~100 us a file, paid by every block read of the weights and verify stages).
_HEADER_RE = re.compile(rb"\{'descr': '([<>|=]?[a-zA-Z]\d*)', 'fortran_order': (True|False), "
                        rb"'shape': \(((?:\d+, )*\d*|\d+,)\), \} *\n")


def npy_header(fh: BinaryIO) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Shape, Fortran order and dtype of the ``.npy`` file open at its start in ``fh``, which is left at its
    first data byte (files are read and written in place with plain I/O, not mapped).

    The headers NumPy writes are parsed by one regular expression; any other (a hand-written or future
    layout) goes to NumPy's own reader.

    >>> import io
    >>> buf = io.BytesIO(); np.save(buf, np.zeros((3, 2), dtype=np.uint32)); _ = buf.seek(0)
    >>> npy_header(buf), buf.tell()
    (((3, 2), False, dtype('uint32')), 128)
    """
    start = fh.tell()
    lead = fh.read(10)
    if lead[:6] == b"\x93NUMPY" and lead[6] == 1 and len(lead) == 10:
        header = fh.read(int.from_bytes(lead[8:10], "little"))
        match = _HEADER_RE.fullmatch(header)
        if match is not None:
            descr, fortran, dims = match.groups()
            return tuple(int(d) for d in dims.split(b",") if d.strip()), fortran == b"True", _dtype(descr)
    fh.seek(start)
    version = np.lib.format.read_magic(fh)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    return read(fh)


def npy_header_bytes(dtype: np.dtype, shape: tuple[int, ...], size: int) -> bytes:
    """The ``.npy`` header NumPy writes for a C-ordered array of ``dtype`` and ``shape``, which must take exactly
    ``size`` bytes: for a file whose data was written after a header of that size before its rows were counted
    (the join). A ValueError when it takes more or fewer.

    >>> import io
    >>> head = npy_header_bytes(np.dtype(np.uint64), (3,), 128)
    >>> buf = io.BytesIO(head + np.arange(3, dtype=np.uint64).tobytes())
    >>> len(head), npy_header(buf), np.load(io.BytesIO(buf.getvalue())).tolist()
    (128, ((3,), False, dtype('uint64')), [0, 1, 2])
    """
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                               "fortran_order": False, "shape": tuple(int(d) for d in shape)})
    if len(buf.getvalue()) != size:
        raise ValueError(f"the .npy header of {dtype} {tuple(shape)} takes {len(buf.getvalue())} bytes, not {size}")
    return buf.getvalue()


@functools.cache
def _dtype(descr: bytes) -> np.dtype:
    return np.dtype(descr.decode("ascii"))


def array_header(path: str | os.PathLike[str]) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Shape, Fortran order and dtype of the ``.npy`` file ``path``, from its header alone (nothing mapped or
    read after it)."""
    with open(path, "rb") as fh:
        return npy_header(fh)


def array_shape(path: str | os.PathLike[str]) -> tuple[int, ...]:
    """The shape of the ``.npy`` file ``path``, from its header alone."""
    return array_header(path)[0]


def append_array_bytes(path: str | os.PathLike[str], dst: BinaryIO, at: int, block: int = 1 << 26,
                       check: Callable[[tuple[int, ...], np.dtype], None] | None = None) -> int:
    """Copy the data bytes of the C-ordered ``.npy`` file ``path`` into the open file ``dst`` at byte ``at``;
    returns their count. ``check``: called with the file's shape and dtype before anything is copied (it
    raises to refuse the file). The kernel copies (``copy_file_range``) where it can, plain reads elsewhere."""
    with open(path, "rb") as src:
        shape, fortran, dtype = npy_header(src)
        if fortran:
            raise ValueError(f"{path}: expected a C-ordered array")
        if check is not None:
            check(shape, dtype)
        start = src.tell()
        size = os.fstat(src.fileno()).st_size - start
        done = 0
        try:
            while done < size:
                copied = os.copy_file_range(src.fileno(), dst.fileno(), size - done, start + done, at + done)
                if copied == 0:
                    raise OSError("copy_file_range copied nothing")
                done += copied
        except (AttributeError, OSError):  # not on this platform or file system: plain reads and writes
            src.seek(start + done)
            dst.seek(at + done)
            while chunk := src.read(min(block, size - done)):
                dst.write(chunk)
                done += len(chunk)
    return size


def load_array(path: str | os.PathLike[str], mmap: bool = True) -> np.ndarray:
    """Load an array saved by :func:`save_array`, memory-mapped (read-only) by default: ``np.load``'s result,
    its header read by :func:`npy_header`."""
    with open(path, "rb") as fh:
        shape, fortran, dtype = npy_header(fh)
        if dtype.hasobject:
            raise ValueError(f"{path}: an array of Python objects is not loaded")
        order = "F" if fortran else "C"
        if mmap:
            return np.memmap(fh, dtype=dtype, mode="r", offset=fh.tell(), shape=shape, order=order)
        count = math.prod(shape)
        out = np.fromfile(fh, dtype=dtype, count=count)
    if out.size != count:
        raise ValueError(f"{path}: truncated (wanted {count} elements of shape {shape}, found {out.size})")
    return out.reshape(shape, order=order)


def release(*arrays: np.ndarray) -> None:
    """Drop the pages of memory-mapped arrays from this process's resident set.

    The data stays in the page cache (and on disk); touching it again maps it back. Called after
    each block of a scan, so resident memory stays near one block instead of the whole file.
    """
    for arr in arrays:
        mm = getattr(arr, "_mmap", None)
        base = arr
        while mm is None and getattr(base, "base", None) is not None:
            base = base.base
            mm = getattr(base, "_mmap", None) if not isinstance(base, mmap.mmap) else base
        if isinstance(mm, mmap.mmap) and hasattr(mm, "madvise"):
            try:
                mm.madvise(mmap.MADV_DONTNEED)
            except (OSError, ValueError):
                pass


def trim_heap() -> None:
    """Hand freed heap memory back to the operating system (glibc's ``malloc_trim``; a no-op
    elsewhere), and Arrow's pool its unused memory (where this process imported PyArrow). The allocators
    keep freed blocks of large temporaries for reuse, so without it a long-lived process stays as large
    as the largest stage it has run."""
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


#: glibc's ``mallopt`` parameters (malloc.h): ``M_TRIM_THRESHOLD``, ``M_MMAP_THRESHOLD``.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def reuse_heap(largest: int = 32 << 20, kept: int = 64 << 20) -> bool:
    """Make this process's allocator (and that of the processes it forks) reuse freed memory for the next
    task rather than take fresh pages from the system: glibc's malloc then serves blocks up to ``largest``
    bytes from its heap, not each from a mapping of its own that is unmapped when freed, and keeps up to
    ``kept`` bytes free at the heap's top. Every page a process touches for the first time costs a fault (on
    this project's 2-core virtual machines about a quarter of a 200k run's CPU went to the kernel); a map task's
    arrays of a few MB each, allocated afresh for every shard, took five times the faults they take reused.
    Larger blocks still come and go as mappings, and :func:`trim_heap` still hands everything free back where
    a task calls it. Returns whether it applied (glibc only)."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(_M_MMAP_THRESHOLD, largest)) \
        and bool(libc.mallopt(_M_TRIM_THRESHOLD, kept))


@functools.cache
def _glibc() -> Any:
    """The C library with glibc's ``malloc_trim`` and ``mallopt``, or None elsewhere."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
    except OSError:
        return None


def file_fingerprint(path: str | os.PathLike[str] | Sources) -> dict[str, Any]:
    """What identifies an input for resume: its path, size and modification time (for a URL, what its
    store reports: size and modification time or ETag; for several files, each one's)."""
    if isinstance(path, Sources):
        return path.fingerprint(file_fingerprint)
    if is_url(path):
        return source_info(path)
    p = Path(path).resolve()
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file())
        digest = hashlib.sha256("\n".join(f"{f}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files).encode())
        return {"path": str(p), "tree": digest.hexdigest()}
    st = p.stat()
    return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
