"""``python -m neardup.online``: the online commands (``online eval|tune|split|make-noisy``, ``serve``).

Owns nothing but the entry point; must not contain logic (see neardup.cli.online).
"""

from neardup.cli.online import main

main()
