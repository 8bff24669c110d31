"""Tests for neardup.synth.presets: the op registry, specs, presets and apply_noise (seeded, reproducible)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.synth import negatives, presets
from neardup.synth.chars import INVISIBLE_CHARS
from neardup.synth.corpus import ngram_jaccard
from neardup.synth.negatives import make_hard_negative
from neardup.synth.presets import OPS, PRESETS, NoiseSpec, NoisyText, OpSpec, apply_noise

from .conftest import SAMPLE, SAMPLE2, _spec, _ws


def test_presets_exist_and_are_valid() -> None:
    names = presets.list_presets()
    for required in ("clean", "ocr-1970s", "ocr-1930s", "web-aggregator", "adversarial-spam",
                     "typos", "ocr-light", "ocr-medium", "ocr-heavy"):
        assert required in names
        assert PRESETS[required].name == required
        json.dumps(PRESETS[required].to_dict())
    with pytest.raises(ValueError, match="unknown noise preset"):
        apply_noise("x", "no-such-preset", 0)
    with pytest.raises(ValueError, match="unknown noise op"):
        OpSpec("no_such_op", 0.1)
    with pytest.raises(ValueError, match="unknown hard-negative kind"):
        make_hard_negative("x", "nope", 0)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_handles_empty_and_returns_nonempty(name: str) -> None:
    op = OPS[name]
    assert op("", random.Random(0), 0.5) == ""
    for seed in range(5):
        out = op(SAMPLE, random.Random(seed), 0.3)
        assert isinstance(out, str) and out.strip()
    assert op("Word", random.Random(0), 0.99).strip()


def test_empty_and_whitespace_input() -> None:
    for preset in presets.list_presets():
        assert apply_noise("", preset, 1).text == ""
        assert apply_noise("", preset, 1).ops == []
    for kind in negatives.HARD_NEGATIVE_KINDS:
        assert make_hard_negative("", kind, 1).text == ""


def test_same_seed_same_output_different_seed_differs() -> None:
    for preset in ("ocr-1930s", "web-aggregator", "adversarial-spam", "typos"):
        a = apply_noise(SAMPLE, preset, seed=7, doc_id="d1")
        b = apply_noise(SAMPLE, preset, seed=7, doc_id="d1")
        assert a == b
        others = {apply_noise(SAMPLE, preset, seed=s, doc_id="d1").text for s in range(8, 12)}
        assert len(others | {a.text}) > 1
        # the document id is part of the seed, so two copies of a text get different noise
        assert apply_noise(SAMPLE, preset, seed=7, doc_id="d2").text != a.text


def test_reproducible_across_processes_with_different_hash_seeds() -> None:
    code = (
        "import json,sys; from neardup.synth import apply_noise, make_hard_negative;"
        "t=sys.stdin.read();"
        "print(json.dumps([apply_noise(t,'ocr-1930s',3,'x').text, apply_noise(t,'adversarial-spam',3,'x').text,"
        "make_hard_negative(t,'template_sibling',3).text, make_hard_negative(t,'same_event_rewrite',3,[t[::-1]]).text]))"
    )
    outs = []
    for hs in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hs)
        src = str(Path(presets.__file__).resolve().parents[2])
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        r = subprocess.run([sys.executable, "-c", code], input=SAMPLE, capture_output=True, text=True,
                           env=env, check=True)
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    here = json.dumps([apply_noise(SAMPLE, "ocr-1930s", 3, "x").text,
                       apply_noise(SAMPLE, "adversarial-spam", 3, "x").text,
                       make_hard_negative(SAMPLE, "template_sibling", 3).text,
                       make_hard_negative(SAMPLE, "same_event_rewrite", 3, [SAMPLE[::-1]]).text])
    assert outs[0].strip() == here


def test_ops_are_recorded_with_parameters() -> None:
    spec = _spec(OpSpec("abridge", 0.4), OpSpec("typo", 0.02), OpSpec("add_headline"),
                 OpSpec("word_delete", 0.0))
    res = apply_noise(SAMPLE, spec, seed=1, doc_id="a")
    assert isinstance(res, NoisyText)
    names = [o.split(":")[0] for o in res.ops]
    assert names == ["abridge", "typo", "add_headline"]  # the zero-rate op changed nothing
    cut = float(res.ops[0].split(":")[1])
    assert 0.2 <= cut <= 0.6
    assert res.ops[1] == "typo:0.02"
    json.dumps(res.ops)


def test_prob_zero_op_never_applied_and_clean_keeps_words() -> None:
    spec = _spec(OpSpec("typo", 0.5, prob=0.0))
    assert apply_noise(SAMPLE, spec, 0).text == SAMPLE
    for s in range(5):
        out = apply_noise(SAMPLE, "clean", s, str(s)).text
        assert ngram_jaccard(SAMPLE, out, 3) == 1.0
        assert _ws(out.replace("\u2019", "'").replace("\u201d", '"')) == _ws(SAMPLE)


def test_heavy_ocr_is_noisier_than_light_ocr() -> None:
    texts = [SAMPLE, SAMPLE2, SAMPLE.replace("council", "board"), SAMPLE2 + "\n\n" + SAMPLE]
    def mean_j(preset: str) -> float:
        vals = [ngram_jaccard(t, apply_noise(t, preset, s, f"{i}").text)
                for i, t in enumerate(texts) for s in range(6)]
        return sum(vals) / len(vals)
    light, medium, heavy = mean_j("ocr-light"), mean_j("ocr-medium"), mean_j("ocr-heavy")
    assert light > medium > heavy
    assert mean_j("ocr-1970s") > mean_j("ocr-1930s")
    assert heavy < 0.5 < light
    assert mean_j("clean") == 1.0


ALL_PRESETS = sorted(PRESETS)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=300), seed=st.integers(0, 2**32), preset=st.sampled_from(ALL_PRESETS))
def test_any_text_gives_valid_nonempty_output(text: str, seed: int, preset: str) -> None:
    res = apply_noise(text, preset, seed, "h")
    assert isinstance(res.text, str)
    res.text.encode("utf-8")  # no lone surrogates introduced
    assert (res.text == "") == (text == "")
    if text.strip():
        assert res.text.strip()
    json.dumps(res.ops)


def test_unicode_sequences_are_not_split() -> None:
    text = ("Caf\u00e9 cre\u0300me, \U0001f600 emoji, family \U0001f468\u200d\U0001f469\u200d\U0001f467, "
            "thumbs \U0001f44d\U0001f3fd and na\u0308ive r\u00e9sum\u00e9 words. ") * 5
    ocr_chars = NoiseSpec("ocr-chars", tuple(o for o in PRESETS["ocr-heavy"].ops if o.op != "word_delete"))
    for preset in ("adversarial-spam", ocr_chars, "typos"):
        for s in range(10):
            out = apply_noise(text, preset, s, "u").text
            for i, c in enumerate(out):
                if unicodedata.combining(c):
                    assert i > 0 and out[i - 1] not in INVISIBLE_CHARS and not out[i - 1].isspace()
            astral = [c for c in out if ord(c) > 0xFFFF]
            assert astral == [c for c in text if ord(c) > 0xFFFF]
            assert "\U0001f468\u200d\U0001f469\u200d\U0001f467" in out


def test_never_empties_text() -> None:
    spec = _spec(OpSpec("word_delete", 0.9), OpSpec("sentence_delete", 0.9), OpSpec("char_drop", 0.5))
    for s in range(20):
        assert apply_noise("Just one sentence here.", spec, s, str(s)).text.strip()
        assert apply_noise(SAMPLE, spec, s, str(s)).text.strip()
