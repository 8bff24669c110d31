"""Tests for neardup.synth.corpus: noising records and JSONL(.gz) files, calibration on real text."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from neardup.synth import corpus
from neardup.synth.corpus import noise_file, noise_records
from neardup.synth.presets import apply_noise

from .conftest import SAMPLE, SAMPLE2


def test_noise_records_format() -> None:
    recs = [{"id": "a", "text": SAMPLE}, {"id": 7, "text": SAMPLE2, "extra": 1}]
    out = list(noise_records(recs, "ocr-1970s", seed=3))
    assert [r["id"] for r in out] == ["a~ocr-1970s", "7~ocr-1970s"]
    assert [r["source_id"] for r in out] == ["a", "7"]
    assert all(set(r) == {"id", "text", "source_id", "ops"} for r in out)
    assert out[0]["text"] == apply_noise(SAMPLE, "ocr-1970s", 3, "a").text
    json.dumps(out)
    custom = list(noise_records([{"key": "k", "body": "Hello world."}], "typos", 0,
                                text_field="body", id_field="key"))
    assert custom[0]["id"] == "k~typos"
    with pytest.raises(ValueError, match="record 0"):
        list(noise_records([{"text": "no id"}], "typos", 0))


def test_noise_file_roundtrip_gz_and_errors(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl.gz"
    with gzip.open(src, "wt", encoding="utf-8") as f:
        for i in range(5):
            f.write(json.dumps({"id": f"d{i}", "text": SAMPLE if i % 2 else SAMPLE2}) + "\n")
        f.write("\n")
    dst = tmp_path / "out.jsonl"
    assert noise_file(str(src), str(dst), "ocr-1930s", 1) == 5
    rows = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
    assert [r["source_id"] for r in rows] == [f"d{i}" for i in range(5)]
    assert rows[1]["text"] == apply_noise(SAMPLE, "ocr-1930s", 1, "d1").text
    noise_file(str(src), str(tmp_path / "out.jsonl.gz"), "ocr-1930s", 1)
    with gzip.open(tmp_path / "out.jsonl.gz", "rt", encoding="utf-8") as f:
        assert [json.loads(line) for line in f] == rows

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": \n', encoding="utf-8")
    out = tmp_path / "never.jsonl"
    with pytest.raises(ValueError, match=r"bad\.jsonl:2"):
        noise_file(str(bad), str(out), "typos", 0)
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    bad.write_text('{"id": "a", "txt": "wrong field"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:1"):
        noise_file(str(bad), str(out), "typos", 0)


def _shared_data() -> Path:
    env = os.environ.get("NEARDUP_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.mark.shared_data
def test_ocr_1930s_calibration_on_bbc() -> None:
    path = _shared_data() / "bbc_news" / "docs.jsonl"
    if not path.exists():
        pytest.skip(f"shared data not available at {path}")
    with path.open(encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for _, line in zip(range(500), f)]
    stats = corpus.preset_stats(texts, "ocr-1930s", seed=0)
    assert 0.26 <= stats["mean_jaccard3"] <= 0.34  # NEWS-COPY: 0.30
    assert 0.12 <= stats["no_shared_10gram"] <= 0.27  # NEWS-COPY: ~0.19
