"""Online near-duplicate detection: one document at a time, answered at once, behind a store.

Owns the ``neardup.online`` package surface; must not hold logic (see the modules below).

* :mod:`~neardup.online.detector` - :class:`Detector`, :class:`Answer` (and :class:`OnlineConfig`, from
  :mod:`~neardup.online.settings`); :mod:`~neardup.online.calibrate` - the calibrated default (``method="auto"``);
  :mod:`~neardup.online.settings_file` - ``--config`` files, the batch configuration file included;
* :mod:`~neardup.online.store` - :class:`Store`, :class:`SQLiteStore`, :class:`PostgresStore`, :func:`open_store`;
* :mod:`~neardup.online.candidates` - the candidate steps (seed sketch, MinHash LSH) and their interface;
* :mod:`~neardup.online.verify` - first-fraction overlap, the update rule, evidence;
* :mod:`~neardup.online.evaluate` - replay a labelled stream, score it, tune; :mod:`~neardup.online.service` - HTTP.

>>> from neardup.online import Detector, open_store
>>> d = Detector(open_store("memory://"))
>>> d.add("1", "The central bank raised rates by half a point on Tuesday.").status
'original'
"""

from neardup.online.detector import (
    Answer,
    ConflictError,
    Detector,
    DocumentNotFound,
    InvalidDocument,
    OnlineConfig,
)
from neardup.online.store import MemoryStore, PostgresStore, SQLiteStore, Store, StoreError, open_store

__all__ = [
    "Answer", "ConflictError", "Detector", "DocumentNotFound", "InvalidDocument", "OnlineConfig",
    "Store", "SQLiteStore", "PostgresStore", "MemoryStore", "StoreError", "open_store",
]
