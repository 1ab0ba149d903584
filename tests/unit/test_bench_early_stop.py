"""``bench/bench_early_stop.py``: a plateau stops early, a falling curve runs on, flips are counted,
an ensemble stops with its last member, and a missing store is a one-line error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_early_stop as bench  # noqa: E402

from entropic_bound.store.run_store import RunStore  # noqa: E402
from entropic_bound.sweep import RunResult, RunSpec  # noqa: E402

PROV = {"versions": {"python": "3.x", "torch": "9.9"}, "git_commit": "abc123"}
STEPS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]  # log-spaced, budget 1000
SIGMA = 0.1  # floor σ² = 0.01
LOW, HIGH = [1.0, 0.01, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]  # energy ranks 1 and 2


def plateau(step: float) -> float:
    return SIGMA**2 + 0.2 + 0.5 * np.exp(-step / 20)  # excess settles at 0.2 by step ~150


def falling(step: float) -> float:
    return SIGMA**2 + 1.0 / (1.0 + step)  # excess falls ~25 % over every last quarter


def _result(experiment: str, seed: int, rank: int, loss: list, spectra: list) -> RunResult:
    params = {"rank": rank, "task.sigma": SIGMA, "train.steps": STEPS[-1], "draw": 5}
    curves = {"step": STEPS, "loss": loss, "spectrum_A": spectra}
    return RunResult(RunSpec(experiment, params, seed), "ok", {"train_loss": loss[-1]}, curves)


def _store(tmp_path: Path, results: list[RunResult]) -> Path:
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        for r in results:
            store.put(r, provenance=PROV)
    return path


def _summary(path: Path, capsys, experiment: str) -> dict:
    assert bench.main(["--store", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["experiments"][experiment]


def test_a_plateau_stops_early_and_a_falling_curve_does_not():
    excess = lambda f: [f(s) - SIGMA**2 for s in STEPS]  # noqa: E731
    rule = bench.StopRule(tol=0.1, min_share=0.25)
    assert STEPS[rule.stop_index(STEPS, excess(plateau), STEPS[-1])] == 256  # the first past a quarter
    assert rule.stop_index(STEPS, excess(falling), STEPS[-1]) == len(STEPS) - 1
    assert STEPS[bench.StopRule(0.1, 0.5).stop_index(STEPS, excess(plateau), STEPS[-1])] == 512


def test_steps_saved_and_flips_are_counted(tmp_path, capsys):
    # a plateau whose rank doubles and whose loss drops under the floor after the stop: both flip
    left = [plateau(s) for s in STEPS[:-1]] + [0.5 * SIGMA**2]
    runs = [
        _result("X9", 0, 1, [plateau(s) for s in STEPS], [LOW] * len(STEPS)),
        _result("X9", 1, 1, [falling(s) for s in STEPS], [LOW] * len(STEPS)),
        _result("X9", 2, 1, left, [LOW] * (len(STEPS) - 1) + [HIGH]),
    ]
    s = _summary(_store(tmp_path, runs), capsys, "X9")
    assert (s["runs"], s["stopped_early"], s["stopped_at_earliest"], s["groups"]) == (3, 2, 2, 3)
    assert s["membership"].startswith("unknown")  # X9 is not registered: each run its own group
    assert np.isclose(s["saved_per_run"], 2 * (1000 - 256) / 3000)
    assert s["saved_per_group"] == s["saved_per_run"]
    assert (s["rank_0.9_flips"], s["floor_flips"], s["runs_with_any_flip"], s["left_plateau"]) == (1, 1, 1, 1)


def test_an_ensemble_stops_with_its_last_member(tmp_path, capsys):
    # E1's members differ in rank only: the plateau and the falling curve train in one ensemble
    runs = [
        _result("E1", 0, 1, [plateau(s) for s in STEPS], [LOW] * len(STEPS)),
        _result("E1", 0, 2, [falling(s) for s in STEPS], [LOW] * len(STEPS)),
    ]
    s = _summary(_store(tmp_path, runs), capsys, "E1")
    assert (s["groups"], s["stopped_early"], s["membership"]) == (1, 1, "experiment's ensembles")
    assert np.isclose(s["saved_per_run"], (1000 - 256) / 2000)
    assert s["saved_per_group"] == 0.0


def test_a_missing_store_is_a_one_line_error(tmp_path, capsys):
    assert bench.main(["--store", str(tmp_path / "absent.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no run store") and err.count("\n") == 1


def test_a_recovery_flip_is_counted_where_a_claim_reads_recovery():
    # r* = 1 at the stop (checkpoint 9, step 256); the full run ends at rank 2: C3 reads no recovery
    ranks = {0.9: np.array([1] * (len(STEPS) - 1) + [2]), 0.99: np.array([1] * (len(STEPS) - 1) + [2])}
    run = {"experiment": "E2", "params": {"task.r_star": 1}}
    config = {"verdict": {"c3_tolerance": 0.5}}
    assert bench.recovery_flip(run, config, ranks, STEPS.index(256))
    assert not bench.recovery_flip(run, {"verdict": {"c3_tolerance": 1.0}}, ranks, STEPS.index(256))
    assert not bench.recovery_flip({**run, "experiment": "E4"}, config, ranks, STEPS.index(256))
