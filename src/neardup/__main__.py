"""``python -m neardup``: the command line."""

from neardup.cli import app

app(prog_name="neardup")
