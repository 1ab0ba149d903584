"""An ensemble of nanoGPT-sized causal language models with per-head factors (leading model axis).

``E`` independent models of one shape live in one module: every parameter has a leading axis of
size ``E``, and member ``e`` sees only its own parameters, data and loss (the loss is a sum over
members, AdamW is elementwise, and gradient clipping is per member in the trainer), so training
the ensemble is training ``E`` models at once — the way the engine batches its students.

Each member: token and learned absolute position embeddings, ``n_layers`` pre-LN blocks
``x ← x + Attn(LN1(x))``, ``x ← x + MLP(LN2(x))``, a final LN and an untied unembedding. Head ``h``
of layer ``l`` has ``W_Q, W_K, W_V`` ``(d_model, d_head)`` (views of the layer's fused ``W_QKV``, the
columns of all heads side by side as nanoGPT's ``c_attn``) and ``W_O`` ``(d_head, d_model)``, so its
static kernel is ``K_h = W_Q W_Kᵀ`` (rank ≤ ``d_head``); with the LN1 gain ``γ`` folded in,
``K_h = diag(γ) W_Q W_Kᵀ diag(γ)`` (:meth:`EnsembleLM.qk_factors`). Member ``e`` is initialised from
its own seed, so a member's numbers do not depend on which ensemble it was trained in.

References: Karpathy, nanoGPT ``model.py`` (init, pre-LN, GELU MLP); Elhage et al. 2021, *A
Mathematical Framework for Transformer Circuits* (QK circuit ``W_Q W_Kᵀ``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...errors import UserInputError
from ..training.token_loss import token_nll


def _ln(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-member LayerNorm of ``x (E, B, n, d)`` with gain and bias ``(E, d)``."""
    return F.layer_norm(x, x.shape[-1:]) * w[:, None, None] + b[:, None, None]


def _ln_linear(
    x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, W: torch.Tensor, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """``_ln(x, w, b) @ W + bias`` per member, ``(E, B·n, k)`` for ``x (E, B, n, d)``, ``W (E, d, k)``,
    ``bias (E, 1, k)``: the gain and bias folded into the matrix and the bias (``diag(w) W`` and
    ``b W + bias``), equal in exact arithmetic. Weight-sized work replaces two passes over the
    activations and three in the backward (measured 6-7 % of a paper-shape step)."""
    E, B, n, d = x.shape
    shift = torch.bmm(b[:, None], W) if bias is None else torch.baddbmm(bias, b[:, None], W)
    return torch.baddbmm(shift, F.layer_norm(x, (d,)).reshape(E, B * n, d), w[:, :, None] * W)


class Block(nn.Module):
    """One pre-LN transformer block for ``E`` members with explicit per-head factors."""

    def __init__(self, E: int, d_model: int, n_heads: int, d_mlp: int) -> None:
        super().__init__()
        d_head = d_model // n_heads
        P = lambda *shape: nn.Parameter(torch.zeros(E, *shape))
        self.ln1_w, self.ln1_b, self.ln2_w, self.ln2_b = P(d_model), P(d_model), P(d_model), P(d_model)
        # [W_Q | W_K | W_V] of every head side by side (nanoGPT's c_attn): one GEMM per step, no copy
        self.W_QKV, self.b_QKV = P(d_model, 3 * n_heads * d_head), P(1, 3 * n_heads * d_head)
        self.W_O, self.b_O = P(n_heads, d_head, d_model), P(d_model)
        self.W_in, self.b_in = P(d_model, d_mlp), P(d_mlp)
        self.W_out, self.b_out = P(d_mlp, d_model), P(d_model)
        self.n_heads, self.d_head = n_heads, d_head

    def _qkv_part(self, tensor: torch.Tensor, i: int) -> torch.Tensor:
        """Part ``i`` (0: Q, 1: K, 2: V) of fused columns ``(E, rows, 3·H·dk)`` as ``(E, H, rows, dk)``."""
        E, rows = tensor.shape[:2]
        return tensor.view(E, rows, 3, self.n_heads, self.d_head)[:, :, i].permute(0, 2, 1, 3)

    # Per-head views of the fused parameters (writable: they share its storage)
    W_Q = property(lambda self: self._qkv_part(self.W_QKV, 0))  # (E, H, d, dk)
    W_K = property(lambda self: self._qkv_part(self.W_QKV, 1))
    W_V = property(lambda self: self._qkv_part(self.W_QKV, 2))
    b_Q = property(lambda self: self._qkv_part(self.b_QKV, 0)[:, :, 0])  # (E, H, dk)
    b_K = property(lambda self: self._qkv_part(self.b_QKV, 1)[:, :, 0])
    b_V = property(lambda self: self._qkv_part(self.b_QKV, 2)[:, :, 0])

    def views(self, of=lambda p: p) -> list[tuple[str, torch.Tensor]]:
        """``(name, of(parameter))`` per weight and bias, the fused QKV ones split per head (``of``:
        e.g. the gradient), in the order a member draws its init."""
        fused = [(self.W_QKV, i) for i in range(3)] + [(self.b_QKV, i) for i in range(3)]
        qkv = [self._qkv_part(of(p), i) for p, i in fused]
        qkv = dict(zip("W_Q W_K W_V b_Q b_K b_V".split(), qkv[:3] + [t[:, :, 0] for t in qkv[3:]]))
        names = "ln1_w ln1_b ln2_w ln2_b W_Q W_K W_V b_Q b_K b_V W_O b_O W_in b_in W_out b_out".split()
        return [(name, qkv[name] if name in qkv else of(getattr(self, name))) for name in names]

    def qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys and values of the block's input ``x (E, B, n, d)`` through LN1, each ``(E, B,
        H, n, d_head)``: one batched matmul per member over its ``[W_Q | W_K | W_V]``."""
        E, B, n, d = x.shape
        qkv = _ln_linear(x, self.ln1_w, self.ln1_b, self.W_QKV, self.b_QKV)  # (E, B·n, 3·H·dk)
        return qkv.view(E, B, n, 3 * self.n_heads, self.d_head).transpose(2, 3).split(self.n_heads, dim=2)

    def attention(
        self, x: torch.Tensor, return_pattern: bool, patch: list[tuple[int, torch.Tensor]] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Causal attention of LN1 of the block's input ``x (E, B, n, d)``: output ``(E, B, n, d)``
        and, if asked, the pattern ``(E, B, H, n, n)`` (explicit softmax); otherwise the fused kernel
        and no pattern. ``patch = [(head, pattern (E, B, n, n)), ...]`` replaces those heads'
        patterns (an ablation of one head or of several together)."""
        E, B, n, d = x.shape
        q, k, v = self.qkv(x)  # (E, B, H, n, dk)
        pattern = None
        if return_pattern or patch is not None:
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (E, B, H, n, n)
            causal = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
            pattern = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)  # rows sum to 1
            if patch is not None:
                pattern = pattern.clone()
                for head, replacement in patch:
                    pattern[:, :, head] = replacement
            z = pattern @ v  # (E, B, H, n, dk)
        else:
            flat = lambda t: t.reshape(E * B, *t.shape[2:])  # (E·B, H, n, dk)
            z = F.scaled_dot_product_attention(flat(q), flat(k), flat(v), is_causal=True).view(q.shape)
        z = z.transpose(2, 3).reshape(E, B * n, -1)  # heads side by side: (E, B·n, H·dk)
        out = torch.baddbmm(self.b_O[:, None], z, self.W_O.reshape(E, -1, d))  # Σ_h z_h W_O[h]
        return out.view(E, B, n, d), pattern

    def forward(self, x: torch.Tensor, return_pattern: bool = False, patch=None):
        E, B, n, d = x.shape
        attn, pattern = self.attention(x, return_pattern, patch)
        x = x + attn  # (E, B, n, d)
        h = _ln_linear(x, self.ln2_w, self.ln2_b, self.W_in, self.b_in[:, None])  # (E, B·n, d_mlp)
        out = torch.baddbmm(self.b_out[:, None], F.gelu(h), self.W_out)  # (E, B·n, d)
        return x + out.view(E, B, n, d), pattern


class EnsembleLM(nn.Module):
    """``E`` causal LMs over ``vocab_size`` tokens with context ``n_ctx``, member ``e`` drawn from ``seeds[e]``.

    ``forward(idx (E, B, n))`` gives logits ``(E, B, n, vocab_size)``; with ``return_mixers=True``
    also the attention patterns ``(E, B, n_layers, n_heads, n, n)``. Init (nanoGPT): weights
    ``N(0, σ²)``, residual outputs ``N(0, (σ/√(2L))²)``, LN gains 1, biases 0, ``σ = init_std``
    (0.02, nanoGPT's; at d_model 64 it leaves the QK logits so small that content-matching
    attention — associative recall — does not form in 12k steps, while σ = 0.1 learns it:
    bench/lm_controls/RESULTS.md).
    """

    def __init__(
        self,
        vocab_size: int,
        n_ctx: int,
        seeds: list[int],
        *,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        d_mlp: int | None = None,
        init_std: float = 0.02,
        emb_std: float | None = None,
    ) -> None:
        super().__init__()
        self.init_std, self.emb_std = init_std, init_std if emb_std is None else emb_std
        if d_model % n_heads:
            raise UserInputError(
                f"The 'n_heads' parameter must divide d_model={d_model}. Got {n_heads} instead."
            )
        if not seeds:
            raise UserInputError("An ensemble needs at least one member seed.")
        E = len(seeds)
        self.vocab_size, self.n_ctx, self.n_members = vocab_size, n_ctx, E
        self.tok_emb = nn.Parameter(torch.zeros(E, vocab_size, d_model))  # W_E
        self.pos_emb = nn.Parameter(torch.zeros(E, n_ctx, d_model))  # W_pos
        self.blocks = nn.ModuleList(Block(E, d_model, n_heads, d_mlp or 4 * d_model) for _ in range(n_layers))
        self.lnf_w, self.lnf_b = nn.Parameter(torch.ones(E, d_model)), nn.Parameter(torch.zeros(E, d_model))
        self.W_U = nn.Parameter(torch.zeros(E, d_model, vocab_size))
        for e, seed in enumerate(seeds):
            self._init_member(e, torch.Generator().manual_seed(int(seed)))

    def _init_member(self, e: int, gen: torch.Generator) -> None:
        resid_std = self.init_std / math.sqrt(2 * len(self.blocks))
        with torch.no_grad():
            for name, p in self.views():
                if name in ("ln1_w", "ln2_w", "lnf_w"):
                    p[e] = 1.0
                elif p.dim() >= 3:  # a weight matrix (member axis first), or a head's bias
                    std = resid_std if name in ("W_O", "W_out") else self.init_std
                    std = self.emb_std if name in ("tok_emb", "pos_emb") else std
                    p[e] = torch.randn(p.shape[1:], generator=gen) * std

    def views(self, of=lambda p: p) -> list[tuple[str, torch.Tensor]]:
        """``(name, of(parameter))`` of every weight and bias, the fused QKV ones split per head
        (:meth:`Block.views`), in the order of a member's init draws (and of a per-parameter loop)."""
        out = [(name, of(p)) for name, p in self.named_parameters(recurse=False)]  # embeddings, LN_f, W_U
        for block in self.blocks:
            out += block.views(of)
        return out

    @property
    def n_heads(self) -> int:
        return self.blocks[0].n_heads

    def forward(self, idx: torch.Tensor, *, return_mixers: bool = False, patch=None):
        E, B, n = idx.shape
        if n > self.n_ctx:
            raise UserInputError(f"The input must have at most n_ctx={self.n_ctx} tokens. Got {n} instead.")
        members = torch.arange(E, device=idx.device)[:, None, None]
        x = self.tok_emb[members, idx] + self.pos_emb[:, None, :n]  # (E, B, n, d)
        patches = [patch] if patch is not None and isinstance(patch[0], int) else list(patch or ())
        patterns = []
        for layer, block in enumerate(self.blocks):  # each patch (layer, head, pattern (E, B, n, n))
            here = [(h, p) for at, h, p in patches if at == layer] or None
            x, pattern = block(x, return_mixers, here)
            patterns.append(pattern)
        logits = _ln_linear(x, self.lnf_w, self.lnf_b, self.W_U).view(E, B, n, -1)
        return (logits, torch.stack(patterns, dim=2)) if return_mixers else logits  # (E, B, L, H, n, n)

    def member_losses(
        self, idx: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Mean next-token cross-entropy (nats) of each member: ``(E,)``. With ``weights (E, B, n)``
        the weighted mean ``Σ w·nll / Σ w`` for members whose weights sum to > 0, the plain mean
        (bit for bit) for the others."""
        logits = self(idx)  # (E, B, n, V)
        nll = token_nll(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        plain = nll.view(idx.shape[0], -1).mean(dim=1)
        if weights is None:
            return plain
        w = weights.reshape(idx.shape[0], -1).to(nll.dtype)
        total = w.sum(dim=1)
        weighted = (nll.view(idx.shape[0], -1) * w).sum(dim=1) / total.clamp(min=1e-12)
        return torch.where(total > 0, weighted, plain)

    def qk_factors(self, *, fold_ln: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``W_Q, W_K`` of every head, float64, each ``(E, n_layers, n_heads, d_model, d_head)``;
        ``fold_ln`` multiplies row ``i`` by the LN1 gain ``γ_i`` (the kernel seen by the normalised input)."""
        W_Q = torch.stack([b.W_Q.detach() for b in self.blocks], dim=1).double()  # (E, L, H, d, dk)
        W_K = torch.stack([b.W_K.detach() for b in self.blocks], dim=1).double()
        if fold_ln:
            gain = torch.stack([b.ln1_w.detach() for b in self.blocks], dim=1).double()  # (E, L, d)
            W_Q, W_K = W_Q * gain[:, :, None, :, None], W_K * gain[:, :, None, :, None]
        return W_Q.cpu().numpy(), W_K.cpu().numpy()
