"""``python -m neardup.online``: the online commands (``online eval|tune|split|make-noisy``, ``serve``).

Owns nothing but the entry point; must not contain logic (see cli.py).
"""

from neardup.online.cli import main

main()
