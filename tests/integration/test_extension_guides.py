"""The "Adding …" guides of docs/architecture.md, kept true.

From outside the package: a throw-away estimator, student and experiment in a temporary package,
each declared to its registry by one lazy ``module:object`` line, listed by ``entropic-bound list``
and run end to end by ``entropic-bound run``. Inside a copy of the package: a throw-away estimator,
student, ladder rung, experiment, claim and checkpoint architecture, added by each guide's edits alone,
touch the number of files the guide states, and the registry-generated tests pass against the copy
without another edit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from entropic_bound.cli import main
from entropic_bound.experiments import tiny_settings
from entropic_bound.experiments.framework.verdict import VERDICTS
from entropic_bound.registry import ESTIMATORS, EXPERIMENTS, STUDENTS

ESTIMATOR = '''
import numpy as np

from entropic_bound.spectra.estimators import _register


@_register(formula="#{i : s_i > s_1 / 2}", reference="a test", integer=True)
def half_top_rank(s):
    """Singular values above half the largest."""
    s = np.asarray(s, dtype=np.float64)
    return (s > s.max(-1, keepdims=True) / 2).sum(-1).astype(np.float64)
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
from entropic_bound.experiments.framework.base import Experiment
from entropic_bound.experiments.framework.grid import member_result
from entropic_bound.experiments.framework.params import to_params
from entropic_bound.experiments.framework.verdict import Analysis, Finding, decide
from entropic_bound.experiments.framework.claim import Claim
from entropic_bound.experiments.framework.rule import Interval, Rule, Unit
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
    return Finding(decide(ok), "every model has a rank >= 1", {"runs": len(rows)})


CLAIMS = (
    Claim(
        id="C99",
        experiment="E9",
        statement="throw-away claim",
        unit=Unit("run"),
        rule=Rule(thresholds=(), interval=Interval.COUNT),
        decide=verdict_c99,
        sentence="{runs:n} runs",
        default_setting=lambda cfg: {},
        statistic="runs",
    ),
)


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
        seeds = self.seeds_of(group)
        task = TASKS.build("fixed_operator", n=self.cfg.task.n, d=self.cfg.task.d, r_star=2)
        teacher = task.teacher(torch.Generator().manual_seed(seeds.seed("teacher")))
        train = self.train_config(group[0])
        batch = teacher.sample(train.n_samples, torch.Generator().manual_seed(seeds.seed("data")))
        members = [MemberSpec(s.params["rank"], 0.1, seeds.seed("init", s.run_id)) for s in group]
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


# -- The guides followed inside a copy of the package: every file they touch is counted -------------

GUIDE_ESTIMATOR = '''
import numpy as np

from .estimators import _register


@_register(formula="#{i : s_i > s_1 / 2}", reference="a test", integer=True)
def half_top_rank(s):
    """Singular values above half the largest."""
    s = np.asarray(s, dtype=np.float64)
    return (s > s.max(-1, keepdims=True) / 2).sum(-1).astype(np.float64)
'''

GUIDE_STUDENT = '''
from .base import PlotStyle
from .linear_operator import LinearOperatorEnsemble


class CopiedOperatorEnsemble(LinearOperatorEnsemble):
    """B0 under another name, off the ladder."""

    rung = "B8"
    ladder_step = -1
    plot_style = PlotStyle(colour="#CC79A7", marker="v", offset=2**0.2)
'''

GUIDE_RUNG = '''
from .base import PlotStyle
from .block import TransformerBlockEnsemble


class SecondBlockEnsemble(TransformerBlockEnsemble):
    """B3 as a fifth rung of the ladder."""

    rung = "B4"
    ladder_step = 4
    plot_style = PlotStyle(colour="#56B4E9", marker="P", offset=2**0.2 + 0.01)
'''

GUIDE_EXPERIMENT = {
    "__init__.py": '"""E8: a throw-away experiment (C14)."""\n',
    "config.py": """
from dataclasses import dataclass, field

from ...config import param
from ...training import TrainConfig


@dataclass(frozen=True)
class E8Task:
    n: int = param(6, ge=2)
    d: int = param(3, ge=1)


@dataclass(frozen=True)
class E8Verdict:
    rate: float = param(0.5, gt=0.0, le=1.0, doc="C14: share of runs with a rank >= 1")


@dataclass(frozen=True)
class E8Config:
    task: E8Task = field(default_factory=E8Task)
    ranks: tuple[int, ...] = param((1, 2, 6), ge=1)
    verdict: E8Verdict = field(default_factory=E8Verdict)
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=30, n_samples=32))


SCALE_SETTINGS = {"paper": {"ranks": (1, 2, 3, 6)}}
TINY_SETTINGS = {"ranks": (1, 6), "train.steps": 10}
""",
    "experiment.py": """
import torch

from ...models import MemberSpec
from ...registry import ESTIMATORS, STUDENTS, TASKS
from ...results import RunSpec
from ...training import FixedData, train_ensemble
from ..framework.base import Experiment
from ..framework.grid import member_result
from ..framework.params import to_params
from ..framework.parts import parts_of
from . import analysis, claims, config


class E8Floor(Experiment):
    config_class, scale_settings, declared_claims, analysis_function = parts_of(config, claims, analysis)
    title = "A throw-away experiment"
    member_params = ("rank",)

    def student_of(self, spec):
        return "B0"

    def specs(self):
        train = to_params(self.cfg.train, "train")
        return [RunSpec(self.name, {"rank": r, **train}, 0) for r in self.cfg.ranks]

    def execute(self, group):
        seeds = self.seeds_of(group)
        task = TASKS.build("fixed_operator", n=self.cfg.task.n, d=self.cfg.task.d, r_star=2)
        teacher = task.teacher(torch.Generator().manual_seed(seeds.seed("teacher")))
        train = self.train_config(group[0])
        batch = teacher.sample(train.n_samples, torch.Generator().manual_seed(seeds.seed("data")))
        members = [MemberSpec(s.params["rank"], 0.1, seeds.seed("init", s.run_id)) for s in group]
        model = STUDENTS.build("B0", members, n=task.n, d=task.d, d_v=task.d_out, dtype=torch.float64)
        outcome = train_ensemble(model, FixedData(batch.X, batch.Y), train)
        ranks = ESTIMATORS.get("numerical_rank")(model.spectra()["A"])
        return [member_result(s, m, outcome, {"top_rank": float(ranks[m])}) for m, s in enumerate(group)]
""",
    "analysis.py": """
from ..framework.verdict import Analysis


def analyse(cfg, table, rows, context, verdicts):
    return Analysis(results=table, verdicts=verdicts)
""",
    "plots.py": '"""E8 draws no figure."""\n',
    "claims.py": """
from ..framework.claim import Claim
from ..framework.rule import Interval, Rule, Unit
from ..framework.verdict import Finding, decide


def verdict_c14(cfg, rows, context):
    share = float((rows["top_rank"] >= 1).mean()) if len(rows) else None
    holds = None if share is None else share >= cfg.verdict.rate
    return Finding(decide(holds), "most models have a rank >= 1", {"share": share, "runs": len(rows)})


C14 = Claim(
    id="C14",
    experiment="E8",
    statement="throw-away claim",
    unit=Unit("run"),
    rule=Rule(thresholds=("verdict.rate",), interval=Interval.POINT),
    decide=verdict_c14,
    sentence="{runs:n} runs",
    default_setting=lambda cfg: {},
    statistic="runs",
)
CLAIMS = (C14,)
""",
}

#: The claim guide's edits: a threshold in E1's config and X3 in E1's claims.py (criterion, declaration, CLAIMS).
GUIDE_CLAIM_THRESHOLD = '    x3_rate: float = param(0.5, gt=0.0, le=1.0, doc="X3: share of teacher draws reaching the floor at r >= r*")\n'
GUIDE_CLAIM = """

def verdict_x3(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    above = rows[rows["rank"] >= rows["task.r_star"]] if len(rows) else rows
    criterion = (
        f"at least {cfg.verdict.x3_rate:.0%} of runs with r >= r* reach eps_floor = "
        f"{cfg.verdict.eps_floor:g}, a share of teacher draws decided by its 95% Wilson interval"
    )
    if not len(above):
        return Finding("inconclusive", criterion, {"runs": 0})
    reached = above["rel_excess"] < cfg.verdict.eps_floor
    decision = unit_share_decision(above, reached, TEACHER_DRAW.keys, cfg.verdict.x3_rate)
    evidence = {"share": decision.statistic, "runs": len(above), "decision": decision.to_dict()}
    return Finding(decide(decision.outcome), criterion, evidence)


X3 = Claim(
    id="X3",
    experiment="E1",
    statement="students of rank r >= r* reach the noise floor",
    unit=TEACHER_DRAW,
    rule=Rule(thresholds=("verdict.x3_rate", "verdict.eps_floor"), interval=Interval.WILSON),
    decide=verdict_x3,
    sentence="{share:pct} of teacher draws reach the floor at r ≥ r* ({runs} runs)",
    default_setting=lambda cfg: grid_setting(cfg, "task.spectra"),
    statistic="share",
    grid=lambda cfg, rows, context: sliced(cfg, rows, (("spectra", "task.spectrum"),)),
)
CLAIMS = (C1, C2, X3)
"""

REGISTRY_LINES = {
    "architecture": '(ARCHITECTURES, "opt", "inspect.architectures.opt:Opt", "OPT decoders"),',
    "estimator": '(ESTIMATORS, "half_top_rank", "spectra.half_top_rank:half_top_rank.estimator", "above half the top"),',
    "student": '(STUDENTS, "B8", "models.copied_operator:CopiedOperatorEnsemble", "B0 under another name"),',
    "rung": '(STUDENTS, "B4", "models.second_block:SecondBlockEnsemble", "a second pre-LN block"),',
    "experiment": '(EXPERIMENTS, "E8", "experiments.e8_floor.experiment:E8Floor", "a throw-away experiment (C14)"),',
}

REPO = Path(__file__).resolve().parents[2]
GUIDES = {  # kind → the "### Adding …" section of docs/architecture.md that states its files touched
    "estimator": "Adding an estimator",
    "student": "Adding a student",
    "rung": "Adding a ladder rung",
    "experiment": "Adding an experiment",
    "claim": "Adding a claim",
    "architecture": "Adding an architecture (`inspect`)",
}


def _stated_files(section: str) -> int:
    text = (REPO / "docs" / "architecture.md").read_text()
    body = text.split(f"### {section}\n", 1)[1].split("\n### ", 1)[0]
    return int(re.search(r"Files touched: (\d+)", body).group(1))


def _digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _add_registry_line(package: Path, line: str) -> None:
    registry = package / "registry.py"
    text = registry.read_text()
    anchor = ")  # fmt: skip"
    registry.write_text(text.replace(anchor, f"    {line}\n{anchor}", 1))


def _add_claim(package: Path) -> None:
    """X3 on E1: its threshold after C2's in E1's verdict section, and its criterion, declaration and
    place in CLAIMS in E1's claims.py (with the one import its criterion needs)."""
    e1 = package / "experiments" / "e1_linear_surrogate"
    config = (e1 / "config.py").read_text()
    anchor = config.index("\n", config.index("    sharpness: float = param(")) + 1
    (e1 / "config.py").write_text(config[:anchor] + GUIDE_CLAIM_THRESHOLD + config[anchor:])
    claims = (e1 / "claims.py").read_text().replace("CLAIMS = (C1, C2)\n", "")
    imported = "record, unit_bootstrap, units_of"
    claims = claims.replace(imported, "record, unit_bootstrap, unit_share_decision, units_of")
    (e1 / "claims.py").write_text(claims + GUIDE_CLAIM)


def _follow(package: Path, kind: str) -> None:
    """The edits the guide of ``kind`` lists, and nothing else."""
    if kind == "claim":
        return _add_claim(package)
    if kind == "estimator":
        (package / "spectra" / "half_top_rank.py").write_text(GUIDE_ESTIMATOR)
    elif kind == "student":
        (package / "models" / "copied_operator.py").write_text(GUIDE_STUDENT)
    elif kind == "rung":
        (package / "models" / "second_block.py").write_text(GUIDE_RUNG)
    elif kind == "architecture":
        shutil.copy(
            REPO / "tests" / "data" / "opt_adapter.py", package / "inspect" / "architectures" / "opt.py"
        )
    else:
        folder = package / "experiments" / "e8_floor"
        folder.mkdir()
        for name, source in GUIDE_EXPERIMENT.items():
            (folder / name).write_text(textwrap.dedent(source))
    _add_registry_line(package, REGISTRY_LINES[kind])


CHECK = """
from entropic_bound.config_keys import check_keys
from entropic_bound.experiments.e3_ladder.claims import c4_on_summary
from entropic_bound.experiments.e3_ladder.config import E3Config, ladder_parts
from entropic_bound.pipeline import configure
from entropic_bound.spectra import ESTIMATOR_KEYS
import pandas as pd

assert "half_top_rank" in ESTIMATOR_KEYS
for name, key in (("E2", "verdict.c3_estimator"), ("E5", "verdict.c7_estimator")):
    check_keys(name, {key: "half_top_rank"})
    configure(name, "quick", {key: "half_top_rank"})
assert ladder_parts()[1][-1] == "B4"
empty = pd.DataFrame(columns=["role", "rung", "v", "rank", "rel_excess_median"])
assert "B4" in c4_on_summary(E3Config(), empty).criterion

import numpy as np
from entropic_bound.inspect import arch_config, kernel_spectra

rng, d = np.random.default_rng(0), 8
w = {f"model.decoder.layers.{i}.self_attn.{name}.weight": rng.normal(size=(d, d))
     for i in range(2) for name in ("q_proj", "k_proj")}
w.update({f"model.decoder.layers.{i}.self_attn_layer_norm.weight": np.ones(d) for i in range(2)})
config = {"model_type": "opt", "num_attention_heads": 2, "num_hidden_layers": 2, "hidden_size": d}
cfg = arch_config(w, config)  # found from config.json's model_type, through the registry
assert (cfg.arch, cfg.n_layers, cfg.d_head) == ("opt", 2, 4)
assert kernel_spectra(w, cfg)["singular_values"].shape[:2] == (2, 2)
"""


@pytest.mark.slow
def test_each_guide_touches_the_files_it_states_and_nothing_else_is_needed(tmp_path):
    """A copy of the package gets a throw-away estimator, student, ladder rung and experiment, each by
    its guide's edits alone; each touches the number of files the guide states, and then the tests that
    enumerate the registries pass against the copy, as does a run of the new experiment."""
    src = tmp_path / "src"
    shutil.copytree(
        REPO / "src" / "entropic_bound", src / "entropic_bound", ignore=shutil.ignore_patterns("__pycache__")
    )
    package = src / "entropic_bound"
    touched = {}
    for kind in GUIDES:
        before = _digests(package)
        _follow(package, kind)
        after = _digests(package)
        touched[kind] = sorted(k for k in after if before.get(k) != after[k])
    assert {kind: len(files) for kind, files in touched.items()} == {
        kind: _stated_files(section) for kind, section in GUIDES.items()
    }, touched

    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, "-c", CHECK], check=True, env=env, cwd=tmp_path)
    memory = "tests/unit/test_memory_estimate.py::test_the_estimate_is_within_2x_of_the_measured_peak"
    tests = [
        "tests/unit/test_registry.py",
        "tests/unit/test_student_contract.py",
        "tests/unit/test_cli_imports.py",
        "tests/unit/test_estimator_contract.py",
        "tests/unit/test_claim_identity.py",
        "tests/unit/test_inspect_architectures.py",
        "tests/unit/test_inspect_kernels.py",
        *(f"{memory}[{case}]" for case in ("B4", "B8", "B8-moments")),
    ]
    run = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *tests]
    result = subprocess.run(run, env=env, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
    out = tmp_path / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "entropic_bound",
            "run",
            "E8",
            "--out",
            str(out),
            "--quiet",
            "--scale",
            "quick",
        ],
        check=True,
        env=env,
        cwd=tmp_path,
    )
    assert json.loads((out / "verdicts.json").read_text())["C14"]["verdict"] == "confirmed"
    _decide_the_new_claim_from_the_cli(env, tmp_path)


def _decide_the_new_claim_from_the_cli(env: dict, tmp_path: Path) -> None:
    """E1 run from the copy's command line at its tiny grid: X3 is decided beside C1 and C2 and stated
    in verdicts.json under the identity its declaration gives it."""
    assignments = [
        f"{key}={','.join(map(str, value)) if isinstance(value, tuple) else value}"
        for key, value in tiny_settings("E1").items()
    ]
    out = tmp_path / "out_claim"
    run = [sys.executable, "-m", "entropic_bound", "run", "E1", "--out", str(out), "--quiet"]
    subprocess.run(
        run + [arg for a in assignments for arg in ("--set", a)], check=True, env=env, cwd=tmp_path
    )
    verdicts = json.loads((out / "verdicts.json").read_text())
    assert set(verdicts) == {"C1", "C2", "X3"}
    x3 = verdicts["X3"]
    assert x3["experiment"] == "E1" and x3["statement"] == "students of rank r >= r* reach the noise floor"
    assert x3["verdict"] in VERDICTS and x3["evidence"]["decision"]["unit"] == "teacher draw"
    assert x3["criterion"].startswith("at least 50% of runs with r >= r*") and x3["robustness"]["settings"]
