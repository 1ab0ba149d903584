"""The "Adding an estimator / a student / an experiment" guides of docs/architecture.md, followed
from outside the package: a throw-away estimator, student and experiment in a temporary package,
each declared to its registry by one lazy ``module:object`` line, listed by ``entropic-bound list``
and run end to end by ``entropic-bound run``. If a guide stops being true, this test fails.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from entropic_bound.cli import main
from entropic_bound.registry import ESTIMATORS, EXPERIMENTS, STUDENTS

ESTIMATOR = '''
import numpy as np

from entropic_bound.spectra.estimators import _register


@_register(formula="#{i : s_i > s_1 / 2}", reference="a test", integer=True)
def half_top_rank(s):
    """Singular values above half the largest."""
    s = np.asarray(s, dtype=np.float64)
    return (s > s[..., :1] / 2).sum(-1).astype(np.float64)
'''

STUDENT = '''
from entropic_bound.models.linear_operator import LinearOperatorEnsemble


class HalvedOperatorEnsemble(LinearOperatorEnsemble):
    """B0 whose operator is P Qᵀ / 2."""

    rung = "B9"
    ladder_step = -1  # not a rung of E3's ladder

    @property
    def A(self):
        return 0.5 * super().A
'''

EXPERIMENT = """
from dataclasses import dataclass, field

import torch

from entropic_bound.config import param
from entropic_bound.experiments.base import Experiment
from entropic_bound.experiments.grid import member_result
from entropic_bound.experiments.params import to_params
from entropic_bound.experiments.verdict import Analysis, Verdict, decide
from entropic_bound.experiments.claim import Claim
from entropic_bound.models import MemberSpec
from entropic_bound.registry import ESTIMATORS, STUDENTS, TASKS
from entropic_bound.results import RunSpec
from entropic_bound.training import FixedData, TrainConfig, train_ensemble


@dataclass(frozen=True)
class E9Task:
    n: int = param(6, ge=2)
    d: int = param(3, ge=1)


@dataclass(frozen=True)
class E9Config:
    task: E9Task = field(default_factory=E9Task)
    ranks: tuple[int, ...] = param((1, 2, 6), ge=1)
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=30, n_samples=32))


def verdict_c99(cfg, rows, context):
    ranks = rows["half_top_rank"] if len(rows) else None
    ok = None if ranks is None else bool((ranks >= 1).all())
    evidence = {"runs": len(rows)}
    return Verdict("C99", decide(ok), "every model has a rank >= 1", evidence, "E9", "throw-away claim")


CLAIMS = (Claim("C99", decide=verdict_c99, sentence="{runs:n} runs", default_setting=lambda cfg: {}, statistic="runs"),)


def analyse(cfg, table, rows, context, verdicts):
    return Analysis(results=table, verdicts=verdicts)


class E9Throwaway(Experiment):
    title = "A throw-away experiment"
    config_class = E9Config
    declared_claims = CLAIMS
    analysis_function = analyse
    member_params = ("rank",)

    def student_of(self, spec):
        return "B9"

    def specs(self):
        train = to_params(self.cfg.train, "train")
        return [RunSpec(self.name, {"rank": r, **train}, 0) for r in self.cfg.ranks]

    def execute(self, group):
        task = TASKS.build("fixed_operator", n=self.cfg.task.n, d=self.cfg.task.d, r_star=2)
        teacher = task.teacher(torch.Generator().manual_seed(self.seed("teacher")))
        train = self.train_config(group[0])
        batch = teacher.sample(train.n_samples, torch.Generator().manual_seed(self.seed("data")))
        members = [MemberSpec(s.params["rank"], 0.1, self.seed("init", s.run_id)) for s in group]
        model = STUDENTS.build("B9", members, n=task.n, d=task.d, d_v=task.d_out, dtype=torch.float64)
        outcome = train_ensemble(model, FixedData(batch.X, batch.Y), train)
        ranks = ESTIMATORS.get("half_top_rank")(model.spectra()["A"])
        return [member_result(s, m, outcome, {"half_top_rank": float(ranks[m])}) for m, s in enumerate(group)]
"""

ENTRIES = (
    (ESTIMATORS, "half_top_rank", "throwaway_ext.estimators:half_top_rank.estimator", "above half the top"),
    (STUDENTS, "B9", "throwaway_ext.student:HalvedOperatorEnsemble", "B0 with a halved operator"),
    (EXPERIMENTS, "E9", "throwaway_ext.experiment:E9Throwaway", "a throw-away experiment (C99)"),
)


@pytest.fixture
def throwaway(tmp_path, monkeypatch):
    package = tmp_path / "plugins" / "throwaway_ext"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, source in (("estimators", ESTIMATOR), ("student", STUDENT), ("experiment", EXPERIMENT)):
        (package / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    for registry, name, target, summary in ENTRIES:
        registry.register_lazy(name, target, summary=summary)
    yield
    for registry, name, _, _ in ENTRIES:
        registry.unregister(name)


def test_a_throwaway_estimator_student_and_experiment_are_listed_and_run(throwaway, tmp_path, capsys):
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for _, name, _, _ in ENTRIES)
    out = tmp_path / "out"
    assert main(["run", "E9", "--out", str(out), "--quiet"]) == 0
    verdicts = json.loads((out / "verdicts.json").read_text())
    assert "C99" in json.dumps(verdicts)
