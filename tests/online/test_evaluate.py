"""Online evaluation: the scoring rule, stream order, replay, the tuning shortcut and the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from neardup.io.read import InputError
from neardup.cli.online import standalone_app
from neardup.online.detector import OnlineConfig
from neardup.online.evaluate import (
    _trace,
    load_stream,
    make_noisy_stream,
    replay,
    score_links,
    simulate,
    split_components,
)

from ..conftest import shared_file

runner = CliRunner()


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_scoring_follows_the_seed_paper():
    labels = ["a", "a", "a", None, "b", "b"]
    # doc1 -> doc0 (TP), doc2 -> doc3 (wrong cluster: FP and FN), doc3 -> doc0 (original flagged: FP),
    # doc5 missed (FN)
    m = score_links(labels, [None, 0, 3, 0, None, None])
    assert (m["tp"], m["fp"], m["fn"], m["n_true_duplicates"]) == (1, 2, 2, 3)
    assert m["precision"] == pytest.approx(1 / 3) and m["recall"] == pytest.approx(1 / 3)
    perfect = score_links(labels, [None, 0, 1, None, None, 4])
    assert perfect["f1"] == 1.0
    nothing = score_links([None, None], [None, None])
    assert (nothing["precision"], nothing["recall"]) == (1.0, 1.0)


def test_time_order_and_input_errors(tmp_path):
    rows = [{"id": "late", "text": "b", "cluster": "x", "date": "2-MAR-1987 10:00:00.00"},
            {"id": "early", "text": "a", "cluster": "x", "date": "2-MAR-1987 09:00:00.00"},
            {"id": "iso", "text": "c", "cluster": None, "date": "1987-03-02T09:30:00"}]
    path = _write(tmp_path / "s.jsonl", rows)
    assert load_stream(path).ids == ["late", "early", "iso"]
    assert load_stream(path, order="time").ids == ["early", "iso", "late"]
    bad = _write(tmp_path / "bad.jsonl", rows + [{"id": "z", "text": "d", "cluster": None, "date": "soon"}])
    with pytest.raises(InputError, match=r"bad.jsonl, line 4, field 'date'"):
        load_stream(bad, order="time")
    nolabel = _write(tmp_path / "nolabel.jsonl", [{"id": "a", "text": "t"}])
    with pytest.raises(InputError, match="no document has a 'cluster' label"):
        load_stream(nolabel)


@pytest.mark.parametrize("config", [OnlineConfig(t=1, f=0.6, r_overlap=0.4),
                                    OnlineConfig.ours(update_rule=True, r_overlap=0.5, n=4),
                                    OnlineConfig(update_rule=True, update_min_numbers=2, update_min_sentences=0),
                                    OnlineConfig(method="minhash", top_candidates=3, lsh_threshold=0.3, f=1.0)],
                         ids=["sketch", "ours-update", "sketch-numbers2", "minhash-top3"])
def test_the_tuning_shortcut_decides_exactly_like_the_detector(example_path, config):
    stream = load_stream(example_path)
    stream = type(stream)(stream.ids[:200], stream.texts[:200], stream.labels[:200])
    real = replay(stream, config, "memory://")
    trace = _trace(stream, config, [config.f], max(config.top_candidates, 10) if config.method == "sketch"
                   else config.top_candidates, {})
    min_votes = config.t + 1 if config.method == "sketch" else config.min_bands
    links, canon = simulate(trace, min_votes, config.top_candidates, config.f, config.r_overlap, config.update_rule,
                            config.update_min_numbers, config.update_min_sentences)
    fast = score_links(stream.labels, links)
    assert (fast["tp"], fast["fp"], fast["fn"]) == (real["tp"], real["fp"], real["fn"])
    assert score_links(stream.labels, canon)["tp"] == real["canonical"]["tp"]


def test_eval_cli_prints_one_json_object(example_path, tmp_path):
    res = runner.invoke(standalone_app(), ["online", "eval", str(example_path), "--method", "minhash",
                                           "--top-candidates", "5", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["method"] == "minhash" and out["config"]["top_candidates"] == 5
    assert 0 <= out["precision"] <= 1 and out["n_docs"] == 300 and out["store"] == "sqlite"
    assert set(out["latency"]) >= {"p50_ms", "p95_ms", "p99_ms"}
    assert out["f1"] > 0.3 and out["recall"] > 0.8


def test_tune_cli_prints_params_validation_and_test(example_path, tmp_path):
    trials = tmp_path / "trials.jsonl"
    example_path = _write(tmp_path / "small.jsonl", [json.loads(x) for x in example_path.read_text().splitlines()][:80])
    res = runner.invoke(standalone_app(), ["online", "tune", str(example_path), str(example_path),
                                           "--method", "sketch", "--no-update-rule", "--format", "json",
                                           "--trials-out", str(trials)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"params", "validation", "test"} <= set(out)
    assert set(out["params"]) >= {"n", "t", "f", "r_overlap", "update_rule"}
    for part in ("validation", "test"):
        assert {"precision", "recall", "f1"} <= set(out[part])
    assert out["validation"]["f1"] == out["test"]["f1"]  # same file: same replay
    best = max(json.loads(line)["f1"] for line in trials.read_text().splitlines())
    assert out["validation"]["f1"] == pytest.approx(best)
    # The chosen settings feed eval/serve unchanged.
    settings = tmp_path / "chosen.json"
    settings.write_text(json.dumps(out))
    res = runner.invoke(standalone_app(), ["online", "eval", str(example_path), "--config", str(settings),
                                           "--format", "json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["f1"] == pytest.approx(best)


def test_cli_errors_are_one_line_and_exit_2(tmp_path, example_path):
    app = standalone_app()
    for args, needle in ((["online", "eval", str(tmp_path / "missing.jsonl")], "missing.jsonl"),
                         (["online", "eval", str(example_path), "--method", "bogus"], "method must be one of"),
                         (["online", "eval", str(example_path), "--verify-fraction", "2"], "f must be in (0, 1]"),
                         (["online", "eval", str(example_path), "--order", "time"], "field 'date'"),
                         (["online", "eval", str(example_path), "--store", "sqlite:///" + str(tmp_path)],
                          "is a folder")):
        res = runner.invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.output and "Traceback" not in res.output


def test_split_keeps_linked_documents_and_clusters_together(tmp_path):
    story = "the quick brown fox jumps over the lazy dog near the river bank today"
    rows = [{"id": "1", "text": story, "cluster": "a"}, {"id": "2", "text": story + " again", "cluster": "a"},
            {"id": "3", "text": "completely different words about markets and prices rising", "cluster": None},
            {"id": "4", "text": "weather report sunny skies expected for the whole weekend ahead", "cluster": "b"},
            {"id": "5", "text": "a short unrelated note", "cluster": "b"}]
    stats = split_components(_write(tmp_path / "d.jsonl", rows), tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    halves = [[json.loads(x) for x in (tmp_path / f).read_text().splitlines()] for f in ("a.jsonl", "b.jsonl")]
    assert sorted(r["id"] for h in halves for r in h) == ["1", "2", "3", "4", "5"]
    where = {r["id"]: k for k, h in enumerate(halves) for r in h}
    assert where["1"] == where["2"] and where["4"] == where["5"]
    assert stats["a"]["n_docs"] + stats["b"]["n_docs"] == 5


def test_make_noisy_stream_labels_copies_and_updates(tmp_path):
    source = _write(tmp_path / "src.jsonl", [
        {"id": f"s{i}", "text": f"Article {i}. Sales rose {i + 3} pct in May to {100 + i} million. "
                                f"The company said demand from Asia was strong. Shares gained {i} pct.",
         "exact_dup_group": "g1" if i in (0, 1) else None} for i in range(40)])
    stats = make_noisy_stream(source, tmp_path / "a.jsonl", tmp_path / "b.jsonl", seed=1, copy_rate=0.5,
                              update_rate=0.3)
    docs = [json.loads(x) for f in ("a.jsonl", "b.jsonl") for x in (tmp_path / f).read_text().splitlines()]
    assert len(docs) == 40 + stats["copies"] + stats["updates"] and stats["copies"] > 5 and stats["updates"] > 3
    by_id = {d["id"]: d for d in docs}
    assert by_id["s0"]["cluster"] == by_id["s1"]["cluster"]  # exact twins share a cluster
    for d in docs:
        if "~update" in d["id"]:
            assert d["cluster"] is None
        elif "~" in d["id"]:
            assert d["cluster"] == by_id[d["id"].split("~")[0]]["cluster"]
            assert d["date"] > by_id[d["id"].split("~")[0]]["date"]


@pytest.mark.shared_data
def test_reuters_day_replays_in_time_order():
    path = shared_file("reuters_days/docs.jsonl")
    stream = load_stream(path, order="time")
    assert len(stream) == 565 and int(stream.true_duplicates().sum()) == 20
    out = replay(stream, OnlineConfig(), "memory://")
    assert out["recall"] >= 0.8 and out["n_true_duplicates"] == 20
