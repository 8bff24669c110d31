"""The option groups several commands share (the method's settings, how input is read, where a run
executes), each defined once and turned into the typed configuration the Python API takes.

Owns option names, help texts and the mapping option -> configuration field; must not hold defaults
(an option not given is ``None``: the method's, reader's or engine's own default applies) or run anything.

A command takes a group with :func:`with_options`: the group's options are added to its signature and
the command receives them as one dict, turned into a config by :func:`dedup_config`,
:func:`read_config` or :func:`engine_config` inside the command's error guard.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from neardup.config import DedupConfig, EngineConfig, ReadConfig

#: The default of an option that must be given.
REQUIRED: Any = inspect.Parameter.empty


@dataclass(frozen=True)
class Option:
    """One command-line option: its parameter name, its Typer declaration, and the config field it sets
    (a ``DedupConfig.replace`` key such as ``minhash__bands``; None when handled by the builder)."""

    name: str
    annotation: Any
    key: str | None = None
    default: Any = None


def option(name: str, kind: Any, flags: Sequence[str], help: str, key: str | None = None, default: Any = None) -> Option:
    return Option(name, Annotated[kind, typer.Option(*flags, help=help)], key, default)


_KINDS: dict[str, Any] = {"int": int, "float": float, "bool": bool, "str": str}


def method_help() -> str:
    """``--method``'s help: every registered method (:func:`neardup.methods.catalog`, read without importing one).

    >>> method_help().split(" | ")[:2]
    ['auto (default: calibrated on the corpus)', 'biencoder']
    """
    from neardup.methods import catalog

    return " | ".join(["auto (default: calibrated on the corpus)", *sorted(set(catalog()) - {"auto"})]) + "."


def method_setting_options() -> tuple[Option, ...]:
    """An option for each setting a method file offers the command line (its field's ``metadata``: ``help``,
    ``flag``), setting ``<stage>__<field>``; read without importing a method (:func:`neardup.methods.catalog`).

    >>> [o.name for o in method_setting_options() if o.key == "ngram__max_df"]
    ['ngram__max_df']
    """
    from neardup.methods import catalog

    return tuple(option(s.key, Optional[_KINDS[s.kind]], (s.flag,), s.help, s.key)
                 for declared in sorted(catalog().values(), key=lambda d: d.name) for s in declared.settings)


METHOD_OPTIONS: tuple[Option, ...] = (
    option("config", Optional[Path], ("--config",), "A configuration file (as `neardup tune --out` writes it): its settings replace the method's defaults; options given here override them."),
    option("method", Optional[str], ("--method", "-m"), method_help()),
    option("threshold", Optional[float], ("--threshold", "-t"), "Similarity threshold in (0, 1] (default: the method's)."),
    option("ngram", Optional[int], ("--ngram", "-n"), "Shingle size (default: the method's: 4 words, 5 characters; SimHash: 4 characters).", "shingle__n"),
    option("char_ngrams", Optional[bool], ("--char-ngrams/--word-ngrams",), "Character or word n-grams (default: the method's).", "shingle__char"),
    option("num_perm", Optional[int], ("--num-perm",), "MinHash permutations (default 128).", "minhash__num_perm"),
    option("bands", Optional[int], ("--bands",), "LSH bands (with --rows; default: derived from --lsh-threshold).", "minhash__bands"),
    option("rows", Optional[int], ("--rows",), "LSH rows per band (with --bands).", "minhash__rows"),
    option("rule", Optional[str], ("--rule",), "MinHash candidate rule: lsh | collisions (default lsh).", "minhash__rule"),
    option("lsh_threshold", Optional[float], ("--lsh-threshold",), "Jaccard level the LSH bands are derived for (default 0.2).", "minhash__lsh_threshold"),
    option("min_collisions", Optional[int], ("--min-collisions",), "With --rule collisions: signature values that must agree.", "minhash__min_collisions"),
    option("verify", Optional[str], ("--verify",), "Pair score: weighted-overlap | weighted-jaccard | overlap | jaccard | none (default: the method's).", "verify__score"),
    option("cluster", Optional[str], ("--cluster",), "greedy (a document is removed only as a verified copy of a document kept before it, in --representative order) | components (every chain of verified pairs is one cluster) | louvain | leiden | agglomerative (default: leiden for hybrid, greedy otherwise).", "cluster__algorithm"),
    option("max_cluster_size", Optional[int], ("--max-cluster-size",), "Flag clusters larger than this as oversized (default 1000; 0: never)."),
    option("representative", Optional[str], ("--representative",), "Which document represents its cluster: longest | first (input order, or the earliest --representative-field) | cleanest (fewest noise characters) | largest (the largest --representative-field) (default longest).", "cluster__representative"),
    option("representative_field", Optional[str], ("--representative-field",), "With --representative first or largest: the record field ranked (a number or an ISO date).", "cluster__representative_field"),
    option("model", Optional[str], ("--model",), "Neural methods: a local model (RETSim .onnx file or sentence-transformers folder); default: the packaged one.", "embed__model"),
    option("cross_model", Optional[str], ("--cross-model",), "Methods rerank and multiview: a cross-encoder folder (from `neardup train crossencoder`); --model is the bi-encoder.", "embed__cross_model"),
    option("rerank_floor", Optional[float], ("--rerank-floor",), "Method rerank: bi-encoder cosine a neighbour needs to be re-scored by the cross-encoder (default 0.8).", "embed__rerank_floor"),
    option("k", Optional[int], ("--k",), "Neural methods: neighbours searched per document (default 100).", "embed__k"),
    option("index", Optional[str], ("--index",), "Neural methods: flat (exact, FAISS) | hnsw (approximate, USearch) (default flat).", "embed__index"),
    option("hybrid_weight", Optional[float], ("--hybrid-weight",), "Method hybrid: the linear rule, w * weighted overlap + (1 - w) * cosine (default 0.5); 1 and 0 are the n-gram and RETSim signals alone, which `neardup tune --method hybrid` may pick (params.hybrid_weight)."),
    option("views", Optional[str], ("--views",), "Method multiview: the views compared, comma-separated from word, char, retsim, biencoder, crossencoder (default: word,char; plus biencoder with --model DIR, else retsim with the neural extra; plus crossencoder with --cross-model DIR)."),
    option("combine", Optional[str], ("--combine",), "Method multiview: max (each view's score over its calibrated threshold, the largest; default) | logistic (the fitted model, --view-coef) | word | char | retsim (one view alone).", "multiview__combine"),
    option("view_coef", Optional[str], ("--view-coef",), "Method multiview: the logistic model's coefficients (one per view, the length ratio, the intercept), comma-separated, as `neardup tune --method multiview` prints them in params.coef; implies --combine logistic."),
    option("hybrid_coef", Optional[str], ("--hybrid-coef",), "Method hybrid: the learned rule's 5 coefficients (weighted overlap, cosine, partial, length ratio, intercept), comma-separated, as `neardup tune --method hybrid` prints them in params.hybrid_coef; default: the linear rule."),
    *method_setting_options(),
)


def _check_flags(options: Sequence[Option]) -> None:
    """Two options may not share a flag (a method file's ``flag`` metadata naming one already taken)."""
    seen: dict[str, str] = {}
    for o in options:
        info = o.annotation.__metadata__[0]  # (Typer takes a first flag as its "default" inside Annotated)
        for flag in (d for d in (info.default, *info.param_decls) if isinstance(d, str) and d.startswith("-")):
            for name in flag.split("/"):
                if name in seen:
                    raise ValueError(f"option {name} is declared twice: by {seen[name]} and by {o.key or o.name}")
                seen[name] = o.key or o.name


_check_flags(METHOD_OPTIONS)

READ_OPTIONS: tuple[Option, ...] = (
    option("text_field", Optional[str], ("--text-field",), "Field holding the text (default text)."),
    option("id_field", Optional[str], ("--id-field",), "Field holding the document id (default id)."),
    option("on_error", Optional[str], ("--on-error",), "raise | skip: what a bad record does (skips are listed in summary.json; default raise); skip also replaces bytes that are not text (U+FFFD)."),
    option("encoding", Optional[str], ("--encoding",), "Encoding of texts that are not UTF-8, e.g. cp1252 or latin-1 (default utf-8): each JSONL or CSV line and each .txt file is read as UTF-8 where it is valid UTF-8, else in this encoding; a byte neither reads is an error naming file, line and byte offset."),
)

ENGINE_OPTIONS: tuple[Option, ...] = (
    option("engine", Optional[str], ("--engine",), "local (chunked on this machine: bounded memory, all cores, resumable) | ray (a Ray cluster) | memory (one process). Default: local, or memory for a JSONL/CSV file of at most 1 MiB when no other engine option is given (the same output, sooner)."),
    option("address", Optional[str], ("--address",), "With --engine ray: the cluster address (default: start a local one)."),
    option("memory_limit", Optional[str], ("--memory-limit",), "Peak memory of the whole run, e.g. 1GB (sets batch sizes and partitions; default 2GiB)."),
    option("workers", Optional[int], ("--workers",), "Worker processes (default 0: one per core; an input of at most 20,000 documents runs in this process)."),
    option("resume", bool, ("--resume",), "Continue an interrupted run from its last completed shard/stage.", default=False),
    option("work_dir", Optional[Path], ("--work-dir",), "Where shards and checkpoints go (default OUTDIR/.neardup-work)."),
    option("keep_work", bool, ("--keep-work",), "Keep the work directory after success.", default=False),
    option("batch_docs", Optional[int], ("--batch-docs",), "Documents per shard (default: from --memory-limit)."),
    option("evidence", Optional[bool], ("--evidence/--no-evidence",), "Write evidence.parquet: each pair's matching views and shared passages (default: on)."),
    option("all_pairs", Optional[bool], ("--all-pairs",), "Write every verified pair (the graph) to pairs.parquet and its evidence; by default (--cluster greedy) only the pair that links each removed document to the document kept for it."),
    option("score_ceiling", Optional[float], ("--score-ceiling",), "The highest threshold `neardup rethreshold` may take later, as a share of this run's (default 1.25; at most 1): --cluster greedy scores only the candidate pairs its decisions up to there read, so the lower, the fewer; inf scores every pair."),
)


def with_options(group: Sequence[Option], into: str, exclude: Sequence[str] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add a group's options (but ``exclude``) to a command; it receives their values as the dict ``into``."""
    chosen = [o for o in group if o.name not in exclude]

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn, eval_str=True)

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            kwargs[into] = {o.name: kwargs.pop(o.name) for o in chosen}
            return fn(**kwargs)

        own = [p for p in sig.parameters.values() if p.name != into]
        added = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=o.annotation)
                 for o in chosen]
        command.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
            *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own), *added])
        return command

    return decorate


def hybrid_rule(coef: str | None, weight: float | None) -> dict[str, Any]:
    """``--hybrid-coef`` (the learned rule with these coefficients) or ``--hybrid-weight`` (the linear rule),
    as ``DedupConfig.replace`` keywords.

    >>> hybrid_rule("5.2, 1.2,1.5,-0.15,-6.7", None)["embed__hybrid_coef"]
    (5.2, 1.2, 1.5, -0.15, -6.7)
    >>> hybrid_rule(None, 1.0)
    {'embed__hybrid_rule': 'linear', 'embed__hybrid_weight': 1.0}
    """
    from neardup.config import ConfigError

    if coef is not None and weight is not None:
        raise ConfigError("--hybrid-coef (the learned rule) and --hybrid-weight (the linear rule) exclude each other")
    if weight is not None:
        return {"embed__hybrid_rule": "linear", "embed__hybrid_weight": float(weight)}
    if coef is None:
        return {}
    try:
        values = tuple(float(x) for x in coef.replace("[", "").replace("]", "").split(","))
    except ValueError:
        raise ConfigError(f"--hybrid-coef must be 5 comma-separated numbers, got {coef!r}") from None
    return {"embed__hybrid_rule": "logistic", "embed__hybrid_coef": values}


def multiview_options(views: str | None, coef: str | None) -> dict[str, Any]:
    """``--views`` and ``--view-coef`` as ``DedupConfig.replace`` keywords.

    >>> multiview_options("word, char", "1,2,0.5,-3")
    {'multiview__views': ('word', 'char'), 'multiview__combine': 'logistic', 'multiview__coef': (1.0, 2.0, 0.5, -3.0)}
    """
    from neardup.config import ConfigError

    out: dict[str, Any] = {}
    if views is not None:
        out["multiview__views"] = tuple(v.strip() for v in views.split(",") if v.strip())
    if coef is not None:
        try:
            values = tuple(float(x) for x in coef.replace("[", "").replace("]", "").split(","))
        except ValueError:
            raise ConfigError(f"--view-coef must be comma-separated numbers, got {coef!r}") from None
        out.update({"multiview__combine": "logistic", "multiview__coef": values})
    return out


def dedup_config(values: dict[str, Any]) -> DedupConfig:
    """The :class:`DedupConfig` the method options describe: the ``--config`` file's settings (else the method's
    defaults), overridden by the options given.

    >>> dedup_config({"method": "simhash", "ngram": 5, "max_cluster_size": 0}).shingle.n
    5
    """
    from neardup.api import make_config
    from neardup.io.config_file import load_config

    base = load_config(values["config"]) if values.get("config") is not None else None

    keyed = {o.name: o.key for o in METHOD_OPTIONS if o.key}
    changes = {keyed[k]: v for k, v in values.items() if k in keyed and v is not None}
    if values.get("max_cluster_size") is not None:
        changes["cluster__max_cluster_size"] = values["max_cluster_size"] or None
    changes.update(hybrid_rule(values.get("hybrid_coef"), values.get("hybrid_weight")))
    changes.update(multiview_options(values.get("views"), values.get("view_coef")))
    return make_config(values.get("method"), values.get("threshold"), config=base, **changes)


def read_config(values: dict[str, Any]) -> ReadConfig:
    """The :class:`ReadConfig` the read options describe."""
    from neardup.config import ReadConfig

    return ReadConfig().replace(**{k: v for k, v in values.items() if v is not None})


def engine_name(values: dict[str, Any], input: Any = None) -> str:
    """The engine the options name; where they name none, the rule the Python API follows too
    (:func:`neardup.run_plan.engine_for`): ``memory`` for a small input file that no other engine option was
    given for, else ``local``."""
    if values.get("engine") is not None:
        return str(values["engine"])
    if input is None:
        return "local"
    from neardup.run_plan import engine_for

    told = any(v is not None and v is not False for k, v in values.items() if k not in ("engine", "evidence", "all_pairs", "score_ceiling"))
    return engine_for(input, None, told).name


def engine_config(values: dict[str, Any], progress: bool) -> EngineConfig:
    """The :class:`EngineConfig` the engine options describe (the engine: :func:`engine_name`, without an input)."""
    from neardup.config import EngineConfig

    given = {k: v for k, v in values.items() if v is not None and k != "engine"}
    if "work_dir" in given:
        given["work_dir"] = str(given["work_dir"])
    return EngineConfig(name=engine_name(values), progress=progress, **given)


QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]
OverwriteOpt = Annotated[bool, typer.Option("--overwrite", help="Replace output files that exist (never an input).")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="json | text")]


__all__ = ["ENGINE_OPTIONS", "METHOD_OPTIONS", "READ_OPTIONS", "REQUIRED", "FormatOpt", "Option", "QuietOpt", "dedup_config",
           "engine_config", "engine_name", "hybrid_rule", "method_help", "method_setting_options", "multiview_options",
           "option", "read_config", "with_options", "OverwriteOpt"]
