"""A store's schema and how it is brought up to date.

:data:`MIGRATIONS` turns a store of schema version ``v`` into one of ``v + 1`` (applied on open by
:class:`~entropic_bound.store.run_store.RunStore`, each step in its own transaction); the first step
creates the tables in a new (empty) file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

SCHEMA_VERSION = 1

RUNS_COLUMNS = {  # name → declared type, in table order
    "run_id": "TEXT PRIMARY KEY",
    "experiment": "TEXT NOT NULL",
    "params": "TEXT NOT NULL",
    "seed": "INTEGER NOT NULL",
    "status": "TEXT NOT NULL",
    "diverged_step": "INTEGER",
    "metrics": "TEXT NOT NULL",
    "curves": "TEXT NOT NULL",
    "versions": "TEXT",
    "git_commit": "TEXT",
    "wall_s": "REAL",
    "created_at": "TEXT",
}


def _migrate_v0_to_v1(conn: sqlite3.Connection) -> None:
    """v0: no store yet (an empty file). Creates the v1 tables."""
    columns = ",\n  ".join(f"{name} {decl}" for name, decl in RUNS_COLUMNS.items())
    conn.execute(f"CREATE TABLE IF NOT EXISTS runs (\n  {columns}\n)")
    conn.execute("CREATE INDEX IF NOT EXISTS runs_experiment ON runs(experiment)")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS experiments "
        "(name TEXT PRIMARY KEY, scale TEXT, config TEXT NOT NULL, updated_at TEXT)"
    )


#: ``MIGRATIONS[v]`` turns a version-``v`` store into a version-``v + 1`` one.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_migrate_v0_to_v1]
