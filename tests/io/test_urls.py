"""Inputs given as fsspec URLs (object storage): read through fsspec, with the local path's results."""

import gzip
import json

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from neardup.cli import app
from neardup.config import DedupConfig
from neardup.config import EngineConfig
from neardup.engine.local import run_chunked
from neardup.io.read import InputError, read_corpus


@pytest.fixture()
def memory_copy(example_path):
    """The example corpus as memory://neardup-test/news.jsonl and as a Parquet file beside it."""
    fs = fsspec.filesystem("memory")
    records = [json.loads(line) for line in open(example_path)]
    with fs.open("/neardup-test/news.jsonl", "wb") as fh:
        fh.write(example_path.read_bytes())
    with fs.open("/neardup-test/news.parquet", "wb") as fh:
        pq.write_table(pa.Table.from_pylist([{"id": r["id"], "text": r["text"]} for r in records]), fh)
    yield "memory://neardup-test"
    fs.rm("/neardup-test", recursive=True)


def test_a_url_reads_the_same_documents_as_the_local_file(example_path, memory_copy):
    local = read_corpus(example_path)
    for name in ("news.jsonl", "news.parquet"):
        remote = read_corpus(f"{memory_copy}/{name}")
        assert remote.ids == local.ids and remote.texts == local.texts


def test_the_chunked_engine_streams_a_url_input_to_the_same_output(example_path, memory_copy, tmp_path):
    # One worker: the memory filesystem lives in this process (a real store is reached from any).
    engine = EngineConfig(workers=1, batch_docs=64, progress=False)
    run_chunked(example_path, tmp_path / "a", DedupConfig(), engine)
    summary = run_chunked(f"{memory_copy}/news.jsonl", tmp_path / "b",
                          DedupConfig(), engine)
    assert summary["input"] == f"{memory_copy}/news.jsonl"
    for name in ("clusters.parquet", "pairs.parquet"):
        assert pq.read_table(tmp_path / "a" / name).equals(pq.read_table(tmp_path / "b" / name))


def test_cli_dedup_takes_a_file_url_of_a_gzipped_file(example_path, tmp_path):
    gz = tmp_path / "news.jsonl.gz"
    gz.write_bytes(gzip.compress(example_path.read_bytes()))
    runner = CliRunner()
    res_url = runner.invoke(app, ["dedup", f"file://{gz}", "-o", str(tmp_path / "u"), "--quiet"])
    res_path = runner.invoke(app, ["dedup", str(example_path), "-o", str(tmp_path / "p"), "--quiet"])
    assert res_url.exit_code == 0 and res_path.exit_code == 0, res_url.output
    a = pq.read_table(tmp_path / "u" / "clusters.parquet").to_pylist()
    b = pq.read_table(tmp_path / "p" / "clusters.parquet").to_pylist()
    assert a == b and len(a) == 300


def test_a_url_that_cannot_be_opened_is_a_clear_error_naming_it(memory_copy):
    with pytest.raises(InputError, match=r"nosuch://bucket/x\.jsonl: cannot open this URL"):
        read_corpus("nosuch://bucket/x.jsonl")
    with pytest.raises(InputError, match=r"memory://neardup-test/missing\.jsonl: no such file"):
        read_corpus(f"{memory_copy}/missing.jsonl")
    fs = fsspec.filesystem("memory")
    with fs.open("/neardup-test/bad.jsonl", "wb") as fh:
        fh.write(b'{"id": "a", "text": "fine"}\n{"id": "b", "text": \n')
    with pytest.raises(InputError, match=r"memory://neardup-test/bad\.jsonl, line 2: not valid JSON"):
        read_corpus(f"{memory_copy}/bad.jsonl")
