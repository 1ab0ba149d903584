"""The run store: one SQLite file, the only state of a sweep.

Layout (schema version :data:`SCHEMA_VERSION`)::

    meta(key PRIMARY KEY, value)                     -- schema_version
    runs(run_id PRIMARY KEY, experiment, params JSON, seed, status, diverged_step,
         metrics JSON, curves JSON, versions JSON, git_commit, wall_s, created_at)
    experiments(name PRIMARY KEY, scale, config JSON, updated_at)   -- config["draws"]: the draws run

Every finished run is one ``INSERT OR IGNORE`` in its own transaction, so a killed sweep loses at
most the runs in flight and a run is never stored twice. The journal is WAL, so readers (a report
being built) never block the writer. Metrics keep NaN and ±inf exactly: JSON is written with
Python's ``NaN``/``Infinity`` literals and floats as their round-trip ``repr``.

Stores written by an older schema are migrated on open by
:data:`~entropic_bound.store.migrations.MIGRATIONS` (one function per version step, each in its own
transaction); a store from a newer entropic-bound is refused.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ..errors import UserInputError
from ..results import RunResult, canonical_json
from .health import (
    FileStamp,
    OldSchemaError,
    absent_sidecars,
    check_store_file,
    damaged,
    remove_empty_sidecars,
    schema_version,
    sqlite_user_error,
)
from .migrations import MIGRATIONS, RUNS_COLUMNS, SCHEMA_VERSION
from .run_tables import export_tables, runs_table

_JSON_COLUMNS = ("params", "metrics", "curves", "versions")


def _dumps(obj) -> str:
    return canonical_json(obj, allow_nan=True)


def _loads(text: str | None):
    return None if text is None else json.loads(text)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def is_run_store(path: Path) -> bool:
    """Whether the file at ``path`` is an entropic-bound run store, found without writing to it.

    False for a missing or empty file; a one-line :class:`UserInputError` for a file that is not."""
    if not path.is_file() or path.stat().st_size == 0:
        return False
    try:
        RunStore(path, readonly=True).close()
    except OldSchemaError:
        pass
    return True


class RunStore:
    """A SQLite run store at ``path`` (created with its parent directories unless ``readonly``).

    ``timeout`` is how long (seconds) a write waits for another process's lock before failing with
    a :class:`UserInputError`. Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path, *, readonly: bool = False, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.timeout = float(timeout)
        self._unlocked: FileStamp | None = None
        self._check_path()
        check_store_file(self.path)
        sidecars = absent_sidecars(self.path)
        existing = self.path.is_file() and self.path.stat().st_size > 0
        # Identify the file read-only first: a database that is not ours, or is damaged, is refused
        # before SQLite writes anything to it (no WAL switch, no migration).
        if existing or readonly:
            self._conn = self._open_readonly(sidecars)
            self._guarded(sidecars, self._identify)
            if readonly:
                return
            self._conn.close()
        with self._errors():
            self._conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        self._guarded(sidecars, self._open_for_writing)

    def _open_readonly(self, sidecars: list[Path]) -> sqlite3.Connection:
        """A connection that cannot write. A reader (``readonly``) of a store no process has open for
        writing (no ``-wal`` or ``-journal`` beside it) opens it immutable: no lock, no ``-wal``/``-shm`` created, so
        a read-only file or folder works. Otherwise ``mode=ro``, which takes SQLite's locks: a writer
        may be creating the store this instant (two runs into one folder), and what it committed is
        read whole. An immutable reader checks after every query that no writer has appeared since
        (:class:`~entropic_bound.store.health.FileStamp`), and reads again under locks if one has."""
        in_use = Path(f"{self.path}-wal") not in sidecars or Path(f"{self.path}-journal").exists()
        immutable = self.readonly and not in_use
        self._unlocked = FileStamp(self.path) if immutable else None
        return self._connect_readonly(immutable)

    def _connect_readonly(self, immutable: bool) -> sqlite3.Connection:
        uri = self.path.resolve().as_uri() + ("?immutable=1" if immutable else "?mode=ro")
        with self._errors():
            return sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)

    def _guarded(self, sidecars: list[Path], step: Callable[[], None]) -> None:
        """Run an opening step; on failure close and remove the sidecars the attempt created."""
        try:
            with self._errors():
                step()
        except BaseException:
            self._conn.close()
            remove_empty_sidecars(sidecars)
            raise

    def _identify(self) -> None:
        self._check_integrity()
        version = self._version()
        if version > SCHEMA_VERSION:
            raise self._newer(version)
        if version < SCHEMA_VERSION and self.readonly:
            raise OldSchemaError(
                f"Run store '{self.path}' has the old schema version {version}; "
                f"open it once for writing to upgrade it to {SCHEMA_VERSION}."
            )

    def _open_for_writing(self) -> None:
        self._check_integrity()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._upgrade()

    # -- opening --------------------------------------------------------------------------------

    def _check_path(self) -> None:
        p = self.path
        if p.is_dir():
            raise UserInputError(
                f"Run store '{p}' is a directory; give a file path such as '{p / 'runs.sqlite'}'."
            )
        if self.readonly:
            if not p.is_file():
                raise UserInputError(f"Run store '{p}' does not exist.")
            return
        if p.exists() and not (p.stat().st_mode & 0o222):
            raise UserInputError(
                f"Run store '{p}' is a read-only file; make it writable or write to another store."
            )
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserInputError(
                f"Cannot create the directory of run store '{p}': {exc.strerror or exc}."
            ) from None

    def _version(self) -> int:
        """The schema version of an entropic-bound store; a one-line refusal for any other database."""
        return schema_version(self._conn, self.path)

    def _newer(self, version: int) -> UserInputError:
        return UserInputError(
            f"Run store '{self.path}' has schema version {version}, newer than this "
            f"entropic-bound ({SCHEMA_VERSION}); upgrade entropic-bound."
        )

    def _upgrade(self) -> None:
        version = self._version()
        if version > SCHEMA_VERSION:
            raise self._newer(version)
        while version < SCHEMA_VERSION:
            with self._transaction():
                version = self._version()  # another process may have migrated meanwhile
                if version >= SCHEMA_VERSION:
                    break
                MIGRATIONS[version](self._conn)
                self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(version + 1),)
                )
            version += 1

    def _check_integrity(self) -> None:
        """SQLite's own structural check (every page reachable, every b-tree in order), read-only."""
        verdict = self._conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if verdict != "ok":
            raise damaged(self.path, f"integrity check: {verdict}")

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn SQLite failures the user can cause into one-line :class:`UserInputError` s."""
        try:
            yield
        except (sqlite3.OperationalError, sqlite3.DatabaseError) as exc:
            if isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError)):
                raise
            raise self._user_error(str(exc)) from None

    def _user_error(self, msg: str) -> UserInputError:
        return sqlite_user_error(self.path, msg, self.timeout)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE … COMMIT``; any exception (a SIGTERM raised in Python, a full
        disk) rolls it back, so a run is stored whole or not at all."""
        if self.readonly:
            raise UserInputError(f"Run store '{self.path}' was opened read-only; it cannot be written.")
        with self._errors():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may already have rolled back (SQLITE_FULL does); a failing ROLLBACK must not
                # hide the error that caused it.
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore('{self.path}'{', readonly=True' if self.readonly else ''})"

    # -- runs -----------------------------------------------------------------------------------

    def put(self, result: RunResult, *, provenance: dict) -> bool:
        """Store one finished run in its own transaction; False if its run_id was already stored."""
        spec = result.spec
        row = (
            spec.run_id,
            spec.experiment,
            _dumps(spec.key()["params"]),  # the draw among the params, as its run id hashes it
            spec.seed,
            result.status,
            result.diverged_step,
            _dumps(result.metrics),
            _dumps(result.curves),
            _dumps(provenance.get("versions")),
            provenance.get("git_commit"),
            result.wall_s,
            _now(),
        )
        names = ", ".join(RUNS_COLUMNS)
        with self._transaction() as conn:
            cur = conn.execute(
                f"INSERT OR IGNORE INTO runs ({names}) VALUES ({', '.join('?' * len(row))})", row
            )
            return cur.rowcount == 1

    def _where(self, experiment: str | None) -> tuple[str, tuple]:
        return ("", ()) if experiment is None else (" WHERE experiment = ?", (experiment,))

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._errors():
            rows = self._conn.execute(sql, args).fetchall()
        if self._unlocked is not None and self._unlocked.changed():
            self._conn.close()
            self._unlocked = None
            self._conn = self._connect_readonly(immutable=False)
            with self._errors():
                rows = self._conn.execute(sql, args).fetchall()
        return rows

    def finished_ids(self, experiment: str | None = None) -> set[str]:
        """Run ids already stored (for one experiment, or all)."""
        where, args = self._where(experiment)
        return {r[0] for r in self._query(f"SELECT run_id FROM runs{where}", args)}

    def count(self, experiment: str | None = None) -> int:
        where, args = self._where(experiment)
        return int(self._query(f"SELECT COUNT(*) FROM runs{where}", args)[0][0])

    def records(self, experiment: str | None = None) -> list[dict]:
        """Stored runs as dicts (JSON columns parsed, curves included), ordered by run_id."""
        where, args = self._where(experiment)
        names = list(RUNS_COLUMNS)
        rows = self._query(f"SELECT {', '.join(names)} FROM runs{where} ORDER BY run_id", args)
        out = []
        for row in rows:
            rec = dict(zip(names, row))
            for col in _JSON_COLUMNS:
                rec[col] = _loads(rec[col])
            rec["versions"] = rec["versions"] or {}
            out.append(rec)
        return out

    def table(self, experiment: str) -> pd.DataFrame:
        """One row per run of ``experiment``, ordered by run_id (:func:`~.run_tables.runs_table`)."""
        return runs_table(self.records(experiment))

    # -- experiments ----------------------------------------------------------------------------

    def put_experiment(
        self,
        name: str,
        scale: str,
        config: dict,
        draws: list[int] | None = None,
        sequential: dict | None = None,
    ) -> None:
        """Record (or replace) an experiment's scale, full config and the draws its last command ran
        (kept in the stored config under ``"draws"``; None: the config's own ``draw``), and for a
        ``--until-decided`` command its state (``{"stop": why it ended or None}``, under ``"sequential"``)."""
        stored = {**config, "draws": [int(d) for d in draws]} if draws is not None else config
        if sequential is not None:
            stored = {**stored, "sequential": sequential}
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO experiments (name, scale, config, updated_at) VALUES (?, ?, ?, ?)",
                (name, scale, _dumps(stored), _now()),
            )

    def experiment_info(self, name: str) -> dict | None:
        """``{"name", "scale", "config", "draws", "updated_at"}`` of an experiment, or None if not
        recorded; ``draws`` is ``[the config's draw]`` for a store written before draws existed."""
        rows = self._query("SELECT name, scale, config, updated_at FROM experiments WHERE name = ?", (name,))
        if not rows:
            return None
        info = dict(zip(("name", "scale", "config", "updated_at"), rows[0]))
        info["config"] = _loads(info["config"])
        info["draws"] = info["config"].pop("draws", None) or [info["config"].get("draw", 0)]
        info["sequential"] = info["config"].pop("sequential", None)
        return info

    def experiment_config(self, name: str) -> dict | None:
        info = self.experiment_info(name)
        return None if info is None else info["config"]

    def experiments(self) -> list[str]:
        """Names of experiments with a recorded config or at least one run, sorted."""
        rows = self._query("SELECT name FROM experiments UNION SELECT DISTINCT experiment FROM runs")
        return sorted(r[0] for r in rows)

    # -- exports --------------------------------------------------------------------------------

    def export(self, out_dir, fmt: str = "csv", *, folder=None) -> list[Path]:
        """Write :meth:`table` of every experiment to ``out_dir/<experiment>.<fmt>`` atomically
        (through ``folder``, an :class:`~entropic_bound.store.ownership.OutputFolder`, when given)."""
        return export_tables(self, out_dir, fmt, folder=folder)
