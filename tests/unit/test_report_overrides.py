"""A verdict from a non-default config says so: the overridden keys, ``standard``, one line."""

from __future__ import annotations

from entropic_bound.pipeline import EXPERIMENTS
from entropic_bound.report.overrides import config_overrides, non_standard_line


def _experiment(name: str, scale: str, overrides: dict):
    cls = EXPERIMENTS.get(name)
    return cls(cls.configure(scale, overrides))


def test_the_standard_config_has_no_overrides():
    for name in ("E1", "E6"):
        for scale in ("quick", "paper"):
            assert config_overrides(_experiment(name, scale, {}), scale) == {}


def test_every_key_that_differs_from_the_scales_default_is_listed():
    exp = _experiment("E1", "quick", {"train.steps": 200, "task.r_stars": [2], "train.lr": 0.01})
    # train.lr=0.01 is the default: not an override; tuples come back as JSON lists
    assert config_overrides(exp, "quick") == {"train.steps": 200, "task.r_stars": [2]}
    # the quick config measured against the paper defaults differs in its grid
    assert "task.r_stars" in config_overrides(_experiment("E1", "quick", {}), "paper")


def test_one_line_names_each_non_standard_experiment_once():
    verdicts = {
        "C1": {"experiment": "E1", "scale": "quick", "standard": False, "overrides": {"train.steps": 200}},
        "C2": {"experiment": "E1", "scale": "quick", "standard": False, "overrides": {"train.steps": 200}},
        "C3": {"experiment": "E2", "scale": "quick", "standard": True, "overrides": {}},
    }
    line = non_standard_line(verdicts)
    assert line == "Non-default config — not the standard quick-scale verdicts: E1 (train.steps=200)."
    assert non_standard_line({"C3": verdicts["C3"]}) == ""
