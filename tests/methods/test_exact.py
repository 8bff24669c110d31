"""Method exact: documents whose normalized text is identical, verified on the texts (never on their hash), on every
engine, in ``match`` and ``tune``; and a method is one file: a copy of ``methods/exact.py`` under another name is a
second method that every entry point runs, its settings and command-line option included, with no other edit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import neardup
from neardup import methods
from neardup.config import ConfigError, DedupConfig, EngineConfig
from neardup.eval.evaluate import LabelledData
from neardup.eval.tune import tune
from neardup.io.read import read_records
from neardup.methods.exact import Exact, text_chunks

STORY = "The harbour bridge will be rebuilt next year, the city council said on Tuesday."
#: Copies of one story whose raw texts differ only in what normalization removes, one other story, one short text.
TEXTS = [STORY, STORY.upper(), "  the   HARBOUR bridge will be rebuilt next year the city council said on tuesday!!",
         "Farmers protested against new limits on grain imports.", "ok", "OK!", ""]


def _local(**changes) -> EngineConfig:
    return EngineConfig(**{"name": "local", "workers": 2, "batch_docs": 3, "memory_limit": 2**30, "progress": False,
                           **changes})


def test_identical_normalized_texts_and_nothing_else():
    result = neardup.dedup(TEXTS, method="exact")
    assert result.groups() == [[0, 1, 2], [4, 5]]
    assert result.summary["params"]["threshold"] == 1.0 and result.summary["params"]["verify"]["score"] == "jaccard"
    assert set(result.scores.tolist()) == {1.0}
    assert {v["view"] for e in result.evidence() for v in e["views"]} == {"identical normalized text"}
    assert neardup.dedup(TEXTS, method="exact", engine=_local()).groups() == result.groups()


def test_the_normalize_stage_as_configured_decides_what_is_identical():
    kept_case = neardup.dedup(TEXTS, method="exact", normalize__casefold=False)
    assert kept_case.groups() == []  # every copy differs in case, "ok" and "OK" too
    raw = neardup.dedup(TEXTS, method="exact", normalize__enabled=False)
    assert raw.groups() == []
    assert neardup.dedup([STORY, STORY + " "], method="exact", normalize__enabled=False).groups() == []
    assert neardup.dedup([STORY, STORY], method="exact", normalize__enabled=False).groups() == [[0, 1]]


def test_min_chars_leaves_short_texts_alone():
    result = neardup.dedup(TEXTS, method="exact", exact__min_chars=5)
    assert result.groups() == [[0, 1, 2]] and result.summary["params"]["exact"] == {"min_chars": 5}
    with pytest.raises(ConfigError, match="min_chars must be an integer >= 0"):
        DedupConfig(method="exact").replace(exact__min_chars=-1)


def test_a_text_is_its_set_losslessly():
    texts = ["abc", "abc\x00", "abcd", "abcdé", "é", "日本語のテキスト", "\ud800x"]
    units = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    sets = text_chunks(units, np.array([len(t) for t in texts]), np.ones(len(texts), dtype=bool))
    rows = [tuple(sets[i].tolist()) for i in range(len(texts))]
    assert len(set(rows)) == len(texts)  # a NUL or a padding byte never makes two texts one
    for i, text in enumerate(texts):
        data = b"".join(int(v & 0xFFFFFFFF).to_bytes(4, "big") for v in rows[i]).rstrip(b"\xff")
        assert data.decode("utf-8", "surrogatepass") == text
        assert list(rows[i]) == sorted(rows[i]) and [v >> 32 for v in rows[i]] == list(range(len(rows[i])))


def test_candidates_share_the_hash_and_are_verified_on_the_texts(monkeypatch):
    """A hash collision is a candidate, never a duplicate: the score compares the texts."""
    monkeypatch.setattr(Exact, "sketch", lambda self, sets: np.zeros(len(sets), dtype=np.uint64))
    result = neardup.dedup([STORY, STORY.upper(), "A different story altogether, of the same hash."], method="exact")
    assert result.summary["n_candidates"] == 3
    assert result.groups() == [[0, 1]]
    method = methods.get(DedupConfig(method="exact"))
    rep = method.represent([STORY, STORY + " And more."], 10_000)
    assert method.score(rep, np.array([0]), np.array([1]))[0] < 1.0


def test_threshold_and_score_are_fixed_by_the_method():
    assert DedupConfig(method="exact").threshold == 1.0
    with pytest.raises(ConfigError, match="verify score must be 'jaccard'"):
        DedupConfig(method="exact").replace(verify__score="overlap")


@pytest.mark.parametrize("cluster", [{}, {"cluster__representative": "first"}, {"cluster__algorithm": "components"},
                                     {"cluster__representative": "cleanest"}])
def test_large_buckets_give_the_same_decisions_on_every_engine(cluster):
    """A bucket of 40 copies is a star on the document kept (k - 1 candidates) where the clustering reads only
    that, else whole; either way every copy but one is removed, as on the chunked engine."""
    copies = [STORY + "!" * (i % 7) + " " * (i % 3) for i in range(40)]
    texts = [f"Story number {i} is about something else entirely." for i in range(10)] + copies
    cfg = DedupConfig(method="exact").replace(**cluster)
    ref = neardup.dedup(texts, config=cfg)
    got = neardup.dedup(texts, config=cfg, engine=_local(batch_docs=9))
    assert ref.groups() == got.groups() and len(ref.groups()) == 1 and len(ref.groups()[0]) == 40
    assert ref.representatives == got.representatives and ref.cluster_ids == got.cluster_ids
    whole = "cleanest" in cluster.values()
    assert ref.summary["n_candidates"] == got.summary["n_candidates"] == (40 * 39 // 2 if whole else 39)
    if not cluster:  # greedy keeps the longest copy
        assert ref.representatives[-1] == max(range(10, 50), key=lambda i: (len(texts[i]), -i))


def test_match_finds_the_identical_queries(tmp_path):
    corpus = [{"id": f"c{i}", "text": t} for i, t in enumerate(TEXTS[:4])]
    queries = [{"id": "q0", "text": STORY.lower() + "."}, {"id": "q1", "text": STORY + " With a new ending."}]
    found = neardup.match(queries, corpus, config=DedupConfig(method="exact"))
    assert sorted(zip(found.query_ids, found.corpus_ids)) == [("q0", "c0"), ("q0", "c1"), ("q0", "c2")]
    assert set(found.scores.tolist()) == {1.0}


def test_tune_has_nothing_to_calibrate():
    labels = ["a", "a", "a", None, "b", "b", None]
    data = LabelledData(read_records([{"id": str(i), "text": t, "cluster": c} for i, (t, c)
                                      in enumerate(zip(TEXTS, labels))], label_field="cluster"))
    out = tune(data, None, DedupConfig(method="exact"))
    assert out["params"]["threshold"] == 1.0 and out["validation"]["ari"] == 1.0
    assert out["chosen"].method == "exact"


def test_the_command_line_offers_min_chars(tmp_path):
    from typer.testing import CliRunner

    from neardup.cli import app

    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    res = CliRunner().invoke(app, ["dedup", str(path), "-o", str(tmp_path / "o"), "-m", "exact",
                                   "--exact-min-chars", "5", "-q"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["params"]["exact"] == {"min_chars": 5} and summary["n_pairs"] == 2


# ---- a method is one file --------------------------------------------------------------------------------------


@pytest.fixture
def twin(method_twin):
    return method_twin("exact-twin")


def _neardup(*args: str) -> subprocess.CompletedProcess[str]:
    """``neardup ARGS`` in a fresh process (it reads the method files as they are now)."""
    src = str(Path(neardup.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "neardup", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_a_copy_of_the_file_is_a_second_method_everywhere(twin, tmp_path):
    # dedup, in memory and on the chunked engine (its workers find the new file themselves)
    ref = neardup.dedup(TEXTS, method="exact")
    got = neardup.dedup(TEXTS, method=twin)
    assert got.groups() == ref.groups() and got.summary["params"]["method"] == twin
    assert got.summary["params"]["exact_twin"] == {"min_chars": 0}
    assert neardup.dedup(TEXTS, method=twin, engine=_local()).groups() == ref.groups()
    assert twin in methods.names() and methods.method_class(twin).__module__ == "neardup.methods.exact_twin"
    assert twin in methods.catalog() and methods.catalog()[twin].settings[0].flag == "--exact-twin-min-chars"
    # its own settings: a stage of the config, a command-line option, a key of the configuration file
    cfg = DedupConfig(method=twin).replace(exact_twin__min_chars=5)
    assert neardup.dedup(TEXTS, config=cfg).groups() == [[0, 1, 2]]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t, "cluster": c}) + "\n"
                            for i, (t, c) in enumerate(zip(TEXTS, ["a", "a", "a", None, "b", "b", None]))))
    run = _neardup("dedup", str(path), "-o", str(tmp_path / "o"), "-m", twin, "--exact-twin-min-chars", "5",
                   "--engine", "local", "-q")
    assert run.returncode == 0, run.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["params"]["method"] == twin and summary["params"]["exact_twin"] == {"min_chars": 5}
    assert summary["n_pairs"] == 2
    assert twin in _neardup("dedup", "--help").stdout.replace("\n", " ").replace("  ", " ")
    # match and tune
    found = neardup.match(TEXTS[:2], TEXTS, config=DedupConfig(method=twin))
    assert set(zip(found.query_ids, found.corpus_ids)) == {(q, c) for q in (0, 1) for c in (0, 1, 2)}
    run = _neardup("tune", str(path), str(path), "-m", twin, "--out", str(tmp_path / "chosen.json"), "-f", "json",
                   "-q")
    assert run.returncode == 0, run.stderr
    tuned = json.loads(run.stdout)
    assert tuned["method"] == twin and tuned["params"]["threshold"] == 1.0 and tuned["validation"]["ari"] == 1.0
    run = _neardup("dedup", str(path), "-o", str(tmp_path / "c"), "--config", str(tmp_path / "chosen.json"), "-q")
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "c" / "summary.json").read_text())["params"]["method"] == twin
