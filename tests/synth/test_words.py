"""Tests for neardup.synth.words: word-level noise."""

from __future__ import annotations

import random

from neardup.synth import words


def test_word_ops() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    assert words.word_delete(text, random.Random(0), 1.0).strip()
    assert len(words.word_delete(text, random.Random(1), 0.5).split()) < 9
    assert len(words.word_insert(text, random.Random(0), 0.5).split()) > 9
    assert sorted(words.word_swap(text, random.Random(0), 0.5).split()) == sorted(text.split())
    sub = words.word_substitute(text, random.Random(0), 1.0)
    assert len(sub.split()) == 9 and sub != text
    rep = words.word_repeat(text, random.Random(0), 0.5).split()
    assert any(a == b for a, b in zip(rep, rep[1:]))
    # paragraph breaks survive word edits
    for seed in range(20):
        out = words.word_delete("a b\n\nc d", random.Random(seed), 0.5)
        assert out.count("\n") == 2 or out == "a b"  # all gone -> the first sentence is kept
