"""A nanoGPT-sized causal language model with per-head factors in TransformerLens notation.

Token and learned absolute position embeddings, ``n_layers`` pre-LN blocks
``x ← x + Attn(LN1(x))``, ``x ← x + MLP(LN2(x))``, a final LN and an untied unembedding. Head ``h``
of a layer has ``W_Q[h], W_K[h], W_V[h]`` of shape ``(d_model, d_head)`` and ``W_O[h]``
``(d_head, d_model)``, so its static kernel is ``K_h = W_Q[h] W_K[h]ᵀ`` (``d_model × d_model``, rank
``≤ d_head``), measured from the factors (:meth:`CausalLM.qk_factors`). The attention pattern is a
plain masked softmax so the realised mixers can be returned (``return_mixers=True``).

References: Karpathy, nanoGPT ``model.py`` (init, pre-LN, GELU MLP); Elhage et al. 2021, *A
Mathematical Framework for Transformer Circuits* (QK circuit ``W_Q W_Kᵀ``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import UserInputError


class Block(nn.Module):
    """One pre-LN transformer block with explicit per-head factors."""

    def __init__(self, d_model: int, n_heads: int, d_mlp: int) -> None:
        super().__init__()
        d_head = d_model // n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.W_Q = nn.Parameter(torch.empty(n_heads, d_model, d_head))
        self.W_K = nn.Parameter(torch.empty(n_heads, d_model, d_head))
        self.W_V = nn.Parameter(torch.empty(n_heads, d_model, d_head))
        self.W_O = nn.Parameter(torch.empty(n_heads, d_head, d_model))
        self.b_Q, self.b_K, self.b_V = (nn.Parameter(torch.zeros(n_heads, d_head)) for _ in range(3))
        self.b_O = nn.Parameter(torch.zeros(d_model))
        self.W_in, self.b_in = nn.Parameter(torch.empty(d_model, d_mlp)), nn.Parameter(torch.zeros(d_mlp))
        self.W_out, self.b_out = nn.Parameter(torch.empty(d_mlp, d_model)), nn.Parameter(torch.zeros(d_model))

    def attention(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Causal multi-head attention of ``x (B, n, d_model)``: output and pattern ``(B, H, n, n)``."""
        n, d_head = x.shape[1], self.W_Q.shape[-1]
        q = torch.einsum("bnd,hde->bhne", x, self.W_Q) + self.b_Q[:, None]  # (B, H, n, d_head)
        k = torch.einsum("bnd,hde->bhne", x, self.W_K) + self.b_K[:, None]  # (B, H, n, d_head)
        v = torch.einsum("bnd,hde->bhne", x, self.W_V) + self.b_V[:, None]  # (B, H, n, d_head)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d_head)  # (B, H, n, n)
        causal = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        pattern = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)  # (B, H, n, n), rows sum to 1
        z = pattern @ v  # (B, H, n, d_head)
        return torch.einsum("bhne,hed->bnd", z, self.W_O) + self.b_O, pattern  # (B, n, d_model)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        attn, pattern = self.attention(self.ln1(x))
        x = x + attn  # (B, n, d_model)
        x = x + F.gelu(self.ln2(x) @ self.W_in + self.b_in) @ self.W_out + self.b_out
        return x, pattern


class CausalLM(nn.Module):
    """Causal LM over ``vocab_size`` tokens with context ``n_ctx``.

    ``forward(idx (B, n))`` gives logits ``(B, n, vocab_size)``; with ``return_mixers=True`` also the
    attention patterns ``(B, n_layers, n_heads, n, n)``. Weights are drawn from ``seed``
    (``N(0, 0.02²)``, residual outputs ``N(0, (0.02/√(2L))²)``, nanoGPT's init), biases zero.
    """

    def __init__(
        self,
        vocab_size: int,
        n_ctx: int,
        *,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        d_mlp: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if d_model % n_heads:
            raise UserInputError(
                f"The 'n_heads' parameter must divide d_model={d_model}. Got {n_heads} instead."
            )
        self.vocab_size, self.n_ctx = vocab_size, n_ctx
        self.tok_emb = nn.Parameter(torch.empty(vocab_size, d_model))  # W_E
        self.pos_emb = nn.Parameter(torch.empty(n_ctx, d_model))  # W_pos
        self.blocks = nn.ModuleList(Block(d_model, n_heads, d_mlp or 4 * d_model) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.W_U = nn.Parameter(torch.empty(d_model, vocab_size))
        self._init(torch.Generator().manual_seed(int(seed)))

    def _init(self, gen: torch.Generator) -> None:
        resid_std = 0.02 / math.sqrt(2 * len(self.blocks))
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() >= 2:
                    std = resid_std if name.endswith(("W_O", "W_out")) else 0.02
                    p.copy_(torch.randn(p.shape, generator=gen) * std)

    @property
    def n_heads(self) -> int:
        return self.blocks[0].W_Q.shape[0]

    def forward(self, idx: torch.Tensor, *, return_mixers: bool = False):
        n = idx.shape[1]
        if n > self.n_ctx:
            raise UserInputError(f"The input must have at most n_ctx={self.n_ctx} tokens. Got {n} instead.")
        x = self.tok_emb[idx] + self.pos_emb[:n]  # (B, n, d_model)
        patterns = []
        for block in self.blocks:
            x, pattern = block(x)
            patterns.append(pattern)
        logits = self.ln_f(x) @ self.W_U  # (B, n, vocab_size)
        return (logits, torch.stack(patterns, dim=1)) if return_mixers else logits  # mixers (B, L, H, n, n)

    def loss(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy in nats."""
        logits = self(idx)  # (B, n, V)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def qk_factors(self) -> tuple[np.ndarray, np.ndarray]:
        """``W_Q, W_K`` of every head as float64: each ``(n_layers, n_heads, d_model, d_head)``."""
        W_Q = torch.stack([b.W_Q.detach() for b in self.blocks]).double().cpu().numpy()
        W_K = torch.stack([b.W_K.detach() for b in self.blocks]).double().cpu().numpy()
        return W_Q, W_K
