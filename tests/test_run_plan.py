"""One run plan (issue 57): ``neardup dedup --dry-run`` prints what a run resolves (the method with auto's
calibration, the engine and its memory plan) and writes nothing; the Python API and the command line pick the
engine by one rule (:func:`neardup.run_plan.engine_for`)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import neardup
from neardup.cli import build_app


def _dry_run(*args: str) -> dict:
    got = CliRunner().invoke(build_app("dedup"), ["dedup", *args, "--dry-run"])
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout)


def test_a_dry_run_prints_what_the_run_resolves_and_writes_nothing(example_path, tmp_path):
    plan = _dry_run(str(example_path), "-o", str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
    run = neardup.dedup(example_path, output=tmp_path / "run")
    params = run.summary["params"]
    calibration = run.summary["calibration"]
    assert plan["method"]["method"] == params["method"] and plan["method"]["shingle"] == params["shingle"]
    assert {k: plan["calibration"][k] for k in ("profile", "choice")} == {k: calibration[k] for k in ("profile", "choice")}
    if (calibration.get("scores") or {}).get("decided") != "scores":  # else the run's candidate scores moved it
        assert plan["method"]["threshold"] == params["threshold"]
    assert plan["engine"]["name"] == run.summary["engine"]["name"] == "memory"
    assert plan["inputs"] == [str(example_path)] and plan["read"]["text_field"] == "text"
    told = _dry_run(str(example_path), "-o", str(tmp_path / "out"), "--workers", "1", "-t", "0.7")
    assert told["engine"]["name"] == "local" and told["engine"]["plan"]["workers"] == 1
    assert told["method"]["threshold"] == 0.7 and told["calibration"]["given"] == ["threshold"]


def test_the_api_and_the_command_line_pick_the_same_engine(example_path, tmp_path):
    lines = example_path.read_text(encoding="utf-8").splitlines()
    big = tmp_path / "big.jsonl"  # over the megabyte a file runs in memory up to
    with big.open("w", encoding="utf-8") as fh:
        for k in range(12):
            for line in lines:
                rec = json.loads(line)
                fh.write(json.dumps({**rec, "id": f"{k}-{rec['id']}"}) + "\n")
    assert big.stat().st_size > 2**20
    for path, name in ((example_path, "memory"), (big, "local")):
        assert _dry_run(str(path), "-o", str(tmp_path / "o"))["engine"]["name"] == name
        assert neardup.dedup(path, evidence=False).summary["engine"]["name"] == name
    assert neardup.dedup(lines[:5]).summary["engine"]["name"] == "memory"  # data in Python


def test_a_script_without_a_guard_and_a_program_on_stdin_run_the_chunked_engine(example_path, tmp_path):
    """The workers do not import the caller's main module: a script's top level is not run again in each worker
    (which would start workers from workers), and a program read from stdin has none to import."""
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text("import neardup\n"
                      f"r = neardup.dedup({str(example_path)!r}, engine=neardup.EngineConfig(name='local', workers=2), evidence=False)\n"
                      "print('removed', r.summary['n_duplicates'], r.summary['engine']['name'])\n")
    want = neardup.dedup(example_path, evidence=False).summary["n_duplicates"]
    for how in ([str(script)], ["-"]):
        got = subprocess.run([sys.executable, *how], input=script.read_text() if how == ["-"] else None,
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert got.returncode == 0, got.stderr[-2000:]
        assert got.stdout.split() == ["removed", str(want), "local"], got.stdout
