"""Sweeps: run specs with content-hash ids, grid expansion, and the resumable runner."""

from __future__ import annotations

from .runner import (
    BACKENDS,
    Backend,
    Executor,
    LocalBackend,
    ProcessBackend,
    SweepSummary,
    default_workers,
    make_backend,
    run_sweep,
    run_sweeps,
)
from .spec import RunResult, RunSpec, canonical_json, grid_specs

__all__ = [
    "BACKENDS",
    "Backend",
    "Executor",
    "LocalBackend",
    "ProcessBackend",
    "RunResult",
    "RunSpec",
    "SweepSummary",
    "canonical_json",
    "default_workers",
    "grid_specs",
    "make_backend",
    "run_sweep",
    "run_sweeps",
]
