"""Page-layout noise of republished news: a new headline, a wire dateline, a byline, a site footer.

Owns adding the text around an article; must not change the article's own words or cut it.

The ops take ``(text, rng, rate)`` like every other op but ignore ``rate``: whether they run at all
is ``OpSpec.prob`` (see :mod:`neardup.synth.presets`).
"""

from __future__ import annotations

import random

from neardup.synth.edits import PARA_SPLIT, TOKEN_RE, first_sentence, join_units, split_units
from neardup.synth.lexicon import AGENCIES, CITIES, FOOTERS, MONTHS, NAMES

__all__ = ["add_boilerplate", "add_byline", "add_dateline", "add_headline"]


def _headline_from(text: str, rng: random.Random) -> str:
    words = TOKEN_RE.findall(first_sentence(text))[: rng.randint(4, 9)]
    if not words:
        return "News update"
    style = rng.random()
    head = " ".join(words)
    if style < 0.4:
        head = " ".join(w[:1].upper() + w[1:] for w in words)
    elif style < 0.6:
        head = head.upper()
    elif style < 0.8:
        head = f"UPDATE {rng.randint(1, 3)}-" + head[:1].upper() + head[1:]
    else:
        head = "BREAKING: " + head[:1].upper() + head[1:]
    return head


def add_headline(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Prepend an aggregator headline built from the first words (``rate`` ignored).

    >>> add_headline("Stocks rose sharply today.", random.Random(0)).endswith("\\n\\nStocks rose sharply today.")
    True
    """
    return f"{_headline_from(text, rng)}\n\n{text}" if text.strip() else text


def add_dateline(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Add a wire dateline ("LONDON, March 3 (Reuters) - ") before the first body paragraph.

    >>> add_dateline("Title\\n\\nStocks rose, traders said.", random.Random(0)).startswith("Title\\n\\n")
    True
    """
    if not text.strip():
        return text
    city, agency = rng.choice(CITIES), rng.choice(AGENCIES)
    month, day = rng.choice(MONTHS), rng.randint(1, 28)
    line = rng.choice((f"{city}, {month} {day} ({agency}) - ", f"{city} ({agency}) \u2014 ",
                       f"{city}, {day} {month} /{agency}/ - "))
    paras, seps = split_units(PARA_SPLIT, text)
    k = next((i for i, p in enumerate(paras)  # skip headline-like paragraphs
              if len(p) >= 80 or ". " in p or p.rstrip()[-1:] in (".", "!", "?", '"', "\u201d")), 0)
    paras[k] = line + paras[k].lstrip()
    return join_units(paras, seps)


def add_byline(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Prepend a byline ("By Elena Moreau, Reuters").

    >>> add_byline("Body.", random.Random(0)).startswith("By ")
    True
    """
    if not text.strip():
        return text
    name = f"{rng.choice(NAMES[44:])} {rng.choice(NAMES[:44])}"
    line = rng.choice((f"By {name}", f"By {name}, {rng.choice(AGENCIES)}", f"By {name.upper()}\nStaff Writer"))
    return f"{line}\n\n{text}"


def add_boilerplate(text: str, rng: random.Random, rate: float = 1.0) -> str:
    """Append a site footer (copyright, share links, editing credits).

    >>> add_boilerplate("Body.", random.Random(0)).startswith("Body.\\n\\n")
    True
    """
    if not text.strip():
        return text
    foot = rng.choice(FOOTERS).format(y=rng.randint(1990, 2024), a=rng.choice(AGENCIES),
                                      n=rng.choice(NAMES[44:]) + " " + rng.choice(NAMES[:44]),
                                      m=rng.choice(NAMES[44:]) + " " + rng.choice(NAMES[:44]))
    return f"{text.rstrip()}\n\n{foot}"
