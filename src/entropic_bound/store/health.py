"""Is a run-store file whole, and ours? Checked from its bytes before SQLite opens it, then from its
tables on a read-only connection before anything is written to it.

A store that is not an SQLite database, or was truncated (a copy cut short, a full disk during a
``cp``), must be refused with the file left exactly as it was: SQLite itself would only notice
when a query reaches a missing page, possibly after the run had started writing into it. The
header fields read here are those of the SQLite file format (https://sqlite.org/fileformat.html):
the magic string, the page size (bytes 16–17) and the database size in pages (bytes 28–31), which
is trusted only when its "version-valid-for" number (bytes 92–95) equals the change counter
(bytes 24–27).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..errors import UserInputError

MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
SIDECAR_SUFFIXES = ("-wal", "-shm")


def damaged(path: Path, why: str) -> UserInputError:
    why = " ".join(why.split())  # SQLite's integrity report spans lines
    return UserInputError(
        f"Run store '{path}' is damaged ({why}); it was left untouched: restore it from a backup, "
        "or move it aside and rerun to start a new store."
    )


def not_a_database(path: Path) -> UserInputError:
    return UserInputError(
        f"'{path}' is not a run store: the file is not an SQLite database (it was left untouched)."
    )


def _has_hot_journal(path: Path) -> bool:
    """A non-empty WAL or rollback journal: pages the file itself may not hold yet, or a writer
    copying them into it."""
    for suffix in ("-wal", "-journal"):
        side = Path(f"{path}{suffix}")
        if side.is_file() and side.stat().st_size > 0:
            return True
    return False


def check_store_file(path: Path) -> None:
    """Raise a one-line :class:`UserInputError` if the file at ``path`` is not a whole SQLite file.

    A missing or empty file passes (a new store is created there)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            header = handle.read(HEADER_SIZE)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserInputError(f"Cannot read run store '{path}': {exc.strerror or exc}.") from None
    if size == 0:
        return
    if len(header) < HEADER_SIZE:
        if MAGIC.startswith(header[: len(MAGIC)]):
            raise damaged(path, f"truncated to {size} bytes, shorter than its header")
        raise not_a_database(path)
    if not header.startswith(MAGIC):
        raise not_a_database(path)
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        raise damaged(path, f"its header gives the impossible page size {page_size}")
    if _has_hot_journal(path):
        return  # a checkpoint may be writing the file now (another process); SQLite's check decides
    if size % page_size:
        raise damaged(path, f"truncated: {size} bytes is not a whole number of {page_size}-byte pages")
    pages = int.from_bytes(header[28:32], "big")
    if header[24:28] == header[92:96] and pages * page_size > size:
        raise damaged(path, f"truncated: {size // page_size} of its {pages} pages are left")


def absent_sidecars(path: Path) -> list[Path]:
    """The ``-wal``/``-shm`` files SQLite may create beside ``path`` that do not exist yet."""
    return [p for p in (Path(f"{path}{s}") for s in SIDECAR_SUFFIXES) if not p.exists()]


def remove_empty_sidecars(created: list[Path]) -> None:
    """Undo the sidecars a refused open created, so a refused store's folder is as it was.

    Only when the WAL is empty: then it holds nothing and no other connection is writing."""
    wal = [p for p in created if p.name.endswith("-wal")]
    if any(p.exists() and p.stat().st_size > 0 for p in wal):
        return
    for side in created:
        try:
            os.unlink(side)
        except OSError:
            pass


class FileStamp:
    """What an immutable reader assumed of a store file when it opened it: no writer, and these bytes.

    SQLite reads an ``immutable`` file without locks and keeps its pages cached, so a writer that
    starts afterwards (its checkpoints rewrite pages of the main file) can make a query return a
    mix of old and new pages: fewer rows than the store holds. :meth:`changed` says when that may
    have happened, so the reader reads again under SQLite's locks."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.key = self._key()

    def _key(self) -> tuple[int, int, int]:
        st = self.path.stat()
        return st.st_ino, st.st_size, st.st_mtime_ns

    def changed(self) -> bool:
        """Whether a writer has appeared (a ``-wal`` beside the file) or the file's bytes moved."""
        return Path(f"{self.path}-wal").exists() or self._key() != self.key


class OldSchemaError(UserInputError):
    """A store of ours, opened read-only, whose schema is older than this entropic-bound's."""


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def schema_version(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version of the run store behind ``conn``: its ``meta`` table's, 0 for an empty
    database; a one-line :class:`UserInputError` for any other database, which is then left untouched."""
    tables = table_names(conn)
    if "meta" in tables:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and str(row[0]).isdigit():
            return int(row[0])
    elif not tables:
        return 0
    raise UserInputError(
        f"'{path}' is an SQLite database but not an entropic-bound run store "
        f"(tables: {', '.join(sorted(tables))}); it was left untouched."
    )


def sqlite_user_error(path: Path, msg: str, timeout: float) -> UserInputError:
    """One line for an SQLite failure the user can cause (a lock, a full disk, a read-only file)."""
    where = f"Run store '{path}'"
    if "locked" in msg or "busy" in msg:
        text = (
            f"{where} is locked by another process (waited {timeout:g} s); "
            "wait for it to finish or use another store."
        )
    elif "disk is full" in msg or "disk I/O error" in msg:
        text = (
            f"{where} could not be written ({msg}): the disk is full or failing. Every run "
            "committed before is kept; free space and rerun the same command to resume."
        )
    elif "not a database" in msg or "encrypted" in msg:
        return not_a_database(path)
    elif "malformed" in msg or "corrupt" in msg:
        return damaged(path, msg)
    elif ("readonly" in msg or "read-only" in msg) and not os.access(path.parent, os.W_OK):
        text = (
            f"{where} is in the read-only folder '{path.parent}' (SQLite writes its journal "
            "beside the store); make the folder writable or write to another store."
        )
    elif "readonly" in msg or "read-only" in msg:
        text = f"{where} is read-only; make it writable or write to another store."
    elif "unable to open" in msg:
        text = f"Cannot open run store '{path}' ({msg})."
    else:
        text = f"{where}: {msg}."
    return UserInputError(" ".join(text.split()))
