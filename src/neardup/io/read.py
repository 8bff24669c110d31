"""Read a corpus from JSONL(.gz), Parquet, CSV, a folder of .txt files, or a Python iterable.

Owns turning files into records, ids and texts, with errors that name the file, line and field; must not
clean text (see text/normalize) or decide anything about duplicates.

Rules, the same for every format:

* every record needs a string id and a string text (``--id-field`` / ``--text-field``); a missing,
  null or non-string field is an error naming file, line and field (or, with ``on_error="skip"``,
  a counted skip listed in the summary);
* ids must be unique (the error names both lines); integer ids are accepted and turned to strings;
* an empty or whitespace-only text is kept (it is a singleton, never a duplicate) and counted;
* a text longer than ``max_chars`` is kept whole in the output but only its first ``max_chars``
  characters are compared; it is counted as truncated;
* a line that is not valid UTF-8, not JSON or not a JSON object (JSONL), a row with invalid UTF-8
  (CSV), an id or text holding a lone surrogate (``"\\ud800"`` is valid JSON but not text) is an
  error naming file and line (and field); with ``on_error="skip"`` it is skipped and listed like a bad
  record. Corrupt gzip data, a corrupt Parquet file, a CSV or Parquet file without the id or text
  column, and a folder without ``.txt`` files are errors whatever the policy;
* a UTF-8 byte order mark at the start of a JSONL or CSV file is ignored;
* labels, where read, are strict: a cluster is a string, an integer or null; a pair label is 0, 1,
  true or false.

Skipped records are listed as ``{"file", "line", "field", "reason", "error"}`` (``error``: the whole
message; ``field``: None for a line-level error).

Which fields, the error policy and ``max_chars`` travel as one :class:`~neardup.config.ReadConfig`;
:func:`iter_batches` is the one place a stream of records is cut into batches.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson
import xxhash

from neardup.config import ReadConfig

#: Bytes a file is read by (:func:`_open_binary`).
READ_BUFFER = 1 << 20


class InputError(ValueError):
    """Bad input: the message names the file, the line (or row) and the field; ``reason`` is the message without them.

    >>> e = InputError("x.jsonl", 3, "missing field", "text")
    >>> str(e), e.reason
    ("x.jsonl, line 3, field 'text': missing field", 'missing field')
    """

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str, field: str | None = None):
        where = f"{path}"
        if line is not None:
            where += f", line {line}"
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
    source: str = "<memory>"
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


def source_exists(path: str | os.PathLike[str]) -> bool:
    """Whether an input (local path or URL) exists."""
    if is_url(path):
        fs, inner = _url_fs(str(path))
        return bool(fs.exists(inner))
    return Path(path).exists()


def source_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What identifies an input URL for ``--resume``: its URL, size and modification mark."""
    fs, inner = _url_fs(str(path))
    info = fs.info(inner)
    mark = next((info[k] for k in ("mtime", "LastModified", "last_modified", "ETag", "etag", "created") if k in info), None)
    return {"path": str(path), "size": info.get("size"), "mark": str(mark)}


@contextmanager
def _open_binary(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A local file or URL opened for reading bytes, gunzipped when its name ends in ``.gz``; read a megabyte
    at a time (by 8 KiB reads, the thread that reads gave up the interpreter lock to the run's other threads
    at every one, and waited to get it back: reading 200k stories took 0.8 s of the map stage's reading
    thread, against 0.1 s alone)."""
    gz = str(path).lower().endswith(".gz")
    if is_url(path):
        fs, inner = _url_fs(str(path))
        raw = fs.open(inner, "rb")
    else:
        raw = open(path, "rb", buffering=READ_BUFFER)
    with raw:
        if gz:
            with gzip.GzipFile(fileobj=raw) as unzipped, io.BufferedReader(unzipped, READ_BUFFER) as fh:
                yield fh
        else:
            yield raw


def _name(path: str | os.PathLike[str]) -> str:
    return str(path).rstrip("/").rsplit("/", 1)[-1] if is_url(path) else Path(path).name


def detect_format(path: str | os.PathLike[str]) -> str:
    """The reader a path needs: ``jsonl``, ``parquet``, ``csv`` or ``txtdir``.

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
    if name.endswith((".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson", ".ndjson.gz")):
        return "jsonl"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".csv.gz", ".tsv", ".tsv.gz")):
        return "csv"
    raise InputError(path, None, "unknown input format: use .jsonl[.gz], .parquet, .csv[.gz] or a folder of .txt files")


def iter_jsonl(path: str | os.PathLike[str],
               skipped: list[dict[str, Any]] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL(.gz) file (local path or URL).

    A line that is not UTF-8, not JSON or not an object is an :class:`InputError` naming file and line,
    or, when ``skipped`` is a list, listed there (:func:`skip_entry`) and left out. A byte order mark
    at the start of the file is ignored; corrupt gzip data is an error whatever the policy.
    """
    return _jsonl(path, skipped, False)


def iter_jsonl_lines(path: str | os.PathLike[str],
                     skipped: list[dict[str, Any]] | None = None) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """:func:`iter_jsonl` with each object's line as the file holds it (its bytes, the line break included,
    a byte order mark at the start of the file not): ``(line number, line, object)``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = p.write_bytes(b'\\xef\\xbb\\xbf{"id": 1}\\r\\n\\n{"id":2}')
    >>> list(iter_jsonl_lines(p))
    [(1, b'{"id": 1}\\r\\n', {'id': 1}), (3, b'{"id":2}', {'id': 2})]
    """
    return _jsonl(path, skipped, True)


def _jsonl(path: str | os.PathLike[str], skipped: list[dict[str, Any]] | None, lines: bool) -> Iterator[Any]:
    """:func:`iter_jsonl` (``lines`` False) or :func:`iter_jsonl_lines`: one reader, no generator between."""
    lineno = 0
    with _open_binary(path) as fh, _gzip_errors(path, lambda: lineno + 1):
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            obj = _fast_object(raw)
            if obj is not None:
                yield (lineno, raw, obj) if lines else (lineno, obj)
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                _bad(InputError(path, lineno, f"invalid UTF-8 at byte {exc.start} of the line"), skipped)
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                _bad(InputError(path, lineno, f"not valid JSON ({exc.msg} at column {exc.colno})"), skipped)
                continue
            except RecursionError:
                _bad(InputError(path, lineno, "not valid JSON (nested too deeply)"), skipped)
                continue
            if not isinstance(obj, dict):
                _bad(InputError(path, lineno, f"expected a JSON object, got {type(obj).__name__}"), skipped)
                continue
            yield (lineno, raw, obj) if lines else (lineno, obj)


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


def _iter_csv(path: str | os.PathLike[str], required: dict[str, str],
              skipped: list[dict[str, Any]] | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV/TSV file; a row with invalid UTF-8 is an error naming its line and field (or a skip)."""
    delimiter = "\t" if ".tsv" in _name(path).lower() else ","
    line = 0
    with _open_binary(path) as fh, _gzip_errors(path, lambda: line + 1):
        # Undecodable bytes become lone surrogates (surrogateescape), found row by row below.
        text = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="surrogateescape", newline="")
        reader = csv.DictReader(text, delimiter=delimiter)
        try:
            header = reader.fieldnames
        except csv.Error as exc:
            raise InputError(path, 1, f"bad CSV header: {exc}") from None
        if header is None:
            return  # an empty file
        _check_columns(path, [str(c) for c in header], required, line=1)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                line = reader.line_num
                _bad(InputError(path, line, f"bad CSV: {exc}"), skipped)
                continue
            line = reader.line_num
            bad = next((k for k, v in row.items() if isinstance(v, str) and text_problem(v)), None)
            if bad is not None:
                _bad(InputError(path, line, "invalid UTF-8", str(bad)), skipped)
                continue
            yield line, dict(row)


def _iter_parquet(path: str | os.PathLike[str], fields: list[str],
                  required: dict[str, str]) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow.parquet as pq

    with _open_binary(path) if is_url(path) else nullcontext(path) as src:
        try:
            pf = pq.ParquetFile(src)
        except Exception as exc:  # pyarrow raises several types for a corrupt file
            raise InputError(path, None, f"not a readable Parquet file ({exc})") from None
        _check_columns(path, list(pf.schema_arrow.names), required)
        present = [f for f in fields if f in pf.schema_arrow.names]
        row = 0
        for batch in pf.iter_batches(columns=present or None, batch_size=8192):
            for rec in batch.to_pylist():
                row += 1
                yield row, rec


#: The files of a folder that are documents.
TEXT_SUFFIXES = (".txt",)


def _iter_txtdir(path: Path, skipped: list[dict[str, Any]] | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each ``.txt`` file of a folder (and its sub-folders) as a document whose id is its relative path."""
    every = sorted(p for p in path.rglob("*") if p.is_file())
    files = [p for p in every if p.suffix.lower() in TEXT_SUFFIXES]
    if not files:
        others = ", ".join(str(p.relative_to(path)) for p in every[:3]) + (", ..." if len(every) > 3 else "")
        held = f"it holds {len(every)} other files: {others}" if every else "it is empty"
        raise InputError(path, None, f"no .txt files in this folder ({held}); only .txt files are read")
    for i, file in enumerate(files, start=1):
        try:
            text = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            _bad(InputError(file, None, f"invalid UTF-8 at byte {exc.start}"), skipped)
            continue
        yield i, {"id": str(file.relative_to(path)), "text": text}


def iter_records(path: str | os.PathLike[str], fields: list[str] | None = None,
                 skipped: list[dict[str, Any]] | None = None,
                 required: dict[str, str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line or row number, record) for every record of a supported file or folder.

    ``skipped``: a list to skip corrupt lines into (else they are errors); ``required``: the columns a
    CSV or Parquet file must have, by what they hold (``{"id": "doc_id", "text": "body"}``).
    """
    p: str | Path = path if is_url(path) else Path(path)  # type: ignore[assignment]
    if not source_exists(p):
        raise InputError(p, None, "no such file or folder")
    fmt = detect_format(p)
    if fmt == "jsonl":
        return iter_jsonl(p, skipped)
    if fmt == "csv":
        return _iter_csv(p, required or {}, skipped)
    if fmt == "parquet":
        return _iter_parquet(p, fields or [], required or {})
    return _iter_txtdir(Path(p), skipped)


def _required(cfg: ReadConfig) -> dict[str, str]:
    return {"id": cfg.id_field, "text": cfg.text_field}


def _skip_list(cfg: ReadConfig, skipped: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Where a reader skips into: ``skipped`` (a new list when None) under ``on_error="skip"``, else None (raise)."""
    if cfg.on_error != "skip":
        return None
    return skipped if skipped is not None else []


def _read_config(read: ReadConfig | None, fields: dict[str, Any]) -> ReadConfig:
    cfg = read or ReadConfig()
    return cfg.replace(**fields) if fields else cfg


def read_corpus(path: str | os.PathLike[str], read: ReadConfig | None = None, label_field: str | None = None,
                keep: Sequence[str] = (), **fields: Any) -> Corpus:
    """Read every document of a file or folder (see the module docstring for the rules).

    ``read`` (or its fields as keywords: ``text_field``, ``id_field``, ``on_error``, ``max_chars``)
    says how; ``label_field`` (e.g. ``"cluster"``) also reads true cluster labels; null means singleton;
    ``keep``: other fields to read into :attr:`Corpus.fields` (None where a record lacks one).
    """
    cfg = _read_config(read, fields)
    wanted = [cfg.id_field, cfg.text_field] + ([label_field] if label_field else []) + list(keep)
    skipped: list[dict[str, Any]] = []
    records = iter_records(path, wanted, _skip_list(cfg, skipped), _required(cfg))
    corpus = read_records(records, source=str(path), read=cfg, label_field=label_field, skipped=skipped, keep=keep)
    if len(corpus) == 0:
        raise InputError(path, None, "no documents found (empty input)")
    return corpus


def read_records(records: Iterable[dict[str, Any]] | Iterable[tuple[int, dict[str, Any]]], source: str = "<memory>",
                 read: ReadConfig | None = None, label_field: str | None = None,
                 skipped: list[dict[str, Any]] | None = None, keep: Sequence[str] = (), **fields: Any) -> Corpus:
    """Validate records (dicts, or (line, dict) pairs) into a :class:`Corpus` (skips listed in ``skipped``,
    which becomes :attr:`Corpus.skipped`; ``keep``: other fields to read into :attr:`Corpus.fields`)."""
    cfg = _read_config(read, fields)
    corpus = Corpus(ids=[], texts=[], labels=[] if label_field else None, source=source,
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


def iter_documents(records: Iterable[dict[str, Any]] | Iterable[tuple[int, dict[str, Any]]], source: str = "<memory>",
                   read: ReadConfig | None = None, skipped: list[dict[str, Any]] | None = None,
                   label_field: str | None = None, id_hashes: bool = False, extra: bool = False,
                   keep: Sequence[str] = ()) -> Iterator[Document]:
    """Validate records one by one (streaming), applying the rules of the module docstring.

    Duplicate ids are found with a dict of the ids seen (or, with ``id_hashes``, of their 64-bit XXH3
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
    for position, item in enumerate(records, start=1):
        lineno, rec = item if isinstance(item, tuple) else (position, item)
        try:
            doc_id, text = rec.get(id_field), rec.get(text_field)
            if not (_plain_id(doc_id) and type(text) is str and (text.isascii() or text_problem(text) is None)):
                # not the common record: the checks one by one, for the error of the first field at fault
                doc_id = _field(rec, id_field, source, lineno, kinds=(str, int))
                text = _field(rec, text_field, source, lineno, kinds=(str,))
            if type(doc_id) is not str:
                doc_id = str(doc_id)
            key: Any = hash_id(doc_id.encode("utf-8")) if id_hashes else doc_id
            label = bad_label = None
            if label_field:
                try:
                    label = cluster_label(rec.get(label_field), source, lineno, label_field)
                except InputError as exc:
                    bad_label = exc
            # the id is recorded as it is checked, unless the record fails (a duplicate id's error comes first)
            first = first_or_add(key, lineno) if bad_label is None else first_line(key)
            if first is not None and first != lineno:
                raise InputError(source, lineno, f"duplicate id {doc_id!r} (first seen on line {first})", id_field)
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


def iter_batches(path: str | os.PathLike[str], read: ReadConfig, batch_docs: int,
                 skipped: list[dict[str, Any]] | None = None, extra: bool = False,
                 keep: Sequence[str] = ()) -> Iterator[list[Document]]:
    """The validated documents of a file or folder, streamed in lists of ``batch_docs`` (the last may be
    shorter); nothing of a batch is kept after it. Ids are checked unique by hash (large corpora).
    ``keep``: other fields read into each :attr:`Document.extra`.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = p.write_text("".join(f'{{"id": {i}, "text": "t{i}"}}\\n' for i in range(5)))
    >>> [[d.id for d in b] for b in iter_batches(p, ReadConfig(), 2)]
    [['0', '1'], ['2', '3'], ['4']]
    """
    if batch_docs < 1:
        raise ValueError(f"batch_docs must be >= 1, got {batch_docs}")
    fields = None if extra else [read.id_field, read.text_field, *keep]
    batch: list[Document] = []
    records = iter_records(path, fields, _skip_list(read, skipped), _required(read))
    for doc in iter_documents(records, str(path), read, skipped, id_hashes=True, extra=extra, keep=keep):
        batch.append(doc)
        if len(batch) >= batch_docs:
            yield batch
            batch = []
    if batch:
        yield batch


def texts_at(path: str | os.PathLike[str], lines: Sequence[int], text_field: str = "text") -> Iterator[str]:
    """The ``text_field`` of the records at ``lines`` (ascending line or row numbers, as :class:`Document`
    records them; records already validated), in that order. In a JSONL file only those lines are parsed.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = p.write_text('{"id": 1, "text": "one"}\\n\\n{"id": 2, "text": "two"}\\n{"id": 3, "text": "three"}\\n')
    >>> list(texts_at(p, [3, 4]))
    ['two', 'three']
    """
    wanted = iter(lines)
    target = next(wanted, None)
    if target is None:
        return
    if detect_format(path) == "jsonl":
        with _open_binary(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                if lineno == target:
                    if lineno == 1 and raw.startswith(codecs.BOM_UTF8):  # as iter_jsonl reads it
                        raw = raw[len(codecs.BOM_UTF8):]
                    obj = _fast_object(raw)
                    yield (obj if obj is not None else json.loads(raw.decode("utf-8")))[text_field]
                    target = next(wanted, None)
                    if target is None:
                        return
        return
    # the map stage validated the records wanted (and skipped, under on_error="skip", the bad ones, which a
    # folder of .txt files or a CSV file reads again: they are passed over here, not raised)
    for lineno, rec in iter_records(path, [text_field], skipped=[]):
        if lineno == target:
            yield rec[text_field]
            target = next(wanted, None)
            if target is None:
                return


def read_texts(path: str | os.PathLike[str], ids: Iterable[str], read: ReadConfig | None = None) -> dict[str, str]:
    """The texts of the documents ``ids`` of a file or folder, read again (streamed; stops when all are found).

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
    records = iter_records(path, [cfg.id_field, cfg.text_field], _skip_list(cfg, None), _required(cfg))
    for doc in iter_documents(records, str(path), cfg, [], id_hashes=True):
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


def _field(rec: dict[str, Any], name: str, source: str, lineno: int, kinds: tuple[type, ...]) -> Any:
    if name not in rec:
        raise InputError(source, lineno, "missing field", name)
    value = rec[name]
    if value is None:
        raise InputError(source, lineno, "field is null", name)
    if isinstance(value, bool) or not isinstance(value, kinds):
        expected = " or ".join(k.__name__ for k in kinds)
        raise InputError(source, lineno, f"expected {expected}, got {type(value).__name__}", name)
    if isinstance(value, str) and (problem := text_problem(value)):
        raise InputError(source, lineno, problem, name)
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
