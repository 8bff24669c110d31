"""Tests for neardup.synth.edits: seeds."""

from __future__ import annotations

from neardup.synth import edits


def test_derive_seed_is_stable_constant() -> None:
    # xxh64-based, independent of PYTHONHASHSEED and of the Python version
    assert edits.derive_seed(0, "ocr-1930s", "doc-1") == edits.derive_seed(0, "ocr-1930s", "doc-1")
    assert edits.derive_seed(0, "a", "b") != edits.derive_seed(0, "ab")
