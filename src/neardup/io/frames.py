"""Python data in, the same kind of data out: lists of texts or records, pandas and polars DataFrames, Arrow
tables and datasets, Hugging Face ``datasets.Dataset`` (and a :class:`~neardup.io.read.Corpus`).

Owns recognising such an object (by its type's module: pandas, polars and datasets are imported only once one
of their objects is given), checking its ids and texts with errors naming the row and the field, turning its
rows into the records a run reads (ids as given, or row numbers), and selecting rows back into the same kind
of object (``selected``, ``duplicates``). Must not read files, decide anything about duplicates, or change
the values of the columns it hands back.

Ids: ``id_field`` names the column (key) holding them; without one, a row's number (0-based int), except that
records (dicts) keep reading their ``id`` key where they have one, as records always have. The engines name
documents by ``str(id)``; :meth:`Rows.public_ids` maps those names back to the ids as given, so an integer id
stays an integer in every result.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from neardup.io.read import Corpus, InputError, text_problem

if TYPE_CHECKING:
    import pyarrow as pa

    from neardup.config import ReadConfig
    from neardup.io.read import Document

#: The key records' ids are read from when ``id_field`` is not given, where they have one.
DEFAULT_ID = "id"
#: The columns ``duplicates`` adds: the id of the kept copy and the score of their pair (``neardup_``
#: before each where the input has a column of that name already).
COPY_OF, SCORE = "copy_of", "score"

ACCEPTED = ("a path or URL, a list of texts (str) or of records (dicts), a pandas or polars DataFrame, a pyarrow "
            "Table or Dataset, a Hugging Face datasets.Dataset, or a neardup Corpus")

#: What each kind is called in messages.
NAMES = {"texts": "list of texts", "records": "list of records", "series": "pandas Series",
         "pandas": "pandas DataFrame", "polars": "polars DataFrame", "arrow": "Arrow Table",
         "arrow-dataset": "Arrow Dataset", "hf": "datasets.Dataset", "corpus": "Corpus"}


class RowError(InputError):
    """A bad row of a Python object: the message names the object, the row (0-based) and the field.

    >>> str(RowError("pandas DataFrame", 3, "null text", "text"))
    "pandas DataFrame, row 3, field 'text': null text"
    """

    def __init__(self, what: str, row: int | None, message: str, field: str | None = None) -> None:
        where = what + (f", row {row}" if row is not None else "") + (f", field {field!r}" if field else "")
        ValueError.__init__(self, f"{where}: {message}")
        self.path, self.line, self.field, self.reason = what, row, field, message


def _module(data: Any) -> str:
    return type(data).__module__ or ""


def kind_of(data: Any) -> str:
    """The kind of a Python input (a key of :data:`NAMES`, or ``iterable``: a list or other iterable, of texts or
    records as its first item says, :func:`rows_of`); anything else is a :class:`TypeError` naming what was given
    and what is accepted.

    >>> import pyarrow as pa
    >>> kind_of(["a", "b"]), kind_of(pa.table({"text": ["a"]}))
    ('iterable', 'arrow')
    >>> kind_of(3)
    Traceback (most recent call last):
    ...
    TypeError: input is int: expected a path or URL, a list of texts (str) or of records (dicts), a pandas or polars DataFrame, a pyarrow Table or Dataset, a Hugging Face datasets.Dataset, or a neardup Corpus
    """
    mod, name = _module(data), type(data).__name__
    hint = ""
    if isinstance(data, Corpus):
        return "corpus"
    if mod.startswith("pandas"):
        if name == "DataFrame":
            return "pandas"
        if name == "Series":
            return "series"
    elif mod.startswith("polars"):
        if name == "DataFrame":
            return "polars"
        hint = " (collect a LazyFrame first: .collect())" if name == "LazyFrame" else ""
    elif mod.startswith("pyarrow"):
        import pyarrow as pa
        import pyarrow.dataset as pads

        if isinstance(data, (pa.Table, pa.RecordBatch)):
            return "arrow"
        if isinstance(data, pads.Dataset):
            return "arrow-dataset"
        hint = " (a table of ids and texts is wanted: pa.table({'text': ...}))" if "Array" in name else ""
    elif mod.startswith("datasets"):
        if name == "Dataset":
            return "hf"
        hint = {"DatasetDict": " (pick a split: data['train'])",
                "IterableDataset": " (give a datasets.Dataset: load it without streaming)"}.get(name, "")
    if not hint and isinstance(data, Iterable) and not isinstance(data, (str, bytes, bytearray, Mapping)):
        return "iterable"  # texts or records, told by the first item once listed (:func:`rows_of`)
    if isinstance(data, Mapping) and not hint:
        hint = " (a dict of columns: give pandas.DataFrame(d) or pyarrow.table(d); a record: give [d])"
    raise TypeError(f"input is {name}{hint}: expected {ACCEPTED}")


def _null(value: Any) -> bool:
    """None, NaN, or pandas' NA / NaT (nulls as a column of a DataFrame hands them out)."""
    return value is None or (isinstance(value, float) and value != value) or type(value).__name__ in ("NAType",
                                                                                                        "NaTType")


def _id_value(value: Any) -> Any:
    """An id as kept: a str, or an int (NumPy's integers made Python ints); anything else as given (refused)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value) is not int:
        return int(value)
    return value


class Rows:
    """The rows of a Python input: each row's id (as given, or its row number) and text, the object itself to
    select rows back from, and the columns a run asks for (``field``).

    >>> rows = rows_of(["a b", "c d", "a b"])
    >>> rows.ids, rows.take([0, 2])
    ([0, 1, 2], ['a b', 'a b'])
    """

    def __init__(self, kind: str, data: Any, ids: list[Any], texts: list[Any], id_field: str | None,
                 text_field: str, column: Callable[[str], list[Any] | None], names: Sequence[str],
                 table: pa.Table | None = None) -> None:
        self.kind, self.data = kind, data
        self.table = table  # the input as an Arrow table (Arrow kinds and Hugging Face datasets), read once
        self.ids, self.texts = ids, texts
        self.id_field = id_field  # the column the ids came from; None: row numbers
        self.text_field = text_field
        self._column, self.names = column, list(names)
        self._index: dict[str, int] | None = None

    @property
    def name(self) -> str:
        """What the input is called in messages (``pandas DataFrame``)."""
        return NAMES[self.kind]

    def __len__(self) -> int:
        return len(self.ids)

    def field(self, name: str) -> list[Any] | None:
        """The values of column (key) ``name``, one a row (None: no such column)."""
        return self._column(name)

    # -- checks ------------------------------------------------------------------------------------------

    def check(self) -> None:
        """Every row has an id (a str or an int, unique) and a text (a str, valid Unicode); else a
        :class:`RowError` naming the first row and field at fault."""
        id_name = self.id_field or DEFAULT_ID
        seen: dict[Any, int] = {}
        for row, (doc_id, text) in enumerate(zip(self.ids, self.texts)):
            if self.id_field is not None:
                if _null(doc_id):
                    raise RowError(self.name, row, "missing or null id", id_name)
                if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
                    raise RowError(self.name, row, f"an id must be a string or an integer, got {type(doc_id).__name__} "
                                                   f"{doc_id!r}"[:200], id_name)
                if isinstance(doc_id, str) and (problem := text_problem(doc_id)):
                    raise RowError(self.name, row, problem, id_name)
                key = str(doc_id)
                first = seen.setdefault(key, row)
                if first != row:
                    more = "" if self.kind == "records" else " (without id_field the rows are numbered)"
                    raise RowError(self.name, row, f"duplicate id {doc_id!r} (first at row {first}); ids must be "
                                                   f"unique{more}", id_name)
            if type(text) is not str:
                if _null(text):
                    raise RowError(self.name, row, "missing or null text", self.text_field)
                if not isinstance(text, str):
                    raise RowError(self.name, row, f"a text must be a string, got {type(text).__name__}",
                                   self.text_field)
            if not text.isascii() and (problem := text_problem(text)):
                raise RowError(self.name, row, problem, self.text_field)

    # -- into a run ----------------------------------------------------------------------------------------

    def read_config(self, read: ReadConfig) -> ReadConfig:
        """The read settings of :meth:`records`: their id and text fields, the error policy and ``max_chars``."""
        return read.replace(id_field=self.id_field or DEFAULT_ID, text_field=self.text_field)

    def records(self, keep: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
        """A record a row, as :meth:`read_config` reads them: the id, the text and the fields ``keep`` (None
        where the input has no such column). Nulls are None."""
        id_name = self.id_field or DEFAULT_ID
        extra = [(k, self.field(k)) for k in keep if k not in (id_name, self.text_field)]
        for row, (doc_id, text) in enumerate(zip(self.ids, self.texts)):
            rec = {id_name: None if _null(doc_id) else doc_id, self.text_field: None if _null(text) else text}
            for k, values in extra:
                rec[k] = values[row] if values is not None else None
            yield rec

    def corpus(self, read: ReadConfig, keep: Sequence[str] = (), label_field: str | None = None) -> Corpus:
        """The rows as a :class:`Corpus` (named ``<memory>``), read as a file's records are."""
        from neardup.io.read import read_records

        if self.kind == "corpus" and not keep and label_field is None:
            return self.data  # type: ignore[no-any-return]
        fields = list(keep) + ([label_field] if label_field else [])
        return read_records(self.records(fields), read=self.read_config(read), label_field=label_field, keep=keep)

    def batches(self, read: ReadConfig, batch_docs: int) -> Iterator[list[Document]]:
        """The rows as validated documents in lists of ``batch_docs`` (as :func:`~neardup.io.read.iter_batches`
        streams a file's)."""
        from neardup.io.read import record_batches

        return record_batches(self.records(), self.read_config(read), batch_docs)

    # -- back out ----------------------------------------------------------------------------------------

    def public_ids(self) -> Callable[[str], Any] | None:
        """How a document's name in a run (``str(id)``) maps back to its id as given: None where they are the
        same (every id a str), ``int`` where every id is an int, else a look-up."""
        kinds = {type(v) for v in self.ids if not _null(v)}
        if kinds <= {str}:
            return None
        if kinds <= {int}:
            return int
        table = {str(v): v for v in self.ids}
        return lambda name: table.get(name, name)

    def row_of(self, name: str) -> int:
        """The row of the document named ``name`` in a run (``str(id)``; the first row of that id)."""
        if self.id_field is None:
            return int(name)
        if self._index is None:
            index: dict[str, int] = {}
            for row, v in enumerate(self.ids):
                index.setdefault(str(v), row)
            self._index = index
        return self._index[name]

    def take(self, rows: Sequence[int]) -> Any:
        """The rows ``rows`` (ascending) as the same kind of object as the input, every column kept (an Arrow
        Dataset gives an Arrow Table; a pandas DataFrame keeps its index)."""
        rows = list(rows)
        kind, data = self.kind, self.data
        if kind in ("texts", "records"):
            return [data[i] for i in rows]
        if kind in ("pandas", "series"):
            return data.iloc[rows]
        if kind == "polars":
            return data[rows]
        if kind in ("arrow", "arrow-dataset"):
            import pyarrow as pa

            return self._table().take(pa.array(rows, type=pa.int64()))
        if kind == "hf":
            return data.select(rows)
        return data.subset(rows)  # a Corpus

    def take_linked(self, rows: Sequence[int], copy_of: list[Any], scores: list[float | None]) -> Any:
        """:meth:`take` with two columns more: :data:`COPY_OF` (the id of the kept copy) and :data:`SCORE`
        (their pair's score). A list of texts gives records ``{id, text, copy_of, score}``."""
        rows = list(rows)
        kind, data = self.kind, self.data
        copy_name, score_name = (n if n not in self.names else f"neardup_{n}" for n in (COPY_OF, SCORE))
        if kind in ("texts", "series", "corpus"):
            texts = self.texts
            return [{"id": self.ids[r], "text": texts[r], copy_name: c, score_name: s}
                    for r, c, s in zip(rows, copy_of, scores)]
        if kind == "records":
            return [{**data[r], copy_name: c, score_name: s} for r, c, s in zip(rows, copy_of, scores)]
        if kind == "pandas":
            out = data.iloc[rows].copy()
            out[copy_name] = copy_of
            out[score_name] = scores
            return out
        if kind == "polars":
            import polars as pl

            return data[rows].with_columns(pl.Series(copy_name, copy_of), pl.Series(score_name, scores,
                                                                                     dtype=pl.Float64))
        import pyarrow as pa

        table = self._table().take(pa.array(rows, type=pa.int64()))
        table = table.append_column(copy_name, _arrow_ids(copy_of)).append_column(score_name,
                                                                                   pa.array(scores, pa.float64()))
        if kind == "hf":
            import datasets

            return datasets.Dataset(table)
        return table

    def _table(self) -> pa.Table:
        if self.table is None:
            self.table = _arrow_table(self.kind, self.data)
        return self.table


def _arrow_ids(values: list[Any]) -> pa.Array:
    """Ids as an Arrow array: their own type, or strings where they mix types."""
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def _arrow_table(kind: str, data: Any) -> pa.Table:
    import pyarrow as pa

    if kind == "arrow-dataset":
        return data.to_table()
    if kind == "hf":
        return data.with_format("arrow")[:]  # the rows as selected (any indices mapping applied)
    return data if isinstance(data, pa.Table) else pa.Table.from_batches([data])


def rows_of(data: Any, text_field: str = "text", id_field: str | None = None, check: bool = True) -> Rows:
    """The :class:`Rows` of a Python input; ``check``: refuse a bad row (:meth:`Rows.check`).

    ``id_field``: the column (key) holding the ids, which must be there; None: the row numbers (records: their
    ``id`` key where they have one).

    >>> rows_of([{"id": 7, "text": "a"}, {"id": 9, "text": "b"}]).ids
    [7, 9]
    >>> rows_of([{"text": "a"}, {"text": "a"}]).ids
    [0, 1]
    >>> rows_of([{"id": 1, "text": "a"}, {"id": 1, "text": "b"}])
    Traceback (most recent call last):
    ...
    neardup.io.frames.RowError: list of records, row 1, field 'id': duplicate id 1 (first at row 0); ids must be unique
    """
    kind = kind_of(data)
    if kind == "iterable":
        items = data if isinstance(data, list) else list(data)
        kind = "records" if items and not isinstance(items[0], str) else "texts"
        for i, x in enumerate(items):
            if not (isinstance(x, str) if kind == "texts" else isinstance(x, Mapping)):
                hint = " (decode it to str first)" if isinstance(x, (bytes, bytearray)) else ""
                want = "a text (str), as item 0 is" if kind == "texts" else "a text (str) or a record (a mapping)"
                if i and kind == "records":
                    want = "a record (a mapping), as item 0 is"
                raise TypeError(f"input item {i} is {type(x).__name__}{hint}: expected {want}")
        data = items
    if kind == "corpus":
        rows = Rows("corpus", data, list(data.ids), list(data.texts), DEFAULT_ID, text_field,
                    lambda k: data.fields.get(k), ["id", "text", *data.fields])
        return rows
    table = _arrow_table(kind, data) if kind in ("arrow", "arrow-dataset", "hf") else None
    column, names = _columns(kind, data, table)
    if kind in ("texts", "series"):
        texts = column("")
        assert texts is not None
        rows = Rows(kind, data, list(range(len(texts))), texts, None, text_field, lambda k: None, [])
    else:
        texts = column(text_field)
        if texts is None:
            raise RowError(NAMES[kind], None, f"no column {text_field!r} (columns: {_listed(names)}); say which "
                                              "holds the text with text_field=", text_field)
        ids_field = id_field if id_field is not None else DEFAULT_ID if kind == "records" else None
        got = column(ids_field) if ids_field is not None else None
        if got is None and id_field is None:  # no id column: the rows are numbered
            ids_field, ids = None, list(range(len(texts)))
        else:
            if got is None:
                raise RowError(NAMES[kind], None, f"no column {ids_field!r} (columns: {_listed(names)}); say which "
                                                  "holds the ids with id_field=, or leave it out to number the rows",
                               ids_field)
            ids = [_id_value(v) for v in got]
        rows = Rows(kind, data, ids, texts, ids_field, text_field, column, names, table)
    if check:
        rows.check()
    return rows


def _listed(names: Sequence[str]) -> str:
    return ", ".join(map(str, names[:20])) + (", ..." if len(names) > 20 else "") if names else "none"


def _columns(kind: str, data: Any, table: pa.Table | None) -> tuple[Callable[[str], list[Any] | None], list[str]]:
    """How to read a column (by name) of ``data``, and its column names."""
    if kind == "texts":
        return (lambda _: data), []
    if kind == "series":
        return (lambda _: data.tolist()), []
    if kind == "records":
        names = list(dict.fromkeys(k for rec in data[:1000] for k in rec))
        present = set(names)

        def record_field(name: str) -> list[Any] | None:
            if name not in present and not any(name in rec for rec in data):
                return None
            return [rec.get(name) for rec in data]

        return record_field, names
    if kind == "pandas":
        names = [str(c) for c in data.columns]
        return (lambda name: data[name].tolist() if name in data.columns else None), names
    if kind == "polars":
        return (lambda name: data.get_column(name).to_list() if name in data.columns else None), list(data.columns)
    assert table is not None
    return (lambda name: table.column(name).to_pylist() if name in table.column_names else None), table.column_names


def describe(data: Any) -> str:
    """What a Python input is, for a summary (``pandas DataFrame``)."""
    return NAMES.get(kind_of(data), "list")


__all__ = ["COPY_OF", "DEFAULT_ID", "SCORE", "RowError", "Rows", "describe", "kind_of", "rows_of"]
