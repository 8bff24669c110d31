"""Imported once by the fork server that starts the chunked engine's worker processes, so every
forked worker starts warm: the stage modules imported, the normalization table built, and pandas
imported when it is installed (PyArrow imports it on its first array construction; once here instead
of once per worker).

Owns the warm-up of worker processes; must not run a stage.
"""

from __future__ import annotations

import importlib.util

import neardup.engine.local  # noqa: F401  (the stages the workers run)
from neardup.text.normalize import alnum_table

alnum_table()
if importlib.util.find_spec("pandas") is not None:
    import pandas  # noqa: F401
