"""Stored numbers of a tiny grid of E1–E6 match the golden file: bitwise on its machine, closely elsewhere.

The golden file was written by ``python tests/integration/test_golden_numbers.py --write`` at the
commit named inside it, with the *fingerprint* of the machine that wrote it (Python, numpy and torch
versions, torch's CPU capability, the BLAS library and its core type, the CPU model and SIMD flags).

- Where the fingerprint matches, every run id, status and metric must be bit for bit as stored: a
  refactor leaves the numbers alone, and a change that means to alter them regenerates the file and
  says why in its commit.
- Elsewhere (another CPU or BLAS sums in another order), run ids and statuses must match, every
  *discrete* metric (integer-valued in every stored run of its experiment: ranks, counts, flags) must
  be exactly as stored, and every other metric within ``rtol = 1e-5``, ``atol = 1e-7``. The tolerance
  is what a few-ulp change of the inputs does after training (measured: up to 3e-6 relative; 1e-8
  absolute for the noise level of noiseless data, which is rounding noise itself).

Cross-machine equality of the discrete values cannot be shown on one machine, so
:func:`test_discrete_numbers_survive_few_ulp_perturbations` perturbs every sampled input and every
spectrum an estimator reads by a few ulps and checks that no stored discrete value moves.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from entropic_bound.experiments import tiny_settings
from entropic_bound.pipeline import run_experiments
from entropic_bound.spectra import ESTIMATOR_KEYS, estimators, panel_description
from entropic_bound.store import RunStore
from entropic_bound.tasks import base as tasks_base

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_tiny.json"
TIMINGS = {"cpu_s", "timing_s", "wall_s"}  # measured durations: never the same twice
RTOL, ATOL = 1e-5, 1e-7  # across machines (module docstring)
PERTURB_ULPS = 4

#: The experiments the golden file holds, each with the tiny grid its config declares.
TINY = {name: tiny_settings(name) for name in json.loads(GOLDEN.read_text())["numbers"]}


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


def fingerprint() -> dict:
    """What decides the last bits of the numbers on this machine (module docstring)."""
    try:
        from threadpoolctl import threadpool_info

        blas = sorted(
            f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
            for i in threadpool_info()
            if i.get("user_api") == "blas"
        )
    except ImportError:  # threadpoolctl is optional: numpy's build record names the library
        blas = [str(np.show_config(mode="dicts")["Build Dependencies"]["blas"].get("version"))]
    cpu = {"model": platform.processor(), "flags": []}
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        lines = cpuinfo.read_text().splitlines()
        cpu["model"] = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "")
        flags = next(
            (ln.split(":", 1)[1].split() for ln in lines if ln.startswith(("flags", "Features"))), []
        )
        cpu["flags"] = sorted(f for f in flags if f.startswith(("avx", "fma", "sse4", "asimd", "sve")))
    return {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "blas": blas,
        "cpu": cpu,
    }


# Counts and flags the experiments store besides the panel's integer estimators.
COUNTS = {"steps_run", "identified", "full_rank", "r_hat", "exact", "identifiable", "confident_wrong"}
COUNTS |= {"too_few_samples", "n_equations", "n_unknowns", "noise_calibrated_rank"}
INTEGER_ESTIMATES = tuple(k for k, d in panel_description(sigma_known=True).items() if d["integer"])


def discrete_keys(runs: dict) -> set[str]:
    """The stored metrics that are counts: integer estimators (``<prefix>_numerical_rank``, …, or their
    mean over inputs, ``mixer_<key>``) and
    :data:`COUNTS` (``est_noise_calibrated_rank`` too). Continuous estimates that happen to be whole
    numbers (the stable rank of a flat spectrum) are not among them."""
    names = {key for rec in runs.values() for key in rec["metrics"]}
    return {k for k in names if k in COUNTS or k.endswith(INTEGER_ESTIMATES + tuple(COUNTS))}


def metric_names_agree(golden: dict, got: dict) -> bool:
    """Every stored metric is still there, and each new one is a column of a panel key the golden file
    does not know (an estimator registered since it was written adds ``<prefix>_<key>`` columns)."""
    known = {key for key in ESTIMATOR_KEYS if any(name.endswith(key) for name in golden)}
    added = set(got) - set(golden)
    return set(golden) <= set(got) and all(
        any(name.endswith(key) for key in ESTIMATOR_KEYS if key not in known) for name in added
    )


def differences(golden: dict, got: dict, *, bitwise: bool) -> list[str]:
    """Each way ``got`` departs from ``golden``: run ids, statuses, discrete metrics exactly; the other
    metrics bitwise or within ``RTOL``/``ATOL``. Empty when they agree."""
    problems = []
    for name, runs in golden.items():
        if set(got.get(name, {})) != set(runs):
            problems.append(f"{name}: the run ids changed")
            continue
        discrete = discrete_keys(runs)
        for run_id, rec in runs.items():
            mine = got[name][run_id]
            if mine["status"] != rec["status"] or not metric_names_agree(rec["metrics"], mine["metrics"]):
                problems.append(f"{name} run {run_id}: status or metric names differ")
                continue
            for key, hexed in rec["metrics"].items():
                want, have = float.fromhex(hexed), float.fromhex(mine["metrics"][key])
                if bitwise or key in discrete:
                    same = hexed == mine["metrics"][key]
                else:
                    same = bool(np.isclose(have, want, rtol=RTOL, atol=ATOL, equal_nan=True))
                if not same:
                    problems.append(f"{name} run {run_id} {key}: stored {want!r}, got {have!r}")
    return problems


def check_against_golden(got: dict) -> None:
    stored = json.loads(GOLDEN.read_text())
    bitwise = stored.get("fingerprint") == fingerprint()
    problems = differences(stored["numbers"], got, bitwise=bitwise)
    how = "bitwise (same machine fingerprint)" if bitwise else f"discrete exact, rtol={RTOL:g}, atol={ATOL:g}"
    assert not problems, f"{len(problems)} difference(s), compared {how}:\n" + "\n".join(problems[:20])


def test_tiny_grid_numbers_match_the_golden_file(tmp_path):
    check_against_golden(stored_numbers(tmp_path))


def test_a_new_panel_key_adds_columns_but_no_stored_metric_may_go(monkeypatch):
    """The golden file holds the metrics of the estimators registered when it was written: the columns
    of a panel key registered since are new (accepted), a stored metric that is gone is not, and
    neither is a new metric that is not a panel key's column."""
    stored = {"A_stable_rank": "0x1p+0", "rel_excess": "0x1p-3"}
    monkeypatch.setattr(sys.modules[__name__], "ESTIMATOR_KEYS", (*ESTIMATOR_KEYS, "half_top_rank"))
    assert metric_names_agree(
        stored, {**stored, "A_half_top_rank": "0x1p+1", "mixer_half_top_rank": "0x0p+0"}
    )
    assert not metric_names_agree(stored, {"A_stable_rank": "0x1p+0", "A_half_top_rank": "0x1p+1"})
    assert not metric_names_agree(stored, {**stored, "A_stable_rank_squared": "0x1p+0"})
    assert not metric_names_agree(stored, {**stored, "new_metric": "0x1p+0"})


def _jiggle(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``a`` with every entry moved by -PERTURB_ULPS, 0 or +PERTURB_ULPS ulps (relative), at random."""
    a = np.asarray(a, dtype=np.float64)
    return a * (1 + PERTURB_ULPS * np.finfo(np.float64).eps * rng.integers(-1, 2, a.shape))


def test_discrete_numbers_survive_few_ulp_perturbations(tmp_path, monkeypatch):
    """What another CPU does to the last bits — of the sampled data and of every spectrum an estimator
    reads — moves no stored discrete value, and the others stay within the cross-machine tolerance."""
    rng = np.random.default_rng(20261201)
    sample, call = tasks_base.Teacher.sample, estimators.Estimator.__call__

    def jiggled_sample(self, n_samples, generator, dtype=torch.float64):
        batch = sample(self, n_samples, generator, dtype=torch.float64)
        moved = (torch.from_numpy(_jiggle(t.numpy(), rng)).to(dtype) for t in (batch.X, batch.clean, batch.Y))
        return tasks_base.Batch(*moved)

    def jiggled_call(self, s, **params):
        s = s.detach().cpu().numpy() if isinstance(s, torch.Tensor) else s
        return call(self, _jiggle(s, rng), **params)

    monkeypatch.setattr(tasks_base.Teacher, "sample", jiggled_sample)
    monkeypatch.setattr(estimators.Estimator, "__call__", jiggled_call)
    got = stored_numbers(tmp_path)
    problems = differences(json.loads(GOLDEN.read_text())["numbers"], got, bitwise=False)
    assert not problems, (
        f"{len(problems)} difference(s) after {PERTURB_ULPS}-ulp perturbations:\n" + "\n".join(problems[:20])
    )


@pytest.mark.slow
def test_two_worker_processes_store_the_golden_numbers(tmp_path):
    """Spawned workers (one torch and one BLAS thread each) store what one process does."""
    check_against_golden(stored_numbers(tmp_path, workers=2))


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        numbers = stored_numbers(Path(tmp))
    GOLDEN.parent.mkdir(exist_ok=True)
    record = {"commit": commit, "fingerprint": fingerprint(), "numbers": numbers}
    GOLDEN.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
elif __name__ == "__main__":
    pytest.fail("usage: python tests/integration/test_golden_numbers.py --write")
