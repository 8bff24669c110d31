"""Bulk loading (``neardup online load``): same decisions as one add at a time, re-runs, bad records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neardup.io.read import InputError
from neardup.cli.online import standalone_app
from neardup.online.detector import Detector, OnlineConfig
from neardup.online.load import load
from neardup.online.store import MemoryStore, open_store

from .test_detector import _stream

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "news.jsonl"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _decisions(detector: Detector, ids: list[str]) -> list[tuple]:
    return [(r.id, r.status, r.original_id, r.matched_id, r.score) for r in (detector.get(i) for i in ids)]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_load_decides_as_one_add_at_a_time(stores, tmp_path, workers):
    rows = [{"id": i, "text": t, "desk": "wire"} for i, t in _stream(45)]
    path = _write(tmp_path / "docs.jsonl", rows)
    config = OnlineConfig.ours(max_bucket=3)
    one = Detector(MemoryStore(), config)
    for r in rows:
        one.add(r["id"], r["text"])
    d = Detector(stores.open(), config)
    out = load(d, path, batch_size=7, workers=workers, progress=False)
    ids = [r["id"] for r in rows]
    assert _decisions(d, ids) == _decisions(one, ids)
    assert (out["read"], out["added"], out["resubmitted"], out["skipped"]) == (45, 45, 0, 0)
    assert out["duplicates"] == one.counts()["duplicates"] >= 15
    assert d.get("d3").metadata == {"desk": "wire"}  # other fields are kept as metadata


def test_running_a_load_again_finishes_it_without_adding_twice(tmp_path):
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    part = tmp_path / "part.jsonl"
    part.write_text("".join(lines[:130]), encoding="utf-8")  # as far as an interrupted load got
    url = f"sqlite:///{tmp_path / 'store.db'}"
    runner = CliRunner()
    first = runner.invoke(standalone_app(), ["online", "load", str(part), "--store", url, "--batch", "50",
                                             "--format", "json"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(standalone_app(), ["online", "load", str(EXAMPLE), "--store", url, "--batch", "50",
                                              "--format", "json"])
    assert second.exit_code == 0, second.output
    out = json.loads(second.stdout)
    assert (out["resubmitted"], out["added"], out["store_counts"]["documents"]) == (130, 170, 300)
    resumed = Detector(open_store(url), OnlineConfig(method="auto"))  # the command line default: the store settings
    assert resumed.calibration is not None
    whole = Detector(MemoryStore(), resumed.config)
    load(whole, EXAMPLE, progress=False)
    ids = [json.loads(line)["id"] for line in lines]
    assert _decisions(resumed, ids) == _decisions(whole, ids)
    resumed.close()


def test_a_bad_record_names_file_line_and_field_and_keeps_the_batches_before_it(tmp_path):
    rows = [{"id": f"a{i}", "text": f"story number {i} about the harbour and the fleet"} for i in range(6)]
    rows[4] = {"id": "a4", "body": "no text field"}
    path = _write(tmp_path / "docs.jsonl", rows)
    d = Detector(MemoryStore())
    with pytest.raises(InputError, match=r"docs.jsonl, line 5, field 'text': missing field"):
        load(d, path, batch_size=2, progress=False)
    assert d.counts()["documents"] == 4  # the two batches before the bad record were committed
    d2 = Detector(MemoryStore())
    out = load(d2, path, batch_size=2, on_error="skip", progress=False)
    assert (out["added"], out["skipped"]) == (5, 1) and "line 5" in out["skipped_records"][0]["error"]


def test_an_id_stored_with_another_text_is_an_error_or_a_skip(tmp_path):
    rows = [{"doc": "x", "body": "the storm closed the northern railway line overnight"},
            {"doc": "y", "body": "the bank raised its main rate by half a point"}]
    path = _write(tmp_path / "docs.jsonl", rows)
    d = Detector(MemoryStore())
    d.add("y", "a different story about the museum that opened on saturday")
    with pytest.raises(InputError, match=r"line 2, field 'doc': id 'y' is already stored with a different text"):
        load(d, path, text_field="body", id_field="doc", progress=False)
    assert d.get("x") is None  # the batch was one transaction
    out = load(d, path, text_field="body", id_field="doc", on_error="skip", workers=1, progress=False)
    assert (out["added"], out["skipped"]) == (1, 1) and d.get("x") is not None


def test_the_load_command_fails_in_one_line_on_bad_input(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "\xff\xfe"}\n')
    r = CliRunner().invoke(standalone_app(), ["online", "load", str(bad), "--store", f"sqlite:///{tmp_path / 's.db'}",
                                             "--quiet"])
    assert r.exit_code == 2
    assert r.stderr.strip().count("\n") == 0 and "bad.jsonl, line 2" in r.stderr
