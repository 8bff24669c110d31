"""Tests for neardup.synth.sentences: sentence ops, abridge and drop_lead."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.synth import sentences
from neardup.synth.presets import OpSpec, apply_noise

from .conftest import SAMPLE, _spec, _ws


@settings(max_examples=60, deadline=None)
@given(rate=st.floats(0.01, 0.99), seed=st.integers(0, 10_000))
def test_abridge_keeps_a_prefix(rate: float, seed: int) -> None:
    out = sentences.abridge(SAMPLE, random.Random(seed), rate)
    assert SAMPLE.startswith(out)
    assert len(out) < len(SAMPLE)
    assert out.strip()
    # ends at a sentence boundary (the text's sentences end with '.' or a headline line)
    assert out.endswith(".") or out == SAMPLE.split("\n")[0]
    # via apply_noise the copy is a prefix up to whitespace and the recorded cut is realised
    res = apply_noise(SAMPLE, _spec(OpSpec("abridge", rate)), seed)
    assert _ws(SAMPLE).startswith(_ws(res.text))
    if res.ops:
        assert abs(float(res.ops[0].split(":")[1]) - (1 - len(res.text) / len(SAMPLE))) < 0.006


def test_abridge_cut_fraction_tracks_rate() -> None:
    long = " ".join(f"Sentence number {i} is here." for i in range(200))
    for rate in (0.1, 0.35, 0.7):
        out = sentences.abridge(long, random.Random(0), rate)
        assert abs((1 - len(out) / len(long)) - rate) < 0.03


def test_abridge_single_sentence_cuts_at_word_boundary() -> None:
    text = "one two three four five six seven eight nine ten"
    out = sentences.abridge(text, random.Random(0), 0.5)
    assert text.startswith(out) and out and len(out) < len(text)
    assert text[len(out)] == " "


def test_drop_lead_keeps_a_suffix() -> None:
    for rate in (0.01, 0.2, 0.5, 0.99):
        out = sentences.drop_lead(SAMPLE, random.Random(0), rate)
        assert SAMPLE.endswith(out) and out.strip() and len(out) < len(SAMPLE)
    assert sentences.drop_lead("Only one sentence here.", random.Random(0), 0.9) == "Only one sentence here."
    # without paragraphs, whole sentences are dropped
    out = sentences.drop_lead("First one. Second one. Third one.", random.Random(0), 0.3)
    assert out in ("Second one. Third one.", "Third one.")


def test_sentence_ops() -> None:
    text = "Alpha one. Beta two. Gamma three. Delta four."
    assert sentences.sentence_swap(text, random.Random(0), 1.0).count(".") == 4
    out = sentences.sentence_delete(text, random.Random(0), 1.0)
    assert out == "Alpha one."  # everything would go: the first sentence is kept
    assert len(sentences.sentence_insert(text, random.Random(0), 1.0)) > len(text)
    out = sentences.sentence_delete("A one.\n\nB two. C three.\n\nD four.", random.Random(4), 0.5)
    assert "\n\n" in out or out.count(".") <= 2
