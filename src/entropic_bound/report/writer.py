"""Assemble the output folder from the run store alone.

``DIR/report.html`` (verdict table first, figures inline), ``DIR/verdicts.json``,
``DIR/results/<experiment>.csv`` and ``DIR/figures/*.png``. Every file is written atomically
(write-then-rename), so a killed process never leaves half a report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..atomic import atomic_write_bytes, atomic_write_text, remove_stale_temporaries
from ..config import to_dict
from ..errors import UserInputError
from ..experiments.base import Analysis, Experiment
from ..plotting import to_png
from ..registry import EXPERIMENTS
from ..store import RunStore
from .html import render_report


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


def analyse_store(store: RunStore, only: list[str] | None = None) -> list[tuple[Experiment, str, Analysis]]:
    """Rebuild each stored experiment from its recorded config and analyse its rows."""
    out = []
    for name in EXPERIMENTS.names():
        if only and name not in only:
            continue
        info = store.experiment_info(name)
        if info is None:
            continue
        cls = EXPERIMENTS.get(name)
        exp = cls(cls.from_dict(info["config"]))
        out.append((exp, info["scale"], exp.analyse(store.table(name), store.records(name))))
    return out


def write_report(store: RunStore, out_dir: str | Path, *, only: list[str] | None = None) -> Path:
    """Write the report folder for every experiment recorded in ``store``; returns report.html."""
    out = check_out_dir(out_dir)
    remove_stale_temporaries(out)  # left by a writer killed mid-write
    reports = []
    for exp, scale, analysis in analyse_store(store, only):
        files = {}
        for fig_name, fig in analysis.figures.items():
            path = atomic_write_bytes(out / "figures" / f"{fig_name}.png", to_png(fig))
            files[fig_name] = str(path.relative_to(out))
        atomic_write_text(out / "results" / f"{exp.name}.csv", analysis.results.to_csv(index=False))
        for table_name, table in analysis.tables.items():
            atomic_write_text(out / "results" / f"{exp.name}_{table_name}.csv", table.to_csv(index=False))
        reports.append(ExperimentReport(exp, scale, analysis, files))
    verdicts = {v.claim: {**v.to_dict(), "scale": r.scale} for r in reports for v in r.analysis.verdicts}
    atomic_write_text(out / "verdicts.json", json.dumps(verdicts, indent=2, sort_keys=True) + "\n")
    html = render_report(
        reports,
        out_dir=out,
        store_path=str(store.path),
        configs={r.experiment.name: to_dict(r.experiment.cfg) for r in reports},
    )
    return atomic_write_text(out / "report.html", html)
