"""The Ray backend on a real local Ray cluster (loopback, 2 CPUs): same rows as the local
backend, a worker killed mid-task is retried, a killed driver resumes from the store, bad
addresses fail in one line."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'entropic-bound[ray]')")

from entropic_bound.cli import main  # noqa: E402
from entropic_bound.store import RunStore  # noqa: E402
from entropic_bound.sweep import RunResult, grid_specs, run_sweep  # noqa: E402
from entropic_bound.sweep.ray_backend import RayBackend, parse_address  # noqa: E402

# 8 groups of 3-4 runs (r* × spectrum × V), each well under a second of training but long enough
# that a driver killed after the first stored group still has groups in flight.
E1_SMALL = [
    "ranks=[1,2,3]",
    "task.r_stars=[2,3]",
    "task.spectra=[flat,geometric]",
    "task.n=8",
    "task.d=4",
    "train.steps=800",
    "train.n_samples=24",
]
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _sets(items: list[str]) -> list[str]:
    return [a for item in items for a in ("--set", item)]


@pytest.fixture(scope="module")
def cluster():
    """A real Ray on loopback with 2 CPUs; yields its GCS address ``127.0.0.1:PORT``."""
    if ray.is_initialized():
        ray.shutdown()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        logging_level=logging.ERROR,
        log_to_driver=False,
    )
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _cli(args: list[str], env: dict | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "entropic_bound", *args],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


@pytest.fixture(scope="module")
def _reference_proc(tmp_path_factory):
    """E1_SMALL on the local backend in a fresh process, started before Ray so both overlap (the tests
    that use it request it before ``cluster``). BLAS
    runs on one thread as in a Ray task (numpy's threaded BLAS rounds differently); the process
    also checks that the local backend never imports Ray."""
    out = tmp_path_factory.mktemp("local") / "out"
    code = (
        "import sys; from entropic_bound.cli import main; rc = main(sys.argv[1:]); "
        "assert 'ray' not in sys.modules, 'the local backend imported ray'; sys.exit(rc)"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "run", "E1", "--out", str(out), "--quiet", *_sets(E1_SMALL)],
        env={**os.environ, **ONE_THREAD},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield proc, out
    proc.kill()
    proc.communicate()


@pytest.fixture(scope="module")
def local_reference(_reference_proc) -> Path:
    proc, out = _reference_proc
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    return out


def _rows(store: Path) -> dict[str, tuple]:
    conn = sqlite3.connect(store)
    try:
        rows = conn.execute("SELECT run_id, status, diverged_step, metrics FROM runs").fetchall()
    finally:
        conn.close()
    assert len(rows) == len({r[0] for r in rows})
    return {r[0]: (r[1], r[2], json.loads(r[3])) for r in rows}


def _assert_close(rows: dict, ref: dict, tol: float = 1e-6) -> None:
    assert set(rows) == set(ref) and len(ref) > 0
    for run_id, (status, step, metrics) in rows.items():
        ref_status, ref_step, ref_metrics = ref[run_id]
        assert (status, step) == (ref_status, ref_step) and set(metrics) == set(ref_metrics)
        for key, value in metrics.items():
            a, b = float(value), float(ref_metrics[key])
            assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol * max(1.0, abs(b)), (
                run_id,
                key,
                a,
                b,
            )


# The two tests on E1 through the CLI take minutes (a local reference, then the sweep on Ray); the
# fast suite keeps Ray's rows equal to the local backend's through the retried-worker test below.
@pytest.mark.slow
def test_ray_sweep_matches_the_local_backend(_reference_proc, cluster, local_reference, tmp_path):
    out = tmp_path / "ray"
    assert main(["run", "E1", "--backend", "ray", "--out", str(out), "--quiet", *_sets(E1_SMALL)]) == 0
    _assert_close(_rows(out / "runs.sqlite"), _rows(local_reference / "runs.sqlite"))
    mine, ref = (json.loads((o / "verdicts.json").read_text()) for o in (out, local_reference))
    assert {k: v["verdict"] for k, v in mine.items()} == {k: v["verdict"] for k, v in ref.items()}


# -- a worker killed mid-task ----------------------------------------------------------------------


class SlowOnceExecutor:
    """Groups of 2 runs; the group holding ``victim`` writes its worker's pid to ``pid_file`` and
    sleeps on its first attempt (the test kills that worker); every attempt is logged."""

    name = "slow-once"

    def __init__(self, folder: str, victim: str) -> None:
        self.folder, self.victim = folder, victim

    def groups(self, specs):
        specs = sorted(specs, key=lambda s: s.run_id)
        return [specs[i : i + 2] for i in range(0, len(specs), 2)]

    def execute(self, group):
        ids = [s.run_id for s in group]
        with open(os.path.join(self.folder, "attempts.log"), "a") as log:
            log.write(f"{os.getpid()} {' '.join(ids)}\n")
        if self.victim in ids:
            try:
                fd = os.open(os.path.join(self.folder, "pid"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass  # a retry: run normally
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                time.sleep(120)
        rng = np.random.default_rng([s.seed for s in group])
        return [RunResult(s, "ok", {"x": float(rng.standard_normal()) * s.params["w"]}, {}) for s in group]


def test_a_worker_killed_mid_task_is_retried(cluster, tmp_path):
    specs = grid_specs("toy", {"w": [1.0, 2.0, 3.0]}, seeds=[0, 1, 2, 3])  # 12 runs, 6 groups
    victim = sorted(s.run_id for s in specs)[4]
    executor = SlowOnceExecutor(str(tmp_path), victim)
    box: dict = {}

    def sweep():
        try:
            with RunStore(tmp_path / "ray.sqlite") as store:
                box["summary"] = run_sweep(
                    executor, specs, store, backend=RayBackend(workers=2), provenance={}
                )
        except BaseException as exc:  # noqa: BLE001  (reported by the test thread)
            box["error"] = exc

    thread = threading.Thread(target=sweep)
    thread.start()
    pid_file = tmp_path / "pid"
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), "the victim group never started"
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    thread.join(timeout=60)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    summary = box["summary"]
    assert (summary.total, summary.ran, summary.skipped) == (12, 12, 0)
    attempts = [line.split() for line in (tmp_path / "attempts.log").read_text().splitlines()]
    victim_attempts = [a for a in attempts if victim in a[1:]]
    assert len(victim_attempts) == 2 and victim_attempts[0][0] != victim_attempts[1][0]  # retried elsewhere
    with RunStore(tmp_path / "local.sqlite") as store:
        run_sweep(SlowOnceExecutor(str(tmp_path), "none"), specs, store, provenance={})
    ray_rows, local_rows = _rows(tmp_path / "ray.sqlite"), _rows(tmp_path / "local.sqlite")
    assert ray_rows == local_rows and len(ray_rows) == 12  # nothing lost, nothing stored twice


# -- the driver killed ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_killed_driver_resumes_from_the_store(_reference_proc, cluster, local_reference, tmp_path):
    out, store = tmp_path / "out", tmp_path / "out" / "runs.sqlite"
    total = len(_rows(local_reference / "runs.sqlite"))
    args = [
        "run",
        "E1",
        "--backend",
        "ray",
        "--address",
        cluster,
        "--out",
        str(out),
        "--quiet",
        *_sets(E1_SMALL),
    ]
    proc = _cli(args)
    stored, deadline = 0, time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if store.exists():
                try:
                    stored = RunStore(store, readonly=True).count()
                except Exception:  # noqa: BLE001  (the store is being created)
                    stored = 0
                if stored > 0:
                    break
            time.sleep(0.02)
        assert proc.poll() is None, f"the driver ended before it was killed: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate()
    partial = _rows(store)
    assert 0 < len(partial) < total
    assert main(args) == 0  # the same command, in this process (Ray already up)
    rows = _rows(store)
    assert {k: rows[k] for k in partial} == partial  # stored runs were kept, not redone
    _assert_close(rows, _rows(local_reference / "runs.sqlite"))


# -- bad addresses --------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "address, message",
    [
        (None, "Cannot reach a Ray cluster at 127.0.0.1:"),
        ("nohost", "must be 'auto' or HOST:PORT"),
        ("127.0.0.1:99999", "must be 'auto' or HOST:PORT"),
    ],
)
def test_a_bad_address_fails_in_one_line_and_writes_nothing(address, message, tmp_path, capsys):
    address = address or f"127.0.0.1:{_closed_port()}"
    out = tmp_path / "out"
    rc = main(["run", "E1", "--backend", "ray", "--address", address, "--out", str(out), *_sets(E1_SMALL)])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_address_needs_the_ray_backend(tmp_path, capsys):
    assert main(["run", "E1", "--address", "auto", "--out", str(tmp_path / "o")]) == 2
    assert "needs '--backend ray'" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_parse_address():
    assert parse_address(None) is None and parse_address("auto") is None
    assert parse_address("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert parse_address("ray://head.example:10001") == ("head.example", 10001)
    assert parse_address("[::1]:6379") == ("::1", 6379)
    for bad in ("", "host", ":6379", "host:0", "host:port", "a b:1"):
        with pytest.raises(Exception, match="HOST:PORT"):
            parse_address(bad)
