"""A stored run as a tracker sees it: hyper-parameters, final metrics, scalar curves by step.

The store keeps a run's ``curves`` as free-form JSON (see :meth:`RunStore.records`): a ``step``
list and, beside it, curves with one entry per step (``loss``, ``spectrum_A``, E7's ``heads``
dict, …), plus curves that describe the teacher or the final model rather than training
(:data:`NOT_OVER_STEPS`). Trackers want named scalar series, so:

- a curve over steps becomes one series per scalar it holds: ``loss`` → ``loss``;
  ``spectrum_A`` (a vector per step) → ``spectrum_A/0``, ``spectrum_A/1``, …; nested dicts and
  arrays are walked the same way (``heads/sink_score/0/3`` is layer 0, head 3);
- a 1-D numeric curve not over steps (a teacher's singular values) becomes a series over its index,
  tagged ``by_index/<name>`` so it is never mistaken for a training curve;
- strings (E6's ``reason``) are kept as text; larger arrays not over steps (E3's mean mixers) are
  left to the formats that keep files (MLflow stores every run's curves as ``curves.json``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from ..config import flatten

# Curves that are not indexed by training step although their length may equal the step count.
NOT_OVER_STEPS = frozenset(
    {
        "teacher_singular_values",
        "true_singular_values",
        "singular_values",
        "mean_mixer",
        "target_mean_mixer",
    }
)

Series = list[tuple[int, float]]  # (step or index, value)


@dataclass
class RunView:
    """One stored run in a tracker's terms."""

    experiment: str
    run_id: str
    status: str
    created_ms: int  # the run's storage time, milliseconds since the epoch
    hparams: dict[str, str | int | float | bool]
    metrics: dict[str, float]  # final metrics (NaN where a diverged run has none)
    last_step: int
    series: dict[str, Series] = field(default_factory=dict)  # scalar curves over training steps
    by_index: dict[str, Series] = field(default_factory=dict)  # 1-D curves over their index
    text: dict[str, str] = field(default_factory=dict)
    curves: dict = field(default_factory=dict)  # the stored curves, untouched
    provenance: dict[str, str] = field(default_factory=dict)


def hparam_value(value) -> str | int | float | bool:
    """Trackers accept scalars only: lists as JSON text, ``None`` as ``"null"``."""
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, separators=(",", ":"))


def _scalars(value, prefix: str) -> dict[str, float]:
    """Every number in a nested list/dict, keyed ``prefix/i/j…`` (``prefix`` alone for a number)."""
    if isinstance(value, bool) or value is None:
        return {}
    if isinstance(value, (int, float)):
        return {prefix: float(value)}
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    out: dict[str, float] = {}
    for key, item in items:
        out.update(_scalars(item, f"{prefix}/{key}"))
    return out


def _walk(name: str, value, steps: list[int], view: RunView) -> None:
    if isinstance(value, str):
        view.text[name] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(f"{name}/{key}", item, steps, view)
    elif isinstance(value, list) and steps and len(value) == len(steps) and name not in NOT_OVER_STEPS:
        for step, item in zip(steps, value):
            for tag, number in _scalars(item, name).items():
                view.series.setdefault(tag, []).append((step, number))
    elif isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
        view.by_index[f"by_index/{name}"] = [(i, float(v)) for i, v in enumerate(value)]


def run_view(record: dict) -> RunView:
    """:class:`RunView` of one :meth:`RunStore.records` entry."""
    curves = record.get("curves") or {}
    steps = [int(s) for s in curves.get("step", [])]
    params = {k: hparam_value(v) for k, v in flatten(record["params"]).items()}
    hparams = {"experiment": record["experiment"], "seed": int(record["seed"]), "status": record["status"]}
    hparams.update(params)
    created = record.get("created_at")
    view = RunView(
        experiment=record["experiment"],
        run_id=record["run_id"],
        status=record["status"],
        created_ms=int(datetime.fromisoformat(created).timestamp() * 1000) if created else 0,
        hparams=hparams,
        metrics={k: float(v) for k, v in record["metrics"].items()},
        last_step=steps[-1] if steps else 0,
        curves=curves,
        provenance={
            "git_commit": record.get("git_commit") or "unknown",
            **{f"version.{k}": str(v) for k, v in (record.get("versions") or {}).items()},
        },
    )
    for name, value in curves.items():
        if name != "step":
            _walk(name, value, steps, view)
    return view
