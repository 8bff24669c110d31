"""Property tests of the readers (issue 20): random JSONL and CSV files with random bad lines. Either the
read stops with an error naming the first bad line, or, with ``on_error="skip"``, it returns exactly the
good records, in order, and lists exactly the bad lines."""

import csv
import gzip
import io
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.config import ReadConfig
from neardup.io.read import InputError, iter_batches, read_corpus

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Text that is valid Unicode: any character but surrogates (and, for CSV, no bare CR: a line break there).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
CSV_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\x00"), max_size=40)

# What a bad JSONL line can be: (kind, payload) drawn below.
BAD_JSONL = st.sampled_from(["truncated", "not-utf8", "array", "number", "no-text", "null-text", "float-id",
                             "surrogate", "duplicate-id", "garbage"])


def _bad_jsonl_line(kind: str, text: str, earlier_ids: list[str]) -> bytes | None:
    good = json.dumps({"id": "bad", "text": text}).encode()
    if kind == "truncated":
        return good[: max(1, len(good) // 2)]
    if kind == "not-utf8":
        return good[:-2] + b"\xff\xfe" + good[-2:]
    if kind == "array":
        return b"[1, 2]"
    if kind == "number":
        return b"42"
    if kind == "no-text":
        return json.dumps({"id": "bad", "body": text}).encode()
    if kind == "null-text":
        return b'{"id": "bad", "text": null}'
    if kind == "float-id":
        return json.dumps({"id": 1.5, "text": text}).encode()
    if kind == "surrogate":
        return json.dumps({"id": "bad", "text": text + "\ud800"}).encode()
    if kind == "duplicate-id":
        return json.dumps({"id": earlier_ids[0], "text": text}).encode() if earlier_ids else None
    return b"{{oops"


@st.composite
def jsonl_files(draw):
    """(file bytes, good (id, text) in order, the line numbers of the bad lines)."""
    rows = draw(st.lists(st.tuples(st.sampled_from(["good", "good", "blank", "bad"]), TEXT, BAD_JSONL), max_size=25))
    lines, good, bad, ids = [], [], [], []
    for kind, text, bad_kind in rows:
        if kind == "blank":
            lines.append(draw(st.sampled_from([b"", b"   ", b"\t"])))
            continue
        if kind == "bad":
            line = _bad_jsonl_line(bad_kind, text, ids)
            if line is not None:
                lines.append(line)
                bad.append(len(lines))
                continue
        doc_id = f"d{len(lines)}"
        lines.append(json.dumps({"id": doc_id, "text": text, "n": len(lines)},
                                ensure_ascii=draw(st.booleans())).encode())
        good.append((doc_id, text))
        ids.append(doc_id)
    data = b"".join(line + b"\n" for line in lines)
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data  # a byte order mark changes nothing
    return data, good, bad


def _check(path, good, bad):
    if good:
        if bad:
            try:
                read_corpus(path)
            except InputError as err:
                assert err.line == bad[0] and str(err).startswith(f"{path}, line {bad[0]}")
            else:
                raise AssertionError("a bad line was read without an error")
        corpus = read_corpus(path, on_error="skip")
        assert list(zip(corpus.ids, corpus.texts)) == good
        assert [s["line"] for s in corpus.skipped] == bad
        assert all(s["file"] == str(path) and s["reason"] for s in corpus.skipped)
        streamed: list = []
        batches = iter_batches(path, ReadConfig(on_error="skip"), 4, streamed)
        assert [(d.id, d.text) for b in batches for d in b] == good
        assert [s["line"] for s in streamed] == bad
    else:
        try:
            read_corpus(path, on_error="skip")
        except InputError as err:  # nothing good: an error (empty input, or the first bad line)
            assert err.line in (None, *bad[:1])
        else:
            raise AssertionError("no document, no error")


@SETTINGS
@given(case=jsonl_files(), gz=st.booleans())
def test_jsonl_with_random_bad_lines_errors_on_the_first_or_skips_exactly_them(tmp_path_factory, case, gz):
    data, good, bad = case
    path = tmp_path_factory.mktemp("p") / ("d.jsonl.gz" if gz else "d.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    _check(path, good, bad)


@st.composite
def csv_files(draw):
    """(file bytes, good (id, text) in order, the line numbers of the bad rows)."""
    rows = draw(st.lists(st.tuples(st.sampled_from(["good", "good", "bad-utf8", "short"]), CSV_TEXT), max_size=20))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "text", "extra"])
    chunks: list[bytes] = [out.getvalue().encode()]
    line = out.getvalue().count("\n")
    good, bad = [], []
    for i, (kind, text) in enumerate(rows):
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow([f"r{i}", text] if kind == "short" else [f"r{i}", text, "x"])
        row = out.getvalue().encode()
        if kind == "bad-utf8":
            row = row[:-1] + b"\xff" + row[-1:]  # an undecodable byte in the last field
        line += out.getvalue().count("\n")
        chunks.append(row)
        (bad if kind == "bad-utf8" else good).append(line if kind == "bad-utf8" else (f"r{i}", text))
    data = b"".join(chunks)
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data, good, bad


@SETTINGS
@given(case=csv_files())
def test_csv_with_random_bad_rows_errors_on_the_first_or_skips_exactly_them(tmp_path_factory, case):
    data, good, bad = case
    path = tmp_path_factory.mktemp("c") / "d.csv"
    path.write_bytes(data)
    _check(path, good, bad)
