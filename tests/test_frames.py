"""Python data in, the same kind of data out (issue 58): ``neardup.dedup`` and ``neardup.match`` take lists of
texts or records, pandas and polars DataFrames, Arrow tables and datasets and Hugging Face datasets; ids keep
their type in every result; ``selected`` / ``duplicates`` / ``clean`` give rows back as the same kind of object."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.dataset as pads
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neardup
from neardup import EngineConfig
from neardup.io.frames import COPY_OF, SCORE, RowError

TEXTS = ["Shares in Harbor Lines rose 5 percent on Monday after strong results.",
         "shares in harbor lines rose 5 percent on monday after strong results",
         "The weather service warned of storms along the northern coast on Friday.",
         "A new library opened in the old town hall, with a reading room for children.",
         "the weather service warned of storms along the northern coast on friday"]
IDS = [101, 205, 3, 47, 58]  # integers, not in row order
#: What every input kind must decide on TEXTS: rows 1 and 4 are copies of rows 0 and 2.
KEPT = [True, False, True, True, False]
COPY_ROW = {1: 0, 4: 2}
LOCAL = EngineConfig(name="local", workers=1, progress=False, batch_docs=2)


def _columns() -> dict[str, list]:
    return {"id": IDS, "text": TEXTS, "n": [1.5, None, 3.0, 4.0, 5.0], "tag": ["a", "b", None, "d", "e"]}


def _records() -> list[dict]:
    cols = _columns()
    return [{k: cols[k][i] for k in cols} for i in range(len(TEXTS))]


def _check_decisions(result: neardup.DedupResult, ids: list) -> None:
    """One decision per row, in input order, ids of the input's own type; removed rows name their kept copy."""
    decisions = result.decisions
    assert [d["id"] for d in decisions] == ids
    assert all(type(d["id"]) is type(i) for d, i in zip(decisions, ids))
    assert [d["kept"] for d in decisions] == KEPT
    for row, kept_row in COPY_ROW.items():
        assert decisions[row]["copy_of"] == ids[kept_row] and type(decisions[row]["copy_of"]) is type(ids[kept_row])
    assert result.representatives == [i for i, k in zip(ids, KEPT) if k]
    assert result.groups() == [[ids[0], ids[1]], [ids[2], ids[4]]]
    assert {(a, b) for a, b, _ in result.pairs_by_id()} == {(ids[0], ids[1]), (ids[2], ids[4])}


# -- one test per input kind --------------------------------------------------------------------------------


def test_a_list_of_texts_gives_row_numbers_and_lists_back():
    r = neardup.dedup(TEXTS)
    _check_decisions(r, [0, 1, 2, 3, 4])
    assert r.selected == [t for t, k in zip(TEXTS, KEPT) if k]
    assert r.duplicates == [{"id": 1, "text": TEXTS[1], COPY_OF: 0, SCORE: r.decisions[1]["score"]},
                            {"id": 4, "text": TEXTS[4], COPY_OF: 2, SCORE: r.decisions[4]["score"]}]
    assert all(d[SCORE] >= r.summary["params"]["threshold"] for d in r.duplicates)


def test_records_with_an_id_keep_it_and_its_type():
    records = _records()
    r = neardup.dedup(records)  # the id key, as records always had it
    _check_decisions(r, IDS)
    assert r.selected == [rec for rec, k in zip(records, KEPT) if k]  # every field kept
    assert r.duplicates == [{**records[1], COPY_OF: IDS[0], SCORE: r.decisions[1]["score"]},
                            {**records[4], COPY_OF: IDS[2], SCORE: r.decisions[4]["score"]}]
    by_field = neardup.dedup([{"doc": f"d{i}", "body": t} for i, t in enumerate(TEXTS)], id_field="doc",
                             text_field="body")
    _check_decisions(by_field, [f"d{i}" for i in range(5)])


def test_records_without_an_id_get_row_numbers():
    # before: "<memory>, line 1, field 'id': missing"
    records = [{"text": t, "source": f"s{i}"} for i, t in enumerate(TEXTS)]
    r = neardup.dedup(records)
    _check_decisions(r, [0, 1, 2, 3, 4])
    assert r.selected == [rec for rec, k in zip(records, KEPT) if k]
    assert [d[COPY_OF] for d in r.duplicates] == [0, 2]


def test_a_pandas_dataframe_in_a_pandas_dataframe_out():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(_columns(), index=[f"r{i}" for i in range(5)])
    r = neardup.dedup(df, id_field="id")
    _check_decisions(r, IDS)
    pd.testing.assert_frame_equal(r.selected, df[KEPT])  # every column, the index kept, input order
    pd.testing.assert_frame_equal(df[df.id.isin(r.representatives)], df[KEPT])  # ints, not strings
    dups = r.duplicates
    pd.testing.assert_frame_equal(dups[list(df.columns)], df[[not k for k in KEPT]])
    assert dups[COPY_OF].tolist() == [IDS[0], IDS[2]] and dups[SCORE].notna().all()
    rows = neardup.dedup(df)  # no id_field: row numbers, whatever columns there are
    _check_decisions(rows, [0, 1, 2, 3, 4])
    pd.testing.assert_frame_equal(rows.selected, df[KEPT])


def test_a_polars_dataframe_in_a_polars_dataframe_out():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(_columns())
    r = neardup.dedup(df, id_field="id")
    _check_decisions(r, IDS)
    assert r.selected.equals(df.filter(pl.Series(KEPT)))
    dups = r.duplicates
    assert dups.select(df.columns).equals(df.filter(~pl.Series(KEPT)))
    assert dups[COPY_OF].to_list() == [IDS[0], IDS[2]] and dups[SCORE].null_count() == 0


def test_an_arrow_table_in_an_arrow_table_out():
    # before: TypeError
    table = pa.table(_columns())
    r = neardup.dedup(table, id_field="id")
    _check_decisions(r, IDS)
    assert r.selected.equals(table.filter(pa.array(KEPT)))
    dups = r.duplicates
    assert dups.select(table.column_names).equals(table.filter(pa.array([not k for k in KEPT])))
    assert dups.column(COPY_OF).to_pylist() == [IDS[0], IDS[2]]
    _check_decisions(neardup.dedup(pa.RecordBatch.from_pydict(_columns())), [0, 1, 2, 3, 4])


def test_an_arrow_dataset_gives_an_arrow_table():
    table = pa.table(_columns())
    r = neardup.dedup(pads.dataset(table), id_field="id")
    _check_decisions(r, IDS)
    assert isinstance(r.selected, pa.Table) and r.selected.equals(table.filter(pa.array(KEPT)))


def test_a_hugging_face_dataset_in_a_dataset_out():
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict(_columns())
    r = neardup.dedup(ds, id_field="id")
    _check_decisions(r, IDS)
    assert isinstance(r.selected, datasets.Dataset)
    assert r.selected.to_list() == [rec for rec, k in zip(ds.to_list(), KEPT) if k]
    dups = r.duplicates
    assert isinstance(dups, datasets.Dataset) and dups[COPY_OF] == [IDS[0], IDS[2]]
    assert dups.features["n"] == ds.features["n"]
    # a selection of a dataset (an indices mapping over its table) is read as selected
    subset = ds.select([4, 3, 2])
    sub = neardup.dedup(subset, id_field="id")
    assert [d["id"] for d in sub.decisions] == [58, 47, 3] and sub.selected.to_list() == subset.select([1, 2]).to_list()


def test_a_corpus_of_columns_keeps_columns_named_copy_of_and_score():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"text": TEXTS, "score": [0.1, 0.2, 0.3, 0.4, 0.5], "copy_of": list("abcde")})
    dups = neardup.dedup(df).duplicates
    assert dups["score"].tolist() == [0.2, 0.5] and dups["copy_of"].tolist() == ["b", "e"]  # the input's own
    assert dups[f"neardup_{COPY_OF}"].tolist() == [0, 2] and dups[f"neardup_{SCORE}"].notna().all()


def test_a_path_input_selects_an_arrow_table_of_its_records(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(rec) + "\n" for rec in _records()))
    r = neardup.dedup(path)
    assert [d["id"] for d in r.decisions] == [str(i) for i in IDS]  # ids as read, as before
    assert r.selected.to_pylist() == [rec for rec, k in zip(_records(), KEPT) if k]
    assert r.duplicates.column(COPY_OF).to_pylist() == [str(IDS[0]), str(IDS[2])]


# -- what was silently wrong (issue 58) ------------------------------------------------------------------


def test_a_three_row_dataframe_is_three_documents_not_its_column_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"id": [1, 2, 3], "text": TEXTS[:3], "text_copy": TEXTS[:3]})  # before: 2 "documents"
    r = neardup.dedup(df)
    assert r.summary["n_docs"] == 3 and [d["id"] for d in r.decisions] == [0, 1, 2]


def test_integer_ids_filter_the_frame_they_came_from():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(_columns())
    for data in (df, df.to_dict("records")):
        reps = neardup.dedup(data, id_field="id").representatives
        assert len(df[df.id.isin(reps)]) == sum(KEPT)  # before: 0 rows (ids came back as strings)


def test_python_input_on_the_local_engine_keeps_typed_ids_and_gives_rows_back():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(_columns())
    r = neardup.dedup(df, id_field="id", engine=LOCAL)
    _check_decisions(r, IDS)
    pd.testing.assert_frame_equal(r.selected, df[KEPT])
    assert r.duplicates[COPY_OF].tolist() == [IDS[0], IDS[2]]
    texts = neardup.dedup(TEXTS, engine=LOCAL)
    _check_decisions(texts, [0, 1, 2, 3, 4])
    assert texts.selected == [t for t, k in zip(TEXTS, KEPT) if k]


def test_a_rethresholded_result_keeps_the_ids_and_rows_of_its_input():
    records = _records()
    r = neardup.dedup(records).rethreshold(0.99 * neardup.dedup(records).summary["params"]["threshold"] + 0.01)
    _check_decisions(r, IDS)
    assert r.selected == [rec for rec, k in zip(records, KEPT) if k]


def test_unsupported_input_is_a_type_error_naming_what_was_given_and_what_is_accepted():
    for bad, named in [(3, "int"), ({"text": TEXTS}, "dict"), (b"bytes", "bytes"), (None, "NoneType")]:
        with pytest.raises(TypeError, match=rf"input is {named}.*expected a path or URL, .*pandas"):
            neardup.dedup(bad)
    with pytest.raises(TypeError, match=r"input item 1 is int"):
        neardup.dedup(["a text", 7])
    datasets = pytest.importorskip("datasets")
    with pytest.raises(TypeError, match=r"DatasetDict \(pick a split"):
        neardup.dedup(datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": TEXTS})}))


def test_null_texts_duplicate_ids_and_missing_columns_name_the_row_and_field():
    pd = pytest.importorskip("pandas")
    with pytest.raises(RowError, match=r"^pandas DataFrame, row 2, field 'text': missing or null text"):
        neardup.dedup(pd.DataFrame({"text": ["a b", "c d", None]}))
    with pytest.raises(ValueError, match=r"^pandas DataFrame, row 2, field 'id': duplicate id 7 \(first at row 0\)"):
        neardup.dedup(pd.DataFrame({"id": [7, 8, 7], "text": ["a", "b", "c"]}), id_field="id")
    with pytest.raises(ValueError, match=r"row 1, field 'id': missing or null id"):
        neardup.dedup([{"id": "a", "text": "x"}, {"text": "y"}])
    with pytest.raises(ValueError, match=r"no column 'body' \(columns: id, text\)"):
        neardup.dedup(pa.table({"id": [1], "text": ["x"]}), text_field="body")
    with pytest.raises(ValueError, match=r"row 0, field 'text': a text must be a string, got int"):
        neardup.dedup(pa.table({"text": [1, 2]}))
    skipped = neardup.dedup(pd.DataFrame({"text": [TEXTS[0], None, TEXTS[1]]}), on_error="skip")
    assert [d["id"] for d in skipped.decisions] == [0, 2] and skipped.summary["n_skipped_records"] == 1


# -- random frames -------------------------------------------------------------------------------------------

WORDS = ("port bridge council storm grain market shares rose fell monday friday city river school library "
         "coast warned results budget plan workers union strike rail bank rates").split()


@st.composite
def frames(draw: st.DrawFn) -> tuple:
    """A pandas frame of 1 to 16 rows: random texts, some of them copies (exact, or case and punctuation
    changed) of earlier rows; an int or str id column in random order; extra columns of mixed types."""
    pd = pytest.importorskip("pandas")
    n_base = draw(st.integers(1, 10))
    base = [" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=6, max_size=14))) for _ in range(n_base)]
    copies = draw(st.lists(st.tuples(st.integers(0, n_base - 1), st.sampled_from(["same", "upper", "dot"])),
                           max_size=6))
    texts = base + [{"same": base[i], "upper": base[i].upper(), "dot": base[i] + "."}[how] for i, how in copies]
    order = draw(st.permutations(range(len(texts))))
    texts = [texts[i] for i in order]
    n = len(texts)
    int_ids = draw(st.booleans())
    ids = draw(st.lists(st.integers(-10**12, 10**12) if int_ids else st.text("abcxyz019-", min_size=0, max_size=6),
                        min_size=n, max_size=n, unique=True))
    cols = {"id": ids, "text": texts,
            "mixed": draw(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3), st.booleans()),
                                   min_size=n, max_size=n)),
            "x": draw(st.lists(st.floats(allow_nan=True), min_size=n, max_size=n)),
            "when": pd.to_datetime(draw(st.lists(st.integers(0, 10**9), min_size=n, max_size=n)), unit="s")}
    return pd.DataFrame(cols), draw(st.sampled_from(["id", None]))


@given(frame=frames(), data=st.data())
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_random_frames_select_the_rows_their_decisions_keep(frame, data):
    pd = pytest.importorskip("pandas")
    df, id_field = frame
    ids = df["id"].tolist() if id_field else list(range(len(df)))
    r = neardup.dedup(df, id_field=id_field, method="minhash")
    decisions = r.decisions
    assert [d["id"] for d in decisions] == ids and all(type(d["id"]) is type(i) for d, i in zip(decisions, ids))
    kept = [d["kept"] for d in decisions]
    pd.testing.assert_frame_equal(r.selected, df[kept])
    key = df["id"] if id_field else pd.Series(range(len(df)), index=df.index)
    pd.testing.assert_frame_equal(df[key.isin(r.representatives).tolist()], df[kept])
    dups = r.duplicates
    pd.testing.assert_frame_equal(dups[list(df.columns)], df[[not k for k in kept]])
    assert set(dups[COPY_OF].tolist()) <= set(r.representatives)
    kept_for: dict[str, set] = {}  # identical texts: one kept document for all of them
    for text, d in zip(df["text"], decisions):
        kept_for.setdefault(text, set()).add(d["id"] if d["kept"] else d["copy_of"])
    assert all(len(originals) == 1 for originals in kept_for.values()), kept_for

    # a null text, or a repeated id, is the clear error naming the row and the field
    row = data.draw(st.integers(0, len(df) - 1))
    broken = df.copy()
    broken.loc[broken.index[row], "text"] = data.draw(st.sampled_from([None, float("nan")]))
    with pytest.raises(ValueError, match=rf"^pandas DataFrame, row {row}, field 'text': missing or null text"):
        neardup.dedup(broken, id_field=id_field)
    if len(df) > 1:
        later = data.draw(st.integers(1, len(df) - 1))
        repeated = df.copy()
        repeated.loc[repeated.index[later], "id"] = df["id"].iloc[0]
        with pytest.raises(ValueError, match=rf"^pandas DataFrame, row {later}, field 'id': duplicate id"):
            neardup.dedup(repeated, id_field="id")


# -- match ---------------------------------------------------------------------------------------------------


def test_match_takes_objects_and_clean_gives_the_queries_without_a_copy():
    pd = pytest.importorskip("pandas")
    queries = pd.DataFrame({"qid": [10, 11, 12], "text": [TEXTS[1], TEXTS[3].upper(), "an unrelated question"],
                            "task": ["a", "b", "b"]})
    corpus = [TEXTS[0], TEXTS[2], TEXTS[3]]  # before: a raw TypeError from os.fspath
    found = neardup.match(queries, corpus, id_field="qid", batch_docs=1)
    assert found.matches() == [(10, 0, pytest.approx(1.0)), (11, 2, pytest.approx(1.0))]
    assert found.leaked() == {10, 11} and [d["id"] for d in found.decisions] == [10, 11, 12]
    pd.testing.assert_frame_equal(found.clean(queries), queries.iloc[[2]])
    texts = neardup.match(list(queries["text"]), pa.table({"text": corpus}))
    assert texts.clean(list(queries["text"])) == ["an unrelated question"]
    assert texts.summary["queries"] == "<list of texts>" and texts.summary["corpus"] == "<Arrow Table>"
    with pytest.raises(ValueError, match="not the queries matched"):
        found.clean(queries.iloc[:2])


def test_match_of_a_file_cleans_it_into_an_arrow_table(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "text": t, "n": i}) + "\n"
                            for i, t in enumerate([TEXTS[1], "an unrelated question"])))
    found = neardup.match(path, TEXTS[:1])
    assert found.clean(path).to_pylist() == [{"id": "q1", "text": "an unrelated question", "n": 1}]
