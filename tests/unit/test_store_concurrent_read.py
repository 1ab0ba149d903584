"""A reader of a store that a writer starts writing meanwhile reads every committed run, never a mix of
old and new pages (a report built while a sweep writes the same store)."""

from __future__ import annotations

import sqlite3

from entropic_bound.store.run_store import RunStore
from entropic_bound.sweep import RunResult, RunSpec

PROV = {"versions": {"python": "3.x"}, "git_commit": "abc123"}


def _fill(store: RunStore, experiment: str, n: int, offset: int = 0) -> None:
    # long curves, so that the runs span many pages and a checkpoint rewrites the b-tree's interior
    for i in range(offset, offset + n):
        spec = RunSpec(experiment, {"i": i}, i)
        store.put(RunResult(spec, "ok", {"loss": 0.5}, {"loss": [0.1] * 400}, wall_s=0.1), provenance=PROV)


def test_a_reader_opened_before_a_writer_sees_what_the_writer_committed(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as first:
        _fill(first, "E5", 300)
    assert not (tmp_path / "runs.sqlite-wal").exists()  # no writer: the reader opens unlocked
    with RunStore(path, readonly=True) as reader:
        unlocked = sqlite3.connect(path.resolve().as_uri() + "?immutable=1", uri=True)
        assert reader.count() == 300 == unlocked.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        with RunStore(path) as writer:
            _fill(writer, "E6", 300)
            writer._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            # what the check guards against: an unlocked connection no longer reads the store's state
            assert unlocked.execute("SELECT COUNT(*) FROM runs").fetchone()[0] != 600
            assert reader.count() == 600
            assert len(reader.records("E5")) == 300 and len(reader.records("E6")) == 300
        unlocked.close()


def test_a_reader_with_no_writer_leaves_no_sidecars(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as first:
        _fill(first, "E5", 20)
    with RunStore(path, readonly=True) as reader:
        assert len(reader.records()) == 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.sqlite"]
