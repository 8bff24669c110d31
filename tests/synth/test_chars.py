"""Tests for neardup.synth.chars: character-level noise and its inverses."""

from __future__ import annotations

import random
import re
import unicodedata

from neardup.synth import chars
from neardup.synth.chars import HOMOGLYPH_FOLD, HOMOGLYPHS, INVISIBLE_CHARS
from neardup.synth.corpus import ngram_jaccard
from neardup.synth.presets import apply_noise

from .conftest import SAMPLE


def test_homoglyphs_are_visually_identical_and_fold_back() -> None:
    for latin, targets in HOMOGLYPHS.items():
        for t in targets:
            assert len(t) == 1 and ord(t) > 127 and t != latin
            assert unicodedata.category(t)[:2] == unicodedata.category(latin)[:2]  # same case
            assert HOMOGLYPH_FOLD[ord(t)] == latin
            # Cyrillic/Greek look-alikes: their Unicode name names the same letter shape
            assert unicodedata.name(t).split()[0] in ("CYRILLIC", "GREEK")
    out = chars.homoglyph(SAMPLE, random.Random(3), 0.3)
    assert len(out) == len(SAMPLE) and out != SAMPLE
    changed = 0
    for a, b in zip(SAMPLE, out):
        if a != b:
            changed += 1
            assert b in HOMOGLYPHS[a]
            assert b not in unicodedata.normalize("NFKC", a)  # NFKC alone does not undo it...
    assert changed > 50
    assert chars.fold_homoglyphs(out) == SAMPLE  # ...the fold-back table does
    assert out.translate(HOMOGLYPH_FOLD) == SAMPLE


def test_invisible_chars_are_zero_width() -> None:
    for c in INVISIBLE_CHARS:
        assert unicodedata.category(c) == "Cf"
    out = chars.invisible(SAMPLE, random.Random(2), 0.05)
    added = [c for c in out if c in INVISIBLE_CHARS]
    assert len(added) > 20
    assert len(out) == len(SAMPLE) + len(added)
    assert chars.strip_invisible(out) == SAMPLE
    # adversarial spam: strip invisibles + fold homoglyphs recovers a lot of the overlap
    spam = apply_noise(SAMPLE, "adversarial-spam", 0, "s").text
    assert any(c in INVISIBLE_CHARS for c in spam)
    repaired = chars.fold_homoglyphs(chars.strip_invisible(spam))
    assert ngram_jaccard(SAMPLE, repaired) > ngram_jaccard(SAMPLE, spam)


def test_ocr_confusions_use_the_table() -> None:
    out = chars.ocr_confusion("modern clinic", random.Random(0), 1.0)
    assert out != "modern clinic"
    for src, targets in chars.OCR_CONFUSIONS.items():
        for t in targets:
            assert t != src
    assert chars.ocr_confusion("rn", random.Random(1), 1.0) == "m"  # pairs win over single letters


def test_hyphenation_and_typos() -> None:
    out = chars.hyphenate(SAMPLE, random.Random(0), 0.05)
    assert "-\n" in out and out.replace("-\n", "") == SAMPLE
    out = chars.typo(SAMPLE, random.Random(0), 0.02)
    assert out != SAMPLE and abs(len(out) - len(SAMPLE)) < 40
    out = chars.spacing("alpha beta gamma delta", random.Random(5), 0.3)
    assert out.replace(" ", "") == "alphabetagammadelta"
    out = chars.case_change(SAMPLE, random.Random(0), 0.05)
    assert out.lower() == SAMPLE.lower() and out != SAMPLE
    out = chars.punctuation(SAMPLE, random.Random(0), 0.02)
    assert re.sub(r"[^\w\s]", "", out) == re.sub(r"[^\w\s]", "", SAMPLE)
