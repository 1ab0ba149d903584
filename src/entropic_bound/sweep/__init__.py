"""Sweeps: run specs with content-hash ids, grid expansion, the resumable runner and its backends,
and the progress a sweep reports (:mod:`.group_progress`, :mod:`.time_left`). The names below are
imported on first use, so a trainer reporting progress imports no runner."""

from __future__ import annotations

from ..lazy_exports import lazy_package

#: each (relative) module → the public names it defines, imported on first use
__getattr__, __all__ = lazy_package(
    __name__,
    {
        ".runner": (
            "BACKENDS",
            "Backend",
            "Executor",
            "LocalBackend",
            "ProcessBackend",
            "SweepSummary",
            "default_workers",
            "make_backend",
            "run_sweep",
            "run_sweeps",
        ),
        ".spec": ("RunResult", "RunSpec", "canonical_json", "grid_specs"),
    },
)
