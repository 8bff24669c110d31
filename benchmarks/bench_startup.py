"""The fixed start-up cost of the command line: wall time and peak RSS of short ``neardup`` commands.

Usage::

    python benchmarks/bench_startup.py [--runs 15] [--src LABEL=PATH ...] [--bytecode cached|env] [--json OUT]

Runs each of these as a child process, ``--runs`` times, in alternation (one run of every command, then
the next round), after one warm-up round that is not counted:

    python -c pass                                      (the interpreter alone: the floor)
    python -c "import neardup"
    python -m neardup --help                            (neardup --help)
    python -m neardup dedup --help
    python -m neardup dedup examples/news.jsonl -o TMP --quiet   (a tiny run, 300 documents)

and prints, per command, the median wall seconds, the start-up cost above ``python -c pass`` (the
difference of the medians, measured in the same rounds) and the median peak RSS (``ru_maxrss`` of the
child from ``wait4``: the largest single process of its tree, worker processes included).

``--src LABEL=PATH`` (repeatable) runs the commands against several source trees (``PYTHONPATH=PATH``),
alternating between them within each round (the order rotates every round), e.g. to compare a change with
the commit before it::

    git archive HEAD~1 src | tar -x -C /tmp/before
    python benchmarks/bench_startup.py --src before=/tmp/before/src --src after=src

Without ``--src`` the checkout's ``src`` is measured. ``--bytecode cached`` (the default) lets Python
cache compiled bytecode under a temporary ``PYTHONPYCACHEPREFIX`` (never in the repository), as an
installed package has it; ``--bytecode env`` keeps the environment as it is (with
``PYTHONDONTWRITEBYTECODE`` set, every neardup module is compiled again on every run).

Timings of processes this short are noisy on a shared machine: compare medians taken in the same run,
and the differences from ``python -c pass``, rather than figures from separate runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "news.jsonl"

#: (name, arguments after ``python``); OUT is replaced by a fresh output folder.
COMMANDS: list[tuple[str, list[str]]] = [
    ("python -c pass", ["-c", "pass"]),
    ("import neardup", ["-c", "import neardup"]),
    ("neardup --help", ["-m", "neardup", "--help"]),
    ("neardup dedup --help", ["-m", "neardup", "dedup", "--help"]),
    ("neardup dedup (300 docs)", ["-m", "neardup", "dedup", str(EXAMPLE), "-o", "OUT", "--quiet"]),
]


def run_once(args: list[str], env: dict[str, str], scratch: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``python ARGS``; a failure stops the benchmark."""
    out = scratch / "out"
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, *(str(out) if a == "OUT" else a for a in args)]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n{err}")
    return wall, usage.ru_maxrss / 1024  # KiB on Linux


def environment(src: Path, bytecode: str, pycache: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    if bytecode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="counted runs of each command (default 15)")
    ap.add_argument("--src", action="append", default=[], metavar="LABEL=PATH",
                    help="a source tree to measure (repeatable; default: this checkout's src)")
    ap.add_argument("--bytecode", choices=("cached", "env"), default="cached",
                    help="cached: bytecode cached in a temporary folder (default); env: the environment as it is")
    ap.add_argument("--json", type=Path, help="also write every timing here")
    opts = ap.parse_args()

    trees: list[tuple[str, Path]] = []
    for spec in opts.src or [f"src={REPO / 'src'}"]:
        label, _, path = spec.partition("=")
        if not path or not (Path(path) / "neardup" / "__init__.py").exists():
            raise SystemExit(f"--src {spec}: give LABEL=PATH, PATH holding neardup/")
        trees.append((label, Path(path).resolve()))

    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load[0]:.2f}; "
          f"{opts.runs} runs per command and tree, alternating; bytecode: {opts.bytecode}")
    times: dict[tuple[str, str], list[float]] = {}
    rss: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="neardup-startup-") as tmp:
        scratch, pycache = Path(tmp) / "scratch", Path(tmp) / "pycache"
        scratch.mkdir()
        envs = {label: environment(path, opts.bytecode, pycache) for label, path in trees}
        for round_ in range(opts.runs + 1):  # round 0 warms caches (bytecode, files) and is not counted
            order = trees[round_ % len(trees):] + trees[:round_ % len(trees)]
            for name, args in COMMANDS:
                for label, _ in order:
                    wall, peak = run_once(args, envs[label], scratch)
                    if round_:
                        times.setdefault((name, label), []).append(wall)
                        rss.setdefault((name, label), []).append(peak)
    load_end = os.getloadavg()

    print(f"load average at the end {load_end[0]:.2f}\n")
    head = (f"{'command':26s} {'tree':>8s} {'median s':>9s} {'over pass':>10s} {'min s':>7s} {'max s':>7s} "
            f"{'peak RSS MiB':>13s}")
    print(head)
    print("-" * len(head))
    rows = []
    for name, _ in COMMANDS:
        for label, _ in trees:
            t = times[(name, label)]
            floor = statistics.median(times[(COMMANDS[0][0], label)])
            row = {"command": name, "tree": label, "median_s": statistics.median(t),
                   "over_pass_s": statistics.median(t) - floor, "min_s": min(t), "max_s": max(t),
                   "peak_rss_mib": statistics.median(rss[(name, label)]), "runs": t}
            rows.append(row)
            print(f"{name:26s} {label:>8s} {row['median_s']:9.3f} {row['over_pass_s']:10.3f} {row['min_s']:7.3f} "
                  f"{row['max_s']:7.3f} {row['peak_rss_mib']:13.1f}")
    if opts.json:
        opts.json.write_text(json.dumps({"runs": opts.runs, "bytecode": opts.bytecode, "rows": rows,
                                         "load_average": [load, load_end],
                                         "trees": {label: str(path) for label, path in trees}}, indent=1))


if __name__ == "__main__":
    main()
