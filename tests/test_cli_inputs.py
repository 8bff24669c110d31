"""Issue 58 at the command line: several inputs, globs, folders of shards and ``-`` (stdin) for ``neardup dedup``
on the memory and local engines; ``--encoding``; ``--keep`` in the format its name asks for; ``tune --docs`` and
its warnings on few pairs or a test set that is the validation set; ``serve``'s options and n-gram default; the
LICENSE; progress bars with a total. Each test failed before the change."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import neardup
from neardup.cli import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]

RECORDS = [{"id": f"n{i}", "text": f"the harbour bridge will be rebuilt next year {i // 3} says the council today",
            "n": i} for i in range(12)]


def _run(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _decisions(out: Path) -> list[dict]:
    return pq.read_table(out / "clusters.parquet", columns=["id", "kept", "copy_of", "cluster"]).to_pylist()


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_several_inputs_decide_as_one_file_and_the_summary_names_them(tmp_path, engine):
    one = _jsonl(tmp_path / "one.jsonl", RECORDS)
    a, b = _jsonl(tmp_path / "a.jsonl", RECORDS[:5]), _jsonl(tmp_path / "b.jsonl", RECORDS[5:])
    res = _run("dedup", one, "-o", tmp_path / "ref", "--engine", engine, "-q")
    assert res.exit_code == 0, res.output
    res = _run("dedup", a, b, "-o", tmp_path / "out", "--engine", engine, "-q", "--keep", tmp_path / "kept.jsonl")
    assert res.exit_code == 0, res.output
    assert _decisions(tmp_path / "out") == _decisions(tmp_path / "ref")
    evidence = neardup.DedupResult.load(tmp_path / "out").evidence()  # texts read back from each file
    assert evidence and evidence == neardup.DedupResult.load(tmp_path / "ref").evidence()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["input"] == [str(a), str(b)] and summary["n_docs"] == 12
    kept = [json.loads(line)["id"] for line in (tmp_path / "kept.jsonl").read_text().splitlines()]
    assert kept == [d["id"] for d in _decisions(tmp_path / "ref") if d["kept"]]
    res = _run("dedup", a, b, "-o", tmp_path / "o2", "--engine", engine, "-q", "--keep", a)
    assert res.exit_code == 2 and "is an input" in res.output and not (tmp_path / "o2").exists()
    assert a.read_text().count("\n") == 5  # never written over


@pytest.mark.parametrize("name", ["with space", "ünï ✓", "-dash"])
def test_a_glob_and_a_folder_of_parquet_and_csv_shards_with_hostile_names(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    shards = Path(name)
    shards.mkdir()
    for k in range(3):
        pq.write_table(pa.Table.from_pylist(RECORDS[4 * k: 4 * k + 4]), shards / f"part-{k}.parquet")
    (shards / "_SUCCESS").write_text("")
    for engine in ("memory", "local"):
        out = Path(f"out-{engine}")
        res = _run("dedup", "-o", out, "--engine", engine, "-q", "--keep", f"kept-{engine}.csv", "--", shards)
        assert res.exit_code == 0, res.output
        assert [d["id"] for d in _decisions(out)] == [r["id"] for r in RECORDS]
        assert Path(f"kept-{engine}.csv").read_text().splitlines()[0] == "id,text,n"
    res = _run("dedup", "-o", "out-glob", "-q", "--", f"{name}/part-[12].parquet")
    assert res.exit_code == 0, res.output
    assert json.loads(Path("out-glob/summary.json").read_text())["n_docs"] == 8
    res = _run("dedup", "-o", "out-none", "-q", "--", f"{name}/*.jsonl")
    assert res.exit_code == 2 and f"{name}/*.jsonl: no file matches this pattern" in res.output


@pytest.mark.parametrize("engine", ["memory", "local"])
def test_stdin_is_read_spooled_and_removed(tmp_path, engine):
    data = "".join(json.dumps(r) + "\n" for r in RECORDS)
    out = tmp_path / "out"
    res = _run("dedup", "-", "-o", out, "--engine", engine, "-q", "--keep", tmp_path / "kept.jsonl.gz", input=data)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["input"] == "<stdin>" and summary["n_docs"] == 12
    assert [d["id"] for d in _decisions(out)] == [r["id"] for r in RECORDS]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.jsonl.gz", "out"]  # the spool is gone
    res = _run("dedup", "/dev/stdin", "-o", tmp_path / "bad", "--engine", engine, "-q", input=data + "{oops\n")
    assert res.exit_code == 2 and "<stdin>, line 13: not valid JSON" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.jsonl.gz", "out"]


def test_resume_knows_several_inputs_and_stdin_by_content(tmp_path):
    a, b = _jsonl(tmp_path / "a.jsonl", RECORDS[:5]), _jsonl(tmp_path / "b.jsonl", RECORDS[5:])
    out = tmp_path / "out"
    res = _run("dedup", a, b, "-o", out, "--engine", "local", "--keep-work", "-q")
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / ".neardup-work" / "manifest.json").read_text())
    assert [f["path"] for f in manifest["input"]["files"]] == [str(a.resolve()), str(b.resolve())]
    res = _run("dedup", a, b, "-o", out, "--engine", "local", "--resume", "--keep-work", "-q")
    assert res.exit_code == 0, res.output
    res = _run("dedup", b, a, "-o", out, "--engine", "local", "--resume", "--keep-work", "-q")
    assert res.exit_code == 2 and "holds a run with other input" in res.output
    data = "".join(json.dumps(r) + "\n" for r in RECORDS)
    out2 = tmp_path / "out2"
    res = _run("dedup", "-", "-o", out2, "--engine", "local", "--keep-work", "-q", input=data)
    assert res.exit_code == 0, res.output
    res = _run("dedup", "-", "-o", out2, "--engine", "local", "--resume", "--keep-work", "-q", input=data)
    assert res.exit_code == 0, res.output
    res = _run("dedup", "-", "-o", out2, "--engine", "local", "--resume", "-q", input=data.replace("harbour", "x"))
    assert res.exit_code == 2 and "holds a run with other input" in res.output


def test_keep_writes_parquet_for_a_parquet_name_and_refuses_an_unknown_suffix_before_any_work(tmp_path):
    src = _jsonl(tmp_path / "in.jsonl", RECORDS)
    res = _run("dedup", src, "-o", tmp_path / "out", "-q", "--keep", tmp_path / "kept.parquet")
    assert res.exit_code == 0, res.output
    kept = pq.read_table(tmp_path / "kept.parquet").to_pylist()
    assert kept and set(kept[0]) == {"id", "text", "n"} and len(kept) == 4
    res = _run("dedup", src, "-o", tmp_path / "out2", "-q", "--keep", tmp_path / "kept.txt")
    assert res.exit_code == 2 and "kept.txt: the kept documents are written as .jsonl" in res.output
    assert not (tmp_path / "out2").exists() and not (tmp_path / "kept.txt").exists()


def test_encoding_option_and_a_bad_byte_named_with_its_offset(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    body = "the harbour bridge will be rebuilt next year says the council"
    for i in range(3):
        (folder / f"d{i}.txt").write_bytes(f"{body} – café {i}".encode("cp1252"))
    res = _run("dedup", folder, "-o", tmp_path / "out", "-q")
    assert res.exit_code == 2
    assert f"{folder / 'd0.txt'}, line 1: invalid UTF-8 at byte {len(body) + 1} of the file (0x96)" in res.output
    for engine in ("memory", "local"):
        out = tmp_path / f"out-{engine}"
        res = _run("dedup", folder, "-o", out, "-q", "--encoding", "cp1252", "--engine", engine,
                   "--keep", tmp_path / f"kept-{engine}.jsonl")
        assert res.exit_code == 0, res.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["n_docs"] == 3 and summary["read"]["encoding"] == "cp1252"
        assert neardup.DedupResult.load(out).texts(["d1.txt"]) == {"d1.txt": f"{body} – café 1"}  # read back right
        kept = [json.loads(line) for line in (tmp_path / f"kept-{engine}.jsonl").read_text("utf-8").splitlines()]
        assert kept and all(k["text"].endswith(("café 0", "café 1", "café 2")) for k in kept)
    res = _run("dedup", folder, "-o", tmp_path / "out3", "-q", "--encoding", "nope")
    assert res.exit_code == 2 and "unknown encoding 'nope'" in res.output


@pytest.mark.shared_data
def test_clough_stevenson_reads_all_100_with_encoding_cp1252(tmp_path):
    import zipfile

    from tests.conftest import shared_file

    zipfile.ZipFile(shared_file("clough_stevenson_plagiarism/raw/corpus-final09.zip")).extractall(tmp_path)
    res = _run("dedup", tmp_path / "corpus-20090418", "-o", tmp_path / "out", "-q", "--encoding", "cp1252")
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["n_docs"] == 100 and summary["n_skipped_records"] == 0


def test_progress_shows_bytes_read_of_the_total_and_a_weights_bar_and_quiet_hides_them(tmp_path):
    src = _jsonl(tmp_path / "in.jsonl", RECORDS)
    size = src.stat().st_size
    res = _run("dedup", src, "-o", tmp_path / "out", "--engine", "local", "--method", "minhash")
    assert res.exit_code == 0, res.output
    from tqdm import tqdm

    total = tqdm.format_sizeof(size, divisor=1024)  # "1.20k": the input's size, so a rate and an ETA
    assert "reading + representing" in res.stderr and f"/{total} [" in res.stderr and "B/s, 0 docs]" in res.stderr
    assert "weights" in res.stderr
    res = _run("dedup", src, "-o", tmp_path / "out2", "--engine", "local", "--method", "minhash", "-q")
    assert res.exit_code == 0 and "reading" not in res.stderr and "weights" not in res.stderr


# ---- tune ----------------------------------------------------------------------------------------------
def test_tune_takes_docs_and_warns_on_few_pairs_and_on_a_test_set_that_is_the_validation_set(tmp_path):
    docs = _jsonl(tmp_path / "corpus" / "documents.jsonl", RECORDS)
    pairs = _jsonl(tmp_path / "labels" / "pairs.jsonl", [{"a": "n0", "b": "n1", "label": 1},
                                                         {"a": "n3", "b": "n4", "label": 1},
                                                         {"a": "n0", "b": "n3", "label": 0}])
    res = _run("tune", pairs, pairs, "--thresholds", "0.5,0.8", "--method", "minhash", "-q")
    assert res.exit_code == 2 and "give --docs" in res.output  # no docs.jsonl beside the pairs
    res = _run("tune", pairs, pairs, "--docs", docs, "--thresholds", "0.5,0.8", "--method", "minhash", "-q")
    assert res.exit_code == 0, res.output
    assert "the validation set has only 2 true duplicate pairs" in res.stderr
    assert "the test set is the validation set" in res.stderr


# ---- serve, LICENSE ------------------------------------------------------------------------------------
def test_serve_help_names_every_option_and_its_ngram_default_is_dedups():
    from neardup.config import ShingleConfig
    from neardup.online.detector import OnlineConfig

    res = _run("serve", "--help")
    assert res.exit_code == 0
    options = {word.rstrip(",") for line in res.output.splitlines() for word in line.split() if word.startswith("--")}
    assert not {o for o in options if len(o.split("/")[0]) <= 3}, options  # no bare --t, --f, --p
    assert {"--sketch-agree", "--verify-fraction"} <= options
    words, chars = ShingleConfig.DEFAULT_N[False], ShingleConfig.DEFAULT_N[True]
    assert OnlineConfig(method="minhash").n == words and OnlineConfig(method="minhash", char=True).n == chars
    assert OnlineConfig().n == words  # the seed method too
    assert f"default {words} words, {chars} characters" in " ".join(res.output.split())


def test_the_license_file_is_apache_2():
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert 'license = "Apache-2.0"' in (REPO / "pyproject.toml").read_text()
