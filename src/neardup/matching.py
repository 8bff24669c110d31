"""Cross-collection matching (decontamination): for each document of a query collection, its near-duplicates in a corpus.

Owns the composition query index -> streamed corpus batches -> probe -> verify -> result; must not
implement stages (each is the method's own operation: ``represent``, ``keys``, ``score_*``), and never
de-duplicates the corpus itself.

The query side (a test set: small) is read whole, represented and indexed in memory (its key tables for
a keyed method, :class:`~neardup.candidates.crossindex.KeyIndex`; its vectors for a neural one,
:class:`~neardup.candidates.vectors.VectorIndex`); the corpus (a training set: large) is streamed in
batches and discarded batch by batch, so memory depends on the query side only. A pair is a candidate
as the method says (sharing ``min_shared`` key tables, passing its own filter), or for a vector method
when the query is among the corpus document's ``k`` nearest with cosine >= the threshold. Weighted
scores take their IDF weights from the query collection (a corpus shingle unseen there counts as
df = 1), which keeps every batch's scores independent of the others. Output: ``matches.parquet``
(query_id, corpus_id, score) and ``summary.json`` with the leaked fraction per query set. Either side may be
a Python input's :class:`~neardup.io.frames.Rows` (read whole, the corpus then cut into batches in memory).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from neardup import methods
from neardup.arrays import distinct
from neardup.calibrate import resolve
from neardup.candidates.crossindex import KeyIndex
from neardup.cluster import passes
from neardup.config import ConfigError, DedupConfig, ReadConfig
from neardup.io.frames import Rows
from neardup.io.read import InputError, iter_batches, read_corpus
from neardup.jit import pays
from neardup.methods.base import KeyedMethod, Method, Representation, VectorMethod
from neardup.pipeline import prepare
from neardup.progress import progress_bar
from neardup.results import MatchResult
from neardup.text.shingle import ShingleSets
from neardup.verify.frequencies import FrequencyTable
from neardup.verify.overlap import idf

_EMPTY = np.empty(0, dtype=np.int64)


#: Candidate pairs whose sketch rows :meth:`_KeyedProbe._screen` gathers at a time.
SCREEN_PAIRS = 1 << 15


class _QueryWeights:
    """IDF weights from the query collection's document frequencies; unseen shingles count as df = 1. Counted in
    a hash table where compiled loops pay (a lookup 4x faster than a binary search of the distinct values:
    5,000 stories' 2.9M values in 0.1 against 0.4 s), else by NumPy."""

    def __init__(self, sets: ShingleSets, power: float) -> None:
        values = np.asarray(sets.values)
        self.n, self.power = len(sets), power
        self.table: FrequencyTable | None = None
        if pays(int(values.size)):
            table = FrequencyTable(max_bytes=96 * max(1, int(values.size)))  # room for every value distinct
            if table.add(values):
                self.table = table
        if self.table is None:
            self.uniq, self.counts = np.unique(values, return_counts=True)

    def of(self, values: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return idf(np.maximum(self.table.lookup(values), 1), self.n, self.power)
        pos = np.minimum(np.searchsorted(self.uniq, values), max(self.uniq.size - 1, 0))
        df = np.where((self.uniq.size > 0) & (self.uniq[pos] == values), self.counts[pos] if self.uniq.size else 1, 1)
        return idf(df, self.n, self.power)


class _KeyedProbe:
    """The query side of a keyed method: its key tables, sets, sketches and weights."""

    def __init__(self, method: KeyedMethod, rep: Representation) -> None:
        self.method, self.rep = method, rep
        docs = np.flatnonzero(~rep.empty).astype(np.int64)
        self.index = KeyIndex(*method.keys(rep, docs, range(method.n_tables())), max_docs=method.max_key_docs)
        self.weights: _QueryWeights | None = None
        if method.weighted():
            self.weights = _QueryWeights(rep.sets, method.config.verify.idf_power)
            self.query_weights = self.weights.of(np.asarray(rep.sets.values))

    def candidates(self, batch: Representation) -> tuple[np.ndarray, np.ndarray]:
        """Pairs (query, batch row) the method's rule makes candidates."""
        rows = np.flatnonzero(~batch.empty).astype(np.int64)
        if rows.size == 0:
            return _EMPTY, _EMPTY
        q, p = self.index.probe(*self.method.keys(batch, rows, range(self.method.n_tables())))
        if q.size == 0:
            return _EMPTY, _EMPTY
        width = len(batch)
        codes, counts = np.unique(q * width + p, return_counts=True)
        codes = codes[counts >= self.method.min_shared]
        q, p = codes // width, codes % width
        if self.rep.sketch is not None and batch.sketch is not None and q.size:
            keep = self._screen(batch, q, p)
            if keep is not None:
                q, p = q[keep], p[keep]
        return q, p

    def _screen(self, batch: Representation, q: np.ndarray, p: np.ndarray) -> np.ndarray | None:
        """The method's screen of pairs by their sketches (:meth:`KeyedMethod.keep_candidates`; None: it keeps
        all), :data:`SCREEN_PAIRS` pairs at a time, their rows gathered into the same two buffers. At once, a
        batch's candidates of character shingles (410k pairs) gathered 420 MB of rows into fresh pages: a
        quarter of a run's time, and half its peak memory."""
        assert self.rep.sketch is not None and batch.sketch is not None
        ours, theirs = np.asarray(self.rep.sketch), np.asarray(batch.sketch)
        block = min(q.size, SCREEN_PAIRS)
        a = np.empty((block,) + ours.shape[1:], dtype=ours.dtype)
        b = np.empty((block,) + theirs.shape[1:], dtype=theirs.dtype)
        sizes_q, sizes_p = self.rep.sets.sizes, batch.sets.sizes
        keep = np.empty(q.size, dtype=bool)
        for lo in range(0, q.size, block):
            qs, ps = q[lo : lo + block], p[lo : lo + block]
            m = qs.size
            np.take(ours, qs, axis=0, out=a[:m])
            np.take(theirs, ps, axis=0, out=b[:m])
            got = self.method.keep_candidates(a[:m], b[:m], sizes_q[qs], sizes_p[ps])
            if got is None:
                return None
            keep[lo : lo + m] = got
        return keep

    def scores(self, batch: Representation, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Scores of pairs (query, batch row)."""
        method = self.method
        if method.scores_from == "sketch":
            assert self.rep.sketch is not None and batch.sketch is not None
            return method.score_sketches(np.asarray(self.rep.sketch[q]), np.asarray(batch.sketch[p]))
        rows = distinct(p)  # the batch's documents in a pair: only theirs are weighed and scored
        sets = batch.sets.take(rows)
        joint = ShingleSets.concat([self.rep.sets, sets])
        weights = None
        if self.weights is not None:
            weights = np.concatenate([self.query_weights, self.weights.of(sets.values)])
        return method.score_sets(joint, q, np.searchsorted(rows, p) + len(self.rep), weights)

    def matches(self, batch: Representation) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        q, p = self.candidates(batch)
        s = self.scores(batch, q, p) if q.size else np.empty(0, dtype=np.float64)
        keep = passes(s, self.method.threshold)
        return q[keep], p[keep], s[keep], int(q.size)


class _VectorProbe:
    """The query side of a vector method: its embeddings in an index (FAISS flat or USearch HNSW)."""

    def __init__(self, method: VectorMethod, rep: Representation) -> None:
        from neardup.candidates.vectors import VectorIndex

        assert rep.vectors is not None
        self.method, self.rep = method, rep
        self.k = min(method.config.embed.k, len(rep))
        self.index = VectorIndex(rep.vectors.docs, method.config.embed.index)

    def matches(self, batch: Representation) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Candidates as the method's neighbour search takes them (cosine from :meth:`VectorMethod.floor`, within
        the search's rounding), scored by the method and cut at its threshold, as a run over one collection does."""
        from neardup.candidates.vectors import near

        assert batch.vectors is not None
        emb = batch.vectors.docs
        sims, nb = self.index.search(emb, self.k)
        rows = np.repeat(np.arange(len(batch)), self.k)
        close = (nb.ravel() >= 0) & near(sims.ravel(), self.method.floor()) & (np.abs(emb).sum(axis=1)[rows] > 0)
        q, p = nb.ravel()[close], rows[close]
        s = self.method.score(Representation.concat([self.rep, batch]), q, p + len(self.rep))
        keep = passes(s, self.method.threshold)
        return q[keep], p[keep], s[keep], int(q.size)


def match(queries: str | os.PathLike[str] | Rows, corpus: str | os.PathLike[str] | Rows,
          output: str | os.PathLike[str] | None = None,
          config: DedupConfig | None = None, *, group_field: str | None = None, read: ReadConfig | None = None,
          batch_docs: int = 5000, progress: bool = False) -> MatchResult:
    """Find, for every query document, the corpus documents that are near-duplicates of it.

    ``group_field`` names a query field that says which query set a document belongs to (e.g. a
    benchmark task); the leaked fraction is reported per set (default: one set, the file name).
    With ``output``, ``matches.parquet`` and ``summary.json`` are written there.
    """
    read = read or ReadConfig()
    qcorpus = (queries.corpus(read, label_field=group_field) if isinstance(queries, Rows)
               else read_corpus(queries, read, label_field=group_field))
    cfg = resolve(config or DedupConfig(), qcorpus.texts)
    method: Method = methods.get(cfg)
    if not method.matchable:
        supported = ", ".join(name for name in methods.names() if methods.method_class(name).matchable)
        raise ConfigError(f"match supports --method {supported}; got {cfg.method!r}")
    t_start = time.perf_counter()
    prep = prepare(qcorpus, cfg, progress=progress, max_chars=read.max_chars)
    probe: _KeyedProbe | _VectorProbe = (_KeyedProbe(method, prep.rep) if isinstance(method, KeyedMethod)
                                         else _VectorProbe(method, prep.rep))  # type: ignore[arg-type]
    out_q: list[np.ndarray] = []
    out_c: list[str] = []
    out_s: list[np.ndarray] = []
    n_corpus = n_candidates = 0
    bar = progress_bar(progress, desc="matching corpus", unit="doc", leave=False)
    batches = corpus.batches(read, batch_docs) if isinstance(corpus, Rows) else iter_batches(corpus, read, batch_docs)
    for batch in batches:
        n_corpus += len(batch)
        rep = method.represent([d.text for d in batch], read.max_chars)
        q, p, s, n_cand = probe.matches(rep)
        n_candidates += n_cand
        out_q.append(q)
        out_c.extend(batch[i].id for i in p.tolist())
        out_s.append(s)
        bar.update(len(batch))
    bar.close()
    if n_corpus == 0:
        raise InputError(_name(corpus), None, "no documents found (empty input)")
    q_idx = np.concatenate(out_q) if out_q else _EMPTY
    scores = np.concatenate(out_s) if out_s else np.empty(0, dtype=np.float64)
    params = method.describe()
    if isinstance(probe, _VectorProbe):
        params["k"] = probe.k
    result = _result(qcorpus.ids, qcorpus.labels if group_field else None, _name(queries), _name(corpus), q_idx,
                     out_c, scores, n_corpus, n_candidates, time.perf_counter() - t_start, params)
    result.typed(queries.public_ids() if isinstance(queries, Rows) else None,
                 corpus.public_ids() if isinstance(corpus, Rows) else None)
    result.read_as = (read.text_field, queries.id_field if isinstance(queries, Rows) else read.id_field, read.on_error)
    if output is not None:
        result.write(output)
    return result


def _name(data: str | os.PathLike[str] | Rows) -> str:
    """A path as given; a Python input by its kind (``pandas DataFrame``)."""
    return f"<{data.name}>" if isinstance(data, Rows) else str(data)


def _result(query_ids: list[str], groups: list[str | None] | None, queries: str | os.PathLike[str],
            corpus: str | os.PathLike[str], q_idx: np.ndarray, out_c: list[str], scores: np.ndarray, n_corpus: int,
            n_candidates: int, seconds: float, params: dict[str, Any]) -> MatchResult:
    """The matches ordered by query then corpus order, and the summary (leaked fraction per query set)."""
    order = np.argsort(q_idx, kind="stable")
    leaked = np.zeros(len(query_ids), dtype=bool)
    leaked[q_idx] = True
    set_names = groups if groups is not None else [Path(queries).name] * len(query_ids)
    per_set: dict[str, dict[str, Any]] = {}
    for name, hit in zip(set_names, leaked):
        row = per_set.setdefault("(none)" if name is None else str(name), {"n_queries": 0, "n_leaked": 0})
        row["n_queries"] += 1
        row["n_leaked"] += int(hit)
    for row in per_set.values():
        row["leaked_fraction"] = row["n_leaked"] / row["n_queries"]
    summary = {
        "queries": str(queries), "corpus": str(corpus), "n_queries": len(query_ids), "n_corpus_docs": n_corpus,
        "n_candidates": int(n_candidates), "n_matches": int(q_idx.size), "n_leaked_queries": int(leaked.sum()),
        "leaked_fraction": float(leaked.mean()) if leaked.size else 0.0, "per_set": per_set, "params": params,
        "seconds": round(seconds, 3), "corpus_docs_per_second": round(n_corpus / seconds, 1) if seconds else None,
    }
    return MatchResult([query_ids[i] for i in q_idx[order]], [out_c[i] for i in order], scores[order], summary,
                       queries=list(query_ids))


__all__ = ["match"]
