"""The typed results every entry point returns: :class:`DedupResult` (one collection, any engine) and
:class:`MatchResult` (queries against a corpus).

Owns the result types, their views (groups, representatives, pairs by id) and their files; must not
compute them. A result written by a chunked engine is read from its output folder when first asked for.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from neardup.cluster import Clusters

CLUSTER_COLUMNS: tuple[str, ...] = ("id", "cluster", "cluster_size", "is_representative", "oversized")
PAIR_COLUMNS: tuple[str, ...] = ("left", "right", "score")
OUTPUT_FILES: tuple[str, ...] = ("clusters.parquet", "pairs.parquet", "summary.json")
MATCH_FILES: tuple[str, ...] = ("matches.parquet", "summary.json")


def _loaded(attr: str, doc: str) -> Any:
    """A read-only property of a result that reads its output folder first, if it has not yet."""

    def get(self: DedupResult) -> Any:
        self._ready()
        value = getattr(self, attr)
        assert value is not None
        return value

    return property(get, doc=doc)


class DedupResult:
    """What a run found: a cluster per document, the verified pairs, and a summary.

    ``left``/``right`` hold document indices (:meth:`pairs_by_id` gives ids); ``output`` is the folder
    the result was written to, if any.

    >>> import neardup
    >>> r = neardup.dedup(["the cat sat on the mat", "The cat sat on the mat!", "a dog"])
    >>> r.groups(), r.representatives
    ([['0', '1']], ['1', '2'])
    """

    def __init__(self, ids: list[str] | None = None, clusters: Clusters | None = None,
                 left: np.ndarray | None = None, right: np.ndarray | None = None, scores: np.ndarray | None = None,
                 summary: dict[str, Any] | None = None, output: str | os.PathLike[str] | None = None,
                 source: str | None = None, id_field: str = "id") -> None:
        self._ids, self._clusters = ids, clusters
        self._left, self._right, self._scores = left, right, scores
        self.summary: dict[str, Any] = summary or {}
        self.output = Path(output) if output is not None else None
        self.source = source  # the input file, for :meth:`write_kept`
        self.id_field = id_field
        self.on_error = "raise"  # the input's error policy, for :meth:`write_kept` (it reads the input again)
        self._loader: Callable[[], None] | None = None

    @classmethod
    def from_output(cls, outdir: str | os.PathLike[str], summary: dict[str, Any], source: str | None = None,
                    id_field: str = "id") -> DedupResult:
        """The result a chunked engine wrote to ``outdir`` (clusters and pairs read on first use)."""
        result = cls(summary=summary, output=outdir, source=source, id_field=id_field)
        result._loader = result._load_output
        return result

    def _load_output(self) -> None:
        import pyarrow.parquet as pq

        assert self.output is not None
        table = pq.read_table(self.output / "clusters.parquet", columns=list(CLUSTER_COLUMNS))
        ids = table["id"].to_pylist()
        index = {doc_id: i for i, doc_id in enumerate(ids)}
        labels = np.fromiter((index[c] for c in table["cluster"].to_pylist()), dtype=np.int64, count=len(ids))
        self._ids = ids
        self._clusters = Clusters(labels=labels, sizes=table["cluster_size"].to_numpy().astype(np.int64),
                                  oversized=table["oversized"].to_numpy(zero_copy_only=False).astype(bool))
        pairs = pq.read_table(self.output / "pairs.parquet", columns=list(PAIR_COLUMNS))
        self._left = np.fromiter((index[x] for x in pairs["left"].to_pylist()), dtype=np.int64, count=pairs.num_rows)
        self._right = np.fromiter((index[x] for x in pairs["right"].to_pylist()), dtype=np.int64, count=pairs.num_rows)
        self._scores = pairs["score"].to_numpy().astype(np.float64)

    def _ready(self) -> None:
        if self._loader is not None:
            loader, self._loader = self._loader, None
            loader()

    ids = _loaded("_ids", "Document ids in input order.")
    clusters = _loaded("_clusters", "The cluster of each document (see :class:`~neardup.cluster.Clusters`).")
    left = _loaded("_left", "Left document index of each verified pair.")
    right = _loaded("_right", "Right document index of each verified pair.")
    scores = _loaded("_scores", "Score of each verified pair.")

    @property
    def cluster_ids(self) -> list[str]:
        """For each document, the id of its cluster's representative (the cluster id)."""
        ids = self.ids
        return [ids[i] for i in self.clusters.labels]

    @property
    def representatives(self) -> list[str]:
        """Ids of the documents kept: one per cluster, longest then first seen."""
        ids = self.ids
        return [ids[i] for i in np.flatnonzero(self.clusters.is_representative)]

    def pairs_by_id(self) -> list[tuple[str, str, float]]:
        """Verified duplicate pairs as (left id, right id, score)."""
        ids = self.ids
        return [(ids[a], ids[b], float(s)) for a, b, s in zip(self.left, self.right, self.scores)]

    def groups(self) -> list[list[str]]:
        """Clusters with more than one document, as lists of ids (largest first)."""
        out: dict[int, list[str]] = {}
        ids, clusters = self.ids, self.clusters
        for i, label in enumerate(clusters.labels):
            if clusters.sizes[i] > 1:
                out.setdefault(int(label), []).append(ids[i])
        return sorted(out.values(), key=lambda g: (-len(g), g[0]))

    def write(self, outdir: str | os.PathLike[str]) -> None:
        """Write clusters.parquet, pairs.parquet and summary.json into ``outdir`` (atomically)."""
        from neardup.io.write import write_json, write_table

        out = Path(outdir)
        if self.output is not None and self._loader is not None:  # not loaded: copy the files
            if out.resolve() != self.output.resolve():
                out.mkdir(parents=True, exist_ok=True)
                for name in OUTPUT_FILES:
                    shutil.copyfile(self.output / name, out / name)
            return
        out.mkdir(parents=True, exist_ok=True)
        ids = self.ids
        write_table(out / "clusters.parquet", {
            "id": ids,
            "cluster": self.cluster_ids,
            "cluster_size": self.clusters.sizes.astype(np.int64),
            "is_representative": self.clusters.is_representative,
            "oversized": self.clusters.oversized,
        })
        write_table(out / "pairs.parquet", {
            "left": [ids[i] for i in self.left],
            "right": [ids[i] for i in self.right],
            "score": self.scores.astype(np.float64),
        })
        write_json(out / "summary.json", self.summary)
        self.output = out

    def write_kept(self, path: str | os.PathLike[str], drop_oversized: bool = False, overwrite: bool = False) -> int:
        """Copy the input records of the documents to keep (one per cluster; with ``drop_oversized`` none
        of an oversized cluster) to ``path`` as JSONL, every field preserved; returns the count.

        ``path`` must not be the input, nor exist unless ``overwrite`` (:func:`~neardup.io.write.check_outputs`).
        """
        from neardup.io.keep import kept_ids, write_kept
        from neardup.io.write import check_outputs

        if self.source is None:
            raise ValueError("write_kept needs the input file: this result was made from Python objects")
        check_outputs(files=[path], inputs=[self.source], overwrite=overwrite)
        if self.output is not None and self._loader is not None:  # not loaded: read only what is kept
            kept = kept_ids(self.output / "clusters.parquet", drop_oversized)
        else:
            keep = self.clusters.is_representative
            if drop_oversized:
                keep = keep & ~self.clusters.oversized
            ids = self.ids
            kept = {ids[i] for i in np.flatnonzero(keep)}
        return write_kept(self.source, kept, path, id_field=self.id_field, on_error=self.on_error)


class MatchResult:
    """Each query's near-duplicates in a corpus: ``matches.parquet`` (query_id, corpus_id, score) and a
    summary with the leaked fraction per query set.

    ``query_ids``/``corpus_ids``/``scores`` list the matches, ordered by query then corpus order.
    """

    def __init__(self, query_ids: list[str], corpus_ids: list[str], scores: np.ndarray, summary: dict[str, Any],
                 output: str | os.PathLike[str] | None = None) -> None:
        self.query_ids, self.corpus_ids, self.scores = query_ids, corpus_ids, scores
        self.summary = summary
        self.output = Path(output) if output is not None else None

    def __len__(self) -> int:
        return len(self.query_ids)

    def matches(self) -> list[tuple[str, str, float]]:
        """Matches as (query id, corpus id, score)."""
        return [(q, c, float(s)) for q, c, s in zip(self.query_ids, self.corpus_ids, self.scores)]

    def leaked(self) -> set[str]:
        """Ids of the queries with at least one match."""
        return set(self.query_ids)

    def write(self, outdir: str | os.PathLike[str]) -> None:
        """Write matches.parquet and summary.json into ``outdir`` (atomically)."""
        from neardup.io.write import write_json, write_table

        out = Path(outdir)
        out.mkdir(parents=True, exist_ok=True)
        write_table(out / MATCH_FILES[0], {"query_id": self.query_ids, "corpus_id": self.corpus_ids,
                                              "score": np.asarray(self.scores, dtype=np.float64)})
        write_json(out / "summary.json", self.summary)
        self.output = out


__all__ = ["MATCH_FILES", "OUTPUT_FILES", "DedupResult", "MatchResult"]
