"""Spam campaigns made by padding, shuffling and insertion: copies of one text, each hidden among other texts.

Owns :func:`campaign_copy` and :func:`campaign_corpus`, a noise model built differently from the
``adversarial-spam`` preset (which busts characters: homoglyphs, invisible characters, leetspeak, case flips
and junk words): here every character of the copied text stays intact and the copy is hidden at the level of
words, sentences and whole passages. Must not detect, score or cluster duplicates, nor read files.

A copy of a text is made in four steps, each drawn from the copy's own seeded generator:

1. **sentence shuffle**: the text's sentences, each moved with probability ``shuffle`` to a random place;
2. **insertions**: after each word, with probability ``insert``, a word taken from an unrelated text (real
   words: the copy shows no character damage and no misspellings, so a noise profile reads it as clean);
3. **pitch lines**: one to three sentences of the campaign's pitch (:data:`PITCHES`), at random sentence
   breaks;
4. **padding**: passages of unrelated texts (``padding``: drawn per copy from ``others``) put before, after
   or on both sides, of ``pad`` times the text's length in all.

Two copies of one text then share the text's sentences (in another order, broken by different inserted
words) and little else: their containment falls well below that of a light edit, and differently in word
and character n-grams.

>>> import random
>>> copy = campaign_copy("One sentence here. Another one there.", ["Padding text about something else."],
...                      random.Random(0), pad=(0.5, 0.5), insert=0.0, shuffle=0.0, pitches=(0, 0))
>>> "One sentence here. Another one there." in copy
True
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from neardup.synth.edits import derive_seed

__all__ = ["CAMPAIGN_PRESETS", "PITCHES", "campaign_copy", "campaign_corpus"]

#: A campaign's pitch lines (one is drawn per line; ``{site}`` and ``{n}`` filled per copy).
PITCHES = (
    "Read the full story and more at {site} today.",
    "Members get {n} free reports every week, sign up at {site}.",
    "Share this with your friends before it is taken down.",
    "Subscribers saw this first: join {n} readers at {site}.",
    "Limited time: unlock every premium article for {n} cents.",
    "Follow us for more stories like this one.",
)
#: Two strengths of the model (:func:`campaign_copy`'s keywords): ``light`` pads a copy by 10-50% of its length and
#: inserts a foreign word after 2% of its words; ``heavy`` (the defaults) pads by 30-100% and inserts after 6%.
CAMPAIGN_PRESETS: dict[str, dict[str, Any]] = {
    "light": {"pad": (0.1, 0.5), "shuffle": 0.2, "insert": 0.02, "pitches": (0, 2)},
    "heavy": {"pad": (0.3, 1.0), "shuffle": 0.3, "insert": 0.06, "pitches": (1, 3)},
}
_SITES = ("dailyreport.example", "news-now.example", "thebriefing.example", "insider-wire.example")
_SENT = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\S+")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENT.split(" ".join(text.split())) if s]


def _passage(text: str, chars: int, rng: random.Random) -> str:
    """A run of consecutive sentences of ``text`` of about ``chars`` characters, from a random start."""
    sents = _sentences(text)
    if not sents:
        return ""
    i = rng.randrange(len(sents))
    out: list[str] = []
    while sents and sum(len(s) + 1 for s in out) < chars:
        out.append(sents[i % len(sents)])
        i += 1
        if len(out) >= len(sents):
            break
    return " ".join(out)


def campaign_copy(text: str, others: Sequence[str], rng: random.Random, *, pad: tuple[float, float] = (0.3, 1.0),
                  shuffle: float = 0.3, insert: float = 0.06, pitches: tuple[int, int] = (1, 3)) -> str:
    """One campaign copy of ``text`` (see the module docstring): ``pad`` the range of padding as a share of the
    text's length, ``shuffle`` each sentence's chance to move, ``insert`` the chance of a foreign word after each
    word, ``pitches`` the range of pitch lines; ``others`` the unrelated texts padding and inserted words come from."""
    sents = _sentences(text)
    for i in range(len(sents)):
        if rng.random() < shuffle:
            j = rng.randrange(len(sents))
            sents[i], sents[j] = sents[j], sents[i]
    if insert > 0 and others:
        foreign = _WORD.findall(rng.choice(others)) or ["and"]
        noisy = []
        for s in sents:
            words = []
            for w in s.split(" "):
                words.append(w)
                if rng.random() < insert:
                    words.append(rng.choice(foreign).strip(".,;:!?\"'()").lower() or "and")
            noisy.append(" ".join(words))
        sents = noisy
    site, n = rng.choice(_SITES), rng.randint(3, 99)
    for _ in range(rng.randint(*pitches)):
        sents.insert(rng.randint(0, len(sents)), rng.choice(PITCHES).format(site=site, n=n))
    body = " ".join(sents)
    want = int(len(text) * rng.uniform(*pad))
    before: list[str] = []
    after: list[str] = []
    side = rng.choice(("before", "after", "both"))
    while others and want > 0:
        piece = _passage(rng.choice(others), min(want, 400 + rng.randrange(400)), rng)
        if not piece:
            break
        goes_before = side == "before" or (side == "both" and rng.random() < 0.5)
        (before if goes_before else after).append(piece)
        want -= len(piece)
    return "\n\n".join([*before, body, *after])


def campaign_corpus(stories: Sequence[str], background: Sequence[str], others: Sequence[str], seed: int = 0,
                    sizes: tuple[int, int] = (2, 30), **copy_options: Any) -> tuple[list[str], list[Any]]:
    """Texts and their truth: each of ``stories`` sent as one campaign of ``sizes`` copies (truth ``"c<k>"``), among
    the untouched ``background`` texts (truth None), shuffled together; padding and inserted words from ``others``
    (texts that are neither). Reproducible from ``seed``; ``copy_options`` go to :func:`campaign_copy`.

    >>> texts, truth = campaign_corpus(["A b c. D e f."], ["Other news."], ["Pad one. Pad two."], sizes=(2, 2))
    >>> len(texts), sorted(map(str, truth))
    (3, ['None', 'c0', 'c0'])
    """
    rng = random.Random(seed)
    texts: list[str] = []
    truth: list[Any] = []
    for c, story in enumerate(stories):
        for k in range(rng.randint(*sizes)):
            texts.append(campaign_copy(story, others, random.Random(derive_seed(seed, "campaign", str(c), str(k))),
                                       **copy_options))
            truth.append(f"c{c}")
    texts.extend(background)
    truth.extend([None] * len(background))
    order = list(range(len(texts)))
    rng.shuffle(order)
    return [texts[i] for i in order], [truth[i] for i in order]
