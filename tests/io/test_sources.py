"""Issue 58, the files half: inputs a pipeline produces (several files, globs, folders of shards, a JSON array,
stdin spooled), ids that are row numbers where the records have none, ``encoding``, errors that list a record's
fields, and ``--keep`` in the format its name asks for. Each test failed before the change."""

from __future__ import annotations

import csv
import gzip
import io
import json
import sys
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import neardup
from neardup.config import ConfigError, ReadConfig
from neardup.io.keep import keep_format, write_kept
from neardup.io.read import InputError, iter_batches, read_corpus, read_texts, source_exists, texts_at
from neardup.io.read import resolve_sources as resolve
from neardup.io.sources import STDIN_NAME, ReadMeter, Sources, StdinSpool, input_paths, is_sources, spool_stdin
from neardup.io.write import OutputError, check_outputs

#: Folder names a shell or a user may well give: spaces, non-ASCII, a leading dash.
HOSTILE = ["with space", "ünïcødé ✓", "-dash", "--double"]


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _records(start: int, n: int) -> list[dict]:
    return [{"id": f"d{i}", "text": f"text number {i} about topic {i % 3}", "extra": i} for i in range(start, start + n)]


# ---- several files, globs, folders of shards ---------------------------------------------------------
@pytest.mark.parametrize("name", HOSTILE)
def test_several_files_read_as_one_in_order_with_errors_naming_their_own_file(tmp_path, name):
    folder = tmp_path / name
    a = _jsonl(folder / "a part.jsonl", _records(0, 3))
    b = _jsonl(folder / "b-ü.jsonl", _records(3, 2))
    corpus = read_corpus([a, b])
    assert corpus.ids == [f"d{i}" for i in range(5)] and corpus.source == [str(a), str(b)]
    _jsonl(b, [{"id": "d9", "text": "fine"}, {"id": "d1", "text": "again"}])
    with pytest.raises(InputError, match=rf"^{b}, line 2, field 'id': duplicate id 'd1' \(first seen on {a}, line 2\)"):
        read_corpus([a, b])
    b.write_text('{"id": "d9", "text": "fine"}\nnot json\n')
    with pytest.raises(InputError, match=rf"^{b}, line 2: not valid JSON"):
        read_corpus([a, b])
    skipped: list = []
    docs = [d for batch in iter_batches([a, b], ReadConfig(on_error="skip"), 2, skipped) for d in batch]
    assert [d.id for d in docs] == ["d0", "d1", "d2", "d9"]
    assert [(s["file"], s["line"]) for s in skipped] == [(str(b), 2)]
    # each record's number locates its file and line; the texts are read back from the right file
    assert [Sources.locate(d.line) for d in docs] == [(0, 1), (0, 2), (0, 3), (1, 1)]
    assert list(texts_at([a, b], [d.line for d in docs[2:]])) == ["text number 2 about topic 2", "fine"]


def test_a_glob_and_a_folder_of_shards_in_every_format(tmp_path):
    shards = tmp_path / "shards"
    _jsonl(shards / "part-0.jsonl", _records(0, 2))
    with gzip.open(shards / "part-1.jsonl.gz", "wt") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in _records(2, 2)))
    pq.write_table(pa.Table.from_pylist(_records(4, 2)), shards / "part-2.parquet")
    with open(shards / "part-3.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, ["id", "text", "extra"])
        w.writeheader()
        w.writerows(_records(6, 2))
    (shards / "q-nested").mkdir()  # after part-*: files are read in path order
    (shards / "q-nested" / "part-4.json").write_text(json.dumps(_records(8, 2)))  # a JSON array
    (shards / "_SUCCESS").write_text("")
    (shards / ".part-0.jsonl.crc").write_text("x")  # hidden: left out
    want = [f"d{i}" for i in range(10)]
    assert read_corpus(shards).ids == want
    assert read_corpus(str(shards / "part-*")).ids == want[:8]
    assert read_corpus(str(tmp_path / "**" / "*.json*")).ids == ["d0", "d1", "d2", "d3", "d8", "d9"]
    with pytest.raises(InputError, match="no file matches this pattern"):
        read_corpus(str(tmp_path / "none-*.jsonl"))


def test_a_folder_of_txt_files_still_reads_its_txt_files_and_a_mixed_one_is_refused(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("alpha beta")
    (docs / "b.txt").write_text("gamma delta")
    assert read_corpus(docs).ids == ["a.txt", "b.txt"]
    _jsonl(docs / "c.jsonl", _records(0, 1))
    with pytest.raises(InputError, match=r"holds both data files \(c\.jsonl\) and \.txt files"):
        read_corpus(docs)


def test_a_file_named_twice_is_read_once_and_a_missing_one_is_named(tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", _records(0, 2))
    assert read_corpus([a, Path(str(tmp_path / "*.jsonl"))]).ids == ["d0", "d1"]
    with pytest.raises(InputError, match=rf"^{tmp_path / 'gone.jsonl'}: no such file or folder"):
        read_corpus([a, tmp_path / "gone.jsonl"])
    assert not source_exists([a, tmp_path / "gone.jsonl"]) and source_exists([a])


def test_the_api_takes_a_list_of_paths_and_ids_equal_those_of_one_file(tmp_path):
    """``neardup.dedup([Path, Path])`` reads two files as one corpus (a list of str stays texts)."""
    records = [{"id": f"n{i}", "text": f"the harbour bridge will be rebuilt next year {i // 2} says council"}
               for i in range(8)]
    a, b = _jsonl(tmp_path / "a.jsonl", records[:5]), _jsonl(tmp_path / "b.jsonl", records[5:])
    one = _jsonl(tmp_path / "one.jsonl", records)
    assert is_sources([a, b]) and not is_sources([str(a), str(b)])
    for engine in ("memory", "local"):
        got = neardup.dedup([a, b], engine=engine)
        ref = neardup.dedup(one, engine=engine)
        assert got.ids == ref.ids and got.groups() == ref.groups() and got.representatives == ref.representatives
        assert got.texts(["n6"]) == {"n6": records[6]["text"]}  # read back from b.jsonl
    assert neardup.dedup([str(a), str(b)]).summary["n_docs"] == 2  # texts, as before


# ---- ids: row numbers where the records have none; missing fields list what is there -------------------
def test_a_csv_and_jsonl_without_ids_get_row_numbers_across_files(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("text,lang\nfirst text,en\nsecond text,en\n")
    b.write_text("text,lang\nthird text,fr\n")
    assert read_corpus([a, b]).ids == ["0", "1", "2"]
    j = tmp_path / "c.jsonl"
    j.write_text('{"text": "x"}\n{"text": "y", "n": 2}\n')
    assert read_corpus(j).ids == ["0", "1"]
    pq.write_table(pa.table({"text": ["p", "q"]}), tmp_path / "d.parquet")
    assert read_corpus(tmp_path / "d.parquet").ids == ["0", "1"]
    with pytest.raises(InputError, match=r"line 1, field 'doc': no such column"):  # a named id column must be there
        read_corpus(a, id_field="doc")


def test_a_missing_text_field_names_file_line_field_and_the_fields_there_are(tmp_path):
    p = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "body": "y", "lang": "en"}])
    with pytest.raises(InputError) as err:
        read_corpus(p)
    assert str(err.value) == (f"{p}, line 2, field 'text': missing field (the record's fields are: id, body, lang); "
                              "name the text field with --text-field")


# ---- a JSON array ------------------------------------------------------------------------------------
def test_a_json_array_file_is_read_and_its_errors_name_the_record(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps(_records(0, 3), indent=2))
    assert read_corpus(p).ids == ["d0", "d1", "d2"]
    assert list(texts_at(p, [2])) == ["text number 1 about topic 1"]
    p.write_text(json.dumps([{"id": "a", "text": "x"}, 7, {"id": "c"}]))
    with pytest.raises(InputError, match=rf"^{p}, record 2: expected a JSON object, got int"):
        read_corpus(p)
    corpus = read_corpus(p, on_error="skip")
    assert corpus.ids == ["a"] and [(s["line"], s["field"]) for s in corpus.skipped] == [(2, None), (3, "text")]
    assert corpus.skipped[1]["error"].startswith(f"{p}, record 3, field 'text': missing field")
    p.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n')  # .json holding JSON lines: as before
    assert read_corpus(p).ids == ["a", "b"]


# ---- encodings ---------------------------------------------------------------------------------------
def test_encoding_reads_cp1252_lines_and_files_utf8_first(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_bytes('{"id": "a", "text": "café crème"}\n'.encode("cp1252") + '{"id": "b", "text": "naïve”"}\n'.encode())
    with pytest.raises(InputError, match=rf"^{p}, line 1: invalid UTF-8 at byte 24 of the line \(0xe9\).*--encoding"):
        read_corpus(p)
    assert read_corpus(p, encoding="cp1252").texts == ["café crème", "naïve”"]
    assert read_corpus(p, on_error="skip").texts == ["caf\ufffd cr\ufffdme", "naïve”"]
    c = tmp_path / "d.csv"
    c.write_bytes("id,text\nx,Straße ’quoted’\n".encode("cp1252"))
    assert read_corpus(c, encoding="cp1252").texts == ["Straße ’quoted’"]
    c.write_bytes(b"id,text\nx,bad \x81 byte\n")  # 0x81: no character in cp1252 either
    with pytest.raises(InputError, match=rf"^{c}, line 2: invalid cp1252 \(nor UTF-8\) at byte 6 of the line \(0x81\)"):
        read_corpus(c, encoding="cp1252")
    assert read_corpus(c, encoding="cp1252", on_error="skip").texts == ["bad \ufffd byte"]
    folder = tmp_path / "txt"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"line one\nna\xefve")  # latin-1
    with pytest.raises(InputError, match=r"a\.txt, line 2: invalid UTF-8 at byte 11 of the file \(0xef\)"):
        read_corpus(folder)
    assert read_corpus(folder, encoding="latin-1").texts == ["line one\nnaïve"]
    with pytest.raises(ConfigError, match="unknown encoding 'klingon'"):
        ReadConfig(encoding="klingon")
    with pytest.raises(InputError, match="cannot be read line by line"):
        read_corpus(p, encoding="utf-16")


@pytest.mark.shared_data
def test_the_clough_stevenson_corpus_reads_all_100_files_with_cp1252(tmp_path):
    """Issue 58: 17 of its 100 files are cp1252, the others UTF-8; --encoding cp1252 reads every one right."""
    import zipfile

    from tests.conftest import shared_file

    zipfile.ZipFile(shared_file("clough_stevenson_plagiarism/raw/corpus-final09.zip")).extractall(tmp_path)
    folder = tmp_path / "corpus-20090418"
    with pytest.raises(InputError, match="invalid UTF-8"):
        read_corpus(folder)
    corpus = read_corpus(folder, encoding="cp1252")
    assert len(corpus) == 100 and not corpus.skipped
    assert not any("\ufffd" in t for t in corpus.texts)
    by_id = dict(zip(corpus.ids, corpus.texts))
    assert "’" in by_id["g1pB_taska.txt"] and "”" in by_id["orig_taskb.txt"]  # cp1252 0x92; UTF-8 E2 80 9D


# ---- stdin, the meter, outputs -----------------------------------------------------------------------
def test_stdin_is_spooled_named_and_removed(tmp_path):
    out = tmp_path / "out"
    data = b'{"id": 1, "text": "a"}\nnot json\n'
    with mock.patch.object(sys, "stdin", mock.Mock(buffer=io.BytesIO(data))), StdinSpool(["-"], out) as stdin:
        assert stdin is not None and stdin[0].read_bytes() == data
        src = resolve(["-"], stdin=stdin)
        assert src.name == STDIN_NAME and str(src) == STDIN_NAME
        with pytest.raises(InputError, match=r"^<stdin>, line 2: not valid JSON"):
            read_corpus(src)
        assert src.fingerprint(lambda f: {"path": f})["sha256"] == stdin[1]
        folder = stdin[0].parent
    assert not folder.exists() and not out.exists()
    with pytest.raises(InputError, match="spooled"):
        resolve("-")
    path, digest = spool_stdin(tmp_path, io.BytesIO(data))
    assert path.read_bytes() == data and len(digest) == 64


def test_the_meter_follows_the_bytes_read_across_files(tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", _records(0, 50))
    b = _jsonl(tmp_path / "b.jsonl", _records(50, 50))
    src = resolve([a, b])
    meter = ReadMeter(src.total_bytes())
    assert meter.total == a.stat().st_size + b.stat().st_size
    seen = []
    for batch in iter_batches(src, ReadConfig(), 10, meter=meter):
        seen.append(meter.bytes_read)
    assert seen == sorted(seen) and meter.bytes_read == meter.total


def test_outputs_never_replace_any_input_of_several(tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", _records(0, 2))
    b = _jsonl(tmp_path / "sub" / "b.jsonl", _records(2, 2))
    for inputs in ([resolve([a, b])], [str(tmp_path / "**" / "*.jsonl")], [[a, b]]):
        with pytest.raises(OutputError, match="is an input"):
            check_outputs(files=[b], inputs=inputs, overwrite=True)
    assert tmp_path / "sub" in input_paths([resolve([a, tmp_path / "sub"])])


# ---- --keep in the format its name asks for ----------------------------------------------------------
@pytest.mark.parametrize("name", ["kept.jsonl", "kept.jsonl.gz", "kept.parquet", "kept.csv", "kept.csv.gz"])
def test_keep_writes_the_format_its_name_asks_for(tmp_path, name):
    records = [{"id": "a", "text": "x", "meta": {"k": [1, 2]}, "n": 1}, {"id": "b", "text": "y", "n": 2},
               {"id": "c", "text": "z", "n": 3, "lang": "fr"}]
    src = _jsonl(tmp_path / "in.jsonl", records)
    out = tmp_path / name
    assert write_kept(src, {"a", "c"}, out) == 2
    if name.startswith("kept.jsonl"):
        opened = gzip.open(out, "rt") if name.endswith(".gz") else open(out)
        got = [json.loads(line) for line in opened]
    elif name.endswith(".parquet"):
        got = pq.read_table(out).to_pylist()
        assert got[0]["meta"] == {"k": [1, 2]} and got[1]["lang"] == "fr" and got[0]["lang"] is None
        got = [{k: v for k, v in r.items() if v is not None} for r in got]
    else:
        opened = gzip.open(out, "rt", newline="") if name.endswith(".gz") else open(out, newline="")
        rows = list(csv.DictReader(opened))
        assert rows[0] == {"id": "a", "text": "x", "meta": '{"k": [1, 2]}', "n": "1", "lang": ""}
        got = [{"id": r["id"]} for r in rows]
        records = [{"id": r["id"]} for r in records]  # the cells are text: compared above
    assert [r["id"] for r in got] == ["a", "c"] and got[-1] == records[2]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_keep_of_several_csv_files_without_ids_and_unknown_suffixes(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("text\nfirst\nsecond\n")
    b.write_text("text\nthird\n")
    out = tmp_path / "kept.parquet"
    assert write_kept([a, b], {"0", "2"}, out) == 2
    assert pq.read_table(out).to_pylist() == [{"text": "first"}, {"text": "third"}]
    for bad in ("kept.txt", "kept.json", "kept"):
        with pytest.raises(OutputError, match=r"\.jsonl, \.jsonl\.gz, \.parquet or \.csv"):
            keep_format(bad)
    assert read_texts([a, b], ["2"]) == {"2": "third"}


def test_keep_writes_utf8_from_an_input_in_another_encoding_and_copies_utf8_lines_byte_for_byte(tmp_path):
    src = tmp_path / "in.jsonl"
    utf8_line = '{"id":  "a", "text": "naïve"}\n'.encode()  # odd spacing: copied as it is
    src.write_bytes(utf8_line + '{"id": "b", "text": "café"}\n'.encode("cp1252"))
    out = tmp_path / "kept.jsonl"
    assert write_kept(src, {"a", "b"}, out, encoding="cp1252") == 2
    lines = out.read_bytes().splitlines(keepends=True)
    assert lines[0] == utf8_line and json.loads(lines[1].decode("utf-8")) == {"id": "b", "text": "café"}
