"""Tests for neardup.synth.negatives: hard negatives."""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.synth import negatives
from neardup.synth.corpus import ngram_jaccard
from neardup.synth.negatives import make_hard_negative

from .conftest import NUM, SAMPLE, SAMPLE2


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
    o = negatives.template_sibling(twice, random.Random(0))
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


@settings(max_examples=30, deadline=None)
@given(text=st.text(min_size=1, max_size=200), seed=st.integers(0, 1000),
       kind=st.sampled_from(negatives.HARD_NEGATIVE_KINDS))
def test_any_text_hard_negative_is_valid(text: str, seed: int, kind: str) -> None:
    res = make_hard_negative(text, kind, seed, pool=["Some other text. About things."])
    res.text.encode("utf-8")
    if text.strip():
        assert res.text.strip()
