"""Stored numbers of a tiny grid of E1–E6 are bitwise those of the golden file.

The golden file was written by ``python tests/integration/test_golden_numbers.py --write`` at the
commit named inside it. A refactor must leave every run id, status and metric bit for bit as it
was; a change that means to alter the numbers regenerates the file and says why in its commit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from entropic_bound.pipeline import run_experiments
from entropic_bound.store import RunStore

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_tiny.json"
TIMINGS = {"cpu_s", "timing_s", "wall_s"}  # measured durations: never the same twice

TINY = {
    "E1": {
        "task.r_stars": [2],
        "task.spectra": ["flat", "geometric"],
        "ranks": [1, 2, 3],
        "task.n": 8,
        "task.d": 4,
        "train.steps": 60,
        "train.n_samples": 24,
    },
    "E2": {
        "task.r_stars": [2],
        "task.n": 8,
        "task.d": 2,
        "sample_counts": [2, 32],
        "init_scales": [0.001, 1.0],
        "train.steps": 60,
        "train.checkpoints": 4,
    },
    "E3": {
        "task.n": 8,
        "task.d": 8,
        "task.r_star": 2,
        "ranks": [2],
        "seeds": 1,
        "v_settings": ["known"],
        "train.steps": 30,
        "x2_train.steps": 20,
        "x2_ranks": [8],
        "n_test": 64,
        "n_mixer": 8,
    },
    "E4": {
        "task.n": 6,
        "task.d": 8,
        "task.r_stars": [2],
        "task.spectra": ["flat"],
        "v_settings": ["known"],
        "n_test": 64,
        "train.n_samples": 32,
        "train.steps": 20,
        "train.checkpoints": 3,
    },
    "E5": {
        "task.n": 6,
        "task.d": 8,
        "task.r_stars": [2],
        "task.spectra": ["flat"],
        "init_scales": [0.001],
        "c7_sample_counts": [],
        "n_test": 64,
        "n_mixer": 8,
        "train.n_samples": 32,
        "train.steps": 20,
        "train.checkpoints": 3,
    },
    "E6": {
        "task.d": 8,
        "task.d_v": 8,
        "task.ns": [6],
        "task.r_stars": [1, 3],
        "task.spectra": ["flat"],
        "sample_counts": [4, 48],
        "task.sigmas": [0.0, 0.1],
        "task.sigma_ref": 0.0,
        "x1_ns": [],
        "seeds": 1,
    },
}


def stored_numbers(out: Path, workers: int = 1) -> dict:
    """``{experiment: {run_id: {"status", "metrics": {name: float.hex()}}}}`` of a tiny reproduce."""
    run_experiments(list(TINY), scale="quick", overrides=TINY, out=out, workers=workers)
    numbers: dict = {}
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        for rec in store.records():
            metrics = {k: float(v).hex() for k, v in sorted(rec["metrics"].items()) if k not in TIMINGS}
            numbers.setdefault(rec["experiment"], {})[rec["run_id"]] = {
                "status": rec["status"],
                "metrics": metrics,
            }
    return numbers


def test_tiny_grid_numbers_are_bitwise_golden(tmp_path):
    golden = json.loads(GOLDEN.read_text())["numbers"]
    got = stored_numbers(tmp_path)
    for name in TINY:
        assert set(got[name]) == set(golden[name]), f"{name}: the run ids changed"
        for run_id, rec in golden[name].items():
            assert got[name][run_id] == rec, f"{name} run {run_id} differs from the golden numbers"


@pytest.mark.slow
def test_two_worker_processes_store_the_golden_numbers(tmp_path):
    """Spawned workers (one torch and one BLAS thread each) give bitwise the numbers of one process."""
    golden = json.loads(GOLDEN.read_text())["numbers"]
    assert stored_numbers(tmp_path, workers=2) == golden


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        numbers = stored_numbers(Path(tmp))
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps({"commit": commit, "numbers": numbers}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
elif __name__ == "__main__":
    pytest.fail("usage: python tests/integration/test_golden_numbers.py --write")
