"""One tuning serves every command: ``neardup tune --out chosen.json`` writes the chosen configuration, and
``dedup``, ``eval``, ``match`` and ``tune`` run with exactly those settings given ``--config chosen.json``;
options on the command line override the file; a bad file is one clear line naming it."""

import json

import pytest
from typer.testing import CliRunner

import neardup
from neardup.cli import app
from neardup.io.config_file import load_config
from tests.conftest import EXAMPLE

runner = CliRunner()
#: A small search (one method, unit, size, score and clustering; three thresholds): seconds on the example.
SMALL = ("-m", "minhash", "--char-ngrams", "--ngram", "5", "--verify", "weighted-overlap", "--cluster", "components",
         "--thresholds", "0.3,0.5,0.7", "-q")
COMPARED = ("method", "threshold", "shingle", "verify", "cluster", "normalize", "ngram", "simhash", "embed")


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def chosen(tmp_path_factory):
    """tune on the example (validation = test), its JSON output and the file it wrote."""
    path = tmp_path_factory.mktemp("tuned") / "chosen.json"
    res = _run("tune", EXAMPLE, EXAMPLE, *SMALL, "--out", path, "--format", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), path, json.loads(path.read_text())


def test_tune_writes_the_chosen_configuration_with_what_produced_it(chosen):
    out, path, data = chosen
    assert data["neardup_config"] == 1
    assert data["config"] == out["config"]
    cfg = load_config(path)
    assert (cfg.method, cfg.shingle.char, cfg.shingle.n, cfg.threshold) == ("minhash", True, 5, out["params"]["threshold"])
    tuned = data["tuned"]
    assert tuned["validation"]["ari"] == pytest.approx(out["validation"]["ari"])
    assert tuned["test"]["ari"] == pytest.approx(out["test"]["ari"])
    assert tuned["search"]["space_size"] >= tuned["search"]["points_tried"] > 0
    assert "default" in tuned and tuned["default"]["validation"]["ari"] <= out["validation"]["ari"]


def test_dedup_with_the_file_runs_exactly_its_settings(chosen, example_path, tmp_path):
    _, path, data = chosen
    res = _run("dedup", example_path, "-o", tmp_path / "o", "--config", path, "-q")
    assert res.exit_code == 0, res.output
    params = json.loads((tmp_path / "o" / "summary.json").read_text())["params"]
    for key in COMPARED:
        assert params[key] == data["config"][key], key
    assert {k: v for k, v in params["minhash"].items() if k != "algorithm"} == data["config"]["minhash"]
    plain = _run("dedup", example_path, "-o", tmp_path / "p", "-q")  # without the file: the calibrated default
    assert plain.exit_code == 0, plain.output
    assert json.loads((tmp_path / "p" / "summary.json").read_text())["params"]["shingle"] != data["config"]["shingle"]


def test_options_on_the_command_line_override_the_file(chosen, example_path, tmp_path):
    _, path, data = chosen
    res = _run("dedup", example_path, "-o", tmp_path / "o", "--config", path, "--threshold", "0.95", "--cluster",
               "leiden", "-q")
    assert res.exit_code == 0, res.output
    params = json.loads((tmp_path / "o" / "summary.json").read_text())["params"]
    assert params["threshold"] == 0.95 and params["cluster"]["algorithm"] == "leiden"
    assert params["shingle"] == data["config"]["shingle"] and params["verify"] == data["config"]["verify"]


def test_eval_with_the_file_reproduces_the_tuned_test_figures(chosen, example_path):
    out, path, data = chosen
    res = _run("eval", example_path, "--config", path, "-f", "json", "-q")
    assert res.exit_code == 0, res.output
    figures = json.loads(res.stdout)
    assert figures["method"] == data["config"]["method"] and figures["threshold"] == data["config"]["threshold"]
    assert figures["ari"] == pytest.approx(out["test"]["ari"]) and figures["f1"] == pytest.approx(out["test"]["f1"])


def test_match_with_the_file_runs_exactly_its_settings(chosen, example_path, tmp_path):
    _, path, data = chosen
    res = _run("match", example_path, example_path, "-o", tmp_path / "m", "--config", path, "-q")
    assert res.exit_code == 0, res.output
    params = json.loads((tmp_path / "m" / "summary.json").read_text())["params"]
    for key in ("method", "threshold", "shingle", "verify", "normalize"):
        assert params[key] == data["config"][key], key


def test_tune_starts_from_the_file(chosen, example_path, tmp_path):
    _, path, data = chosen
    res = _run("tune", example_path, example_path, *SMALL, "--config", path, "--format", "json")
    assert res.exit_code == 0, res.output
    default = json.loads(res.stdout)["default"]
    assert default["params"]["threshold"] == data["config"]["threshold"]
    assert default["params"]["ngram"] == 5 and default["params"]["char"] is True


def test_the_python_api_takes_the_file_too(chosen, example_path):
    _, path, _ = chosen
    by_path = neardup.dedup(example_path, config=path)
    by_config = neardup.dedup(example_path, config=load_config(path))
    assert by_path.groups() == by_config.groups()
    assert by_path.summary["params"]["threshold"] == load_config(path).threshold


def test_tune_refuses_to_overwrite_the_file_without_overwrite(chosen, example_path, tmp_path):
    _, path, _ = chosen
    target = tmp_path / "c.json"
    target.write_text("{}")
    res = _run("tune", example_path, example_path, *SMALL, "--out", target)
    assert res.exit_code == 2 and "exists: give --overwrite" in res.stderr and target.read_text() == "{}"
    res = _run("tune", example_path, example_path, *SMALL, "--out", example_path, "--overwrite")
    assert res.exit_code == 2 and "is an input" in res.stderr
    res = _run("tune", example_path, example_path, *SMALL, "--out", target, "--overwrite")
    assert res.exit_code == 0, res.output
    assert load_config(target).shingle.char is True


@pytest.mark.parametrize("content, words", [
    ("{not json", "not a JSON configuration file"),
    ('{"neardup_config": 1, "config": {"threshhold": 0.5}}', "unknown setting(s): threshhold"),
    ('{"neardup_config": 7, "config": {}}', "configuration format 7 is not known"),
    ('{"neardup_config": 1, "config": {"threshold": 2}}', "threshold must be in (0, 1]"),
    (None, "no such configuration file"),
])
@pytest.mark.parametrize("command", ["dedup", "eval", "match", "tune"])
def test_a_bad_configuration_file_is_one_line_naming_it(example_path, tmp_path, content, words, command):
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    args = {"dedup": ("dedup", example_path, "-o", tmp_path / "o"), "eval": ("eval", example_path),
            "match": ("match", example_path, example_path, "-o", tmp_path / "o"),
            "tune": ("tune", example_path, example_path)}[command]
    res = _run(*args, "--config", bad, "-q")
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"neardup: error: {bad}: ") and words in res.stderr
    assert "Traceback" not in res.output and not (tmp_path / "o").exists()


@pytest.mark.parametrize("budget", ["10", "10 minutes", "0s", "1d"])
def test_a_bad_budget_is_one_clear_line(example_path, budget):
    res = _run("tune", example_path, example_path, "--budget", budget, "-q")
    assert res.exit_code == 2 and res.stderr.startswith("neardup: error: --budget: a duration must")


def test_a_budget_stops_the_search_and_says_what_it_skipped(example_path):
    res = _run("tune", example_path, example_path, "-m", "minhash", "--word-ngrams", "--cluster", "components",
               "--budget", "0.001s", "-q")
    assert res.exit_code == 0, res.output
    assert "cells_tried: 1\n" in res.stdout
    assert "cells of stage representation (budget)" in res.stdout
