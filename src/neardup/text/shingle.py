"""Tokenize normalized text and turn it into sets of 64-bit shingle hashes.

Owns tokens, word/character n-grams and their hashing; must not normalize text or compare documents.

Each token is hashed once with xxhash (XXH3, 64 bits, cached per token; on large batches of normalized words,
from their code points by the compiled XXH3 of :mod:`neardup.text.xxh3`, the same hashes), each character by
mixing its code point; an n-gram's hash combines its units' hashes position by position with a fixed 64-bit
mixing (vectorised in NumPy over a whole batch), so no n-gram string is ever built.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain

import numpy as np
import xxhash

from neardup.arrays import offsets as offsets_of, ranges
from neardup.config import ShingleConfig
from neardup.jit import compiled, pays

_TOKEN_RE = re.compile(r"\w+")
_EMPTY = np.empty(0, dtype=np.uint64)
# About 133 bytes an entry: 2M tokens (which the 10M-story scale corpus fills: its noisy copies make new
# ones) held 265 MB in every worker; the frequent tokens that make the cache pay are among the first seen.
_TOKEN_CACHE_MAX = 1 << 19


class _TokenHashes(dict):  # type: ignore[type-arg]
    """token -> XXH3-64 hash; a miss computes it (kept while the cache is below its bound)."""

    def __missing__(self, token: str) -> int:
        h = xxhash.xxh3_64_intdigest(token.encode("utf-8", "surrogatepass"))
        if len(self) < _TOKEN_CACHE_MAX:
            self[token] = h
        return h


_TOKEN_CACHE: dict[str, int] = _TokenHashes()  # shared by all calls
# Odd 64-bit constants: one multiplier per n-gram position (from the SplitMix64/xxhash families).
_POSITION_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xC2B2AE3D27D4EB4F,
     0x165667B19E3779F9, 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53],
    dtype=np.uint64,
)


def tokenize(text: str) -> list[str]:
    """Split normalized text into word tokens.

    >>> tokenize("the cat, sat")
    ['the', 'cat', 'sat']
    """
    return _TOKEN_RE.findall(text)


def token_hashes(tokens: Sequence[str]) -> np.ndarray:
    """64-bit XXH3 hash of each token, as a uint64 array.

    >>> token_hashes(["a", "a"]).tolist()[0] == token_hashes(["a"]).tolist()[0]
    True
    """
    return np.fromiter(map(_TOKEN_CACHE.__getitem__, tokens), dtype=np.uint64, count=len(tokens))


def _multiplier(position: int) -> np.uint64:
    if position < len(_POSITION_MULTIPLIERS):
        return _POSITION_MULTIPLIERS[position]
    return np.uint64(xxhash.xxh3_64_intdigest(position.to_bytes(8, "little")) | 1)


def _mix(h: np.ndarray, inplace: bool = False) -> np.ndarray:
    """SplitMix64 finaliser: spreads every input bit over the output (``inplace``: overwrite ``h``,
    with one temporary instead of five: large temporaries cost page faults)."""
    out = h if inplace else h.copy()
    tmp = np.empty_like(out)
    with np.errstate(over="ignore"):
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
            np.right_shift(out, np.uint64(shift), out=tmp)
            np.bitwise_xor(out, tmp, out=out)
            if mult is not None:
                np.multiply(out, np.uint64(mult), out=out)
    return out


def word_shingles(tokens: Sequence[str], n: int) -> np.ndarray:
    """Sorted unique 64-bit hashes of the word n-grams of ``tokens`` (in order of position).

    A text shorter than ``n`` tokens gives one shingle of all its tokens, so short texts still match.

    >>> len(word_shingles("a b c d".split(), 3))
    2
    """
    return np.unique(word_shingle_sequence(tokens, n))


def word_shingle_sequence(tokens: Sequence[str], n: int) -> np.ndarray:
    """64-bit hashes of the word n-grams of ``tokens`` in text order (repeats kept).

    >>> word_shingle_sequence("a b a b".split(), 2).tolist()[0] == word_shingle_sequence(["a", "b"], 2).tolist()[0]
    True
    """
    if not tokens:
        return _EMPTY
    th = token_hashes(tokens)
    m = max(len(th) - n + 1, 1)
    width = min(n, len(th))
    with np.errstate(over="ignore"):
        acc = th[:m] * _multiplier(0)
        for i in range(1, width):
            acc = acc + th[i : i + m] * _multiplier(i)
        return _mix(acc + np.uint64(width))


def char_shingles(text: str, n: int) -> np.ndarray:
    """Sorted unique 64-bit hashes of the character n-grams of ``text`` (those of :func:`shingle_many`).

    >>> len(char_shingles("abcab", 2))
    3
    """
    return _char_shingle_batch([text], n).values


def char_shingle_sequence(text: str, n: int) -> np.ndarray:
    """64-bit hashes of the character n-grams of ``text`` in text order (repeats kept): the values of
    :func:`char_shingles`, positioned (one gram of all characters for a text shorter than ``n``).

    >>> seq = char_shingle_sequence("abcab", 2)
    >>> seq.size, sorted(set(seq.tolist())) == char_shingles("abcab", 2).tolist()
    (4, True)
    """
    if not text:
        return _EMPTY
    grams, _ = _ngram_hashes(char_unit_hashes(text), np.array([len(text)], dtype=np.int64), n)
    return grams


def shingle(text: str, config: ShingleConfig | None = None) -> np.ndarray:
    """Sorted unique shingle hashes of one normalized text, as configured.

    >>> shingle("one two three four", ShingleConfig(n=3)).shape
    (2,)
    """
    cfg = (config or ShingleConfig()).resolved()
    return shingle_many([text], cfg).values


class ShingleSets:
    """The shingle sets of many documents in one flat array (CSR layout: values + offsets).

    ``sets[i]`` is document i's sorted unique uint64 hashes; 8 bytes per shingle, no Python objects.

    >>> sets = shingle_many(["a b c", "", "a b c d"], ShingleConfig(n=3))
    >>> sets.sizes.tolist()
    [1, 0, 2]
    """

    __slots__ = ("values", "offsets")

    def __init__(self, values: np.ndarray, offsets: np.ndarray) -> None:
        self.values = values
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        return self.values[self.offsets[i] : self.offsets[i + 1]]

    @property
    def sizes(self) -> np.ndarray:
        """Number of distinct shingles per document."""
        return np.diff(self.offsets)

    @property
    def doc_index(self) -> np.ndarray:
        """For each value, the index of the document it belongs to."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.sizes)

    def positions(self, docs: np.ndarray, sizes: np.ndarray | None = None) -> np.ndarray:
        """Where the values of documents ``docs`` lie in :attr:`values`, document after document (``sizes``:
        their sizes, where the caller has them).

        >>> sets = shingle_many(["a b c", "", "a b c d"], ShingleConfig(n=3))
        >>> sets.positions(np.array([2, 0])).tolist()
        [1, 2, 0]
        """
        docs = np.asarray(docs, dtype=np.int64)
        starts = self.offsets[docs]
        return ranges(starts, self.offsets[docs + 1] - starts if sizes is None else sizes)

    def take(self, rows: np.ndarray) -> ShingleSets:
        """The sets of documents ``rows``, in that order.

        >>> sets = shingle_many(["a b c", "", "a b c d"], ShingleConfig(n=3))
        >>> sets.take(np.array([2, 0])).sizes.tolist()
        [2, 1]
        """
        rows = np.asarray(rows, dtype=np.int64)
        sizes = self.offsets[rows + 1] - self.offsets[rows]
        return ShingleSets(np.asarray(self.values)[self.positions(rows, sizes)], offsets_of(sizes))

    @classmethod
    def concat(cls, parts: Sequence[ShingleSets]) -> ShingleSets:
        """Join the sets of consecutive batches into one."""
        if not parts:
            return cls(_EMPTY.copy(), np.zeros(1, dtype=np.int64))
        return cls(np.concatenate([p.values for p in parts]), concat_offsets([p.offsets for p in parts]))


def concat_offsets(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The offsets (``n + 1``, starting at 0) of consecutive batches' rows as one: each batch's shifted by
    the rows before it (shingle sets' values, embeddings' chunks).

    >>> concat_offsets([np.array([0, 2, 3]), np.array([0, 0, 4])]).tolist()
    [0, 2, 3, 3, 7]
    """
    out, base = [np.zeros(1, dtype=np.int64)], 0
    for offsets in parts:
        out.append(np.asarray(offsets[1:], dtype=np.int64) + base)
        base += int(offsets[-1])
    return np.concatenate(out)


def _group_key(groups: np.ndarray, values: np.ndarray, n_groups: int) -> tuple[np.ndarray, int]:
    """The 64-bit sort key of (group, value): the group in the top ``bits``, the value's top bits below
    (two different values of one group may share it); and ``bits``."""
    bits = max(1, int(n_groups).bit_length())
    key = groups.astype(np.uint64) << np.uint64(64 - bits)
    key |= values.astype(np.uint64, copy=False) >> np.uint64(bits)
    return key, bits


def sort_by_group(groups: np.ndarray, values: np.ndarray, n_groups: int, runs: bool = False) -> np.ndarray:
    """Order that sorts by (group, value): one argsort of a 64-bit key (group in the high bits,
    the value's top bits below), falling back to an exact two-key sort in the rare case that two
    different values of one group share the key.

    ``runs=True`` says the input is already sorted by group or made of a few sorted runs (e.g. two
    sorted lists concatenated): a stable sort (timsort, which exploits runs) is then used, 2-8x faster.

    >>> sort_by_group(np.array([1, 0, 1]), np.array([5, 9, 2], dtype=np.uint64), 2).tolist()
    [1, 2, 0]
    """
    key, _ = _group_key(groups, values, n_groups)
    order = np.argsort(key, kind="stable" if runs else "quicksort")
    k, v = key[order], values[order]
    if ((k[1:] == k[:-1]) & (v[1:] != v[:-1])).any():
        return np.lexsort((values, groups))
    return order


def _unique_within(values: np.ndarray, doc: np.ndarray, n_docs: int) -> ShingleSets:
    """Sort each document's hashes and drop repeats, for all documents at once.

    Fast path: one argsort of a 64-bit key (document index in the high bits, the hash's top bits
    below). If two different hashes of one document share the key (about 1e-8 per document),
    an exact two-key sort is used instead, so the result is always exact.
    """
    # the hashes come document by document: the key is n_docs sorted runs, which a stable sort merges
    # (2-3x faster than quicksort here, measured on word and character shingles)
    key, bits = _group_key(doc, values, n_docs)
    order = np.argsort(key, kind="stable")
    key, values = key[order], values[order]
    del order
    same = key[1:] == key[:-1]
    if (same & (values[1:] != values[:-1])).any():  # two values of one document share a key: exact sort
        order = np.lexsort((values, key >> np.uint64(64 - bits)))
        key, values = key[order], values[order]
        same = (key[1:] >> np.uint64(64 - bits) == key[:-1] >> np.uint64(64 - bits)) & (values[1:] == values[:-1])
    keep = np.ones(values.size, dtype=bool)
    keep[1:] = ~same  # a repeat: same document, same value
    values = values[keep]
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount((key[keep] >> np.uint64(64 - bits)).view(np.int64), minlength=n_docs), out=offsets[1:])
    return ShingleSets(values, offsets)


def _word_shingle_batch(texts: Sequence[str], n: int, split: bool = False, sample: int = 1) -> ShingleSets:
    tokenize_one = str.split if split else _TOKEN_RE.findall
    return shingle_words([tokenize_one(t) for t in texts], n, sample)


def shingle_words(docs: Sequence[Sequence[str]], n: int, sample: int = 1) -> ShingleSets:
    """Word n-gram shingle sets of already tokenized documents (all documents at once, vectorised).

    A document shorter than ``n`` tokens gives one shingle of all its tokens, as :func:`word_shingles`.

    >>> shingle_words([["a", "b", "c", "d"], [], ["a", "b"]], 3).sizes.tolist()
    [2, 0, 1]
    """
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    total = int(lengths.sum())
    th = np.fromiter(map(_TOKEN_CACHE.__getitem__, chain.from_iterable(docs)), dtype=np.uint64, count=total)
    return _ngram_sets(th, lengths, n, sample)


def _ngram_hashes(units: np.ndarray, lengths: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The n-gram hashes of documents given as one flat stream of 64-bit unit hashes (tokens or
    characters), ``lengths`` units each: ``(hash, document)`` of every n-gram inside one document, and
    one gram of all its units for a document shorter than ``n``. Position-weighted sums of the unit
    hashes, mixed: no n-gram string is ever built."""
    total = int(units.size)
    starts = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    with np.errstate(over="ignore"):
        # Every full n-gram of the flat stream (some straddle two documents; dropped below).
        m = max(total - n + 1, 0)
        acc = units[:m] * _multiplier(0)
        tmp = np.empty_like(acc)
        for i in range(1, n):
            acc += np.multiply(units[i : i + m], _multiplier(i), out=tmp)
        del tmp
        acc += np.uint64(n)
        full = _mix(acc, inplace=True)
        # Keep those that start and end inside one document: positions starts[d] .. starts[d+1]-n.
        per_doc = np.maximum(lengths - n + 1, 0)
        first = ranges(starts[:-1], per_doc)
        grams = [full[first]]
        docs_of = [np.repeat(np.arange(lengths.size, dtype=np.int64), per_doc)]
        # Documents with 1 .. n-1 units: one gram of all their units.
        short = np.flatnonzero((lengths > 0) & (lengths < n))
        if short.size:
            width = lengths[short]
            acc = np.zeros(short.size, dtype=np.uint64)
            for i in range(n - 1):
                idx = np.minimum(starts[short] + i, total - 1)
                acc += np.where(i < width, units[idx] * _multiplier(i), np.uint64(0))
            grams.append(_mix(acc + width.astype(np.uint64)))
            docs_of.append(short)
    return np.concatenate(grams), np.concatenate(docs_of)


#: A character's unit hash is its code point times :data:`_CHAR_MULT` plus :data:`_CHAR_ADD`, mixed.
_CHAR_MULT, _CHAR_ADD = 0x9E3779B97F4A7C15, 0x632BE59BD9B4E019


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` as uint32 (lone surrogates kept).

    >>> code_points("a中").tolist()
    [97, 20013]
    """
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def char_unit_hashes(text: str) -> np.ndarray:
    """A 64-bit hash of each character of ``text`` (its code point, mixed), as uint64.

    >>> h = char_unit_hashes("aba"); bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    return _code_point_hashes(code_points(text))


def _code_point_hashes(cps: np.ndarray) -> np.ndarray:
    """:func:`char_unit_hashes` of code points (NumPy; the compiled n-gram loop computes the same)."""
    with np.errstate(over="ignore"):
        return _mix(cps.astype(np.uint64) * np.uint64(_CHAR_MULT) + np.uint64(_CHAR_ADD))


def _char_shingle_batch(texts: Sequence[str], n: int, sample: int = 1) -> ShingleSets:
    """Character n-gram sets of a batch."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return _ngram_sets(code_points("".join(texts)), lengths, n, sample, chars=True)


def char_shingle_sets(units: np.ndarray, lengths: np.ndarray, config: ShingleConfig) -> ShingleSets:
    """Character n-gram sets of normalized texts given as one flat array of code points, ``lengths`` each
    (:func:`neardup.text.normalize.normalized_code_points`): the same as :func:`shingle_many` of the texts. On
    large batches the compiled loop hashes the code points itself (no batch-long arrays of unit hashes and
    their temporaries).

    >>> char_shingle_sets(code_points("abcdabc"), np.array([4, 3]), ShingleConfig(n=3, char=True)).sizes.tolist()
    [2, 1]
    """
    cfg = config.resolved()
    assert cfg.n is not None
    return _ngram_sets(units, lengths, cfg.n, cfg.sample, chars=True)


def word_shingle_sets(units: np.ndarray, lengths: np.ndarray, n: int, sample: int = 1) -> ShingleSets:
    """Word n-gram sets of normalized texts given as one flat array of code points, ``lengths`` each (words and
    single spaces: :func:`neardup.text.normalize.normalized_code_points`): the same as :func:`shingle_words`
    of their words. The words are hashed from the code points by a compiled loop
    (:func:`neardup.text.xxh3.word_hashes`), with no Python string made of any of them.

    >>> word_shingle_sets(code_points("a b c da b"), np.array([7, 3]), 2).sizes.tolist()
    [3, 1]
    """
    from neardup.text.xxh3 import word_hashes

    return _ngram_sets(*word_hashes(units, lengths), n, sample)


def _ngram_sets(units: np.ndarray, lengths: np.ndarray, n: int, sample: int = 1, chars: bool = False) -> ShingleSets:
    """Each document's sorted unique n-gram hashes (those of :func:`_ngram_hashes`, kept by ``sample``)
    from the flat stream of its ``lengths`` unit hashes (``chars``: code points, hashed as
    :func:`char_unit_hashes` hashes them): a compiled loop on large batches, document by document; NumPy
    over the whole batch on small ones (the same values to the bit)."""
    if not pays(int(units.size)):
        if chars:
            units = _code_point_hashes(units)
        return _unique_within(*_sampled(*_ngram_hashes(units, lengths, n), sample), lengths.size)
    multipliers = np.array([_multiplier(i) for i in range(n)], dtype=np.uint64)
    cut = np.uint64((1 << 64) // sample if sample > 1 else 0)
    lengths = lengths.astype(np.int64, copy=False)
    out = np.empty(int(np.where(lengths >= n, lengths - (n - 1), lengths > 0).sum()), dtype=np.uint64)
    used, offsets = _ngram_sets_loop(units, lengths, multipliers, n, cut, sample > 1, chars, out)
    # the buffer is kept (NumPy's, in huge pages: no copy) unless a quarter or more of it went unused
    return ShingleSets(out[:used] if 4 * used >= 3 * out.size else out[:used].copy(), offsets)


@compiled
def _ngram_sets_loop(units: np.ndarray, lengths: np.ndarray, multipliers: np.ndarray, n: int, cut: np.uint64,
                     sampled: bool, chars: bool, out: np.ndarray) -> tuple[int, np.ndarray]:
    """:func:`_ngram_sets`' loop: per document, its unit hashes (``chars``: each code point hashed as
    :func:`char_unit_hashes` does), then each gram's position-weighted sum of unit hashes plus its width,
    mixed (SplitMix64, as :func:`_mix`), kept when under ``cut`` (if ``sampled``): each step one loop over the
    document's grams, which the compiler vectorizes (a loop per gram took 1.4x as long); then the document's
    grams sorted (placed in buckets by their leading bits within the document's range, then an insertion
    sort, which has almost nothing left to move: 6x faster than a quicksort on hashes) and repeats dropped;
    written to the start of ``out`` (room for every gram); returns the values written and each document's
    offsets there."""
    n_docs = lengths.size
    longest = 1
    longest_doc = 1
    for d in range(n_docs):
        grams = lengths[d] - n + 1 if lengths[d] >= n else (1 if lengths[d] > 0 else 0)
        longest = max(longest, grams)
        longest_doc = max(longest_doc, lengths[d])
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    spare = np.empty(longest, dtype=np.uint64)
    doc_units = np.empty(longest_doc, dtype=np.uint64)
    acc_buf = np.empty(longest, dtype=np.uint64)
    n_buckets = 1
    while n_buckets < longest:
        n_buckets *= 2
    counts = np.zeros(n_buckets + 1, dtype=np.int64)
    start = 0
    w = 0
    for d in range(n_docs):
        length = lengths[d]
        first = w
        width = n if length >= n else length
        lo = np.uint64(0xFFFFFFFFFFFFFFFF)
        hi = np.uint64(0)
        for j in range(length):
            x = np.uint64(units[start + j])
            if chars:
                x = x * np.uint64(_CHAR_MULT) + np.uint64(_CHAR_ADD)
                x ^= x >> np.uint64(30)
                x *= np.uint64(0xBF58476D1CE4E5B9)
                x ^= x >> np.uint64(27)
                x *= np.uint64(0x94D049BB133111EB)
                x ^= x >> np.uint64(31)
            doc_units[j] = x
        grams = max(length - n + 1, 1 if length > 0 else 0)
        for p in range(grams):
            acc_buf[p] = np.uint64(width) + doc_units[p] * multipliers[0]
        for i in range(1, width):
            mi = multipliers[i]
            for p in range(grams):
                acc_buf[p] += doc_units[p + i] * mi
        for p in range(grams):
            acc = acc_buf[p]
            acc ^= acc >> np.uint64(30)
            acc *= np.uint64(0xBF58476D1CE4E5B9)
            acc ^= acc >> np.uint64(27)
            acc *= np.uint64(0x94D049BB133111EB)
            acc ^= acc >> np.uint64(31)
            acc_buf[p] = acc
        if sampled:
            for p in range(grams):
                acc = acc_buf[p]
                if acc < cut:
                    out[w] = acc
                    w += 1
                    lo = min(lo, acc)
                    hi = max(hi, acc)
        else:
            for p in range(grams):
                acc = acc_buf[p]
                out[w + p] = acc
                lo = min(lo, acc)
                hi = max(hi, acc)
            w += grams
        m = w - first
        if m > 1:
            # buckets: (value - lo) >> shift, about one value per bucket
            bits = 0
            while (1 << bits) < m:
                bits += 1
            span_bits = 0
            span = hi - lo
            while span_bits < 64 and (span >> np.uint64(span_bits)) > np.uint64(0):
                span_bits += 1
            shift = np.uint64(max(span_bits - bits, 0))
            counts[: (1 << bits) + 1] = 0
            for j in range(first, w):
                counts[((out[j] - lo) >> shift) + np.uint64(1)] += 1
            for k in range(1 << bits):
                counts[k + 1] += counts[k]
            for j in range(first, w):
                k = (out[j] - lo) >> shift
                spare[counts[k]] = out[j]
                counts[k] += 1
            for j in range(1, m):
                x = spare[j]
                i = j - 1
                while i >= 0 and spare[i] > x:
                    spare[i + 1] = spare[i]
                    i -= 1
                spare[i + 1] = x
            out[first] = spare[0]
            k = first + 1
            for j in range(1, m):
                if spare[j] != out[k - 1]:
                    out[k] = spare[j]
                    k += 1
            w = k
        offsets[d + 1] = w
        start += length
    return w, offsets


def _sampled(grams: np.ndarray, docs_of: np.ndarray, sample: int) -> tuple[np.ndarray, np.ndarray]:
    """The grams whose hash lies in the lowest ``1/sample`` of the 64-bit range (all when ``sample`` is 1)."""
    if sample <= 1:
        return grams, docs_of
    keep = grams < np.uint64((1 << 64) // sample)
    return grams[keep], docs_of[keep]


def shingle_many(texts: Sequence[str], config: ShingleConfig | None = None, batch_size: int = 2048,
                 split: bool = False) -> ShingleSets:
    """Shingle every normalized text into one :class:`ShingleSets` (vectorised per batch).

    ``split=True`` tokenizes with ``str.split`` (exact when the text holds only word characters
    and spaces, see :func:`neardup.text.normalize.only_words_and_spaces`), which is faster.

    >>> shingle_many(["a b c", ""]).sizes.tolist()
    [1, 0]
    """
    cfg = (config or ShingleConfig()).resolved()
    assert cfg.n is not None
    if cfg.char:
        parts = [_char_shingle_batch(texts[i : i + batch_size], cfg.n, cfg.sample)
                 for i in range(0, len(texts), batch_size)]
    else:
        parts = [_word_shingle_batch(texts[i : i + batch_size], cfg.n, split, cfg.sample)
                 for i in range(0, len(texts), batch_size)]
    return ShingleSets.concat(parts)
