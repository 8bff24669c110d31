"""Property tests of the readers (issue 20): random JSONL and CSV files with random bad lines. Either the
read stops with an error naming the first bad line, or, with ``on_error="skip"``, it returns exactly the
good records, in order, and lists exactly the bad lines. A line with bytes that are not UTF-8 is an error
too, but with ``on_error="skip"`` it is read with them replaced (U+FFFD, issue 58), not skipped."""

import csv
import gzip
import io
import json
from unittest import mock

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
    lines, good, bad, ids, replaced = [], [], [], [], []
    for kind, text, bad_kind in rows:
        if kind == "blank":
            lines.append(draw(st.sampled_from([b"", b"   ", b"\t"])))
            continue
        if kind == "bad" and bad_kind == "not-utf8":  # an error, but read (its bytes replaced) when skipping
            doc_id = f"d{len(lines)}"
            good_line = json.dumps({"id": doc_id, "text": text}).encode()
            lines.append(good_line[:-2] + b"\xff\xfe" + good_line[-2:])
            replaced.append(len(lines))
            good.append((doc_id, text + "\ufffd\ufffd"))
            ids.append(doc_id)
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
    return data, good, bad, replaced


def _check(path, good, bad, replaced=()):
    if good:
        if bad or replaced:
            first = min([*bad, *replaced])
            try:
                read_corpus(path)
            except InputError as err:
                assert err.line == first and str(err).startswith(f"{path}, line {first}")
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
    data, good, bad, replaced = case
    path = tmp_path_factory.mktemp("p") / ("d.jsonl.gz" if gz else "d.jsonl")
    path.write_bytes(gzip.compress(data) if gz else data)
    _check(path, good, bad, replaced)


@st.composite
def csv_files(draw):
    """(file bytes, good (id, text) in order, the line numbers of the bad rows)."""
    rows = draw(st.lists(st.tuples(st.sampled_from(["good", "good", "bad-utf8", "short"]), CSV_TEXT), max_size=20))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "text", "extra"])
    chunks: list[bytes] = [out.getvalue().encode()]
    line = out.getvalue().count("\n")
    good, bad, replaced = [], [], []
    for i, (kind, text) in enumerate(rows):
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow([f"r{i}", text] if kind == "short" else [f"r{i}", text, "x"])
        row = out.getvalue().encode()
        if kind == "bad-utf8":
            row = row[:-1] + b"\xff" + row[-1:]  # an undecodable byte in the last field
        line += out.getvalue().count("\n")
        chunks.append(row)
        if kind == "bad-utf8":  # an error, but read (its byte replaced) when skipping
            replaced.append(line)
        good.append((f"r{i}", text))
    data = b"".join(chunks)
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data, good, bad, replaced


@SETTINGS
@given(case=csv_files())
def test_csv_with_random_bad_rows_errors_on_the_first_or_skips_exactly_them(tmp_path_factory, case):
    data, good, bad, replaced = case
    path = tmp_path_factory.mktemp("c") / "d.csv"
    path.write_bytes(data)
    _check(path, good, bad, replaced)


class _Str(str):
    pass


class _Int(int):
    pass


#: Field values that test every branch of the record checks: each accepted or refused kind of id and text.
FIELD_VALUES = st.one_of(st.sampled_from([None, True, False, 1.5, [1], {"a": 1}, _Str("sub"), _Int(3), "x\ud800"]),
                         st.integers(-(2**70), 2**70), st.text(max_size=8), st.text(st.characters(max_codepoint=127)))
MISSING = object()


@given(rows=st.lists(st.tuples(st.one_of(st.just(MISSING), FIELD_VALUES), st.one_of(st.just(MISSING), FIELD_VALUES),
                               st.booleans()), max_size=12))
@settings(max_examples=300, deadline=None)
def test_records_are_checked_as_each_field_in_turn_would_be(rows):
    """``iter_documents`` takes a common record (an int or ASCII id, a str text) at a glance: what it yields,
    and each error's line, field and message, equal the checks of each field in turn, id first (``_field``)."""
    from neardup.io.read import _field, iter_documents

    records = [{k: v for k, v in (("id", i), ("text", t), ("extra", e)) if v is not MISSING} for i, t, e in rows]
    expected: list = []
    seen: dict[str, int] = {}
    numbered = bool(records) and "id" not in records[0]  # issue 58: no id in the first record: row numbers
    for line, rec in enumerate(records, start=1):
        try:
            if numbered and "id" in rec:
                raise InputError("<memory>", line, "this record has an id, but the first record had none (its ids are "
                                                   "row numbers): give every record an id, or none", "id")
            doc_id = str(line - 1) if numbered else str(_field(rec, "id", "<memory>", line, kinds=(str, int), what="id"))
            text = _field(rec, "text", "<memory>", line, kinds=(str,), what="text")
            if doc_id in seen:
                raise InputError("<memory>", line, f"duplicate id {doc_id!r} (first seen on line {seen[doc_id]})", "id")
        except InputError as exc:
            expected.append(("error", str(exc)))
            continue
        seen[doc_id] = line
        expected.append((line, doc_id, text))
    for hashes in (False, True):
        skipped: list = []
        got = [(d.line, d.id, d.text) for d in iter_documents(records, read=ReadConfig(on_error="skip"),
                                                               skipped=skipped, id_hashes=hashes)]
        assert got == [e for e in expected if e[0] != "error"]
        assert [s["error"] for s in skipped] == [e[1] for e in expected if e[0] == "error"]
        assert all(type(d) is str for _, d, _ in got)


@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b", 1]), st.sampled_from([MISSING, None, "c1", 2, 2.5, "x\ud800"])),
                     max_size=12), hashes=st.booleans())
@settings(max_examples=200, deadline=None)
def test_a_record_with_a_bad_label_is_skipped_whole_and_a_duplicate_id_is_named_first(rows, hashes):
    """With a label field: a duplicate id is the record's error even where its label is bad too, and a record
    skipped for its label leaves its id free for a later record (only kept records' ids are remembered)."""
    from neardup.io.read import SeenIdHashes, cluster_label, iter_documents

    records = [{"id": i, "text": "t", **({} if lab is MISSING else {"label": lab})} for i, lab in rows]
    expected: list = []
    seen: dict[str, int] = {}
    for line, rec in enumerate(records, start=1):
        doc_id = str(rec["id"])
        try:
            if doc_id in seen:
                raise InputError("<memory>", line, f"duplicate id {doc_id!r} (first seen on line {seen[doc_id]})", "id")
            label = cluster_label(rec.get("label"), "<memory>", line, "label")
        except InputError as exc:
            expected.append(("error", str(exc)))
            continue
        seen[doc_id] = line
        expected.append((line, doc_id, label))
    skipped: list = []
    with mock.patch.object(SeenIdHashes, "RECENT", 2):  # ids hashed: most of them in sorted runs
        got = [(d.line, d.id, d.label) for d in iter_documents(records, read=ReadConfig(on_error="skip"),
                                                                skipped=skipped, label_field="label", id_hashes=hashes)]
    assert got == [e for e in expected if e[0] != "error"]
    assert [s["error"] for s in skipped] == [e[1] for e in expected if e[0] == "error"]
