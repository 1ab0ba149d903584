"""Atomic file writes: a reader sees the old file or the new one, never half of either.

The data goes to a temporary file in the destination's directory (same file system), is flushed
and ``fsync``-ed, then renamed over the destination with :func:`os.replace`, which is atomic on
POSIX and Windows. A crash leaves at most a stray ``.<name>.*.tmp`` file beside the destination.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import UserInputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent directories; return the path.

    The file gets the permissions a plain ``open(path, "wb")`` would give (``0o666 & ~umask``).
    """
    path = Path(path)
    if path.is_dir():
        raise UserInputError(f"Cannot write '{path}': it is a directory.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserInputError(f"Cannot write '{path}': {exc.strerror or exc}.") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)
    return path


def remove_stale_temporaries(directory: str | os.PathLike) -> list[Path]:
    """Delete temporaries (``.<name>.*.tmp``) that a killed writer left under ``directory``.

    Only the single writer of an output folder calls this, before it writes, so no temporary in
    use can be removed.
    """
    root = Path(directory)
    if not root.is_dir():
        return []
    removed = []
    for tmp in root.rglob(".*.tmp"):
        try:
            tmp.unlink()
            removed.append(tmp)
        except OSError:
            pass
    return removed


def atomic_write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`); return the path."""
    return atomic_write_bytes(path, text.encode(encoding))
