"""Bad input to the readers (issue 20): strict labels, line-level corruption skipped with
``on_error="skip"``, a UTF-8 BOM, lone surrogates, a CSV without the id column, a folder without
.txt files, and Python objects that are not texts or records."""

import gzip
import json

import pytest

import neardup
from neardup.config import ReadConfig
from neardup.eval.evaluate import load_labelled
from neardup.io.read import InputError, iter_batches, read_corpus, read_pair_labels
from neardup.online.evaluate import load_stream


def _lines(path, *lines, raw=b""):
    path.write_bytes(raw + b"".join((l if isinstance(l, bytes) else l.encode()) + b"\n" for l in lines))
    return path


# ---- 1. labels ---------------------------------------------------------------------------------
@pytest.mark.parametrize("label", ['"0"', "-1", "2", "0.7", "1.0", '"yes"', "null", "[1]", '{"x": 1}'])
def test_a_pair_label_other_than_0_1_true_false_is_an_error_naming_file_line_and_field(tmp_path, label):
    p = _lines(tmp_path / "pairs.jsonl", '{"a": "x", "b": "y", "label": 1}', f'{{"a": "x", "b": "z", "label": {label}}}')
    with pytest.raises(InputError) as err:
        read_pair_labels(p)
    assert str(err.value).startswith(f"{p}, line 2, field 'label': ")


@pytest.mark.parametrize("label, want", [("1", 1), ("0", 0), ("true", 1), ("false", 0)])
def test_pair_labels_0_1_true_false_are_read(tmp_path, label, want):
    p = _lines(tmp_path / "pairs.jsonl", f'{{"a": "x", "b": 7, "label": {label}}}')
    assert read_pair_labels(p) == [("x", "7", want)]


@pytest.mark.parametrize("field", ["a", "b"])
def test_a_pair_id_that_is_not_a_string_or_integer_is_an_error(tmp_path, field):
    rec = {"a": "x", "b": "y", "label": 1, field: 1.5}
    p = _lines(tmp_path / "pairs.jsonl", json.dumps(rec))
    with pytest.raises(InputError, match=rf"line 1, field '{field}'"):
        read_pair_labels(p)


@pytest.mark.parametrize("label", ["2.0", "true", "false", "[1]", '{"c": 1}', "1.5"])
def test_a_cluster_label_other_than_string_integer_or_null_is_an_error(tmp_path, label):
    p = _lines(tmp_path / "docs.jsonl", '{"id": "a", "text": "x", "cluster": "1"}',
               f'{{"id": "b", "text": "y", "cluster": {label}}}')
    with pytest.raises(InputError) as err:
        load_labelled(p)
    assert str(err.value).startswith(f"{p}, line 2, field 'cluster': ")
    with pytest.raises(InputError, match="line 2, field 'cluster'"):
        load_stream(p)


def test_cluster_labels_strings_integers_and_null_are_read(tmp_path):
    p = _lines(tmp_path / "docs.jsonl", '{"id": "a", "text": "x", "cluster": "c1"}',
               '{"id": "b", "text": "y", "cluster": 7}', '{"id": "c", "text": "z", "cluster": null}',
               '{"id": "d", "text": "w", "cluster": "c1"}')
    assert load_labelled(p).corpus.labels == ["c1", "7", None, "c1"]
    assert load_stream(p).labels == ["c1", "7", None, "c1"]


# ---- 2. --on-error skip skips line-level corruption --------------------------------------------
BAD_LINES = [
    (b"not json at all", "not valid JSON"),
    (b"[1, 2, 3]", "expected a JSON object"),
    (b'"a string"', "expected a JSON object"),
    (b'{"id": "q", "text": "truncated', "not valid JSON"),
]


@pytest.mark.parametrize("bad, reason", BAD_LINES)
def test_a_corrupt_jsonl_line_is_an_error_naming_the_line_or_with_skip_a_listed_skip(tmp_path, bad, reason):
    p = _lines(tmp_path / "d.jsonl", '{"id": "a", "text": "one"}', bad, '{"id": "b", "text": "two"}')
    with pytest.raises(InputError, match=rf"^{p}, line 2: {reason}"):
        read_corpus(p)
    corpus = read_corpus(p, on_error="skip")
    assert corpus.ids == ["a", "b"]
    [skip] = corpus.skipped
    assert skip["file"] == str(p) and skip["line"] == 2 and skip["reason"].startswith(reason)
    skipped: list = []
    assert [d.id for b in iter_batches(p, ReadConfig(on_error="skip"), 10, skipped) for d in b] == ["a", "b"]
    assert [s["line"] for s in skipped] == [2]


def test_skip_in_a_gzipped_file_and_a_csv_with_invalid_utf8(tmp_path):
    gz = tmp_path / "d.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"id": "a", "text": "one"}\n{oops\n{"id": "b", "text": "two"}\n'))
    assert read_corpus(gz, on_error="skip").ids == ["a", "b"]
    csv = tmp_path / "d.csv"
    csv.write_bytes(b"id,text\na,one\nq,bad \xff byte\nb,two\n")
    with pytest.raises(InputError, match=rf"^{csv}, line 3, field 'text': invalid UTF-8 at byte 4 of the field \(0xff\)"):
        read_corpus(csv)
    corpus = read_corpus(csv, on_error="skip")  # issue 58: a bad byte is replaced, the row kept
    assert corpus.ids == ["a", "q", "b"] and corpus.texts[1] == "bad \ufffd byte" and not corpus.skipped


def test_an_invalid_utf8_jsonl_line_names_its_byte_or_with_skip_is_read_with_the_byte_replaced(tmp_path):
    """Issue 58: a bad byte is an error naming file, line and byte offset; under on_error="skip" it is replaced
    (U+FFFD) and the record kept (it was skipped whole)."""
    p = _lines(tmp_path / "d.jsonl", '{"id": "a", "text": "one"}', b'{"id": "q", "text": "\xff\xfe broken"}',
               '{"id": "b", "text": "two"}')
    with pytest.raises(InputError, match=rf"^{p}, line 2: invalid UTF-8 at byte 21 of the line \(0xff\)"):
        read_corpus(p)
    corpus = read_corpus(p, on_error="skip")
    assert corpus.ids == ["a", "q", "b"] and corpus.texts[1] == "\ufffd\ufffd broken" and not corpus.skipped
    assert [d.text for b in iter_batches(p, ReadConfig(on_error="skip"), 10) for d in b][1] == "\ufffd\ufffd broken"


def test_a_truncated_gzip_file_is_a_clear_error(tmp_path):
    data = gzip.compress(b"".join(b'{"id": "%d", "text": "some words here"}\n' % i for i in range(2000)))
    p = tmp_path / "d.jsonl.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=rf"^{p}, line \d+: .*gzip"):
        read_corpus(p)
    bad = tmp_path / "e.jsonl.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(InputError, match=rf"^{bad}.*gzip"):
        read_corpus(bad)


# ---- 3. a UTF-8 BOM ----------------------------------------------------------------------------
def test_a_utf8_bom_is_accepted_in_jsonl_and_csv(tmp_path):
    bom = b"\xef\xbb\xbf"
    j = _lines(tmp_path / "d.jsonl", '{"id": "a", "text": "one"}', '{"id": "b", "text": "two"}', raw=bom)
    c = _lines(tmp_path / "d.csv", "id,text", "a,one", "b,two", raw=bom)
    g = tmp_path / "d.jsonl.gz"
    g.write_bytes(gzip.compress(j.read_bytes()))
    for p in (j, c, g):
        corpus = read_corpus(p)
        assert corpus.ids == ["a", "b"] and corpus.texts == ["one", "two"]
    p = _lines(tmp_path / "pairs.jsonl", '{"a": "a", "b": "b", "label": 1}', raw=bom)
    assert read_pair_labels(p) == [("a", "b", 1)]


# ---- 7. lone surrogates in a file --------------------------------------------------------------
@pytest.mark.parametrize("field", ["id", "text"])
def test_a_lone_surrogate_is_an_error_naming_file_line_and_field(tmp_path, field):
    rec = {"id": "b", "text": "two words"}
    rec[field] = rec[field] + "\ud800"
    p = tmp_path / "d.jsonl"
    p.write_text('{"id": "a", "text": "one"}\n' + json.dumps(rec) + "\n")  # json.dumps writes it as \ud800
    with pytest.raises(InputError, match=rf"^{p}, line 2, field '{field}': .*surrogate"):
        read_corpus(p)
    assert read_corpus(p, on_error="skip").ids == ["a"]


def test_a_lone_surrogate_in_python_input_is_an_input_error():
    with pytest.raises(InputError, match="row 1, field 'text': .*surrogate"):
        neardup.dedup(["fine text", "bad \udc80 text"])


# ---- 9. smaller ones ---------------------------------------------------------------------------
def test_a_csv_without_a_named_column_lists_its_columns_and_suggests_the_option(tmp_path):
    """Issue 58: without an ``id`` column the ids are row numbers; a column named (--id-field, --text-field)
    that is not there is an error listing the columns."""
    p = _lines(tmp_path / "d.csv", "doc,body", "1,hello")
    with pytest.raises(InputError) as err:
        read_corpus(p, id_field="key")
    msg = str(err.value)
    assert msg.startswith(f"{p}, line 1, field 'key': ") and "doc, body" in msg and "--id-field" in msg
    with pytest.raises(InputError, match="--id-field"):  # skipping every row would hide it
        read_corpus(p, id_field="key", on_error="skip")
    with pytest.raises(InputError, match=r"field 'text': .*doc, body.*--text-field"):
        read_corpus(p, id_field="doc")
    with pytest.raises(InputError, match=r"field 'text': .*doc, body.*--text-field"):
        read_corpus(p)
    assert read_corpus(p, text_field="body").ids == ["0"]


def test_a_folder_is_read_for_its_txt_files_only(tmp_path):
    md = tmp_path / "md"
    md.mkdir()
    (md / "a.md").write_text("# notes")
    (md / "b.md").write_text("# more notes")
    with pytest.raises(InputError, match=r"no \.txt files.*a\.md"):
        read_corpus(md)
    (md / "c.txt").write_text("a document")
    assert read_corpus(md).ids == ["c.txt"]


@pytest.mark.parametrize("engine", ["local", "memory"])
def test_a_txt_file_that_is_not_utf8_is_read_replaced_and_the_run_completes_with_evidence(tmp_path, engine):
    """Issue 55: with --on-error skip, a folder of .txt files with one that is not UTF-8 skipped it when read,
    then the evidence stage read the folder again and crashed on it, leaving clusters and pairs without a summary
    (and the run again was refused). Issue 58: without skip the error names file, line and byte; with it the
    bad bytes are replaced (U+FFFD), the file is read, and the run completes, evidence included."""
    from typer.testing import CliRunner

    from neardup.cli import app

    folder = tmp_path / "docs"
    folder.mkdir()
    body = " ".join(f"word{i % 97} term{i % 13}" for i in range(300))
    for i in range(4):
        (folder / f"d{i}.txt").write_text(f"{body} ending {i}")
    (folder / "bad.txt").write_bytes(body.encode() + b" \xff\xfe")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["dedup", str(folder), "-o", str(out), "--engine", engine, "-q"])
    assert res.exit_code == 2
    assert f"{folder / 'bad.txt'}, line 1: invalid UTF-8 at byte {len(body) + 1} of the file (0xff)" in res.output
    res = CliRunner().invoke(app, ["dedup", str(folder), "-o", str(out), "--engine", engine, "--on-error", "skip",
                                   "-q"])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_docs"] == 5 and summary["n_duplicates"] == 4 and summary["skipped_records"] == []
    assert len(neardup.DedupResult.load(out).evidence()) == 4
    names = {p.name for p in out.iterdir()}
    assert {"clusters.parquet", "evidence.parquet", "pairs.parquet", "summary.json"} <= names
    assert not [n for n in names if n.startswith(".")]  # no work directory, temporary file or lock left


@pytest.mark.parametrize("items, words", [
    (["a text", None], "item 1 is None"),
    ([b"a text", b"b"], "item 0 is bytes"),
    (["a text", b"b"], "item 1 is bytes"),
    ([{"id": "a", "text": "x"}, "b"], "item 1 is str"),
    ([7], "item 0 is int"),
])
def test_the_api_given_none_or_bytes_says_what_it_expected(items, words):
    with pytest.raises(TypeError, match=words):
        neardup.dedup(items)


def test_the_api_given_bytes_or_none_as_the_input_says_what_it_expected():
    for data in (None, b"some bytes"):
        with pytest.raises(TypeError, match="expected a path"):
            neardup.dedup(data)
