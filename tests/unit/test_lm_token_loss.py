"""The next-token loss with the one-pass backward against ``F.cross_entropy``."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from entropic_bound.language_models.training.token_loss import token_nll


def test_token_nll_is_cross_entropys_loss_bit_for_bit_and_its_gradient_to_round_off():
    gen = torch.Generator().manual_seed(0)
    logits = (torch.randn(300, 41, generator=gen) * 3).requires_grad_()
    targets = torch.randint(0, 41, (300,), generator=gen)
    weights = torch.rand(300, generator=gen)
    want = F.cross_entropy(logits, targets, reduction="none")
    (want_grad,) = torch.autograd.grad((want * weights).sum(), logits)
    got = token_nll(logits, targets)
    (got_grad,) = torch.autograd.grad((got * weights).sum(), logits)
    assert torch.equal(got, want)
    torch.testing.assert_close(got_grad, want_grad, rtol=1e-5, atol=1e-7)
    assert not torch.equal(got_grad, torch.zeros_like(got_grad))
