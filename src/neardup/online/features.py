"""What the online detector computes from one text: shingle sequence, sample, numbers, sentences.

Owns turning a text into the per-document data the candidate steps and verification use, and its
compact binary form for the store; must not look anything up, decide, or re-implement normalization
or shingling (it calls :mod:`neardup.text`).

A document's *verification data* (stored beside it, see :func:`pack` / :func:`unpack`):

* ``seq`` - the 64-bit n-gram hashes in text order (repeats kept, at most ``MAX_SEQ``): word n-grams,
  or with ``char`` character n-grams of the normalized text (spaces included, as the batch pipeline
  shingles), from which any "first fraction f" prefix set and the full set are derived, so f can be
  re-tuned without rebuilding the store;
* ``n_tokens`` - the word count (the short-document rule; the prefix length of word shingles; the
  prefix of character shingles is measured in characters, ``seq.size + n - 1``, see :func:`n_units`);
* ``numbers`` - sorted unique hashes of the numbers written in the text (for the update rule).
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass

import numpy as np
import xxhash

from neardup.arrays import distinct
from neardup.config import NormalizeConfig
from neardup.text.normalize import normalize
from neardup.text.shingle import char_shingle_sequence, tokenize, word_shingle_sequence

MAX_SEQ = 20_000  # n-gram hashes kept per document (a 20,000-word prefix covers any news story)
_NUMBER_RE = re.compile(r"(?<!\w)(\d+(?:[.,:/]\d+)*)([^\W\d_]*)(?!\w)")
# Letters that may follow a number ("$5m", "1980s", "3rd", "10am"); any other ("1ater", "5ome") is OCR noise.
_NUMBER_SUFFIXES = frozenset({"", "m", "bn", "k", "s", "st", "nd", "rd", "th", "am", "pm", "kg", "km", "mm", "cm",
                              "ft", "mb", "gb", "p", "pc", "mph", "bp", "x"})
_SENTENCE_RE = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s)")
_EMPTY = np.empty(0, dtype=np.uint64)
_HEADER = struct.Struct("<4sIII")  # magic, n_tokens, len(seq), len(numbers)
_MAGIC = b"ND01"


@dataclass
class DocFeatures:
    """One document as the detector sees it.

    >>> f = featurize("The cat sat on the mat. It cost 12 dollars.", n=3)
    >>> f.n_tokens, f.seq.size, f.numbers.size
    (10, 8, 1)
    """

    tokens: list[str]
    seq: np.ndarray  # uint64 n-gram hashes in text order
    numbers: np.ndarray  # sorted unique uint64 hashes of the numbers in the raw text
    n: int
    raw: str = ""
    char: bool = False
    norm: str = ""  # the normalized text (character shingles: the units evidence is cut from)

    @property
    def n_tokens(self) -> int:
        """Number of word tokens after normalization."""
        return len(self.tokens)

    @property
    def units(self) -> list[str]:
        """The shingling units in text order: word tokens, or the normalized text's characters."""
        return list(self.norm[: MAX_SEQ + self.n - 1]) if self.char else self.tokens

    @property
    def empty(self) -> bool:
        """True when the text has no token (never a duplicate, never a candidate)."""
        return not self.tokens


def featurize(text: str, n: int, normalize_config: NormalizeConfig | None = None, char: bool = False) -> DocFeatures:
    """Normalize, tokenize and shingle ``text`` (word ``n``-grams, or character ``n``-grams of the
    normalized text with ``char``) and collect its numbers.

    >>> featurize("", n=3).empty, featurize("The cat sat.", n=5, char=True).seq.size
    (True, 7)
    """
    norm = normalize(text, normalize_config)
    tokens = tokenize(norm)
    if not tokens:
        seq = _EMPTY
    elif char:
        seq = char_shingle_sequence(norm, n)[:MAX_SEQ]
    else:
        seq = word_shingle_sequence(tokens, n)[:MAX_SEQ]
    return DocFeatures(tokens=tokens, seq=seq, numbers=number_hashes(text), n=n, raw=text, char=char,
                       norm=norm if char else "")


def n_units(seq: np.ndarray, n_tokens: int, n: int, char: bool) -> int:
    """The length in shingling units that a prefix fraction is taken of: the word count for word
    shingles; for character shingles the characters the stored n-grams cover (``seq.size + n - 1``).

    >>> n_units(featurize("ab cd", 3, char=True).seq, 2, 3, True), n_units(np.zeros(4, np.uint64), 6, 3, False)
    (5, 6)
    """
    return seq.size + n - 1 if char and seq.size else n_tokens


def number_hashes(text: str) -> np.ndarray:
    """Sorted unique hashes of the numbers written in ``text`` ("1,500", "3.5", "2/3" kept whole).

    Digits inside words ("b0ard", "1ater", "5ome": OCR confusions) are not numbers; unit and
    ordinal suffixes are ("$5m", "1980s", "3rd").

    >>> number_hashes("rose 3.5 pct to 1,500 from 1,500").size
    2
    >>> number_hashes("the b0ard met 1ater"), number_hashes("$5m in the 1980s").size
    (array([], dtype=uint64), 2)
    """
    found = {number.replace(",", "") for number, suffix in _NUMBER_RE.findall(text)
             if not suffix or suffix.lower() in _NUMBER_SUFFIXES}
    if not found:
        return _EMPTY
    return distinct(np.array([xxhash.xxh3_64_intdigest(s.encode()) for s in found], dtype=np.uint64))


def first_distinct(seq: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` distinct values of ``seq`` in text order (the seed method's shingle sample).

    >>> first_distinct(np.array([5, 3, 5, 9], dtype=np.uint64), 2).tolist()
    [5, 3]
    """
    if seq.size == 0:
        return _EMPTY
    values, first = np.unique(seq, return_index=True)
    order = np.argsort(first, kind="stable")
    return values[order[:k]]


def prefix_fraction(n_tokens: int, f: float, f_short: float, short_len: int) -> float:
    """The fraction of a document verification reads: ``f_short`` below ``short_len`` tokens, else ``f``.

    >>> prefix_fraction(50, 0.4, 1.0, 100), prefix_fraction(500, 0.4, 1.0, 100)
    (1.0, 0.4)
    """
    return f_short if n_tokens < short_len else f


def prefix_set(seq: np.ndarray, n_tokens: int, n: int, fraction: float) -> np.ndarray:
    """Sorted unique n-gram hashes of the first ``fraction`` of a document's tokens.

    >>> s = featurize("a b c d e f g h i j", n=3).seq
    >>> prefix_set(s, 10, 3, 0.5).size  # tokens a..e: 3 trigrams
    3
    """
    if seq.size == 0:
        return _EMPTY
    m = max(int(math.ceil(fraction * n_tokens)) - n + 1, 1)
    return distinct(seq[:m])


def sentence_sequences(text: str, n: int, min_tokens: int,
                       normalize_config: NormalizeConfig | None = None, char: bool = False) -> list[np.ndarray]:
    """Word (or with ``char`` character) n-gram hashes of each sentence of ``text`` with at least
    ``min_tokens`` words.

    Sentences end at ``.``/``!``/``?`` followed by space, at blank lines and at indented lines
    (wire-story paragraphs). The hashes equal those of the same words (characters) in the whole document.

    >>> len(sentence_sequences("One two three four. Five six seven eight nine.", 3, 4))
    2
    """
    out = []
    for part in _SENTENCE_RE.split(text):
        if not part or not part.strip():
            continue
        norm = normalize(part, normalize_config)
        tokens = tokenize(norm)
        if char and len(tokens) >= min_tokens and len(norm) >= n:
            out.append(char_shingle_sequence(norm, n))
        elif not char and len(tokens) >= max(min_tokens, n):
            out.append(word_shingle_sequence(tokens, n))
    return out


def pack(features: DocFeatures) -> bytes:
    """The verification data of a document as bytes (see the module docstring).

    >>> f = featurize("a b c d 7", n=3)
    >>> g = unpack(pack(f))
    >>> g.n_tokens, g.seq.tolist() == f.seq.tolist(), g.numbers.tolist() == f.numbers.tolist()
    (5, True, True)
    """
    seq = np.ascontiguousarray(features.seq, dtype="<u8")
    nums = np.ascontiguousarray(features.numbers, dtype="<u8")
    return _HEADER.pack(_MAGIC, features.n_tokens, seq.size, nums.size) + seq.tobytes() + nums.tobytes()


@dataclass
class StoredFeatures:
    """Verification data read back from the store."""

    n_tokens: int
    seq: np.ndarray
    numbers: np.ndarray


def unpack(blob: bytes) -> StoredFeatures:
    """Inverse of :func:`pack`; a damaged blob raises ``ValueError``."""
    blob = bytes(blob)
    if len(blob) < _HEADER.size:
        raise ValueError("verification data is truncated")
    magic, n_tokens, n_seq, n_num = _HEADER.unpack_from(blob)
    if magic != _MAGIC or len(blob) != _HEADER.size + 8 * (n_seq + n_num):
        raise ValueError("verification data is damaged")
    seq = np.frombuffer(blob, dtype="<u8", count=n_seq, offset=_HEADER.size).astype(np.uint64)
    nums = np.frombuffer(blob, dtype="<u8", count=n_num, offset=_HEADER.size + 8 * n_seq).astype(np.uint64)
    return StoredFeatures(n_tokens=n_tokens, seq=seq, numbers=nums)
