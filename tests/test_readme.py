"""The README's commands work on a fresh clone, and every measurement in docs/ says how to reproduce it.

README: every fenced ``bash`` and ``python`` block runs, in order, in one temporary folder holding a copy
of ``examples/`` (so later blocks may use what earlier ones wrote, as a reader would). Skipped:

* a block whose preceding line is an HTML comment starting ``<!-- not-run`` (a server that never exits,
  placeholders for the reader's own data, commands still being added on other branches);
* in a bash block, ``pip install ...`` steps and the test command itself: CI runs those (``.ci/run`` runs
  the README's second command verbatim, which :func:`test_first_screen` holds it to).

Each command must exit 0; the files the README says a command writes must exist, and the output schema
table must name exactly the columns (and types) the files have. ``docs/``: each section of a measurement
page that holds a table names a reproducing command (``python benchmarks/...py`` or ``neardup ...``),
and every ``benchmarks/`` script a page or the README names exists.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_LINES = 170
#: Pages without measurements (design and reference): their tables describe, they do not measure.
NOT_MEASUREMENTS = {"architecture.md", "reference.md"}
REPRODUCE = re.compile(r"python benchmarks/[\w/]+\.py|neardup (?:bench|tune|eval|online|dedup|train|match)\b")
SCRIPT = re.compile(r"benchmarks/[\w/]+\.py")
SKIPPED_STEPS = ("pip install", "python -m pytest")


def blocks(text: str) -> list[tuple[str, str, bool]]:
    """The fenced blocks of a Markdown text as (language, body, marked not-run)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        j = i + 1
        while not lines[j].startswith("```"):
            j += 1
        out.append((m.group(1), "\n".join(lines[i + 1:j]), before.startswith("<!-- not-run")))
        i = j + 1
    return out


def shell_commands(body: str) -> list[str]:
    """The commands of a bash block to run: continuation lines joined, comments and skipped steps dropped."""
    joined = re.sub(r"\\\n\s*", " ", body)
    commands = []
    for line in joined.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        steps = [s.strip() for s in line.split("&&") if s.strip() and not s.strip().startswith(SKIPPED_STEPS)]
        if steps:
            commands.append(" && ".join(steps))
    return commands


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of each Markdown section (headings inside code blocks do not count)."""
    out, heading, body, fenced = [], "", [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            out.append((heading, "\n".join(body)))
            heading, body = line, []
        else:
            body.append(line)
    out.append((heading, "\n".join(body)))
    return out


def has_table(body: str) -> bool:
    lines = body.splitlines()
    return any(a.startswith("|") and re.match(r"^\|\s*:?-{3,}", b) for a, b in itertools.pairwise(lines))


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every README block ran in, in order."""
    work = tmp_path_factory.mktemp("readme")
    shutil.copytree(REPO / "examples", work / "examples")
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
               NO_COLOR="1", COLUMNS="100")
    for n, (lang, body, not_run) in enumerate(blocks(README.read_text(encoding="utf-8"))):
        if not_run or lang not in ("bash", "python"):
            continue
        if lang == "python":
            script = work / f"readme_block_{n}.py"
            script.write_text(body, encoding="utf-8")
            runs = [[sys.executable, str(script)]]
        else:
            runs = [["bash", "-euo", "pipefail", "-c", cmd] for cmd in shell_commands(body)]
        for argv in runs:
            done = subprocess.run(argv, check=False, cwd=work, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"README block {n} ({lang}) failed: {argv[-1]}\n{done.stderr[-3000:]}"
    return work


def test_readme_is_short() -> None:
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines (at most {MAX_LINES}: measurements belong in docs/)"


def test_first_screen() -> None:
    """The first block is the two set-up commands, and the second is the one CI runs."""
    lang, body, _ = blocks(README.read_text(encoding="utf-8"))[0]
    commands = body.splitlines()
    assert lang == "bash" and len(commands) == 2
    assert commands[0].startswith("pip install -e . && neardup dedup examples/")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert commands[1] == ci


def test_readme_commands_write_what_it_says(ran: Path) -> None:
    text = README.read_text(encoding="utf-8")
    first_screen = text.split("## ", 1)[0].split("```", 2)[2]
    named = re.findall(r"`((?:out/)?[\w.]+\.(?:parquet|jsonl?))`", first_screen)
    assert len(named) >= 5
    for name in named:
        path = ran / (name if name.startswith("out/") else f"out/{name}")
        assert path.is_file(), f"the README says the first command writes {name}"
    assert (ran / "report.html").is_file() and (ran / "leaks" / "matches.parquet").is_file()


def schema_table(text: str) -> dict[str, list[tuple[str, str]]]:
    """The README's output table: file -> [(column, type)]."""
    out: dict[str, list[tuple[str, str]]] = {}
    section = text.split("## Output", 1)[1].split("\n## ", 1)[0]
    current = ""
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 4 or cells[0] == "file" or cells[0].startswith("---"):
            continue
        if cells[0]:
            current = re.findall(r"`([\w.]+)`", cells[0])[0]
        names = re.findall(r"`(\w+)`", cells[1])
        types = [t.strip() for t in cells[2].split(",")] if "{" not in cells[2] else [cells[2]]
        types = types * len(names) if len(types) == 1 else types  # one type for every column named
        assert len(types) == len(names), line
        out.setdefault(current, []).extend(zip(names, types))
    return out


def test_output_schema_is_every_column(ran: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    documented = schema_table(README.read_text(encoding="utf-8"))
    files = {"clusters.parquet": ran / "out" / "clusters.parquet", "pairs.parquet": ran / "out" / "pairs.parquet",
             "scores.parquet": ran / "out" / "scores.parquet", "evidence.parquet": ran / "out" / "evidence.parquet",
             "matches.parquet": ran / "leaks" / "matches.parquet"}
    assert set(documented) == set(files)
    for name, path in files.items():
        schema = pq.read_schema(path)
        assert [c for c, _ in documented[name]] == schema.names, name
        for column, typ in documented[name]:
            actual = schema.field(column).type
            if typ.startswith("list"):
                assert pa.types.is_list(actual) and pa.types.is_struct(actual.value_type), (name, column)
                fields = [actual.value_type.field(i).name for i in range(actual.value_type.num_fields)]
                assert re.findall(r"\w+", typ.split("{", 1)[1]) == fields, (name, column, fields)
            else:
                assert str(actual) == typ, (name, column, actual)


def test_summary_keys_are_documented(ran: Path) -> None:
    text = README.read_text(encoding="utf-8")
    summary = json.loads((ran / "out" / "summary.json").read_text(encoding="utf-8"))
    missing = [k for k in summary if f"`{k}`" not in text]
    assert not missing, f"summary.json keys the README does not explain: {missing}"


def measurement_pages() -> list[Path]:
    return [p for p in sorted(DOCS.glob("*.md")) if p.name not in NOT_MEASUREMENTS]


def test_docs_tables_say_how_to_reproduce() -> None:
    pages = measurement_pages()
    assert {"quality.md", "speed.md", "online.md", "training.md"} <= {p.name for p in pages}
    bare = [f"{page.name}: {heading or '(top)'}" for page in pages
            for heading, body in sections(page.read_text(encoding="utf-8"))
            if has_table(body) and not REPRODUCE.search(body)]
    assert not bare, f"tables without the command that reproduces them: {bare}"


def test_named_benchmark_scripts_exist() -> None:
    named = set()
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        named |= set(SCRIPT.findall(page.read_text(encoding="utf-8")))
    assert named
    missing = sorted(s for s in named if not (REPO / s).is_file())
    assert not missing, f"docs name scripts that do not exist: {missing}"


def test_readme_links_exist() -> None:
    links = re.findall(r"\]\(((?!https?:)[^)#]+)", README.read_text(encoding="utf-8"))
    assert links
    assert [x for x in links if not (REPO / x).exists()] == []
