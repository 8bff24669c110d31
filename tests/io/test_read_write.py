import gzip
import json
import os
import stat

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neardup.config import ReadConfig
from neardup.io.read import InputError, SeenIdHashes, iter_batches, iter_jsonl, read_corpus, read_records
from neardup.io.write import atomic_path, write_json, write_jsonl


def _jsonl(path, lines):
    path.write_bytes(b"".join((l if isinstance(l, bytes) else l.encode()) + b"\n" for l in lines))
    return path


def test_reads_every_format_the_same(tmp_path):
    recs = [{"id": "a", "text": "alpha beta"}, {"id": "b", "text": "gamma delta"}]
    _jsonl(tmp_path / "d.jsonl", [json.dumps(r) for r in recs])
    with gzip.open(tmp_path / "d.jsonl.gz", "wt") as fh:
        fh.write("\n".join(json.dumps(r) for r in recs))
    pq.write_table(pa.Table.from_pylist(recs), tmp_path / "d.parquet")
    (tmp_path / "d.csv").write_text("id,text\na,alpha beta\nb,gamma delta\n")
    folder = tmp_path / "txt"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha beta")
    (folder / "b.txt").write_text("gamma delta")
    for name in ("d.jsonl", "d.jsonl.gz", "d.parquet", "d.csv"):
        c = read_corpus(tmp_path / name)
        assert c.ids == ["a", "b"] and c.texts == ["alpha beta", "gamma delta"], name
    c = read_corpus(folder)
    assert c.ids == ["a.txt", "b.txt"] and c.texts == ["alpha beta", "gamma delta"]


def test_custom_fields_and_integer_ids(tmp_path):
    p = _jsonl(tmp_path / "d.jsonl", [json.dumps({"doc": 7, "body": "x y"})])
    c = read_corpus(p, text_field="body", id_field="doc")
    assert c.ids == ["7"] and c.texts == ["x y"]


@pytest.mark.parametrize(
    "lines, line, field, words",
    [
        ([b'{"id": "a", "text": "ok"}', b'{"id": "b"}'], 2, "text", "missing field"),
        ([b'{"id": "a", "text": null}'], 1, "text", "null"),
        ([b'{"id": "a", "text": 5}'], 1, "text", "expected str"),
        ([b'{"id": "a", "text": "x"}', b'{"text": "y"}'], 2, "id", "missing field (the record's fields are: text)"),
        ([b'{"text": "x"}', b'{"id": "b", "text": "y"}'], 2, "id", "the first record had none"),
        ([b'{"id": "a", "body": "ok"}'], 1, "text", "missing field (the record's fields are: id, body); name the text field with --text-field"),
        ([b'{"id": "a", "text": "x"}', b'{"id": "a", "text": "y"}'], 2, "id", "duplicate id 'a' (first seen on line 1)"),
        ([b'{"id": "a", "text": "x"}', b'not json'], 2, None, "not valid JSON"),
        ([b'{"id": "a", "text": "caf\xe9"}'], 1, None, "invalid UTF-8"),
        ([b'["a", "b"]'], 1, None, "expected a JSON object"),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path, lines, line, field, words):
    p = _jsonl(tmp_path / "bad.jsonl", lines)
    with pytest.raises(InputError) as err:
        read_corpus(p)
    msg = str(err.value)
    assert str(p) in msg and f"line {line}" in msg and words in msg
    if field:
        assert f"field {field!r}" in msg
    assert err.value.line == line


def test_skip_mode_counts_and_keeps_the_good_records(tmp_path):
    p = _jsonl(tmp_path / "d.jsonl", [b'{"id": "a", "text": "x"}', b'{"id": "b"}', b'{"id": "a", "text": "y"}',
                                      b'{"id": "c", "text": "z"}'])
    c = read_corpus(p, on_error="skip")
    assert c.ids == ["a", "c"] and [s["line"] for s in c.skipped] == [2, 3]


def test_empty_file_and_missing_file(tmp_path):
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match="no documents"):
        read_corpus(tmp_path / "e.jsonl")
    with pytest.raises(InputError, match="no such file"):
        read_corpus(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="unknown input format"):
        (tmp_path / "x.docx").write_text("x")
        read_corpus(tmp_path / "x.docx")


def test_empty_and_huge_texts_are_kept_and_counted(tmp_path):
    c = read_records([{"id": "e", "text": "  "}, {"id": "h", "text": "word " * 20}], max_chars=50)
    assert c.ids == ["e", "h"] and c.n_empty == 1 and c.n_truncated == 1


def test_corrupt_parquet_is_a_clear_error(tmp_path):
    p = tmp_path / "bad.parquet"
    p.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match="not a readable Parquet file"):
        read_corpus(p)


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "out.json"
    write_json(target, {"v": 1})
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    mode = stat.S_IMODE(os.stat(target).st_mode)
    assert mode & stat.S_IRGRP  # readable like any normal file, not 0600


def test_gzipped_jsonl_is_written_atomically_and_reads_back(tmp_path):
    target = tmp_path / "out.jsonl.gz"
    recs = [{"id": "a", "text": "caf\u00e9"}, {"id": "b", "text": "x"}]
    assert write_jsonl(target, iter(recs), gz=True) == 2
    assert target.read_bytes()[:2] == b"\x1f\x8b"
    assert [rec for _, rec in iter_jsonl(target)] == recs

    def failing():
        yield {"id": "c"}
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_jsonl(target, failing(), gz=True)
    assert [rec for _, rec in iter_jsonl(target)] == recs  # the previous complete file stays
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl.gz"]


def test_whole_file_readers_name_file_and_line(tmp_path):
    from neardup.io.read import read_json, read_jsonl

    with gzip.open(tmp_path / "r.jsonl.gz", "wt") as fh:
        fh.write('{"a": 1}\n\n{"a": 2}\n')
    assert read_jsonl(tmp_path / "r.jsonl.gz") == [{"a": 1}, {"a": 2}]
    bad = _jsonl(tmp_path / "bad.jsonl", ['{"a": 1}', '{"a": '])
    with pytest.raises(InputError, match=r"bad\.jsonl, line 2: not valid JSON"):
        read_jsonl(bad)
    (tmp_path / "v.json").write_text('{"a": [1,\n 2]}')
    assert read_json(tmp_path / "v.json") == {"a": [1, 2]}
    (tmp_path / "bad.json").write_text('{"a": [1,\n 2,\n ]}')
    with pytest.raises(InputError, match=r"bad\.json, line 3: not valid JSON"):
        read_json(tmp_path / "bad.json")
    (tmp_path / "latin1.json").write_bytes(b'{"a":\n "caf\xe9"}')
    with pytest.raises(InputError, match=r"latin1\.json, line 2: invalid UTF-8"):
        read_json(tmp_path / "latin1.json")


def test_jsonl_lines_are_read_exactly_as_the_json_module_reads_them(tmp_path):
    """Lines go through orjson when it can read them exactly; json decides the rest, so an integer id past
    64 bits keeps its digits and fields json accepts elsewhere in a record (NaN, infinities, lone
    surrogates) are still accepted, while a lone surrogate in the text is still a line error."""
    lines = ['{"id": 123456789012345678901234567890, "text": "an id past 64 bits"}',
             '{"id": 18446744073709551615, "text": "the largest 64-bit id"}',
             '{"id": "nan", "text": "NaN elsewhere", "score": NaN, "big": 1e400}',
             '{"id": "sur", "text": "a surrogate elsewhere", "note": "\\ud800"}',
             '{"id": "f", "text": "floats stay floats", "w": 1e20}',
             '{"id": "nest", "text": "a wide integer inside", "meta": {"counts": [1, 123456789012345678901234567890]}}',
             '{"id": "bad", "text": "x\\ud800"}']
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    objs = [obj for _, obj in iter_jsonl(path)]
    assert objs[0]["id"] == 123456789012345678901234567890 and objs[1]["id"] == 2**64 - 1
    assert objs[4]["w"] == 1e20 and type(objs[4]["w"]) is float and objs[2]["big"] == float("inf")
    assert objs[5]["meta"]["counts"][1] == 123456789012345678901234567890
    assert [json.dumps(o) for o in objs] == [json.dumps(json.loads(line)) for line in lines]
    corpus = read_corpus(path, on_error="skip")
    assert corpus.ids == ["123456789012345678901234567890", "18446744073709551615", "nan", "sur", "f", "nest"]
    assert [(s["line"], s["field"]) for s in corpus.skipped] == [(7, "text")]


def test_a_duplicate_id_far_from_its_first_line_is_found_in_a_file_streamed_in_batches(tmp_path):
    """The chunked engine keeps the ids' hashes in sorted runs behind a Bloom filter, not a dict: a duplicate
    past several flushes of the recent ids is still reported with both lines, or skipped."""
    n = 3 * SeenIdHashes.RECENT + 10
    path = tmp_path / "big.jsonl"
    with open(path, "w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"d{i}", "text": f"text {i}"}) + "\n")
        fh.write(json.dumps({"id": "d4", "text": "again"}) + "\n")
        fh.write(json.dumps({"id": "last", "text": "kept"}) + "\n")
    with pytest.raises(InputError) as err:
        for _ in iter_batches(path, ReadConfig(), 5000):
            pass
    assert err.value.line == n + 1 and err.value.field == "id"
    assert "duplicate id 'd4' (first seen on line 5)" in str(err.value)
    skipped: list = []
    ids = [d.id for b in iter_batches(path, ReadConfig(on_error="skip"), 5000, skipped) for d in b]
    assert len(ids) == n + 1 and ids[-1] == "last" and ids.count("d4") == 1
    assert [(s["line"], s["field"]) for s in skipped] == [(n + 1, "id")]


def test_kept_records_of_a_jsonl_file_are_its_lines_byte_for_byte(tmp_path):
    """``write_kept`` copies a JSONL input's kept lines as they are (key order, spacing, escapes, a 1e400, a
    wide integer, CRLF line ends; not a byte order mark), the first of an id only, skipping what the run
    skipped; into gzip where the output's name ends in .gz; other formats' records are written as JSON."""
    from neardup.io.keep import write_kept

    lines = [b'\xef\xbb\xbf{"text":"caf\\u00e9",  "id": "a", "w": 1e400}\r\n',
             b'{"id": "b", "text": "x"}\n',
             b'not json\n',
             b'{"id": 123456789012345678901234567890, "text": "wide", "note": "\\ud800"}\n',
             b'{"id": "a", "text": "again"}\n',
             b'{"id": "c","text":"last, no line end"}']
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"".join(lines))
    want = lines[0][3:] + lines[3] + lines[5] + b"\n"
    keep = {"a", "123456789012345678901234567890", "c"}
    assert write_kept(src, keep, tmp_path / "k.jsonl", on_error="skip") == 3
    assert (tmp_path / "k.jsonl").read_bytes() == want
    assert write_kept(src, keep, tmp_path / "k.jsonl.gz", on_error="skip") == 3
    assert gzip.decompress((tmp_path / "k.jsonl.gz").read_bytes()) == want
    with pytest.raises(InputError, match=r"in\.jsonl, line 3: not valid JSON"):
        write_kept(src, keep, tmp_path / "k2.jsonl")
    assert not (tmp_path / "k2.jsonl").exists()
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["caf\u00e9", "x"]}), tmp_path / "in.parquet")
    assert write_kept(tmp_path / "in.parquet", {"b"}, tmp_path / "p.jsonl") == 1
    assert (tmp_path / "p.jsonl").read_text() == '{"id": "b", "text": "x"}\n'
