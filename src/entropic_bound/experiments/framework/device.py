"""Training an ensemble on the experiment's device (``--device cuda``) by the code path the CPU runs.

Teachers, data and initial parameters are drawn on the CPU from CPU generators, so a run draws the
same numbers on every device (its id does not name the device). :func:`train_on` moves the
ensemble and its data to the device, trains, and moves the ensemble back before anything is
measured: every metric is computed on the CPU, from float64 copies, as before. On the CPU every
move is a no-op (``Tensor.to`` returns the tensor itself), so the CPU tests run this same path.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from ...training import FixedData, FreshData, MomentData, TrainConfig, TrainOutcome, train_ensemble
from ...training.trainer import per_model_loss


@dataclass
class MovedBatches:
    """A fresh-batch source drawn on the CPU (its generator's device) and moved to ``device``."""

    source: FreshData
    device: torch.device

    def loss(self, model, step: int) -> torch.Tensor:
        X, Y = self.source.batch(step)
        return per_model_loss(model, X.to(self.device), Y.to(self.device))


def to_device(data, device: str | torch.device):
    """``data`` (fixed, fresh or moment data) as seen from ``device``; unchanged tensors on the CPU."""
    device = torch.device(device)
    if isinstance(data, FixedData):  # minibatch indices stay on the CPU generator; indexing moves them
        return replace(data, X=data.X.to(device), Y=data.Y.to(device))
    if isinstance(data, MomentData):
        m = data.moments
        return MomentData(replace(m, T=m.T.to(device), W=m.W.to(device), yy=m.yy.to(device)))
    if isinstance(data, FreshData):
        return MovedBatches(data, device)
    raise TypeError(f"to_device: no rule to move {type(data).__name__} to {device}.")


def train_on(device: str, model, data, cfg: TrainConfig, **kwargs) -> TrainOutcome:
    """:func:`~entropic_bound.training.train_ensemble` on ``device`` (``kwargs`` such as ``on_step``
    passed on); ``model`` is back on the CPU when this returns (or raises)."""
    model.to(device)
    try:
        return train_ensemble(model, to_device(data, device), cfg, **kwargs)
    finally:
        model.to("cpu")
