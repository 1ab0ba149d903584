"""The command line starts without torch: `--help` and a mistyped `--set` key answer at once.

What is checked is *what gets imported*, not a time (which depends on the machine and its load).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from entropic_bound import config_keys
from entropic_bound.cli import main, predict_cmd
from entropic_bound.errors import ConfigError
from entropic_bound.experiments.framework.config_lookup import config_class
from entropic_bound.pipeline import EXPERIMENTS

HEAVY = ("torch", "scipy", "pandas", "matplotlib")


def _imported_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().replace("'", '"'))


def test_the_package_and_the_cli_do_not_import_torch():
    assert _imported_after("import entropic_bound") == []
    assert _imported_after("import entropic_bound.cli") == []
    assert _imported_after("import entropic_bound.cli as c; c.build_parser().format_help()") == []


def test_a_mistyped_set_key_is_refused_before_the_experiments_are_imported():
    code = (
        "from entropic_bound.cli import main\n"
        "assert main(['run', 'E1', '--set', 'train.stepz=3', '--out', '/nonexistent/x']) == 2\n"
        "assert main(['reproduce', '--set', 'E2.tain.lr=3', '--out', '/nonexistent/x']) == 2\n"
        "assert main(['run', 'E1', '--set', 'train.lr=-1', '--out', '/nonexistent/x']) == 2"
    )
    assert _imported_after(code) == []


def test_the_parsers_names_are_the_predictors():
    from entropic_bound.predict import PREDICTORS, TEACHERS

    assert predict_cmd.TEACHERS == TEACHERS
    assert set(predict_cmd.METHODS) == set(PREDICTORS.names())


def test_every_experiments_config_imports_no_heavy_module():
    """The early check imports each registered experiment's ``config.py`` (found beside its
    experiment module, not the experiment's own module): none may import torch, pandas, …"""
    code = (
        "from entropic_bound.experiments.framework.config_lookup import config_class\n"
        "from entropic_bound.registry import EXPERIMENTS\n"
        "for name in EXPERIMENTS.names():\n"
        "    assert config_class(name).__module__.endswith('.config'), name"
    )
    assert _imported_after(code) == []


def test_the_early_check_reads_each_experiments_own_config_class():
    for name in EXPERIMENTS.names():
        assert config_class(name) is EXPERIMENTS.get(name).config_class
    assert sorted(config_keys.experiment_names()) == EXPERIMENTS.names()


@pytest.mark.parametrize(
    "name, key",
    [
        ("E1", "train.stepz"),
        ("E1", "tain.lr"),
        ("E1", "train.steps.x"),
        ("E3", "task.r_sta"),
        ("E6", "sigmas"),
        ("E7", "train.stepz"),
    ],
)
def test_the_early_check_says_what_the_full_validation_says(name, key):
    with pytest.raises(ConfigError) as full:
        EXPERIMENTS.get(name).configure("quick", {key: 1})
    with pytest.raises(ConfigError) as early:
        config_keys.check_keys(name, {key: 1})
    assert str(early.value) == str(full.value)


@pytest.mark.parametrize(
    "name, key, value",
    [
        ("E1", "train.lr", -1.0),
        ("E1", "train.steps", "many"),
        ("E1", "train.optimizer", "adamm"),
        ("E1", "task.spectra", ["flatt"]),
        ("E1", "seeds", 2.5),
        ("E2", "init_scales", [0.0]),
        ("E6", "task.sigmas", "x"),
        ("E7", "train.steps", 0),
    ],
)
def test_a_wrong_value_is_refused_early_with_the_full_message(name, key, value):
    with pytest.raises(ConfigError) as full:
        EXPERIMENTS.get(name).configure("quick", {key: value})
    with pytest.raises(ConfigError) as early:
        config_keys.check_keys(name, {key: value})
    assert str(early.value) == str(full.value)


def test_every_default_value_passes_the_early_check():
    from entropic_bound.config import flatten, to_dict

    for name in EXPERIMENTS.names():
        cls = EXPERIMENTS.get(name)
        for scale in ("quick", "paper"):
            config_keys.check_keys(name, flatten(to_dict(cls.default_config(scale))))


def test_run_accepts_the_experiment_prefix_reproduce_needs(capsys):
    names = EXPERIMENTS.names()
    assert config_keys.strip_experiment("E1", {"E1.train.lr": 1, "train.steps": 2}, names) == {
        "train.lr": 1,
        "train.steps": 2,
    }
    with pytest.raises(ConfigError, match=r"'E2.x' is for E2, but this command runs E1"):
        config_keys.strip_experiment("E1", {"E2.x": 3}, names)
    with pytest.raises(ConfigError, match=r"starts with 'E99', which names no experiment"):
        config_keys.strip_experiment("E1", {"E99.train.lr": 3}, names)
    assert main(["run", "E1", "--set", "E1.train.stepz=3", "--out", "/nonexistent/x"]) == 2
    assert "Unknown config key 'train.stepz'" in capsys.readouterr().err
