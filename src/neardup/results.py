"""The typed results every entry point returns: :class:`DedupResult` (one collection, any engine) and
:class:`MatchResult` (queries against a corpus).

Owns the result types, their views (groups, representatives, pairs by id, a pair's evidence, the texts
of documents, the kept and removed rows of the input: ``selected``, ``duplicates``) and their files; must not
compute them. A Python input's ids keep their type in every view (its files name documents by ``str(id)``).
A result written by a chunked engine is read from its output folder when first asked for;
:meth:`DedupResult.load` opens any output folder, and refuses one whose files were written by different runs
(:func:`check_same_run`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup.cluster import Clusters, with_links

if TYPE_CHECKING:
    import pyarrow as pa

    from neardup.audit import ClusterView
    from neardup.io.frames import Rows

CLUSTER_COLUMNS: tuple[str, ...] = ("id", "kept", "copy_of", "score", "cluster", "cluster_size", "is_representative",
                                    "oversized", "length")
PAIR_COLUMNS: tuple[str, ...] = ("left", "right", "score")
OUTPUT_FILES: tuple[str, ...] = ("clusters.parquet", "pairs.parquet", "summary.json")
MATCH_FILES: tuple[str, ...] = ("matches.parquet", "summary.json")
#: Written beside them unless evidence is turned off (see :mod:`neardup.evidence` for its columns).
EVIDENCE_FILE = "evidence.parquet"
#: The Parquet files of a de-duplication's output folder, each tagged with its run's id (as summary.json is).
#: Every scored candidate pair at or above the run's score floor (``summary.json``: ``decision.score_floor``):
#: what :meth:`DedupResult.rethreshold` decides from.
SCORES_FILE = "scores.parquet"
RUN_FILES: tuple[str, ...] = ("clusters.parquet", "pairs.parquet", EVIDENCE_FILE, SCORES_FILE)



def _take(names: Any, rows: Any) -> Any:
    """The Arrow array ``names`` at the row numbers ``rows`` (a fresh array: no offset, no nulls)."""
    from neardup.io.arrow import arrow_array

    return names.take(arrow_array(np.asarray(rows, dtype=np.int64)))

class MixedRunError(ValueError):
    """An output folder whose files were written by different runs (one replacing it was stopped half-way)."""


def _run_name(run_id: str | None) -> str:
    return f"run {run_id[:12]}" if run_id else "a run without an id (an older version)"


def check_same_run(outdir: str | os.PathLike[str], run_id: str | None, names: Iterable[str] = RUN_FILES) -> None:
    """Refuse an output folder whose files ``names`` (those present) were not written by the run ``run_id``
    (its ``summary.json``'s; None: an older version's, whose files carry no id): a
    :class:`MixedRunError` naming the folder and the files.

    >>> import neardup, tempfile, pathlib, pyarrow.parquet as pq
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> _ = neardup.dedup(["a b c d e", "a b c d e!"], output=out)
    >>> run_id = json.loads((out / "summary.json").read_text())["run_id"]
    >>> check_same_run(out, run_id)
    >>> check_same_run(out, "0" * 32)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    neardup.results.MixedRunError: ... holds files from different runs: summary.json is of run 000000000000, ...
    """
    from neardup.io.write import parquet_run_id

    out = Path(outdir)
    wrong = [(name, found) for name in names if (out / name).exists()
             and (found := parquet_run_id(out / name)) != run_id]
    if wrong:
        others = ", ".join(f"{name} of {_run_name(found)}" for name, found in wrong)
        raise MixedRunError(f"{out} holds files from different runs: summary.json is of {_run_name(run_id)}, "
                            f"{others} (a run replacing it was stopped); re-run with --overwrite")


def _file_rows(source: str, text_field: str, id_field: str, on_error: str) -> Rows:
    """The records of an input file read back whole, as the :class:`~neardup.io.frames.Rows` of an Arrow table
    (what ``selected`` and ``clean`` give for a path)."""
    import pyarrow as pa

    from neardup.io.frames import rows_of
    from neardup.io.read import iter_records, source_exists

    if not source_exists(source):
        raise ValueError(f"{source}: the input of this run is not there any more; say where it is now "
                         "(DedupResult.load(outdir, source=...))")
    skipped: list[dict[str, Any]] | None = [] if on_error == "skip" else None
    table = pa.Table.from_pylist([rec for _, rec in iter_records(source, skipped=skipped)])
    return rows_of(table, text_field=text_field, id_field=id_field, check=False)


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
    the result was written to, if any. :meth:`evidence` tells why each pair matched; :meth:`cluster`
    gathers a cluster's documents, texts and evidence for reading.

    A Python input's ids keep their type in every view (a list of texts' are its row numbers); :attr:`ids`
    names documents as the files do (``str(id)``). :attr:`selected` and :attr:`duplicates` give the input's kept
    and removed rows as the same kind of object as the input.

    >>> import neardup
    >>> r = neardup.dedup(["the cat sat on the mat", "The cat sat on the mat!", "a dog"])
    >>> r.groups(), r.representatives
    ([[0, 1]], [1, 2])
    >>> r.duplicates
    [{'id': 0, 'text': 'the cat sat on the mat', 'copy_of': 1, 'score': 1.0}]
    """

    def __init__(self, ids: list[str] | None = None, clusters: Clusters | None = None,
                 left: np.ndarray | None = None, right: np.ndarray | None = None, scores: np.ndarray | None = None,
                 summary: dict[str, Any] | None = None, output: str | os.PathLike[str] | None = None,
                 source: str | None = None, id_field: str = "id", text_field: str = "text") -> None:
        self._ids, self._clusters = ids, clusters
        self._left, self._right, self._scores = left, right, scores
        self.summary: dict[str, Any] = summary or {}
        self.output = Path(output) if output is not None else None
        self.source = source  # the input file, for :meth:`write_kept` and :meth:`texts`
        self.id_field, self.text_field = id_field, text_field
        self.on_error = "raise"  # the input's error policy, for :meth:`write_kept` (it reads the input again)
        self._loader: Callable[[], None] | None = None
        self._texts: Sequence[str] | None = None  # the texts, for a run made in memory
        self._views: list[tuple[str, np.ndarray]] | None = None
        self._evidence: pa.Table | None = None
        #: The id of the run whose files are in :attr:`output` (None: not written, or by an older version).
        self.run_id: str | None = None
        self._scored: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # candidates at or above the floor
        self._lengths: np.ndarray | None = None  # characters of each text: the order of the decisions
        self._input: Rows | None = None  # a Python input's rows: ``selected``, ``duplicates``
        self._public: Callable[[str], Any] | None = None  # a document's name (str) -> its id as given (None: same)

    def set_input(self, rows: Rows) -> None:
        """Keep the Python input this result was made from: its ids as given (an int stays an int in every view)
        and its rows, which :attr:`selected` and :attr:`duplicates` select from."""
        self._input, self._public = rows, rows.public_ids()

    def _typed(self, names: Iterable[str]) -> list[Any]:
        """Documents' ids as given, from their names (``str(id)``) in the run."""
        public = self._public
        return list(names) if public is None else [None if n is None else public(n) for n in names]

    @classmethod
    def from_output(cls, outdir: str | os.PathLike[str], summary: dict[str, Any], source: str | None = None,
                    id_field: str = "id", text_field: str = "text", run_id: str | None = None) -> DedupResult:
        """The result a chunked engine wrote to ``outdir`` (clusters and pairs read on first use, and
        refused unless they are of the run ``run_id``, :func:`check_same_run`)."""
        result = cls(summary=summary, output=outdir, source=source, id_field=id_field, text_field=text_field)
        result.run_id = run_id
        result._loader = result._load_output
        return result

    @classmethod
    def load(cls, outdir: str | os.PathLike[str], source: str | os.PathLike[str] | None = None) -> DedupResult:
        """The result in an output folder (``clusters.parquet``, ``pairs.parquet``, ``summary.json`` and,
        if written, ``evidence.parquet``); its input is the file ``summary.json`` names, unless ``source``
        says where it is now. A folder without ``summary.json`` (not an output folder, or its run did not
        finish) is a FileNotFoundError; one whose files are of different runs a :class:`MixedRunError`.

        >>> import neardup, tempfile
        >>> out = tempfile.mkdtemp()
        >>> _ = neardup.dedup(["the cat sat on the mat", "The cat sat on the mat!", "a dog"], output=out)
        >>> DedupResult.load(out).groups()
        [['0', '1']]
        """
        out = Path(outdir)
        path = out / "summary.json"
        if not path.exists():
            raise FileNotFoundError(2, "no summary.json: not a neardup output folder, or its run did not finish",
                                    str(path))
        from neardup.io.write import SUMMARY_RUN_ID

        summary = json.loads(path.read_text(encoding="utf-8"))
        run_id = summary.get(SUMMARY_RUN_ID)
        check_same_run(out, run_id)
        named = summary.get("input")
        given = str(source) if source is not None else (named if named and named not in ("<memory>", "<stdin>")
                                                         else None)
        read = summary.get("read") or {}
        return cls.from_output(out, summary, source=given, id_field=read.get("id_field", "id"),
                               text_field=read.get("text_field", "text"), run_id=run_id)

    def keep_scored(self, left: np.ndarray, right: np.ndarray, scores: np.ndarray, lengths: np.ndarray) -> None:
        """Keep the run's scored candidates (at or above its floor) and its texts' lengths, which
        :meth:`rethreshold` decides from and :meth:`write` writes (``scores.parquet``, ``length``)."""
        self._scored, self._lengths = (left, right, scores), np.asarray(lengths, dtype=np.int64)

    def _scored_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The scored candidates as document indices, held or read from the output's ``scores.parquet``."""
        self._ready()
        if self._scored is None:
            from neardup.io.arrow import numpy_of
            from neardup.io.parquet import read_parquet

            path = None if self.output is None else self.output / SCORES_FILE
            if path is None or not path.exists():
                raise ValueError("this run kept no scored candidates (scores.parquet): run it again to re-threshold")
            check_same_run(self.output, self.run_id, [SCORES_FILE])
            import pyarrow.compute as pc

            table = read_parquet(path, PAIR_COLUMNS)
            names = self._names()  # each id's place among the documents, by Arrow's hash table
            self._scored = tuple(numpy_of(pc.index_in(table[side], value_set=names)).astype(np.int64)
                                 for side in ("left", "right")) + (numpy_of(table["score"]).astype(np.float64),)
        return self._scored

    def rethreshold(self, threshold: float, all_pairs: bool = False) -> DedupResult:
        """The result of this run at another ``threshold``, decided again from its scored candidates (from its score
        floor to its ceiling, ``summary["decision"]``'s ``score_floor`` and ``score_ceiling``: under ``greedy`` a run
        scores only the pairs its decisions up to the ceiling read) without computing anything else: the result a run at
        that threshold gives (where the method screens candidates by their sketch, as in character n-grams'
        default, up to the pairs that screen would drop). Its evidence is not computed (``show`` finds the shared
        passages when asked).

        >>> import neardup
        >>> texts = ["Oil rose on Monday in London after the OPEC meeting", "Oil rose on Monday in London after the OPEC talks"]
        >>> r = neardup.dedup(texts, method="minhash", verify__score="overlap", shingle__n=2,
        ...                   engine=neardup.EngineConfig(score_ceiling=None))  # any threshold up to 1 (default: 1.25x)
        >>> r.scores.round(3).tolist(), r.rethreshold(0.9).groups(), r.rethreshold(0.5).groups()
        ([0.889], [], [[0, 1]])
        """
        import time

        from neardup.cluster import decide
        from neardup.config import ClusterConfig
        from neardup.engine.summary import ClusterCounts, rethresholded

        t0 = time.perf_counter()
        summary = self.summary
        params = summary.get("params") or {}
        floor = (summary.get("decision") or {}).get("score_floor")
        ceiling = float((summary.get("decision") or {}).get("score_ceiling") or 1.0)
        if floor is None:
            raise ValueError("this run kept no scored candidates below its threshold: run it again to re-threshold")
        if float(threshold) < float(floor) - 1e-12 or float(threshold) > ceiling + 1e-9:
            more = "" if ceiling >= 1.0 else (" (its ceiling: it scored only the pairs its decisions up to there read; "
                                              "EngineConfig(score_ceiling=None) scores every one)")
            raise ValueError(f"threshold must be between this run's score floor {floor} and {ceiling}{more}, "
                             f"got {threshold}")
        cfg = ClusterConfig(**(params.get("cluster") or {}))
        if cfg.representative not in ("longest", "first") or cfg.representative_field is not None:
            raise ValueError(f"re-threshold needs --representative longest or first (this run: {cfg.representative})")
        left, right, scores = self._scored_pairs()
        lengths = self._lengths
        assert lengths is not None
        ids = self.ids
        clusters, written, n_verified = decide(len(ids), left, right, scores, lengths, cfg, None, float(threshold),
                                               all_pairs)
        counts = ClusterCounts.of(clusters, lambda ix: [ids[i] for i in ix])
        new = rethresholded(summary, counts, float(threshold), n_verified, int(written[0].size),
                            time.perf_counter() - t0)
        out = DedupResult(ids=ids, clusters=clusters, left=written[0], right=written[1], scores=written[2], summary=new,
                          source=self.source, id_field=self.id_field, text_field=self.text_field)
        out.on_error = self.on_error
        out._names_cache = getattr(self, "_names_cache", None)  # the same documents: their ids as Arrow, once
        out.keep_scored(left, right, scores, lengths)
        out._texts = self._texts
        out._input, out._public = self._input, self._public
        return out

    def keep_texts(self, texts: Sequence[str], views: list[tuple[str, np.ndarray]]) -> None:
        """Keep a run's texts and its pairs' views (:meth:`~neardup.methods.base.Method.views`), so
        :meth:`evidence` can be computed when first asked for (the in-memory engine does this)."""
        self._texts, self._views = texts, views

    def _load_output(self) -> None:
        from neardup.io.arrow import numpy_of
        from neardup.io.parquet import present_columns, read_parquet

        assert self.output is not None
        check_same_run(self.output, self.run_id, RUN_FILES[:2])  # replaced since the summary was read?
        table = read_parquet(self.output / "clusters.parquet", present_columns(self.output / "clusters.parquet",
                                                                              CLUSTER_COLUMNS))
        ids = table["id"].to_pylist()
        index = {doc_id: i for i, doc_id in enumerate(ids)}
        labels = np.fromiter((index[c] for c in table["cluster"].to_pylist()), dtype=np.int64, count=len(ids))
        self._ids = ids
        clusters = Clusters(labels=labels, sizes=numpy_of(table["cluster_size"]).astype(np.int64),
                            oversized=numpy_of(table["oversized"]).astype(bool))
        pairs = read_parquet(self.output / "pairs.parquet", PAIR_COLUMNS)
        self._left = np.fromiter((index[x] for x in pairs["left"].to_pylist()), dtype=np.int64, count=pairs.num_rows)
        self._right = np.fromiter((index[x] for x in pairs["right"].to_pylist()), dtype=np.int64, count=pairs.num_rows)
        self._scores = numpy_of(pairs["score"]).astype(np.float64)
        if "length" in table.column_names:
            self._lengths = numpy_of(table["length"]).astype(np.int64)
        if "score" in table.column_names:  # the decisions as written
            link = numpy_of(table["score"]).astype(np.float64)
            linked = np.flatnonzero(~np.isnan(link))
            clusters = Clusters(clusters.labels, clusters.sizes, clusters.oversized, linked, link[linked])
        else:  # a folder written before the decision columns: the links among its pairs
            clusters = with_links(clusters, self._left, self._right, self._scores)
        self._clusters = clusters

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
    def cluster_ids(self) -> list[Any]:
        """For each document, the id of its cluster's representative (the cluster id)."""
        ids = self.ids
        return self._typed(ids[i] for i in self.clusters.labels)

    @property
    def representatives(self) -> list[Any]:
        """Ids of the documents kept: one per cluster, chosen by the cluster's representative policy
        (by default the longest text, then the first seen)."""
        ids = self.ids
        return self._typed(ids[i] for i in np.flatnonzero(self.clusters.is_representative))

    def pairs_by_id(self) -> list[tuple[Any, Any, float]]:
        """Verified duplicate pairs as (left id, right id, score)."""
        ids = self.ids
        left, right = self._typed(ids[a] for a in self.left), self._typed(ids[b] for b in self.right)
        return [(a, b, float(s)) for a, b, s in zip(left, right, self.scores)]

    def groups(self) -> list[list[Any]]:
        """Clusters with more than one document, as lists of ids in input order (largest first; then by the
        first id, or for a Python input's ids, by the first one's row)."""
        out: dict[int, list[int]] = {}
        ids, clusters = self.ids, self.clusters
        for i, label in enumerate(clusters.labels):
            if clusters.sizes[i] > 1:
                out.setdefault(int(label), []).append(i)
        if self._public is None:
            return sorted(([ids[i] for i in g] for g in out.values()), key=lambda g: (-len(g), g[0]))
        return [self._typed(ids[i] for i in g) for g in sorted(out.values(), key=lambda g: (-len(g), g[0]))]

    @property
    def has_evidence(self) -> bool:
        """Whether :meth:`evidence` can be given (evidence was not turned off)."""
        return (self._evidence is not None or self._views is not None
                or (self.output is not None and (self.output / EVIDENCE_FILE).exists()))

    def evidence_table(self) -> pa.Table:
        """The evidence of every pair as an Arrow table, in pair order (columns: :mod:`neardup.evidence`)."""
        from neardup.evidence import evidence_table, read_evidence

        if self._evidence is None:
            if self._views is not None and self._texts is not None:
                ids, texts = self.ids, self._texts
                self._evidence = evidence_table([ids[i] for i in self.left], [ids[i] for i in self.right], self.left,
                                                self.right, self.scores, self._views,
                                                lambda docs: [texts[d] for d in docs.tolist()])
            elif self.output is not None and (self.output / EVIDENCE_FILE).exists():
                check_same_run(self.output, self.run_id, (EVIDENCE_FILE,))
                self._evidence = read_evidence(self.output / EVIDENCE_FILE)
            else:
                raise ValueError("this run has no evidence (it was made with evidence turned off)")
        return self._evidence

    def evidence(self) -> list[dict[str, Any]]:
        """Why each pair matched, in pair order: ``{left, right, score, views, spans}`` (see :mod:`neardup.evidence`).

        >>> import neardup
        >>> r = neardup.dedup(["Oil fell 3% in London on Monday.", "oil fell 3% in London on Monday", "A dog."])
        >>> e = r.evidence()[0]
        >>> e["views"], [s["text"] for s in e["spans"]]
        ([{'view': 'word 4-grams', 'score': 1.0}], ['Oil fell 3% in London on Monday'])
        """
        return self.evidence_table().to_pylist()

    def texts(self, ids: Iterable[Any]) -> dict[str, str]:
        """The texts of documents ``ids`` (held by a run made in memory, else read again from the input), by
        their names (``str(id)``)."""
        wanted = {doc_id if isinstance(doc_id, str) else str(doc_id) for doc_id in ids}
        if self._texts is not None:
            return {doc_id: self._texts[i] for i, doc_id in enumerate(self.ids) if doc_id in wanted}
        if self.source is None:
            raise ValueError("the texts are not at hand: this result was made from Python objects and not kept")
        from neardup.config import ReadConfig
        from neardup.io.read import read_texts, source_exists

        if not source_exists(self.source):
            raise ValueError(f"{self.source}: the input of this run is not there any more; say where it is now "
                             "(DedupResult.load(outdir, source=...), neardup show --input)")

        encoding = (self.summary.get("read") or {}).get("encoding", "utf-8")  # of texts that are not UTF-8
        return read_texts(self.source, wanted, ReadConfig(id_field=self.id_field, text_field=self.text_field,
                                                          on_error="skip", encoding=encoding))

    def cluster(self, key: Any, max_docs: int | None = None) -> ClusterView:
        """The cluster named ``key`` (a cluster id, or the id of any of its documents) for reading: its
        documents with their texts, the representative first, and its pairs' evidence (see
        :func:`neardup.audit.cluster_view`)."""
        from neardup.audit import cluster_view

        return cluster_view(self, key if isinstance(key, str) else str(key), max_docs=max_docs)

    def _input_rows(self) -> Rows:
        """The input's rows: the Python object the run was made from, or its input file read back whole."""
        if self._input is None:
            if self.source is None:
                raise ValueError("the input is not at hand: this result was loaded from its output folder without "
                                 "it (DedupResult.load(outdir, source=...)), or made from a Corpus")
            self._input = _file_rows(self.source, self.text_field, self.id_field, self.on_error)
        return self._input

    @property
    def selected(self) -> Any:
        """The input's kept rows (one per cluster, singletons included), in input order, every column kept, as the
        same kind of object as the input: a list of texts or of records, a pandas or polars DataFrame, an Arrow
        Table (also for an Arrow Dataset), a ``datasets.Dataset``. For a path, the kept records read back as an
        Arrow Table (``write_kept`` streams them to a file instead).

        >>> import neardup, pandas as pd
        >>> df = pd.DataFrame({"text": ["a cat sat on the mat", "A cat sat on the mat!", "a dog"], "n": [1, 2, 3]})
        >>> neardup.dedup(df).selected
                            text  n
        1  A cat sat on the mat!  2
        2                  a dog  3
        """
        rows, ids = self._input_rows(), self.ids
        return rows.take([rows.row_of(ids[i]) for i in np.flatnonzero(self.clusters.is_representative)])

    @property
    def duplicates(self) -> Any:
        """The input's removed rows, in input order, as :attr:`selected` gives the kept ones, with two columns
        more: ``copy_of``, the id of the kept document each is a copy of, and ``score``, their pair's score (null
        where a graph algorithm joined them through others); ``neardup_copy_of`` / ``neardup_score`` where the
        input has columns of those names. A list of texts gives records ``{id, text, copy_of, score}``.
        """
        rows, ids = self._input_rows(), self.ids
        clusters = self.clusters
        removed = np.flatnonzero(~clusters.is_representative)
        link = clusters.link_scores_of(0, len(ids))
        labels = clusters.labels
        copy_of = [ids[labels[i]] for i in removed]
        scores = [None if np.isnan(link[i]) else float(link[i]) for i in removed]
        return rows.take_linked([rows.row_of(ids[i]) for i in removed], self._typed(copy_of), scores)

    def write(self, outdir: str | os.PathLike[str]) -> None:
        """Write clusters.parquet, pairs.parquet, summary.json and (unless evidence was turned off)
        evidence.parquet into ``outdir`` (atomically), tagged with a new run id; an earlier run's
        summary.json there is removed first and the new one written last (:func:`~neardup.io.write.begin_outputs`),
        and an earlier run's evidence.parquet is removed when this result has none."""
        from neardup.io.write import SUMMARY_RUN_ID, begin_outputs, new_run_id, write_json, write_table

        out = Path(outdir)
        if self.output is not None and self._loader is not None:  # not loaded: copy the files
            if out.resolve() != self.output.resolve():
                self._copy_output(out)
            return
        run_id = new_run_id()
        names = self._names()  # the ids as the files hold them; each column takes its rows from them
        evidence = self.evidence_table() if self.has_evidence else None  # read before any file is replaced
        begin_outputs(out)
        write_table(out / "clusters.parquet", self.decision_columns(), run_id=run_id)
        write_table(out / "pairs.parquet", {
            "left": _take(names, self.left),
            "right": _take(names, self.right),
            "score": self.scores.astype(np.float64),
        }, run_id=run_id)
        if self._scored is not None:
            write_table(out / SCORES_FILE, {"left": _take(names, self._scored[0]),
                                            "right": _take(names, self._scored[1]),
                                            "score": np.asarray(self._scored[2], dtype=np.float64)}, run_id=run_id)
        else:
            (out / SCORES_FILE).unlink(missing_ok=True)
        if evidence is not None:
            from neardup.evidence import write_evidence

            write_evidence(out / EVIDENCE_FILE, [evidence], run_id=run_id)
        else:
            (out / EVIDENCE_FILE).unlink(missing_ok=True)
        write_json(out / "summary.json", {**self.summary, SUMMARY_RUN_ID: run_id})  # last: the folder is complete
        self.output, self.run_id = out, run_id

    def _names(self) -> Any:
        """The documents' ids as the files hold them (strings), an Arrow array made once per result."""
        from neardup.io.arrow import arrow_array

        if getattr(self, "_names_cache", None) is None or len(self._names_cache) != len(self.ids):
            self._names_cache = arrow_array([str(x) for x in self.ids] if self.ids and not isinstance(self.ids[0], str)
                                            else list(self.ids))
        return self._names_cache

    def decision_columns(self) -> dict[str, Any]:
        """The columns of ``clusters.parquet`` (:data:`~neardup.io.write.CLUSTER_SCHEMA`): each document's
        cluster and the decision on it, ``kept`` or a copy of ``copy_of`` with ``score``."""
        from neardup.io.arrow import arrow_array, with_nulls

        names = self._names()
        clusters = self.clusters
        kept = clusters.is_representative
        cluster = _take(names, clusters.labels)
        link = clusters.link_scores_of(0, len(names))
        return {
            "id": names,
            "kept": kept,
            "copy_of": with_nulls(_take(names, clusters.labels), ~kept),
            "score": with_nulls(arrow_array(np.nan_to_num(link)), ~np.isnan(link)),
            "cluster": cluster,
            "cluster_size": clusters.sizes.astype(np.int64),
            "is_representative": kept,
            "oversized": clusters.oversized,
            "length": (np.zeros(len(names), dtype=np.int64) if self._lengths is None else self._lengths),
        }

    @property
    def decisions(self) -> list[dict[str, Any]]:
        """One decision per document, in input order: ``{id, kept, copy_of, score}`` (``copy_of``: the id of the
        kept document a removed one is a copy of; ``score``: their verified pair's score).

        >>> import neardup
        >>> neardup.dedup(["the cat sat on the mat", "The cat sat on the mat!", "a dog"]).decisions[0]
        {'id': 0, 'kept': False, 'copy_of': 1, 'score': 1.0}
        """
        cols = self.decision_columns()
        ids, copy_of = self._typed(cols["id"].to_pylist()), self._typed(cols["copy_of"].to_pylist())
        return [{"id": i, "kept": k, "copy_of": c, "score": s} for i, k, c, s in
                zip(ids, cols["kept"].tolist(), copy_of, cols["score"].to_pylist())]

    def _copy_output(self, out: Path) -> None:
        """Copy this result's output folder (not read yet) into ``out``: its files as they are (one run's,
        checked), summary.json last."""
        from neardup.io.write import begin_outputs

        assert self.output is not None
        check_same_run(self.output, self.run_id)
        begin_outputs(out)
        for name in RUN_FILES:
            if (self.output / name).exists():
                shutil.copyfile(self.output / name, out / name)
            else:
                (out / name).unlink(missing_ok=True)
        shutil.copyfile(self.output / "summary.json", out / "summary.json")

    def write_kept(self, path: str | os.PathLike[str], drop_oversized: bool = False, overwrite: bool = False) -> int:
        """Copy the input records of the documents to keep (one per cluster; with ``drop_oversized`` none
        of an oversized cluster) to ``path``, every field preserved, in the format its name asks for (``.jsonl``,
        ``.jsonl.gz``, ``.parquet``, ``.csv``: :func:`~neardup.io.keep.keep_format`); returns the count.

        ``path`` must not be the input, nor exist unless ``overwrite`` (:func:`~neardup.io.write.check_outputs`).
        """
        from neardup.io.keep import kept_ids, write_kept
        from neardup.io.write import check_outputs

        if self.source is None:
            raise ValueError("write_kept needs the input file: this result was made from Python objects "
                             "(result.selected gives their kept rows)")
        check_outputs(files=[path], inputs=[self.source], overwrite=overwrite)
        if self.output is not None and self._loader is not None:  # not loaded: read only what is kept
            check_same_run(self.output, self.run_id, RUN_FILES[:1])
            kept = kept_ids(self.output / "clusters.parquet", drop_oversized)
        else:
            keep = self.clusters.is_representative
            if drop_oversized:
                keep = keep & ~self.clusters.oversized
            ids = self.ids
            kept = {ids[i] for i in np.flatnonzero(keep)}
        return write_kept(self.source, kept, path, id_field=self.id_field, on_error=self.on_error,
                          encoding=(self.summary.get("read") or {}).get("encoding"))


class MatchResult:
    """Each query's near-duplicates in a corpus: ``matches.parquet`` (query_id, corpus_id, score) and a
    summary with the leaked fraction per query set.

    ``query_ids``/``corpus_ids``/``scores`` list the matches, ordered by query then corpus order; a Python
    input's ids keep their type (a list of texts' are its row numbers). :meth:`clean` gives the queries without
    a duplicate in the corpus.
    """

    def __init__(self, query_ids: list[Any], corpus_ids: list[Any], scores: np.ndarray, summary: dict[str, Any],
                 output: str | os.PathLike[str] | None = None, queries: list[Any] | None = None) -> None:
        self.query_ids, self.corpus_ids, self.scores = query_ids, corpus_ids, scores
        self.summary = summary
        self.output = Path(output) if output is not None else None
        self.queries = queries  # every query's id, in input order (None: only the matched ones are known)
        #: How the queries were read (text field, id field: None for a Python input's ``id`` or row numbers, error
        #: policy): :meth:`clean` reads the queries it is given the same way.
        self.read_as: tuple[str, str | None, str] = ("text", None, "raise")

    def typed(self, queries: Callable[[str], Any] | None, corpus: Callable[[str], Any] | None) -> None:
        """Give the ids as the inputs had them: ``queries`` / ``corpus`` map a document's name in the run
        (``str(id)``) to its id (None: the same)."""
        if queries is not None:
            self.query_ids = [queries(q) for q in self.query_ids]
            if self.queries is not None:
                self.queries = [queries(q) for q in self.queries]
        if corpus is not None:
            self.corpus_ids = [corpus(c) for c in self.corpus_ids]

    def clean(self, queries: Any) -> Any:
        """The queries (as given to :func:`neardup.match`: the same object, or the same file) with no duplicate in
        the corpus, in input order, as the same kind of object (a path gives an Arrow Table of its records);
        other queries than those matched are a ValueError.

        >>> import neardup
        >>> qs = ["the cat sat on the mat today", "a dog barked at the moon"]
        >>> neardup.match(qs, ["The cat sat on the mat today!"], method="minhash").clean(qs)
        ['a dog barked at the moon']
        """
        from neardup.io.frames import rows_of

        text_field, id_field, on_error = self.read_as
        if isinstance(queries, (str, os.PathLike)):
            rows = _file_rows(str(queries), text_field, id_field or "id", on_error)
        else:
            rows = rows_of(queries, text_field=text_field, id_field=id_field, check=False)
        names = [str(v) for v in rows.ids]
        leaked = {str(q) for q in self.query_ids}
        matched = {str(q) for q in self.queries} if self.queries is not None else None
        if matched is not None and (len(matched) != len(set(names) & matched)):
            raise ValueError(f"these are not the queries matched: {len(matched)} were, "
                             f"{len(set(names) & matched)} of these {len(names)} are among them")
        return rows.take([row for row, name in enumerate(names)
                          if name not in leaked and (matched is None or name in matched)])

    @property
    def decisions(self) -> list[dict[str, Any]]:
        """One decision per query, in input order: ``{id, kept, copy_of, score}``: kept where the corpus holds no
        duplicate of it, else removed as a copy of its best-scoring corpus match (ties: the first in corpus order).

        >>> m = MatchResult(["q2"], ["c1"], np.array([0.9]), {}, queries=["q1", "q2"])
        >>> m.decisions
        [{'id': 'q1', 'kept': True, 'copy_of': None, 'score': None}, {'id': 'q2', 'kept': False, 'copy_of': 'c1', 'score': 0.9}]
        """
        best: dict[str, tuple[str, float]] = {}
        for q, c, s in zip(self.query_ids, self.corpus_ids, np.asarray(self.scores, dtype=np.float64).tolist()):
            if q not in best or s > best[q][1]:
                best[q] = (c, s)
        ids = self.queries if self.queries is not None else list(dict.fromkeys(self.query_ids))
        return [{"id": q, "kept": q not in best, "copy_of": best[q][0] if q in best else None,
                 "score": best[q][1] if q in best else None} for q in ids]

    def __len__(self) -> int:
        return len(self.query_ids)

    def matches(self) -> list[tuple[str, str, float]]:
        """Matches as (query id, corpus id, score)."""
        return [(q, c, float(s)) for q, c, s in zip(self.query_ids, self.corpus_ids, self.scores)]

    def leaked(self) -> set[str]:
        """Ids of the queries with at least one match."""
        return set(self.query_ids)

    def write(self, outdir: str | os.PathLike[str]) -> None:
        """Write matches.parquet and summary.json into ``outdir`` (atomically), tagged with a new run id (an
        earlier summary.json removed first, the new one written last, as :meth:`DedupResult.write` does)."""
        from neardup.io.write import SUMMARY_RUN_ID, begin_outputs, new_run_id, write_json, write_table

        run_id = new_run_id()
        out = begin_outputs(outdir)
        write_table(out / MATCH_FILES[0], {"query_id": [str(q) for q in self.query_ids],
                                           "corpus_id": [str(c) for c in self.corpus_ids],
                                           "score": np.asarray(self.scores, dtype=np.float64)}, run_id=run_id)
        write_json(out / "summary.json", {**self.summary, SUMMARY_RUN_ID: run_id})
        self.output = out


__all__ = ["MATCH_FILES", "OUTPUT_FILES", "RUN_FILES", "SCORES_FILE", "DedupResult", "MatchResult", "MixedRunError",
           "check_same_run"]
