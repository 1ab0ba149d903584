"""Shared helpers for CLI integration tests: tiny configs that run in seconds."""

import json
from pathlib import Path

import pandas as pd
import pytest

TINY = {
    "E1": [
        "E1.task.r_stars=[2]",
        "E1.task.spectra=[flat,geometric]",
        "E1.ranks=[1,2,3,6]",
        "E1.task.n=8",
        "E1.task.d=4",
        "E1.train.steps=400",
        "E1.train.n_samples=24",
    ],
    "E2": [
        "E2.task.r_stars=[2]",
        "E2.task.n=8",
        "E2.task.d=2",
        "E2.sample_counts=[2,32]",
        "E2.init_scales=[0.001,1.0]",
        "E2.train.steps=400",
        "E2.train.checkpoints=8",
    ],
}


def _tiny_args(*names: str) -> list[str]:
    out = []
    for n in names:
        for a in TINY[n]:
            out += ["--set", a]
    return out


@pytest.fixture(scope="session")
def tiny_args():
    """``tiny_args("E1", "E2")`` → ``--set`` flags that shrink those experiments to seconds."""
    return _tiny_args


@pytest.fixture
def read_outputs():
    def _read(out: Path):
        verdicts = json.loads((out / "verdicts.json").read_text())
        results = {p.stem: pd.read_csv(p) for p in (out / "results").glob("*.csv")}
        return verdicts, results

    return _read
