"""Verification of online candidates: first-fraction n-gram overlap, the update rule, evidence.

Owns the pure decisions on one new document against a few stored ones; must not touch the store
or pick candidates (see candidates.py), and reuses :func:`neardup.verify.overlap.overlap_coefficient`.

* score: the overlap coefficient ``|A∩B| / min(|A|, |B|)`` of the n-gram sets of the first
  fraction f of each document (``f_short`` below ``short_len`` tokens), as in the seed method;
* update rule: a verified candidate is *updated* (the new document is a new original) when the new
  document writes numbers the candidate does not (a changed count, amount or date), or adds
  sentences that share almost no n-gram with the candidate;
* choice: candidates by score, best first; the first at or above ``r_overlap`` that is not an
  update is the match;
* evidence: the new document's longest runs of units (words, or characters for character shingles)
  covered by matching n-grams, as text.

Word and character shingles are verified alike: the prefix is the first fraction of the document's
words or characters (which fraction, ``f`` or ``f_short``, always goes by its word count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup.arrays import distinct
from neardup.cluster import passes
from neardup.online.features import DocFeatures, StoredFeatures, n_units, prefix_fraction, prefix_set
from neardup.verify.overlap import overlap_coefficient


@dataclass
class Scored:
    """One verified candidate: its arrival number, votes, overlap score and update reason (if any)."""

    seq: int
    votes: int
    score: float
    update: str | None = None


def prefix_of(seq: np.ndarray, n_tokens: int, n: int, f: float, f_short: float, short_len: int,
              char: bool = False) -> np.ndarray:
    """The verification set of one document: n-grams of its first fraction (see module docstring).

    >>> from neardup.online.features import featurize
    >>> d = featurize("a b c d e f g h i j", 3)
    >>> prefix_of(d.seq, d.n_tokens, 3, 0.5, 1.0, 5).size, prefix_of(d.seq, d.n_tokens, 3, 0.5, 1.0, 50).size
    (3, 8)
    >>> c = featurize("abcdefghij", 3, char=True)  # one word, 10 characters: half is "abcde", 3 trigrams
    >>> prefix_of(c.seq, c.n_tokens, 3, 0.5, 0.5, 5, char=True).size
    3
    """
    return prefix_set(seq, n_units(seq, n_tokens, n, char), n, prefix_fraction(n_tokens, f, f_short, short_len))


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Overlap coefficient of two sorted unique hash arrays.

    >>> overlap(np.array([1, 2], dtype=np.uint64), np.array([1, 2, 3], dtype=np.uint64))
    1.0
    """
    return overlap_coefficient(a, b)


def new_numbers(new: np.ndarray, old: np.ndarray) -> int:
    """How many distinct numbers the new document writes that the old one does not.

    >>> new_numbers(np.array([1, 2, 5], dtype=np.uint64), np.array([1, 2, 3], dtype=np.uint64))
    1
    """
    return int(np.setdiff1d(new, old, assume_unique=True).size)


def new_sentences(sentences: Sequence[np.ndarray], old_full: np.ndarray, max_shared: float) -> int:
    """How many sentences (n-gram hash arrays) share at most ``max_shared`` of their n-grams with ``old_full``.

    >>> new_sentences([np.array([1, 2, 3], dtype=np.uint64), np.array([7, 8], dtype=np.uint64)],
    ...               np.array([1, 2, 3, 4], dtype=np.uint64), 0.2)
    1
    """
    count = 0
    for s in sentences:
        if s.size and np.isin(s, old_full).mean() <= max_shared:
            count += 1
    return count


def update_counts(new: DocFeatures, sentences: Sequence[np.ndarray], old: StoredFeatures,
                  max_shared: float) -> tuple[int, int]:
    """(numbers the new document writes that ``old`` does not, its sentences ``old`` does not have).

    >>> from neardup.online.features import featurize, unpack, pack
    >>> old = unpack(pack(featurize("Sales rose 5 pct in May, the company said.", 3)))
    >>> update_counts(featurize("Sales rose 7 pct in May, the company said.", 3), [], old, 0.2)
    (1, 0)
    """
    k_sent = new_sentences(sentences, distinct(old.seq), max_shared) if sentences else 0
    return new_numbers(new.numbers, old.numbers), k_sent


def is_update(k_numbers: int, k_sentences: int, min_numbers: int, min_sentences: int) -> bool:
    """The update rule: at least ``min_numbers`` new numbers or ``min_sentences`` new sentences (0 = unused).

    >>> is_update(2, 0, 3, 1), is_update(3, 0, 3, 1), is_update(5, 0, 0, 1)
    (False, True, False)
    """
    return (min_numbers > 0 and k_numbers >= min_numbers) or (min_sentences > 0 and k_sentences >= min_sentences)


def update_reason(new: DocFeatures, sentences: Sequence[np.ndarray], old: StoredFeatures, min_numbers: int,
                  min_sentences: int, max_shared: float) -> str | None:
    """Why the new document is an update of ``old`` (a new original), or None when it is not.

    >>> from neardup.online.features import featurize, unpack, pack
    >>> old = unpack(pack(featurize("Sales rose 5 pct in May, the company said.", 3)))
    >>> new = featurize("Sales rose 7 pct in May, the company said.", 3)
    >>> update_reason(new, [], old, 1, 1, 0.2)
    'writes 1 number(s) the earlier document does not'
    """
    k_num, k_sent = update_counts(new, sentences if min_sentences > 0 else [], old, max_shared)
    if not is_update(k_num, k_sent, min_numbers, min_sentences):
        return None
    if min_numbers > 0 and k_num >= min_numbers:
        return f"writes {k_num} number(s) the earlier document does not"
    return f"adds {k_sent} sentence(s) the earlier document does not have"


def choose(scored: Sequence[Scored], r_overlap: float) -> tuple[Scored | None, Scored | None]:
    """(the match, the first candidate passed over as updated): best score first, then votes, then arrival.

    >>> choose([Scored(1, 5, 0.9, "adds"), Scored(2, 3, 0.6), Scored(3, 9, 0.1)], 0.5)
    (Scored(seq=2, votes=3, score=0.6, update=None), Scored(seq=1, votes=5, score=0.9, update='adds'))
    """
    updated = None
    for cand in sorted(scored, key=lambda c: (-c.score, -c.votes, c.seq)):
        if not passes(cand.score, r_overlap):
            break
        if cand.update is not None:
            updated = updated or cand
            continue
        return cand, updated
    return None, updated


def evidence(tokens: Sequence[str], seq: np.ndarray, prefix_len: int, matched: np.ndarray, n: int,
             max_snippets: int = 5, max_words: int = 40, char: bool = False) -> list[str]:
    """The longest runs of the new document's tokens covered by n-grams also in ``matched``.

    Only the first ``prefix_len`` n-grams (the verified prefix) are searched. Snippets are the
    normalized words (lower case, no punctuation), longest first, cut to ``max_words``. With ``char``
    the tokens are the normalized text's characters (character shingles): a snippet is the covered
    passage, cut to ``6 * max_words`` characters, and runs shorter than two n-grams (a common syllable
    such as " the ") are left out.

    >>> from neardup.online.features import featurize
    >>> d = featurize("The quake hit the bay of plenty today", 3)
    >>> e = featurize("a quake hit the bay of plenty region", 3)
    >>> evidence(d.tokens, d.seq, d.seq.size, np.unique(e.seq), 3)
    ['quake hit the bay of plenty']
    >>> d, e = featurize("The quake hit the Bay of Plenty", 5, char=True), featurize("a quaké hit thw bay of plenty", 5, char=True)
    >>> evidence(d.units, d.seq, d.seq.size, np.unique(e.seq), 5, char=True)
    ['bay of plenty']
    """
    if not tokens or seq.size == 0 or matched.size == 0 or max_snippets <= 0:
        return []
    hits = np.flatnonzero(np.isin(seq[:prefix_len], matched))
    if hits.size == 0:
        return []
    width = min(n, len(tokens))
    delta = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.add.at(delta, hits, 1)
    np.add.at(delta, np.minimum(hits + width, len(tokens)), -1)
    covered = np.cumsum(delta[:-1]) > 0
    edges = np.diff(np.concatenate(([0], covered.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    order = sorted(range(starts.size), key=lambda i: (-(ends[i] - starts[i]), starts[i]))
    if char:
        order = [i for i in order if ends[i] - starts[i] >= 2 * n]
    sep, limit = ("", 6 * max_words) if char else (" ", max_words)
    out = []
    for i in order[:max_snippets]:
        units = tokens[starts[i]: ends[i]]
        text = sep.join(units[:limit]).strip()
        out.append(text + (" …" if len(units) > limit else ""))
    return out
