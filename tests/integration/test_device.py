"""Every experiment trains on ``--device`` through one code path (``experiments.framework.device.train_on``).

Without CUDA the CPU path of that code is tested (every move a no-op, numbers unchanged); the tests
marked ``cuda`` run a tiny grid of every experiment on the GPU and compare it with the CPU within a
float tolerance (CUDA kernels round differently), and are skipped where PyTorch sees no GPU
(``bench/device_check.sh`` runs them on a machine that has one).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from entropic_bound.experiments import tiny_settings
from entropic_bound.experiments.framework.device import MovedBatches, to_device, train_on
from entropic_bound.models import LinearOperatorEnsemble, MemberSpec
from entropic_bound.pipeline import configure, run_experiments
from entropic_bound.registry import EXPERIMENTS
from entropic_bound.store import RunStore
from entropic_bound.tasks import FixedOperatorTask
from entropic_bound.training import FixedData, FreshData, MomentData, TrainConfig, train_ensemble


def _setup(kind: str):
    task = FixedOperatorTask(n=6, d=3, r_star=2, sigma=0.1)
    teacher = task.teacher(torch.Generator().manual_seed(1))
    members = [MemberSpec(r, 0.1, 10 + r) for r in (1, 2, 3)]
    model = LinearOperatorEnsemble(members, n=6, d=3, d_v=3, V_known=teacher.V, dtype=torch.float64)
    gen = torch.Generator().manual_seed(2)
    if kind == "fresh":
        return model, FreshData(teacher, 16, gen)
    batch = teacher.sample(40, gen)
    return model, (
        FixedData(batch.X, batch.Y, 8, gen) if kind == "fixed" else MomentData.from_data(batch.X, batch.Y)
    )


@pytest.mark.parametrize("kind", ["fixed", "fresh", "moments"])
def test_train_on_the_cpu_is_train_ensemble(kind):
    """The device path on the CPU trains exactly what train_ensemble trains (same process, same code)."""
    cfg = TrainConfig(steps=25, lr=0.05, checkpoints=3)
    (m1, d1), (m2, d2) = _setup(kind), _setup(kind)
    a, b = train_ensemble(m1, d1, cfg), train_on("cpu", m2, d2, cfg)
    np.testing.assert_allclose(a.final_loss, b.final_loss, rtol=1e-12, atol=0)  # same code, same process
    assert np.array_equal(a.steps_run, b.steps_run)  # step counts: integers
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters()))
    assert all(p.device.type == "cpu" for p in m2.parameters())


def test_to_device_keeps_cpu_tensors_and_refuses_unknown_sources():
    _, fixed = _setup("fixed")
    moved = to_device(fixed, "cpu")
    assert moved.X is fixed.X and moved.generator is fixed.generator  # no copy, same minibatch stream
    _, fresh = _setup("fresh")
    assert isinstance(to_device(fresh, "cpu"), MovedBatches)
    with pytest.raises(TypeError, match="no rule to move"):
        to_device(object(), "cpu")


def test_every_training_experiment_accepts_cuda():
    for name in EXPERIMENTS.names():
        exp = configure(name, "quick", {})
        assert ("cuda" in exp.devices) == (name != "E6"), name  # E6 trains nothing


def _numbers(out) -> dict:
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        return {r["run_id"]: (r["status"], r["metrics"]) for r in store.records()}


def _close(a: float, b: float) -> bool:
    if isinstance(a, float) and isinstance(b, float) and (math.isnan(a) or math.isnan(b)):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-3, abs_tol=1e-6) if isinstance(a, float) else a == b


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch sees no CUDA device")
@pytest.mark.parametrize("name", [n for n in EXPERIMENTS.names() if n != "E6"])
def test_a_tiny_grid_on_cuda_matches_the_cpu(name, tmp_path):
    overrides = {name: tiny_settings(name)}
    run_experiments([name], overrides=overrides, out=tmp_path / "cpu", workers=1)
    run_experiments([name], overrides=overrides, out=tmp_path / "cuda", workers=1, device="cuda")
    cpu, gpu = _numbers(tmp_path / "cpu"), _numbers(tmp_path / "cuda")
    assert set(cpu) == set(gpu) and all(cpu[i][0] == gpu[i][0] for i in cpu)  # same runs, same statuses
    far = [
        (run_id, key)
        for run_id, (status, metrics) in cpu.items()
        for key, value in metrics.items()
        if key not in ("wall_s", "cpu_s", "timing_s") and not _close(value, gpu[run_id][1][key])
    ]
    # an early-stop step or an integer estimate at a threshold may move with the rounding: 5 % leeway
    assert len(far) <= sum(len(m) for _, m in cpu.values()) // 20, (
        f"{len(far)} metrics differ beyond float tolerance: {far[:5]}"
    )
