"""`reproduce` with one worker (in process) and with two (one pool for every experiment, analysis
while others train) stores the same runs and decides the same verdicts.

Compared within a float tolerance, never bit for bit: the claim is "the same computation", and a
test must not depend on two processes rounding alike."""

from __future__ import annotations

import json
import math

from test_golden_numbers import TINY

from entropic_bound.experiments.framework.verdict import without_timings
from entropic_bound.pipeline import run_experiments
from entropic_bound.store import RunStore

NAMES = ["E1", "E2", "E6"]  # two trained experiments and one that trains nothing: seconds each


def _run(out, workers: int) -> tuple[dict, dict]:
    run_experiments(NAMES, scale="quick", overrides={n: TINY[n] for n in NAMES}, out=out, workers=workers)
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        runs = {r["run_id"]: (r["status"], r["metrics"]) for r in store.records()}
    return runs, without_timings(json.loads((out / "verdicts.json").read_text()))


def _close(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_close, a, b))
    return a == b


def test_one_and_two_workers_store_the_same_numbers_and_verdicts(tmp_path):
    runs_1, verdicts_1 = _run(tmp_path / "one", 1)
    runs_2, verdicts_2 = _run(tmp_path / "two", 2)
    assert runs_1.keys() == runs_2.keys()
    timings = {"wall_s", "cpu_s", "timing_s"}
    for run_id, (status, metrics) in runs_1.items():
        other_status, other = runs_2[run_id]
        assert status == other_status
        keys = metrics.keys() - timings
        assert keys == other.keys() - timings
        assert all(_close(metrics[k], other[k]) for k in keys), run_id
    assert verdicts_1.keys() == verdicts_2.keys()
    for claim, verdict in verdicts_1.items():
        assert verdict["verdict"] == verdicts_2[claim]["verdict"], claim
        assert _close(verdict["evidence"], verdicts_2[claim]["evidence"]), claim
