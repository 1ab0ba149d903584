"""The SQLite run store: round trips, idempotence, schema versions, bad paths, exports, atomic writes."""

from __future__ import annotations

import math
import os
import sqlite3
import stat
import struct

import pandas as pd
import pytest

from entropic_bound.atomic import atomic_write_bytes, atomic_write_text
from entropic_bound.errors import UserInputError
from entropic_bound.provenance import git_commit, package_versions, provenance
from entropic_bound.store import run_store as store_mod
from entropic_bound.store.run_store import SCHEMA_VERSION, RunStore
from entropic_bound.store.run_tables import BASE_COLUMNS
from entropic_bound.sweep import RunResult, RunSpec

PROV = {"versions": {"python": "3.x", "torch": "9.9"}, "git_commit": "abc123"}


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _result(lr=1e-3, seed=0, status="ok", **metrics) -> RunResult:
    spec = RunSpec("e1", {"lr": lr, "train": {"width": 4, "dims": [2, 3]}}, seed)
    return RunResult(
        spec,
        status,
        metrics or {"loss": 0.1 + lr},
        {"loss": [1.0, 0.5, 0.1 + lr]},
        diverged_step=7 if status == "diverged" else None,
        wall_s=1.5,
    )


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "sub" / "runs.sqlite") as s:
        yield s


def test_creates_parents_wal_and_schema(tmp_path):
    path = tmp_path / "a" / "b" / "runs.sqlite"
    RunStore(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    cols = [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
    assert cols == [
        "run_id",
        "experiment",
        "params",
        "seed",
        "status",
        "diverged_step",
        "metrics",
        "curves",
        "versions",
        "git_commit",
        "wall_s",
        "created_at",
    ]
    assert [r[1] for r in conn.execute("PRAGMA table_info(experiments)")] == [
        "name",
        "scale",
        "config",
        "updated_at",
    ]


def test_round_trip_keeps_nan_inf_bitwise(store):
    metrics = {
        "loss": float("nan"),
        "grad": float("inf"),
        "neg": float("-inf"),
        "tiny": 5e-324,
        "third": 1 / 3,
        "negzero": -0.0,
    }
    res = RunResult(
        _result().spec,
        "diverged",
        metrics,
        {"loss": [1.0, float("nan"), float("inf")]},
        diverged_step=3,
        wall_s=2.25,
    )
    assert store.put(res, provenance=PROV)
    (rec,) = store.records("e1")
    assert rec["run_id"] == res.spec.run_id and rec["seed"] == 0 and rec["status"] == "diverged"
    assert rec["diverged_step"] == 3 and rec["wall_s"] == 2.25
    assert rec["params"] == {"lr": 1e-3, "train": {"width": 4, "dims": [2, 3]}}
    assert {k: _bits(v) for k, v in rec["metrics"].items()} == {k: _bits(v) for k, v in metrics.items()}
    assert (
        rec["curves"]["loss"][0] == 1.0
        and math.isnan(rec["curves"]["loss"][1])
        and rec["curves"]["loss"][2] == math.inf
    )
    assert rec["versions"] == PROV["versions"] and rec["git_commit"] == "abc123"
    assert RunSpec(rec["experiment"], rec["params"], rec["seed"]).run_id == rec["run_id"]


def test_put_is_insert_or_ignore(store):
    first = _result(lr=0.1)
    assert store.put(first, provenance=PROV) is True
    changed = RunResult(first.spec, "ok", {"loss": 99.0}, {})
    assert store.put(changed, provenance=PROV) is False
    assert store.count() == 1 and store.records("e1")[0]["metrics"] == {"loss": 0.1 + 0.1}
    assert store.put(_result(lr=0.2), provenance=PROV) is True
    assert store.count("e1") == 2 and store.count("other") == 0
    assert store.finished_ids() == {_result(lr=0.1).spec.run_id, _result(lr=0.2).spec.run_id}
    assert store.finished_ids("other") == set()


def test_persists_across_reopen_and_readonly(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as s:
        s.put(_result(), provenance=PROV)
        s.put_experiment("e1", "tiny", {"grid": {"lr": [1e-3]}, "steps": 10})
    with RunStore(path, readonly=True) as s:
        assert s.count() == 1 and s.experiments() == ["e1"]
        assert s.experiment_config("e1") == {"grid": {"lr": [1e-3]}, "steps": 10}
        with pytest.raises(UserInputError, match="read-only"):
            s.put(_result(lr=5.0), provenance=PROV)


def test_experiments_table(store):
    assert store.experiment_config("e1") is None and store.experiments() == []
    store.put_experiment("e2", "tiny", {"a": 1})
    store.put_experiment("e2", "paper", {"a": 2})  # replaces
    store.put(_result(), provenance=PROV)
    assert store.experiments() == ["e1", "e2"]
    info = store.experiment_info("e2")
    assert info["scale"] == "paper" and info["config"] == {"a": 2} and info["updated_at"]


def test_table_flattens_params_and_metrics(store):
    results = [_result(lr=lr, seed=s) for lr in (0.3, 0.01) for s in (0, 1)]
    results.append(_result(lr=9.0, status="diverged", loss=float("nan"), status_code=1.0))
    for r in results:
        store.put(r, provenance=PROV)
    df = store.table("e1")
    assert list(df["run_id"]) == sorted(r.spec.run_id for r in results)
    assert list(df.columns) == [
        "run_id",
        "experiment",
        "seed",
        "status",
        "diverged_step",
        "wall_s",
        "lr",
        "train.dims",
        "train.width",
        "loss",
        "status_code",
    ]  # sorted keys
    by_id = {r.spec.run_id: r for r in results}
    for _, row in df.iterrows():  # each row against its own result, a per-run loop
        r = by_id[row["run_id"]]
        assert (
            row["lr"] == r.spec.params["lr"] and row["seed"] == r.spec.seed and row["train.dims"] == "[2,3]"
        )
        assert _bits(row["loss"]) == _bits(r.metrics["loss"]) or (
            math.isnan(row["loss"]) and math.isnan(r.metrics["loss"])
        )
    assert df["diverged_step"].dtype == "Int64" and df["diverged_step"].isna().sum() == 4
    assert df["status_code"].isna().sum() == 4
    assert store.table("nothing").columns.tolist() == list(BASE_COLUMNS)


def test_table_renames_clashing_names(store):
    spec = RunSpec("e1", {"seed": 3, "loss": 1}, 0)
    store.put(RunResult(spec, "ok", {"loss": 0.5, "status": 2.0}, {}), provenance=PROV)
    df = store.table("e1")
    assert df.loc[0, "seed"] == 0 and df.loc[0, "param.seed"] == 3
    assert df.loc[0, "loss"] == 1 and df.loc[0, "metric.loss"] == 0.5 and df.loc[0, "metric.status"] == 2.0


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export(store, tmp_path, fmt):
    store.put(_result(lr=0.1), provenance=PROV)
    store.put(RunResult(RunSpec("e 2/x", {"k": 1}, 0), "ok", {"m": 1.0}, {}), provenance=PROV)
    paths = store.export(tmp_path / "out", fmt=fmt)
    assert sorted(p.name for p in paths) == sorted([f"e1.{fmt}", f"e_2_x.{fmt}"])
    read = pd.read_csv if fmt == "csv" else pd.read_parquet
    df = read(tmp_path / "out" / f"e1.{fmt}")
    assert df["lr"].tolist() == [0.1] and df["loss"].tolist() == [0.1 + 0.1]
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]
    with pytest.raises(UserInputError, match="'fmt' parameter must be one of"):
        store.export(tmp_path / "out", fmt="xlsx")


# -- schema versions and migration ----------------------------------------------------------------


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value='3' WHERE key='schema_version'")
    with pytest.raises(UserInputError) as exc:
        RunStore(path)
    assert str(exc.value) == (
        f"Run store '{path}' has schema version 3, newer than this entropic-bound (1); "
        "upgrade entropic-bound."
    )


def test_a_runs_table_alone_is_not_a_run_store_and_is_left_untouched(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE runs (run_id TEXT PRIMARY KEY, experiment TEXT, params TEXT)")
    before = path.read_bytes()
    with pytest.raises(UserInputError, match="not an entropic-bound run store"):
        RunStore(path)
    assert path.read_bytes() == before


def test_migrations_run_in_order(tmp_path, monkeypatch):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as s:
        s.put(_result(), provenance=PROV)

    def v1_to_v2(conn):
        conn.execute("ALTER TABLE runs ADD COLUMN note TEXT")
        conn.execute("UPDATE runs SET note = 'migrated'")

    monkeypatch.setattr(store_mod, "MIGRATIONS", [*store_mod.MIGRATIONS, v1_to_v2])
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", 2)
    RunStore(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT note FROM runs").fetchall() == [("migrated",)]
    assert conn.execute("SELECT value FROM meta").fetchone()[0] == "2"


def test_failed_migration_rolls_back(tmp_path, monkeypatch):
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()

    def broken(conn):
        conn.execute("ALTER TABLE runs ADD COLUMN note TEXT")
        raise RuntimeError("boom")

    monkeypatch.setattr(store_mod, "MIGRATIONS", [*store_mod.MIGRATIONS, broken])
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", 2)
    with pytest.raises(RuntimeError, match="boom"):
        RunStore(path)
    conn = sqlite3.connect(path)
    assert "note" not in [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
    assert conn.execute("SELECT value FROM meta").fetchone()[0] == "1"


# -- bad paths: one-line UserInputError each -------------------------------------------------------


def _one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and msg
    return msg


def test_directory_path(tmp_path):
    with pytest.raises(UserInputError) as exc:
        RunStore(tmp_path)
    assert "is a directory" in _one_line(exc)


def test_not_a_database(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(UserInputError) as exc:
        RunStore(path)
    assert "not an SQLite database" in _one_line(exc)
    with pytest.raises(UserInputError):
        RunStore(path, readonly=True)


def test_foreign_sqlite_database(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(UserInputError) as exc:
        RunStore(path)
    assert "not an entropic-bound run store" in _one_line(exc)


def test_read_only_file(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as s:
        s.put(_result(), provenance=PROV)
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP)
    try:
        with pytest.raises(UserInputError) as exc:
            RunStore(path)
        assert "read-only" in _one_line(exc)
        with RunStore(path, readonly=True) as s:  # reading is still fine
            assert s.count() == 1
    finally:
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)


def test_missing_file_readonly(tmp_path):
    with pytest.raises(UserInputError, match="does not exist"):
        RunStore(tmp_path / "nope.sqlite", readonly=True)


def test_locked_database(tmp_path):
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with RunStore(path, timeout=0.2) as s:
            assert s.count() == 0  # WAL: reading is not blocked
            with pytest.raises(UserInputError) as exc:
                s.put(_result(), provenance=PROV)
            assert "locked by another process (waited 0.2 s)" in _one_line(exc)
    finally:
        other.execute("ROLLBACK")
        other.close()


# -- atomic writes and provenance ------------------------------------------------------------------


def test_atomic_write(tmp_path):
    path = tmp_path / "deep" / "f.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    atomic_write_bytes(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.txt"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    with pytest.raises(UserInputError, match="is a directory"):
        atomic_write_text(tmp_path, "x")


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    atomic_write_text(path, "old")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_text(path, "new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_provenance(tmp_path):
    v = package_versions()
    assert set(v) == {
        "python",
        "entropic-bound",
        "torch",
        "numpy",
        "scipy",
        "pandas",
        "matplotlib",
        "platform",
    }
    import numpy

    assert v["numpy"] == numpy.__version__
    p = provenance()
    assert p == provenance() and p is not provenance()
    assert git_commit(tmp_path) is None  # not a checkout: None, no exception
    assert git_commit(tmp_path / "missing" / "dir") is None


def test_git_commit_of_a_checkout(tmp_path):
    import subprocess

    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    try:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    (tmp_path / "a.txt").write_text("1")
    run = lambda *a: subprocess.run(
        ["git", "-C", str(tmp_path), *a],
        check=True,
        env=env,  # noqa: E731
        capture_output=True,
        text=True,
    ).stdout.strip()
    run("add", "a.txt")
    run("commit", "-q", "-m", "c")
    head = run("rev-parse", "HEAD")
    assert git_commit(tmp_path) == head
    (tmp_path / "untracked.txt").write_text("x")
    assert git_commit(tmp_path) == head
    (tmp_path / "a.txt").write_text("2")
    assert git_commit(tmp_path) == f"{head}-dirty"


def _dead_pid() -> int:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(dead.stdout)


def test_stale_temporaries_of_a_killed_writer_are_removed(tmp_path):
    from entropic_bound.atomic import atomic_write_text, remove_stale_temporaries

    (tmp_path / "figures").mkdir()
    stale = tmp_path / "figures" / f".entropic-bound.x.png.pid{_dead_pid()}.abc123.tmp"
    stale.write_bytes(b"half")
    keep = atomic_write_text(tmp_path / "report.html", "<html></html>")
    assert remove_stale_temporaries(tmp_path, tmp_path / "figures") == [stale]
    assert not stale.exists() and keep.read_text() == "<html></html>"
    assert remove_stale_temporaries(tmp_path / "missing") == []


def test_a_live_writers_temporaries_are_kept_and_a_dead_ones_removed(tmp_path):
    from entropic_bound.atomic import remove_stale_temporaries

    live = tmp_path / f".entropic-bound.report.html.pid{os.getpid()}.k2j4x9q1.tmp"  # another run writing
    stale = tmp_path / f".entropic-bound.report.html.pid{_dead_pid()}.a8c3m0zz.tmp"
    for tmp in (live, stale):
        tmp.write_bytes(b"half")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert live.exists() and not stale.exists()


def test_temporaries_the_project_did_not_write_are_never_deleted(tmp_path):
    """A user's own ``.*.tmp`` files, old-style names and anything in subfolders stay untouched."""
    from entropic_bound.atomic import remove_stale_temporaries

    (tmp_path / "notes").mkdir()
    (tmp_path / ".git").mkdir()
    theirs = [
        tmp_path / ".session.tmp",
        tmp_path / f".report.html.pid{_dead_pid()}.a8c3m0zz.tmp",  # no project prefix
        tmp_path / "notes" / ".chapter3.tmp",
        tmp_path / ".git" / f".entropic-bound.index.pid{_dead_pid()}.zz.tmp",  # a folder not given
    ]
    for path in theirs:
        path.write_bytes(b"user data")
    assert remove_stale_temporaries(tmp_path) == []
    assert all(path.read_bytes() == b"user data" for path in theirs)


def test_a_full_disk_during_an_atomic_write_is_one_line_and_keeps_the_old_file(tmp_path, monkeypatch):
    import errno

    path = atomic_write_text(tmp_path / "verdicts.json", "old")

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(UserInputError) as exc:
        atomic_write_text(path, "new")
    assert "no space left" in _one_line(exc) and str(path) in _one_line(exc)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["verdicts.json"]


def test_a_full_store_rolls_back_the_failing_put_and_keeps_the_others(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as s:
        s.put(_result(lr=0.1), provenance=PROV)
        pages = s._conn.execute("PRAGMA page_count").fetchone()[0]
        s._conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL at the next new page
        big = _result(lr=0.2, **{f"m{i}": float(i) for i in range(2000)})
        with pytest.raises(UserInputError) as exc:
            s.put(big, provenance=PROV)
        assert "database or disk is full" in _one_line(exc) and "rerun the same command" in _one_line(exc)
        assert not s._conn.in_transaction and s.count() == 1
        s._conn.execute(f"PRAGMA max_page_count = {pages + 100}")  # space freed: the same put works
        assert s.put(big, provenance=PROV) and s.count() == 2
    assert _sqlite_ok(path)


def _sqlite_ok(path) -> bool:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _valid_store_bytes(tmp_path) -> bytes:
    path = tmp_path / "valid.sqlite"
    with RunStore(path) as s:
        for i in range(20):
            s.put(_result(lr=i / 10, **{f"m{k}": float(k) for k in range(100)}), provenance=PROV)
    return path.read_bytes()


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (lambda b: b[: len(b) // 8192 * 4096], "pages are left"),
        (lambda b: b[: len(b) - 100], "not a whole number"),
        (lambda b: b[:60], "shorter than its header"),
        (lambda b: b[:16] + b"\x00\x03" + b[18:], "impossible page size"),
        (lambda b: b[:4096] + b"\xff" * 8192 + b[3 * 4096 :], "integrity check"),
    ],
    ids=["half", "mid-page", "in-header", "bad-page-size", "garbage-pages"],
)
@pytest.mark.parametrize("readonly", [False, True])
def test_a_damaged_store_is_refused_before_it_is_touched(tmp_path, cut, message, readonly):
    path = tmp_path / "runs.sqlite"
    path.write_bytes(cut(_valid_store_bytes(tmp_path)))
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with pytest.raises(UserInputError) as exc:
        RunStore(path, readonly=readonly)
    assert "is damaged" in _one_line(exc) and message in _one_line(exc) and "left untouched" in _one_line(exc)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.sqlite", "valid.sqlite"]
