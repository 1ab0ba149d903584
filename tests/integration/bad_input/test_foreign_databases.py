"""A database the project did not make is refused byte for byte untouched; a store it only reads is
opened read-only."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from bad_input_helpers import TINY_E1, Unprivileged, assert_one_line, snapshot

from entropic_bound.cli import main


def _customers(path):
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO customers VALUES (1, 'Ada')")
    conn.close()


def _other_runs(path):
    """Someone else's ``runs`` table: other columns, no ``meta``."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT, runner TEXT)")
        conn.execute("INSERT INTO runs VALUES (1, 'monday', 'alice')")
    conn.close()


FOREIGN = {"customers": _customers, "other-runs": _other_runs}
COMMANDS = {
    "report-default-store": lambda s: ["report", "--out", s.parent],
    "report": lambda s: ["report", "--out", s.parent.parent / "rep", "--store", s],
    "export": lambda s: ["export", "--store", s, "--out", s.parent.parent / "exp"],
    "run": lambda s: ["reproduce", "--out", s.parent.parent / "o", "--store", s, *TINY_E1],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", FOREIGN)
def test_a_database_that_is_not_ours_is_refused_untouched(kind, command, tmp_path, refused):
    store = tmp_path / "s" / "runs.sqlite"
    store.parent.mkdir()
    FOREIGN[kind](store)
    header = store.read_bytes()[:100]
    before = snapshot(tmp_path)
    refused(COMMANDS[command](store), str(store.parent))
    assert snapshot(tmp_path) == before  # no -wal/-shm, no WAL switch (header bytes 18-19), no migration
    assert store.read_bytes()[18:20] == header[18:20] == b"\x01\x01"


def test_exporting_a_read_only_store_leaves_no_sidecars(our_output, tmp_path, capsys):
    store = tmp_path / "runs.sqlite"
    shutil.copy(our_output / "runs.sqlite", store)
    store.chmod(0o444)
    before = snapshot(tmp_path)
    assert main(["export", "--store", str(store), "--out", str(tmp_path / "exp")]) == 0
    assert (tmp_path / "exp" / "E1.csv").is_file()
    after = snapshot(tmp_path)
    assert {k: after[k] for k in before} == before
    assert not list(tmp_path.glob("runs.sqlite-*"))


EXPORT_FORMATS = ("tensorboard", "mlflow", "csv", "parquet")


@pytest.fixture(scope="module")
def read_only_runs(our_output):
    """As a user for whom permissions hold, in one process: export and report a store in a 555
    folder, and export it into a 555 folder in every format. ``(runs, folder state before/after)``."""
    runner = Unprivileged()
    scratch = runner.scratch
    folder, locked = scratch / "ro", scratch / "locked"
    folder.mkdir()
    locked.mkdir()
    shutil.copy(our_output / "runs.sqlite", folder / "runs.sqlite")
    runner.share(scratch)
    folder.chmod(0o555)
    locked.chmod(0o555)
    store = folder / "runs.sqlite"
    before = snapshot(folder, locked)
    runs = runner.run(
        ["export", "--store", store, "--out", scratch / "e"],
        ["report", "--store", store, "--out", scratch / "r"],
        *(["export", "--store", store, "--out", locked / "x", "--format", fmt] for fmt in EXPORT_FORMATS),
    )
    yield runs, locked, before, snapshot(folder, locked)
    runner.close()


def test_a_store_in_a_read_only_folder_can_be_exported_and_reported(read_only_runs):
    runs, _, before, after = read_only_runs
    assert runs[0][0] == 0 and runs[1][0] == 0, runs[:2]
    assert after == before  # no -wal/-shm, nothing written beside the store


def test_export_into_a_read_only_folder_is_one_line(read_only_runs):
    runs, locked, before, after = read_only_runs
    for status, stderr in runs[2:]:
        assert status == 2, stderr
        assert_one_line(stderr, str(locked), "read-only")
    assert after == before
