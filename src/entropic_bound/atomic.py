"""Atomic file writes: a reader sees the old file or the new one, never half of either.

The data goes to a temporary file in the destination's directory (same file system), is flushed
and ``fsync``-ed, then renamed over the destination with :func:`os.replace`, which is atomic on
POSIX and Windows. A crash leaves at most a stray ``.entropic-bound.<name>.pid<PID>.*.tmp`` file
beside the destination; the project's prefix marks it as ours (a user's own ``.*.tmp`` files are
never touched), and the writer's process id in the name lets a later writer tell a killed writer's
leftover from a temporary another live process (a second run writing the same folder) is filling.
A full disk is a one-line :class:`UserInputError` naming the file, with the old file kept.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path

from .errors import UserInputError

#: errno values that mean "no room": the disk, or the user's quota, is full.
NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})
#: Every temporary this module makes starts with this prefix: the only files it ever deletes.
TMP_PREFIX = ".entropic-bound."
_OUR_TMP = re.compile(r"^\.entropic-bound\..+\.pid(\d+)\.[^.]+\.tmp$")


def no_space_error(path: str | os.PathLike, exc: OSError) -> UserInputError:
    return UserInputError(
        f"Cannot write '{path}': no space left on the device ({exc.strerror or exc}). "
        "Free space and rerun the same command: finished runs are in the store and it resumes."
    )


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
        fd, tmp = tempfile.mkstemp(
            dir=path.parent, prefix=f"{TMP_PREFIX}{path.name}.pid{os.getpid()}.", suffix=".tmp"
        )
    except OSError as exc:
        if exc.errno in NO_SPACE:
            raise no_space_error(path, exc) from None
        raise UserInputError(f"Cannot write '{path}': {exc.strerror or exc}.") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            raise no_space_error(path, exc) from None
        raise
    _fsync_dir(path.parent)
    return path


def _writer_alive(tmp: Path) -> bool:
    """Whether the process named in a temporary's name still runs (on this machine)."""
    match = _OUR_TMP.match(tmp.name)
    if match is None:
        return True  # not one of ours: treated as alive, so never deleted
    try:
        os.kill(int(match.group(1)), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_stale_temporaries(*directories: str | os.PathLike) -> list[Path]:
    """Delete this project's temporaries that a killed writer left directly in ``directories``.

    Only names of the form ``.entropic-bound.<name>.pid<PID>.<random>.tmp`` are considered, only
    in the folders given (never their subfolders: a user's ``notes/`` or ``.git/`` are not ours),
    and a temporary whose writer is still running (another process writing the same folder) is
    kept, so two runs writing one output folder at once never delete each other's files.
    """
    removed = []
    for directory in directories:
        removed += _remove_stale_in(Path(directory))
    return removed


def _remove_stale_in(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    removed = []
    for tmp in sorted(root.glob(f"{TMP_PREFIX}*.tmp")):
        if not tmp.is_file() or _writer_alive(tmp):
            continue
        try:
            tmp.unlink()
            removed.append(tmp)
        except OSError:
            pass
    return removed


def atomic_write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`); return the path."""
    return atomic_write_bytes(path, text.encode(encoding))
