"""Exports of a run store: tables (CSV, Parquet) and the trackers researchers use (TensorBoard, MLflow).

:func:`export_store` is the one entry point; ``csv`` and ``parquet`` write each experiment's
:meth:`RunStore.table <entropic_bound.store.run_store.RunStore.table>`, ``tensorboard`` and ``mlflow`` every
run with its curves (:mod:`.runs` says how curves become scalar series). The tracker formats need
optional packages; without them the export fails with one line naming the extra to install.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ..errors import UserInputError
from ..store.ownership import claim_output_folder

FORMATS = ("csv", "parquet", "tensorboard", "mlflow")
# format → (module it needs, pip extra that installs it)
OPTIONAL = {
    "parquet": ("pyarrow", "parquet"),
    "tensorboard": ("tensorboard", "tensorboard"),
    "mlflow": ("mlflow", "mlflow"),
}


def require(fmt: str) -> None:
    """Fail in one line when the package a format needs is not installed."""
    if fmt not in OPTIONAL:
        return
    module, extra = OPTIONAL[fmt]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None, or without a spec
        found = False
    if not found:
        raise UserInputError(
            f"Export to {fmt} needs the '{module}' package, which is not installed: "
            f"pip install 'entropic-bound[{extra}]'."
        )


def _check_out(out: Path) -> None:
    """A folder that exists, or can be created, and can be written: checked before any work."""
    if out.exists() and not out.is_dir():
        raise UserInputError(f"The export folder '{out}' is a file; give a folder with --out.")
    existing = next(p for p in (out.absolute(), *out.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise UserInputError(f"Cannot create the export folder '{out}': '{existing}' is a file.")
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == out.absolute() else f" (its folder '{existing}' is)"
        raise UserInputError(
            f"Cannot write the export folder '{out}': it is read-only{where}; give a writable folder with --out."
        )


def export_store(store, out, fmt: str = "csv", *, force: bool = False) -> list[str]:
    """Export the :class:`RunStore` ``store`` to the folder ``out``; returns lines to print.

    ``out`` must be new, empty or an earlier export (:mod:`..ownership`); ``force`` allows any folder."""
    if fmt not in FORMATS:
        listed = ", ".join(repr(f) for f in FORMATS)
        raise UserInputError(f"The 'format' parameter must be one of {listed}. Got {fmt!r} instead.")
    out = Path(out)
    _check_out(out)
    require(fmt)
    folder = claim_output_folder(out, force=force)
    folder.mark()
    if fmt in ("csv", "parquet"):
        return [str(p) for p in store.export(out, fmt=fmt, folder=folder)]
    from .runs import run_view

    views = (run_view(record) for record in store.records())
    try:
        return _export_runs(views, out, fmt)
    except PermissionError as exc:  # a subfolder made read-only since the check
        raise UserInputError(f"Cannot write '{exc.filename or out}': permission denied.") from None


def _export_runs(views, out: Path, fmt: str) -> list[str]:
    if fmt == "tensorboard":
        from .tensorboard_events import export_tensorboard

        written, skipped = export_tensorboard(views, out)
        how = f"view with: tensorboard --logdir {out}"
    else:
        from .mlflow_store import export_mlflow, tracking_uri

        written, skipped = export_mlflow(views, out)
        how = f"view with: mlflow ui --backend-store-uri {tracking_uri(out)}"
    return [f"{fmt}: {written} runs written, {skipped} already there → {out} ({how})"]
