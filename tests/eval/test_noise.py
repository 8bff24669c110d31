"""Tests for neardup.eval.noise: seeded realistic noise, presets and hard negatives."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.eval import noise as N
from neardup.eval.noise import (
    HOMOGLYPH_FOLD,
    HOMOGLYPHS,
    INVISIBLE_CHARS,
    OPS,
    PRESETS,
    NoiseSpec,
    NoisyText,
    OpSpec,
    apply_noise,
    make_hard_negative,
    ngram_jaccard,
    noise_file,
    noise_records,
)

SAMPLE = """Council approves new budget for city transport

The city council on Tuesday approved a budget of 245 million pounds for public transport, \
the largest increase in more than a decade. Councillor Margaret Hughes said the money would \
pay for 40 new electric buses and longer opening hours at 12 stations.

Opposition members argued that the plan relied on optimistic forecasts. They said fares had \
risen by 7% last year and that passengers in the northern districts still waited too long. \
The transport authority expects passenger numbers to grow by 3.5% in 2025.

Work on the first routes is due to begin in March. The council will publish quarterly reports \
on spending, and an independent panel led by Professor David Osei will review the results \
after two years. Local businesses welcomed the decision, saying better connections would help \
shops in the centre recover from a difficult winter.
"""

SAMPLE2 = """Regional rail operator reports record passenger numbers

Northern Lines said on Monday that 18 million journeys were made on its trains in the last \
year, up 9% on the previous year. The operator credited new timetables and cheaper off-peak \
tickets. Chief executive Anna Berg said further improvements were planned for the coming months, \
including 15 refurbished trains and wifi on all services.
"""

WS = re.compile(r"\s+")
NUM = re.compile(r"\d+(?:[.,]\d+)*")


def _ws(s: str) -> str:
    return WS.sub(" ", s).strip()


def _spec(*ops: OpSpec, name: str = "test") -> NoiseSpec:
    return NoiseSpec(name, tuple(ops))


# ------------------------------------------------------------------ API surface


def test_presets_exist_and_are_valid() -> None:
    names = N.list_presets()
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
    for preset in N.list_presets():
        assert apply_noise("", preset, 1).text == ""
        assert apply_noise("", preset, 1).ops == []
    for kind in N.HARD_NEGATIVE_KINDS:
        assert make_hard_negative("", kind, 1).text == ""


# ------------------------------------------------------------------ reproducibility


def test_same_seed_same_output_different_seed_differs() -> None:
    for preset in ("ocr-1930s", "web-aggregator", "adversarial-spam", "typos"):
        a = apply_noise(SAMPLE, preset, seed=7, doc_id="d1")
        b = apply_noise(SAMPLE, preset, seed=7, doc_id="d1")
        assert a == b
        others = {apply_noise(SAMPLE, preset, seed=s, doc_id="d1").text for s in range(8, 12)}
        assert len(others | {a.text}) > 1
        # the document id is part of the seed, so two copies of a text get different noise
        assert apply_noise(SAMPLE, preset, seed=7, doc_id="d2").text != a.text


def test_derive_seed_is_stable_constant() -> None:
    # xxh64-based, independent of PYTHONHASHSEED and of the Python version
    assert N.derive_seed(0, "ocr-1930s", "doc-1") == N.derive_seed(0, "ocr-1930s", "doc-1")
    assert N.derive_seed(0, "a", "b") != N.derive_seed(0, "ab")


def test_reproducible_across_processes_with_different_hash_seeds() -> None:
    code = (
        "import json,sys; from neardup.eval.noise import apply_noise, make_hard_negative;"
        "t=sys.stdin.read();"
        "print(json.dumps([apply_noise(t,'ocr-1930s',3,'x').text, apply_noise(t,'adversarial-spam',3,'x').text,"
        "make_hard_negative(t,'template_sibling',3).text, make_hard_negative(t,'same_event_rewrite',3,[t[::-1]]).text]))"
    )
    outs = []
    for hs in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hs)
        src = str(Path(N.__file__).resolve().parents[2])
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


# ------------------------------------------------------------------ ops recording


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


# ------------------------------------------------------------------ structural ops


@settings(max_examples=60, deadline=None)
@given(rate=st.floats(0.01, 0.99), seed=st.integers(0, 10_000))
def test_abridge_keeps_a_prefix(rate: float, seed: int) -> None:
    out = N.abridge(SAMPLE, random.Random(seed), rate)
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
        out = N.abridge(long, random.Random(0), rate)
        assert abs((1 - len(out) / len(long)) - rate) < 0.03


def test_abridge_single_sentence_cuts_at_word_boundary() -> None:
    text = "one two three four five six seven eight nine ten"
    out = N.abridge(text, random.Random(0), 0.5)
    assert text.startswith(out) and out and len(out) < len(text)
    assert text[len(out)] == " "


def test_drop_lead_keeps_a_suffix() -> None:
    for rate in (0.01, 0.2, 0.5, 0.99):
        out = N.drop_lead(SAMPLE, random.Random(0), rate)
        assert SAMPLE.endswith(out) and out.strip() and len(out) < len(SAMPLE)
    assert N.drop_lead("Only one sentence here.", random.Random(0), 0.9) == "Only one sentence here."
    # without paragraphs, whole sentences are dropped
    out = N.drop_lead("First one. Second one. Third one.", random.Random(0), 0.3)
    assert out in ("Second one. Third one.", "Third one.")


def test_web_aggregator_adds_headers_and_keeps_body() -> None:
    seen: set[str] = set()
    for s in range(30):
        res = apply_noise(SAMPLE, "web-aggregator", s, str(s))
        seen.update(o.split(":")[0] for o in res.ops)
        if "add_dateline" in res.ops:
            assert re.search(r"[A-Z]{3,}[^\n]*(\(\w+\) [-\u2014]|/\w+/ -) ", res.text)
        if "add_byline" in res.ops:
            assert re.search(r"^By [A-Z]", res.text, re.M)
    assert {"abridge", "drop_lead", "add_dateline", "add_byline", "add_headline", "add_boilerplate"} <= seen


def test_sentence_ops() -> None:
    text = "Alpha one. Beta two. Gamma three. Delta four."
    assert N.sentence_swap(text, random.Random(0), 1.0).count(".") == 4
    out = N.sentence_delete(text, random.Random(0), 1.0)
    assert out == "Alpha one."  # everything would go: the first sentence is kept
    assert len(N.sentence_insert(text, random.Random(0), 1.0)) > len(text)
    out = N.sentence_delete("A one.\n\nB two. C three.\n\nD four.", random.Random(4), 0.5)
    assert "\n\n" in out or out.count(".") <= 2


def test_word_ops() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    assert N.word_delete(text, random.Random(0), 1.0).strip()
    assert len(N.word_delete(text, random.Random(1), 0.5).split()) < 9
    assert len(N.word_insert(text, random.Random(0), 0.5).split()) > 9
    assert sorted(N.word_swap(text, random.Random(0), 0.5).split()) == sorted(text.split())
    sub = N.word_substitute(text, random.Random(0), 1.0)
    assert len(sub.split()) == 9 and sub != text
    rep = N.word_repeat(text, random.Random(0), 0.5).split()
    assert any(a == b for a, b in zip(rep, rep[1:]))
    # paragraph breaks survive word edits
    for seed in range(20):
        out = N.word_delete("a b\n\nc d", random.Random(seed), 0.5)
        assert out.count("\n") == 2 or out == "a b"  # all gone -> the first sentence is kept


# ------------------------------------------------------------------ character ops


def test_homoglyphs_are_visually_identical_and_fold_back() -> None:
    for latin, targets in HOMOGLYPHS.items():
        for t in targets:
            assert len(t) == 1 and ord(t) > 127 and t != latin
            assert unicodedata.category(t)[:2] == unicodedata.category(latin)[:2]  # same case
            assert HOMOGLYPH_FOLD[ord(t)] == latin
            # Cyrillic/Greek look-alikes: their Unicode name names the same letter shape
            assert unicodedata.name(t).split()[0] in ("CYRILLIC", "GREEK")
    out = N.homoglyph(SAMPLE, random.Random(3), 0.3)
    assert len(out) == len(SAMPLE) and out != SAMPLE
    changed = 0
    for a, b in zip(SAMPLE, out):
        if a != b:
            changed += 1
            assert b in HOMOGLYPHS[a]
            assert b not in unicodedata.normalize("NFKC", a)  # NFKC alone does not undo it...
    assert changed > 50
    assert N.fold_homoglyphs(out) == SAMPLE  # ...the fold-back table does
    assert out.translate(HOMOGLYPH_FOLD) == SAMPLE


def test_invisible_chars_are_zero_width() -> None:
    for c in INVISIBLE_CHARS:
        assert unicodedata.category(c) == "Cf"
    out = N.invisible(SAMPLE, random.Random(2), 0.05)
    added = [c for c in out if c in INVISIBLE_CHARS]
    assert len(added) > 20
    assert len(out) == len(SAMPLE) + len(added)
    assert N.strip_invisible(out) == SAMPLE
    # adversarial spam: strip invisibles + fold homoglyphs recovers a lot of the overlap
    spam = apply_noise(SAMPLE, "adversarial-spam", 0, "s").text
    assert any(c in INVISIBLE_CHARS for c in spam)
    repaired = N.fold_homoglyphs(N.strip_invisible(spam))
    assert ngram_jaccard(SAMPLE, repaired) > ngram_jaccard(SAMPLE, spam)


def test_ocr_confusions_use_the_table() -> None:
    out = N.ocr_confusion("modern clinic", random.Random(0), 1.0)
    assert out != "modern clinic"
    for src, targets in N.OCR_CONFUSIONS.items():
        for t in targets:
            assert t != src
    assert N.ocr_confusion("rn", random.Random(1), 1.0) == "m"  # pairs win over single letters


def test_hyphenation_and_typos() -> None:
    out = N.hyphenate(SAMPLE, random.Random(0), 0.05)
    assert "-\n" in out and out.replace("-\n", "") == SAMPLE
    out = N.typo(SAMPLE, random.Random(0), 0.02)
    assert out != SAMPLE and abs(len(out) - len(SAMPLE)) < 40
    out = N.spacing("alpha beta gamma delta", random.Random(5), 0.3)
    assert out.replace(" ", "") == "alphabetagammadelta"
    out = N.case_change(SAMPLE, random.Random(0), 0.05)
    assert out.lower() == SAMPLE.lower() and out != SAMPLE
    out = N.punctuation(SAMPLE, random.Random(0), 0.02)
    assert re.sub(r"[^\w\s]", "", out) == re.sub(r"[^\w\s]", "", SAMPLE)


# ------------------------------------------------------------------ hard negatives


def test_update_changes_every_number_and_appends_sentences() -> None:
    for seed in range(10):
        res = make_hard_negative(SAMPLE, "update", seed)
        assert res.ops[0] == "update"
        before = NUM.findall(SAMPLE)
        body, _, extra = res.text.rpartition("\n\n")
        after = NUM.findall(body)
        assert len(after) == len(before) == 6
        assert all(a != b for a, b in zip(before, after))
        # apart from the numbers the story is the same
        assert NUM.sub("#", body) == NUM.sub("#", SAMPLE.rstrip())
        n_new = len(re.findall(r"[.!?](\s|$)", extra))
        assert 1 <= n_new <= 3
        assert f"append_sentences:{n_new}" in res.ops


def test_template_sibling_keeps_template_changes_facts() -> None:
    res = make_hard_negative(SAMPLE, "template_sibling", 5)
    out = res.text
    lower = re.compile(r"\b[a-z][a-z']*\b")
    assert lower.findall(out) == lower.findall(SAMPLE)  # template words, in order
    before, after = NUM.findall(SAMPLE), NUM.findall(out)
    assert len(before) == len(after) and all(a != b for a, b in zip(before, after))
    skel = lambda t: re.sub(r"\b[A-Z][A-Za-z]*\b", "N", NUM.sub("0", t))  # noqa: E731
    assert skel(out) == skel(SAMPLE)
    for name in ("Hughes", "Margaret", "Osei", "David", "March", "Tuesday", "Professor"):
        assert name not in out
    # names are replaced consistently
    twice = "Anna met Bob. Later Anna called Bob again."
    o = N.template_sibling(twice, random.Random(0))
    a, b = o.split()[0], o.split()[2]
    assert o.count(a) == 2 and o.count(b.rstrip(".")) == 2 and "Anna" not in o


def test_entity_swap_changes_an_entity_and_some_figures_keeps_the_template() -> None:
    notice = ("FRANKLIN MICHIGAN INSURED SETS PAYOUT\n\nFranklin Michigan Insured Tax-Free Fund said it set a "
              "monthly dividend of 6.9 cts vs 6.9 cts prior, payable March 31 to holders of record March 16, "
              "and that assets rose to 412 mln dlrs.")
    words = re.compile(r"[A-Za-z]+")
    overlap = {"entity_swap": [], "template_sibling": []}
    for seed in range(20):
        overlap["template_sibling"].append(ngram_jaccard(notice, make_hard_negative(notice, "template_sibling", seed).text, 3))
        res = make_hard_negative(notice, "entity_swap", seed)
        out = res.text
        assert res.ops[0] == "entity_swap" and out != notice
        n_names = int(res.ops[1].split(":")[1])
        assert 1 <= n_names <= 2
        # only words among the first four names change, in every case variant and consistently
        changed = {(a, b) for a, b in zip(words.findall(notice), words.findall(out)) if a != b}
        firsts = {"franklin", "michigan", "insured", "sets"}
        assert changed and {a.lower() for a, _ in changed} <= firsts
        assert len({a.lower() for a, _ in changed}) == n_names
        for a, b in changed:
            assert (a.isupper() and len(a) > 1) == b.isupper()
            new = {y.lower() for x, y in changed if x.lower() == a.lower()}
            assert len(new) == 1 and a.lower() not in {w.lower() for w in words.findall(out)}
        assert "March" in out and "monthly dividend" in out and "PAYOUT" in out  # months and template stay
        # about half the figures, never none of them
        before, after = NUM.findall(notice), NUM.findall(out)
        n_num = sum(x != y for x, y in zip(before, after))
        assert len(before) == len(after) and 1 <= n_num <= len(before)
        assert res.ops[2] == f"change_numbers:{n_num}"
        overlap["entity_swap"].append(ngram_jaccard(notice, out, 3))
    # a near twin, the point of this kind: far closer to its source than a full template sibling
    assert min(overlap["entity_swap"]) > max(overlap["template_sibling"])
    assert sum(overlap["entity_swap"]) / 20 > 2 * sum(overlap["template_sibling"]) / 20
    # nothing to swap: an update instead, never the text itself
    plain = make_hard_negative("the cat sat on the mat all afternoon", "entity_swap", 0)
    assert plain.text.startswith("the cat sat on the mat all afternoon\n\n") and "append_sentences" in plain.ops[-1]


def test_same_event_rewrite_is_similar_topic_different_text() -> None:
    res = make_hard_negative(SAMPLE, "same_event_rewrite", 1, pool=[SAMPLE2, SAMPLE])
    assert res.text != SAMPLE
    assert ngram_jaccard(SAMPLE, res.text, 3) < 0.5
    orig_vocab = set(re.findall(r"[a-z]{4,}", SAMPLE.lower()))
    new_vocab = set(re.findall(r"[a-z]{4,}", res.text.lower()))
    assert len(orig_vocab & new_vocab) / len(orig_vocab) > 0.3  # same topic
    assert any(w in res.text for w in ("Berg", "journeys", "timetables", "Northern", "wifi", "refurbished"))
    assert "shuffle_sentences" in res.ops
    # no pool: still a rewrite
    alone = make_hard_negative(SAMPLE, "same_event_rewrite", 1)
    assert alone.text != SAMPLE and ngram_jaccard(SAMPLE, alone.text) < 0.6


# ------------------------------------------------------------------ calibration


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
    stats = N.preset_stats(texts, "ocr-1930s", seed=0)
    assert 0.26 <= stats["mean_jaccard3"] <= 0.34  # NEWS-COPY: 0.30
    assert 0.12 <= stats["no_shared_10gram"] <= 0.27  # NEWS-COPY: ~0.19


# ------------------------------------------------------------------ robustness


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


@settings(max_examples=30, deadline=None)
@given(text=st.text(min_size=1, max_size=200), seed=st.integers(0, 1000),
       kind=st.sampled_from(N.HARD_NEGATIVE_KINDS))
def test_any_text_hard_negative_is_valid(text: str, seed: int, kind: str) -> None:
    res = make_hard_negative(text, kind, seed, pool=["Some other text. About things."])
    res.text.encode("utf-8")
    if text.strip():
        assert res.text.strip()


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


# ------------------------------------------------------------------ records and files


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
