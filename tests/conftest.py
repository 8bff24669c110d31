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
