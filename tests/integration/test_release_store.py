"""A store written by the released code still resumes and reports the same verdicts.

``tests/data/release_store/runs.sqlite.gz`` holds tiny E1, E3 and E7 sweeps written by an earlier
version through the CLI (``entropic-bound run EK --set …`` with the assignments in ``runs.json``),
its stored configs in today's key names. Resuming them must find every run (nothing trains again), and the
report, which rebuilds each experiment from the config stored beside its runs, must reach the
verdicts in ``runs.json``: the release's, except where a criterion has since changed (C12 is now
decided on natural-language corpora alone, which the tiny grid has too few of: inconclusive).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from entropic_bound.cli import main
from entropic_bound.config import parse_assignment
from entropic_bound.pipeline import run_experiments

DATA = Path(__file__).parents[1] / "data" / "release_store"


@pytest.fixture
def release_store(tmp_path) -> Path:
    path = tmp_path / "runs.sqlite"
    path.write_bytes(gzip.decompress((DATA / "runs.sqlite.gz").read_bytes()))
    return path


def _expected() -> dict:
    return json.loads((DATA / "runs.json").read_text())


def _labels(out: Path) -> dict[str, str]:
    return {claim: v["verdict"] for claim, v in json.loads((out / "verdicts.json").read_text()).items()}


def test_the_release_store_resumes_without_training_and_decides_the_same(release_store, tmp_path):
    expected = _expected()
    overrides = {
        name: dict(parse_assignment(a) for a in assignments)
        for name, assignments in expected["overrides"].items()
    }
    result = run_experiments(list(overrides), overrides=overrides, out=tmp_path / "out", store=release_store)
    for name, summary in result.summaries.items():
        assert summary.total > 0 and summary.ran == 0 and summary.skipped == summary.total, name
    assert _labels(tmp_path / "out") == expected["verdicts"]


def test_the_report_rebuilds_every_experiment_from_the_release_store(release_store, tmp_path):
    out = tmp_path / "report"
    assert main(["report", "--store", str(release_store), "--out", str(out)]) == 0
    assert _labels(out) == _expected()["verdicts"]
