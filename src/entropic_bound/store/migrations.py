"""How a store written by an older entropic-bound is read: its schema, and its config keys.

:data:`MIGRATIONS` turns a store of schema version ``v`` into one of ``v + 1`` (applied on open by
:class:`~entropic_bound.store.run_store.RunStore`, each step in its own transaction).

:data:`CONFIG_KEY_MIGRATIONS` maps a config key an experiment's stored config may hold to the key
that replaced it. A stored config is read with its keys carried over (:func:`migrate_config_keys`),
so its runs resume and its report rebuilds; an override that still names an old key fails naming
the new one (:func:`replacement_of`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping

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
    """v0: no store yet (an empty file), or the prototype layout whose ``runs`` lacked the
    provenance columns and which had no ``experiments`` table. Creates or completes the v1 tables."""
    columns = ",\n  ".join(f"{name} {decl}" for name, decl in RUNS_COLUMNS.items())
    conn.execute(f"CREATE TABLE IF NOT EXISTS runs (\n  {columns}\n)")
    present = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    for name, decl in RUNS_COLUMNS.items():
        if name not in present:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {name} {decl.replace(' NOT NULL', '')}")
    conn.execute("CREATE INDEX IF NOT EXISTS runs_experiment ON runs(experiment)")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS experiments "
        "(name TEXT PRIMARY KEY, scale TEXT, config TEXT NOT NULL, updated_at TEXT)"
    )


#: ``MIGRATIONS[v]`` turns a version-``v`` store into a version-``v + 1`` one.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_migrate_v0_to_v1]

#: experiment → {old config key: the key that holds its value now}
CONFIG_KEY_MIGRATIONS: dict[str, dict[str, str]] = {
    # 0.1.0 named E7's released models ``checkpoints``, beside ``train.checkpoints`` (evaluation steps)
    "E7": {"checkpoints": "released_models"},
}


def migrate_config_keys(experiment: str, flat: Mapping[str, object]) -> dict:
    """A stored config's flat ``key → value`` with every old key of ``experiment`` renamed."""
    renamed = CONFIG_KEY_MIGRATIONS.get(experiment, {})
    return {renamed.get(k, k): v for k, v in flat.items()}


def replacement_of(experiment: str, key: str) -> str | None:
    """The key that replaced the old config key ``key`` of ``experiment``; None if it is not old."""
    return CONFIG_KEY_MIGRATIONS.get(experiment, {}).get(key)
