"""The evidence of each verified pair: the views that matched it with the pair's score in each, and the
longest passages the two documents share, with their character offsets in each.

Owns the evidence table (``evidence.parquet``: one row per row of ``pairs.parquet``, in the same order),
building its rows from pairs, views and texts, and writing and reading it; must not score pairs (a
method names its views and their scores: :meth:`~neardup.methods.base.Method.views`), find passages
(:mod:`neardup.verify.passages`) or read input files.

Columns:

* ``left``, ``right`` (string), ``score`` (double): the pair, as in ``pairs.parquet``;
* ``views`` (list of ``{view: string, score: double}``): what the method compared and the pair's score
  there: its representation (``"word 4-grams"``, ``"char 5-grams"``, ``"retsim"``, ``"retsim chunks"``,
  ``"biencoder"``) with the pair score; a hybrid's two views (``"word 4-grams"`` with the IDF-weighted
  overlap, ``"retsim"`` with the cosine); re-rank's bi-encoder cosine and ``"cross-encoder"`` probability;
  multiview's every view (``"word 4-grams"``, ``"char 5-grams"``: each one's verify score; ``"retsim"``: cosine);
* ``spans`` (list of ``{left_start, left_end, right_start, right_end, words: int64, text: string}``): up
  to three of the longest passages the two texts share, longest first: ``left_text[left_start:left_end]``
  and ``right_text[right_start:right_end]`` (raw character offsets into the input texts) are the same
  passage up to normalization, ``words`` normalized words long; ``text`` is the passage as the left
  document has it, cut to :data:`PASSAGE_TEXT_CHARS` characters (the offsets give all of it). Empty when
  the texts share no run of three words (a neural method may match paraphrases).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.io.arrow import arrow_array
from neardup.io.write import atomic_path, with_run_id
from neardup.verify.passages import Passage, passage_table, shared_passages

#: Characters of a passage kept as its ``text`` (its offsets locate all of it).
PASSAGE_TEXT_CHARS = 200
_VIEW = pa.struct([("view", pa.string()), ("score", pa.float64())])
_SPAN = pa.struct([("left_start", pa.int64()), ("left_end", pa.int64()), ("right_start", pa.int64()),
                   ("right_end", pa.int64()), ("words", pa.int64()), ("text", pa.string())])
#: The columns of ``evidence.parquet``.
EVIDENCE_SCHEMA = pa.schema([("left", pa.string()), ("right", pa.string()), ("score", pa.float64()),
                             ("views", pa.list_(_VIEW)), ("spans", pa.list_(_SPAN))])


#: Pairs aligned at once (their texts and words are held together), fewer when their texts hold more
#: than ``CHARS_PER_BLOCK`` characters (a block's arrays take about 60 bytes a character).
PAIRS_PER_BLOCK = 5000
CHARS_PER_BLOCK = 2_000_000


def _spans(text_a: str, found: list[Passage]) -> list[dict[str, Any]]:
    """The ``spans`` of passages ``found`` (``text_a``: the left document's text)."""
    return [dict(zip(_SPAN.names, (p.left_start, p.left_end, p.right_start, p.right_end, p.words,
                                   text_a[p.left_start : min(p.left_end, p.left_start + PASSAGE_TEXT_CHARS)])))
            for p in found]


def spans_of(text_a: str, text_b: str) -> list[dict[str, Any]]:
    """The ``spans`` of one pair of texts (see the module docstring).

    >>> [(s["text"], s["words"]) for s in spans_of("Oil fell 3% in London.", "In London, oil fell 3%!")]
    [('Oil fell 3', 3)]
    """
    return _spans(text_a, shared_passages(text_a, text_b))


def evidence_table(left_ids: Sequence[str], right_ids: Sequence[str], left: np.ndarray, right: np.ndarray,
                   scores: np.ndarray, views: Sequence[tuple[str, np.ndarray]],
                   texts_of: Callable[[np.ndarray], list[str]]) -> pa.Table:
    """The evidence rows of pairs ``(left, right)`` (document indices, with their ids), their scores and
    ``views`` (``(name, score of every pair)``, :meth:`~neardup.methods.base.Method.views`); ``texts_of``
    gives the texts of documents by index (ascending, distinct), asked once a block. Pairs are aligned in
    blocks (:data:`PAIRS_PER_BLOCK`; halved, from the texts already read, until their texts hold at most
    :data:`CHARS_PER_BLOCK` characters), so memory stays bounded.

    >>> t = evidence_table(["a"], ["b"], np.array([0]), np.array([1]), np.array([0.9]),
    ...                    [("word 4-grams", np.array([0.9]))],
    ...                    lambda docs: [["the cat sat on the mat", "The cat sat."][d] for d in docs])
    >>> row = t.to_pylist()[0]
    >>> row["views"], [(s["left_start"], s["left_end"], s["text"]) for s in row["spans"]]
    ([{'view': 'word 4-grams', 'score': 0.9}], [(0, 11, 'the cat sat')])
    """
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    found_per_pair: list[np.ndarray] = []  # passages of each pair, and their columns
    columns: list[list[np.ndarray]] = [[] for _ in range(len(_SPAN) - 1)]
    passage_texts: list[str] = []

    def block(a: np.ndarray, b: np.ndarray, read: dict[int, str] | None = None) -> None:
        docs, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
        texts = texts_of(docs) if read is None else [read[d] for d in docs.tolist()]
        if a.size > 1 and sum(map(len, texts)) > CHARS_PER_BLOCK:  # long texts: halves, from the texts read
            read = dict(zip(docs.tolist(), texts)) if read is None else read
            del texts
            half = a.size // 2
            block(a[:half], b[:half], read)
            block(a[half:], b[half:], read)
            return
        ia, ib = inverse[: a.size], inverse[a.size :]
        found = passage_table(texts, ia, ib)
        found_per_pair.append(found.counts(a.size))
        for column, values in zip(columns, (found.left_start, found.left_end, found.right_start, found.right_end,
                                            found.words)):
            column.append(values)
        passage_texts.extend(texts[d][start : min(end, start + PASSAGE_TEXT_CHARS)] for d, start, end in
                             zip(ia[found.pair].tolist(), found.left_start.tolist(), found.left_end.tolist()))

    for lo in range(0, left.size, PAIRS_PER_BLOCK):
        block(left[lo : lo + PAIRS_PER_BLOCK], right[lo : lo + PAIRS_PER_BLOCK])
    n = left.size
    numbers = [np.concatenate(c) if c else np.empty(0, dtype=np.int64) for c in columns]
    spans = pa.StructArray.from_arrays([arrow_array(c, f.type) for c, f in zip([*numbers, passage_texts], _SPAN)],
                                       fields=list(_SPAN))
    scores_of_views = np.stack([np.asarray(v, dtype=np.float64) for _, v in views], axis=1).ravel() if views \
        else np.empty(0, dtype=np.float64)
    view_values = pa.StructArray.from_arrays([arrow_array([name for name, _ in views] * n, pa.string()),
                                              arrow_array(scores_of_views)], fields=list(_VIEW))
    per_pair = np.concatenate(found_per_pair) if found_per_pair else np.empty(0, dtype=np.int64)
    return pa.table({"left": arrow_array(list(left_ids), pa.string()),
                     "right": arrow_array(list(right_ids), pa.string()),
                     "score": arrow_array(np.asarray(scores, dtype=np.float64)),
                     "views": _lists(np.full(n, len(views), dtype=np.int64), view_values, _VIEW),
                     "spans": _lists(per_pair, spans, _SPAN)},
                    schema=EVIDENCE_SCHEMA)


def _lists(counts: np.ndarray, values: pa.Array, item: pa.DataType) -> pa.Array:
    """A list column: row ``i`` holds the next ``counts[i]`` of ``values``."""
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
    return pa.ListArray.from_arrays(arrow_array(offsets), values, type=pa.list_(item))


def write_evidence(path: str | os.PathLike[str], tables: Iterable[pa.Table], run_id: str | None = None) -> None:
    """Write evidence tables, in order, as one Parquet file (atomically); ``run_id``: the run it belongs to
    (:func:`~neardup.io.write.with_run_id`)."""
    with atomic_path(path) as tmp:
        with pq.ParquetWriter(tmp, with_run_id(EVIDENCE_SCHEMA, run_id), compression="zstd") as writer:
            for table in tables:
                writer.write_table(table)


def read_evidence(path: str | os.PathLike[str]) -> pa.Table:
    """An ``evidence.parquet`` file."""
    return pq.read_table(Path(path), schema=EVIDENCE_SCHEMA)


__all__ = ["CHARS_PER_BLOCK", "EVIDENCE_SCHEMA", "PAIRS_PER_BLOCK", "PASSAGE_TEXT_CHARS",
           "evidence_table", "read_evidence", "spans_of", "write_evidence"]
