"""The public entry points: ``neardup.dedup(input, method=..., engine=...)`` and ``neardup.match(queries, corpus)``.

Owns turning user input (a path or URL, a list of strings or of records, a DataFrame, an Arrow table or dataset,
a Hugging Face dataset, a :class:`Corpus`: :mod:`neardup.io.frames` reads Python objects) and options into a run
on the chosen engine, and the typed result; must not implement stages or schedule them.
The command line calls these functions and holds no logic they lack.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from neardup.calibrate import resolve
from neardup.config import DedupConfig, EngineConfig, ReadConfig
from neardup.io.frames import Rows, kind_of, rows_of
from neardup.io.read import Corpus, read_corpus
from neardup.results import DedupResult, MatchResult
from neardup.run_plan import engine_for

#: A path or URL, texts, records, a Corpus, or (typed ``Any``: their libraries are optional) a pandas or polars
#: DataFrame, a pyarrow Table or Dataset, a ``datasets.Dataset``.
Data = str | os.PathLike[str] | Iterable[str] | Iterable[Mapping[str, Any]] | Corpus | Any


def make_config(method: str | None = None, threshold: float | None = None,
                config: DedupConfig | str | os.PathLike[str] | None = None, **stage_options: Any) -> DedupConfig:
    """A :class:`DedupConfig` from a base config (or a configuration file, as ``neardup tune --out`` writes
    it), a method, a threshold and ``stage__field`` options; what is given overrides the base.

    >>> make_config("simhash", shingle__n=5).shingle
    ShingleConfig(n=5, char=True, sample=1)
    >>> make_config().method  # the default: calibrated on the corpus (neardup.calibrate)
    'auto'

    """
    if isinstance(config, (str, os.PathLike)):
        from neardup.io.config_file import load_config

        config = load_config(config)
    cfg = config or DedupConfig(method=method or "auto")
    changes = {k: v for k, v in (("method", method), ("threshold", threshold)) if v is not None}
    if config is not None and changes:
        cfg = cfg.replace(**changes)
    elif threshold is not None:
        cfg = cfg.replace(threshold=threshold)
    return cfg.replace(**stage_options) if stage_options else cfg


def make_read(read: ReadConfig | None = None, **fields: Any) -> ReadConfig:
    """A :class:`ReadConfig` with the fields given (``None``: as ``read`` says)."""
    given = {k: v for k, v in fields.items() if v is not None}
    return (read or ReadConfig()).replace(**given) if given else (read or ReadConfig())


def _is_path(data: Any) -> bool:
    """Whether ``data`` names files: a path, URL or glob, :class:`~neardup.io.sources.Sources`, or a list whose
    items are all ``os.PathLike`` (``[Path("a.jsonl"), Path("b.jsonl")]``: read as one corpus; a list of ``str``
    is texts)."""
    from neardup.io.sources import is_sources

    return is_sources(data)


def _source(data: Any) -> Any:
    """What a result keeps to read its input again: the path as given (a str), or the files of several."""
    from neardup.io.sources import Sources

    return data if isinstance(data, Sources) else str(data)


def _id_field(id_field: str | None, read: ReadConfig | None) -> str | None:
    """The id field a Python input's ids must come from: ``id_field``, or one ``read`` names other than the
    default; None: row numbers (records: their ``id`` key where they have one)."""
    if id_field is not None:
        return id_field
    return read.id_field if read is not None and read.id_field != ReadConfig().id_field else None


def _python_input(data: Any, read: ReadConfig, id_field: str | None = None) -> Rows:
    """Python input (texts, records, a DataFrame, a table, a dataset) as its :class:`~neardup.io.frames.Rows`:
    ids from ``id_field`` (None: row numbers; records: their ``id`` key where they have one), each row checked
    (a :class:`~neardup.io.frames.RowError` naming the row and field) unless bad rows are skipped
    (``read.on_error="skip"``: the reader skips and lists them). Anything else is a :class:`TypeError` naming
    the first item that differs, or what was given and what is accepted.
    """
    return rows_of(data, text_field=read.text_field, id_field=id_field, check=read.on_error != "skip")


def _check_data(data: Any) -> None:
    """The input must be a path or URL, a :class:`Corpus`, or a Python object :mod:`neardup.io.frames` reads
    (else a :class:`TypeError` naming what was given and what is accepted)."""
    if data is None or isinstance(data, (bytes, bytearray)):
        from neardup.io.frames import ACCEPTED

        raise TypeError(f"input is {type(data).__name__}: expected {ACCEPTED}")
    if not (_is_path(data) or isinstance(data, (Corpus, Rows))):
        kind_of(data)


def _corpus(data: str | os.PathLike[str] | Corpus | Rows, read: ReadConfig, keep: tuple[str, ...] = ()) -> Corpus:
    if isinstance(data, Corpus):
        return data
    if isinstance(data, Rows):
        return data.corpus(read, keep)
    return read_corpus(data, read, keep=keep)


def dedup(data: Data, method: str | None = None, threshold: float | None = None,
          config: DedupConfig | str | os.PathLike[str] | None = None, *,
          engine: str | EngineConfig = "auto", output: str | os.PathLike[str] | None = None,
          overwrite: bool = False, read: ReadConfig | None = None, text_field: str | None = None,
          id_field: str | None = None, on_error: str | None = None, progress: bool = False,
          evidence: bool | None = None, all_pairs: bool | None = None,
          **stage_options: Any) -> DedupResult:
    """Find near-duplicates in a file, folder, URL, list of texts or of records, pandas or polars DataFrame,
    pyarrow Table or Dataset, or Hugging Face ``datasets.Dataset``; returns a :class:`DedupResult`.

    ``method`` and ``threshold`` (or a whole ``config``: a :class:`DedupConfig` or the path of a
    configuration file, e.g. from ``neardup tune --out``) say what is computed; ``stage_options`` are
    ``stage__field`` settings, e.g. ``shingle__n=5`` or ``cluster__algorithm="leiden"``. ``engine``:
    ``"memory"``, ``"local"`` (chunked on this machine: bounded memory, all cores, resumable) or ``"ray"``,
    or an :class:`~neardup.config.EngineConfig` with its settings; every engine gives the same result. The
    default, ``"auto"``, is the rule ``neardup dedup`` follows (:func:`neardup.run_plan.engine_for`): memory for
    data in Python and small files, local otherwise. ``output``: a folder to write ``clusters.parquet``, ``pairs.parquet`` and
    ``summary.json`` into (a chunked run's result is then read from it when first used), and
    ``evidence.parquet`` unless ``evidence=False`` (or ``EngineConfig(evidence=False)``): why each pair
    matched (:meth:`DedupResult.evidence`); ``all_pairs``: every verified pair rather than the link behind each
    removed document (``greedy``, the default); before any work, an output that is the input, an existing
    output (unless ``overwrite``, or a ``resume`` of the run that wrote it) or a folder that cannot be
    written is an :class:`~neardup.io.write.OutputError`. ``read`` (or ``text_field``, ``id_field``,
    ``on_error``) says how records become documents.

    Files: a path, a folder (of ``.txt`` files, or of data files: shards), a glob (``"data/*.jsonl"``) or a URL;
    several as one corpus: a list of ``pathlib.Path`` (every item ``os.PathLike``: a list of ``str`` is texts) or
    a :class:`~neardup.io.sources.Sources`. Without an ``id`` field in a file's records their ids are row numbers.

    A Python object's ids are its ``id_field`` column's values, of their own type (without ``id_field``: the row
    numbers, 0, 1, ...; records keep their ``id`` key where they have one); ``result.selected`` gives its kept
    rows and ``result.duplicates`` the others, as the same kind of object (:mod:`neardup.io.frames`). A null
    text or a repeated id is a :class:`~neardup.io.frames.RowError` (a ValueError) naming the row and field.

    >>> r = dedup(["The cat sat on the mat.", "the cat sat on the mat", "A dog barked."])
    >>> r.groups(), r.representatives, r.selected
    ([[0, 1]], [0, 2], ['The cat sat on the mat.', 'A dog barked.'])
    """
    cfg = make_config(method, threshold, config, **stage_options)
    read_cfg = make_read(read, text_field=text_field, id_field=id_field, on_error=on_error)
    eng = engine if isinstance(engine, EngineConfig) else engine_for(data, engine).replace(progress=progress)
    if evidence is not None:
        eng = eng.replace(evidence=evidence)
    if all_pairs is not None:
        eng = eng.replace(all_pairs=all_pairs)
    _check_data(data)
    if isinstance(data, (list, tuple)) and _is_path(data):  # several files: one corpus
        from neardup.io.read import resolve_sources

        data = resolve_sources(data, read_cfg.encoding)
    if not (_is_path(data) or isinstance(data, Corpus)):
        data = _python_input(data, read_cfg, _id_field(id_field, read))
    if output is not None:  # the output folder locked for the run (its checks first, see output_lock)
        from neardup.io.write import output_lock

        with output_lock(output, lambda: check_dedup_outputs(data, output, eng, overwrite, clear=False)):
            check_dedup_outputs(data, output, eng, overwrite)  # again, locked: and what a killed writer left goes
            try:
                return _dedup(data, cfg, eng, read_cfg, output)
            except BaseException:  # no partial outputs: a folder without its summary.json keeps no run file
                from neardup.io.write import discard_incomplete
                from neardup.results import RUN_FILES

                discard_incomplete(output, RUN_FILES)
                raise
    return _dedup(data, cfg, eng, read_cfg, output)


def _dedup(data: Data, cfg: DedupConfig, eng: EngineConfig, read_cfg: ReadConfig,
           output: str | os.PathLike[str] | None) -> DedupResult:
    """:func:`dedup` once its settings and outputs are checked (a Python input already its :class:`Rows`)."""
    source = _source(data) if _is_path(data) else None
    if eng.name == "memory":
        from neardup.engine.memory import run_memory

        keep = (cfg.cluster.representative_field,) if cfg.cluster.representative_field else ()
        corpus = _corpus(data, read_cfg, keep)
        result = run_memory(corpus, resolve(cfg, corpus.texts), eng, read_cfg, output, source=source)
    else:
        result = _run_sharded(data, cfg, eng, read_cfg, output)
    if isinstance(data, Rows):
        result.set_input(data)  # ids as given, and the rows for ``selected`` / ``duplicates``
    return result


def check_dedup_outputs(data: Data, output: str | os.PathLike[str], engine: EngineConfig,
                        overwrite: bool = False, also: list[str | os.PathLike[str]] | None = None,
                        clear: bool = True) -> None:
    """The check :func:`dedup` makes before any work (:func:`~neardup.io.write.check_outputs`) on its
    output files and ``also`` (e.g. the keep file), and of a chunked run on its work directory
    (:func:`~neardup.engine.workdir.check_work_dir`: neardup's own, apart from the outputs and inputs); then
    removes what a killed writer left of them (unless not ``clear``: the checks alone, which write nothing, as
    made before the output folder's lock is taken, :func:`~neardup.io.write.output_lock`).

    A chunked ``resume`` whose work directory exists may replace the files: they are its own. Without
    evidence, an earlier run's ``evidence.parquet`` there is removed.
    """
    from neardup.engine.workdir import check_work_dir, work_root
    from neardup.io.write import OutputError, check_outputs, clear_stale
    from neardup.results import EVIDENCE_FILE, OUTPUT_FILES, SCORES_FILE

    files = [Path(output) / name for name in (*OUTPUT_FILES, SCORES_FILE, EVIDENCE_FILE)]
    work = work_root(output, engine.work_dir)
    own = engine.name != "memory" and engine.resume and work.is_dir()
    inputs = [data] if _is_path(data) else []
    if engine.name != "memory":
        check_work_dir(work, output, inputs)  # type: ignore[arg-type]
    check_outputs(files=files, folders=[output, work] if engine.name != "memory" else [output],
                  inputs=inputs, overwrite=overwrite or own)  # type: ignore[list-item]
    for extra in also or ():
        if any(Path(extra).resolve() == f.resolve() for f in files):
            raise OutputError(f"{extra} is one of the run's own outputs")
        if engine.name != "memory" and work.resolve() in Path(extra).resolve().parents:
            raise OutputError(f"{extra} is inside the work directory {work}, which neardup clears")
    check_outputs(files=also or [], inputs=inputs, overwrite=overwrite)  # type: ignore[arg-type]
    if not clear:
        return
    clear_stale(files)
    if not engine.evidence:  # an earlier run's evidence would describe other pairs
        files[-1].unlink(missing_ok=True)


def work_folder(output: str | os.PathLike[str], work_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a chunked run writing to ``output`` keeps its work, which ``resume`` takes up again: ``work_dir``,
    or a folder inside ``output`` (:func:`neardup.engine.workdir.work_root`)."""
    from neardup.engine.workdir import work_root

    return work_root(output, work_dir)


def small_input(data: Data) -> bool:
    """Whether ``data`` is a file that the in-memory engine runs sooner than the chunked one (a local, uncompressed
    JSONL or CSV file of at most a megabyte: :func:`neardup.engine.plan.runs_in_memory`); ``neardup dedup`` runs
    such a file in memory when no engine option is given."""
    from neardup.engine.plan import runs_in_memory

    return _is_path(data) and runs_in_memory(data)


def _run_sharded(data: Data, config: DedupConfig, engine: EngineConfig, read: ReadConfig,
                 output: str | os.PathLike[str] | None) -> DedupResult:
    """A chunked run (local or Ray). Python input is spooled to a JSONL file first; without ``output`` the
    run writes to a temporary folder and the result is read into memory."""
    from neardup.engine.plan import starts_server_early

    if _is_path(data) and starts_server_early(data, engine):  # before the engine's own imports
        from neardup.engine.processes import start_server

        start_server()
    from neardup.engine.local import LocalRun

    runner: type[LocalRun] | Any = LocalRun
    if engine.name == "ray":
        from neardup.engine.ray import RayRun, import_ray

        import_ray()
        runner = RayRun
    scratch = Path(tempfile.mkdtemp(prefix="neardup-")) if output is None or not _is_path(data) else None
    try:
        source: str | os.PathLike[str]
        if _is_path(data):
            source = data  # type: ignore[assignment]
        else:
            assert scratch is not None
            records: Iterable[dict[str, Any]]
            if isinstance(data, Corpus):
                records = [{**{k: v[j] for k, v in data.fields.items()}, "id": i, "text": t}
                           for j, (i, t) in enumerate(zip(data.ids, data.texts))]
                read = ReadConfig(max_chars=read.max_chars)
            else:  # the ids as given (an int stays a JSON number, read back as its str, mapped back by the result)
                keep = (config.cluster.representative_field,) if config.cluster.representative_field else ()
                records, read = data.records(keep), data.read_config(read)
            source = scratch / "input.jsonl"
            with open(source, "w", encoding="utf-8") as fh:
                for rec in records:
                    fh.write(json.dumps(rec, default=str) + "\n")
        outdir = Path(output) if output is not None else scratch / "out"  # type: ignore[operator]
        run = runner(source, outdir, config, engine, read)
        if not _is_path(data):
            run.source_name = "<memory>"
        summary = run.run()
        result = DedupResult.from_output(outdir, summary, source=_source(data) if _is_path(data) else None,
                                         id_field=read.id_field, text_field=read.text_field, run_id=run.run_id)
        result.on_error = read.on_error
        if output is None:
            result.ids  # noqa: B018 - read everything before the folder goes
            if result.has_evidence:
                result.evidence_table()
            result.output = None
        return result
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def match(queries: Data, corpus: Data, output: str | os.PathLike[str] | None = None,
          method: str | None = None, threshold: float | None = None,
          config: DedupConfig | str | os.PathLike[str] | None = None, *, overwrite: bool = False,
          group_field: str | None = None, read: ReadConfig | None = None, text_field: str | None = None,
          id_field: str | None = None, batch_docs: int = 5000, progress: bool = False,
          **stage_options: Any) -> MatchResult:
    """For each document of ``queries`` (e.g. a test set, read whole), its near-duplicates in ``corpus``
    (e.g. a training set, streamed batch by batch); returns a :class:`MatchResult` (written to ``output``).

    Either may be a path or any Python object :func:`dedup` takes (a corpus object is cut into batches in
    memory), ids as :func:`dedup` reads them; ``result.clean(queries)`` gives the queries without a duplicate
    in the corpus, as the same kind of object. ``group_field`` names a query field saying which query set a
    document belongs to; the leaked fraction is reported per set. Outputs are checked before any work as
    :func:`dedup` checks its own.

    >>> found = match(["Stocks rose in Tokyo on Monday.", "A dog barked."], ["stocks rose in tokyo on monday"])
    >>> found.matches(), found.clean(["Stocks rose in Tokyo on Monday.", "A dog barked."])
    ([(0, 0, 1.0)], ['A dog barked.'])
    """
    from neardup.io.write import check_outputs
    from neardup.matching import match as run_match
    from neardup.results import MATCH_FILES

    read_cfg = make_read(read, text_field=text_field, id_field=id_field)
    inputs = []
    for data in (queries, corpus):
        _check_data(data)
        if _is_path(data):
            inputs.append(data)
    if output is not None:
        check_outputs(files=[Path(output) / name for name in MATCH_FILES], folders=[output],
                      inputs=inputs, overwrite=overwrite)

    cfg = make_config(method, threshold, config, **stage_options)
    given = _id_field(id_field, read)
    q, c = (x if _is_path(x) else _python_input(x, read_cfg, given) for x in (queries, corpus))
    return run_match(q, c, output, cfg, group_field=group_field, read=read_cfg, batch_docs=batch_docs,
                     progress=progress)


__all__ = ["check_dedup_outputs", "dedup", "make_config", "make_read", "match", "small_input", "work_folder"]
