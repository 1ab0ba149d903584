"""Everything the project writes to disk: the SQLite run store (:mod:`.run_store`), its health checks
(:mod:`.health`) and schema migrations (:mod:`.migrations`), and the ownership of output folders
(:mod:`.ownership`). The names below are imported on first use, so the command line can check an
output folder's ownership without importing pandas."""

from __future__ import annotations

from ..lazy_exports import lazy_exports

_HOMES = {"RunStore": ".run_store", "is_run_store": ".run_store"}
__getattr__ = lazy_exports(__name__, _HOMES)
__all__ = sorted(_HOMES)
