"""Cross-encoder pair preparation: aligning the two openings, and the format a model folder records."""

from __future__ import annotations

import json
import re

import pytest

from neardup.verify.crossencoder import (PAIR_FORMAT_FILE, align_pair, diff_pair, prepare_pairs, read_pair_format,
                                         write_pair_format)

STORY = ("The central bank raised its main interest rate by half a percentage point on Tuesday, the first rise "
         "in three years. Officials said inflation had stayed above target for eleven months running. "
         "Markets had expected a smaller move, and the currency gained one percent within minutes. "
         "The governor told reporters that further rises were possible if prices kept climbing. "
         "Unions criticised the decision, saying it would hurt borrowers who are already struggling.")
LEAD = ("Stock markets across the region fell sharply in early trading as investors digested a week of weak "
        "factory figures and warnings from exporters about slowing demand in Asia and Europe. ")


def test_a_dropped_lead_is_cut_from_the_other_text_so_both_start_on_the_same_sentence():
    full = LEAD + STORY
    assert align_pair(STORY, full) == (STORY, STORY)
    assert align_pair(full, STORY) == (STORY, STORY)  # either side, order kept


def test_an_added_headline_block_is_cut_and_the_rest_kept_whole():
    head = ("BANK LIFTS RATES FOR THE FIRST TIME IN THREE YEARS\n\nBy our economics staff, with reporting from "
            "the capital and from the markets desks of three other cities.\n\n")
    a, b = align_pair(head + STORY + " Reuter", STORY)
    assert a == STORY + " Reuter" and b == STORY
    # a one-line headline moves the opening by a few words: not worth a cut
    short = "BANK LIFTS RATES.\n\n" + STORY
    assert align_pair(short, STORY) == (short, STORY)


def test_pairs_that_already_start_alike_or_share_nothing_are_unchanged():
    sibling = STORY.replace("half a percentage point", "a quarter point").replace("eleven", "nine")
    assert align_pair(STORY, sibling) == (STORY, sibling)
    assert align_pair(STORY, STORY) == (STORY, STORY)
    other = "Heavy rain closed roads in the north. Farmers said the harvest would be late this year."
    assert align_pair(STORY, other) == (STORY, other)
    assert align_pair("", STORY) == ("", STORY)


def test_a_cut_needs_a_real_gain_over_the_uncut_start():
    # the story's opening reappears after the lead, but the uncut texts already start alike
    echo = STORY + " " + STORY
    assert align_pair(STORY, echo) == (STORY, echo)
    # gain 1.0 can never be reached: nothing is cut
    assert align_pair(STORY, LEAD + STORY, gain=1.0) == (STORY, LEAD + STORY)


def test_prepare_pairs_clips_and_aligns_only_when_asked():
    pairs = [(STORY, LEAD + STORY)]
    assert prepare_pairs(pairs, align=False) == pairs
    assert prepare_pairs(pairs, align=True) == [(STORY, STORY)]
    long = "x" * 30_000
    (a, b), = prepare_pairs([(long, long)], align=False)
    assert len(a) == len(b) == 20_000


def test_the_diff_view_shows_what_each_text_lacks_of_the_other():
    # template siblings: the same notice for another state and amount differs in exactly those words
    a = "FRANKLIN CALIFORNIA TAX-FREE FUND SETS DIVIDEND. The fund said it will pay 5.2 cts a share on April 1."
    b = "FRANKLIN OHIO TAX-FREE FUND SETS DIVIDEND. The fund said it will pay 3.1 cts a share on April 1."
    da, db = diff_pair(a, b)
    assert da.split()[1:] == ["CALIFORNIA", "5.2"] and db.split()[1:] == ["OHIO", "3.1"]
    assert da.split()[0] == db.split()[0] == "11%"  # 2 of 19 words
    # a copy with a headline added: everything on the copy's side is the headline; the story's side is empty
    da, db = diff_pair(STORY, LEAD + STORY)
    assert da == "0%" and db.split()[1:4] == ["Stock", "across", "region"]  # "markets" is in the story
    assert set(db.split()[1:]) <= set(re.findall(r"\w+", LEAD))
    # words repeated in the text appear once; case and punctuation do not make a difference
    assert diff_pair("Oil oil OIL rose.", "gas rose") == ("75% Oil", "50% gas")
    assert diff_pair("", "") == ("0%", "0%")
    # prepare_pairs: the view is applied after clipping, and alignment does not apply to it
    assert prepare_pairs([(a, b)], align=True, view="diff") == [diff_pair(a, b)]
    assert prepare_pairs([(STORY, LEAD + STORY)], align=True, view="diff") == [diff_pair(STORY, LEAD + STORY)]
    with pytest.raises(ValueError, match="pair view"):
        prepare_pairs([(a, b)], align=True, view="words")


def test_the_pair_format_file_round_trips_and_a_bad_one_is_named(tmp_path):
    # folders from before the options: unaligned text
    assert read_pair_format(tmp_path) == {"align": False, "view": "text"}
    write_pair_format(tmp_path, True)
    assert read_pair_format(tmp_path) == {"align": True, "view": "text"}
    assert json.loads((tmp_path / PAIR_FORMAT_FILE).read_text()) == {"align": True}  # as folders before the view
    write_pair_format(tmp_path, False)
    assert read_pair_format(tmp_path) == {"align": False, "view": "text"}
    write_pair_format(tmp_path, True, "diff")
    assert read_pair_format(tmp_path) == {"align": True, "view": "diff"}
    (tmp_path / PAIR_FORMAT_FILE).write_text(json.dumps({"align": True, "view": "summary"}), encoding="utf-8")
    with pytest.raises(ValueError, match="view.*summary"):
        read_pair_format(tmp_path)
    (tmp_path / PAIR_FORMAT_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=PAIR_FORMAT_FILE):
        read_pair_format(tmp_path)
    (tmp_path / PAIR_FORMAT_FILE).write_text(json.dumps({"align": "yes"}), encoding="utf-8")
    with pytest.raises(ValueError, match="align"):
        read_pair_format(tmp_path)
