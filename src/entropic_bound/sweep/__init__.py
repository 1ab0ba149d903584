"""Sweeps: run specs with content-hash ids, grid expansion, the resumable runner and its backends,
and the progress a sweep reports (:mod:`.group_progress`, :mod:`.time_left`). The names below are
imported on first use, so a trainer reporting progress imports no runner."""

from __future__ import annotations

from ..lazy_exports import lazy_exports

#: each public name → the module that defines it
_HOMES = {
    **dict.fromkeys(
        (
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
        ".runner",
    ),
    **dict.fromkeys(("RunResult", "RunSpec", "canonical_json", "grid_specs"), ".spec"),
}
__getattr__ = lazy_exports(__name__, _HOMES)
__all__ = sorted(_HOMES)
