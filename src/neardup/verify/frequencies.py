"""Document frequencies of shingle values counted in a hash table: owns counting 64-bit values, merging
counts and looking up what each value holds; must not read or write the work directory or schedule
anything (the chunked engine's weights stage does, :mod:`neardup.engine.tasks`), nor define the IDF
weight (:func:`neardup.verify.overlap.idf`).

A document holds each of its values once, so a value's count over the corpus is its document frequency.
The values are already 64-bit hashes: a value's slot is the top bits of the value times an odd constant,
probed linearly; a slot is free while its count is 0. The table grows within a memory budget and gives up
past the distinct values its largest size holds (:meth:`FrequencyTable.add` returns False), so its memory is bounded by
the caller's budget: the weights stage then counts by hash partition instead, whatever the distinct
count. The loops are compiled (:mod:`neardup.jit`): a loop per value in Python would be far slower than
the partitioned NumPy path, so callers use a table only where :func:`neardup.jit.pays`.
:func:`counts_of` is the NumPy statement of what the table computes (the tests compare the two).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from neardup.jit import compiled

#: The multiplier that spreads values over slots (2**64 / golden ratio, odd).
_SPREAD = np.uint64(0x9E3779B97F4A7C15)
#: Slots of a new table (a power of two).
_FIRST_BITS = 16
#: Slots whose counts :meth:`FrequencyTable.map_counts` replaces at a time.
_MAP_BLOCK = 1 << 16


class FrequencyTable:
    """Counts of distinct 64-bit values, in at most ``max_bytes`` of memory. Slot ``s`` is ``slots[2s]`` (its
    value) and ``slots[2s + 1]`` (its count, 0 while free): one cache line holds both. The table doubles
    when a quarter full (linear probing slows past that: counting and looking up 116M character shingles
    of 1.2M distinct values took twice as long at 0.6 full as at 0.3), up to its largest size, which it
    fills to half.

    >>> t = FrequencyTable(max_bytes=2**20)
    >>> t.add(np.array([5, 7, 5], dtype=np.uint64)), t.add(np.array([7], dtype=np.uint64), np.array([3]))
    (True, True)
    >>> sorted(zip(*[a.tolist() for a in t.entries()])), t.lookup(np.array([7, 5, 9], dtype=np.uint64)).tolist()
    ([(5, 2), (7, 4)], [4, 2, 0])
    """

    def __init__(self, max_bytes: int) -> None:
        #: Slots at most: the table and the one it grows from within ``max_bytes`` (24 bytes a slot).
        self.max_bits = max(_FIRST_BITS, (max_bytes // 24).bit_length() - 1)
        self.bits = _FIRST_BITS
        self.slots = np.zeros(2 << self.bits, dtype=np.uint64)
        self.filled = 0
        self.items = np.dtype(np.uint64)  # what a used slot holds beside its value: a count until map_counts
        self.usable = True  # False once add gave up or map_counts failed part-way

    def add(self, values: np.ndarray, amounts: np.ndarray | None = None) -> bool:
        """Count ``values`` (each once, or ``amounts[i]`` times); False, the table then unusable (its other
        operations refuse), when that takes more distinct values than :attr:`max_entries`. With ``amounts``
        (another table's entries, each value once) the table first grows to hold them all: entries come in
        slot order, and a smaller table growing under them would send every value to its first slots."""
        self._check("add")
        if self.items != np.uint64:
            raise ValueError("add: the counts were replaced (map_counts)")
        values = np.ascontiguousarray(values, dtype=np.uint64)
        if amounts is None:
            amounts = np.empty(0, np.uint64)
        else:
            amounts = np.ascontiguousarray(amounts, dtype=np.uint64)
            room = min(self.max_bits, (4 * (self.filled + values.size) - 1).bit_length())
            if room > self.bits:
                self._resize(room)
        at = 0
        while True:
            last = self.bits == self.max_bits
            at, self.filled = _count_loop(values, amounts, at, self.slots, self.filled, np.uint64(64 - self.bits),
                                          1 << (self.bits - (1 if last else 2)))
            if at == values.size:
                return True
            if last:
                self.usable = False
                return False
            self._resize(self.bits + 1)  # a quarter full: twice the slots

    @classmethod
    def of_slots(cls, slots: np.ndarray, items: np.dtype | type) -> FrequencyTable:
        """A table over another table's :attr:`slots` (e.g. saved to disk after :meth:`map_counts` and
        :meth:`compact`), holding ``items``: for :meth:`lookup` (and :meth:`entries`), not :meth:`add`.

        >>> t = FrequencyTable(2**20)
        >>> t.add(np.array([5, 7, 5], dtype=np.uint64))
        True
        >>> t.map_counts(lambda c: c * 0.5)
        >>> FrequencyTable.of_slots(t.slots.copy(), np.float64).lookup(np.array([5, 9], dtype=np.uint64)).tolist()
        [1.0, 0.0]
        """
        slots = np.ascontiguousarray(slots, dtype=np.uint64)
        bits = slots.size.bit_length() - 2
        if slots.ndim != 1 or slots.size != 2 << bits:
            raise ValueError(f"of_slots: a table's slots are two items each, a power of two of them; got {slots.shape}")
        table = cls(24 << bits)
        table.slots, table.bits, table.max_bits = slots, bits, bits
        table.filled = int(np.count_nonzero(slots[1::2]))
        table.items = np.dtype(items)
        return table

    def compact(self) -> None:
        """The fewest slots (a power of two) that leave the table at most half full: a table kept for lookups
        (counting grows it while a quarter full) in half the memory, or a quarter."""
        self._check("compact")
        bits = max(_FIRST_BITS, (2 * self.filled - 1).bit_length())
        if bits < self.bits:
            self._resize(bits)

    def _resize(self, bits: int) -> None:
        """``2**bits`` slots, every entry moved to its slot there."""
        slots = np.zeros(2 << bits, dtype=np.uint64)
        _move_loop(self.slots, slots, np.uint64(64 - bits))
        self.slots, self.bits = slots, bits

    @property
    def max_entries(self) -> int:
        """Distinct values the table can count: half its largest size's slots."""
        return 1 << (self.max_bits - 1)

    def _check(self, operation: str) -> None:
        if not self.usable:
            raise ValueError(f"{operation}: the table is unusable (add gave up, or map_counts failed part-way)")

    def entries(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct values and their counts, in slot order (no more memory than the two arrays)."""
        self._check("entries")
        keys = np.empty(self.filled, dtype=np.uint64)
        counts = np.empty(self.filled, dtype=np.uint64)
        _entries_loop(self.slots, keys, counts)
        return keys, counts

    def map_counts(self, of_counts: Callable[[np.ndarray], np.ndarray]) -> None:
        """Replace each count by ``of_counts`` of it (elementwise, e.g. the IDF weight of a document frequency;
        8-byte items, none all zero bits), in place: :meth:`lookup` then gives items, :meth:`add` refuses. A
        bad item leaves the table unusable (the blocks of slots before it were replaced).

        >>> t = FrequencyTable(2**20)
        >>> t.add(np.array([5, 7, 5], dtype=np.uint64))
        True
        >>> t.map_counts(lambda c: c * 0.5)
        >>> t.lookup(np.array([5, 7, 9], dtype=np.uint64)).tolist()
        [1.0, 0.5, 0.0]
        """
        self._check("map_counts")
        if self.items != np.uint64:
            raise ValueError("map_counts: the counts were already replaced")
        counts = self.slots[1::2]
        items = None
        self.usable = False  # until every block is replaced
        for lo in range(0, counts.size, _MAP_BLOCK):  # a block of slots at a time: few temporaries
            block = counts[lo : lo + _MAP_BLOCK]
            used = np.flatnonzero(block)
            got = np.asarray(of_counts(block[used]))
            if got.dtype.itemsize != 8 or got.shape != used.shape:
                raise ValueError(f"map_counts: one 8-byte item a count, got {got.dtype} {got.shape}")
            bits = got.view(np.uint64)
            if not bits.all():
                raise ValueError("map_counts: an item of all zero bits would read as a free slot")
            if items is not None and got.dtype != items:
                raise ValueError(f"map_counts: items of one type, got {items} and {got.dtype}")
            items = got.dtype
            block[used] = bits
        self.items = items if items is not None else np.dtype(np.uint64)
        self.usable = True

    def lookup(self, values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Each value's count (0 for a value never counted), or after :meth:`map_counts` its item (0 for a
        value never counted); into ``out`` (as long as ``values``, of the items' type) when given."""
        self._check("lookup")
        values = np.ascontiguousarray(values, dtype=np.uint64)
        if out is None:
            out = np.empty(values.size, dtype=self.items)
        elif out.shape != values.shape or out.dtype != self.items or not out.flags.c_contiguous:
            raise ValueError(f"lookup: out must be {values.size} contiguous {self.items}, got {out.size} {out.dtype}")
        _lookup_loop(values, np.zeros(1, dtype=np.int64), np.full(1, values.size, dtype=np.int64), self.slots,
                     np.uint64(64 - self.bits), out.view(np.uint64))
        return out

    def lookup_ranges(self, values: np.ndarray, starts: np.ndarray, ends: np.ndarray, out: np.ndarray) -> None:
        """:meth:`lookup` of ``values[starts[k]:ends[k]]`` for every k, written at the same positions of ``out``
        (as long as ``values``, of the items' type); its other positions are left as they are.

        >>> t = FrequencyTable(2**20)
        >>> t.add(np.array([5, 7, 5], dtype=np.uint64))
        True
        >>> out = np.full(4, 9, dtype=np.uint64)
        >>> t.lookup_ranges(np.array([5, 7, 5, 8], dtype=np.uint64), np.array([0, 2]), np.array([1, 4]), out)
        >>> out.tolist()
        [2, 9, 2, 0]
        """
        self._check("lookup_ranges")
        values = np.ascontiguousarray(values, dtype=np.uint64)
        if out.shape != values.shape or out.dtype != self.items or not out.flags.c_contiguous:
            raise ValueError(f"lookup_ranges: out must be {values.size} contiguous {self.items}, "
                             f"got {out.size} {out.dtype}")
        starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
        if starts.shape != ends.shape or (starts.size and (starts.min() < 0 or ends.max() > values.size)):
            raise ValueError("lookup_ranges: ranges must lie within the values")
        _lookup_loop(values, starts, ends, self.slots, np.uint64(64 - self.bits), out.view(np.uint64))


def counts_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, ascending, and their counts (NumPy): :meth:`FrequencyTable.entries` after
    adding ``values``, but sorted.

    >>> [a.tolist() for a in counts_of(np.array([5, 7, 5], dtype=np.uint64))]
    [[5, 7], [2, 1]]
    """
    keys, counts = np.unique(np.asarray(values, dtype=np.uint64), return_counts=True)
    return keys, counts.astype(np.uint64)


@compiled
def _count_loop(values: np.ndarray, amounts: np.ndarray, start: int, slots: np.ndarray, filled: int,
                shift: np.uint64, most: int) -> tuple[int, int]:
    """Count ``values[start:]`` (``amounts`` each, or 1 when ``amounts`` is empty) until the table holds
    ``most`` entries; returns where it stopped and the entries held."""
    mask = slots.size // 2 - 1
    one = amounts.size == 0
    for i in range(start, values.size):
        if filled >= most:
            return i, filled
        x = values[i]
        add = np.uint64(1) if one else amounts[i]
        h = np.int64((x * _SPREAD) >> shift)
        while True:
            c = slots[2 * h + 1]
            if c == 0:
                slots[2 * h] = x
                slots[2 * h + 1] = add
                filled += 1
                break
            if slots[2 * h] == x:
                slots[2 * h + 1] = c + add
                break
            h = (h + 1) & mask
    return values.size, filled


@compiled
def _move_loop(slots: np.ndarray, new_slots: np.ndarray, shift: np.uint64) -> None:
    """Every entry of ``slots`` put in its slot of the larger ``new_slots``."""
    mask = new_slots.size // 2 - 1
    for s in range(slots.size // 2):
        if slots[2 * s + 1] == 0:
            continue
        x = slots[2 * s]
        h = np.int64((x * _SPREAD) >> shift)
        while new_slots[2 * h + 1] != 0:
            h = (h + 1) & mask
        new_slots[2 * h] = x
        new_slots[2 * h + 1] = slots[2 * s + 1]


@compiled
def _entries_loop(slots: np.ndarray, keys: np.ndarray, counts: np.ndarray) -> None:
    """The used slots' values and counts, in slot order, into ``keys`` and ``counts``."""
    k = 0
    for s in range(slots.size // 2):
        if slots[2 * s + 1] != 0:
            keys[k] = slots[2 * s]
            counts[k] = slots[2 * s + 1]
            k += 1


@compiled
def _lookup_loop(values: np.ndarray, starts: np.ndarray, ends: np.ndarray, items: np.ndarray, shift: np.uint64,
                 out: np.ndarray) -> None:
    """``out[i]`` for every ``i`` of the ranges ``starts[k]:ends[k]``: the item of ``values[i]``'s slot in
    ``items`` (laid out as a table's slots: a value, then its item, never 0 in a used slot), 0 when it has
    none."""
    mask = items.size // 2 - 1
    for k in range(starts.size):
        for i in range(starts[k], ends[k]):
            x = values[i]
            h = np.int64((x * _SPREAD) >> shift)
            while True:
                item = items[2 * h + 1]
                if items[2 * h] == x or item == 0:  # found, or a free slot (value 0, item 0): not there
                    out[i] = item
                    break
                h = (h + 1) & mask
