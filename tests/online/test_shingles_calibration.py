"""Character shingles, the calibrated default (method auto) and batch configuration files in the online detector."""

from __future__ import annotations

import json
import random
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from neardup.cli.online import standalone_app
from neardup.config import DedupConfig
from neardup.io.config_file import save_config
from neardup.online.detector import Detector, OnlineConfig
from neardup.online.evaluate import Stream, replay
from neardup.online.store import MemoryStore, open_store
from neardup.synth import apply_noise
from neardup.text.normalize import normalize

from .conftest import OTHER, STORY, THIRD
from .test_service import AUTH, TOKEN, RunningServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "news.jsonl"
#: Heavy OCR noise (seed 3): about one character in ten replaced, no word 4-gram left intact.
NOISY_STORY = apply_noise(STORY, "ocr-heavy", 3, "x").text


def _filled(config: OnlineConfig) -> Detector:
    d = Detector(MemoryStore(), config)
    for doc_id, text in (("a", STORY), ("o", OTHER), ("t", THIRD)):
        d.add(doc_id, text)
    return d


@pytest.mark.parametrize("method", ["minhash", "sketch"])
def test_char_shingles_find_an_ocr_copy_that_word_shingles_miss(method):
    words = OnlineConfig.ours() if method == "minhash" else OnlineConfig()
    # r_overlap 0.45: what the calibration gives character shingles at heavy-OCR damage (about 0.1)
    chars = OnlineConfig.ours(char=True, r_overlap=0.45) if method == "minhash" else OnlineConfig(char=True)
    if method == "minhash":  # the seed's word 3-grams at r_overlap 0.3 still catch this copy
        assert _filled(words).add("b", NOISY_STORY).status == "original"
    ans = _filled(chars).add("b", NOISY_STORY)
    assert (ans.status, ans.original_id) == ("duplicate", "a")
    assert ans.evidence and all(len(e) >= 10 and e.strip(" …") in normalize(NOISY_STORY) for e in ans.evidence)


def test_char_shingles_keep_unrelated_stories_apart():
    d = _filled(OnlineConfig.ours(char=True, r_overlap=0.45))
    assert d.add("x", "Officials in the port city said the new ferry line will start running in the spring, "
                      "carrying cars and passengers across the bay twice a day.").status == "original"


def test_char_shingles_through_the_http_service(stores):
    running = RunningServer(__import__("neardup.online.service", fromlist=["create_app"]).create_app(
        Detector(stores.open(), OnlineConfig.ours(char=True, r_overlap=0.45)), token=TOKEN))
    try:
        with httpx.Client(base_url=running.url, headers=AUTH, timeout=30) as client:
            assert client.post("/documents", json={"id": "a", "text": STORY}).json()["status"] == "original"
            client.post("/documents", json={"id": "o", "text": OTHER})
            b = client.post("/documents", json={"id": "b", "text": NOISY_STORY}).json()
            assert (b["status"], b["original_id"], b["matched_id"]) == ("duplicate", "a", "a")
            assert 0 < b["score"] <= 1 and b["evidence"]
            assert all(e.strip(" …") in normalize(NOISY_STORY) for e in b["evidence"])
            assert client.get("/health").json()["method"] == "minhash"
    finally:
        running.stop()


def _example_texts() -> list[str]:
    return [json.loads(line)["text"] for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("noise, char", [(None, False), ("ocr-heavy", True)])
def test_auto_picks_words_on_clean_and_characters_on_noisy_text_and_the_store_keeps_it(tmp_path, noise, char):
    texts = _example_texts()
    if noise:
        texts = [apply_noise(t, noise, 0, doc_id=str(i)).text for i, t in enumerate(texts)]
    url = f"sqlite:///{tmp_path / 'store.db'}"
    d = Detector(open_store(url), OnlineConfig(method="auto"))
    assert d.needs_calibration
    d.add_many([(str(i), t) for i, t in enumerate(texts[:150])])
    assert (d.config.method, d.config.char, d.calibration["choice"]["char"]) == ("minhash", char, char)
    chosen = d.config
    d.close()
    # a later process (another detector on the same store) uses the recorded choice, not a new profile
    later = Detector(open_store(url), OnlineConfig(method="auto"))
    assert not later.needs_calibration and later.config == chosen and later.calibration == d.calibration
    later.add("late", "A short clean note about something else entirely.")
    assert later.config == chosen
    later.close()


def test_a_store_built_before_calibration_keeps_its_own_settings(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = Detector(open_store(url), OnlineConfig(n=3))  # the seed method and n, as stores were built before
    old.add("a", STORY)
    old.close()
    d = Detector(open_store(url), OnlineConfig(method="auto"))
    assert (d.config.method, d.config.n, d.config.char) == ("sketch", 3, False)
    assert d.add("b", "REPRINT. " + STORY).status == "duplicate"
    d.close()


def test_online_load_calibrates_a_new_store_on_the_first_documents(tmp_path):
    noisy = tmp_path / "noisy.jsonl"
    with noisy.open("w", encoding="utf-8") as fh:
        for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            rec["text"] = apply_noise(rec["text"], "ocr-heavy", 0, doc_id=str(rec["id"])).text
            fh.write(json.dumps(rec) + "\n")
    url = f"sqlite:///{tmp_path / 's.db'}"
    res = CliRunner().invoke(standalone_app(), ["online", "load", str(noisy), "--store", url, "-q", "-f", "json"])
    assert res.exit_code == 0, res.output
    meta = open_store(url).read_meta()
    assert json.loads(meta["calibration"])["choice"]["char"] is True
    assert json.loads(meta["key_settings"])["char"] is True


def _chinese_stream(seed: int = 0) -> Stream:
    """Chinese stories (faker) and copies with characters replaced, dropped and doubled."""
    faker = pytest.importorskip("faker").Faker("zh_CN")
    faker.seed_instance(seed)
    rng = random.Random(seed)
    alphabet = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"
    ids, texts, labels = [], [], []
    for k in range(40):
        text = "".join(faker.paragraph(nb_sentences=12) for _ in range(2))
        ids.append(f"o{k}"), texts.append(text), labels.append(f"c{k}" if k % 2 == 0 else None)
        if k % 2 == 0:
            chars = []
            for ch in text:
                r = rng.random()
                if r < 0.04:
                    chars.append(rng.choice(alphabet))
                elif r < 0.06:
                    continue
                else:
                    chars.append(ch)
            ids.append(f"d{k}"), texts.append("".join(chars)), labels.append(f"c{k}")
    return Stream(ids, texts, labels)


def test_chinese_text_is_detected_by_the_calibrated_default_and_not_by_word_shingles():
    stream = _chinese_stream()
    auto = replay(stream, OnlineConfig(method="auto"), "memory://")
    assert auto["char"] is True and auto["calibration"]["profile"]["script"] == "han"
    assert auto["recall"] >= 0.9 and auto["precision"] >= 0.9
    words = replay(stream, OnlineConfig.ours(), "memory://")
    assert words["recall"] == 0.0


def _batch_file(tmp_path: Path) -> Path:
    path = tmp_path / "chosen.json"
    cfg = DedupConfig(threshold=0.5).replace(shingle__char=True, shingle__n=5, minhash__num_perm=64,
                                             minhash__lsh_threshold=0.35)
    save_config(path, cfg, tuned={"by": "test"})
    return path


def test_online_eval_accepts_the_batch_configuration_file(tmp_path):
    res = CliRunner().invoke(standalone_app(), ["online", "eval", str(EXAMPLE), "--config", str(_batch_file(tmp_path)),
                                                "--store", "memory://", "--format", "json"])
    assert res.exit_code == 0, res.output
    cfg = json.loads(res.stdout)["config"]
    assert (cfg["method"], cfg["char"], cfg["n"], cfg["r_overlap"], cfg["f"]) == ("minhash", True, 5, 0.5, 1.0)
    assert (cfg["minhash"]["num_perm"], cfg["minhash"]["lsh_threshold"]) == (64, 0.35)
    assert "weighted overlap" in res.stderr  # the loose part of the mapping is said, not hidden


def test_an_option_given_with_the_batch_file_wins(tmp_path):
    res = CliRunner().invoke(standalone_app(), ["online", "eval", str(EXAMPLE), "--config", str(_batch_file(tmp_path)),
                                                "--r-overlap", "0.7", "--store", "memory://", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["config"]["r_overlap"] == 0.7


def test_serve_accepts_the_batch_configuration_file(tmp_path, monkeypatch):
    import uvicorn

    import neardup.online.service as service

    seen = {}
    real = service.create_app
    monkeypatch.setattr(service, "create_app", lambda detector, **kw: seen.setdefault("d", detector) and real(detector, **kw))
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    res = CliRunner().invoke(standalone_app(), ["serve", "--store", f"sqlite:///{tmp_path / 's.db'}",
                                                "--config", str(_batch_file(tmp_path))])
    assert res.exit_code == 0, res.output
    cfg = seen["d"].config
    assert (cfg.method, cfg.char, cfg.n, cfg.r_overlap, cfg.minhash.num_perm) == ("minhash", True, 5, 0.5, 64)


def test_serve_defaults_to_the_calibrated_method(tmp_path, monkeypatch):
    import uvicorn

    import neardup.online.service as service

    seen = {}
    real = service.create_app
    monkeypatch.setattr(service, "create_app", lambda detector, **kw: seen.setdefault("d", detector) and real(detector, **kw))
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    res = CliRunner().invoke(standalone_app(), ["serve", "--store", f"sqlite:///{tmp_path / 's.db'}"])
    assert res.exit_code == 0, res.output
    assert seen["d"].requested.method == "auto" and seen["d"].needs_calibration


def test_a_bad_batch_configuration_file_is_one_line_naming_it(tmp_path):
    bad = tmp_path / "chosen.json"
    bad.write_text(json.dumps({"neardup_config": 1, "config": {"threshold": 2}}))
    res = CliRunner().invoke(standalone_app(), ["online", "eval", str(EXAMPLE), "--config", str(bad)])
    assert res.exit_code == 2 and "chosen.json" in res.output and "threshold" in res.output
