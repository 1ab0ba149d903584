"""E5's typed config: the attention teachers, sample counts and init scales, the thresholds of C7 and C8, and the scale settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...config import param
from ...errors import ConfigError
from ...spectra.names import panel_keys
from ...training.config import TrainConfig
from ..framework.draws import Drawn
from ..science.attention_task import AttentionTask
from ..science.names import LARGE_INIT_MIN, SMALL_INIT_MAX

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class E5Verdict:
    """The thresholds of C7 and C8."""

    small_init_max: float = param(
        SMALL_INIT_MAX, gt=0.0, doc="init scales up to this count as small (shared with C3)"
    )
    large_init_min: float = param(
        LARGE_INIT_MIN, gt=0.0, doc="init scales from this count as large (shared with C3)"
    )
    c7_contrast: float = param(
        0.0,
        ge=0.0,
        le=1.0,
        doc="C7: the boundary of the small-minus-large recovery contrast, N·n < d (interval above: confirmed, "
        "at or below: refuted); 0 because the paper states a direction, no minimum effect",
    )
    c7_fit: float = param(2.0, gt=0.0, doc="C7: learned when final train loss <= c7_fit·max(sigma², 1e-4)")
    c7_estimator: str | None = param(
        None,
        choices=panel_keys,
        doc="None: the estimator the stated rule picks on the ground truth (stats.estimator_choice); "
        "a key overrides it and marks the verdict non-standard",
    )
    c7_tolerance: float = param(
        0.5,
        ge=0.0,
        doc="C7: |estimate - r*| <= tolerance is a recovery; min-norm rank > r* + tolerance leaves room",
    )
    c7_rate: float = param(0.9, gt=0.0, le=1.0, doc="C7: required recovery rate of small init (identified N)")
    c8_margin: float = param(
        0.1, ge=0.0, doc="unused: C8 is decided in E6 (kept so stored configs still read)"
    )


@dataclass(frozen=True)
class E5Config(Drawn):
    task: AttentionTask = field(default_factory=AttentionTask)
    v_settings: tuple[str, ...] = param(("known",), choices=("known", "learned"))
    init_scales: tuple[float, ...] = param((1e-3, 1e-2, 1e-1), gt=0.0)
    seeds: int = param(1, ge=1, le=10_000)
    n_test: int = param(1024, ge=1, le=1_000_000, doc="held-out samples for the excess risk")
    n_mixer: int = param(128, ge=1, le=100_000, doc="held-out inputs for the realised-mixer ranks")
    c7_sample_counts: tuple[int, ...] = param(
        (1,), ge=1, doc="C7 contrast: further data set sizes N; N·n < d leaves K under-identified"
    )
    c7_lr: float = param(1.0, gt=0.0, doc="C7 contrast runs: GD learning rate (lr 10 diverges at N = 1)")
    c7_steps: int = param(
        1000, ge=1, doc="C7 contrast runs: GD steps (they fit their data to the noise floor)"
    )
    verdict: E5Verdict = field(default_factory=E5Verdict)
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(
            optimizer="gd", lr=10.0, steps=300, n_samples=256, checkpoints=12, dtype="float32"
        )
    )

    def check(self) -> None:
        if not self.v_settings or not self.init_scales:
            raise ConfigError(
                "The 'v_settings' and 'init_scales' parameters must be non-empty. Got () instead."
            )
        if self.train.n_samples == 0:
            raise ConfigError(
                "The 'train.n_samples' parameter must be an int >= 1 for E5 (a fixed data set). Got 0 instead."
            )


ENERGY = "energy_effective_rank"


def _panel_keys() -> list[str]:
    """The panel's keys in report order; importing the panel imports the estimators (torch), which
    this module must not do when it is imported (the command line's ``--set`` check reads it)."""
    from ...spectra.panel import ESTIMATOR_KEYS

    return list(ESTIMATOR_KEYS)


def __getattr__(name: str):
    if name == "KEYS":  # the panel's keys, the estimate columns' suffixes
        return _panel_keys()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def estimator_columns(table: pd.DataFrame) -> list[str]:
    """Kernel, then mixer, then mean-mixer estimate columns present in ``table``."""
    keys = _panel_keys()
    return [f"{p}_{k}" for p in ("K", "mixer", "meanmixer") for k in keys if f"{p}_{k}" in table.columns]


#: The fields that differ from the defaults at each scale (``Experiment.default_config``).
SCALE_SETTINGS = {
    "quick": {},
    "paper": {
        "task": AttentionTask(r_stars=(1, 2, 4, 8, 16)),
        "seeds": 3,
        "init_scales": (1e-4, 1e-3, 1e-2, 1e-1),
        "n_test": 2048,
        "n_mixer": 256,
        "train": TrainConfig(
            optimizer="gd", lr=10.0, steps=300, n_samples=256, checkpoints=16, dtype="float32"
        ),
    },
}


#: A tiny grid for the tests that run every experiment (smoke, golden numbers): seconds, every
#: claim decided.
TINY_SETTINGS = {
    "task.n": 6,
    "task.d": 8,
    "task.r_stars": (2,),
    "task.spectra": ("flat",),
    "init_scales": (0.001,),
    "c7_sample_counts": (),
    "n_test": 64,
    "n_mixer": 8,
    "train.n_samples": 32,
    "train.steps": 20,
    "train.checkpoints": 3,
}
