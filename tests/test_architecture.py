"""The shape of the code that the design promises: no import cycles, and each derivation written once
(an executor, ``match`` or the online detector calls the method's own; see docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

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
