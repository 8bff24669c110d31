"""Evaluate the online detector the seed paper's way: replay a labelled stream, score each link.

Owns stream loading and ordering, the online scoring rule, replay through the real detector, the
parameter sweep (``tune``), the component split of one labelled day and the noisy BBC stream; must
not implement detection (it drives :class:`neardup.online.detector.Detector`).

Scoring, per document in stream order (labels: the ``cluster`` field, null = singleton):

* a *true duplicate* has an earlier document of its cluster; the first member of a cluster and
  every singleton are *true originals*;
* TP: a true duplicate answered ``duplicate`` with ``matched_id`` in its cluster;
* FP: a ``duplicate`` answer for a true original, or with ``matched_id`` outside the cluster;
* FN: a true duplicate not answered with a link into its cluster (a wrong link is an FP and an FN).

``canonical`` repeats the count with ``original_id`` (the canonical original) as the link.

Tuning sweeps (shingling unit, n, t or lsh_threshold, f, r_overlap, update rule) on the validation
stream: word and character shingles unless the base config fixes ``char`` (``auto`` is tuned as
``minhash``). The stream is replayed once per (unit, n, candidate setting) into a memory store, recording every candidate
with its score for each f and its update verdict; every other grid point is then a cheap re-run of
the detector's own decision functions on that trace. The chosen setting is then replayed for real
(SQLite store, timed) on validation and on test.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from neardup.calibrate import SAMPLE_DOCS
from neardup.config import ConfigError
from neardup.io.read import InputError, cluster_label, iter_records, text_problem
from neardup.io.write import atomic_text
from neardup.online.detector import Detector, OnlineConfig, latency_summary
from neardup.online.features import featurize, pack, sentence_sequences, unpack
from neardup.online.store import DocRecord, MemoryStore, open_store
from neardup.online.verify import Scored, choose, is_update, prefix_of, update_counts
from neardup.online.verify import overlap as overlap_score

ORDERS: tuple[str, ...] = ("given", "time")
GRID_F: tuple[float, ...] = (0.4, 0.6, 0.8, 1.0)
GRID_N: tuple[int, ...] = (3, 4)
GRID_T: tuple[int, ...] = (1, 2, 3, 4)
GRID_LSH: tuple[float, ...] = (0.1, 0.2, 0.3, 0.5)
#: Character shingles: sizes and LSH thresholds tried (their common n-grams need higher thresholds).
GRID_N_CHAR: tuple[int, ...] = (4, 5, 6)
GRID_LSH_CHAR: tuple[float, ...] = (0.3, 0.4, 0.5)
#: Shingling units ``tune`` tries when the base config does not fix one: words, then characters.
UNITS: tuple[bool, ...] = (False, True)
GRID_UPDATE: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (3, 1), (1, 0), (2, 0), (3, 0), (0, 1), (0, 2), (3, 2))
GRID_R: tuple[float, ...] = tuple(round(float(x), 2) for x in np.arange(0.1, 0.951, 0.05))
_TIME_FORMATS = ("%d-%b-%Y %H:%M:%S.%f", "%d-%b-%Y %H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


@dataclass
class Stream:
    """Labelled documents in the order they arrive.

    >>> s = Stream(ids=["a", "b"], texts=["x", "x"], labels=["c", "c"])
    >>> s.true_duplicates().tolist()
    [False, True]
    """

    ids: list[str]
    texts: list[str]
    labels: list[str | None]
    times: list[float] | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    name: str = ""

    def __len__(self) -> int:
        return len(self.ids)

    def true_duplicates(self) -> np.ndarray:
        """For each document: does an earlier document share its cluster?"""
        seen: set[Hashable] = set()
        out = np.zeros(len(self.ids), dtype=bool)
        for i, label in enumerate(self.labels):
            if label is not None:
                out[i] = label in seen
                seen.add(label)
        return out


def parse_time(value: Any) -> float:
    """Seconds since the epoch from an ISO string, a Reuters date ("2-MAR-1987 00:26:32.02") or a number.

    >>> parse_time("2-MAR-1987 00:26:32.02") < parse_time("1987-03-02T00:30:00")
    True
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a date string or a number, got {value!r}")
    text = value.strip()
    candidates = [text, text.replace("Z", "+00:00")]
    for c in candidates:
        try:
            dt = datetime.fromisoformat(c)
            break
        except ValueError:
            continue
    else:
        for fmt in _TIME_FORMATS:
            try:
                dt = datetime.strptime(text, fmt)  # %b matches any case ("MAR")
                break
            except ValueError:
                continue
        else:
            raise ValueError(f"unrecognised date {value!r} (use ISO 8601, '2-MAR-1987 00:26:32.02' or a number)")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def load_stream(path: str | os.PathLike[str], order: str = "given", time_field: str = "date",
                text_field: str = "text", id_field: str = "id", label_field: str = "cluster") -> Stream:
    """Read a labelled JSONL file as a stream, in file order or by ``time_field`` (stable).

    Errors name the file, line and field (:class:`~neardup.io.read.InputError`).
    """
    if order not in ORDERS:
        raise ConfigError(f"order must be one of {ORDERS}, got {order!r}")
    p = Path(path)
    ids: list[str] = []
    texts: list[str] = []
    labels: list[str | None] = []
    times: list[float] = []
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for lineno, rec in iter_records(p, [id_field, text_field, label_field, time_field]):
        doc_id = rec.get(id_field)
        if doc_id is None or isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            raise InputError(p, lineno, "missing or not a string/integer", id_field)
        doc_id = str(doc_id)
        if doc_id in seen:
            raise InputError(p, lineno, f"duplicate id {doc_id!r} (first seen on line {seen[doc_id]})", id_field)
        seen[doc_id] = lineno
        text = rec.get(text_field)
        if not isinstance(text, str):
            raise InputError(p, lineno, "missing or not a string", text_field)
        for name, value in ((id_field, doc_id), (text_field, text)):
            if problem := text_problem(value):
                raise InputError(p, lineno, problem, name)
        label = rec.get(label_field)
        if order == "time":
            try:
                times.append(parse_time(rec.get(time_field)))
            except ValueError as exc:
                raise InputError(p, lineno, str(exc), time_field) from None
        ids.append(doc_id)
        texts.append(text)
        labels.append(cluster_label(label, p, lineno, label_field))
        records.append(rec)
    if not ids:
        raise InputError(p, None, "no documents found (empty input)")
    if all(label is None for label in labels):
        raise InputError(p, None, f"no document has a {label_field!r} label: nothing to evaluate against", label_field)
    stream = Stream(ids, texts, labels, times or None, records, p.parent.name or p.stem)
    if order == "time":
        perm = sorted(range(len(ids)), key=lambda i: times[i])
        stream = Stream([ids[i] for i in perm], [texts[i] for i in perm], [labels[i] for i in perm],
                        [times[i] for i in perm], [records[i] for i in perm], stream.name)
    return stream


def score_links(labels: Sequence[str | None], links: Sequence[int | None]) -> dict[str, Any]:
    """Online precision/recall/F1: ``links[i]`` is the stream index document i was linked to (None: original).

    >>> m = score_links(["a", "a", None, "b", "b"], [None, 0, 1, None, 2])
    >>> m["tp"], m["fp"], m["fn"], round(m["f1"], 3)
    (1, 2, 1, 0.4)
    """
    true_dup = Stream(list(map(str, range(len(labels)))), [""] * len(labels), list(labels)).true_duplicates()
    tp = fp = fn = 0
    for i, link in enumerate(links):
        good = link is not None and labels[i] is not None and labels[link] == labels[i]
        if link is not None:
            if good:
                tp += 1
            else:
                fp += 1
        if true_dup[i] and not good:
            fn += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn,
            "n_true_duplicates": int(true_dup.sum()), "n_flagged": tp + fp}


def score_answers(stream: Stream, answers: Sequence[Any]) -> dict[str, Any]:
    """Scores of detector answers (``matched_id``/``original_id``) for a stream, plus the canonical variant."""
    index = {doc_id: i for i, doc_id in enumerate(stream.ids)}
    links = [index[a.matched_id] if a.status == "duplicate" else None for a in answers]
    canon = [index[a.original_id] if a.status == "duplicate" else None for a in answers]
    out = score_links(stream.labels, links)
    c = score_links(stream.labels, canon)
    out["canonical"] = {k: c[k] for k in ("precision", "recall", "f1", "tp", "fp", "fn")}
    return out


def replay(stream: Stream, config: OnlineConfig, store_url: str | None = None,
           progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Feed the stream one document at a time to a fresh detector and score its answers.

    ``store_url`` must name an empty store; default: a temporary SQLite file (WAL,
    ``synchronous=FULL``), so the latencies include a durable commit per document.
    """
    tmp = None
    if store_url is None:
        tmp = tempfile.mkdtemp(prefix="neardup-replay-")
        store_url = f"sqlite:///{os.path.join(tmp, 'replay.db')}"
    store = open_store(store_url)
    try:
        if store.counts()["documents"]:
            raise ConfigError(f"{store.location}: replay needs an empty store")
        detector = Detector(store, config)
        if detector.needs_calibration:  # as `online load` seeds a new store: profile the first documents
            detector.calibrate(stream.texts[:SAMPLE_DOCS])
        t0 = time.perf_counter()
        answers = []
        for i, (doc_id, text) in enumerate(zip(stream.ids, stream.texts)):
            answers.append(detector.add(doc_id, text))
            if progress is not None:
                progress(i + 1)
        seconds = time.perf_counter() - t0
    finally:
        store.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    out = score_answers(stream, answers)
    out.update(method=detector.config.method, char=detector.config.char, n=detector.config.n,
               calibration=detector.calibration, n_docs=len(stream), store=store.kind,
               latency=latency_summary([a.latency_ms for a in answers]), seconds=round(seconds, 3),
               docs_per_second=round(len(stream) / seconds, 1) if seconds > 0 else None)
    return out


# ----------------------------------------------------------------------------------------------
# Tuning
# ----------------------------------------------------------------------------------------------


@dataclass
class _Cand:
    index: int  # stream position of the candidate
    votes: int
    scores: dict[float, float]
    new_numbers: int
    new_sentences: int


def _trace(stream: Stream, config: OnlineConfig, fs: Sequence[float], max_top: int,
           cache: dict[int, list[Any]]) -> list[list[_Cand]]:
    """Every document's candidates (best ``max_top`` by votes, at the loosest t) with scores per f."""
    cfg = config.replace(top_candidates=max_top, t=0 if config.method == "sketch" else config.t)
    detector = Detector(MemoryStore(), cfg)
    step = detector.step
    unit = (config.n, bool(config.char))
    if unit not in cache:
        cache[unit] = [featurize(t, config.n, config.normalize, bool(config.char)) for t in stream.texts]
    feats = cache[unit]
    store = detector.store
    index_of_seq: dict[int, int] = {}
    stored: dict[int, Any] = {}
    out: list[list[_Cand]] = []
    for i, f in enumerate(feats):
        probe = step.probe(f)
        cands: list[_Cand] = []
        if not f.empty:
            ranked = step.candidates(probe, store, max_top)
            sentences = None
            for seq, votes in ranked:
                j = index_of_seq[seq]
                old = stored[j]
                scores = {}
                for fr in fs:
                    a = prefix_of(f.seq, f.n_tokens, cfg.n, fr, cfg.f_short, cfg.short_len, cfg.char)
                    b = prefix_of(old.seq, old.n_tokens, cfg.n, fr, cfg.f_short, cfg.short_len, cfg.char)
                    scores[fr] = overlap_score(a, b)
                if sentences is None:
                    sentences = sentence_sequences(stream.texts[i], cfg.n, cfg.update_sentence_tokens,
                                                   cfg.normalize, cfg.char)
                k_num, k_sent = update_counts(f, sentences, old, cfg.update_sentence_shared)
                cands.append(_Cand(j, votes, scores, k_num, k_sent))
        out.append(cands)
        seq = store.insert(DocRecord(seq=0, id=stream.ids[i], status="original", original_id=stream.ids[i],
                                     features=pack(f)), probe.keys)
        index_of_seq[seq] = i
        stored[i] = unpack(pack(f))
    return out


def simulate(trace: list[list[_Cand]], min_votes: int, top: int, f: float, r_overlap: float,
             update_rule: bool, min_numbers: int = 1, min_sentences: int = 1
             ) -> tuple[list[int | None], list[int | None]]:
    """The detector's decisions from a trace: (matched index, canonical original index) per document."""
    matched: list[int | None] = []
    original: list[int] = []
    canon: list[int | None] = []
    for i, cands in enumerate(trace):
        chosen = [c for c in cands if c.votes >= min_votes][:top]
        scored = [Scored(c.index, c.votes, c.scores[f],
                         "update" if update_rule and is_update(c.new_numbers, c.new_sentences, min_numbers,
                                                               min_sentences) else None) for c in chosen]
        match, _ = choose(scored, r_overlap)
        if match is None:
            matched.append(None)
            canon.append(None)
            original.append(i)
        else:
            matched.append(match.seq)
            canon.append(original[match.seq])
            original.append(original[match.seq])
    return matched, canon


def _grid(method: str, char: bool = False) -> list[dict[str, Any]]:
    """The candidate-step settings swept for a method: t (sketch) or lsh_threshold (minhash, by unit)."""
    if method == "sketch":
        return [{"t": t} for t in GRID_T]
    return [{"lsh_threshold": x} for x in (GRID_LSH_CHAR if char else GRID_LSH)]


def tuning_base(base: OnlineConfig) -> OnlineConfig:
    """The config a sweep starts from: ``auto`` is tuned as the method it resolves to (``minhash``), with
    its other unset settings at ``OnlineConfig.ours`` values.

    >>> tuning_base(OnlineConfig(method="auto")).method, tuning_base(OnlineConfig(method="auto")).top_candidates
    ('minhash', 5)
    """
    if base.resolved:
        return base
    ours = OnlineConfig.ours()
    return base.replace(method="minhash", **{k: getattr(ours, k) for k in ("f", "r_overlap", "top_candidates")
                                             if k in base.unset})


def sweep(stream: Stream, base: OnlineConfig, update_rules: Sequence[bool] = (False, True),
          ns: Sequence[int] | None = None, fs: Sequence[float] = GRID_F, rs: Sequence[float] = GRID_R,
          progress: Callable[[str], None] | None = None, units: Sequence[bool] | None = None
          ) -> list[dict[str, Any]]:
    """Validation metrics of every grid point (params merged with precision/recall/f1).

    ``units``: the shingling units tried (default: the base config's if it fixes ``char``, else both);
    ``ns``: the n-gram sizes (default :data:`GRID_N` for words, :data:`GRID_N_CHAR` for characters).
    """
    base = tuning_base(base)
    if units is None:
        units = (bool(base.char),) if "char" not in base.unset else UNITS
    trials: list[dict[str, Any]] = []
    for char in units:
        trials += _sweep_unit(stream, base, char, update_rules, ns or (GRID_N_CHAR if char else GRID_N), fs, rs,
                              progress)
    return trials


def _sweep_unit(stream: Stream, base: OnlineConfig, char: bool, update_rules: Sequence[bool], ns: Sequence[int],
                fs: Sequence[float], rs: Sequence[float], progress: Callable[[str], None] | None
                ) -> list[dict[str, Any]]:
    trials: list[dict[str, Any]] = []
    cache: dict[Any, list[Any]] = {}
    top = base.top_candidates
    unit = "char" if char else "word"
    for n in ns:
        settings = _grid(base.method, char)
        traces: dict[Any, list[list[_Cand]]] = {}
        if base.method == "sketch":
            traces[None] = _trace(stream, base.replace(n=n, char=char), fs, max(top, 10), cache)
        for setting in settings:
            if progress is not None:
                progress(f"{unit} n={n} {setting}")
            if base.method == "sketch":
                trace, min_votes = traces[None], setting["t"] + 1
            else:
                trace = _trace(stream, base.replace(n=n, char=char, **setting), fs, top, cache)
                min_votes = base.min_bands
            variants = [(False, 0, 0)] if False in update_rules else []
            if True in update_rules:
                variants += [(True, mn, ms) for mn, ms in GRID_UPDATE]
            for f in fs:
                for upd, mn, ms in variants:
                    for r in rs:
                        links, canon = simulate(trace, min_votes, top, f, r, upd, mn, ms)
                        m = score_links(stream.labels, links)
                        params = {"char": char, "n": n, **setting, "f": f, "r_overlap": r, "update_rule": upd}
                        if upd:
                            params.update(update_min_numbers=mn, update_min_sentences=ms)
                        trials.append({**params, "precision": m["precision"], "recall": m["recall"], "f1": m["f1"]})
    return trials


def best_params(trials: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Highest F1; ties: higher precision, then the higher r_overlap, smaller n, update rule off.

    >>> best_params([{"f1": 0.5, "precision": 1, "r_overlap": 0.3, "n": 3, "update_rule": False},
    ...              {"f1": 0.5, "precision": 1, "r_overlap": 0.4, "n": 3, "update_rule": False}])["r_overlap"]
    0.4
    """
    best = max(trials, key=lambda t: (round(t["f1"], 12), round(t["precision"], 12), t["r_overlap"], -t["n"],
                                      not t["update_rule"], not t.get("char", False)))
    return {k: v for k, v in best.items() if k not in ("precision", "recall", "f1")}


def tried(trials: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per shingling unit: the values searched of each setting, the number of trials and the best point.

    >>> t = tried([{"char": True, "n": 5, "f": 0.6, "r_overlap": 0.5, "update_rule": False, "f1": 0.9,
    ...             "precision": 1.0, "recall": 0.8}])
    >>> t["char"]["grid"]["n"], t["char"]["best"]["f1"]
    ([5], 0.9)
    """
    out: dict[str, Any] = {}
    for char in sorted({bool(t.get("char", False)) for t in trials}):
        mine = [t for t in trials if bool(t.get("char", False)) == char]
        grid = {k: sorted({t[k] for t in mine if k in t})
                for k in ("n", "t", "lsh_threshold", "f", "r_overlap", "update_rule") if any(k in t for t in mine)}
        best = best_params(mine)
        top = next(t for t in mine if all(t.get(k) == v for k, v in best.items()))
        out["char" if char else "word"] = {"trials": len(mine), "grid": grid,
                                           "best": {**best, **{k: top[k] for k in ("precision", "recall", "f1")}}}
    return out


def tune(validation: Stream, test: Stream | None, base: OnlineConfig, update_rules: Sequence[bool] = (False, True),
         store_url: Callable[[], str | None] | None = None, progress: Callable[[str], None] | None = None,
         units: Sequence[bool] | None = None) -> dict[str, Any]:
    """Pick settings on ``validation`` (best F1), then replay them for real on validation and test.

    Returns ``method``, ``params`` (the chosen settings), ``config`` (all settings), ``tried`` (per
    shingling unit: the grid searched and its best validation point), ``validation`` and ``test`` (as
    :func:`replay`), ``n_trials``, ``seconds`` and ``trials``.
    """
    t0 = time.perf_counter()
    base = tuning_base(base)
    trials = sweep(validation, base, update_rules=update_rules, progress=progress, units=units)
    params = best_params(trials)
    chosen = base.replace(**params)
    make_url = store_url or (lambda: None)
    out: dict[str, Any] = {
        "method": base.method,
        "params": {**params, "top_candidates": chosen.top_candidates},
        "tried": tried(trials),
        "config": chosen.to_dict(),
        "validation": replay(validation, chosen, make_url()),
        "test": replay(test, chosen, make_url()) if test is not None else None,
        "n_trials": len(trials),
        "seconds": round(time.perf_counter() - t0, 3),
        "trials": trials,
    }
    return out


# ----------------------------------------------------------------------------------------------
# Data preparation: a component split of one labelled day, and a noisy BBC stream
# ----------------------------------------------------------------------------------------------


def split_components(path: str | os.PathLike[str], out_a: str | os.PathLike[str], out_b: str | os.PathLike[str],
                     n: int = 5, max_df: int = 60, min_overlap: float = 0.01, label_field: str = "cluster",
                     text_field: str = "text", id_field: str = "id") -> dict[str, Any]:
    """Split a labelled file into two halves that share no word ``n``-gram link, for honest tuning.

    Documents are linked when their ``n``-gram sets overlap (coefficient) by at least ``min_overlap``,
    ignoring n-grams held by more than ``max_df`` documents (boilerplate); labelled clusters are kept
    whole. Components go, largest first, to the half with fewer documents; each half keeps the
    file's order and every field. Returns sizes and cluster counts.
    """
    from neardup.candidates.allpairs import shared_shingle_pairs
    from neardup.cluster import connected_components
    from neardup.config import ShingleConfig
    from neardup.text.normalize import normalize_many
    from neardup.text.shingle import shingle_many

    p = Path(path)
    numbered = list(iter_records(p, [id_field, text_field, label_field]))
    records = [rec for _, rec in numbered]
    if not records:
        raise InputError(p, None, "no documents found (empty input)")
    for line, rec in numbered:
        if not isinstance(rec.get(text_field), str):
            raise InputError(p, line, "missing or not a string", text_field)
        cluster_label(rec.get(label_field), p, line, label_field)
    sets = shingle_many(normalize_many([r[text_field] for r in records]), ShingleConfig(n=n))
    left, right, shared = shared_shingle_pairs(sets, max_df=max_df)
    sizes = sets.sizes
    denom = np.minimum(sizes[left], sizes[right])
    keep = (denom > 0) & (shared / np.maximum(denom, 1) >= min_overlap)
    left, right = left[keep], right[keep]
    by_label: dict[str, int] = {}
    extra_l, extra_r = [], []
    for i, rec in enumerate(records):
        label = rec.get(label_field)
        if label is not None:
            first = by_label.setdefault(str(label), i)
            if first != i:
                extra_l.append(first)
                extra_r.append(i)
    left = np.concatenate([left, np.array(extra_l, dtype=np.int64)])
    right = np.concatenate([right, np.array(extra_r, dtype=np.int64)])
    comp = connected_components(len(records), left, right)
    members: dict[int, list[int]] = {}
    for i, c in enumerate(comp.tolist()):
        members.setdefault(c, []).append(i)
    halves: list[list[int]] = [[], []]
    for c in sorted(members, key=lambda c: (-len(members[c]), c)):
        target = 0 if len(halves[0]) <= len(halves[1]) else 1
        halves[target].extend(members[c])
    stats: dict[str, Any] = {"n_docs": len(records), "n_components": len(members),
                             "largest_component": max(len(m) for m in members.values())}
    for name, half, out in (("a", halves[0], out_a), ("b", halves[1], out_b)):
        half.sort()
        with atomic_text(out) as fh:
            for i in half:
                fh.write(json.dumps(records[i], ensure_ascii=False) + "\n")
        labels = [records[i].get(label_field) for i in half]
        counts: dict[Any, int] = {}
        for label in labels:
            if label is not None:
                counts[label] = counts.get(label, 0) + 1
        stats[name] = {"path": str(out), "n_docs": len(half), "n_clusters": sum(1 for v in counts.values() if v > 1),
                       "n_duplicates": sum(v - 1 for v in counts.values())}
    return stats


def make_noisy_stream(path: str | os.PathLike[str], out_a: str | os.PathLike[str], out_b: str | os.PathLike[str],
                      seed: int = 0, copy_rate: float = 0.4, update_rate: float = 0.1,
                      start: str = "2005-01-03T00:00:00+00:00") -> dict[str, Any]:
    """A labelled noisy stream from clean articles (e.g. ``bbc_news/docs.jsonl``), split in two halves.

    Every article is an original at a random time over 30 days. With probability ``copy_rate`` it
    gets a near-duplicate 1-48 h later (one of: keyboard typos; light OCR noise; an abridged copy,
    10-60% cut from the end, with light typos; a web-aggregator reprint), and with 15% of those a
    second one. With probability ``update_rate`` it gets an *update* (every number changed, 1-3
    sentences added: :func:`neardup.synth.negatives.make_hard_negative`), which is a new original.
    Articles with an exact twin in the source (``exact_dup_group``) share a cluster. Halves are
    split by article (twins together); ``date`` holds the arrival time, ``noise`` what was done.
    """
    from neardup.synth import NoiseSpec, OpSpec, apply_noise, make_hard_negative

    p = Path(path)
    records = [rec for _, rec in iter_records(p, ["id", "text", "exact_dup_group"])]
    if not records:
        raise InputError(p, None, "no documents found (empty input)")
    rng = random.Random(seed)
    base = datetime.fromisoformat(start)
    kinds = {
        "typos": "typos",
        "ocr": "ocr-light",
        "abridged": NoiseSpec("abridged", (OpSpec("abridge", 0.1, 0.6), OpSpec("typo", 0.003))),
        "reprint": "web-aggregator",
    }
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        key = rec.get("exact_dup_group") or f"doc:{rec['id']}"
        groups.setdefault(key, []).append(rec)
    keys = sorted(groups)
    rng.shuffle(keys)
    halves: list[list[dict[str, Any]]] = [[], []]
    counts = {"originals": 0, "copies": 0, "updates": 0, "exact_twins": 0}
    for g, key in enumerate(keys):
        half = halves[g % 2]
        cluster = f"c:{key}"
        for k, rec in enumerate(groups[key]):
            hours = rng.uniform(0, 30 * 24)
            doc = {"id": str(rec["id"]), "text": rec["text"], "cluster": cluster,
                   "date": (base + timedelta(hours=hours)).isoformat(), "noise": "twin" if k else "original"}
            half.append(doc)
            counts["exact_twins" if k else "originals"] += 1
            if rng.random() < copy_rate:
                n_copies = 2 if rng.random() < 0.15 else 1
                for c in range(n_copies):
                    kind = rng.choice(sorted(kinds))
                    noisy = apply_noise(rec["text"], kinds[kind], seed=seed + c, doc_id=str(rec["id"]))
                    half.append({"id": f"{rec['id']}~{kind}{c}", "text": noisy.text, "cluster": cluster,
                                 "date": (base + timedelta(hours=hours + rng.uniform(1, 48))).isoformat(),
                                 "noise": kind + ":" + ",".join(noisy.ops)})
                    counts["copies"] += 1
            if rng.random() < update_rate:
                upd = make_hard_negative(rec["text"], "update", seed=seed, doc_id=str(rec["id"]))
                half.append({"id": f"{rec['id']}~update", "text": upd.text, "cluster": None,
                             "date": (base + timedelta(hours=hours + rng.uniform(1, 48))).isoformat(),
                             "noise": "update:" + ",".join(upd.ops)})
                counts["updates"] += 1
    stats: dict[str, Any] = {"seed": seed, **counts}
    for name, half, out in (("a", halves[0], out_a), ("b", halves[1], out_b)):
        with atomic_text(out) as fh:
            for doc in half:
                fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
        labels = [d["cluster"] for d in half if d["cluster"] is not None]
        stats[name] = {"path": str(out), "n_docs": len(half), "n_duplicates": len(labels) - len(set(labels))}
    return stats
