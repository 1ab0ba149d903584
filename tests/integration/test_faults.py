"""Long runs survive faults: two writers of one folder, a damaged store, SIGTERM, a full disk.

Each case ends in the same place as an uninterrupted run: the stored rows (params, status, metrics,
curves as stored text) compared bitwise with a reference. Runs in subprocesses are forked from the
pre-imported server of the crash-resume test, with one BLAS thread, so their numbers match; cases
that inject a fault with ``monkeypatch`` run in this process against an in-process reference.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from test_reliability import ForkServer, _check_artefacts, _store_rows, _wait_for_rows

from entropic_bound.cli import main
from entropic_bound.experiments.framework.verdict import without_timings

E1_TINY = [  # 12 runs in 3 groups of 4: a fault can land between groups
    "task.r_stars=[2]",
    "task.spectra=[flat,geometric]",
    "ranks=[1,2,3]",
    "task.n=8",
    "task.d=4",
    "train.steps=100",
    "train.n_samples=24",
]
FAULT_SEED = 20261130


def _run_e1(out: Path, *extra: str) -> list[str]:
    """The tiny E1 command, in one process unless ``extra`` names ``--workers`` (argparse keeps the
    last): these faults hit the driver and its store, and a spawned pool would only add two torch
    imports to every run (the mid-sweep SIGTERM case with 2 workers spawns them)."""
    sets = [a for item in E1_TINY for a in ("--set", item)]
    return ["run", "E1", "--out", str(out), "--quiet", "--workers", "1", *sets, *extra]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = ForkServer(tmp_path_factory.mktemp("logs"))
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def reference(server, tmp_path_factory) -> Path:
    """An uninterrupted run's output folder, forked from the server like the faulted runs."""
    out = tmp_path_factory.mktemp("reference") / "out"
    assert server.wait(server.start(_run_e1(out))) == 0, server.log()
    return out


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory) -> Path:
    """The same uninterrupted run, in this process (for the injected faults)."""
    out = tmp_path_factory.mktemp("local_reference") / "out"
    assert main(_run_e1(out)) == 0
    return out


def _one_error_line(text: str, *needles: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropic-bound: "), text
    assert "Traceback" not in text and all(n in lines[0] for n in needles), text
    return lines[0]


def _assert_stored_part_of(out: Path, reference: Path) -> list[tuple]:
    """The store is readable and whole; every row it holds is the reference's row, none twice."""
    rows, ref = _store_rows(out / "runs.sqlite"), _store_rows(reference / "runs.sqlite")
    assert len(rows) == len({r[0] for r in rows}) and set(rows) <= set(ref)
    return rows


def _assert_same_as(out: Path, reference: Path) -> None:
    rows = _store_rows(out / "runs.sqlite")
    assert len(rows) == len({r[0] for r in rows}) > 0
    assert rows == _store_rows(reference / "runs.sqlite")
    assert without_timings(json.loads((out / "verdicts.json").read_text())) == without_timings(
        json.loads((reference / "verdicts.json").read_text())
    )
    _check_artefacts(out, final=True)


# -- two processes writing one output folder at once ----------------------------------------------


def test_two_runs_into_one_folder_at_once_both_finish_with_every_run_stored_once(server, reference, tmp_path):
    out = tmp_path / "shared"
    first, second = server.start(_run_e1(out)), server.start(_run_e1(out))
    assert server.wait(first) == 0 and server.wait(second) == 0, server.log()
    _assert_same_as(out, reference)


# -- a damaged store ------------------------------------------------------------------------------


def _random_bytes(valid: bytes, rng) -> bytes:
    return rng.bytes(len(valid))


def _truncated_to_half(valid: bytes, rng) -> bytes:
    return valid[: len(valid) // 2]


def _cut_mid_page(valid: bytes, rng) -> bytes:
    return valid[: len(valid) // 2 + 1000]


def _garbage_pages_inside(valid: bytes, rng) -> bytes:
    """Whole size and header, but pages 2 to 4 overwritten: only SQLite's own check can tell."""
    page = int.from_bytes(valid[16:18], "big")
    return valid[:page] + rng.bytes(3 * page) + valid[4 * page :]


DAMAGE = {
    "random-bytes": _random_bytes,
    "truncated-to-half": _truncated_to_half,
    "cut-mid-page": _cut_mid_page,
    "garbage-pages-inside": _garbage_pages_inside,
}
COMMANDS = {
    "run": lambda out, store: _run_e1(out, "--store", str(store)),
    "reproduce": lambda out, store: [
        "reproduce",
        "--only",
        "E1",
        "--out",
        str(out),
        "--store",
        str(store),
        "--quiet",
        *[a for item in E1_TINY for a in ("--set", f"E1.{item}")],
    ],  # fmt: skip
    "report": lambda out, store: ["report", "--out", str(out), "--store", str(store)],
    "export": lambda out, store: ["export", "--store", str(store), "--out", str(out)],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_store_is_refused_in_one_line_and_left_untouched(
    local_reference, tmp_path, capsys, damage, command
):
    rng = np.random.default_rng([FAULT_SEED, list(DAMAGE).index(damage)])
    store = tmp_path / "runs.sqlite"
    store.write_bytes(DAMAGE[damage]((local_reference / "runs.sqlite").read_bytes(), rng))
    os.utime(store, ns=(1_000_000_000, 1_000_000_000))
    before = (store.read_bytes(), store.stat().st_mtime_ns)
    rc = main(COMMANDS[command](tmp_path / "out", store))
    line = _one_error_line(capsys.readouterr().err, "left untouched")
    assert rc == 2, line
    assert ("not an SQLite database" if damage == "random-bytes" else "is damaged") in line
    assert (store.read_bytes(), store.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.sqlite"]  # no -wal/-shm, no output


# -- SIGTERM --------------------------------------------------------------------------------------


def _terminate_at(server: ForkServer, argv: list[str], store: Path, rows: int, delay: float) -> int:
    """Start ``argv``, send SIGTERM ``delay`` s after the store holds ``rows`` runs; the exit code."""
    pid = server.start(argv)
    _wait_for_rows(store, rows, timeout=120)
    time.sleep(delay)
    os.kill(pid, signal.SIGTERM)
    return server.wait(pid)


MOMENTS = [
    pytest.param(1, "sweep", id="mid-sweep"),
    pytest.param(2, "sweep", id="mid-sweep-2-workers", marks=pytest.mark.slow),  # spawns workers
    # slow: a kill while the report is written is in the fast suite's SIGKILL crash-resume test
    # (test_reliability), and SIGTERM's one line and exit 143 in the mid-sweep case above
    pytest.param(1, "report", id="writing-the-report", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("workers", "moment"), MOMENTS)
def test_sigterm_exits_143_in_one_line_and_the_same_command_resumes(
    server, reference, tmp_path, workers, moment
):
    out = tmp_path / "out"
    argv = _run_e1(out, "--workers", str(workers))
    total = len(_store_rows(reference / "runs.sqlite"))
    rng = np.random.default_rng([FAULT_SEED, workers, moment == "report"])
    target = int(rng.integers(1, total // 2 + 1)) if moment == "sweep" else total  # half the sweep left
    delay = float(rng.uniform(0.0, 0.2))
    for _ in range(4):  # a signal that came too late for its moment is sent again, sooner
        shutil.rmtree(out, ignore_errors=True)
        code = _terminate_at(server, argv, out / "runs.sqlite", target, delay)
        if code != 0 and (moment == "report" or len(_store_rows(out / "runs.sqlite")) < total):
            break
        delay /= 4
    assert code == 128 + signal.SIGTERM, server.log()
    _one_error_line(server.log(), "terminated (SIGTERM)", "resumes")
    stored = _assert_stored_part_of(out, reference)
    assert target <= len(stored) and (len(stored) < total or moment == "report")
    _check_artefacts(out, final=True)  # the store was closed cleanly: no -wal, no temporaries
    assert server.wait(server.start(argv)) == 0, server.log()
    _assert_same_as(out, reference)


# -- a full disk ----------------------------------------------------------------------------------


def _mounted_tmpfs(where: Path, size_kib: int) -> None:
    where.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full disk is simulated on a small tmpfs, and mounting one needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    _mounted_tmpfs(disk, 2048)
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path, leave_kib: int) -> Path:
    """A file taking all of ``disk`` but ``leave_kib`` KiB."""
    free = shutil.disk_usage(disk).free
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(0, free - leave_kib * 1024))
    return filler


# Slow: the fast suite injects a full store and a full disk while writing the report (below) in-process.
@pytest.mark.slow
def test_a_disk_filling_up_mid_run_is_one_line_and_resumes_once_space_is_freed(server, reference, small_disk):
    out = small_disk / "out"
    filler = _fill(small_disk, leave_kib=96)  # the store's first runs fit, the whole sweep does not
    code = server.wait(server.start(_run_e1(out)))
    log = server.log()
    assert code == 2, log
    _one_error_line(log, "disk is full" if "Run store" in log else "no space left")
    stored = _assert_stored_part_of(out, reference)
    assert len(stored) < len(_store_rows(reference / "runs.sqlite"))
    filler.unlink()
    assert server.wait(server.start(_run_e1(out))) == 0, server.log()
    _assert_same_as(out, reference)


def test_an_injected_full_store_is_one_line_and_resumes(local_reference, tmp_path, capsys, monkeypatch):
    """SQLite's own SQLITE_FULL ('database or disk is full'), raised once the store reaches a page
    budget: the failing transaction rolls back and every earlier run stays."""
    connect = sqlite3.connect

    def budgeted(*args, **kwargs):
        conn = connect(*args, **kwargs)
        conn.execute("PRAGMA max_page_count = 14")
        return conn

    out = tmp_path / "out"
    monkeypatch.setattr(sqlite3, "connect", budgeted)
    rc = main(_run_e1(out))
    monkeypatch.undo()
    _one_error_line(capsys.readouterr().err, "database or disk is full", "rerun the same command")
    assert rc == 2
    stored = _assert_stored_part_of(out, local_reference)
    assert 0 < len(stored) < len(_store_rows(local_reference / "runs.sqlite"))
    assert main(_run_e1(out)) == 0
    _assert_same_as(out, local_reference)


def test_an_injected_full_disk_while_writing_the_report_is_one_line_and_resumes(
    local_reference, tmp_path, capsys, monkeypatch
):
    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    out = tmp_path / "out"
    monkeypatch.setattr(os, "fsync", no_space)  # every atomic write of the report fails
    rc = main(_run_e1(out))
    monkeypatch.undo()
    _one_error_line(capsys.readouterr().err, "no space left", "rerun the same command")
    assert rc == 2 and len(_assert_stored_part_of(out, local_reference)) == 12  # the sweep had finished
    assert not list(out.rglob("*.tmp"))
    assert main(_run_e1(out)) == 0
    _assert_same_as(out, local_reference)
