"""Arrow arrays made from their buffers (neardup.io.arrow) equal PyArrow's own conversion, type included,
for every kind of column neardup writes; what they cannot make is left to PyArrow, with its own errors."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from neardup.io.arrow import arrow_array, numpy_of

NUMERIC = st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float32, np.float64,
                           np.bool_])


def _same(values, type=None):
    made, expected = arrow_array(values, type), pa.array(values, type)
    assert made.type == expected.type and len(made) == len(expected) and made.null_count == expected.null_count
    if not made.equals(expected):  # NaN is not equal to itself: compared as NumPy compares it
        np.testing.assert_array_equal(made.to_numpy(zero_copy_only=False), expected.to_numpy(zero_copy_only=False))
    return made


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(NUMERIC, st.integers(0, 70)))
def test_numpy_numbers_and_booleans_equal_pyarrow_s_conversion(values):
    _same(values)
    _same(values[::2])  # not contiguous
    _same(values, pa.from_numpy_dtype(values.dtype))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(), max_size=40))
def test_strings_equal_pyarrow_s_conversion(values):
    _same(values)
    _same(tuple(values), pa.string())


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.lists(st.integers(-2**63, 2**63 - 1), max_size=30), st.lists(st.floats(), max_size=30)))
def test_python_numbers_equal_pyarrow_s_conversion(values):
    _same(values)


@pytest.mark.parametrize("values, type", [
    ([], None), ([], pa.string()), ((), pa.int64()), (["a", None], None), ([1, None], pa.int64()), ([1, 2.5], None),
    ([True, False], None), ([[1], [2, 3]], None), ([1, 2], pa.int32()), (np.arange(3), pa.int32()),
    (np.array(["x", "y"]), None), (np.arange(4).reshape(2, 2)[:, 0], None),
    (pa.array([1, 2]), None), (pa.array([1, 2]), pa.int32()),
])
def test_what_buffers_cannot_make_is_pyarrow_s_own(values, type):
    _same(values, type)


def test_pyarrow_s_errors_stay_its_own():
    for values in (["bad \ud800"], [2**64], np.arange(3, dtype=">i8")):
        with pytest.raises(Exception) as made:
            arrow_array(values)
        with pytest.raises(Exception) as expected:
            pa.array(values)
        assert made.type is expected.type


def test_a_string_column_past_32_bit_offsets_is_left_to_pyarrow(monkeypatch):
    import neardup.io.arrow as arrow

    monkeypatch.setattr(arrow, "MAX_STRING_BYTES", 5)
    calls, original = [], pa.array
    monkeypatch.setattr(arrow.pa, "array", lambda *a, **k: calls.append(a) or original(*a, **k))
    assert arrow_array(["abc", "def"]).to_pylist() == ["abc", "def"] and len(calls) == 1
    assert arrow_array(["ab", "c"]).to_pylist() == ["ab", "c"] and len(calls) == 1


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(NUMERIC, st.integers(0, 70)), st.data())
def test_numpy_of_a_column_equals_to_numpy(values, data):
    """Read back from buffers: sliced arrays (a bit offset for booleans) and columns of several such chunks."""
    array = pa.array(values)
    n = len(array)
    a = data.draw(st.integers(0, n))
    b = data.draw(st.integers(a, n))
    for column in (array, array[a:b], pa.chunked_array([array[a:b], array[b:], array[:a]], type=array.type),
                   pa.chunked_array([], type=array.type)):
        got, expected = numpy_of(column), column.to_numpy(zero_copy_only=False)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_numpy_of_a_column_with_nulls_is_pyarrow_s_own():
    column = pa.chunked_array([[1, None], [3]])
    np.testing.assert_array_equal(numpy_of(column), column.to_numpy(zero_copy_only=False))
