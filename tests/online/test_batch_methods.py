"""A registered batch method with look-up keys runs in the online detector (issue 57): ``exact`` in ``online load``
and ``serve``, the same decisions as the batch run in input order, and a copy of ``methods/exact.py`` under another
name runs online with no other edit."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from neardup.cli.online import online_config, standalone_app
from neardup.config import ConfigError, DedupConfig
from neardup.online.detector import Detector, OnlineConfig
from neardup.online.service import create_app
from neardup.online.settings_file import read_settings
from neardup.online.store import MemoryStore, open_store

from .conftest import OTHER, STORY
from .test_service import AUTH, TOKEN, RunningServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "news.jsonl"
TEXTS = ["Stocks rose sharply in Tokyo.", "stocks  ROSE sharply in tokyo!", "Stocks fell in Tokyo.",
         "STOCKS rose sharply in Tokyo", "Stocks fell in Tokyo"]


def _online_decisions(url: str) -> dict[str, str]:
    """Each stored duplicate's original, by id."""
    store = open_store(url)
    try:
        stored = store.get_many([json.loads(line)["id"] for line in EXAMPLE.open()])
        return {i: rec.original_id for i, rec in stored.items() if not rec.is_original}
    finally:
        store.close()


def _batch_decisions(method: str, out: Path) -> dict[str, str]:
    from neardup.cli import app

    res = CliRunner().invoke(app, ["dedup", str(EXAMPLE), "-m", method, "--representative", "first", "-o", str(out),
                                   "-q"])
    assert res.exit_code == 0, res.output
    rows = pq.read_table(out / "clusters.parquet").to_pylist()
    return {r["id"]: r["cluster"] for r in rows if not r["kept"]}


def _load(method: str, url: str) -> dict:
    res = CliRunner().invoke(standalone_app(), ["online", "load", str(EXAMPLE), "--store", url, "--method", method,
                                                "--format", "json", "--quiet"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_online_load_with_exact_decides_as_the_batch_run_in_input_order(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    out = _load("exact", url)
    assert out["method"] == "exact" and out["added"] == out["read"] == sum(1 for _ in EXAMPLE.open())
    online = _online_decisions(url)
    batch = _batch_decisions("exact", tmp_path / "batch")
    assert online == batch and len(online) == out["duplicates"] >= 1
    # the store keeps its method: a later load with auto adopts it (nothing added twice), another method is refused
    again = _load("auto", url)
    assert again["method"] == "exact" and again["resubmitted"] == again["read"] and again["added"] == 0
    res = CliRunner().invoke(standalone_app(), ["online", "load", str(EXAMPLE), "--store", url, "--method", "minhash",
                                                "--quiet"])
    assert res.exit_code == 2 and "built with other settings" in res.stderr


def test_exact_decides_like_one_add_at_a_time_and_names_its_evidence(stores):
    d = Detector(stores.open(), OnlineConfig(method="exact"))
    answers = [d.add(str(i), t) for i, t in enumerate(TEXTS)]
    assert [(a.status, a.original_id) for a in answers] == [("original", "0"), ("duplicate", "0"), ("original", "2"),
                                                             ("duplicate", "0"), ("duplicate", "2")]
    assert answers[1].score == 1.0 and answers[1].evidence == ["identical normalized text"]
    batch = Detector(MemoryStore(), OnlineConfig(method="exact")).add_many([(str(i), t) for i, t in enumerate(TEXTS)])
    assert [(a.status, a.original_id) for a in batch] == [(a.status, a.original_id) for a in answers]
    d.delete("0")  # the earliest remaining copy is promoted; a new copy finds it
    assert d.add("5", TEXTS[0]).original_id == "1"


def test_batch_method_settings_round_trip_and_are_checked():
    cfg = OnlineConfig(method="exact", batch=DedupConfig(method="exact").replace(exact__min_chars=40))
    back = OnlineConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert back == cfg and back.batch.exact.min_chars == 40 and back.key_settings() == cfg.key_settings()
    assert cfg.replace(t=3).batch.exact.min_chars == 40 and cfg.replace(method="minhash").batch is None
    assert "batch" not in OnlineConfig().to_dict()
    short = Detector(MemoryStore(), cfg)  # shorter texts are compared with none
    assert [a.status for a in short.add_many([("a", TEXTS[0]), ("b", TEXTS[1])])] == ["original", "original"]
    with pytest.raises(ConfigError, match="IDF weights"):
        OnlineConfig(method="ngram")
    with pytest.raises(ConfigError, match="no look-up keys"):
        OnlineConfig(method="retsim")
    with pytest.raises(ConfigError, match="registered batch method"):
        OnlineConfig(method="nope")
    ngram = OnlineConfig(method="ngram", batch=DedupConfig(method="ngram").replace(verify__score="overlap"))
    d = Detector(MemoryStore(), ngram)
    assert d.add("a", STORY).status == "original" and d.add("b", "REPRINT. " + STORY).original_id == "a"
    simhash = Detector(MemoryStore(), OnlineConfig(method="simhash"))
    assert simhash.add("a", STORY).status == "original" and simhash.add("b", STORY + " ").original_id == "a"
    assert simhash.add("c", OTHER).status == "original"


def test_the_batch_configuration_file_of_exact_runs_exact_online(tmp_path):
    path = tmp_path / "chosen.json"
    path.write_text(json.dumps({"neardup_config": 1, "config": {"method": "exact", "exact": {"min_chars": 7}}}))
    settings, notes = read_settings(path)
    cfg = online_config({"config": path, "method": None})
    assert notes == [] and settings["method"] == "exact" and (cfg.method, cfg.batch.exact.min_chars) == ("exact", 7)


def test_serve_accepts_documents_with_exact(tmp_path):
    cfg = online_config({"method": "exact"})  # what ``neardup serve --method exact`` runs
    detector = Detector(open_store(f"sqlite:///{tmp_path / 's.db'}"), cfg)
    running = RunningServer(create_app(detector, token=TOKEN, max_body_bytes=64 * 1024, max_batch=50))
    try:
        with httpx.Client(base_url=running.url, headers=AUTH, timeout=30) as client:
            r = client.post("/documents", json={"id": "a", "text": STORY})
            assert r.status_code == 200, r.text
            assert r.json()["status"] == "original"
            r = client.post("/documents", json=[{"id": "b", "text": STORY.upper()}, {"id": "c", "text": OTHER},
                                                {"id": "d", "text": "REPRINT. " + STORY}])
            assert r.status_code == 200, r.text
            b, c, d = r.json()
            assert (b["status"], b["original_id"], b["score"], b["evidence"]) == \
                ("duplicate", "a", 1.0, ["identical normalized text"])
            assert (c["status"], d["status"]) == ("original", "original")
            assert client.get("/stats").json()["method"] == "exact"
    finally:
        running.stop()
        detector.close()


@pytest.fixture
def twin(method_twin):
    return method_twin("exact-online-twin")


def test_a_copy_of_the_exact_file_runs_online_with_no_other_edit(twin, tmp_path):
    ref = [(a.status, a.original_id) for a in Detector(MemoryStore(), OnlineConfig(method="exact")).add_many(
        [(str(i), t) for i, t in enumerate(TEXTS)])]
    got = Detector(MemoryStore(), OnlineConfig(method=twin)).add_many([(str(i), t) for i, t in enumerate(TEXTS)])
    assert [(a.status, a.original_id) for a in got] == ref and got[1].evidence == ["identical normalized text"]
    url = f"sqlite:///{tmp_path / 't.db'}"
    assert _load(twin, url)["method"] == twin
    assert _online_decisions(url) == _batch_decisions("exact", tmp_path / "batch")
