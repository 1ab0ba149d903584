"""Config machinery: dotted overrides, type and range validation, did-you-mean, YAML."""

from dataclasses import dataclass, field

import pytest

from entropic_bound.config import apply_overrides, keys, load_yaml, param, parse_assignment, to_dict, validate
from entropic_bound.errors import ConfigError
from entropic_bound.experiments import E1Config
from entropic_bound.training import TrainConfig


@dataclass(frozen=True)
class Inner:
    lr: float = param(1e-2, gt=0.0)
    opt: str = param("adam", choices=("gd", "adam"))


@dataclass(frozen=True)
class Outer:
    n: int = param(16, ge=2, le=64)
    ranks: tuple[int, ...] = param((1, 2), ge=1)
    flag: bool = param(False)
    maybe: float | None = param(None, gt=0)
    train: Inner = field(default_factory=Inner)


def test_overrides_parse_yaml_values_and_nest():
    cfg = validate(
        apply_overrides(Outer(), ["n=32", "train.lr=1e-3", "ranks=[1,4]", "flag=true", "maybe=0.5"])
    )
    assert (cfg.n, cfg.train.lr, cfg.ranks, cfg.flag, cfg.maybe) == (32, 1e-3, (1, 4), True, 0.5)
    assert validate(apply_overrides(Outer(), ["ranks=3,5"])).ranks == (3, 5)
    assert validate(apply_overrides(Outer(), {"train": {"opt": "gd"}})).train.opt == "gd"


def test_unknown_key_lists_choices_and_suggests():
    with pytest.raises(
        ConfigError, match=r"Unknown config key 'train.lrr'.*train.lr.*Did you mean 'train.lr'"
    ):
        apply_overrides(Outer(), ["train.lrr=1"])
    with pytest.raises(ConfigError, match="Did you mean 'ranks'"):
        apply_overrides(Outer(), ["rank=1"])


@pytest.mark.parametrize(
    "assignment, message",
    [
        ("n=abc", r"The 'n' parameter must be an int. Got 'abc' instead."),
        ("n=100", r"The 'n' parameter must be an int in \[2, 64\]. Got 100 instead."),
        ("train.lr=-1", r"The 'train.lr' parameter must be a float in \(0, inf\). Got -1.0 instead."),
        ("train.opt=sgd", r"must be one of 'gd', 'adam'. Got 'sgd' instead."),
        ("flag=3", r"must be a bool"),
        ("ranks=[0]", r"The 'ranks' parameter must be an int in \[1, inf\)"),
        ("train.lr=.nan", r"finite"),
    ],
)
def test_bad_values_fail_with_expected_vs_received(assignment, message):
    with pytest.raises(ConfigError, match=message):
        validate(apply_overrides(Outer(), [assignment]))


def test_assignment_needs_equals_sign():
    with pytest.raises(ConfigError, match="key=value"):
        parse_assignment("train.lr")


def test_cross_field_checks_name_the_key():
    with pytest.raises(ConfigError, match=r"'task.r_stars'.*\[1, 16\].*Got 20"):
        validate(apply_overrides(E1Config(), ["task.r_stars=[2,20]"]))
    with pytest.raises(ConfigError, match="train.batch_size"):
        validate(TrainConfig(n_samples=0, batch_size=0))


def test_yaml_file_round_trip(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("n: 8\ntrain:\n  lr: 0.5\n")
    cfg = validate(apply_overrides(Outer(), load_yaml(path)))
    assert cfg.n == 8 and cfg.train.lr == 0.5
    assert to_dict(cfg)["train"]["lr"] == 0.5
    assert "train.opt" in keys(cfg)
    (tmp_path / "bad.yaml").write_text("[1, 2]")
    with pytest.raises(ConfigError, match="mapping"):
        load_yaml(tmp_path / "bad.yaml")
    with pytest.raises(ConfigError, match="does not exist"):
        load_yaml(tmp_path / "missing.yaml")
