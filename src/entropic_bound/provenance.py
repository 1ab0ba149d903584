"""Where a result came from: package versions and the git commit of the installed code.

:func:`provenance` is what the run store records beside every run::

    {"versions": {"python": "3.12.3", "entropic-bound": "0.1.0", "torch": "2.13.0+cpu", ...},
     "git_commit": "12c14ad…" | "12c14ad…-dirty" | None}

Nothing here raises: a missing package reads ``None`` and so does a missing ``git``.
"""

from __future__ import annotations

import copy
import functools
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("entropic-bound", "torch", "numpy", "scipy", "pandas", "matplotlib")

_GIT_TIMEOUT_S = 10.0


def package_versions() -> dict:
    """Versions of Python, this package and its numerical dependencies, plus the platform string.

    Read from installed metadata (no heavy imports); a package that is not installed maps to None.
    """
    versions: dict = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    versions["platform"] = platform.platform()
    return versions


def _git(directory: Path, *args: str) -> str | None:
    """stdout of ``git -C directory args`` stripped, or None on any failure."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")  # never take index.lock from a concurrent commit
    try:
        proc = subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def git_commit(path: str | os.PathLike | None = None) -> str | None:
    """``HEAD`` of the git checkout at ``path``, with ``-dirty`` if tracked files are modified.

    ``path`` defaults to the checkout this package is installed from; when the package's own
    files are not tracked there (a regular, non-editable install) the answer is None, as it is
    when ``path`` is not in a git checkout or git is not installed. Untracked files do not count
    as dirty (as in ``git describe --dirty``).
    """
    if path is None:
        init = Path(__file__).resolve().parent / "__init__.py"
        directory = init.parent
        if _git(directory, "ls-files", "--error-unmatch", init.name) is None:
            return None
    else:
        directory = Path(path)
        if directory.is_file():
            directory = directory.parent
    head = _git(directory, "rev-parse", "--verify", "HEAD")
    if not head:
        return None
    status = _git(directory, "status", "--porcelain", "--untracked-files=no")
    return f"{head}-dirty" if status else head


@functools.lru_cache(maxsize=1)
def _provenance() -> dict:
    return {"versions": package_versions(), "git_commit": git_commit()}


def provenance() -> dict:
    """``{"versions": package_versions(), "git_commit": git_commit()}``, computed once per process."""
    return copy.deepcopy(_provenance())
