"""Shared passages of two texts: the longest runs of words both hold in the same order, located by
character offsets in each raw text (the spans of a pair's evidence, :mod:`neardup.evidence`).

Owns reading raw texts as normalized words with their offsets (:func:`words_of`) and aligning the words of
pairs of texts (:func:`passages`); must not score pairs or decide what is a duplicate.

Words are those :func:`neardup.text.normalize.normalize` leaves with its default settings (case folded,
punctuation dropped, words split by a hyphen at a line break joined, invisible characters and
homoglyphs folded), so a passage survives the differences normalization ignores. A passage is a maximal
run of at least ``min_words`` words (3; fewer for shorter texts) that the two texts hold in the same
order (consecutive shared word 3-grams on one diagonal); the longest passages that do not overlap (in
either text) are kept, longest first. Many pairs are aligned at once: the texts are read in one pass
(ASCII texts joined into one buffer; words hashed from one prefix sum) and every pair's shared 3-grams
found with one sort, so a pair costs microseconds.

A passage's offsets are raw: ``text[start:end]`` begins at its first word and ends with its last, and
``normalize(a[left_start:left_end]) == normalize(b[right_start:right_end])`` always holds. For ASCII texts
this is so by construction; otherwise each passage is checked and dropped if normalization disagrees
(a compatibility character between words can make a raw slice normalize differently).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup.text.normalize import INVISIBLE, normalize, normalize_words

#: Passages kept per pair, and the fewest words one holds (texts shorter than this: their length).
MAX_PASSAGES = 3
MIN_WORDS = 3
#: Characters of each text searched for passages (the rest of a longer text is not).
MAX_CHARS = 1_000_000
#: A k-gram repeated more often than this in the other text is matched at its first occurrences only.
_MAX_REPEATS = 32
#: Runs considered when choosing non-overlapping passages (longest first).
_MAX_RUNS_TRIED = 256

_ASCII_WORD = np.zeros(256, dtype=bool)
_ASCII_WORD[[ord(c) for c in "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]] = True
_LOWER = np.arange(256, dtype=np.uint64)
_LOWER[65:91] += 32
_HYPHEN_BREAK_RE = re.compile(r"-[ \t]*\r?\n[ \t]*")  # as neardup.text.normalize joins words
# A raw word: letters and digits, with the invisible characters and combining marks normalization
# removes or composes inside it.
_RAW_WORD_RE = re.compile("(?:[^\\W_]|[" + re.escape("".join(sorted(INVISIBLE)))
                          + "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f])+")
# Word hashes: a polynomial in an odd base over the word's UTF-8 bytes (odd numbers are invertible modulo
# 2**64, so every word's hash comes from one prefix sum), then mixed with its length.
_BASE = 0x100000001B3
_POWERS = np.cumprod(np.full(1 << 12, _BASE, dtype=np.uint64))
_INVERSES = np.cumprod(np.full(1 << 12, pow(_BASE, -1, 1 << 64), dtype=np.uint64))
# Odd multipliers of the k-gram positions.
_GRAM = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xC2B2AE3D27D4EB4F)


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``BASE ** (i + 1)`` and its inverse for ``i < n`` (modulo 2**64), grown on demand."""
    global _POWERS, _INVERSES
    if n > _POWERS.size:
        size = 1 << max(n - 1, 1).bit_length()
        _POWERS = np.cumprod(np.full(size, _BASE, dtype=np.uint64))
        _INVERSES = np.cumprod(np.full(size, pow(_BASE, -1, 1 << 64), dtype=np.uint64))
    return _POWERS[:n], _INVERSES[:n]


def _hash_words(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """64-bit hashes of the words ``data[starts[i]:ends[i]]`` (``data``: lower-cased bytes as uint64)."""
    if starts.size == 0:
        return np.empty(0, dtype=np.uint64)
    powers, inverses = _powers(data.size)
    with np.errstate(over="ignore"):
        prefix = np.concatenate((np.zeros(1, dtype=np.uint64), np.cumsum(data * powers, dtype=np.uint64)))
        h = (prefix[ends] - prefix[starts]) * inverses[starts] + (ends - starts).astype(np.uint64) * np.uint64(_GRAM[3])
        h ^= h >> np.uint64(31)
        h *= np.uint64(_GRAM[1])
        return h ^ (h >> np.uint64(29))


def _hash_strings(words: list[str]) -> np.ndarray:
    """:func:`_hash_words` of normalized words given as strings."""
    if not words:
        return np.empty(0, dtype=np.uint64)
    data = np.frombuffer(" ".join(words).encode("utf-8", "surrogatepass"), dtype=np.uint8).astype(np.uint64)
    spaces = np.flatnonzero(data == 32)
    return _hash_words(data, np.concatenate(([0], spaces + 1)), np.append(spaces, data.size))


@dataclass(frozen=True)
class Words:
    """Texts read as normalized words: each word's hash and the raw character offsets (in its own text) it
    came from; document ``d``'s words are ``offsets[d]:offsets[d + 1]``.

    ``exact[d]``: every raw slice of text ``d`` from a word's start to a later word's end normalizes to
    exactly those words joined by spaces (true for ASCII texts).
    """

    hashes: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    offsets: np.ndarray
    exact: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def counts(self) -> np.ndarray:
        """Words per text."""
        return np.diff(self.offsets)

    def of(self, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Text ``d``'s word hashes, starts and ends."""
        lo, hi = int(self.offsets[d]), int(self.offsets[d + 1])
        return self.hashes[lo:hi], self.starts[lo:hi], self.ends[lo:hi]


@dataclass(frozen=True)
class Passage:
    """A passage two texts share: ``[left_start, left_end)`` in the first, ``[right_start, right_end)`` in
    the second (raw character offsets), ``words`` long."""

    left_start: int
    left_end: int
    right_start: int
    right_end: int
    words: int


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _breaks(text: str, ends: np.ndarray) -> list[int]:
    """The words (indices) that a hyphen at a line break joins to the next, as normalization does."""
    if "-" not in text or "\n" not in text:
        return []
    at = [m.start() for m in _HYPHEN_BREAK_RE.finditer(text)
          if 0 < m.start() and m.end() < len(text) and _is_word_char(text[m.start() - 1])
          and _is_word_char(text[m.end()])]
    if not at:
        return []
    k = np.searchsorted(ends, at)
    return [int(i) for i, s in zip(k.tolist(), at) if i + 1 < ends.size and ends[i] == s]


def _ascii_words(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The words of ASCII texts, all at once: hashes, raw starts and ends (in their text), text of each word.

    The texts are joined by NUL (not a word character, and no hyphen break spans it) and read in one pass.
    """
    joined = "\0".join(texts)
    data = _LOWER[np.frombuffer(joined.encode("ascii"), dtype=np.uint8)]
    edges = np.diff(np.concatenate(([0], _ASCII_WORD[data.astype(np.uint8)].astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    hashes = _hash_words(data, starts, ends)
    joins = _breaks(joined, ends)
    if joins:  # hash the joined words; each takes the end of the next
        low = joined.lower()
        hashes = hashes.copy()
        for i in reversed(joins):
            hashes[i] = _hash_strings([low[starts[i] : ends[i]] + low[starts[i + 1] : ends[i + 1]]])[0]
            ends[i] = ends[i + 1]
        drop = np.asarray(joins) + 1
        hashes, starts, ends = np.delete(hashes, drop), np.delete(starts, drop), np.delete(ends, drop)
    text_starts = np.cumsum([0] + [len(t) + 1 for t in texts[:-1]])
    doc = np.searchsorted(text_starts, starts, "right") - 1
    base = text_starts[doc]
    return hashes, (starts - base).astype(np.int64), (ends - base).astype(np.int64), doc


def _unicode_words(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The words of one non-ASCII text: each raw word normalized on its own (it may give several words,
    which then share its offsets)."""
    words: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _RAW_WORD_RE.finditer(text):
        raw = m.group()
        for word in ((raw.lower(),) if raw.isascii() else normalize_words(raw)):
            words.append(word)
            starts.append(m.start())
            ends.append(m.end())
    for i in reversed(_breaks(text, np.asarray(ends, dtype=np.int64))):
        words[i : i + 2] = [words[i] + words[i + 1]]
        ends[i : i + 2] = [ends[i + 1]]
        del starts[i + 1]
    return _hash_strings(words), np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


def words_of(texts: Sequence[str]) -> Words:
    """Texts (each's first :data:`MAX_CHARS` characters) as normalized words with raw offsets.

    >>> w = words_of(["The  Quick-\\nbrown FOX!", "QUICKBROWN é"])
    >>> w.starts.tolist(), w.ends.tolist(), w.offsets.tolist(), bool(w.hashes[1] == w.hashes[3])
    ([0, 5, 18, 0, 11], [3, 17, 21, 10, 12], [0, 3, 5], True)
    """
    cut = [t[:MAX_CHARS] for t in texts]
    exact = np.fromiter((t.isascii() for t in cut), dtype=bool, count=len(cut))
    ascii_docs = np.flatnonzero(exact)
    parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    if ascii_docs.size:
        hashes, starts, ends, doc = _ascii_words([cut[i] for i in ascii_docs])
        bounds = np.searchsorted(doc, np.arange(ascii_docs.size + 1))
        if ascii_docs.size == len(cut):  # all ASCII: already in order
            return Words(hashes, starts, ends, bounds.astype(np.int64), exact)
        for k, d in enumerate(ascii_docs.tolist()):
            lo, hi = bounds[k], bounds[k + 1]
            parts[d] = (hashes[lo:hi], starts[lo:hi], ends[lo:hi])
    for d in np.flatnonzero(~exact).tolist():
        parts[d] = _unicode_words(cut[d])
    order = [parts[d] for d in range(len(cut))]
    counts = [p[0].size for p in order]
    cat = (lambda i, dtype: np.concatenate([p[i] for p in order]).astype(dtype)) if order else \
        (lambda i, dtype: np.empty(0, dtype=dtype))
    return Words(cat(0, np.uint64), cat(1, np.int64), cat(2, np.int64),
                 np.concatenate(([0], np.cumsum(counts))).astype(np.int64), exact)


def _kgrams(words: Words, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Hashes of every text's word ``k``-grams (texts with fewer than ``k`` words have none), and where each
    text's grams start (CSR offsets)."""
    h, offsets = words.hashes, words.offsets
    counts = np.maximum(np.diff(offsets) - k + 1, 0)
    goff = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    total = int(goff[-1])
    # the first word of each gram: its text's first word plus its rank among the text's grams
    first = np.repeat(offsets[:-1], counts) + np.arange(total) - np.repeat(goff[:-1], counts)
    with np.errstate(over="ignore"):
        acc = np.full(total, k, dtype=np.uint64)
        for i in range(k):
            acc += h[first + i] * np.uint64(_GRAM[i % len(_GRAM)] + 2 * (i // len(_GRAM)))
    return acc, goff


def _expand(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges ``[starts[p], starts[p] + counts[p])``: every position, and the range it is in."""
    total = int(counts.sum())
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    return np.repeat(starts, counts) + np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts), owner


def _runs(words: Words, a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """For pairs of texts ``(a[p], b[p])`` of ``words``: the maximal runs of shared ``k``-grams on one
    diagonal, as ``(pair, start in a, start in b, words)``, longest first within each pair."""
    grams, goff = _kgrams(words, k)
    count = np.diff(goff)
    rows_a, pair_a = _expand(goff[a], count[a])
    rows_b, pair_b = _expand(goff[b], count[b])
    with np.errstate(over="ignore"):  # a gram of pair p: its hash moved by p times an odd constant
        key_a = grams[rows_a] + pair_a.astype(np.uint64) * np.uint64(_GRAM[0])
        key_b = grams[rows_b] + pair_b.astype(np.uint64) * np.uint64(_GRAM[0])
    order = np.argsort(key_b, kind="stable")
    sorted_b = key_b[order]
    order_a = np.argsort(key_a)  # sorted needles: the binary searches walk the array in order
    needles = key_a[order_a]
    lo, hi = np.searchsorted(sorted_b, needles, "left"), np.searchsorted(sorted_b, needles, "right")
    hits, owner = _expand(lo, np.minimum(hi - lo, _MAX_REPEATS))
    owner = order_a[owner]
    pair = pair_a[owner]
    ia = rows_a[owner] - goff[a][pair]
    jb = rows_b[order[hits]] - goff[b][pair]
    keep = pair_b[order[hits]] == pair  # (a moved hash of another pair: vanishingly rare, never a match)
    pair, ia, jb = pair[keep], ia[keep], jb[keep]
    diagonal = ia - jb
    # sort by (pair, diagonal, position): one argsort of the three packed in 63 bits where they fit
    bits = max(int(ia.max(initial=0)), int(jb.max(initial=0))).bit_length()  # ia, jb < 2**bits
    if int(pair.max(initial=0)).bit_length() + 2 * bits + 2 <= 63:
        o = np.argsort((pair << (2 * bits + 2)) | ((diagonal + (1 << bits)) << bits) | ia, kind="stable")
    else:
        o = np.lexsort((ia, diagonal, pair))
    pair, ia, jb, diagonal = pair[o], ia[o], jb[o], diagonal[o]
    new = np.ones(pair.size, dtype=bool)
    new[1:] = (np.diff(pair) != 0) | (np.diff(diagonal) != 0) | (np.diff(ia) != 1)
    first = np.flatnonzero(new)
    length = np.diff(np.append(first, pair.size)) + k - 1
    pair, ia, jb = pair[first], ia[first], jb[first]
    o = np.lexsort((ia, -length, pair))
    return pair[o], ia[o], jb[o], length[o]


def passages(texts: Sequence[str], a: np.ndarray, b: np.ndarray, words: Words | None = None,
             max_passages: int = MAX_PASSAGES, min_words: int = MIN_WORDS) -> list[list[Passage]]:
    """For each pair of texts ``(texts[a[p]], texts[b[p]])``: the longest passages they share, longest
    first, at most ``max_passages``, none overlapping (in either text); ``words``: :func:`words_of` of
    ``texts``, if already read. All pairs are aligned at once.

    >>> t = ["Stocks rose in Tokyo on Monday. Oil fell.", "OIL FELL sharply; stocks rose in Tokyo on Monday!"]
    >>> [(t[0][p.left_start:p.left_end], t[1][p.right_start:p.right_end]) for p in passages(t, [0], [1])[0]]
    [('Stocks rose in Tokyo on Monday', 'stocks rose in Tokyo on Monday')]
    """
    w = words if words is not None else words_of(texts)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    out: list[list[Passage]] = [[] for _ in range(a.size)]
    if max_passages <= 0 or a.size == 0:
        return out
    counts = w.counts
    k_of = np.minimum(np.minimum(counts[a], counts[b]), min_words)  # shorter texts: runs as long as they are
    for k in np.unique(k_of[k_of > 0]).tolist():
        group = np.flatnonzero(k_of == k)
        pair, ia, jb, length = _runs(w, a[group], b[group], int(k))
        starts = np.flatnonzero(np.concatenate(([True], np.diff(pair) != 0))) if pair.size else pair
        bounds = np.append(starts, pair.size)
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            p = int(group[pair[lo]])
            out[p] = _choose(texts, w, int(a[p]), int(b[p]), ia[lo:hi], jb[lo:hi], length[lo:hi], max_passages)
    return out


def _choose(texts: Sequence[str], w: Words, a: int, b: int, ia: np.ndarray, jb: np.ndarray, length: np.ndarray,
            max_passages: int) -> list[Passage]:
    """The longest runs of one pair that overlap none taken before (checked by normalization unless both
    texts are exact)."""
    _, sa, ea = w.of(a)
    _, sb, eb = w.of(b)
    check = not (w.exact[a] and w.exact[b])
    out: list[Passage] = []
    taken: list[tuple[int, int, int, int]] = []
    for i, j, n in zip(ia[:_MAX_RUNS_TRIED].tolist(), jb[:_MAX_RUNS_TRIED].tolist(),
                       length[:_MAX_RUNS_TRIED].tolist()):
        if any(i < ie and is_ < i + n or j < je and js < j + n for is_, ie, js, je in taken):
            continue
        p = Passage(int(sa[i]), int(ea[i + n - 1]), int(sb[j]), int(eb[j + n - 1]), n)
        if check and normalize(texts[a][p.left_start : p.left_end]) != normalize(texts[b][p.right_start : p.right_end]):
            continue
        taken.append((i, i + n, j, j + n))
        out.append(p)
        if len(out) >= max_passages:
            break
    return out


def shared_passages(a: str, b: str, max_passages: int = MAX_PASSAGES, min_words: int = MIN_WORDS) -> list[Passage]:
    """The longest passages two texts share (:func:`passages` of one pair).

    >>> a, b = "Oil fell 3% in London.", "In London, oil fell 3%!"
    >>> [(a[p.left_start:p.left_end], p.words) for p in shared_passages(a, b)]
    [('Oil fell 3', 3)]
    """
    return passages([a, b], [0], [1], max_passages=max_passages, min_words=min_words)[0]


__all__ = ["MAX_PASSAGES", "MIN_WORDS", "Passage", "Words", "passages", "shared_passages", "words_of"]
