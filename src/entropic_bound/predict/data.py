"""Checking and loading the arrays a predictor reads: ``X (N, n, d)``, ``Y (N, n, d_v)``, ``V (d, d_v)``.

Each failure raises :class:`DataError` with one line saying what was expected and what was found.
Files are read with ``allow_pickle=False``: object arrays and pickles are refused.
"""

from __future__ import annotations

import os
import pickle
import zipfile
from typing import Any

import numpy as np

from ..errors import DataError

#: Entries larger than this are refused: the predictors multiply up to six entries (``X⁴ V²`` in the
#: normal equations), which overflow float64 (about 1.8e308) from about 1e51 on. r* is unchanged when
#: X, Y or V is rescaled, so a rescaled copy of the data gives the same answer.
MAX_MAGNITUDE = 1e30


def _as_float_array(a: Any, name: str, ndim: int, layout: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise DataError(
            f"Array '{name}' must hold real numbers (float or int). Got dtype {arr.dtype} instead."
        )
    if arr.ndim != ndim:
        raise DataError(
            f"Array '{name}' must be {ndim}-D {layout}. Got shape {arr.shape} ({arr.ndim}-D) instead."
        )
    if 0 in arr.shape:
        raise DataError(f"Array '{name}' must be non-empty {layout}. Got shape {arr.shape} instead.")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise DataError(f"Array '{name}' must be finite. Found {bad} NaN or infinite values.")
    peak = float(np.max(np.abs(arr)))
    if peak > MAX_MAGNITUDE:
        raise DataError(
            f"Array '{name}' has entries as large as {peak:.3g}; the predictors multiply up to six entries, "
            f"which overflows float64, so entries must be at most {MAX_MAGNITUDE:g} in size: rescale the "
            "data (r* does not change when X, Y or V is rescaled)."
        )
    return arr


def check_arrays(X: Any, Y: Any, V: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Validate shapes, dtypes and finiteness; return float64 ``(X, Y, V)``."""
    X = _as_float_array(X, "X", 3, "(N, n, d)")
    Y = _as_float_array(Y, "Y", 3, "(N, n, d_v)")
    if Y.shape[:2] != X.shape[:2]:
        raise DataError(
            f"X and Y must agree in (N, n): X is (N, n, d) = {X.shape}, so Y must be ({X.shape[0]}, {X.shape[1]}, d_v). "
            f"Got Y of shape {Y.shape} instead."
        )
    if V is not None:
        V = _as_float_array(V, "V", 2, "(d, d_v)")
        expected = (X.shape[2], Y.shape[2])
        if V.shape != expected:
            raise DataError(
                f"V must be (d, d_v) = {expected} to match X {X.shape} and Y {Y.shape}. Got {V.shape} instead."
            )
    return X, Y, V


def _load_one(path: str) -> Any:
    if not os.path.exists(path):
        raise DataError(f"Expected a .npz or .npy file at '{path}'. Found no such file.")
    if os.path.isdir(path):
        raise DataError(f"Expected a .npz or .npy file at '{path}'. Found a directory.")
    _check_file_kind(path)
    try:
        _check_declared_sizes(path)
        return np.load(path, allow_pickle=False)
    except DataError:
        raise
    except ValueError as exc:  # object arrays or a pickle, refused by allow_pickle=False
        raise DataError(
            f"Expected plain numeric arrays in '{path}' (pickles are not loaded). Found: {exc}"
        ) from None
    except (OSError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError) as exc:
        raise DataError(f"Expected a NumPy .npz or .npy file at '{path}'. Could not read it: {exc}") from None


NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK\x03\x04"
PICKLE_PROTOCOL = 0x80  # a pickle of protocol 2 or later opens with this byte


def _check_file_kind(path: str) -> None:
    """Refuse a file that is neither an ``.npy`` array nor an ``.npz`` (zip) archive by what it holds
    (a script, a CSV, a pickle), before NumPy tries to read it as a pickle."""
    with open(path, "rb") as handle:
        head = handle.read(512)
    if head.startswith((NPY_MAGIC, ZIP_MAGIC)) or zipfile.is_zipfile(path):
        return
    if head[:1] == bytes([PICKLE_PROTOCOL]):
        found = "a Python pickle (pickles are not loaded)"
    elif not head:
        found = "an empty file"
    else:
        found = "a text file" if _is_text(head) else "a file of another format"
    raise DataError(
        f"Expected a NumPy .npz archive (np.savez) or .npy array (np.save) at '{path}'. Found {found}."
    )


def _is_text(head: bytes) -> bool:
    """Whether the first bytes of a file read as UTF-8 (a character cut at the end still counts)."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3
    return b"\x00" not in head


def _declared_bytes(handle) -> tuple[tuple, int]:
    """The shape and data size an ``.npy`` header declares (read without loading the data)."""
    version = np.lib.format.read_magic(handle)
    read_header = (
        np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    )
    shape, _, dtype = read_header(handle, max_header_size=10_000)
    return shape, int(np.prod(shape, dtype=object)) * dtype.itemsize


def _check_declared_sizes(path: str) -> None:
    """Refuse an array whose header declares more data than its file holds, before NumPy allocates
    memory for it (a forged or truncated header would otherwise ask for terabytes)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.filename.endswith(".npy"):
                    with archive.open(info) as handle:
                        _compare_declared(handle, info.file_size, f"'{path}' member {info.filename}")
        return
    with open(path, "rb") as handle:
        if handle.read(6) != b"\x93NUMPY":
            return  # not an .npy: np.load says what it is
        handle.seek(0)
        _compare_declared(handle, os.path.getsize(path), f"'{path}'")


def _compare_declared(handle, available: int, where: str) -> None:
    shape, declared = _declared_bytes(handle)
    if declared > available:
        raise DataError(
            f"Expected the array in {where} to hold the data its header declares: shape {shape} "
            f"({declared / 2**30:.3g} GiB). Found a file of only {available} bytes (forged or truncated)."
        )


def _npz_array(store: Any, key: str, path: str) -> np.ndarray:
    try:
        return store[key]
    except ValueError as exc:
        raise DataError(
            f"Expected a plain numeric array '{key}' in '{path}'. Found an object array ({exc})."
        ) from None


def load_npz(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Read ``X``, ``Y`` and optional ``V`` from an ``.npz`` archive (unchecked shapes)."""
    store = _load_one(path)
    if not isinstance(store, np.lib.npyio.NpzFile):
        raise DataError(
            f"Expected an .npz archive with arrays X, Y[, V] at '{path}'. Found a single .npy array."
        )
    with store:
        missing = [k for k in ("X", "Y") if k not in store.files]
        if missing:
            raise DataError(
                f"Expected arrays X and Y (and optionally V) in '{path}'. Missing {', '.join(missing)}; "
                f"found {', '.join(store.files) or 'no arrays'}."
            )
        V = _npz_array(store, "V", path) if "V" in store.files else None
        return _npz_array(store, "X", path), _npz_array(store, "Y", path), V


def load_npy(path: str, name: str) -> np.ndarray:
    """Read one array from an ``.npy`` file (an ``.npz`` is refused here)."""
    arr = _load_one(path)
    if isinstance(arr, np.lib.npyio.NpzFile):
        arr.close()
        raise DataError(f"Expected a single-array .npy file for {name} at '{path}'. Found an .npz archive.")
    return arr
