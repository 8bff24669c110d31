"""The shape of the code that the design promises, read from the source's syntax trees (imports inside functions
count): no import cycles; the stages import neither an engine nor the CLI, the CLI no engine, and train, online and
report nothing from eval; each derivation written once (an executor, ``match`` or the online detector calls the
method's own); see docs/architecture.md."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "neardup"


def _module(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> set[str]:
    """Modules of neardup a module imports anywhere (inside functions too; not under ``if TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m == "neardup" or m.startswith("neardup.")}


def test_imports_inside_functions_count_and_type_only_ones_do_not(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("from typing import TYPE_CHECKING\nfrom . import sibling\nif TYPE_CHECKING:\n"
                    "    from neardup.engine import local\n\n\ndef f():\n    import neardup.cli.dedup\n"
                    "    from ..eval.tune import sweep\n", encoding="utf-8")
    assert _imports(path, "neardup.verify.probe") == {"neardup.verify", "neardup.verify.sibling", "neardup.cli.dedup",
                                                      "neardup.eval.tune", "neardup.eval.tune.sweep"}


def test_no_import_cycle_in_the_package():
    files = {_module(p): p for p in SRC.rglob("*.py")}
    graph = {name: {m for m in _imports(path, name) if m in files and m != name and not name.startswith(m + ".")}
             for name, path in files.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert len(graph) > 80


def _where(text: str) -> set[str]:
    return {str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if text in p.read_text(encoding="utf-8")}


def test_each_derivation_is_written_once():
    assert _where("optimal_bands_rows(") == {"candidates/lsh.py"}  # LSH bands and rows: lsh_plan
    assert _where("np.log((") == {"verify/overlap.py"}  # the IDF weight: verify.overlap.idf
    assert _where("default_min_collisions(") == {"methods/minhash.py"}
    assert _where("simhash.BITS + 1e-9") == {"methods/simhash.py"}  # the Hamming distance a threshold allows
    assert _where("iter_documents(") == {"io/read.py"}  # record validation and batching: io.read.iter_batches
    assert _where("IndexFlatIP(") == {"candidates/vectors.py"}  # vector search: candidates.vectors.VectorIndex
    assert _where('"largest_clusters":') == {"engine/summary.py"}  # the one summary builder
    assert _where("band_keys(") == {"candidates/lsh.py", "methods/minhash.py", "online/candidates.py"}


def test_executors_schedule_methods_and_never_name_one():
    """Engines, matching and the CLI go through the method objects: no executor branches on a method name."""
    for path in [*(SRC / "engine").glob("*.py"), SRC / "matching.py", SRC / "pipeline.py", *(SRC / "cli").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for name in ("minhash", "ngram", "simhash", "retsim", "hybrid", "rerank", "biencoder"):
            assert f'method == "{name}"' not in text and f'.method == "{name}"' not in text, (path, name)


# ---- who may import whom ----------------------------------------------------------------------------------------

#: The stages: what a method is made of, and what every engine calls.
STAGES = ("neardup.text", "neardup.represent", "neardup.candidates", "neardup.verify", "neardup.methods",
          "neardup.cluster", "neardup.evidence", "neardup.calibrate")


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _offending(importers: tuple[str, ...], imported: tuple[str, ...]) -> list[str]:
    """``"a -> b"`` for each module ``a`` of ``importers`` that imports a module ``b`` of ``imported`` anywhere."""
    files = {_module(p): p for p in SRC.rglob("*.py")}
    return sorted(f"{name} -> {m}" for name, path in files.items() if _within(name, importers)
                  for m in _imports(path, name) if m in files and _within(m, imported))


def test_stages_import_neither_an_engine_nor_the_cli():
    assert _offending(STAGES, ("neardup.engine", "neardup.cli")) == []


def test_the_cli_imports_no_engine():
    """The command line goes through :mod:`neardup.api`, which chooses and runs the engine."""
    assert _offending(("neardup.cli",), ("neardup.engine",)) == []


TRAIN_USES_EVAL = ("train.dataset, train.evaluate -> eval.evaluate (LabelledData, score) and eval.tune (sweep, "
                   "best_trial); train.sources, train.neighbours -> eval.benchsets (SOURCE_DEDUP_CONFIG, SourceDoc, "
                   "dedup_sources) and eval.evaluate (load_labelled): they move out of eval/ with tune's search and "
                   "the labelled-data readers (issue 57, names for jobs)")


@pytest.mark.parametrize("package", ["neardup.online", "neardup.report",
                                     pytest.param("neardup.train", marks=pytest.mark.xfail(strict=True,
                                                                                           reason=TRAIN_USES_EVAL))])
def test_train_online_and_report_import_nothing_from_eval(package):
    assert _offending((package,), ("neardup.eval",)) == []


def test_the_api_and_the_cli_import_no_private_name():
    """What the API and the CLI call from the engine and the stages is public (e.g. ``engine.ray.import_ray``)."""
    private = [f"{path.relative_to(SRC)}: {node.module}.{alias.name}"
               for path in [SRC / "api.py", *sorted((SRC / "cli").glob("*.py"))]
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("neardup")
               for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert private == []


# ---- one definition each: the threshold cut, settings resolution, the fork server's start ----------------------

@functools.cache
def _trees() -> dict[str, ast.Module]:
    """Each module's syntax tree, by its path under ``src/neardup``."""
    return {str(p.relative_to(SRC)): ast.parse(p.read_text(encoding="utf-8")) for p in sorted(SRC.rglob("*.py"))}


def _first_annotation(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = node.args.args
    return ast.unparse(args[0].annotation) if args and args[0].annotation is not None else ""


def _defined(name: str, first_arg: str = "") -> set[str]:
    """Modules that define a function ``name`` (whose first argument's annotation names ``first_arg``)."""
    return {where for where, tree in _trees().items() for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
            and first_arg in _first_annotation(node)}


def _forgiving(node: ast.AST, epsilon: float | None = None) -> bool:
    """``a >= b - c`` (or ``>``) with a float constant ``c`` (``epsilon`` where given): a cut forgiving rounding."""
    return isinstance(node, ast.Compare) and any(isinstance(op, (ast.GtE, ast.Gt)) for op in node.ops) and any(
        isinstance(side, ast.BinOp) and isinstance(side.op, ast.Sub) and isinstance(side.right, ast.Constant)
        and isinstance(side.right.value, float) and (epsilon is None or side.right.value == epsilon)
        for side in node.comparators)


#: Where a ``>= x - 1e-12`` may stand besides the cut itself: the peers' harness reproduces other libraries' rules.
CUT_ELSEWHERE = {"eval/peers.py"}
EXECUTORS = ("engine/", "matching.py", "pipeline.py")


def test_the_threshold_cut_is_written_once():
    """``cluster.passes`` decides which scores reach a threshold; no module writes the comparison again, and the
    executors compare no score with a threshold or floor themselves (a vector search's rounding is forgiven by
    ``candidates.vectors.near``, for candidates only)."""
    assert _defined("passes") == {"cluster.py"}
    copies = {f"{where}:{node.lineno}" for where, tree in _trees().items() if where != "cluster.py"
              and where not in CUT_ELSEWHERE for node in ast.walk(tree) if _forgiving(node, 1e-12)}
    assert copies == set()
    in_executors = {f"{where}:{node.lineno}: {ast.unparse(node)}" for where, tree in _trees().items()
                    if where.startswith(EXECUTORS) for node in ast.walk(tree)
                    if _forgiving(node) or (isinstance(node, ast.Compare)
                                            and any(isinstance(op, (ast.GtE, ast.Gt)) for op in node.ops)
                                            and any(w in ast.unparse(node) for w in ("threshold", "floor")))}
    assert in_executors == set()


ONLINE_RESOLVES = ("online/calibrate.py: resolve(config: OnlineConfig, ...) profiles and chooses settings of its own; "
                   "the online detector takes the batch method objects and their calibration with issue 57's "
                   "'online detector on the same methods'")


@pytest.mark.parametrize("scope", ["batch", pytest.param("online", marks=pytest.mark.xfail(strict=True,
                                                                                          reason=ONLINE_RESOLVES))])
def test_settings_are_resolved_by_one_function(scope):
    """A function ``resolve(config: ...Config, ...)`` is written once: :func:`neardup.calibrate.resolve`."""
    found = _defined("resolve", first_arg="Config")
    assert {where for where in found if scope == "online" or not where.startswith("online/")} == {"calibrate.py"}


def test_the_fork_server_is_started_in_one_place():
    """Worker pools and their fork server are made in ``engine/processes.py`` alone (``start_server``)."""
    assert _defined("start_server") == {"engine/processes.py"}
    starts = {"ensure_running", "set_forkserver_preload", "get_context", "set_start_method", "ProcessPoolExecutor",
              "Pool"}
    calls = {where for where, tree in _trees().items() for node in ast.walk(tree) if isinstance(node, ast.Call)
             and (node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)) in starts}
    assert calls == {"engine/processes.py"}
