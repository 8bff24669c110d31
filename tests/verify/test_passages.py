"""Shared passages: real shared text at the stated offsets, the longest run found, many pairs at once
equal to one pair at a time."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from neardup.synth import apply_noise
from neardup.text.normalize import normalize, normalize_words
from neardup.verify.passages import MIN_WORDS, Passage, passage_table, passages, shared_passages, words_of
from tests.conftest import EXAMPLE

PRESETS = ("ocr-1930s", "adversarial-spam", "web-aggregator", "typos", "ocr-heavy")


def _longest_common_run(a: list[str], b: list[str]) -> int:
    """Brute force: the most consecutive words two word lists share."""
    best = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def _noisy_pairs(n: int = 60) -> list[tuple[str, str]]:
    texts = [json.loads(line)["text"] for line in open(EXAMPLE, encoding="utf-8")][:n]
    rng = random.Random(5)
    return [(t, apply_noise(t, rng.choice(PRESETS), seed=i, doc_id=str(i)).text) for i, t in enumerate(texts)]


def test_passages_are_the_same_text_at_the_stated_offsets_and_the_longest_is_found():
    pairs = _noisy_pairs()
    checked = 0
    for a, b in pairs:
        found = shared_passages(a, b)
        for p in found:
            assert normalize(a[p.left_start : p.left_end]) == normalize(b[p.right_start : p.right_end])
            assert len(normalize_words(a[p.left_start : p.left_end])) == p.words >= MIN_WORDS
        assert [p.words for p in found] == sorted((p.words for p in found), reverse=True)
        for x, y in [(x, y) for i, x in enumerate(found) for y in found[i + 1 :]]:  # none overlap, in either text
            assert x.left_end <= y.left_start or y.left_end <= x.left_start
            assert x.right_end <= y.right_start or y.right_end <= x.right_start
        longest = _longest_common_run(normalize_words(a), normalize_words(b))
        if a.isascii() and b.isascii() and longest >= MIN_WORDS:
            assert found and found[0].words == longest
            checked += 1
    assert checked > 20


def test_many_pairs_at_once_equal_one_pair_at_a_time():
    pairs = _noisy_pairs(40)
    texts = [t for pair in pairs for t in pair]
    rng = np.random.default_rng(0)
    a = rng.integers(0, len(texts), 200)
    b = rng.integers(0, len(texts), 200)
    batch = passages(texts, a, b)
    assert batch == [shared_passages(texts[i], texts[j]) for i, j in zip(a.tolist(), b.tolist())]


def test_the_passage_table_holds_every_pairs_passages_in_order_with_or_without_compiled_loops(monkeypatch):
    """The columns the evidence is built from: the same passages as the lists, grouped by pair in pair order,
    from the compiled loops (texts enough for them) and from NumPy alike, homoglyph noise (texts checked by
    normalization, some passages rejected and chosen again) included."""
    import neardup.verify.passages as module

    pairs = _noisy_pairs(80)
    story = pairs[0][0].split()
    for cut in (5, 12, 30):  # a sign that normalizes to letters joins two words in a raw slice across it
        marked = " ".join(story[:cut]) + " " + story[cut] + "\u2122" + " ".join(story[cut + 1 :])
        pairs.append((marked, pairs[0][0]))
    texts = [t for pair in pairs for t in pair]
    assert not all(t.isascii() for t in texts)
    rng = np.random.default_rng(3)
    a = np.concatenate([np.arange(0, len(texts), 2), rng.integers(0, len(texts), 300)])
    b = np.concatenate([np.arange(1, len(texts), 2), rng.integers(0, len(texts), 300)])
    assert module.pays(sum(len(texts[i]) + len(texts[j]) for i, j in zip(a.tolist(), b.tolist())))
    table = passage_table(texts, a, b)
    lists = passages(texts, a, b)
    assert table.counts(a.size).tolist() == [len(found) for found in lists]
    assert sum(map(len, lists)) == len(table) > 100 and bool(np.all(np.diff(table.pair) >= 0))
    rows = zip(table.left_start.tolist(), table.left_end.tolist(), table.right_start.tolist(),
               table.right_end.tolist(), table.words.tolist())
    assert [Passage(*row) for row in rows] == [p for found in lists for p in found]
    monkeypatch.setattr(module, "pays", lambda n: False)
    by_numpy = passage_table(texts, a, b)
    for name in ("pair", "left_start", "left_end", "right_start", "right_end", "words"):
        assert np.array_equal(getattr(by_numpy, name), getattr(table, name)), name


def test_normalization_differences_do_not_break_a_passage():
    # homoglyphs, zero-width characters, case, punctuation and a hyphen at a line break
    a = "The harbour bridge will be re-\nbuilt next year, the council said."
    b = "THE HARBOUR BRIDGE WILL BE REBUILT NEXT YEAR — the c\u043euncil s\u200baid!"
    (p,) = shared_passages(a, b)
    assert a[p.left_start : p.left_end] == a[:-1] and b[p.right_start : p.right_end] == b[:-1]
    assert p.words == 11


def test_short_and_empty_texts():
    assert shared_passages("", "anything at all") == []
    assert shared_passages("Oil.", "Oil fell.")[0].words == 1  # texts shorter than three words: what they share
    assert shared_passages("one two three", "four five six") == []
    w = words_of(["", "Ab cd", "é"])
    assert w.counts.tolist() == [0, 2, 1]


def test_a_repeated_passage_is_found_once_per_place():
    a = "buy now buy now buy now and save"
    b = "and save buy now buy now buy now"
    found = shared_passages(a, b)
    assert found[0].words == 6 and a[found[0].left_start : found[0].left_end] == "buy now buy now buy now"


@pytest.mark.parametrize("text", ["naïve café", "Ｆｕｌｌ width ﬁne", "Straße ½ cup", "日本語のテキスト 東京"])
def test_unicode_passages_normalize_equal(text):
    other = text + " appended here"
    for p in shared_passages(text, other):
        assert normalize(text[p.left_start : p.left_end]) == normalize(other[p.right_start : p.right_end])


@pytest.mark.parametrize("text", ["a-\nb-\nc d", "Ex-\n ample-\r\n  text here", "x-\ny z-\nw", "one-\ntwo three",
                                  "caf\u00e9-\nbar-\nbaz qux"])
def test_words_joined_by_chains_of_hyphens_at_line_breaks_are_the_normalized_words(text):
    """Each word is the normalized one, even where several breaks in a row join three words or more (ASCII
    texts and others alike, alone and among many texts)."""
    from neardup.verify.passages import _hash_strings

    expected = normalize_words(text)
    words = words_of([text])
    assert words.hashes.tolist() == _hash_strings(expected).tolist()
    assert [normalize(text[s:e]) for s, e in zip(words.starts.tolist(), words.ends.tolist())] == expected
    many = words_of(["plain words here", text, "\u00e9t\u00e9 chaud"] * 50)
    lo, hi = int(many.offsets[1]), int(many.offsets[2])
    assert many.hashes[lo:hi].tolist() == words.hashes.tolist()
