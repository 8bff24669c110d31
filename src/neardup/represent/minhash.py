"""MinHash signatures of shingle sets, computed for many documents at once: rensa's sketch (version 2 of
its ``RMinHash``), by rensa's Rust kernel or by a compiled loop that reproduces it bit for bit.

Owns the hash family and signatures; must not decide which pairs are candidates (see candidates/).

The shingles are already 64-bit hashes (see :mod:`neardup.text.shingle`); ``rensa`` (a Rust MinHash
library) turns the flat CSR buffer of them into one ``(n, num_perm)`` uint32 matrix in a single call,
with ``num_perm`` seeded permutations, so signatures are reproducible across runs and machines for a
given rensa algorithm version (:data:`ALGORITHM`; recorded with every run's parameters). An empty set
gets the all-ones signature and is flagged by :func:`empty_rows`.

rensa hands its matrix out only as Python lists of ints, and turning them into an array cost more than the
sketch itself (10 against 5-6 µs a document of 600 shingles). Where compiled loops pay
(:func:`neardup.jit.pays`), :func:`_sketch_loop` computes the same sketch straight into the array: each
coordinate's minimum over three rounds of bucketed ranks, and, for a coordinate that no round reached, over
the fallback ranks of rensa's seeded affine permutations (:func:`permutations`). It is used only for the
algorithm version it reproduces (:data:`LOOP_ALGORITHM_VERSION`); the tests compare the two on random sets.
"""

from __future__ import annotations

import functools
import gc
import itertools

import numpy as np
from rensa import RMinHash, RMinHashDigestMatrix

from neardup.jit import compiled, pays
from neardup.text.shingle import ShingleSets

EMPTY_VALUE = np.uint32(0xFFFFFFFF)
ALGORITHM = f"rensa-rminhash-v{RMinHash.ALGORITHM_VERSION}"
#: The rensa algorithm version :func:`_sketch_loop` reproduces (rensa's own kernel runs for any other).
LOOP_ALGORITHM_VERSION = 2

_MASK64 = (1 << 64) - 1
# rensa's domain constants: the bucket rounds' seeds, the rounds' stride, the fallback's seed.
_BUCKET_DOMAIN = 0x6A09_E667_F3BC_C909
_ROUND_DOMAIN = 0x3C6E_F372_FE94_F82B
_FALLBACK_DOMAIN = 0xBB67_AE85_84CA_A73B
_ROUNDS = 3


def signatures(sets: ShingleSets, num_perm: int = 128, seed: int = 1, max_chunk: int = 1 << 20) -> np.ndarray:
    """MinHash signature of every document: a ``(len(sets), num_perm)`` uint32 array.

    Works over consecutive blocks of documents holding about ``max_chunk`` shingles, so the
    temporary Python rows stay bounded whatever the corpus size.

    >>> from neardup.text.shingle import shingle_many
    >>> sig = signatures(shingle_many(["a b c d", "a b c d", "x y z w"]), num_perm=16)
    >>> bool((sig[0] == sig[1]).all()), bool((sig[0] == sig[2]).all())
    (True, False)
    """
    if num_perm < 1:
        raise ValueError(f"num_perm must be >= 1, got {num_perm}")
    n = len(sets)
    out = np.empty((n, num_perm), dtype=np.uint32)
    offsets = sets.offsets
    values = np.ascontiguousarray(sets.values, dtype=np.uint64)
    if RMinHash.ALGORITHM_VERSION == LOOP_ALGORITHM_VERSION and pays(int(values.size)):
        a, b = permutations(num_perm, seed)
        rounds = np.array([(int(b[0]) ^ _BUCKET_DOMAIN ^ (r * _ROUND_DOMAIN & _MASK64)) for r in range(_ROUNDS)],
                          dtype=np.uint64)
        shift = 32 - num_perm.bit_length() + 1 if num_perm & (num_perm - 1) == 0 else 0
        _sketch_loop(values, np.asarray(offsets, dtype=np.int64), a, b, rounds,
                     np.uint64(int(a[0]) ^ _FALLBACK_DOMAIN), shift, out)
        return out
    start = 0
    while start < n:
        # Grow the block until it holds max_chunk shingles (at least one document).
        end = int(np.searchsorted(offsets, offsets[start] + max_chunk, side="right")) - 1
        end = min(max(end, start + 1), n)
        lo, hi = int(offsets[start]), int(offsets[end])
        local = np.ascontiguousarray(offsets[start : end + 1] - lo, dtype=np.uint64)
        matrix = RMinHash.digest_matrix_from_flat_token_hashes(values[lo:hi], local, num_perm, seed)
        out[start:end] = _rows(matrix, end - start, num_perm)
        start = end
    return out


@functools.lru_cache(maxsize=4)
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """rensa's ``num_perm`` affine permutations ``(a, b)`` for ``seed``: pairs of draws from Xoshiro256++
    seeded by SplitMix64 (``rand_xoshiro``'s ``seed_from_u64``), ``a`` made odd. Read-only (cached).

    >>> a, b = permutations(2, 1)
    >>> bool(a[0] % 2 == 1), a.dtype.name
    (True, 'uint64')
    """
    state = seed & _MASK64
    s = []
    for _ in range(4):
        state = (state + 0x9E37_79B9_7F4A_7C15) & _MASK64
        s.append(_splitmix_tail(state))

    def draw() -> int:
        result = (_rotl((s[0] + s[3]) & _MASK64, 23) + s[0]) & _MASK64
        t = (s[1] << 17) & _MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    pairs = [(draw() | 1, draw()) for _ in range(num_perm)]
    a, b = np.array([p[0] for p in pairs], dtype=np.uint64), np.array([p[1] for p in pairs], dtype=np.uint64)
    a.flags.writeable = b.flags.writeable = False
    return a, b


def _splitmix_tail(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & _MASK64
    return z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & _MASK64


@compiled
def _sketch_loop(values: np.ndarray, offsets: np.ndarray, a: np.ndarray, b: np.ndarray, rounds: np.ndarray,
                 fallback_seed: np.uint64, shift: int, out: np.ndarray) -> None:
    """rensa's sketch of each set ``values[offsets[d]:offsets[d + 1]]`` into ``out[d]``. Round ``r`` sends each
    value, mixed by SplitMix64 with ``rounds[r]``, to one coordinate (its low word's top bits where
    ``num_perm`` is a power of two, ``shift`` then being 32 minus its bits; else Lemire's multiply with
    rejection) with rank ``r << 30`` plus its top 30 bits; a coordinate keeps its least rank. Later rounds
    can lower no rank once every coordinate holds one of an earlier round. A coordinate no round reached
    takes the least fallback rank ``3 << 30 | (a * h + b) >> 34`` over the values mixed with
    ``fallback_seed``. An empty set keeps all ones."""
    k = a.size
    count = np.uint64(k)
    threshold = np.uint64((1 << 32) % k)
    low = np.uint64(0xFFFFFFFF)
    golden = np.uint64(0x9E3779B97F4A7C15)
    m1 = np.uint64(0xBF58476D1CE4E5B9)
    m2 = np.uint64(0x94D049BB133111EB)
    fallback = np.uint32(3 << 30)
    mixed = np.empty(1024, dtype=np.uint64)
    row = np.empty(k, dtype=np.uint32)
    for d in range(offsets.size - 1):
        lo = offsets[d]
        m = offsets[d + 1] - lo
        row[:] = np.uint32(0xFFFFFFFF)
        if m > mixed.size:
            mixed = np.empty(2 * m, dtype=np.uint64)
        for r in range(rounds.size):
            for t in range(m):  # SplitMix64 of each value with the round's seed
                z = (values[lo + t] ^ rounds[r]) + golden
                z = (z ^ (z >> np.uint64(30))) * m1
                z = (z ^ (z >> np.uint64(27))) * m2
                mixed[t] = z ^ (z >> np.uint64(31))
            prefix = np.uint32(r << 30)
            for t in range(m):
                x = mixed[t]
                if shift > 0:
                    bucket = (x & low) >> np.uint64(shift)
                else:
                    c = x
                    product = (c & low) * count
                    while (product & low) < threshold:
                        c = (c + golden)
                        c = (c ^ (c >> np.uint64(30))) * m1
                        c = (c ^ (c >> np.uint64(27))) * m2
                        c = c ^ (c >> np.uint64(31))
                        product = (c & low) * count
                    bucket = product >> np.uint64(32)
                rank = prefix | np.uint32(x >> np.uint64(34))
                row[bucket] = min(row[bucket], rank)  # no branch: taken or not at random early on (2x the time)
            reached = np.uint32((r + 1) << 30)
            done = True
            for i in range(k):
                if row[i] >= reached:
                    done = False
                    break
            if done:
                break
        missing = False
        for i in range(k):
            if row[i] >= fallback:
                missing = True
                break
        if missing and m > 0:
            for t in range(m):
                z = (values[lo + t] ^ fallback_seed) + golden
                z = (z ^ (z >> np.uint64(30))) * m1
                z = (z ^ (z >> np.uint64(27))) * m2
                mixed[t] = z ^ (z >> np.uint64(31))
            for i in range(k):
                if row[i] >= fallback:
                    least = row[i]
                    for t in range(m):
                        rank = fallback | (np.uint32((a[i] * mixed[t] + b[i]) >> np.uint64(32)) >> np.uint32(2))
                        least = min(least, rank)
                    row[i] = least
        out[d, :] = row


def _rows(matrix: RMinHashDigestMatrix, n: int, num_perm: int) -> np.ndarray:
    """rensa's matrix as an ``(n, num_perm)`` array. It hands its rows out only as Python lists of ints: one
    list a document, each a container the garbage collector would scan again and again as they are made
    (a quarter of the conversion's time), so collection waits until the array is built."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        rows = matrix.to_rows()
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.uint32, count=n * num_perm)
        return flat.reshape(n, num_perm)
    finally:
        if enabled:
            gc.enable()


def empty_rows(sets: ShingleSets) -> np.ndarray:
    """Boolean mask of documents without any shingle (never candidates).

    >>> from neardup.text.shingle import shingle_many
    >>> empty_rows(shingle_many(["a b c", ""])).tolist()
    [False, True]
    """
    return sets.sizes == 0


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """Fraction of agreeing signature values: an unbiased estimate of Jaccard similarity.

    >>> estimate_jaccard(np.array([1, 2, 3, 4]), np.array([1, 2, 0, 0]))
    0.5
    """
    return float(np.mean(sig_a == sig_b))


def agreement(rows: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """For each k, the fraction of equal coordinates of signatures ``rows[ia[k]]`` and ``rows[ib[k]]`` (the pair's
    Jaccard estimate): ``np.mean(rows[ia] == rows[ib], axis=1)`` to the bit, without gathering the rows (at 200k
    stories the gathers and the comparison took 0.3 s of the 470k candidate pairs' screen).

    >>> agreement(np.array([[1, 2, 3, 4], [1, 2, 0, 0], [9, 9, 9, 9]]), np.array([0, 0]), np.array([1, 2])).tolist()
    [0.5, 0.0]
    """
    rows = np.ascontiguousarray(rows)
    ia, ib = np.asarray(ia, dtype=np.int64), np.asarray(ib, dtype=np.int64)
    if rows.ndim != 2 or ia.shape != ib.shape:
        raise ValueError(f"agreement: rows of signatures and two index arrays of one length, got {rows.shape}, "
                         f"{ia.shape} and {ib.shape}")
    counts = _agreement_loop(rows, ia, ib) if pays(ia.size * rows.shape[1]) else \
        np.count_nonzero(rows[ia] == rows[ib], axis=1)
    return counts / rows.shape[1]


@compiled
def _agreement_loop(rows: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """The equal coordinates of rows ``ia[k]`` and ``ib[k]``, for each k."""
    width = rows.shape[1]
    out = np.empty(ia.size, dtype=np.int64)
    for k in range(ia.size):
        a, b = rows[ia[k]], rows[ib[k]]
        count = 0
        for j in range(width):
            count += a[j] == b[j]
        out[k] = count
    return out
