"""A tiny-config run of every experiment in ``EXPERIMENTS``: sweep, store, report, verdicts, resume.

Each experiment's tiny overrides are its ``TINY_SETTINGS`` (in its ``config.py``); a newly registered
experiment fails here until its config declares them.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from test_figures_honest import figure_problems

from entropic_bound.experiments import tiny_settings
from entropic_bound.experiments.framework.verdict import VERDICTS
from entropic_bound.pipeline import configure, run_experiments
from entropic_bound.registry import EXPERIMENTS
from entropic_bound.report.writer import analyse_store
from entropic_bound.store import RunStore


@pytest.mark.parametrize("name", EXPERIMENTS.names())
def test_tiny_run_stores_every_run_decides_every_claim_and_draws_honest_figures(name, tmp_path):
    overrides = {name: tiny_settings(name)}
    first = run_experiments([name], overrides=overrides, out=tmp_path)
    n_specs = len(configure(name, "quick", overrides[name]).specs())
    assert first.summaries[name].total == n_specs and first.summaries[name].ran == n_specs

    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    for claim in EXPERIMENTS.get(name).claims:
        assert verdicts[claim]["verdict"] in VERDICTS and verdicts[claim]["experiment"] == name
    results = pd.read_csv(tmp_path / "results" / f"{name}.csv")
    assert len(results) and set(results["status"]) <= {"ok", "diverged"}

    again = run_experiments([name], overrides=overrides, out=tmp_path)  # resume: nothing left to run
    assert again.summaries[name].ran == 0 and again.summaries[name].skipped == n_specs

    assert _figure_problems(name, tmp_path) == []


def _figure_problems(name: str, out) -> list[str]:
    """Empty panels and text below 8 pt as shown, over every figure of ``name``'s stored runs."""
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        [(_, _, analysis)] = analyse_store(store, [name])
    assert analysis.figures, f"{name} draws no figure at the tiny scale"
    return [p for fig_name, fig in analysis.figures.items() for p in figure_problems(fig_name, fig)]
