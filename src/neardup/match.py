"""Cross-corpus matching (decontamination): for each document of a query collection, its near-duplicates in a corpus.

Owns the composition query index -> streamed corpus batches -> probe -> verify -> write; must not
implement stages, and never de-duplicates the corpus itself.

The query side (a test set: small) is read whole, shingled, sketched and indexed in memory; the
corpus (a training set: large) is streamed in batches and discarded batch by batch, so memory
depends on the query side only. Weighted scores take their IDF weights from the query collection
(a corpus shingle unseen there counts as df = 1), which keeps every batch's scores independent of
the others. Output: ``matches.parquet`` (query_id, corpus_id, score) and ``summary.json`` with the
leaked fraction (queries with at least one match) per query set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from neardup.candidates.crossindex import BandIndex
from neardup.candidates.lsh import optimal_bands_rows
from neardup.config import ConfigError, DedupConfig, config_to_dict
from neardup.io.read import DEFAULT_MAX_CHARS, Corpus, InputError, iter_documents, iter_records, read_corpus
from neardup.io.write import write_json, write_table
from neardup.pipeline import Prepared, prepare, represent_batch
from neardup.text.shingle import ShingleSets
from neardup.verify.overlap import score_pairs


def corpus_batches(corpus: str | os.PathLike[str], text_field: str, id_field: str, batch_docs: int
                   ) -> Iterator[tuple[list[str], list[str]]]:
    """Validated (ids, texts) batches of the streamed side; nothing of a batch is kept after it."""
    ids: list[str] = []
    texts: list[str] = []
    for doc in iter_documents(iter_records(corpus, [id_field, text_field]), str(corpus), text_field, id_field,
                              id_hashes=True):
        ids.append(doc.id)
        texts.append(doc.text)
        if len(ids) >= batch_docs:
            yield ids, texts
            ids, texts = [], []
    if ids:
        yield ids, texts


def _query_weights(query_sets: ShingleSets) -> tuple[np.ndarray, np.ndarray, int]:
    uniq, counts = np.unique(query_sets.values, return_counts=True)
    return uniq, counts, len(query_sets)


def _lookup_weights(values: np.ndarray, table: tuple[np.ndarray, np.ndarray, int], power: float) -> np.ndarray:
    uniq, counts, n = table
    pos = np.minimum(np.searchsorted(uniq, values), max(uniq.size - 1, 0))
    df = np.where((uniq.size > 0) & (uniq[pos] == values), counts[pos] if uniq.size else 1, 1)
    return np.log((n + 1) / df) ** power


def match(queries: str | os.PathLike[str], corpus: str | os.PathLike[str], outdir: str | os.PathLike[str],
          config: DedupConfig | None = None, *, group_field: str | None = None, text_field: str = "text",
          id_field: str = "id", batch_docs: int = 5000, progress: bool = False,
          max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
    """Find, for every query document, the corpus documents that are near-duplicates of it.

    ``group_field`` names a query field that says which query set a document belongs to (e.g. a
    benchmark task); the leaked fraction is reported per set (default: one set, the file name).
    """
    cfg = config or DedupConfig()
    if cfg.method not in ("minhash", "retsim", "biencoder"):
        raise ConfigError(f"match supports --method minhash, retsim or biencoder, got {cfg.method!r}")
    t_start = time.perf_counter()
    qcorpus = read_corpus(queries, text_field=text_field, id_field=id_field, label_field=group_field)
    groups = qcorpus.labels if group_field else None
    prep = prepare(qcorpus, cfg, progress=progress)
    if cfg.method != "minhash":
        return _match_vectors(prep, qcorpus, groups, queries, corpus, outdir, cfg, text_field, id_field, batch_docs,
                              progress, max_chars, t_start)
    assert prep.signatures is not None
    mh = cfg.minhash
    if mh.bands is not None and mh.rows is not None:
        bands, rows = mh.bands, mh.rows
    else:
        bands, rows = optimal_bands_rows(mh.lsh_threshold or float(cfg.threshold), mh.num_perm)
    index = BandIndex(prep.signatures, bands, rows, exclude=prep.sets.sizes == 0)
    weighted = cfg.verify.score.startswith("weighted-")
    table = _query_weights(prep.sets) if weighted else None
    q_weights = _lookup_weights(prep.sets.values, table, cfg.verify.idf_power) if table else None

    out_q: list[np.ndarray] = []
    out_c: list[str] = []
    out_s: list[np.ndarray] = []
    n_corpus = 0
    n_candidates = 0
    bar = tqdm(desc="matching corpus", unit="doc", disable=not progress, leave=False)
    for batch_ids, batch_texts in corpus_batches(corpus, text_field, id_field, batch_docs):
        n_corpus += len(batch_ids)
        sets, sig = represent_batch(batch_texts, cfg, max_chars)
        assert sig is not None
        q, p = index.probe(sig, exclude=sets.sizes == 0)
        n_candidates += q.size
        if q.size:
            joint = ShingleSets.concat([prep.sets, sets])
            weights = None
            if table is not None and q_weights is not None:
                weights = np.concatenate([q_weights, _lookup_weights(sets.values, table, cfg.verify.idf_power)])
            if cfg.verify.score == "none":
                s = np.mean(prep.signatures[q] == sig[p], axis=1)
            else:
                s = score_pairs(joint, q, p + len(prep.sets), cfg.verify.score, weights=weights)
            keep = s >= float(cfg.threshold) - 1e-12
            out_q.append(q[keep])
            out_c.extend(batch_ids[i] for i in p[keep])
            out_s.append(s[keep])
        bar.update(len(batch_ids))
    bar.close()
    if n_corpus == 0:
        raise InputError(corpus, None, "no documents found (empty input)")
    q_idx = np.concatenate(out_q) if out_q else np.empty(0, dtype=np.int64)
    scores = np.concatenate(out_s) if out_s else np.empty(0, dtype=np.float64)
    return _finish(qcorpus, groups, queries, corpus, outdir, cfg, q_idx, out_c, scores, n_corpus, n_candidates,
                   t_start, {"bands": bands, "rows": rows})


def _finish(qcorpus: Corpus, groups: list[str | None] | None, queries: str | os.PathLike[str],
            corpus: str | os.PathLike[str], outdir: str | os.PathLike[str], cfg: DedupConfig, q_idx: np.ndarray,
            out_c: list[str], scores: np.ndarray, n_corpus: int, n_candidates: int, t_start: float,
            extra_params: dict[str, Any]) -> dict[str, Any]:
    """Write matches.parquet and summary.json (leaked fraction per query set)."""
    order = np.argsort(q_idx, kind="stable")  # by query, then corpus order
    out = Path(outdir)
    write_table(out / "matches.parquet", {
        "query_id": [qcorpus.ids[i] for i in q_idx[order]],
        "corpus_id": [out_c[i] for i in order],
        "score": scores[order].astype(np.float64),
    })
    leaked = np.zeros(len(qcorpus), dtype=bool)
    leaked[q_idx] = True
    set_names = groups if groups is not None else [Path(queries).name] * len(qcorpus)
    per_set: dict[str, dict[str, Any]] = {}
    for name, hit in zip(set_names, leaked):
        key = "(none)" if name is None else str(name)
        row = per_set.setdefault(key, {"n_queries": 0, "n_leaked": 0})
        row["n_queries"] += 1
        row["n_leaked"] += int(hit)
    for row in per_set.values():
        row["leaked_fraction"] = row["n_leaked"] / row["n_queries"]
    seconds = time.perf_counter() - t_start
    params = config_to_dict(cfg)
    params.update(extra_params)
    summary = {
        "queries": str(queries), "corpus": str(corpus), "n_queries": len(qcorpus), "n_corpus_docs": n_corpus,
        "n_candidates": int(n_candidates), "n_matches": int(q_idx.size), "n_leaked_queries": int(leaked.sum()),
        "leaked_fraction": float(leaked.mean()) if leaked.size else 0.0, "per_set": per_set, "params": params,
        "seconds": round(seconds, 3), "corpus_docs_per_second": round(n_corpus / seconds, 1) if seconds else None,
    }
    write_json(out / "summary.json", summary)
    return summary


def _match_vectors(prep: Prepared, qcorpus: Corpus, groups: list[str | None] | None,
                   queries: str | os.PathLike[str], corpus: str | os.PathLike[str], outdir: str | os.PathLike[str],
                   cfg: DedupConfig, text_field: str, id_field: str, batch_docs: int, progress: bool,
                   max_chars: int, t_start: float) -> dict[str, Any]:
    """Neural matching: the queries' embeddings in an index, each corpus batch embedded and searched."""
    from neardup.represent.embeddings import embed_texts
    from neardup.represent.encoder import require_extra

    assert prep.embeddings is not None
    qemb = prep.embeddings.docs
    k = min(cfg.embed.k, len(qcorpus))
    if cfg.embed.index == "hnsw":
        from neardup.candidates.vectors import hnsw_index

        index = hnsw_index(qemb)

        def search(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            m = index.search(x, k)
            return 1.0 - np.asarray(m.distances, np.float32).reshape(-1, k), np.asarray(m.keys, np.int64).reshape(-1, k)
    else:
        faiss = require_extra("faiss", "neural")
        index = faiss.IndexFlatIP(qemb.shape[1])
        index.add(np.ascontiguousarray(qemb))

        def search(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            d, nb = index.search(np.ascontiguousarray(x), k)
            return d, nb.astype(np.int64)

    threshold = float(cfg.threshold)
    out_q: list[np.ndarray] = []
    out_c: list[str] = []
    out_s: list[np.ndarray] = []
    n_corpus = 0
    bar = tqdm(desc="matching corpus", unit="doc", disable=not progress, leave=False)
    for ids, texts in corpus_batches(corpus, text_field, id_field, batch_docs):
        n_corpus += len(ids)
        emb = embed_texts(texts, cfg, max_chars).docs
        sims, nb = search(emb)
        rows = np.repeat(np.arange(len(ids)), k)
        keep = (nb.ravel() >= 0) & (sims.ravel() >= threshold - 1e-6) & (np.abs(emb).sum(axis=1)[rows] > 0)
        out_q.append(nb.ravel()[keep])
        out_c.extend(ids[i] for i in rows[keep])
        out_s.append(sims.ravel()[keep].astype(np.float64))
        bar.update(len(ids))
    bar.close()
    if n_corpus == 0:
        raise InputError(corpus, None, "no documents found (empty input)")
    q_idx = np.concatenate(out_q) if out_q else np.empty(0, dtype=np.int64)
    scores = np.concatenate(out_s) if out_s else np.empty(0, dtype=np.float64)
    return _finish(qcorpus, groups, queries, corpus, outdir, cfg, q_idx, out_c, scores, n_corpus, int(q_idx.size),
                   t_start, {"k": k, "index": cfg.embed.index})
