"""End to end through the command line, on the example corpus that ships in examples/."""

import json
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from neardup.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _labels(path):
    return {r["id"]: r["cluster"] for r in map(json.loads, open(path))}


def test_dedup_writes_the_three_outputs_and_the_keep_file(example_path, tmp_path):
    out, kept = tmp_path / "out", tmp_path / "kept.jsonl"
    res = _run("dedup", example_path, "-o", out, "--keep", kept, "--quiet")
    assert res.exit_code == 0, res.output
    clusters = pq.read_table(out / "clusters.parquet").to_pylist()
    pairs = pq.read_table(out / "pairs.parquet").to_pylist()
    summary = json.loads((out / "summary.json").read_text())
    texts = {r["id"]: r["text"] for r in map(json.loads, open(example_path))}
    assert len(clusters) == len(texts) == summary["n_docs"]
    assert set(clusters[0]) >= {"id", "cluster", "cluster_size", "is_representative"}
    assert set(pairs[0]) == {"left", "right", "score"} and all(0 < p["score"] <= 1 + 1e-9 for p in pairs)
    by_cluster = {}
    for row in clusters:
        by_cluster.setdefault(row["cluster"], []).append(row)
    for cid, rows in by_cluster.items():
        assert len(rows) == rows[0]["cluster_size"]
        reps = [r["id"] for r in rows if r["is_representative"]]
        assert reps == [cid]  # one representative, and it names the cluster
        assert len(texts[cid]) == max(len(texts[r["id"]]) for r in rows)  # the longest
    kept_ids = [json.loads(l)["id"] for l in open(kept)]
    assert sorted(kept_ids) == sorted(by_cluster) and summary["n_clusters"] == len(kept_ids)
    # Planted truth: precision on the example is high and template siblings stay apart.
    truth = _labels(example_path)
    wrong = [p for p in pairs if truth[p["left"]] is None or truth[p["left"]] != truth[p["right"]]]
    assert len(wrong) <= 0.05 * len(pairs)
    assert all(r["cluster_size"] == 1 for r in clusters if r["id"].startswith("t"))
    assert summary["n_duplicate_clusters"] >= 30
    # The documented default: LSH bands derived for Jaccard 0.2, whatever the verify threshold.
    assert (summary["params"]["bands"], summary["params"]["rows"]) == (28, 2)


def test_dedup_is_deterministic(example_path, tmp_path):
    for name in ("a", "b"):
        assert _run("dedup", example_path, "-o", tmp_path / name, "-q").exit_code == 0
    a = pq.read_table(tmp_path / "a" / "clusters.parquet").to_pylist()
    b = pq.read_table(tmp_path / "b" / "clusters.parquet").to_pylist()
    assert a == b


def test_a_small_file_given_no_engine_runs_in_memory_with_the_chunked_engines_output(example_path, tmp_path):
    """`neardup dedup` alone on a file of at most 1 MiB takes the in-memory engine (no work folder, a faster
    start); any engine option keeps the chunked engine; both write the same tables."""
    auto, chunked = tmp_path / "auto", tmp_path / "chunked"
    assert _run("dedup", example_path, "-o", auto, "-q").exit_code == 0
    assert _run("dedup", example_path, "-o", chunked, "-q", "--workers", "1").exit_code == 0
    engines = [json.loads((out / "summary.json").read_text())["engine"]["name"] for out in (auto, chunked)]
    assert engines == ["memory", "local"]
    for name in ("clusters", "pairs", "evidence"):
        assert pq.read_table(auto / f"{name}.parquet").equals(pq.read_table(chunked / f"{name}.parquet")), name


def test_the_engine_a_command_line_names_none_for(example_path, tmp_path):
    from neardup.cli.options import engine_name
    from neardup.engine.plan import MEMORY_INPUT_BYTES

    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * (MEMORY_INPUT_BYTES + 1))
    gz = tmp_path / "small.jsonl.gz"
    gz.write_bytes(b"")
    none = {"engine": None, "workers": None, "resume": False, "keep_work": False, "evidence": False}
    assert engine_name(none, str(example_path)) == "memory"
    assert engine_name({**none, "evidence": True}, str(example_path)) == "memory"  # both engines write it
    assert engine_name(none, str(big)) == engine_name(none, str(gz)) == engine_name(none, str(tmp_path)) == "local"
    assert engine_name(none, str(tmp_path / "absent.jsonl")) == "local"  # the chunked engine names the error
    assert engine_name({**none, "workers": 2}, str(example_path)) == "local"
    assert engine_name({**none, "workers": 0}, str(example_path)) == "local"  # given, though it is the default
    assert engine_name({**none, "resume": True}, str(example_path)) == "local"
    assert engine_name({**none, "engine": "local"}, str(example_path)) == "local"
    assert engine_name({**none, "engine": "memory"}, str(big)) == "memory"


@pytest.mark.parametrize("method", ["minhash", "ngram", "simhash"])
def test_eval_prints_one_json_object_with_the_contract_keys(example_path, method):
    res = _run("eval", example_path, "--method", method, "--format", "json", "-q")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"ari", "precision", "recall", "f1", "n_docs", "n_pred_pairs", "seconds"} <= set(out)
    # SimHash's 64 bits make its precision at the default threshold hang on the shingle hash: 0.79 to 1.0
    # over six hash seeds on this example (the other methods' figures barely move)
    assert out["n_docs"] == 300 and out["ari"] > 0.5 and out["precision"] > (0.75 if method == "simhash" else 0.8)


def test_eval_accepts_pair_labels(tmp_path):
    docs = [{"id": str(i), "text": t} for i, t in enumerate(
        ["the harbour bridge will be rebuilt next year says council", "the harbour bridge will be rebuilt next year, says council",
         "farmers protest against new limits on grain imports", "the museum reopens after a long restoration"])]
    (tmp_path / "docs.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    (tmp_path / "pairs.jsonl").write_text("\n".join(json.dumps(p) for p in [
        {"a": "0", "b": "1", "label": 1}, {"a": "0", "b": "2", "label": 0}, {"a": "2", "b": "3", "label": 0}]))
    res = _run("eval", tmp_path / "pairs.jsonl", "-f", "json", "-q")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["precision"] == 1.0 and out["recall"] == 1.0 and out["ari"] == 1.0


def test_tune_reports_params_validation_and_test(example_path, tmp_path):
    res = _run("tune", example_path, example_path, "--method", "minhash", "--format", "json", "-q", "--word-ngrams",
               "--cluster", "components", "--thresholds", "0.3,0.5,0.7", "--trials-out", tmp_path / "trials.jsonl")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["params"]["threshold"] in (0.3, 0.5, 0.7)
    for split in ("validation", "test"):
        assert {"ari", "precision", "recall", "f1", "n_docs", "n_pred_pairs", "seconds"} <= set(out[split])
    assert out["validation"]["ari"] == pytest.approx(out["test"]["ari"])  # same file, same setting
    trials = [json.loads(l) for l in open(tmp_path / "trials.jsonl")]
    assert max(t["ari"] for t in trials) == pytest.approx(out["validation"]["ari"])


@pytest.mark.parametrize(
    "args, words",
    [
        (["--method", "bogus"], "method must be one of"),
        (["--threshold", "0"], "threshold must be in (0, 1]"),
        (["--threshold", "1.5"], "threshold must be in (0, 1]"),
        (["--bands", "40", "--rows", "4"], "must not exceed num_perm"),
        (["--cluster", "kmeans"], "cluster must be one of"),
    ],
)
def test_bad_settings_are_one_clear_line(example_path, tmp_path, args, words):
    res = _run("dedup", example_path, "-o", tmp_path / "o", "-q", *args)
    assert res.exit_code == 2
    assert words in res.stderr and "Traceback" not in res.output


def test_bad_input_names_file_and_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "txt": "typo"}\n')
    res = _run("dedup", bad, "-o", tmp_path / "o", "-q")
    assert res.exit_code == 2
    assert f"{bad}, line 2, field 'text': missing field" in res.stderr
    assert not (tmp_path / "o").exists()


def test_a_50_mb_document_is_handled(tmp_path):
    big = "lorem ipsum dolor sit amet " * (50_000_000 // 27)
    path = tmp_path / "big.jsonl"
    with open(path, "w") as fh:
        fh.write(json.dumps({"id": "big", "text": big}) + "\n")
        fh.write(json.dumps({"id": "small", "text": "lorem ipsum dolor sit amet"}) + "\n")
    res = _run("dedup", path, "-o", tmp_path / "o", "-q")
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["n_docs"] == 2 and summary["n_truncated_docs"] == 1


def test_installed_console_script_runs(example_path, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "neardup", "dedup", str(example_path), "-o", str(tmp_path / "o"), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "summary.json").exists()


def test_version_prints_the_package_version():
    import neardup

    res = _run("--version")
    assert res.exit_code == 0 and res.stdout.strip() == f"neardup {neardup.__version__}"


def test_quiet_keeps_the_one_line_summary_and_silent_prints_nothing(example_path, tmp_path):
    quiet = _run("dedup", example_path, "-o", tmp_path / "q", "-q")
    assert quiet.exit_code == 0
    assert re.fullmatch(r"300 documents, \d+ duplicate clusters, \d+ duplicates \(\d+\.\d%\) -> \S+\n", quiet.stderr)
    assert quiet.stdout == ""
    silent = _run("dedup", example_path, "-o", tmp_path / "s", "--silent")
    assert silent.exit_code == 0 and silent.output == ""
    assert (tmp_path / "s" / "evidence.parquet").exists()


def test_printed_scores_are_rounded_and_files_keep_full_precision(example_path, tmp_path):
    res = _run("tune", example_path, example_path, "--thresholds", "0.3,0.5", "-q", "--word-ngrams", "--cluster",
               "components", "--trials-out", tmp_path / "t.jsonl")
    assert res.exit_code == 0, res.output
    numbers = re.findall(r"\d+\.\d+", res.stdout)
    assert numbers and all(len(n.split(".")[1]) <= 3 for n in numbers)
    trials = [json.loads(line) for line in open(tmp_path / "t.jsonl")]
    assert any(len(repr(t["ari"]).split(".")[1]) > 3 for t in trials)


def test_representative_policy_from_the_command_line(example_path, tmp_path):
    res = _run("dedup", example_path, "-o", tmp_path / "o", "-q", "--representative", "first")
    assert res.exit_code == 0, res.output
    rows = pq.read_table(tmp_path / "o" / "clusters.parquet").to_pylist()
    order = {r["id"]: i for i, r in enumerate(rows)}
    for r in rows:  # the representative is the first of its cluster in input order
        assert order[r["cluster"]] == min(order[x["id"]] for x in rows if x["cluster"] == r["cluster"])
    bad = _run("dedup", example_path, "-o", tmp_path / "b", "-q", "--representative", "largest")
    assert bad.exit_code == 2 and "needs representative_field" in bad.stderr
