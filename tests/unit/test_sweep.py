"""Run specs and the resumable runner: ids, grids, skipping, kill-and-resume, process pool."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the toy executor must be importable by spawned workers too

from _sweep_toy import ToyExecutor, torch_threads, toy_specs  # noqa: E402

from entropic_bound.errors import ConfigError, UnknownNameError  # noqa: E402
from entropic_bound.store import RunStore  # noqa: E402
from entropic_bound.sweep import (  # noqa: E402
    Executor,
    LocalBackend,
    ProcessBackend,
    RunResult,
    RunSpec,
    canonical_json,
    grid_specs,
    make_backend,
    run_sweep,
)

PROV = {"versions": {"python": "test"}, "git_commit": None}


# -- run specs ------------------------------------------------------------------------------------


def test_run_id_matches_an_independent_hash():
    import hashlib

    spec = RunSpec("e1", {"lr": 0.1, "width": 4, "train": {"steps": 10}}, 3)
    text = '{"experiment":"e1","params":{"lr":0.1,"train":{"steps":10},"width":4},"seed":3}'
    assert spec.run_id == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert len(spec.run_id) == 16


def test_run_id_stable_under_key_order_and_copies():
    a = RunSpec("e1", {"lr": 1e-3, "width": 4}, 0)
    b = RunSpec("e1", {"width": 4, "lr": 0.001}, 0)
    c = RunSpec("e1", {"width": np.int64(4), "lr": np.float64(1e-3)}, np.int64(0))
    assert a.run_id == b.run_id == c.run_id and a == b == c and len({a, b, c}) == 1
    assert RunSpec("e1", {"dims": (2, 3)}, 0).run_id == RunSpec("e1", {"dims": [2, 3]}, 0).run_id
    params = {"lr": 0.5}
    spec = RunSpec("e1", params, 0)
    params["lr"] = 9.0  # the spec keeps its own copy
    assert spec.params == {"lr": 0.5}


@pytest.mark.parametrize(
    "other",
    [
        RunSpec("e2", {"lr": 0.1, "width": 4}, 0),  # experiment
        RunSpec("e1", {"lr": 0.1000000001, "width": 4}, 0),  # a float param
        RunSpec("e1", {"lr": 0.1, "width": 5}, 0),  # an int param
        RunSpec("e1", {"lr": 0.1, "width": 4.0}, 0),  # the type of a param
        RunSpec("e1", {"lr": 0.1, "width": 4, "extra": None}, 0),  # an added param
        RunSpec("e1", {"lr": 0.1}, 0),  # a removed param
        RunSpec("e1", {"lr": 0.1, "width": 4}, 1),  # the seed
    ],
)
def test_run_id_sensitive_to_every_field(other):
    base = RunSpec("e1", {"lr": 0.1, "width": 4}, 0)
    assert base.run_id != other.run_id and base != other


@given(
    st.dictionaries(
        st.text(max_size=5),
        st.one_of(
            st.integers(),
            st.floats(allow_nan=False, allow_infinity=False),
            st.text(max_size=5),
            st.booleans(),
            st.none(),
        ),
        max_size=5,
    ),
    st.integers(min_value=0, max_value=2**63 - 1),
)
def test_run_id_survives_a_json_round_trip(params, seed):
    spec = RunSpec("e", params, seed)
    again = json.loads(canonical_json(spec.key()))
    assert RunSpec(again["experiment"], again["params"], again["seed"]).run_id == spec.run_id


def test_bad_specs():
    with pytest.raises(ConfigError, match="'seed' of a run spec must be an int"):
        RunSpec("e1", {}, 1.5)
    with pytest.raises(ConfigError, match="'params' of a run spec must be a dict"):
        RunSpec("e1", [1, 2], 0)
    with pytest.raises(ConfigError, match="finite JSON"):
        RunSpec("e1", {"lr": float("nan")}, 0)
    with pytest.raises(ConfigError, match="finite JSON"):
        RunSpec("e1", {"f": object()}, 0)
    with pytest.raises(ConfigError, match="non-empty str"):
        RunSpec("", {}, 0)
    with pytest.raises(ValueError, match="'status' of a run result"):
        RunResult(RunSpec("e1", {}, 0), "crashed", {}, {})


def test_grid_specs():
    specs = grid_specs("e1", {"width": [2, 3], "lr": [0.1, 0.2]}, seeds=[0, 1], fixed={"steps": 5})
    expected = [(w, lr, s) for w in (2, 3) for lr in (0.1, 0.2) for s in (0, 1)]
    assert [(p.params["width"], p.params["lr"], p.seed) for p in specs] == expected
    assert all(p.params["steps"] == 5 for p in specs) and len({p.run_id for p in specs}) == 8
    with pytest.raises(ConfigError, match="both fixed and swept"):
        grid_specs("e1", {"lr": [0.1]}, seeds=[0], fixed={"lr": 0.2})
    with pytest.raises(ConfigError, match="grid of 'lr' is empty"):
        grid_specs("e1", {"lr": []}, seeds=[0])


# -- the runner -----------------------------------------------------------------------------------


def _rows(store) -> list[str]:
    """Every stored row as JSON text minus what legitimately varies (time, provenance).

    JSON writes floats as their round-trip repr, so equal text means bitwise-equal metrics."""
    keep = ("run_id", "experiment", "params", "seed", "status", "diverged_step", "metrics", "curves")
    return [json.dumps({k: r[k] for k in keep}, sort_keys=True) for r in store.records("toy")]


@pytest.fixture
def fresh_rows(tmp_path):
    with RunStore(tmp_path / "fresh.sqlite") as store:
        summary = run_sweep(ToyExecutor(), toy_specs(), store, provenance=PROV)
        assert (summary.total, summary.skipped, summary.ran, summary.diverged) == (12, 0, 12, 4)
        return _rows(store)


def test_toy_executor_is_an_executor_and_results_depend_on_grouping():
    ex = ToyExecutor()
    assert isinstance(ex, Executor)
    specs = toy_specs()
    a = {r.spec.run_id: r.metrics["loss"] for g in ex.groups(specs) for r in ex.execute(g)}
    b = {
        r.spec.run_id: r.metrics["loss"]
        for g in ToyExecutor(group_size=3).groups(specs)
        for r in ex.execute(g)
    }
    ok = [k for k in a if not np.isnan(a[k])]
    assert ok and all(a[k] != b[k] for k in ok)  # so resuming must not regroup


def test_second_sweep_skips_everything(tmp_path, fresh_rows):
    calls = []

    class Counting(ToyExecutor):
        def execute(self, group):
            calls.append(len(group))
            return super().execute(group)

    seen = []
    with RunStore(tmp_path / "s.sqlite") as store:
        run_sweep(Counting(), toy_specs(), store, provenance=PROV)
        assert sum(calls) == 12
        summary = run_sweep(
            Counting(),
            toy_specs() + toy_specs()[:3],
            store,
            provenance=PROV,
            progress=lambda *a: seen.append(a),
        )
        assert sum(calls) == 12 and (summary.skipped, summary.ran, summary.total) == (12, 0, 12)
        assert seen == [(12, 12, "toy: 12 run(s) already stored, 0 group(s) to run")]
        assert _rows(store) == fresh_rows


def test_partial_group_is_rerun_whole_and_only_missing_stored(tmp_path, fresh_rows):
    ex, specs = ToyExecutor(group_size=3), toy_specs()
    with RunStore(tmp_path / "fresh3.sqlite") as store:
        run_sweep(ex, specs, store, provenance=PROV)
        expected = _rows(store)
    assert expected != fresh_rows  # other grouping, other numbers
    executed, progress = [], []

    class Recording(ToyExecutor):
        def execute(self, group):
            executed.append([s.run_id for s in group])
            return super().execute(group)

    groups = ex.groups(specs)
    with RunStore(tmp_path / "partial.sqlite") as store:
        for r in ex.execute(groups[0])[:2] + ex.execute(groups[2]):  # group 0 cut after 2 of 3 runs
            store.put(r, provenance=PROV)
        summary = run_sweep(
            Recording(group_size=3), specs, store, provenance=PROV, progress=lambda *a: progress.append(a[:2])
        )
        assert (summary.skipped, summary.ran) == (5, 7)
        assert executed == [[s.run_id for s in g] for i, g in enumerate(groups) if i != 2]
        assert progress == [(5, 12), (6, 12), (9, 12), (12, 12)]
        assert _rows(store) == expected and store.count() == 12


def test_kill_and_resume_matches_an_uninterrupted_sweep(tmp_path, fresh_rows):
    path = tmp_path / "killed.sqlite"
    proc = subprocess.Popen(
        # 6 groups x 2 s: room to see two stored runs and kill before the end, even on a loaded machine
        [sys.executable, str(HERE / "_sweep_toy.py"), str(path), "2.0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if path.exists():
                try:
                    # a short lock wait: a poll blocked behind the writer would see the sweep's end
                    with RunStore(path, readonly=True, timeout=0.05) as s:
                        if s.count() >= 2:
                            break
                except Exception:  # the file exists before its schema does
                    pass
            time.sleep(0.05)
        assert proc.poll() is None, f"the sweep ended before it was killed: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with RunStore(path) as store:
        stored = store.count()
        assert 2 <= stored < 12
        diverged = sum(r["status"] == "diverged" for r in store.records("toy"))
        summary = run_sweep(ToyExecutor(), toy_specs(), store, provenance=PROV)
        assert (summary.skipped, summary.ran, summary.diverged) == (stored, 12 - stored, 4 - diverged)
        assert _rows(store) == fresh_rows and store.count() == 12


def test_process_backend_gives_the_same_rows(tmp_path, fresh_rows):
    with RunStore(tmp_path / "pool.sqlite") as store:
        summary = run_sweep(ToyExecutor(), toy_specs(), store, workers=2, provenance=PROV)
        assert summary.ran == 12 and _rows(store) == fresh_rows


def test_process_backend_workers_use_one_torch_thread():
    out = dict(ProcessBackend(workers=1).map_groups(torch_threads, [[1], [2]]))
    assert out == {0: 1, 1: 1}


def test_backend_errors_and_choice():
    assert isinstance(make_backend(None, 1), LocalBackend) and isinstance(
        make_backend(None, 3), ProcessBackend
    )
    assert make_backend("process", 3).workers == 3
    with pytest.raises(UnknownNameError, match="Unknown backend 'proces'.*Did you mean 'process'"):
        make_backend("proces")
    with pytest.raises(ValueError, match="'workers' parameter must be an int >= 1"):
        ProcessBackend(workers=0)

    def boom(group):
        raise RuntimeError("group failed")

    with pytest.raises(RuntimeError, match="group failed"):
        list(LocalBackend().map_groups(boom, [[1]]))


def test_runner_checks_the_executor(tmp_path):
    class Dropping(ToyExecutor):
        def groups(self, specs):
            return super().groups(specs)[1:]

    class Short(ToyExecutor):
        def execute(self, group):
            return super().execute(group)[1:]

    with RunStore(tmp_path / "x.sqlite") as store:
        with pytest.raises(RuntimeError, match="not a partition of the 12 specs"):
            run_sweep(Dropping(), toy_specs(), store, provenance=PROV)
        with pytest.raises(RuntimeError, match="do not match its specs one to one"):
            run_sweep(Short(), toy_specs(), store, provenance=PROV)
        assert store.count() == 0


def test_runner_closes_the_backend_on_error_and_accepts_plain_iterables(tmp_path, fresh_rows):
    events = []

    class Watched(LocalBackend):
        def map_groups(self, fn, groups):
            try:
                yield from super().map_groups(fn, groups)
            finally:
                events.append("closed")

    class FailsLate(ToyExecutor):  # the third group's results are short: the runner (not the backend) raises
        def execute(self, group):
            events.append("ran")
            return super().execute(group)[: 1 if events.count("ran") == 3 else None]

    class Eager:  # a backend returning a list, no close()
        name = "eager"

        def map_groups(self, fn, groups):
            return list(enumerate(map(fn, groups)))

    with RunStore(tmp_path / "x.sqlite") as store:
        try:
            run_sweep(FailsLate(), toy_specs(), store, backend=Watched(), provenance=PROV)
        except (
            RuntimeError
        ) as exc:  # the traceback still holds the runner's frame: closed by the runner itself
            assert "do not match its specs" in str(exc)
            assert events == ["ran", "ran", "ran", "closed"] and store.count() == 4
        else:
            pytest.fail("the short group was not detected")
        summary = run_sweep(ToyExecutor(), toy_specs(), store, backend=Eager(), provenance=PROV)
        assert (summary.skipped, summary.ran) == (4, 8) and _rows(store) == fresh_rows


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])  # 2: spawns workers
def test_a_running_group_moves_the_progress_before_it_returns(tmp_path, workers):
    """Trainers' in-group reports reach the bar (local: directly; process: through a queue)."""
    from _sweep_toy import ReportingToyExecutor

    calls = []
    with RunStore(tmp_path / "s.sqlite") as store:
        run_sweep(
            ReportingToyExecutor(group_size=6, sleep_s=1.5 * (workers > 1)),
            toy_specs(),
            store,
            workers=workers,
            provenance=PROV,
            progress=lambda done, total, what: calls.append((done, what)),
        )
    first_return = next(i for i, (_, what) in enumerate(calls) if "runs)" in what)
    halfway = [(done, what) for done, what in calls[:first_return] if "running" in what]
    # before any group returned: the count is what is stored (what a Ctrl-C keeps), the part-trained
    # runs are said beside it
    assert halfway and all(done == 0 for done, _ in halfway), calls
    assert any("run(s) trained in groups not yet stored" in what for _, what in halfway), calls
    assert calls[first_return][0] >= 6 and calls[-1][0] == 12
