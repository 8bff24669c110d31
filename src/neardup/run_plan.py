"""The run plan: what a de-duplication will do, resolved once before any work and printable.

Owns the one rule that picks a run's engine where none is named (the Python API and the command line both
use :func:`engine_for`) and :func:`plan_run`, which resolves the inputs, the read settings, the method (the
calibration of ``auto`` read from the input's first documents, :func:`neardup.calibrate.resolve`), the engine
and its memory plan into a frozen :class:`RunPlan`; ``neardup dedup --dry-run`` prints it. Must not run a
stage: a plan reads no more than the calibration's sample. What a method derives from the representation
itself (MinHash's bands for the corpus's size, a candidate budget) is decided when the run reaches it and
recorded in ``summary.json``'s ``params``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from neardup.config import DedupConfig, EngineConfig, ReadConfig, config_to_dict


def engine_for(data: Any, engine: str | EngineConfig | None = None, told: bool = False) -> EngineConfig:
    """The engine a run of ``data`` takes: the one named (a name or an :class:`EngineConfig`), else ``memory``
    for data in Python and for a small input file (:func:`neardup.engine.plan.runs_in_memory`) that no other
    engine setting was given for (``told``), else ``local`` (chunked: bounded memory, all cores, resumable).

    >>> engine_for(["a text", "another"]).name, engine_for("examples/news.jsonl").name
    ('memory', 'memory')
    >>> engine_for("examples/news.jsonl", told=True).name, engine_for([], "local").name
    ('local', 'local')
    """
    if isinstance(engine, EngineConfig):
        return engine
    if engine not in (None, "auto"):
        return EngineConfig(name=str(engine))
    from neardup.io.sources import Sources

    if not isinstance(data, (str, os.PathLike, Sources)) and not (
            isinstance(data, (list, tuple)) and data and all(isinstance(x, os.PathLike) for x in data)):
        return EngineConfig(name="memory")  # data in Python: held in memory already
    from neardup.engine.plan import runs_in_memory

    small = not told and not isinstance(data, (list, tuple)) and runs_in_memory(data)
    return EngineConfig(name="memory" if small else "local")


@dataclass(frozen=True)
class RunPlan:
    """What a run will do: its inputs, how they are read, the method with its settings resolved (``auto``'s
    calibration included), the engine with its memory plan, and where it writes. ``str(plan)`` is JSON."""

    inputs: tuple[str, ...]
    read: ReadConfig
    method: DedupConfig
    engine: EngineConfig
    output: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-able data: the method's settings as ``summary.json``'s ``params`` holds them."""
        engine: dict[str, Any] = dataclasses.asdict(self.engine)
        if self.engine.name != "memory":
            from neardup.engine.plan import make_plan

            engine["plan"] = dataclasses.asdict(make_plan(self.engine))
        method = {k: v for k, v in config_to_dict(self.method).items() if k != "calibration"}
        return {"inputs": list(self.inputs), "read": dataclasses.asdict(self.read), "method": method,
                **({"calibration": self.method.calibration} if self.method.calibration else {}),
                "engine": engine, "output": self.output}

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), indent=2, default=str)


def _sample(data: Any, read: ReadConfig) -> list[str]:
    """The texts of the input's first documents: those ``auto`` is calibrated on (as every engine reads them)."""
    from neardup.calibrate import SAMPLE_DOCS

    if isinstance(data, Iterable) and not isinstance(data, (str, os.PathLike, bytes, Mapping)):
        from neardup.io.sources import Sources

        if not isinstance(data, Sources) and not (isinstance(data, (list, tuple)) and data
                                                  and all(isinstance(x, os.PathLike) for x in data)):
            texts = []
            for item in data:
                text = item if isinstance(item, str) else (item.get(read.text_field) if isinstance(item, Mapping)
                                                           else None)
                if isinstance(text, str):
                    texts.append(text)
                if len(texts) >= SAMPLE_DOCS:
                    break
            return texts
    from neardup.io.read import iter_batches

    for batch in iter_batches(data, read.replace(on_error="skip"), SAMPLE_DOCS):
        return [doc.text for doc in batch]
    return []


def plan_run(data: Any, config: DedupConfig, engine: str | EngineConfig | None = None,
             read: ReadConfig | None = None, output: str | os.PathLike[str] | None = None,
             told: bool = False) -> RunPlan:
    """The :class:`RunPlan` of a run of ``data`` (a path, several, a :class:`~neardup.io.sources.Sources`, or
    texts or records in a list): the engine by :func:`engine_for`, ``config`` resolved on the input's first
    documents (:func:`neardup.calibrate.resolve`: ``auto`` and multiview's view thresholds).

    >>> plan = plan_run("examples/news.jsonl", DedupConfig(method="auto"))
    >>> plan.engine.name, plan.method.method, plan.method.threshold, plan.to_dict()["calibration"]["choice"]["method"]
    ('memory', 'minhash', 0.45, 'minhash')
    """
    from neardup.calibrate import needs_corpus, resolve

    read = read or ReadConfig()
    resolved = resolve(config, _sample(data, read)) if needs_corpus(config) else config
    if isinstance(data, (str, os.PathLike)):
        inputs: tuple[str, ...] = (str(data),)
    elif hasattr(data, "files"):
        inputs = tuple(str(f) for f in data.names)
    elif isinstance(data, (list, tuple)) and data and all(isinstance(x, os.PathLike) for x in data):
        inputs = tuple(str(x) for x in data)
    else:
        inputs = (f"<{type(data).__name__} in memory>",)
    return RunPlan(inputs=inputs, read=read, method=resolved, engine=engine_for(data, engine, told),
                   output=None if output is None else str(output))


__all__ = ["RunPlan", "engine_for", "plan_run"]
