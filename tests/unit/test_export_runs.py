"""How a stored run's curves become tracker series (format-independent)."""

from __future__ import annotations

import math

from entropic_bound.export.runs import hparam_value, run_view


def record(**curves) -> dict:
    return {
        "experiment": "E7",
        "run_id": "abc",
        "status": "diverged",
        "seed": 3,
        "params": {"train": {"lr": 0.002, "steps": 4}, "corpus": "markov", "dims": [2, 3], "tol": None},
        "metrics": {"val_loss": float("nan"), "steps_run": 2.0},
        "curves": curves,
        "versions": {"torch": "2.13"},
        "git_commit": "deadbeef",
        "created_at": "2026-11-30T23:00:00+00:00",
    }


def test_curves_over_steps_become_one_series_per_scalar():
    view = run_view(
        record(
            step=[0, 5, 9],
            train_loss=[3.0, 2.0, 1.5],
            kernel_singular_values=[[1.0, 0.5], [2.0, 0.25], [3.0, 0.125]],
            heads={"sink_score": [[[0.1, 0.2]], [[0.3, 0.4]], [[0.5, 0.6]]]},  # (layers, heads) per step
        )
    )
    assert view.series["train_loss"] == [(0, 3.0), (5, 2.0), (9, 1.5)]
    assert view.series["kernel_singular_values/1"] == [(0, 0.5), (5, 0.25), (9, 0.125)]
    assert view.series["heads/sink_score/0/1"] == [(0, 0.2), (5, 0.4), (9, 0.6)]
    assert view.last_step == 9 and view.by_index == {}


def test_curves_not_over_steps_are_indexed_or_kept_as_text():
    # three singular values beside three steps: still the teacher's, not a training curve
    view = run_view(
        record(
            step=[0, 1, 2],
            teacher_singular_values=[4.0, 2.0, 1.0],
            mean_mixer=[[0.5, 0.5], [1.0, 0.0]],
            reason="too few samples",
        )
    )
    assert view.by_index == {"by_index/teacher_singular_values": [(0, 4.0), (1, 2.0), (2, 1.0)]}
    assert view.text == {"reason": "too few samples"}
    assert not any(tag.startswith(("mean_mixer", "teacher")) for tag in view.series)
    assert view.curves["mean_mixer"] == [[0.5, 0.5], [1.0, 0.0]]  # kept whole for file-keeping formats


def test_hyper_parameters_are_flat_scalars_and_metrics_keep_nan():
    view = run_view(record())
    assert view.hparams["train.lr"] == 0.002 and view.hparams["corpus"] == "markov"
    assert view.hparams["dims"] == "[2,3]" and view.hparams["tol"] == "null"
    assert view.hparams["seed"] == 3 and view.hparams["status"] == "diverged"
    assert math.isnan(view.metrics["val_loss"]) and view.series == {} and view.last_step == 0
    assert view.provenance == {"git_commit": "deadbeef", "version.torch": "2.13"}
    assert view.created_ms == 1_796_079_600_000
    assert hparam_value(True) is True and hparam_value({"a": 1}) == '{"a":1}'
