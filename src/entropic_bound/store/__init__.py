"""Everything the project writes to disk: the SQLite run store (:mod:`.run_store`), its health checks
(:mod:`.health`) and schema migrations (:mod:`.migrations`), and the ownership of output folders
(:mod:`.ownership`). The names below are imported on first use, so the command line can check an
output folder's ownership without importing pandas."""

from __future__ import annotations

from ..lazy_exports import lazy_package

#: each (relative) module → the public names it defines, imported on first use
__getattr__, __all__ = lazy_package(
    __name__,
    {
        ".run_store": ("RunStore", "is_run_store"),
    },
)
