"""The ``--max-memory`` estimate against the memory a real training run takes, per student.

Each case runs in a fresh interpreter: a tiny warm-up run of the same path first (so torch's lazily
loaded kernels and buffers are not counted), then the resident set before the measured run and the
process's peak after it (``VmHWM``, a high-water mark reset just before the run — the peak of the
imports before it is not the run's; no sampling, no timing). Shapes are large
enough (20–200 MB) that the allocator's page granularity is noise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from entropic_bound.cli import main

MEASURE = """
import json, sys
import torch
from entropic_bound.models import MemberSpec
from entropic_bound.registry import STUDENTS
from entropic_bound.training import FixedData, MomentData, TrainConfig, train_ensemble
from entropic_bound.training.memory import ensemble_memory

torch.set_num_threads(1)
name, n, d, M, N, batch, moments = sys.argv[1], *map(int, sys.argv[2:7]), sys.argv[7] == "1"
cls = STUDENTS.get(name)
cfg = TrainConfig(steps=3, n_samples=N, batch_size=0 if moments else batch, checkpoints=0)

def status(field):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(field + ":"))

def reset_peak():  # the high-water mark so far may come from imports, not from training
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")

def train(n, d, M, N, batch):
    g = torch.Generator().manual_seed(0)
    X, Y = (torch.randn(N, n, d, generator=g, dtype=torch.float64) for _ in range(2))
    members = [MemberSpec(cls.full_rank(n, d), 0.1, s) for s in range(M)]
    model = STUDENTS.build(name, members, n=n, d=d, d_v=d, dtype=torch.float64)
    train_ensemble(model, MomentData.from_data(X, Y) if moments else FixedData(X, Y, batch, g), cfg)

train(4, 4, 1, 8, 4)
before = status("VmRSS")
reset_peak()
train(n, d, M, N, batch)
measured = status("VmHWM") - before
estimate = ensemble_memory(cls, cfg, n=n, d=d, d_v=d, moments=moments).total(M)
print(json.dumps({"measured": measured, "estimate": estimate}))
"""


def _cases() -> list[tuple]:
    """(student, n, d, models, samples, batch, trained from moments): a mini-batch case for every
    registered student, and a full-batch case from moments for those that train from them."""
    from entropic_bound.registry import STUDENTS

    cases = []
    for name in STUDENTS:
        cases.append((name, 32, 16, 4, 512, 128, 0))
        if hasattr(STUDENTS.get(name), "moment_loss"):
            cases.append((name, 32, 32, 8, 256, 0, 1))
    return cases


CASES = _cases()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}{'-moments' if c[-1] else ''}")
def test_the_estimate_is_within_2x_of_the_measured_peak(case):
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *map(str, case)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    )
    got = json.loads(out.stdout)
    assert 0.5 <= got["estimate"] / got["measured"] <= 2.0, got


def test_a_grid_whose_moments_do_not_fit_is_refused_before_any_work(tmp_path, capsys):
    args = ["run", "E1", "--out", str(tmp_path / "o"), "--set", "task.n=512", "--set", "task.d=512"]
    assert main([*args, "--set", "train.steps=1", "--max-memory", "2000"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "at least one model" in err and "MiB shared" in err
    assert not (tmp_path / "o").exists()
