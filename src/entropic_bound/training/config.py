"""Training settings shared by every experiment."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import param
from ..errors import ConfigError


@dataclass(frozen=True)
class TrainConfig:
    """How an ensemble is trained.

    ``n_samples = 0`` trains on fresh minibatches drawn from the teacher every step (population
    training); otherwise on one fixed data set of ``n_samples`` sequences, full-batch when
    ``batch_size = 0``. A model stops early when its loss improved by less than a fraction
    ``early_stop_tol`` over the last ``patience`` steps (0 disables early stopping). A model whose
    loss turns non-finite or exceeds ``divergence_factor`` × its initial loss is recorded as
    diverged at that step and frozen.
    """

    optimizer: str = param("adam", choices=("gd", "adam"), doc="plain full-batch GD or Adam")
    lr: float = param(1e-2, gt=0.0)
    lr_final: float | None = param(None, gt=0.0, doc="cosine decay from lr to lr_final; null keeps lr")
    steps: int = param(500, ge=1, le=10_000_000)
    n_samples: int = param(128, ge=0, le=10_000_000, doc="fixed data set size; 0 = fresh batches")
    batch_size: int = param(0, ge=0, le=10_000_000, doc="minibatch size; 0 = full batch")
    early_stop_tol: float = param(0.0, ge=0.0, lt=1.0)
    patience: int = param(100, ge=1)
    divergence_factor: float = param(1e6, gt=1.0)
    checkpoints: int = param(16, ge=0, le=1000, doc="log-spaced steps at which spectra are recorded")
    dtype: str = param("float64", choices=("float32", "float64"))

    def check(self) -> None:
        if self.n_samples == 0 and self.batch_size == 0:
            raise ConfigError(
                "The 'train.batch_size' parameter must be an int >= 1 when train.n_samples = 0 "
                "(fresh batches). Got 0 instead."
            )
        if self.n_samples and self.batch_size > self.n_samples:
            raise ConfigError(
                f"The 'train.batch_size' parameter must be an int in [0, {self.n_samples}] "
                f"(train.n_samples). Got {self.batch_size} instead."
            )
