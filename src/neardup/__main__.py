"""``python -m neardup``: the command line."""

from neardup.cli import main

main()
