"""AdamW over an ensemble's parameters kept in flat member-major buffers, and member chunks.

An :class:`~entropic_bound.language_models.model.ensemble.EnsembleLM` has a few dozen small parameters; a per-parameter
AdamW launches ~10 kernels for each. Here every parameter of one weight-decay group is re-homed as a
view of one buffer ``(E, P)`` (member ``e``'s numbers in row ``e``), and its gradient as a view of a
matching gradient buffer, so autograd accumulates straight into the flat gradient, zeroing is one
fill and ``torch.optim.AdamW`` updates two tensors. :meth:`FlatAdamW.member_chunks` views runs of
consecutive members as smaller ensembles over the same buffers, so a step can run forward and
backward chunk by chunk with its activations in cache.

The buffers and the chunks change no number: AdamW is elementwise, the per-member clipping norm
is still summed parameter by parameter in the model's order, and members are independent. The
update is torch's fused AdamW, which rounds differently from its for-loop one in the last bit: a
training this small is chaotic at float32 round-off, so that moves held-out losses by as much as
any other round-off does (``bench/lm_roundoff_spread.py`` measures how much), and no further.

The module keeps its parameters (names, shapes, values): probes and evaluation read them as
before. Build the optimizer after the model is on its device (``.to`` would copy the parameters
out of the buffers).
"""

from __future__ import annotations

import copy
import math
import warnings

import torch
from torch import nn

from ..model.ensemble import EnsembleLM


def weight_decay_groups(model: nn.Module) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
    """Decayed (weight matrices, embeddings and the heads' QKV biases: a member axis and at least two
    more) and undecayed parameters (gains and the other biases)."""
    decay = [p for p in model.parameters() if p.dim() >= 3]
    return decay, [p for p in model.parameters() if p.dim() < 3]


#: Most bytes of one member chunk's MLP activations (members × tokens × d_mlp floats). Measured on
#: one thread: paper's 14 members at d_model 64 (1 MiB each at batch 32) step 7-14 % faster as two
#: chunks of 7 than as one, and slower again in 4 or more; quick's shapes stay one chunk (2 chunks
#: of its 8 members at d_model 32 measured within noise).
CHUNK_BYTES = 8 * 2**20


def _adamw(groups: list[dict], lr: float, betas) -> torch.optim.AdamW:
    """``torch.optim.AdamW`` fused: one pass over each buffer instead of ~10 (a paper-shape step's
    update 14 -> 3 ms on one thread); it rounds differently from the for-loop AdamW in the last bit.
    torch < 2.4 fuses only on CUDA: there the foreach AdamW (the for-loop's numbers)."""
    try:
        return torch.optim.AdamW(groups, lr=lr, betas=betas, fused=True)
    except RuntimeError:
        return torch.optim.AdamW(groups, lr=lr, betas=betas, foreach=True)


class FlatBuffer:
    """``params`` (each ``(E, ...)``) re-homed as views of one leaf buffer ``(E, P)`` whose ``grad``
    is a flat gradient buffer the parameters' own ``.grad`` views point into."""

    def __init__(self, params: list[nn.Parameter]) -> None:
        first = params[0]
        sizes = [p[0].numel() for p in params]
        self.data = torch.empty(first.shape[0], sum(sizes), dtype=first.dtype, device=first.device)
        self.data.grad = torch.zeros_like(self.data)
        self.pairs, offset = [], 0
        with torch.no_grad():
            for p, size in zip(params, sizes):
                view = self.data[:, offset : offset + size].view(p.shape)
                view.copy_(p)
                p.data = view
                self.pairs.append((p, self.data.grad[:, offset : offset + size].view(p.shape)))
                offset += size
        self.attach_grads()

    def attach_grads(self) -> None:
        """Point every parameter's ``.grad`` at its slice of the flat gradient (again, if anything
        replaced it), so backward accumulates into the buffer."""
        for p, grad in self.pairs:
            if p.grad is not grad:
                p.grad = grad


class FlatAdamW:
    """``torch.optim.AdamW`` on an ensemble's two weight-decay groups, each one :class:`FlatBuffer`.

    ``param_groups`` is AdamW's (the trainer sets ``lr`` there); :meth:`zero_grad`, then backward,
    then :meth:`clip_per_member` and :meth:`step`."""

    def __init__(self, model: EnsembleLM, lr: float, weight_decay: float, betas=(0.9, 0.99)) -> None:
        decay, no_decay = weight_decay_groups(model)
        self.buffers = [FlatBuffer(params) for params in (decay, no_decay) if params]
        wds = [wd for wd, params in ((weight_decay, decay), (0.0, no_decay)) if params]
        groups = [{"params": [b.data], "weight_decay": wd} for b, wd in zip(self.buffers, wds)]
        self.adamw = _adamw(groups, lr, betas)
        self.param_groups = self.adamw.param_groups
        self.norm_terms = [g for _, g in model.views(lambda p: p.grad)]  # views of the flat gradients
        self.model, self._chunks = model, (1, [(slice(0, model.n_members), model)])

    def zero_grad(self) -> None:
        for buffer in self.buffers:
            buffer.data.grad.zero_()
            buffer.attach_grads()
        for rows, sub in self._chunks[1]:
            if sub is not self.model:
                for p, full in zip(sub.parameters(), self.model.parameters()):
                    if p.grad is None or p.grad.data_ptr() != full.grad[rows].data_ptr():
                        p.grad = full.grad[rows]

    def member_chunks(self, tokens: int) -> list[tuple[slice, EnsembleLM]]:
        """The ensemble as a few smaller ensembles of consecutive members (``(rows, model)``, balanced
        sizes) over the same buffers, so one chunk's activations for ``tokens`` tokens per member stay
        within :data:`CHUNK_BYTES`: members are independent, so chunking changes no number."""
        E, d_mlp = self.model.n_members, self.model.blocks[0].W_in.shape[-1]
        count = min(E, math.ceil(E * tokens * d_mlp * self.buffers[0].data.element_size() / CHUNK_BYTES))
        if count != self._chunks[0]:
            bounds = [round(i * E / count) for i in range(count + 1)]
            self._chunks = (
                count,
                [(slice(a, b), self._rows(slice(a, b))) for a, b in zip(bounds, bounds[1:])],
            )
        return self._chunks[1]

    def _rows(self, rows: slice) -> EnsembleLM:
        """Members ``rows`` as an ensemble whose parameters and gradients are views of this one's."""
        if rows == slice(0, self.model.n_members):
            return self.model
        sub = copy.deepcopy(self.model)
        sub.n_members = rows.stop - rows.start
        for p, full in zip(sub.parameters(), self.model.parameters()):
            p.data, p.grad = full.data[rows], full.grad[rows]
        return sub

    def backward(self, loss: torch.Tensor) -> None:
        """``loss.backward()`` into the flat gradients. Autograd warns that a parameter slice of a
        wider buffer is not dense (its in-place accumulation is what is wanted here): silenced."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="grad and param do not obey the gradient layout")
            loss.backward()

    def clip_per_member(self, max_norm: float) -> None:
        """Scale member ``e``'s gradient so that its global norm is at most ``max_norm``. The squared
        norm is summed parameter by parameter in the model's order (:meth:`EnsembleLM.views` of the
        gradients), so the scale is a per-parameter loop's to the last bit."""
        sq = sum(g.pow(2).flatten(1).sum(dim=1) for g in self.norm_terms)  # (E,)
        scale = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
        for buffer in self.buffers:
            buffer.data.grad.mul_(scale[:, None])

    def step(self) -> None:
        self.adamw.step()
