"""One sweep of several experiments through one backend: costliest groups first, each experiment
handed over (for its analysis) as soon as its last group is stored, the same rows as separate sweeps."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the toy executors must be importable by spawned workers too

from _sweep_toy import CostedToyExecutor, named_specs  # noqa: E402

from entropic_bound.store import RunStore  # noqa: E402
from entropic_bound.sweep import default_workers, run_sweep, run_sweeps  # noqa: E402

PROV = {"versions": {"python": "test"}, "git_commit": None}
KEEP = ("run_id", "experiment", "params", "seed", "status", "diverged_step", "metrics", "curves")


def _rows(store) -> list[str]:
    """Every stored row as JSON text minus what varies (time, provenance); equal text, equal floats."""
    return sorted(json.dumps({k: r[k] for k in KEEP}, sort_keys=True) for r in store.records())


@pytest.fixture
def separate_rows(tmp_path):
    """The rows of three experiments swept one after another, one sweep each."""
    with RunStore(tmp_path / "separate.sqlite") as store:
        for name in ("cheap", "dear", "done"):
            run_sweep(CostedToyExecutor(name), named_specs(name), store, provenance=PROV)
        return _rows(store)


class Journal:
    """What the executors ran and when each experiment was handed over, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def executor(self, name: str, cost: float, **kwargs) -> CostedToyExecutor:
        journal = self

        class Logged(CostedToyExecutor):
            def execute(self, group):
                journal.events.append(("group", self.name))
                return super().execute(group)

        return Logged(name, cost, **kwargs)

    def done(self, executor, summary) -> None:
        self.events.append(("done", f"{executor.name} ran {summary.ran}"))


def test_costliest_first_and_each_experiment_handed_over_when_stored(tmp_path, separate_rows):
    journal = Journal()
    with RunStore(tmp_path / "joint.sqlite") as store:
        run_sweep(CostedToyExecutor("done"), named_specs("done"), store, provenance=PROV)
        jobs = [(journal.executor(n, c), named_specs(n)) for n, c in (("cheap", 1), ("dear", 5), ("done", 9))]
        summaries = run_sweeps(jobs, store, provenance=PROV, on_done=journal.done)
        assert [(s.total, s.skipped, s.ran) for s in summaries] == [(12, 0, 12), (12, 0, 12), (12, 12, 0)]
        # the cost is the runs' own seconds (0.01 for each of the 8 that do not diverge, the diverged
        # ones their share of their group's time), not when the experiment finished in the pool
        assert all(0.08 <= s.cpu_s <= 0.08 + s.wall_s for s in summaries[:2]) and summaries[2].cpu_s == 0
        assert _rows(store) == separate_rows  # same groups, same numbers, whatever the order
    groups = len(CostedToyExecutor("x").groups(named_specs("x")))
    assert journal.events == (
        [("done", "done ran 0")]  # nothing to run: handed over before any training
        + [("group", "dear")] * groups
        + [("done", "dear ran 12")]  # analysed while the cheap groups are still to run
        + [("group", "cheap")] * groups
        + [("done", "cheap ran 12")]
    )


def test_a_failing_experiment_stops_the_sweep_and_a_rerun_completes_it(tmp_path, separate_rows):
    jobs = [(CostedToyExecutor("cheap"), named_specs("cheap"))]
    jobs.append((CostedToyExecutor("dear", 5, fail_on=1), named_specs("dear")))
    with RunStore(tmp_path / "s.sqlite") as store:
        with pytest.raises(RuntimeError, match="dear: group 1 failed"):
            run_sweeps(jobs, store, provenance=PROV)
        stored = store.count()
        assert 0 < stored < 24  # dear's first group is kept, nothing after the failure ran
        jobs = [(CostedToyExecutor(n), named_specs(n)) for n in ("cheap", "dear", "done")]
        summaries = run_sweeps(jobs, store, provenance=PROV)
        assert sum(s.skipped for s in summaries) == stored and sum(s.ran for s in summaries) == 36 - stored
        assert _rows(store) == separate_rows and store.count() == 36


def test_two_worker_processes_store_the_same_rows(tmp_path, separate_rows):
    done = []
    jobs = [(CostedToyExecutor(n, c), named_specs(n)) for n, c in (("cheap", 1), ("dear", 5), ("done", 2))]
    with RunStore(tmp_path / "pool.sqlite") as store:
        run_sweeps(jobs, store, workers=2, provenance=PROV, on_done=lambda ex, s: done.append(ex.name))
        assert _rows(store) == separate_rows
    assert sorted(done) == ["cheap", "dear", "done"]


def test_default_workers_are_the_cpus_this_process_may_use():
    assert default_workers() == len(os.sched_getaffinity(0))
