"""Read a corpus from JSONL(.gz), a JSON array, Parquet, CSV, a folder of .txt files, several of these (a
folder of shards, a glob, a list: :mod:`neardup.io.sources`), or a Python iterable.

Owns turning files into records, ids and texts, with errors that name the file, line and field; must not
clean text (see text/normalize) or decide anything about duplicates.

Rules, the same for every format:

* every record needs a string text (``--text-field``) and a string or integer id (``--id-field``); a
  missing, null or non-string field is an error naming file, line and field, and the fields the record
  has (or, with ``on_error="skip"``, a counted skip listed in the summary). Where the default id field,
  ``id``, is absent from the first record (a CSV or Parquet file: from its columns), the ids are row
  numbers, ``0``, ``1``, ... in reading order across the files (a later record with an ``id`` is then an
  error);
* ids must be unique (the error names both lines); integer ids are accepted and turned to strings;
* an empty or whitespace-only text is kept (it is a singleton, never a duplicate) and counted;
* a text longer than ``max_chars`` is kept whole in the output but only its first ``max_chars``
  characters are compared; it is counted as truncated;
* text is UTF-8, or (``encoding``, e.g. ``cp1252``) in another encoding: each line of a JSONL or CSV file
  and each ``.txt`` file is read as UTF-8 where it is valid UTF-8, else in ``encoding``. A byte neither
  reads is an error naming file, line and byte offset; with ``on_error="skip"`` it is replaced (U+FFFD)
  and the record kept;
* a line that is not JSON or not a JSON object (JSONL), an element of a JSON array that is not an object
  (its place in the array is its "record" number), an id or text holding a lone surrogate (``"\\ud800"``
  is valid JSON but not text) is an error naming file and line (and field); with ``on_error="skip"`` it
  is skipped and listed like a bad record. Corrupt gzip data, a corrupt Parquet file, a CSV or Parquet
  file without the text column (or a named id column), and a folder without data or ``.txt`` files are
  errors whatever the policy;
* a UTF-8 byte order mark at the start of a JSONL, JSON or CSV file is ignored;
* labels, where read, are strict: a cluster is a string, an integer or null; a pair label is 0, 1,
  true or false.

Skipped records are listed as ``{"file", "line", "field", "reason", "error"}`` (``error``: the whole
message; ``field``: None for a line-level error).

Which fields, the error policy, the encoding and ``max_chars`` travel as one
:class:`~neardup.config.ReadConfig`; :func:`iter_batches` is the one place a stream of records is cut into
batches. Where a path is taken, so is a :class:`~neardup.io.sources.Sources` (several files read as one, their
records numbered by :meth:`~neardup.io.sources.Sources.number`) or a list of paths.
"""

from __future__ import annotations

import codecs
import csv
import functools
import gzip
import io
import json
import os
import glob
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson
import xxhash

from neardup.config import ReadConfig
from neardup.io.sources import GLOB_CHARS, STDIN_NAME, ReadMeter, Sources, is_data_file, is_hidden

#: Bytes a file is read by (:func:`_open_binary`).
READ_BUFFER = 1 << 20


class InputError(ValueError):
    """Bad input: the message names the file, the line (or row) and the field; ``reason`` is the message without them.

    >>> e = InputError("x.jsonl", 3, "missing field", "text")
    >>> str(e), e.reason
    ("x.jsonl, line 3, field 'text': missing field", 'missing field')
    """

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str, field: str | None = None,
                 unit: str = "line"):
        where = f"{path}"
        if line is not None:
            where += f", {unit} {line}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = message


def skip_entry(err: InputError) -> dict[str, Any]:
    """How a skipped record is listed (``skipped_records`` of a summary).

    >>> skip_entry(InputError("x.jsonl", 3, "not valid JSON"))["reason"]
    'not valid JSON'
    """
    return {"file": err.path, "line": err.line, "field": err.field, "reason": err.reason, "error": str(err)}


def _bad(err: InputError, skipped: list[dict[str, Any]] | None) -> None:
    """Raise ``err`` or, when skipping (``skipped`` is a list), list it."""
    if skipped is None:
        raise err
    skipped.append(skip_entry(err))


def text_problem(value: str) -> str | None:
    """Why a string is not valid Unicode text (a lone surrogate, e.g. from a ``"\\ud800"`` JSON escape), or None.

    >>> text_problem("fine"), text_problem("bad \\ud800")
    (None, "lone surrogate '\\\\ud800' at character 4: not valid Unicode text")
    """
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"lone surrogate {value[exc.start]!r} at character {exc.start}: not valid Unicode text"
    return None


def _show(value: Any) -> str:
    """A value as JSON would write it (its repr if JSON cannot), cut to 40 characters."""
    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError):
        return repr(value)[:40]


def cluster_label(value: Any, path: str | os.PathLike[str], line: int | None, field: str) -> str | None:
    """A true-cluster label as read: a string or an integer (as a string), or None for null (a singleton).

    >>> cluster_label(7, "x", 1, "cluster"), cluster_label(None, "x", 1, "cluster")
    ('7', None)
    >>> cluster_label(2.0, "x.jsonl", 4, "cluster")
    Traceback (most recent call last):
    ...
    neardup.io.read.InputError: x.jsonl, line 4, field 'cluster': a cluster label must be a string, an integer or null, got float 2.0
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(path, line, f"a cluster label must be a string, an integer or null, got "
                                     f"{type(value).__name__} {_show(value)}", field)
    if isinstance(value, str) and (problem := text_problem(value)):
        raise InputError(path, line, problem, field)
    return str(value)


@dataclass
class Corpus:
    """Documents in input order: ids, texts and, for labelled data, the true cluster of each.

    >>> c = Corpus.from_texts(["a", "b"])
    >>> c.ids, len(c)
    (['0', '1'], 2)
    """

    ids: list[str]
    texts: list[str]
    labels: list[str | None] | None = None
    #: What the corpus was read from: a path as named, a list of them for several (a summary's ``input``).
    source: str | list[str] = "<memory>"
    skipped: list[dict[str, Any]] = field(default_factory=list)
    n_empty: int = 0
    n_truncated: int = 0
    #: Other fields read for every document when asked (``keep``), e.g. a representative policy's field.
    fields: dict[str, list[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def from_texts(cls, texts: Iterable[str], ids: Iterable[str] | None = None) -> Corpus:
        """A corpus from Python strings; ids default to positions."""
        records = ({"id": i, "text": t} for i, t in zip(ids if ids is not None else _counter(), texts))
        return read_records(records, source="<memory>")

    def subset(self, indices: Iterable[int]) -> Corpus:
        """The documents at ``indices``, in that order."""
        idx = list(indices)
        return Corpus(
            ids=[self.ids[i] for i in idx], texts=[self.texts[i] for i in idx],
            labels=[self.labels[i] for i in idx] if self.labels is not None else None, source=self.source,
            fields={k: [v[i] for i in idx] for k, v in self.fields.items()},
        )


def _counter() -> Iterator[str]:
    i = 0
    while True:
        yield str(i)
        i += 1


def is_url(path: object) -> bool:
    """True for an fsspec URL such as ``s3://bucket/corpus.jsonl.gz`` or ``file:///data/x.parquet``.

    >>> is_url("s3://bucket/x.jsonl"), is_url("data/x.jsonl"), is_url(Path("x"))
    (True, False, False)
    """
    return isinstance(path, str) and "://" in path


def _url_fs(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path inside it (clear errors when it cannot be opened)."""
    try:
        import fsspec
    except ImportError:
        raise InputError(url, None, "reading URLs needs fsspec: pip install fsspec") from None
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:  # the protocol's package (s3fs, gcsfs, adlfs, ...) is missing
        raise InputError(url, None, f"cannot open this URL: {exc}") from None
    except (ValueError, OSError) as exc:
        raise InputError(url, None, f"cannot open this URL ({exc})") from None


def _exists(path: str | os.PathLike[str]) -> bool:
    """Whether one file or folder (local path or URL) exists."""
    if is_url(path):
        fs, inner = _url_fs(str(path))
        return bool(fs.exists(inner))
    return Path(path).exists()


def source_exists(path: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]]) -> bool:
    """Whether an input (a local path or URL, a glob, several: :class:`~neardup.io.sources.Sources`) exists:
    every file it names."""
    try:
        files = resolve_sources(path).files if not isinstance(path, Sources) else path.files
    except InputError:
        return False
    return all(_exists(f) for f in files)


def source_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What identifies an input URL for ``--resume``: its URL, size and modification mark."""
    fs, inner = _url_fs(str(path))
    info = fs.info(inner)
    mark = next((info[k] for k in ("mtime", "LastModified", "last_modified", "ETag", "etag", "created") if k in info), None)
    return {"path": str(path), "size": info.get("size"), "mark": str(mark)}


@contextmanager
def _open_binary(path: str | os.PathLike[str], meter: ReadMeter | None = None) -> Iterator[BinaryIO]:
    """A local file or URL opened for reading bytes, gunzipped when its name ends in ``.gz``; read a megabyte
    at a time (by 8 KiB reads, the thread that reads gave up the interpreter lock to the run's other threads
    at every one, and waited to get it back: reading 200k stories took 0.8 s of the map stage's reading
    thread, against 0.1 s alone). ``meter`` follows the position in the file (compressed bytes of a .gz)."""
    gz = str(path).lower().endswith(".gz")
    if is_url(path):
        fs, inner = _url_fs(str(path))
        raw = fs.open(inner, "rb")
    else:
        raw = open(path, "rb", buffering=READ_BUFFER)
    if meter is not None:
        meter.follow(raw.tell)
    with raw:
        if gz:
            with gzip.GzipFile(fileobj=raw) as unzipped, io.BufferedReader(unzipped, READ_BUFFER) as fh:
                yield fh
        else:
            yield raw


def _name(path: str | os.PathLike[str]) -> str:
    return str(path).rstrip("/").rsplit("/", 1)[-1] if is_url(path) else Path(path).name


@functools.cache
def _codec(encoding: str) -> tuple[str, bool, bool]:
    """``(name for messages, is UTF-8, writes ASCII as ASCII)`` of an encoding.

    >>> _codec("utf8"), _codec("CP1252"), _codec("utf-16")[2]
    (('UTF-8', True, True), ('cp1252', False, True), False)
    """
    name = codecs.lookup(encoding).name
    if name in ("utf-8", "utf-8-sig"):
        return "UTF-8", True, True
    probe = "\n\r\t ,;\"'{}[]:-+.0123456789azAZ"
    try:
        ascii_safe = probe.encode(name) == probe.encode("ascii")
    except (UnicodeError, LookupError):
        ascii_safe = False
    return name, False, ascii_safe


def decode_text(data: bytes, encoding: str = "utf-8", replace: bool = False) -> str:
    """``data`` as text: UTF-8 where it is valid UTF-8, else in ``encoding`` (one that writes ASCII as ASCII;
    any other is used alone); ``replace``: bytes neither reads become U+FFFD, else a UnicodeDecodeError
    (of ``encoding``'s reading).

    >>> decode_text("café".encode()), decode_text("café".encode("cp1252"), "cp1252"), decode_text(b"a\\x81", replace=True)
    ('café', 'café', 'a\ufffd')
    """
    _, utf8, ascii_safe = _codec(encoding)
    errors = "replace" if replace else "strict"
    if utf8:
        return data.decode("utf-8", errors)
    if ascii_safe:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return data.decode(encoding, errors)


def _bad_bytes(exc: UnicodeDecodeError, data: bytes, encoding: str, of: str, offset: int = 0) -> str:
    """The message of bytes that no encoding read: which, where (``of``: the line, the file, the field)."""
    label, utf8, ascii_safe = _codec(encoding)
    what = "UTF-8" if utf8 else f"{label} (nor UTF-8)" if ascii_safe else label
    hint = ("name the input's encoding (--encoding), or --on-error skip to replace bad bytes" if utf8
            else "check --encoding, or --on-error skip to replace bad bytes")
    return (f"invalid {what} at byte {exc.start + offset} of the {of} (0x{data[exc.start]:02x}): {hint}")


def _check_line_encoding(path: str | os.PathLike[str], encoding: str) -> None:
    """Files read line by line need an encoding that writes ASCII as ASCII (UTF-16 does not)."""
    label, _, ascii_safe = _codec(encoding)
    if not ascii_safe:
        raise InputError(path, None, f"a {label} file cannot be read line by line: convert it to UTF-8 first "
                                     f"(iconv -f {label} -t utf-8)")


def _starts_array(path: str | os.PathLike[str]) -> bool:
    """Whether a .json file's first character (past a byte order mark and blanks) is ``[``: a JSON array."""
    with _open_binary(path) as fh:
        head = fh.read(1 << 16)
    head = head[len(codecs.BOM_UTF8):] if head.startswith(codecs.BOM_UTF8) else head
    return head.lstrip()[:1] == b"["


def detect_format(path: str | os.PathLike[str]) -> str:
    """The reader a path needs: ``jsonl``, ``json`` (a .json file holding one JSON array), ``parquet``, ``csv``
    or ``txtdir``.

    >>> detect_format(Path("x.jsonl.gz")), detect_format("memory://dir/x.parquet")
    ('jsonl', 'parquet')
    """
    if is_url(path):
        fs, inner = _url_fs(str(path))
        if fs.isdir(inner):
            raise InputError(path, None, "a folder of .txt files must be a local path (mount the bucket)")
    elif Path(path).is_dir():
        return "txtdir"
    name = _name(path).lower()
    if name.endswith((".json", ".json.gz")) and _exists(path) and _starts_array(path):
        return "json"
    if name.endswith((".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson", ".ndjson.gz")):
        return "jsonl"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
        return "csv"
    raise InputError(path, None, "unknown input format: use .jsonl[.gz], .json, .parquet, .csv[.gz], a folder of "
                                 "them or of .txt files, or - for JSONL on stdin")


def iter_jsonl(path: str | os.PathLike[str], skipped: list[dict[str, Any]] | None = None, *,
               encoding: str = "utf-8", meter: ReadMeter | None = None,
               name: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL(.gz) file (local path or URL).

    A line that is not JSON or not an object is an :class:`InputError` naming file and line, or, when
    ``skipped`` is a list, listed there (:func:`skip_entry`) and left out. A line that is not UTF-8 is read
    in ``encoding`` (:func:`decode_text`); a byte neither reads is an error naming file, line and byte, or
    (``skipped`` a list) replaced. A byte order mark at the start of the file is ignored; corrupt gzip data
    is an error whatever the policy. ``name``: what errors call the file (default: ``path``).
    """
    return _jsonl(path, skipped, False, encoding, meter, name)


def iter_jsonl_lines(path: str | os.PathLike[str], skipped: list[dict[str, Any]] | None = None, *,
                     encoding: str = "utf-8", meter: ReadMeter | None = None,
                     name: str | None = None) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """:func:`iter_jsonl` with each object's line as the file holds it (its bytes, the line break included,
    a byte order mark at the start of the file not): ``(line number, line, object)``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = p.write_bytes(b'\\xef\\xbb\\xbf{"id": 1}\\r\\n\\n{"id":2}')
    >>> list(iter_jsonl_lines(p))
    [(1, b'{"id": 1}\\r\\n', {'id': 1}), (3, b'{"id":2}', {'id': 2})]
    """
    return _jsonl(path, skipped, True, encoding, meter, name)


def _jsonl(path: str | os.PathLike[str], skipped: list[dict[str, Any]] | None, lines: bool, encoding: str = "utf-8",
           meter: ReadMeter | None = None, name: str | None = None) -> Iterator[Any]:
    """:func:`iter_jsonl` (``lines`` False) or :func:`iter_jsonl_lines`: one reader, no generator between."""
    shown = path if name is None else name
    _check_line_encoding(shown, encoding)
    utf8 = _codec(encoding)[1]
    replace = skipped is not None
    lineno = 0
    with _open_binary(path, meter) as fh, _gzip_errors(shown, lambda: lineno + 1):
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            if utf8 or raw.isascii():  # orjson reads UTF-8 only
                obj = _fast_object(raw)
                if obj is not None:
                    yield (lineno, raw, obj) if lines else (lineno, obj)
                    continue
            try:
                line = decode_text(raw, encoding, replace)
            except UnicodeDecodeError as exc:
                raise InputError(shown, lineno, _bad_bytes(exc, raw, encoding, "line")) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                _bad(InputError(shown, lineno, f"not valid JSON ({exc.msg} at column {exc.colno})"), skipped)
                continue
            except RecursionError:
                _bad(InputError(shown, lineno, "not valid JSON (nested too deeply)"), skipped)
                continue
            if not isinstance(obj, dict):
                _bad(InputError(shown, lineno, f"expected a JSON object, got {type(obj).__name__}"), skipped)
                continue
            yield (lineno, raw, obj) if lines else (lineno, obj)
        if meter is not None:
            meter.file_read()


def _iter_json_array(path: str | os.PathLike[str], skipped: list[dict[str, Any]] | None, encoding: str = "utf-8",
                     meter: ReadMeter | None = None, name: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(place, object) for each element of a .json(.gz) file holding one JSON array of objects (read whole);
    errors call an element by its place, "record N" (1-based)."""
    shown = path if name is None else name
    with _open_binary(path, meter) as fh, _gzip_errors(shown, lambda: None):
        data = fh.read()
        if meter is not None:
            meter.file_read()
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = decode_text(data, encoding, skipped is not None)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise InputError(shown, line, _bad_bytes(exc, data, encoding, "line", offset=-start)) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(shown, exc.lineno, f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InputError(shown, None, "not valid JSON (nested too deeply)") from None
    if not isinstance(value, list):
        raise InputError(shown, None, f"a .json file holds a JSON array of objects or one object a line, got "
                                      f"{type(value).__name__}")
    for place, obj in enumerate(value, start=1):
        if not isinstance(obj, dict):
            _bad(InputError(shown, place, f"expected a JSON object, got {type(obj).__name__}", unit="record"), skipped)
            continue
        yield place, obj


def _fast_object(raw: bytes) -> dict[str, Any] | None:
    """The object on a JSONL line, parsed by orjson (about three times faster than :mod:`json` on news
    records), or None where :mod:`json` must read the line so that what is accepted and every error
    message stay exactly its: any line orjson rejects (invalid UTF-8 or JSON, a lone surrogate, NaN, a
    blank line), a value that is not an object, and an integer past 64 bits, which orjson turns into a float.

    >>> _fast_object(b'{"id": 7, "text": "a"}\\n'), _fast_object(b'{"id": NaN}'), _fast_object(b'{"id": 1' + b'0' * 30 + b'}')
    ({'id': 7, 'text': 'a'}, None, None)
    >>> _fast_object(b'{"id": "a", "meta": {"n": [1, 2' + b'0' * 30 + b']}}') is None
    True
    """
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict or _wide_number(obj.values()):
        return None
    return obj


def _wide_number(values: Iterable[Any]) -> bool:
    """Whether any of ``values`` (nested lists and objects included) is a float outside the 64-bit integers'
    range: orjson's reading of an integer json keeps whole (records are kept whole by the online store and
    the noise generator)."""
    for value in values:
        kind = type(value)
        if kind is float:
            if not -(2.0**63) <= value < 2.0**64:
                return True
        elif kind is dict:
            if _wide_number(value.values()):
                return True
        elif kind is list and _wide_number(value):
            return True
    return False


@contextmanager
def _gzip_errors(path: str | os.PathLike[str], line: Any) -> Iterator[None]:
    """Corrupt or truncated gzip data as an :class:`InputError` (``line()``: where reading stopped)."""
    try:
        yield
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(path, line(), f"corrupt or truncated gzip data ({exc or type(exc).__name__})") from None


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every object of a JSONL(.gz) file, in order; errors as :func:`iter_jsonl` (file and line named).

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = p.write_text('{"a": 1}\\n\\n{"a": 2}\\n')
    >>> read_jsonl(p)
    [{'a': 1}, {'a': 2}]
    """
    return [obj for _, obj in iter_jsonl(path)]


def read_json(path: str | os.PathLike[str]) -> Any:
    """The one JSON value of a .json(.gz) file (local path or URL); invalid UTF-8 or JSON is an
    :class:`InputError` naming file and line.

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = p.write_text('{"a": [1,\\n 2]}')
    >>> read_json(p)
    {'a': [1, 2]}
    """
    with _open_binary(path) as fh, _gzip_errors(path, lambda: None):
        data = fh.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, f"invalid UTF-8 at byte {exc.start} of the file") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"not valid JSON ({exc.msg} at column {exc.colno})") from None


#: What names a field that locates the id or the text, for the hint of a file without that column.
_FIELD_OPTIONS = {"id": "--id-field", "text": "--text-field"}


def _check_columns(path: str | os.PathLike[str], columns: list[str], required: dict[str, str],
                   line: int | None = None) -> None:
    """A file whose header (``line``) or schema lacks a required column: one error listing the columns it
    has (whatever the policy)."""
    for kind, name in required.items():
        if name not in columns:
            have = ", ".join(columns) if columns else "none"
            raise InputError(path, line, f"no such column (the columns are: {have}); name the {kind} column with "
                                      f"{_FIELD_OPTIONS.get(kind, kind)}", name)


def _iter_csv(path: str | os.PathLike[str], required: dict[str, str], skipped: list[dict[str, Any]] | None,
              encoding: str = "utf-8", meter: ReadMeter | None = None,
              name: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV/TSV file (its line numbers: a row's last line). Text that is not UTF-8 is read in
    ``encoding`` line by line; a byte neither reads is an error naming line, field and byte, or (skipping)
    replaced."""
    shown = path if name is None else name
    delimiter = "\t" if ".tsv" in _name(path).lower() else ","
    label, utf8, ascii_safe = _codec(encoding)
    line = 0
    with _open_binary(path, meter) as fh, _gzip_errors(shown, lambda: line + 1):
        if utf8 or not ascii_safe:
            # Undecodable bytes become lone surrogates (surrogateescape), found row by row below.
            text: Iterable[str] = io.TextIOWrapper(fh, encoding="utf-8-sig" if utf8 else encoding,
                                                   errors="surrogateescape", newline="")
        else:
            text = _decoded_lines(fh, encoding, shown, skipped is not None)
        reader = csv.DictReader(text, delimiter=delimiter)
        try:
            header = reader.fieldnames
        except csv.Error as exc:
            raise InputError(shown, 1, f"bad CSV header: {exc}") from None
        if header is None:
            return  # an empty file
        _check_columns(shown, [str(c) for c in header], required, line=1)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                line = reader.line_num
                _bad(InputError(shown, line, f"bad CSV: {exc}"), skipped)
                continue
            line = reader.line_num
            bad = next((k for k, v in row.items() if isinstance(v, str) and text_problem(v)), None)
            if bad is not None:
                if skipped is None:
                    value = row[bad]
                    at = next(i for i, c in enumerate(value) if 0xDC80 <= ord(c) <= 0xDCFF)
                    data = value.encode("utf-8" if utf8 else encoding, "surrogateescape")
                    offset = len(value[:at].encode("utf-8" if utf8 else encoding, "surrogateescape"))
                    raise InputError(shown, line, f"invalid {'UTF-8' if utf8 else label} at byte {offset} of the "
                                                  f"field (0x{data[offset]:02x}): name the input's encoding "
                                                  f"(--encoding), or --on-error skip to replace bad bytes", str(bad))
                row = {k: _replaced(v, "utf-8" if utf8 else encoding) if isinstance(v, str) else v
                       for k, v in row.items()}
            yield line, dict(row)
        if meter is not None:
            meter.file_read()


def _replaced(value: str, encoding: str) -> str:
    """A string read with surrogateescape, its undecodable bytes replaced (U+FFFD)."""
    if value.isascii() or not any(0xDC80 <= ord(c) <= 0xDCFF for c in value):
        return value
    return value.encode(encoding, "surrogateescape").decode(encoding, "replace")


def _decoded_lines(fh: BinaryIO, encoding: str, shown: str | os.PathLike[str], replace: bool) -> Iterator[str]:
    """The lines of a file, each read as UTF-8 where it is valid UTF-8, else in ``encoding`` (one that writes
    ASCII as ASCII); a byte neither reads is an error naming line and byte, or (``replace``) U+FFFD."""
    for lineno, raw in enumerate(fh, start=1):
        if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8):]
        try:
            yield decode_text(raw, encoding, replace)
        except UnicodeDecodeError as exc:
            raise InputError(shown, lineno, _bad_bytes(exc, raw, encoding, "line")) from None


def _iter_parquet(path: str | os.PathLike[str], fields: list[str], required: dict[str, str],
                  meter: ReadMeter | None = None, name: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow.parquet as pq

    shown = path if name is None else name
    with _open_binary(path) if is_url(path) else nullcontext(path) as src:
        try:
            pf = pq.ParquetFile(src)
        except Exception as exc:  # pyarrow raises several types for a corrupt file
            raise InputError(shown, None, f"not a readable Parquet file ({exc})") from None
        _check_columns(shown, list(pf.schema_arrow.names), required)
        present = [f for f in fields if f in pf.schema_arrow.names]
        total = max(1, pf.metadata.num_rows)
        size = _size_of(path)
        row = 0
        if meter is not None and size:
            meter.follow(lambda: size * row // total)
        for batch in pf.iter_batches(columns=present or None, batch_size=8192):
            for rec in batch.to_pylist():
                row += 1
                yield row, rec
        if meter is not None:
            meter.file_read()


def _size_of(path: str | os.PathLike[str]) -> int | None:
    """A file's size in bytes (None for a URL or where it cannot be known)."""
    if is_url(path):
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


#: The files of a folder that are documents.
TEXT_SUFFIXES = (".txt",)


def _iter_txtdir(path: Path, skipped: list[dict[str, Any]] | None, encoding: str = "utf-8",
                 meter: ReadMeter | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each ``.txt`` file of a folder (and its sub-folders) as a document whose id is its relative path. A
    file that is not UTF-8 is read in ``encoding``; a byte neither reads is an error naming file, line and
    byte, or (skipping) replaced."""
    every = sorted(p for p in path.rglob("*") if p.is_file())
    files = [p for p in every if p.suffix.lower() in TEXT_SUFFIXES]
    if not files:
        others = ", ".join(str(p.relative_to(path)) for p in every[:3]) + (", ..." if len(every) > 3 else "")
        held = f"it holds {len(every)} other files: {others}" if every else "it is empty"
        raise InputError(path, None, f"no .txt files in this folder ({held}); a folder is read for its .txt files, "
                                     f"or for its data files (.jsonl[.gz], .json, .parquet, .csv[.gz])")
    done = 0
    if meter is not None:
        meter.follow(lambda: done)
    for i, file in enumerate(files, start=1):
        data = file.read_bytes()
        done += len(data)
        try:
            text = decode_text(data, encoding, skipped is not None)
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(file, line, _bad_bytes(exc, data, encoding, "file")) from None
        yield i, {"id": str(file.relative_to(path)), "text": text}
    if meter is not None:
        meter.file_read()


def resolve_sources(data: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]], encoding: str | None = None,
                    stdin: tuple[str | os.PathLike[str], str] | None = None) -> Sources:
    """The files ``data`` names (paths, globs, folders of shards, URLs, ``-``: see :mod:`neardup.io.sources`),
    each checked to exist; ``stdin``: the file ``-`` was spooled to and its content hash
    (:func:`~neardup.io.sources.spool_stdin`). An :class:`InputError` names what cannot be read.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.jsonl").write_text("{}"), (d / "b.csv").write_text("id")
    >>> [Path(f).name for f in resolve_sources(d).files], [Path(f).name for f in resolve_sources(str(d / "*.jsonl")).files]
    (['a.jsonl', 'b.csv'], ['a.jsonl'])
    """
    if isinstance(data, Sources):
        return data.with_encoding(encoding)
    items = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    if not items:
        raise InputError("<input>", None, "no input named")
    files: list[str] = []
    names: list[str] = []
    digests: list[str | None] = []
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"an input is a path, a URL or a glob, got {type(item).__name__}")
        given = os.fspath(item)
        if given == "-":
            if stdin is None:
                raise InputError(STDIN_NAME, None, "stdin must be spooled to a file first (io.sources.spool_stdin)")
            found, name, digest = [os.fspath(stdin[0])], STDIN_NAME, stdin[1]
        else:
            found, name, digest = _files_of(given), None, None
        for f in found:
            key = f if "://" in f else os.path.realpath(f)
            if key in seen:
                continue
            seen.add(key)
            files.append(f)
            names.append(name or f)
            digests.append(digest)
    given_names = tuple("-" if isinstance(x, str) and x == "-" else os.fspath(x) for x in items)
    return Sources(files=tuple(files), names=tuple(names), given=given_names,
                   digests=tuple(digests) if any(digests) else (), encoding=encoding or "utf-8",
                   sizes=tuple(_size(f) for f in files), units=tuple(_unit(f) for f in files))


def _unit(path: str) -> str:
    """What a file's records are called: "record" in a .json file holding one JSON array, else "line"."""
    if not path.lower().endswith((".json", ".json.gz")):
        return "line"
    try:
        return "record" if detect_format(path) == "json" else "line"
    except (OSError, ValueError):
        return "line"


def _size(path: str) -> int | None:
    if "://" in path:
        return None
    try:
        p = Path(path)
        if p.is_dir():
            return sum(f.stat().st_size for f in p.rglob("*.txt") if f.is_file())
        return p.stat().st_size
    except OSError:
        return None


def _files_of(given: str) -> list[str]:
    """The files one named input stands for (see the module docstring)."""
    if is_url(given):
        return _url_files(given)
    p = Path(given)
    if p.is_dir():
        return _folder_files(p)
    if p.exists():
        return [str(p)]
    if any(c in given for c in GLOB_CHARS):
        matches = sorted(glob.glob(given, recursive=True))
        out: list[str] = []
        for m in matches:
            out.extend(_folder_files(Path(m)) if Path(m).is_dir() else [str(Path(m))])
        if not out:
            raise InputError(given, None, "no file matches this pattern")
        return out
    raise InputError(p, None, "no such file or folder")


def _folder_files(folder: Path) -> list[str]:
    """A folder's data files (shards), or the folder itself where it holds none (read for its ``.txt`` files)."""
    every = sorted(p for p in folder.rglob("*") if p.is_file())
    shown = [p for p in every if not is_hidden(p.relative_to(folder).parts)]
    data = [p for p in shown if is_data_file(p.name)]
    if not data:
        return [str(folder)]
    texts = [p for p in shown if p.suffix.lower() in TEXT_SUFFIXES]
    if texts:
        raise InputError(folder, None, f"holds both data files ({data[0].relative_to(folder)}) and .txt files "
                                       f"({texts[0].relative_to(folder)}): name the ones to read, e.g. "
                                       f"'{folder / '*.jsonl'}'")
    return [str(p) for p in data]


def _url_files(url: str) -> list[str]:
    """The files a URL names: itself, a glob's matches, or a folder's data files."""
    fs, inner = _url_fs(url)
    if any(c in inner for c in GLOB_CHARS) and not fs.exists(inner):
        found = sorted(fs.glob(inner))
        if not found:
            raise InputError(url, None, "no file matches this pattern")
        return [fs.unstrip_protocol(f) for f in found]
    if fs.isdir(inner):
        found = sorted(f for f in fs.find(inner) if is_data_file(f)
                       and not is_hidden(f[len(inner.rstrip("/")) + 1:].split("/")))
        if not found:
            raise InputError(url, None, "no data files (.jsonl, .parquet, .csv) in this folder; a folder of .txt "
                                        "files must be a local path (mount the bucket)")
        return [fs.unstrip_protocol(f) for f in found]
    return [url]


def _file_records(src: Sources, index: int, fields: list[str] | None, skipped: list[dict[str, Any]] | None,
                  required: dict[str, str], meter: ReadMeter | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) of file ``index`` of ``src``, numbered as its reader numbers them."""
    path = src.files[index]
    name = src.names[index] if src.names[index] != path else None
    p: str | Path = path if is_url(path) else Path(path)
    if not _exists(p):
        raise InputError(name or p, None, "no such file or folder")
    fmt = detect_format(p)
    if fmt == "jsonl":
        return _jsonl(p, skipped, False, src.encoding, meter, name)
    if fmt == "json":
        return _iter_json_array(p, skipped, src.encoding, meter, name)
    if fmt == "csv":
        return _iter_csv(p, required, skipped, src.encoding, meter, name)
    if fmt == "parquet":
        return _iter_parquet(p, fields or [], required, meter, name)
    return _iter_txtdir(Path(p), skipped, src.encoding, meter)


def _sources(path: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]],
             encoding: str | None = None) -> Sources:
    """The :class:`~neardup.io.sources.Sources` a path (or several, or a glob) names, read in ``encoding``
    (a :class:`~neardup.io.sources.Sources` keeps its own unless ``encoding`` is another than the default)."""
    if isinstance(path, Sources):
        return path.with_encoding(encoding if encoding != "utf-8" else None)
    return resolve_sources(path, encoding)


def iter_records(path: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]],
                 fields: list[str] | None = None, skipped: list[dict[str, Any]] | None = None,
                 required: dict[str, str] | None = None, encoding: str | None = None,
                 meter: ReadMeter | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line or row number, record) for every record of a supported file or folder, or of several files read
    as one (numbered by :meth:`~neardup.io.sources.Sources.number`: one file's numbers are its lines).

    ``skipped``: a list to skip corrupt lines into (else they are errors); ``required``: the columns a
    CSV or Parquet file must have, by what they hold (``{"id": "doc_id", "text": "body"}``); ``encoding``:
    of texts that are not UTF-8; ``meter``: follows the bytes read (a progress bar's).
    """
    src = _sources(path, encoding)
    if len(src) == 1:
        return _one_file(src, fields, skipped, required or {}, meter)
    return _chained(src, fields, skipped, required or {}, meter)


def _one_file(src: Sources, fields: list[str] | None, skipped: list[dict[str, Any]] | None,
              required: dict[str, str], meter: ReadMeter | None) -> Iterator[tuple[int, dict[str, Any]]]:
    return _file_records(src, 0, fields, skipped, required, meter)  # no generator between (one file: the common case)


def _chained(src: Sources, fields: list[str] | None, skipped: list[dict[str, Any]] | None,
             required: dict[str, str], meter: ReadMeter | None) -> Iterator[tuple[int, dict[str, Any]]]:
    for index in range(len(src)):
        base = Sources.number(index, 0)
        for line, rec in _file_records(src, index, fields, skipped, required, meter):
            yield base + line, rec


#: The id field that may be absent from every record (the ids are then row numbers); a named one may not.
DEFAULT_ID_FIELD = "id"


def _numbers_ids(id_field: str | None) -> bool:
    """Whether records without ``id_field`` take row numbers as ids (the default field, or None), rather than
    being an error (a field the user named)."""
    return not id_field or id_field == DEFAULT_ID_FIELD


def _required(cfg: ReadConfig) -> dict[str, str]:
    """The columns a CSV or Parquet file must have: the text's, and the id's where it was named."""
    return {"text": cfg.text_field} if _numbers_ids(cfg.id_field) else {"id": cfg.id_field, "text": cfg.text_field}


def _skip_list(cfg: ReadConfig, skipped: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Where a reader skips into: ``skipped`` (a new list when None) under ``on_error="skip"``, else None (raise)."""
    if cfg.on_error != "skip":
        return None
    return skipped if skipped is not None else []


def _read_config(read: ReadConfig | None, fields: dict[str, Any]) -> ReadConfig:
    cfg = read or ReadConfig()
    return cfg.replace(**fields) if fields else cfg


def read_corpus(path: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]],
                read: ReadConfig | None = None, label_field: str | None = None,
                keep: Sequence[str] = (), **fields: Any) -> Corpus:
    """Read every document of a file or folder, or of several (a folder of shards, a glob, a list of paths),
    as one corpus (see the module docstring for the rules).

    ``read`` (or its fields as keywords: ``text_field``, ``id_field``, ``on_error``, ``max_chars``,
    ``encoding``) says how; ``label_field`` (e.g. ``"cluster"``) also reads true cluster labels; null means
    singleton; ``keep``: other fields to read into :attr:`Corpus.fields` (None where a record lacks one).
    """
    cfg = _read_config(read, fields)
    src = _sources(path, cfg.encoding)
    wanted = [cfg.id_field, cfg.text_field] + ([label_field] if label_field else []) + list(keep)
    skipped: list[dict[str, Any]] = []
    records = iter_records(src, wanted, _skip_list(cfg, skipped), _required(cfg))
    corpus = read_records(records, source=src, read=cfg, label_field=label_field, skipped=skipped, keep=keep)
    if len(corpus) == 0:
        raise InputError(str(src), None, "no documents found (empty input)")
    return corpus


def record_batches(records: Iterable[dict[str, Any]], read: ReadConfig, batch_docs: int,
                   source: str = "<memory>") -> Iterator[list[Document]]:
    """Records validated into documents (:func:`iter_documents`), in lists of ``batch_docs``: what
    :func:`iter_batches` streams from a file, for records already in memory."""
    return _batched(iter_documents(records, source, read), batch_docs)


def _batched(docs: Iterable[Document], batch_docs: int) -> Iterator[list[Document]]:
    """``docs`` in lists of ``batch_docs`` (the last one shorter), checked first."""
    if batch_docs < 1:
        raise ValueError(f"batch_docs must be >= 1, got {batch_docs}")

    def lists() -> Iterator[list[Document]]:
        batch: list[Document] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= batch_docs:
                yield batch
                batch = []
        if batch:
            yield batch

    return lists()


def read_records(records: Iterable[dict[str, Any]] | Iterable[tuple[int, dict[str, Any]]],
                 source: str | Sources = "<memory>",
                 read: ReadConfig | None = None, label_field: str | None = None,
                 skipped: list[dict[str, Any]] | None = None, keep: Sequence[str] = (), **fields: Any) -> Corpus:
    """Validate records (dicts, or (line, dict) pairs) into a :class:`Corpus` (skips listed in ``skipped``,
    which becomes :attr:`Corpus.skipped`; ``keep``: other fields to read into :attr:`Corpus.fields`)."""
    cfg = _read_config(read, fields)
    corpus = Corpus(ids=[], texts=[], labels=[] if label_field else None,
                    source=source.name if isinstance(source, Sources) else source,
                    skipped=skipped if skipped is not None else [], fields={name: [] for name in keep})
    for doc in iter_documents(records, source, cfg, corpus.skipped, label_field, keep=keep):
        if not doc.text.strip():
            corpus.n_empty += 1
        if len(doc.text) > cfg.max_chars:
            corpus.n_truncated += 1
        corpus.ids.append(doc.id)
        corpus.texts.append(doc.text)
        if corpus.labels is not None:
            corpus.labels.append(doc.label)
        for name in keep:
            corpus.fields[name].append(doc.extra.get(name) if doc.extra else None)
    return corpus


class SeenIdHashes:
    """The 64-bit hashes of the ids seen so far and the line of each, in about 20 bytes a document (a
    dict of them took about 100: a gigabyte at 10M documents in the process that reads).

    The latest ids sit in a dict; every :data:`RECENT` of them move into sorted NumPy runs (merged while the
    last run is no larger than the new one, so there are about log2(n / RECENT) runs) behind a Bloom filter of
    two bits a key (16 bits per key of capacity), which answers most lookups of unseen ids without a search.

    >>> seen = SeenIdHashes()
    >>> for line, key in enumerate(range(10, 200_000, 3), start=1):
    ...     _ = seen.setdefault(key, line)
    >>> seen.first_line(13), seen.first_line(14), seen.first_line(199_999), len(seen)
    (2, None, 66664, 66664)
    """

    RECENT = 1 << 16
    _MIN_BITS = 1 << 20

    def __init__(self) -> None:
        self._recent: dict[int, int] = {}
        self._runs: list[tuple[Any, Any]] = []  # (sorted uint64 hashes, int64 lines)
        self._bloom = bytearray()
        self._mask = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count + len(self._recent)

    def first_line(self, key: int) -> int | None:
        """The line where the id of hash ``key`` was seen, or None."""
        line = self._recent.get(key)
        if line is not None or not self._runs:
            return line
        return self._in_runs(key)

    def _in_runs(self, key: int) -> int | None:
        """The line of the id of hash ``key`` in the sorted runs (past the Bloom filter), or None."""
        a, b = key & self._mask, (key >> 32) & self._mask
        bloom = self._bloom
        if not (bloom[a >> 3] >> (a & 7) & 1 and bloom[b >> 3] >> (b & 7) & 1):
            return None
        import numpy as np

        k = np.uint64(key)
        for hashes, lines in self._runs:
            i = int(np.searchsorted(hashes, k))
            if i < hashes.size and hashes[i] == k:
                return int(lines[i])
        return None

    def setdefault(self, key: int, line: int) -> int:
        """As ``dict.setdefault``: the line where the id of hash ``key`` was seen, or else ``line``, where it is
        then recorded (``line`` must be new: lines only grow). One call checks and records an id.

        >>> seen = SeenIdHashes()
        >>> seen.setdefault(5, 1), seen.setdefault(5, 2), seen.setdefault(6, 3), len(seen)
        (1, 1, 3, 2)
        """
        recent = self._recent
        first = recent.setdefault(key, line)
        if first != line:
            return first
        if self._runs:
            earlier = self._in_runs(key)
            if earlier is not None:
                del recent[key]
                return earlier
        if len(recent) >= self.RECENT:
            self._flush()
        return line

    def _flush(self) -> None:
        import numpy as np

        n = len(self._recent)
        hashes = np.fromiter(self._recent.keys(), dtype=np.uint64, count=n)
        lines = np.fromiter(self._recent.values(), dtype=np.int64, count=n)
        self._recent = {}
        order = np.argsort(hashes)
        hashes, lines = hashes[order], lines[order]
        fresh = hashes
        while self._runs and self._runs[-1][0].size <= hashes.size:
            h, l = self._runs.pop()
            hashes, lines = np.concatenate([h, hashes]), np.concatenate([l, lines])
            order = np.argsort(hashes, kind="stable")  # two sorted halves: one merge
            hashes, lines = hashes[order], lines[order]
        self._runs.append((hashes, lines))
        self._count += n
        bits = max(self._MIN_BITS, 1 << (16 * self._count - 1).bit_length())
        if bits > self._mask + 1:  # past its capacity: rebuilt twice as large from every run
            self._bloom, self._mask = bytearray(bits >> 3), bits - 1
            for h, _ in self._runs:
                self._mark(h)
        else:
            self._mark(fresh)

    def _mark(self, hashes: Any) -> None:
        import numpy as np

        view = np.frombuffer(self._bloom, dtype=np.uint8)
        mask = np.uint64(self._mask)
        for pos in (hashes & mask, (hashes >> np.uint64(32)) & mask):
            bit = np.uint8(1) << (pos & np.uint64(7)).astype(np.uint8)
            np.bitwise_or.at(view, (pos >> np.uint64(3)).astype(np.int64), bit)


@dataclass(slots=True)
class Document:
    """One validated record: input line, id, text and (for labelled data) its true cluster. (Slots and not
    frozen: one is made for every record the readers validate, and a frozen dataclass sets each field through
    ``object.__setattr__``, three times the cost: 0.13 s of the reading process at 200k stories.)"""

    line: int
    id: str
    text: str
    label: str | None = None
    extra: dict[str, Any] | None = None  # the record's other fields (or those kept), when asked for


def iter_documents(records: Iterable[dict[str, Any]] | Iterable[tuple[int, dict[str, Any]]],
                   source: str | Sources = "<memory>", read: ReadConfig | None = None,
                   skipped: list[dict[str, Any]] | None = None, label_field: str | None = None,
                   id_hashes: bool = False, extra: bool = False, keep: Sequence[str] = ()) -> Iterator[Document]:
    """Validate records one by one (streaming), applying the rules of the module docstring.

    ``source``: what errors name (a :class:`~neardup.io.sources.Sources`: the file of each record, by its
    number). Duplicate ids are found with a dict of the ids seen (or, with ``id_hashes``, of their 64-bit XXH3
    hashes in a :class:`SeenIdHashes`, about 20 bytes a document, for corpora too large to hold every id).
    ``extra``: keep each record's other fields in :attr:`Document.extra` (``keep``: only these, None where
    absent). Skipped records (``on_error="skip"``) are appended to ``skipped``.
    """
    cfg = read or ReadConfig()
    id_field, text_field, on_error = cfg.id_field, cfg.text_field, cfg.on_error
    seen: Any = SeenIdHashes() if id_hashes else {}
    first_line = seen.first_line if id_hashes else seen.get  # both: the line an id was first seen on, or None
    first_or_add = seen.setdefault  # both: that line, or else the line given, where the id is then recorded
    make = Document
    hash_id = xxhash.xxh3_64_intdigest
    where = source.where if isinstance(source, Sources) else (lambda line: (source, line, "line"))
    numbered: bool | None = None  # ids are row numbers: decided on the first record
    for position, item in enumerate(records, start=1):
        lineno, rec = item if isinstance(item, tuple) else (position, item)
        try:
            if numbered is None:
                numbered = id_field not in rec and _numbers_ids(id_field)
            if numbered:
                if id_field in rec:
                    path, line, unit = where(lineno)
                    raise InputError(path, line, f"this record has an id, but the first record had none (its ids "
                                                 f"are row numbers): give every record an id, or none", id_field, unit)
                doc_id, text = str(position - 1), rec.get(text_field)
                if not (type(text) is str and (text.isascii() or text_problem(text) is None)):
                    path, line, unit = where(lineno)
                    text = _field(rec, text_field, path, line, (str,), "text", unit)
            else:
                doc_id, text = rec.get(id_field), rec.get(text_field)
                if not (_plain_id(doc_id) and type(text) is str and (text.isascii() or text_problem(text) is None)):
                    # not the common record: the checks one by one, for the error of the first field at fault
                    path, line, unit = where(lineno)
                    doc_id = _field(rec, id_field, path, line, (str, int), "id", unit)
                    text = _field(rec, text_field, path, line, (str,), "text", unit)
            if type(doc_id) is not str:
                doc_id = str(doc_id)
            key: Any = hash_id(doc_id.encode("utf-8")) if id_hashes else doc_id
            label = bad_label = None
            if label_field:
                try:
                    label = cluster_label(rec.get(label_field), *where(lineno)[:2], label_field)
                except InputError as exc:
                    bad_label = exc
            # the id is recorded as it is checked, unless the record fails (a duplicate id's error comes first)
            first = first_or_add(key, lineno) if bad_label is None else first_line(key)
            if first is not None and first != lineno:
                path, line, unit = where(lineno)
                first_path, first_at, first_unit = where(first)
                seen_at = f"{first_unit} {first_at}" if first_path == path else f"{first_path}, {first_unit} {first_at}"
                raise InputError(path, line, f"duplicate id {doc_id!r} (first seen on {seen_at})", id_field, unit)
            if bad_label is not None:
                raise bad_label
        except InputError as exc:
            if on_error == "raise":
                raise
            if skipped is not None:
                skipped.append(skip_entry(exc))
            continue
        more = ({k: v for k, v in rec.items() if k not in (id_field, text_field)} if extra
                else {k: rec.get(k) for k in keep} if keep else None)
        yield make(lineno, doc_id, text, label, more)


def iter_batches(path: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]], read: ReadConfig,
                 batch_docs: int, skipped: list[dict[str, Any]] | None = None, extra: bool = False,
                 keep: Sequence[str] = (), meter: ReadMeter | None = None) -> Iterator[list[Document]]:
    """The validated documents of a file or folder (or several read as one), streamed in lists of
    ``batch_docs`` (the last may be shorter); nothing of a batch is kept after it. Ids are checked unique by
    hash (large corpora). ``keep``: other fields read into each :attr:`Document.extra`; ``meter``: follows
    the bytes read.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = p.write_text("".join(f'{{"id": {i}, "text": "t{i}"}}\\n' for i in range(5)))
    >>> [[d.id for d in b] for b in iter_batches(p, ReadConfig(), 2)]
    [['0', '1'], ['2', '3'], ['4']]
    """
    if batch_docs < 1:
        raise ValueError(f"batch_docs must be >= 1, got {batch_docs}")
    fields = None if extra else [read.id_field, read.text_field, *keep]
    src = _sources(path, read.encoding)
    records = iter_records(src, fields, _skip_list(read, skipped), _required(read), meter=meter)
    yield from _batched(iter_documents(records, src, read, skipped, id_hashes=True, extra=extra, keep=keep),
                        batch_docs)


def texts_at(path: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]], lines: Sequence[int],
             text_field: str = "text", encoding: str | None = None) -> Iterator[str]:
    """The ``text_field`` of the records at ``lines`` (ascending line or row numbers, as :class:`Document`
    records them; records already validated), in that order. In a JSONL file only those lines are parsed;
    of several files, each is read for its own lines. Bytes no encoding reads are replaced (U+FFFD), as the
    records were read where they were kept.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = p.write_text('{"id": 1, "text": "one"}\\n\\n{"id": 2, "text": "two"}\\n{"id": 3, "text": "three"}\\n')
    >>> list(texts_at(p, [3, 4]))
    ['two', 'three']
    """
    src = _sources(path, encoding)
    if len(src) == 1:
        yield from _texts_in(src, 0, lines, text_field)
        return
    todo = list(lines)
    i = 0
    while i < len(todo):
        index = Sources.locate(todo[i])[0]
        j = i
        while j < len(todo) and Sources.locate(todo[j])[0] == index:
            j += 1
        yield from _texts_in(src, index, [Sources.locate(n)[1] for n in todo[i:j]], text_field)
        i = j


def _texts_in(src: Sources, index: int, lines: Sequence[int], text_field: str) -> Iterator[str]:
    """:func:`texts_at` in file ``index`` of ``src`` (``lines``: its own)."""
    wanted = iter(lines)
    target = next(wanted, None)
    if target is None:
        return
    path = src.files[index]
    if detect_format(path) == "jsonl":
        with _open_binary(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                if lineno == target:
                    if lineno == 1 and raw.startswith(codecs.BOM_UTF8):  # as iter_jsonl reads it
                        raw = raw[len(codecs.BOM_UTF8):]
                    obj = _fast_object(raw) if _codec(src.encoding)[1] or raw.isascii() else None
                    yield (obj if obj is not None else json.loads(decode_text(raw, src.encoding, True)))[text_field]
                    target = next(wanted, None)
                    if target is None:
                        return
        return
    # the map stage validated the records wanted (and skipped, under on_error="skip", the bad ones, which a
    # folder of .txt files or a CSV file reads again: they are passed over here, not raised)
    for lineno, rec in _file_records(src, index, [text_field], [], {}, None):
        if lineno == target:
            yield rec[text_field]
            target = next(wanted, None)
            if target is None:
                return


def read_texts(path: str | os.PathLike[str] | Sources | Sequence[str | os.PathLike[str]], ids: Iterable[str],
               read: ReadConfig | None = None) -> dict[str, str]:
    """The texts of the documents ``ids`` of a file or folder (or several), read again (streamed; stops when all
    are found).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = p.write_text('{"id": 1, "text": "one"}\\n{"id": 2, "text": "two"}\\n')
    >>> read_texts(p, ["2"])
    {'2': 'two'}
    """
    cfg = read or ReadConfig()
    wanted = set(ids)
    out: dict[str, str] = {}
    if not wanted:
        return out
    src = _sources(path, cfg.encoding)
    records = iter_records(src, [cfg.id_field, cfg.text_field], _skip_list(cfg, None), _required(cfg))
    for doc in iter_documents(records, src, cfg, [], id_hashes=True):
        if doc.id in wanted:
            out[doc.id] = doc.text
            if len(out) == len(wanted):
                break
    return out


def _plain_id(value: Any) -> bool:
    """Whether ``value`` is an id :func:`_field` accepts at a glance: an int, or an ASCII str (others take
    :func:`_field`'s checks; their outcome is the same).

    >>> _plain_id(7), _plain_id("a-1"), _plain_id(True), _plain_id(None), _plain_id("é"), _plain_id(7.0)
    (True, True, False, False, False, False)
    """
    kind = type(value)
    return kind is int or (kind is str and value.isascii())


def _field(rec: dict[str, Any], name: str, source: str | os.PathLike[str], lineno: int,
           kinds: tuple[type, ...], what: str = "", unit: str = "line") -> Any:
    """``rec[name]``, checked to be one of ``kinds`` (and valid text); else an error naming the field (and, for a
    missing one, the record's fields and the option naming the ``what`` field: ``id`` or ``text``)."""
    if name not in rec:
        have = ", ".join(map(str, rec)) if rec else "none"
        option = f"; name the {what} field with {_FIELD_OPTIONS[what]}" if what in _FIELD_OPTIONS else ""
        raise InputError(source, lineno, f"missing field (the record's fields are: {have}){option}", name,
                         unit)
    value = rec[name]
    if value is None:
        raise InputError(source, lineno, "field is null", name, unit)
    if isinstance(value, bool) or not isinstance(value, kinds):
        expected = " or ".join(k.__name__ for k in kinds)
        raise InputError(source, lineno, f"expected {expected}, got {type(value).__name__}", name, unit)
    if isinstance(value, str) and (problem := text_problem(value)):
        raise InputError(source, lineno, problem, name, unit)
    return value


def pair_label(value: Any, path: str | os.PathLike[str], line: int | None, field: str = "label") -> int:
    """A pair label as read: 1 (duplicate) or 0, given as 0, 1, true or false; anything else is an error.

    >>> pair_label(True, "p", 1), pair_label(0, "p", 2)
    (1, 0)
    >>> pair_label("0", "p.jsonl", 3)
    Traceback (most recent call last):
    ...
    neardup.io.read.InputError: p.jsonl, line 3, field 'label': a pair label must be 0, 1, true or false, got str "0"
    """
    if type(value) not in (int, bool) or value not in (0, 1):
        raise InputError(path, line, f"a pair label must be 0, 1, true or false, got {type(value).__name__} "
                                     f"{_show(value)}", field)
    return int(value)


def read_pair_labels(path: str | os.PathLike[str]) -> list[tuple[str, str, int]]:
    """Labelled pairs ``(a, b, label)`` from a pairs JSONL file (label 1 = duplicate; see :func:`pair_label`)."""
    out = []
    p = Path(path)
    for lineno, rec in iter_jsonl(p):
        for name in ("a", "b", "label"):
            if name not in rec:
                raise InputError(p, lineno, "missing field", name)
        a, b = (str(_field(rec, name, str(p), lineno, kinds=(str, int))) for name in ("a", "b"))
        out.append((a, b, pair_label(rec["label"], p, lineno)))
    if not out:
        raise InputError(p, None, "no labelled pairs found (empty input)")
    return out


def is_pair_file(path: str | os.PathLike[str]) -> bool:
    """True when a JSONL file holds labelled pairs (a, b, label) rather than documents."""
    p = Path(path)
    if p.is_dir() or detect_format(p) != "jsonl":
        return False
    for _, rec in iter_jsonl(p):
        return {"a", "b", "label"} <= rec.keys() and "text" not in rec
    return False
