"""XXH3-64 (seed 0, the default secret) of the words of normalized texts in a compiled loop, equal to
``xxhash.xxh3_64_intdigest`` of each word's UTF-8: a batch's words hashed from its code points without making
a Python string of any of them (:func:`word_hashes`).

Owns the hash of byte strings of up to :data:`MAX_LEN` bytes (the lengths XXH3 hashes from the first 136
bytes of its secret, without its long-input loop); must not normalize text or make n-grams. Longer words
are left to xxhash. The tests compare the loop with xxhash at every length and over every UTF-8 width.
"""

from __future__ import annotations

import numpy as np

from neardup.arrays import offsets as offsets_of
from neardup.jit import compiled, helper

#: The longest string hashed here: XXH3's "mid-size" inputs end at 240 bytes.
MAX_LEN = 240

# The first 136 bytes of XXH3's default secret (kSecret), all that inputs of up to 240 bytes read, as the
# little-endian 64-bit word at each of its first 129 bytes (XXH3 reads it at unaligned places).
_SECRET_BYTES = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364"
    "eac5ac8334d3ebc3")
_KEYS = np.array([int.from_bytes(_SECRET_BYTES[i : i + 8], "little") for i in range(129)], dtype=np.uint64)

_P64_1 = np.uint64(0x9E3779B185EBCA87)
_P64_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P64_3 = np.uint64(0x165667B19E3779F9)
_MX1 = np.uint64(0x165667919E3779F9)
_MX2 = np.uint64(0x9FB21C651E98DF25)
_M32 = np.uint64(0xFFFFFFFF)


def word_hashes(units: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The words of normalized texts given as one flat array of code points (``lengths`` each; words and single
    spaces, :func:`neardup.text.normalize.normalized_code_points`): the XXH3-64 of each word's UTF-8 (as
    :func:`neardup.text.shingle.token_hashes` hashes it) and the number of words of each text.

    >>> import xxhash
    >>> h, n = word_hashes(np.frombuffer("ab cdé".encode("utf-32-le"), dtype=np.uint32), np.array([5, 1]))
    >>> h.tolist() == [xxhash.xxh3_64_intdigest(w.encode()) for w in ("ab", "cd", "é")], n.tolist()
    (True, [2, 1])
    """
    offsets = offsets_of(lengths)
    hashes, counts, longer = _word_hashes_loop(np.ascontiguousarray(units, dtype=np.uint32), offsets, _KEYS, MAX_LEN)
    if longer.size:  # words of more than MAX_LEN bytes: xxhash's
        import xxhash

        for w, lo, hi in longer.tolist():
            word = units[lo:hi].astype(np.uint32).tobytes().decode("utf-32-le")
            hashes[w] = xxhash.xxh3_64_intdigest(word.encode("utf-8", "surrogatepass"))
    return hashes, counts


@compiled
def _word_hashes_loop(units: np.ndarray, offsets: np.ndarray, keys: np.ndarray, max_len: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The words (runs of code points other than the space) of each text ``units[offsets[d]:offsets[d + 1]]``:
    the XXH3-64 of each word's UTF-8, the number of words of each text, and ``(word, start, end)`` of every
    word of more than ``max_len`` bytes (its hash left 0)."""
    n_texts = offsets.size - 1
    hashes = np.empty((units.size + n_texts + 1) // 2, dtype=np.uint64)  # a text of L: at most (L + 1) // 2 words
    counts = np.zeros(n_texts, dtype=np.int64)
    longer = np.empty((16, 3), dtype=np.int64)
    n_long = 0
    scratch = np.empty(4 * 64, dtype=np.uint8)
    w = 0
    for d in range(n_texts):
        i = offsets[d]
        end = offsets[d + 1]
        first = w
        while i < end:
            if units[i] == 32:
                i += 1
                continue
            j = i
            while j < end and units[j] != 32:
                j += 1
            if 4 * (j - i) > scratch.size:  # room for the word's UTF-8 (a rare long word)
                scratch = np.empty(8 * (j - i), dtype=np.uint8)
            size = 0
            for k in range(i, j):
                c = units[k]
                if c < 0x80:
                    scratch[size] = c
                    size += 1
                elif c < 0x800:
                    scratch[size] = 0xC0 | (c >> 6)
                    scratch[size + 1] = 0x80 | (c & 0x3F)
                    size += 2
                elif c < 0x10000:
                    scratch[size] = 0xE0 | (c >> 12)
                    scratch[size + 1] = 0x80 | ((c >> 6) & 0x3F)
                    scratch[size + 2] = 0x80 | (c & 0x3F)
                    size += 3
                else:
                    scratch[size] = 0xF0 | (c >> 18)
                    scratch[size + 1] = 0x80 | ((c >> 12) & 0x3F)
                    scratch[size + 2] = 0x80 | ((c >> 6) & 0x3F)
                    scratch[size + 3] = 0x80 | (c & 0x3F)
                    size += 4
            if size > max_len:
                if n_long == longer.shape[0]:
                    grown_long = np.empty((2 * n_long, 3), dtype=np.int64)
                    grown_long[:n_long] = longer
                    longer = grown_long
                longer[n_long, 0] = w
                longer[n_long, 1] = i
                longer[n_long, 2] = j
                n_long += 1
                hashes[w] = 0
            else:
                hashes[w] = _xxh3(scratch, 0, size, keys)
            w += 1
            i = j
        counts[d] = w - first
    return hashes[:w].copy(), counts, longer[:n_long].copy()


@helper
def _read64(data, at):  # little-endian
    return (np.uint64(data[at]) | np.uint64(data[at + 1]) << np.uint64(8) | np.uint64(data[at + 2]) << np.uint64(16)
            | np.uint64(data[at + 3]) << np.uint64(24) | np.uint64(data[at + 4]) << np.uint64(32)
            | np.uint64(data[at + 5]) << np.uint64(40) | np.uint64(data[at + 6]) << np.uint64(48)
            | np.uint64(data[at + 7]) << np.uint64(56))


@helper
def _read32(data, at):
    return (np.uint64(data[at]) | np.uint64(data[at + 1]) << np.uint64(8) | np.uint64(data[at + 2]) << np.uint64(16)
            | np.uint64(data[at + 3]) << np.uint64(24))


@helper
def _fold64(a, b):
    """The 128-bit product of ``a`` and ``b``, its low and high halves xor-ed."""
    a_lo, a_hi, b_lo, b_hi = a & _M32, a >> np.uint64(32), b & _M32, b >> np.uint64(32)
    lo_lo, hi_lo, lo_hi, hi_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi, a_hi * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & _M32) + lo_hi
    upper = (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32)) + hi_hi
    lower = (cross << np.uint64(32)) | (lo_lo & _M32)
    return lower ^ upper


@helper
def _avalanche(h):
    h = h ^ (h >> np.uint64(37))
    h = h * _MX1
    return h ^ (h >> np.uint64(32))


@helper
def _mix16(data, at, keys, s):
    return _fold64(_read64(data, at) ^ keys[s], _read64(data, at + 8) ^ keys[s + 8])


@helper
def _xxh3(data, at, size, keys):
    """XXH3-64 of ``data[at:at + size]`` (``size`` at most 240), seed 0."""
    n = np.uint64(size)
    if size <= 16:
        if size > 8:
            lo = _read64(data, at) ^ (keys[24] ^ keys[32])
            hi = _read64(data, at + size - 8) ^ (keys[40] ^ keys[48])
            swapped = ((lo & np.uint64(0xFF)) << np.uint64(56)) | ((lo & np.uint64(0xFF00)) << np.uint64(40)) \
                | ((lo & np.uint64(0xFF0000)) << np.uint64(24)) | ((lo & np.uint64(0xFF000000)) << np.uint64(8)) \
                | ((lo >> np.uint64(8)) & np.uint64(0xFF000000)) | ((lo >> np.uint64(24)) & np.uint64(0xFF0000)) \
                | ((lo >> np.uint64(40)) & np.uint64(0xFF00)) | (lo >> np.uint64(56))
            return _avalanche(n + swapped + hi + _fold64(lo, hi))
        if size >= 4:
            x = (_read32(data, at + size - 4) + (_read32(data, at) << np.uint64(32))) \
                ^ (keys[8] ^ keys[16])
            x = x ^ (((x << np.uint64(49)) | (x >> np.uint64(15))) ^ ((x << np.uint64(24)) | (x >> np.uint64(40))))
            x = x * _MX2
            x = x ^ ((x >> np.uint64(35)) + n)
            x = x * _MX2
            return x ^ (x >> np.uint64(28))
        if size > 0:
            c1 = np.uint64(data[at])
            c2 = np.uint64(data[at + (size >> 1)])
            c3 = np.uint64(data[at + size - 1])
            combined = (c1 << np.uint64(16)) | (c2 << np.uint64(24)) | c3 | (n << np.uint64(8))
            h = combined ^ ((keys[0] ^ keys[4]) & _M32)
        else:
            h = keys[56] ^ keys[64]
        h = h ^ (h >> np.uint64(33))
        h = h * _P64_2
        h = h ^ (h >> np.uint64(29))
        h = h * _P64_3
        return h ^ (h >> np.uint64(32))
    acc = n * _P64_1
    if size <= 128:
        if size > 32:
            if size > 64:
                if size > 96:
                    acc += _mix16(data, at + 48, keys, 96)
                    acc += _mix16(data, at + size - 64, keys, 112)
                acc += _mix16(data, at + 32, keys, 64)
                acc += _mix16(data, at + size - 48, keys, 80)
            acc += _mix16(data, at + 16, keys, 32)
            acc += _mix16(data, at + size - 32, keys, 48)
        acc += _mix16(data, at, keys, 0)
        acc += _mix16(data, at + size - 16, keys, 16)
        return _avalanche(acc)
    for i in range(8):
        acc += _mix16(data, at + 16 * i, keys, 16 * i)
    acc = _avalanche(acc)
    for i in range(8, size // 16):
        acc += _mix16(data, at + 16 * i, keys, 16 * (i - 8) + 3)
    acc += _mix16(data, at + size - 16, keys, 136 - 17)
    return _avalanche(acc)
