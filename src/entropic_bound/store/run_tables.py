"""A run store's runs as tables: one row per run, parameters and metrics as columns, and their export
to CSV or Parquet files."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd

from ..atomic import atomic_write_bytes
from ..errors import UserInputError
from ..results import canonical_json

BASE_COLUMNS = ("run_id", "experiment", "seed", "status", "diverged_step", "wall_s")


def runs_table(records: list[dict]) -> pd.DataFrame:
    """One row per stored run (``RunStore.records``), in the order given.

    Columns: :data:`BASE_COLUMNS`, then every parameter under its own name (nested dicts
    flattened with dots, ``train.lr``; lists as JSON text), then every metric. A parameter or
    metric whose name clashes with an earlier column is kept as ``param.<name>`` /
    ``metric.<name>``. Curves are left out; read them from the records.
    """
    rows, param_cols, metric_cols = [], {}, {}
    for rec in records:
        row = {c: rec[c] for c in BASE_COLUMNS}
        for key, value in _flatten(rec["params"]).items():
            param_cols.setdefault(key, None)
            row[("param", key)] = value
        for key, value in rec["metrics"].items():
            metric_cols.setdefault(key, None)
            row[("metric", key)] = value
        rows.append(row)
    names: dict = {c: c for c in BASE_COLUMNS}
    for kind, cols in (("param", param_cols), ("metric", metric_cols)):
        for key in cols:
            names[(kind, key)] = f"{kind}.{key}" if key in names.values() else key
    df = pd.DataFrame([{names[k]: v for k, v in row.items()} for row in rows], columns=list(names.values()))
    df["diverged_step"] = df["diverged_step"].astype("Int64")
    for key in metric_cols:
        df[names[("metric", key)]] = df[names[("metric", key)]].astype("float64")
    return df


def export_tables(store, out_dir, fmt: str = "csv", *, folder=None) -> list[Path]:
    """Write the table of every experiment of ``store`` to ``out_dir/<experiment>.<fmt>`` atomically
    (through ``folder``, an :class:`~entropic_bound.store.ownership.OutputFolder`, when given)."""
    if fmt not in ("csv", "parquet"):
        raise UserInputError(f"The 'fmt' parameter must be one of 'csv', 'parquet'. Got {fmt!r} instead.")
    out_dir = Path(out_dir)
    paths = []
    for name in store.experiments():
        df = store.table(name)
        rel = f"{re.sub(r'[^A-Za-z0-9._-]', '_', name)}.{fmt}"
        if fmt == "csv":
            data = df.to_csv(index=False).encode("utf-8")
        else:
            buf = io.BytesIO()
            df.to_parquet(buf, index=False)
            data = buf.getvalue()
        paths.append(folder.write_bytes(rel, data) if folder else atomic_write_bytes(out_dir / rel, data))
    return paths


def _flatten(params: dict, prefix: str = "") -> dict:
    """``{"train": {"lr": 1e-3}, "dims": [2, 3]}`` → ``{"train.lr": 1e-3, "dims": "[2,3]"}``."""
    flat = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, list):
            flat[name] = canonical_json(value, allow_nan=True)
        else:
            flat[name] = value
    return flat
