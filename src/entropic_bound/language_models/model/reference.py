"""One member of an :class:`~entropic_bound.language_models.model.ensemble.EnsembleLM` as a plain nanoGPT module.

The yardstick of the ensemble step (``bench/bench_lm_step.py``) and its check
(``tests/unit/test_lm_reference.py``): what a PyTorch user writes to train one such model —
nanoGPT's ``GPT`` (fused ``c_attn``, SDPA, pre-LN blocks, GELU MLP, untied ``lm_head``), one
``torch.optim.AdamW`` with the ensemble's weight-decay groups, ``clip_grad_norm_``. Built from member
``e`` of an ensemble (:meth:`ReferenceLM.from_member`), it computes the same function as that member,
and :func:`member_state` reads a member's numbers in this module's names, to compare the two.

Reference: Karpathy, nanoGPT ``model.py``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .ensemble import EnsembleLM


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.c_attn = nn.Linear(d_model, 3 * d_model)  # [W_Q | W_K | W_V], heads side by side
        self.c_proj = nn.Linear(d_model, d_model)  # W_O
        self.n_heads = n_heads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, n, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)  # (B, n, d) each
        q, k, v = (t.view(B, n, self.n_heads, d // self.n_heads).transpose(1, 2) for t in (q, k, v))
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, n, dk)
        return self.c_proj(z.transpose(1, 2).reshape(B, n, d))


class MLP(nn.Module):
    def __init__(self, d_model: int, d_mlp: int) -> None:
        super().__init__()
        self.c_fc, self.c_proj = nn.Linear(d_model, d_mlp), nn.Linear(d_mlp, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_mlp: int) -> None:
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(d_model), CausalSelfAttention(d_model, n_heads)
        self.ln_2, self.mlp = nn.LayerNorm(d_model), MLP(d_model, d_mlp)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class ReferenceLM(nn.Module):
    """nanoGPT's ``GPT`` without dropout or weight tying: ``forward(idx (B, n))`` → logits ``(B, n, V)``."""

    def __init__(
        self, vocab_size: int, n_ctx: int, d_model: int, n_layers: int, n_heads: int, d_mlp: int
    ) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab_size, d_model), nn.Embedding(n_ctx, d_model)
        self.h = nn.ModuleList(Block(d_model, n_heads, d_mlp) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))  # (B, n, d)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))

    @classmethod
    def from_member(cls, model: EnsembleLM, e: int) -> ReferenceLM:
        """A module holding a copy of member ``e``'s weights."""
        blk = model.blocks[0]
        d_model, d_mlp = blk.W_in.shape[1:]
        ref = cls(model.vocab_size, model.n_ctx, d_model, len(model.blocks), model.n_heads, d_mlp)
        ref = ref.to(dtype=blk.W_in.dtype, device=blk.W_in.device)
        state = member_state(model, e)
        with torch.no_grad():
            for name, p in ref.named_parameters():
                p.copy_(state[name])
        return ref


def member_state(model: EnsembleLM, e: int) -> dict[str, torch.Tensor]:
    """Member ``e``'s parameters under :class:`ReferenceLM`'s names and in its layouts (``nn.Linear``
    keeps ``(out, in)``)."""
    out = {"wte.weight": model.tok_emb[e], "wpe.weight": model.pos_emb[e]}
    for i, b in enumerate(model.blocks):
        out |= {
            f"h.{i}.ln_1.weight": b.ln1_w[e],
            f"h.{i}.ln_1.bias": b.ln1_b[e],
            f"h.{i}.attn.c_attn.weight": b.W_QKV[e].T,
            f"h.{i}.attn.c_attn.bias": b.b_QKV[e, 0],
            f"h.{i}.attn.c_proj.weight": b.W_O[e].reshape(-1, b.W_O.shape[-1]).T,
            f"h.{i}.attn.c_proj.bias": b.b_O[e],
            f"h.{i}.ln_2.weight": b.ln2_w[e],
            f"h.{i}.ln_2.bias": b.ln2_b[e],
            f"h.{i}.mlp.c_fc.weight": b.W_in[e].T,
            f"h.{i}.mlp.c_fc.bias": b.b_in[e],
            f"h.{i}.mlp.c_proj.weight": b.W_out[e].T,
            f"h.{i}.mlp.c_proj.bias": b.b_out[e],
        }
    return out | {
        "ln_f.weight": model.lnf_w[e],
        "ln_f.bias": model.lnf_b[e],
        "lm_head.weight": model.W_U[e].T,
    }


def reference_optimizer(ref: ReferenceLM, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with the ensemble's groups: every matrix, the embeddings and ``c_attn``'s bias decayed."""
    decayed = lambda name, p: p.dim() == 2 or name.endswith("c_attn.bias")
    decay = [p for n, p in ref.named_parameters() if decayed(n, p)]
    no_decay = [p for n, p in ref.named_parameters() if not decayed(n, p)]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99))


def reference_step(
    ref: ReferenceLM, opt, idx: torch.Tensor, targets: torch.Tensor, clip: float
) -> torch.Tensor:
    """One AdamW step of the module on its mean next-token cross-entropy (nats); the loss."""
    logits = ref(idx)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(ref.parameters(), clip)
    opt.step()
    return loss.detach()
