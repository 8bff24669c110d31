"""Arrow arrays made from their buffers, and read back: the columns neardup writes, converted without importing pandas.

Owns turning NumPy arrays of numbers or booleans and lists of strings, integers or floats into Arrow arrays
equal (``Array.equals``, same type) to what ``pyarrow.array`` makes of them, and Arrow columns of numbers or
booleans without nulls back into the NumPy arrays ``to_numpy`` gives (:func:`numpy_of`; ``to_numpy`` too
imports pandas on its first call). PyArrow's own conversion first
asks whether its argument is a pandas object, and so imports pandas, where it is installed, the first time a
process converts anything: 0.15-0.3 s (0.9 s from a cold disk), more than the rest of a small run's start-up
(docs/speed.md, "Start-up"). Made from their buffers, the arrays need no such question. Anything else (nulls,
nested values, other types, a string column past 2 GiB) is left to ``pyarrow.array``.

Must not read or write files, nor decide a column's type: that is its caller's (``type``), or the one
``pyarrow.array`` would infer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

#: The largest total of bytes an Arrow ``string`` column (32-bit offsets) holds.
MAX_STRING_BYTES = 2**31 - 1


def arrow_array(values: Any, type: pa.DataType | None = None) -> pa.Array | pa.ChunkedArray:
    """``values`` as an Arrow array of ``type`` (None: the type ``pyarrow.array`` infers), the same array
    ``pyarrow.array(values, type)`` makes, built from buffers where it can (see the module docstring).

    >>> arrow_array(np.array([3, 1], dtype=np.uint32)).to_pylist(), arrow_array(["a", "é"]).type
    ([3, 1], DataType(string))
    >>> arrow_array(np.array([True, False, True])).to_pylist(), arrow_array([1.5, 2.0], pa.float64()).type
    ([True, False, True], DataType(double))
    """
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values if type is None or values.type == type else pa.array(values, type)
    made = _from_numpy(values, type) if isinstance(values, np.ndarray) else \
        _from_sequence(values, type) if isinstance(values, (list, tuple)) else None
    return pa.array(values, type) if made is None else made


def _from_numpy(values: np.ndarray, type: pa.DataType | None) -> pa.Array | None:
    """A one-dimensional NumPy array of numbers or booleans in native byte order, whose type is ``type``."""
    if values.ndim != 1 or values.dtype.kind not in "iufb" or not values.dtype.isnative:
        return None
    kind = pa.from_numpy_dtype(values.dtype)
    if type is not None and type != kind:
        return None
    if values.dtype.kind == "b":
        data = np.packbits(values, bitorder="little")
    else:
        data = np.ascontiguousarray(values)
    return pa.Array.from_buffers(kind, int(values.size), [None, pa.py_buffer(data)])


def _from_sequence(values: Sequence[Any], type: pa.DataType | None) -> pa.Array | None:
    """A list or tuple of only strings, only integers (within 64 bits) or only floats, none of them None."""
    if not values:
        return pa.nulls(0, type)
    first = values[0].__class__
    if first not in (str, int, float) or any(v.__class__ is not first for v in values):
        return None
    if first is str:
        return _strings(values, type)
    dtype = np.int64 if first is int else np.float64
    try:
        array = np.array(values, dtype=dtype)
    except OverflowError:  # an integer past 64 bits: pyarrow.array's own error
        return None
    return _from_numpy(array, type)


def _strings(values: Sequence[str], type: pa.DataType | None) -> pa.Array | None:
    """Strings as an Arrow ``string`` array: their UTF-8 bytes end to end, and where each starts."""
    if type is not None and type != pa.string():
        return None
    try:
        encoded = [v.encode("utf-8") for v in values]
    except UnicodeEncodeError:  # a lone surrogate: pyarrow.array's own error
        return None
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    if offsets[-1] > MAX_STRING_BYTES:
        return None
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets.astype(np.int32)),
                                                              pa.py_buffer(b"".join(encoded))])


def with_nulls(array: pa.Array, valid: np.ndarray) -> pa.Array:
    """``array`` (no nulls, no offset: as :func:`arrow_array` makes it) with a null where ``valid`` is False, from
    buffers (``pyarrow.array(..., mask=...)`` imports pandas).

    >>> with_nulls(arrow_array(np.array([1.5, 2.0])), np.array([True, False])).to_pylist()
    [1.5, None]
    >>> with_nulls(arrow_array(["a", ""]), np.array([False, True])).to_pylist()
    [None, '']
    """
    valid = np.asarray(valid, dtype=bool)
    if valid.all():
        return array
    if array.offset or array.null_count:
        raise ValueError("with_nulls takes an array with no offset and no nulls")
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(array.type, len(array), [bitmap, *array.buffers()[1:]],
                                 null_count=int(valid.size - valid.sum()))


#: The NumPy type of each Arrow type :func:`numpy_of` reads from buffers.
_NUMPY_TYPES = {pa.from_numpy_dtype(np.dtype(t)): np.dtype(t) for t in
                (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32,
                 np.float64, np.bool_)}


def numpy_of(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column of numbers or booleans as the NumPy array ``column.to_numpy(zero_copy_only=False)`` gives, read
    from its buffers where it has no nulls (a copy; anything else is left to ``to_numpy``).

    >>> numpy_of(pa.chunked_array([[1, 2], [3]])).tolist(), numpy_of(pa.array([True, False, True])[1:]).tolist()
    ([1, 2, 3], [False, True])
    >>> numpy_of(pa.array([1.5, None, 2.0])[1:]).tolist()
    [nan, 2.0]
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    dtype = _NUMPY_TYPES.get(column.type)
    if dtype is None or (column.null_count and dtype.kind != "f"):
        return column.to_numpy(zero_copy_only=False)
    out = np.empty(len(column), dtype=dtype)
    at = 0
    for chunk in chunks:
        n, data = len(chunk), chunk.buffers()[1]
        if n and dtype.kind == "b":
            out[at : at + n] = _bits(data, chunk.offset, n)
        elif n:
            out[at : at + n] = np.frombuffer(data, dtype=dtype, count=chunk.offset + n)[chunk.offset :]
            if chunk.null_count:  # a float's nulls read as NaN, as to_numpy gives them
                out[at : at + n][~_bits(chunk.buffers()[0], chunk.offset, n)] = np.nan
        at += n
    return out


def _bits(buffer: pa.Buffer, offset: int, n: int) -> np.ndarray:
    """Bits ``[offset, offset + n)`` of an Arrow bitmap as booleans."""
    return np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little", count=offset + n)[offset:].astype(bool)


__all__ = ["MAX_STRING_BYTES", "arrow_array", "numpy_of", "with_nulls"]
