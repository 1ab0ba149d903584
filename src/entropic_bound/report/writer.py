"""Assemble the output folder from the run store alone.

``DIR/report.html`` (verdict table first; figures linked from ``DIR/figures/*.png``),
``DIR/verdicts.json`` (claims in claim order) and ``DIR/results/<experiment>[_<table>].csv`` (rows
sorted by their parameters, whole numbers as integers, floats to 6 significant digits; the store
keeps full precision). Every file is written atomically
(write-then-rename), so a killed process never leaves half a report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..atomic import remove_stale_temporaries
from ..config import flatten
from ..errors import UserInputError
from ..experiments.framework.base import Experiment
from ..experiments.framework.replication import analyse_draws
from ..experiments.framework.sequential import analyse_sequential
from ..experiments.framework.verdict import Analysis
from ..plotting import to_png
from ..registry import EXPERIMENTS
from ..store.ownership import OutputFolder, claim_output_folder
from ..store.run_store import RunStore
from .format import natural_key, sorted_naturally
from .html import render_report
from .overrides import config_overrides
from .sequential_figure import sequential_figure


@dataclass
class ExperimentReport:
    experiment: Experiment
    scale: str
    analysis: Analysis
    figure_files: dict[str, str]


def check_out_dir(out_dir: str | Path) -> Path:
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UserInputError(
            f"Output folder '{out}' exists and is not a folder; give a folder path with --out."
        )
    return out


def analyse_store(
    store: RunStore,
    only: list[str] | None = None,
    steps: Callable[[str], None] | None = None,
    analysed: Mapping[str, tuple] | None = None,
) -> list[tuple[Experiment, str, Analysis]]:
    """Rebuild each stored experiment from its recorded config and analyse its rows, every recorded
    draw on its own and the verdicts combined (:func:`~..experiments.framework.replication.analyse_draws`;
    ``steps``: told each experiment before its analysis; ``analysed``: ``name → (experiment, scale, analysis)``
    already made from this store, used as they are)."""
    out = []
    for name in EXPERIMENTS.names():
        if only and name not in only:
            continue
        if analysed and name in analysed:
            out.append(analysed[name])
            continue
        info = store.experiment_info(name)
        if info is None:
            continue
        cls = EXPERIMENTS.get(name)
        exp = cls(cls.from_dict(info["config"]))
        if steps:
            steps(f"analysing {name} ({store.count(name)} runs)")
        table, records = store.table(name), store.records(name)
        if info["sequential"] is not None:
            stop = info["sequential"].get("stop")
            analysis = analyse_sequential(exp, table, records, info["draws"], info["scale"], stop)
            figure = sequential_figure(analysis.verdicts)
            if figure is not None:
                analysis.figures[f"{name}_sequential"] = figure
        else:
            analysis = analyse_draws(exp, table, records, info["draws"], info["scale"])
        out.append((exp, info["scale"], analysis))
    return out


def csv_text(df: pd.DataFrame, sort_by: list[str] | None = None) -> str:
    """``df`` as CSV: rows sorted by ``sort_by`` (None: the table's own order, which a derived table
    chose), columns whose values are all whole numbers written as integers, other floats to 6
    significant digits."""
    out = df.copy()
    for col in out.columns:
        values = out[col]
        if pd.api.types.is_float_dtype(values):
            finite = values.dropna()
            if len(finite) and np.isfinite(finite).all() and (finite == finite.round()).all():
                if (finite.abs() < 2**53).all():
                    out[col] = values.astype("Int64")
    keys = [c for c in sort_by or () if c in out.columns]
    if keys and len(out):
        try:
            out = out.sort_values(keys, kind="mergesort", na_position="last")
        except TypeError:  # mixed types in a column: order by text
            out = out.sort_values(keys, key=lambda s: s.astype(str), kind="mergesort")
    return out.to_csv(index=False, float_format="%.6g")


def _param_columns(store: RunStore, name: str) -> list[str]:
    """A results table's sort order: every run parameter (in the store's order), then the seed."""
    cols: dict[str, None] = {}
    for rec in store.records(name):
        for key in flatten(rec.get("params") or {}):
            cols.setdefault(key, None)
    return [c for c in cols if c != "seed"] + ["seed", "run_id"]


def ordered_verdicts(reports: list[ExperimentReport]) -> list[dict]:
    """Every verdict as a dict with its ``claim`` and ``scale``, in claim order (C1…C13, then X1…)."""
    rows = []
    for r in reports:
        overrides = config_overrides(r.experiment, r.scale)  # non-default keys mark the verdict
        marks = {"scale": r.scale, "overrides": overrides, "standard": not overrides}
        rows += [
            {"claim": v.claim, **sorted_naturally({**v.to_dict(), **marks})} for v in r.analysis.verdicts
        ]
    return sorted(rows, key=lambda row: natural_key(row["claim"]))


def verdicts_json(verdicts: list[dict]) -> str:
    """``verdicts.json``: claim → verdict, claims in claim order, nested numeric keys in numeric order."""
    data = {v["claim"]: {k: val for k, val in v.items() if k != "claim"} for v in verdicts}
    return json.dumps(data, indent=2) + "\n"


def write_report(
    store: RunStore,
    out_dir: str | Path | OutputFolder,
    *,
    only: list[str] | None = None,
    steps: Callable[[str], None] | None = None,
    analysed: Mapping[str, tuple] | None = None,
) -> Path:
    """Write the report folder for every experiment recorded in ``store``; returns report.html.

    ``out_dir`` is a claimed :class:`OutputFolder`, or a path claimed here (refused unless ours);
    ``steps`` is told each step (analysing, figures, the page) for progress where no bar shows it;
    ``analysed``: analyses made while the sweep ran (see :func:`analyse_store`)."""
    folder = out_dir if isinstance(out_dir, OutputFolder) else claim_output_folder(check_out_dir(out_dir))
    out = folder.root
    if folder.ours:  # a folder written into only by --force: nothing there is deleted, not even ours
        remove_stale_temporaries(out, out / "figures", out / "results")  # left by a killed writer
    reports = []
    for exp, scale, analysis in analyse_store(store, only, steps, analysed):
        if steps:
            steps(
                f"writing {exp.name}: {len(analysis.figures)} figure(s), {1 + len(analysis.tables)} table(s)"
            )
        files = {}
        for fig_name, fig in analysis.figures.items():
            path = folder.write_bytes(f"figures/{fig_name}.png", to_png(fig))
            files[fig_name] = str(path.relative_to(out))
        results_csv = csv_text(analysis.results, _param_columns(store, exp.name))
        folder.write_text(f"results/{exp.name}.csv", results_csv)
        for table_name, table in analysis.tables.items():
            folder.write_text(f"results/{exp.name}_{table_name}.csv", csv_text(table))
        reports.append(ExperimentReport(exp, scale, analysis, files))
    verdicts = ordered_verdicts(reports)
    if steps:
        steps(f"writing verdicts.json and report.html ({len(verdicts)} claims)")
    folder.write_text("verdicts.json", verdicts_json(verdicts))
    page = render_report(reports, out_dir=out, store_path=str(store.path), verdicts=verdicts)
    return folder.write_text("report.html", page)
