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
found with one sort, so a pair costs microseconds. On large blocks (:func:`neardup.jit.pays`) compiled
loops do the same work text by text and pair by pair (reading words, finding and ordering each pair's runs,
choosing its passages), with the same results to the bit.

A passage's offsets are raw: ``text[start:end]`` begins at its first word and ends with its last, and
``normalize(a[left_start:left_end]) == normalize(b[right_start:right_end])`` always holds. For ASCII texts
this is so by construction; otherwise each passage is checked and dropped if normalization disagrees
(a compatibility character between words can make a raw slice normalize differently).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup.arrays import ranges
from neardup.jit import compiled, pays
from neardup.text.normalize import INVISIBLE, alnum_table, line_break_joins, normalize, normalize_words

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
# A raw word: letters and digits, with the invisible characters and combining marks normalization
# removes or composes inside it.
_COMBINING = ((0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F))
_RAW_WORD_RE = re.compile("(?:[^\\W_]|[" + re.escape("".join(sorted(INVISIBLE)))
                          + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _COMBINING) + "])+")
# Word hashes: a polynomial in an odd base over the word's UTF-8 bytes (odd numbers are invertible modulo
# 2**64, so every word's hash comes from one prefix sum), then mixed with its length.
_BASE = 0x100000001B3
_POWERS = np.cumprod(np.full(1 << 12, _BASE, dtype=np.uint64))
_INVERSES = np.cumprod(np.full(1 << 12, pow(_BASE, -1, 1 << 64), dtype=np.uint64))
# What lies between words that hyphens at line breaks join (normalization's dehyphenation), deleted to join them.
_BREAK_CHARS = str.maketrans("", "", "- \t\r\n")
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


@dataclass(frozen=True)
class PassageTable:
    """The passages of many pairs as columns: row ``r`` is a passage of pair ``pair[r]`` (its index among the
    pairs aligned), as :class:`Passage` holds it. Rows are grouped by pair, in pair order, each pair's longest
    first (the order of :func:`passages`' lists)."""

    pair: np.ndarray
    left_start: np.ndarray
    left_end: np.ndarray
    right_start: np.ndarray
    right_end: np.ndarray
    words: np.ndarray

    def __len__(self) -> int:
        return int(self.pair.size)

    def counts(self, n_pairs: int) -> np.ndarray:
        """Passages of each of ``n_pairs`` pairs."""
        return np.bincount(self.pair, minlength=n_pairs).astype(np.int64)


def _table(parts: list[tuple[np.ndarray, ...]]) -> PassageTable:
    """Rows of passages ``(pair, left_start, left_end, right_start, right_end, words)`` given in parts, each a
    pair's rows in their order (a pair's rows all in one part), as a :class:`PassageTable` in pair order."""
    if not parts:
        return PassageTable(*(np.empty(0, dtype=np.int64) for _ in range(6)))
    columns = [np.concatenate([part[i] for part in parts]).astype(np.int64, copy=False) for i in range(6)]
    order = np.argsort(columns[0], kind="stable")
    return PassageTable(*(c[order] for c in columns))


def _breaks(text: str, ends: np.ndarray) -> list[int]:
    """The words (indices) that a hyphen at a line break joins to the next, as normalization does."""
    at = line_break_joins(text)
    if not at:
        return []
    k = np.searchsorted(ends, at)
    return [int(i) for i, s in zip(k.tolist(), at) if i + 1 < ends.size and ends[i] == s]


def _ascii_words(texts: list[str], loops: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The words of ASCII texts, all at once: hashes, raw starts and ends (in their text), text of each word
    (``loops``: read by the compiled loop).

    The texts are joined by NUL (not a word character, and no hyphen break spans it) and read in one pass.
    """
    joined = "\0".join(texts)
    raw = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    if loops:
        hashes, starts, ends, _ = _words_loop(raw, _ASCII_WORD, _LOWER)
    else:
        data = _LOWER[raw]
        edges = np.diff(np.concatenate(([0], _ASCII_WORD[raw].astype(np.int8), [0])))
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        hashes = _hash_words(data, starts, ends)
    joins = _breaks(joined, ends)
    if joins:  # hash the joined words (all at once); each takes the end of the next (of the last, in a chain)
        low = joined.lower()
        at = np.asarray(joins)
        last = at + 1
        for i in range(at.size - 2, -1, -1):  # a chain of breaks ("a-\nb-\nc") joins all its words
            if at[i + 1] == at[i] + 1:
                last[i] = last[i + 1]
        hashes = hashes.copy()
        hashes[at] = _hash_strings([low[starts[i] : ends[j]].translate(_BREAK_CHARS)
                                    for i, j in zip(at.tolist(), last.tolist())])
        ends[at] = ends[last]
        drop = at + 1
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


@functools.cache
def _raw_word_table() -> np.ndarray:
    """Whether each code point is a raw word character (one that ``_RAW_WORD_RE`` matches): a letter or digit
    (:func:`neardup.text.normalize.alnum_table`, which reading the words' normalized forms builds anyway), a
    combining mark or an invisible character."""
    table = alnum_table().copy()
    for lo, hi in _COMBINING:
        table[lo : hi + 1] = True
    table[[ord(c) for c in INVISIBLE]] = True
    return table


def _unicode_words_many(texts: list[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`_unicode_words` of each text, read together: the raw words of all texts found by a compiled
    loop over their code points, which also hashes the ASCII ones; each distinct other raw word normalized
    once. A text with a hyphen at a line break is read by :func:`_unicode_words` itself."""
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * len(texts)
    batch = []
    for i, t in enumerate(texts):
        if line_break_joins(t):  # words joined across a line break
            out[i] = _unicode_words(t)
        else:
            batch.append(i)
    if batch:
        joined = "\0".join(texts[i] for i in batch)
        cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        hashes, starts, ends, plain = _words_loop(cps, _raw_word_table(), _LOWER)
        odd = np.flatnonzero(~plain)
        cache: dict[str, list[str]] = {}
        normalized = []
        for lo, hi in zip(starts[odd].tolist(), ends[odd].tolist()):
            raw = joined[lo:hi]
            words = cache.get(raw)
            if words is None:
                words = cache[raw] = normalize_words(raw)
            normalized.append(words)
        counts = np.ones(starts.size, dtype=np.int64)  # words of each raw word (its normalized words for the odd)
        counts[odd] = [len(words) for words in normalized]
        first = np.cumsum(counts) - counts
        hashes, starts, ends = np.repeat(hashes, counts), np.repeat(starts, counts), np.repeat(ends, counts)
        hashes[_expand(first[odd], counts[odd])[0]] = _hash_strings([w for words in normalized for w in words])
        text_starts = np.cumsum([0] + [len(texts[i]) + 1 for i in batch[:-1]])
        bounds = np.searchsorted(starts, text_starts).tolist() + [starts.size]
        for k, i in enumerate(batch):
            lo, hi, base = bounds[k], bounds[k + 1], int(text_starts[k])
            out[i] = (hashes[lo:hi], starts[lo:hi] - base, ends[lo:hi] - base)
    return out  # type: ignore[return-value]


@compiled
def _words_loop(units: np.ndarray, word: np.ndarray, lower: np.ndarray) -> tuple[np.ndarray, ...]:
    """The words of joined texts in one pass over their bytes or code points ``units`` (``word``: whether each
    is a word character): each word's start, end, whether it is all ASCII (``plain``) and, if so, its hash
    (as :func:`_hash_words` computes it, from the lower-cased bytes ``lower[units]``)."""
    n = units.size
    count = 0
    inside = False
    for t in range(n):
        w = word[units[t]]
        if w and not inside:
            count += 1
        inside = w
    hashes = np.zeros(count, dtype=np.uint64)
    starts = np.empty(count, dtype=np.int64)
    ends = np.empty(count, dtype=np.int64)
    plain = np.empty(count, dtype=np.bool_)
    base = np.uint64(_BASE)
    k = 0
    t = 0
    while t < n:
        if not word[units[t]]:
            t += 1
            continue
        s = t
        ascii_only = True
        h = np.uint64(0)
        power = np.uint64(1)
        while t < n and word[units[t]]:
            c = units[t]
            if c < 128:
                h += lower[c] * power
                power *= base
            else:
                ascii_only = False
            t += 1
        if ascii_only:
            h += np.uint64(t - s) * np.uint64(_GRAM[3])
            h ^= h >> np.uint64(31)
            h *= np.uint64(_GRAM[1])
            hashes[k] = h ^ (h >> np.uint64(29))
        starts[k] = s
        ends[k] = t
        plain[k] = ascii_only
        k += 1
    return hashes, starts, ends, plain


def words_of(texts: Sequence[str]) -> Words:
    """Texts (each's first :data:`MAX_CHARS` characters) as normalized words with raw offsets.

    >>> w = words_of(["The  Quick-\\nbrown FOX!", "QUICKBROWN é"])
    >>> w.starts.tolist(), w.ends.tolist(), w.offsets.tolist(), bool(w.hashes[1] == w.hashes[3])
    ([0, 5, 18, 0, 11], [3, 17, 21, 10, 12], [0, 3, 5], True)
    """
    cut = [t[:MAX_CHARS] for t in texts]
    loops = pays(sum(map(len, cut)))
    exact = np.fromiter((t.isascii() for t in cut), dtype=bool, count=len(cut))
    ascii_docs = np.flatnonzero(exact)
    if ascii_docs.size == len(cut):  # all ASCII: read in one pass, already in order
        hashes, starts, ends, doc = _ascii_words(cut, loops)
        return Words(hashes, starts, ends, np.searchsorted(doc, np.arange(len(cut) + 1)).astype(np.int64), exact)
    # the ASCII texts in one pass and the others apart; each text's words then moved to its range
    others = np.flatnonzero(~exact)
    read = _unicode_words_many([cut[d] for d in others.tolist()]) if loops else \
        [_unicode_words(cut[d]) for d in others.tolist()]
    parts = [tuple(np.concatenate([w[i] for w in read]) for i in range(3))]
    runs, run_counts = [others], [np.fromiter((w[0].size for w in read), dtype=np.int64, count=len(read))]
    if ascii_docs.size:
        hashes, starts, ends, doc = _ascii_words([cut[i] for i in ascii_docs.tolist()], loops)
        parts.append((hashes, starts, ends))
        runs.append(ascii_docs)
        run_counts.append(np.bincount(doc, minlength=ascii_docs.size))
    texts_of_runs, counts = np.concatenate(runs), np.concatenate(run_counts)  # each text's words: one run
    offsets = np.zeros(len(cut) + 1, dtype=np.int64)
    offsets[texts_of_runs + 1] = counts
    np.cumsum(offsets, out=offsets)
    at = _expand(offsets[texts_of_runs], counts)[0]
    out = [np.empty(at.size, dtype=dtype) for dtype in (np.uint64, np.int64, np.int64)]
    for i, column in enumerate(out):
        column[at] = np.concatenate([part[i] for part in parts])
    return Words(*out, offsets, exact)


def _kgrams(words: Words, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Hashes of every text's word ``k``-grams (texts with fewer than ``k`` words have none), and where each
    text's grams start (CSR offsets)."""
    h, offsets = words.hashes, words.offsets
    counts = np.maximum(np.diff(offsets) - k + 1, 0)
    goff = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    first = ranges(offsets[:-1], counts)  # the first word of each gram
    with np.errstate(over="ignore"):
        acc = np.full(first.size, k, dtype=np.uint64)
        for i in range(k):
            acc += h[first + i] * np.uint64(_GRAM[i % len(_GRAM)] + 2 * (i // len(_GRAM)))
    return acc, goff


def _expand(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges ``[starts[p], starts[p] + counts[p])``: every position, and the range it is in."""
    return ranges(starts, counts), np.repeat(np.arange(counts.size, dtype=np.int64), counts)


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
    ``texts``, if already read. All pairs are aligned at once (:func:`passage_table`, as lists).

    >>> t = ["Stocks rose in Tokyo on Monday. Oil fell.", "OIL FELL sharply; stocks rose in Tokyo on Monday!"]
    >>> [(t[0][p.left_start:p.left_end], t[1][p.right_start:p.right_end]) for p in passages(t, [0], [1])[0]]
    [('Stocks rose in Tokyo on Monday', 'stocks rose in Tokyo on Monday')]
    """
    table = passage_table(texts, a, b, words, max_passages, min_words)
    out: list[list[Passage]] = [[] for _ in range(np.asarray(a).size)]
    for p, *row in zip(*(c.tolist() for c in (table.pair, table.left_start, table.left_end, table.right_start,
                                              table.right_end, table.words))):
        out[p].append(Passage(*row))
    return out


def passage_table(texts: Sequence[str], a: np.ndarray, b: np.ndarray, words: Words | None = None,
                  max_passages: int = MAX_PASSAGES, min_words: int = MIN_WORDS) -> PassageTable:
    """:func:`passages` of the pairs ``(texts[a[p]], texts[b[p]])`` as columns, built from the compiled loops'
    arrays without a Python object a passage (where the loops run and both texts are exact)."""
    w = words if words is not None else words_of(texts)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    parts: list[tuple[np.ndarray, ...]] = []
    if max_passages <= 0 or a.size == 0:
        return _table(parts)
    counts = w.counts
    k_of = np.minimum(np.minimum(counts[a], counts[b]), min_words)  # shorter texts: runs as long as they are
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    loops = pays(int(lengths[a].sum() + lengths[b].sum()))  # the characters of the pairs' texts
    for k in np.unique(k_of[k_of > 0]).tolist():
        group = np.flatnonzero(k_of == k)
        if loops:
            grams, goff = _kgrams(w, int(k))
            pair, ia, jb, length = _runs_loop(grams, goff, a[group], b[group], int(k), _MAX_RUNS_TRIED, _MAX_REPEATS)
        else:
            pair, ia, jb, length = _runs(w, a[group], b[group], int(k))
        starts = np.flatnonzero(np.concatenate(([True], np.diff(pair) != 0))) if pair.size else pair
        bounds = np.append(starts, pair.size)
        segments = np.arange(starts.size)
        if loops:  # chosen by the compiled loop; pairs where a passage fails the check by normalization below
            taken = _choose_loop(bounds, ia, jb, length, max_passages)
            exact = (w.exact[a] & w.exact[b])[group]
            rejected = _taken_rows(parts, texts, w, a[group], b[group], group, pair[taken], ia[taken], jb[taken],
                                   length[taken], exact[pair[taken]])
            segments = np.searchsorted(pair[starts], rejected)
        for seg in segments.tolist():
            lo, hi = int(bounds[seg]), int(bounds[seg + 1])
            p = int(group[pair[lo]])
            found = _choose(texts, w, int(a[p]), int(b[p]), ia[lo:hi], jb[lo:hi], length[lo:hi], max_passages)
            if found:
                parts.append((np.full(len(found), p), *np.array([[x.left_start, x.left_end, x.right_start,
                                                                    x.right_end, x.words] for x in found]).T))
    return _table(parts)


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


def _taken_rows(parts: list[tuple[np.ndarray, ...]], texts: Sequence[str], w: Words, a: np.ndarray, b: np.ndarray,
                group: np.ndarray, pair: np.ndarray, ia: np.ndarray, jb: np.ndarray, length: np.ndarray,
                exact: np.ndarray) -> np.ndarray:
    """Append the runs ``(pair, ia, jb, length)`` that :func:`_choose_loop` took (pairs ``(a, b)``, in the
    order to keep) to ``parts`` as passage rows (pair ``group[pair]``), at their words' raw offsets. Runs of
    texts not both exact are checked by normalization first; where one fails, :func:`_choose` would have
    chosen otherwise, so nothing is added for its pair, and those pairs are returned (sorted). Where all pass,
    :func:`_choose` takes the same."""
    oa, ob = w.offsets[a[pair]] + ia, w.offsets[b[pair]] + jb
    ls, le, rs, re_ = w.starts[oa], w.ends[oa + length - 1], w.starts[ob], w.ends[ob + length - 1]
    check = np.flatnonzero(~exact)
    rejected = np.unique(np.array([q for q, x, y, u, v in zip(pair[check].tolist(), ls[check].tolist(),
                                                              le[check].tolist(), rs[check].tolist(),
                                                              re_[check].tolist())
                                   if normalize(texts[a[q]][x:y]) != normalize(texts[b[q]][u:v])], dtype=np.int64))
    keep = ~np.isin(pair, rejected) if rejected.size else slice(None)
    parts.append((group[pair[keep]], ls[keep], le[keep], rs[keep], re_[keep], length[keep]))
    return rejected


@compiled
def _runs_loop(grams: np.ndarray, goff: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, max_runs: int,
               max_repeats: int) -> tuple[np.ndarray, ...]:
    """:func:`_runs` pair by pair, each pair's first ``max_runs`` runs only (all :func:`passages` tries):
    a gram of ``a`` meets the first ``max_repeats`` places of its hash in ``b`` (a hash table of ``b``'s grams,
    each distinct gram's places chained in ascending order: half the time of a stable sort of them and two
    binary searches a gram of ``a``), the meetings sorted by diagonal and position become runs, and the runs
    are ordered longest first, then by their start in ``a``, then by diagonal (the NumPy code's order)."""
    cap = 1024
    out = np.empty((cap, 4), dtype=np.int64)
    w = 0
    run_keys = np.empty(cap, dtype=np.int64)  # as many as meetings at most
    meet_key = np.empty(cap, dtype=np.int64)
    slot_gram = np.empty(cap, dtype=np.uint64)
    slot_head = np.empty(cap, dtype=np.int64)
    chain = np.empty(cap, dtype=np.int64)
    golden = np.uint64(0x9E3779B97F4A7C15)
    for p in range(a.size):
        a0, b0 = goff[a[p]], goff[b[p]]
        na, nb = goff[a[p] + 1] - a0, goff[b[p] + 1] - b0
        if na == 0 or nb == 0:
            continue
        # b's grams in a table of chains: each distinct gram's places in b, ascending
        bits = 1
        while (1 << bits) < 2 * nb:
            bits += 1
        size = 1 << bits
        if size > slot_gram.size:
            slot_gram = np.empty(2 * size, dtype=np.uint64)
            slot_head = np.empty(2 * size, dtype=np.int64)
        if nb > chain.size:
            chain = np.empty(2 * nb, dtype=np.int64)
        slot_head[:size] = -1
        shift = np.uint64(64 - bits)
        mask = size - 1
        for j in range(nb - 1, -1, -1):  # from the last place: each chain is then ascending
            g = grams[b0 + j]
            s = np.int64((g * golden) >> shift)
            while slot_head[s] >= 0 and slot_gram[s] != g:
                s = (s + 1) & mask
            if slot_head[s] < 0:
                slot_gram[s] = g
            chain[j] = slot_head[s]
            slot_head[s] = j
        m = 0
        for i in range(na):
            g = grams[a0 + i]
            s = np.int64((g * golden) >> shift)
            while slot_head[s] >= 0 and slot_gram[s] != g:
                s = (s + 1) & mask
            j = slot_head[s]
            taken = 0
            while j >= 0 and taken < max_repeats:
                if m == meet_key.size:
                    grown = np.empty(2 * meet_key.size, dtype=np.int64)
                    grown[:m] = meet_key[:m]
                    meet_key = grown
                    run_keys = np.empty(grown.size, dtype=np.int64)
                meet_key[m] = (i - j + nb) * na + i  # by diagonal (i - j + nb, from 1 to na + nb - 1), then position
                m += 1
                taken += 1
                j = chain[j]
        if m == 0:
            continue
        keys = np.sort(meet_key[:m])
        # runs: consecutive positions on one diagonal; keyed longest first, then start, then diagonal
        longest = na + k - 1
        span = na + nb
        r = 0
        start = 0
        for t in range(1, m + 1):
            if t == m or keys[t] != keys[t - 1] + 1 or keys[t] // na != keys[t - 1] // na:
                i0 = keys[start] % na
                diagonal = keys[start] // na
                length = t - start + k - 1
                run_keys[r] = ((longest - length) * na + i0) * span + diagonal
                r += 1
                start = t
        runs = np.sort(run_keys[:r])
        take = min(r, max_runs)
        if w + take > out.shape[0]:
            grown2 = np.empty((max(2 * out.shape[0], w + take), 4), dtype=np.int64)
            grown2[:w] = out[:w]
            out = grown2
        for t in range(take):
            key = runs[t]
            diagonal = key % span
            rest = key // span
            i0 = rest % na
            out[w, 0] = p
            out[w, 1] = i0
            out[w, 2] = i0 - (diagonal - nb)
            out[w, 3] = longest - rest // na
            w += 1
    return out[:w, 0].copy(), out[:w, 1].copy(), out[:w, 2].copy(), out[:w, 3].copy()


@compiled
def _choose_loop(bounds: np.ndarray, ia: np.ndarray, jb: np.ndarray, length: np.ndarray,
                 max_passages: int) -> np.ndarray:
    """:func:`_choose` without the check by normalization, for every pair's runs (``bounds``: where each
    pair's start): which runs are taken."""
    taken = np.zeros(ia.size, dtype=np.bool_)
    spans = np.empty((max(max_passages, 1), 4), dtype=np.int64)
    for s in range(bounds.size - 1):
        n_taken = 0
        for r in range(bounds[s], bounds[s + 1]):
            if n_taken >= max_passages:
                break
            i, j, n = ia[r], jb[r], length[r]
            free = True
            for q in range(n_taken):
                if (i < spans[q, 1] and spans[q, 0] < i + n) or (j < spans[q, 3] and spans[q, 2] < j + n):
                    free = False
                    break
            if free:
                spans[n_taken, 0], spans[n_taken, 1], spans[n_taken, 2], spans[n_taken, 3] = i, i + n, j, j + n
                n_taken += 1
                taken[r] = True
    return taken


def shared_passages(a: str, b: str, max_passages: int = MAX_PASSAGES, min_words: int = MIN_WORDS) -> list[Passage]:
    """The longest passages two texts share (:func:`passages` of one pair).

    >>> a, b = "Oil fell 3% in London.", "In London, oil fell 3%!"
    >>> [(a[p.left_start:p.left_end], p.words) for p in shared_passages(a, b)]
    [('Oil fell 3', 3)]
    """
    return passages([a, b], [0], [1], max_passages=max_passages, min_words=min_words)[0]


__all__ = ["MAX_PASSAGES", "MIN_WORDS", "Passage", "PassageTable", "Words", "passage_table", "passages",
           "shared_passages", "words_of"]
