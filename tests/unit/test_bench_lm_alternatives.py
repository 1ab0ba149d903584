"""``bench/lm_step_alternatives.py``: each replaced side computes something else, and only while it steps."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import lm_step_alternatives as alt  # noqa: E402

from entropic_bound.language_models.model.ensemble import EnsembleLM  # noqa: E402


def _loss_of(replaced: dict) -> torch.Tensor:
    """Members' losses of one batch; weights of std 1 put GELU's inputs where its tanh form differs."""
    model = EnsembleLM(256, 8, [0, 1], d_model=16, n_heads=2, init_std=1.0, emb_std=1.0)
    x, y = torch.randint(0, 256, (2, 2, 4, 8), generator=torch.Generator().manual_seed(0))
    seen = {}
    alt.stepping(lambda x, y: seen.update(loss=model.member_losses(x, y).detach()), replaced)(x, y)
    return seen["loss"]


@pytest.mark.parametrize("side", [s for s in alt.REPLACED if s != "as_trained"])
def test_a_replaced_side_computes_another_step_and_restores_the_functions(side):
    functions = {name: getattr(F, name) for name in ("gelu", "layer_norm", "scaled_dot_product_attention")}
    assert not torch.allclose(_loss_of(alt.REPLACED[side]), _loss_of({}), rtol=1e-6, atol=0.0)  # > round-off
    assert {name: getattr(F, name) for name in functions} == functions
