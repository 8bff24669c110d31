"""Which files an input names, read as one corpus: a file, a folder of shards, a glob, several of these, or
stdin spooled to a file.

Owns what an input's files are (:class:`Sources`: an ordered list of files and the one numbering of their
records, a record's line in its file offset by the file's place, :data:`FILE_BITS`), stdin's spool and the
reading meter; must not parse records or look for files (:func:`neardup.io.read.resolve_sources` finds them).

What an input may name, each resolved in the order given:

* a file (``.jsonl[.gz]``, ``.json`` (JSON lines or one JSON array), ``.parquet``, ``.csv[.gz]``/``.tsv``),
  local or an fsspec URL;
* a folder: its data files (the suffixes above, in sub-folders too, in name order; hidden ones, named
  ``.x`` or ``_x``, left out), or, where it holds none, its ``.txt`` files read as documents;
* a glob (``'data/*.jsonl'``, quoted so that the shell leaves it), matched in name order; a URL's too;
* ``-``: JSONL on stdin, which must be spooled to a file first (:func:`spool_stdin`): a chunked run reads
  its input more than once.

A file named twice (by two globs, say) is read once. Records are numbered ``(index << FILE_BITS) + line``
(``index``: the file's place; ``line``: as its reader numbers it), so one file's numbers are its own lines,
numbers grow in reading order, and :meth:`Sources.locate` turns one back into the file and its line.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

#: Bits of a record's number that hold its line in its file (the rest: the file's place in the list).
FILE_BITS = 40
#: What ``-`` stands for in messages and summaries.
STDIN_NAME = "<stdin>"
#: File names a folder of shards is read for (lower case).
DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".json", ".json.gz", ".parquet", ".pq",
                 ".csv", ".csv.gz", ".tsv", ".tsv.gz")
#: The characters that make a name that is not a file a glob.
GLOB_CHARS = "*?["


@dataclass(frozen=True)
class Sources:
    """An input's files in reading order, read as one corpus.

    ``files``: local paths or URLs (a folder of ``.txt`` files is one entry); ``names``: what messages call
    each (its path; :data:`STDIN_NAME` for stdin spooled); ``given``: what was named (paths, globs, folders,
    ``-``), for summaries; ``digests``: a spooled file's content hash (``--resume`` compares it, not the
    spool's path); ``encoding``: of texts that are not UTF-8 (:mod:`neardup.io.read`).

    >>> s = Sources(files=("a.jsonl", "b.jsonl"), names=("a.jsonl", "b.jsonl"), given=("a.jsonl", "b.jsonl"))
    >>> s.locate(s.number(1, 7)), s.name, str(s)
    ((1, 7), ['a.jsonl', 'b.jsonl'], 'a.jsonl, b.jsonl')
    """

    files: tuple[str, ...]
    names: tuple[str, ...]
    given: tuple[str, ...]
    digests: tuple[str | None, ...] = ()
    encoding: str = "utf-8"
    #: The size of each file in bytes where known (filled by :func:`resolve` for local files).
    sizes: tuple[int | None, ...] = field(default=(), compare=False)
    #: What each file's records are called in messages: "line", or "record" (the elements of a JSON array).
    units: tuple[str, ...] = field(default=(), compare=False)

    def __len__(self) -> int:
        return len(self.files)

    @staticmethod
    def number(index: int, line: int) -> int:
        """The corpus-wide number of line ``line`` of file ``index``."""
        return (index << FILE_BITS) + line

    @staticmethod
    def locate(number: int) -> tuple[int, int]:
        """``(file index, line in that file)`` of a corpus-wide number (:meth:`number`)."""
        return number >> FILE_BITS, number & ((1 << FILE_BITS) - 1)

    def where(self, number: int) -> tuple[str, int, str]:
        """The name of the file holding record ``number``, its line (or place) there, and what that is called."""
        index, line = self.locate(number)
        return self.names[index], line, self.units[index] if self.units else "line"

    @property
    def name(self) -> str | list[str]:
        """What summaries call the input: what was named (one string, or a list for several)."""
        shown = [STDIN_NAME if g == "-" else g for g in self.given]
        return shown[0] if len(shown) == 1 else shown

    def __str__(self) -> str:
        name = self.name
        return name if isinstance(name, str) else ", ".join(name)

    def with_encoding(self, encoding: str | None) -> Sources:
        """The same files read with another encoding (None: as they are)."""
        return self if encoding is None or encoding == self.encoding else replace(self, encoding=encoding)

    def total_bytes(self) -> int | None:
        """The files' size together (None where one is not known: a URL)."""
        if not self.sizes or any(s is None for s in self.sizes):
            return None
        return sum(s for s in self.sizes if s is not None)

    def fingerprint(self, one: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
        """What identifies these files for ``--resume``: ``one(file)`` of each (a spooled file: its content
        hash); a single file's alone, as before several were read."""
        digests = self.digests or (None,) * len(self.files)
        prints = [{"path": name, "sha256": digest} if digest else one(file)
                  for file, name, digest in zip(self.files, self.names, digests)]
        return prints[0] if len(prints) == 1 else {"files": prints}

    def local_paths(self) -> list[Path]:
        """Every local file read and every local folder named: what an output must never be or replace."""
        out = [Path(f) for f in self.files if "://" not in f]
        out += [Path(g) for g in self.given if g != "-" and "://" not in g and Path(g).is_dir()]
        return out


def input_paths(inputs: Iterable[Any]) -> list[Path]:
    """The local files and folders ``inputs`` name (paths, globs, :class:`Sources`, lists of paths; URLs left
    out): what an output must never be or replace, and a work directory never hold.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.jsonl").write_text("{}")
    >>> [p.name for p in input_paths([str(d / "*.jsonl"), "s3://b/x.jsonl", d / "new.jsonl"])]
    ['a.jsonl', 'new.jsonl']
    """
    out: list[Path] = []
    for item in inputs:
        if isinstance(item, Sources):
            out.extend(item.local_paths())
        elif isinstance(item, (list, tuple)):
            out.extend(input_paths(item))
        elif isinstance(item, (str, os.PathLike)):
            name = os.fspath(item)
            if "://" in name or name == "-":
                continue
            if not os.path.exists(name) and any(c in name for c in GLOB_CHARS):
                out.extend(Path(m) for m in sorted(glob.glob(name, recursive=True)))
            else:
                out.append(Path(name))
    return out


def is_sources(data: Any) -> bool:
    """Whether ``data`` names files: a path or URL, :class:`Sources`, or a non-empty list of ``os.PathLike``
    (a list of ``str`` is texts to the Python API; ``neardup.dedup([Path("a.jsonl"), Path("b.jsonl")])`` reads
    two files).

    >>> is_sources("x.jsonl"), is_sources([Path("a"), Path("b")]), is_sources(["a", "b"]), is_sources([])
    (True, True, False, False)
    """
    if isinstance(data, (str, os.PathLike, Sources)):
        return True
    return isinstance(data, (list, tuple)) and bool(data) and all(isinstance(x, os.PathLike) for x in data)


def is_hidden(parts: Iterable[str]) -> bool:
    """Whether a path (its parts below a folder) is hidden: a part named ``.x`` or ``_x`` (``_SUCCESS``, ``.crc``).

    >>> is_hidden(("a", "_SUCCESS")), is_hidden(("part-0.parquet",))
    (True, False)
    """
    return any(part.startswith((".", "_")) for part in parts)


def is_data_file(name: str) -> bool:
    """Whether a file name is one a folder of shards is read for (:data:`DATA_SUFFIXES`).

    >>> is_data_file("part-0001.Parquet"), is_data_file("notes.txt")
    (True, False)
    """
    return name.lower().endswith(DATA_SUFFIXES)


def spool_stdin(folder: str | os.PathLike[str], stream: BinaryIO | None = None) -> tuple[Path, str]:
    """Copy stdin (or ``stream``) to ``folder/stdin.jsonl``; returns the file and its content's SHA-256.

    >>> import io, tempfile
    >>> path, digest = spool_stdin(tempfile.mkdtemp(), io.BytesIO(b'{"id": 1, "text": "a"}\\n'))
    >>> path.read_bytes()[:9], len(digest)
    (b'{"id": 1,', 64)
    """
    src = stream if stream is not None else sys.stdin.buffer
    target = Path(folder) / "stdin.jsonl"
    digest = hashlib.sha256()
    with open(target, "wb") as out:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    return target, digest.hexdigest()


class StdinSpool:
    """A context that spools stdin into a private folder beside ``near`` when ``inputs`` name ``-``, and removes
    it when the block ends (whatever happened): ``with StdinSpool(inputs, outdir) as stdin: resolve_sources(inputs,
    stdin=stdin)`` (:func:`neardup.io.read.resolve_sources`). ``stdin`` is None where no input is ``-``.
    """

    def __init__(self, inputs: Sequence[str | os.PathLike[str]], near: str | os.PathLike[str]) -> None:
        self.wanted = any(os.fspath(x) == "-" for x in inputs)
        self.near = Path(near)
        self.folder: Path | None = None

    def __enter__(self) -> tuple[Path, str] | None:
        if not self.wanted:
            return None
        import tempfile

        try:  # beside the output folder, where the run's own files go; else the system's temporary folder
            parent = self.near.resolve().parent
            parent.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix=".neardup-stdin-", dir=parent))
        except OSError:
            self.folder = Path(tempfile.mkdtemp(prefix="neardup-stdin-"))
        return spool_stdin(self.folder)

    def __exit__(self, *exc: object) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


class ReadMeter:
    """How far reading has gone through an input's bytes, for a progress bar with a total and an ETA: a reader
    follows the position in the file it reads (:meth:`follow`) and says when it has read it all (:meth:`file_read`).

    >>> m = ReadMeter(100); m.follow(lambda: 30); m.bytes_read
    30
    >>> m.follow(lambda: 60); m.file_read(); m.bytes_read
    60
    """

    def __init__(self, total: int | None = None) -> None:
        self.total = total
        self._done = 0
        self._position: Callable[[], int] | None = None

    def follow(self, position: Callable[[], int]) -> None:
        """Read the current file's position from ``position()``."""
        self._position = position

    def file_read(self) -> None:
        """The current file is read to its end (its position now: its size)."""
        self._done = self.bytes_read
        self._position = None

    @property
    def bytes_read(self) -> int:
        """Bytes read so far (of the files finished and of the current one)."""
        current = 0
        if self._position is not None:
            try:
                current = int(self._position())
            except (ValueError, OSError):  # the file was closed
                current = 0
        return self._done + current


__all__ = ["DATA_SUFFIXES", "FILE_BITS", "GLOB_CHARS", "STDIN_NAME", "ReadMeter", "Sources", "StdinSpool",
           "input_paths", "is_data_file", "is_hidden", "is_sources", "spool_stdin"]
