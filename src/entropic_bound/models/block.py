"""B3, a pre-LN transformer block with a linear readout."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from ..errors import UserInputError
from ..validation import check_choice, check_positive_int
from ._attention import QKEnsemble, general_logits, general_mix
from .base import MemberSpec, PlotStyle
from .reference import TransformerBlock
from .softmax_attention import TEMPERATURES, row_softmax, temperatures


def layer_norm(X: Tensor, gain: Tensor, bias: Tensor, eps: float = 1e-5) -> Tensor:
    """LayerNorm over features with per-model affine: ``X (M, B, n, d)``, ``gain, bias (M, d)``."""
    Xn = torch.nn.functional.layer_norm(X, X.shape[-1:], eps=eps)
    return Xn * gain[:, None, None] + bias[:, None, None]


class TransformerBlockEnsemble(QKEnsemble):
    """``M`` pre-LN blocks with a linear readout::

        H = X + (1/h) Σ_h softmax(X̂ K_h X̂ᵀ / τ) X̂ W_V,   X̂ = LN_1(X)
        Z = H + GELU(LN_2(H) W_1 + b_1) W_2 + b_2
        f(X) = Z W_out

    ``W_V (M, d, d)`` (value and output projection in one) is the ``V`` the base class learns,
    starting iid ``N(0, v_init_scale²/d)``; ``W_1 (M, d, f)``, ``W_2 (M, f, d)`` start iid
    ``N(0, 1/d)`` and ``N(0, 1/f)``, biases 0, LayerNorm gains 1 and biases 0; ``W_out (M, d, d_v)``
    starts iid ``N(0, 1/d)``. With ``V_known`` (``(d, d_v)``) the readout is fixed to ``W_out = V*``
    (the block must learn everything else). ``f = ffn_width`` (default ``4d``). No positional option.
    """

    rung = "B3"
    ladder_step = 3
    plot_style = PlotStyle(colour="#009E73", marker="D", offset=2**0.12)
    supports_positional = False
    accepts = (*QKEnsemble.accepts, "ffn_width", "temperature")

    def __init__(
        self,
        members: Sequence[MemberSpec],
        *,
        d: int,
        d_v: int,
        V_known: Tensor | None = None,
        ffn_width: int | None = None,
        temperature: str = "sqrt_d",
        **kwargs,
    ) -> None:
        check_choice("temperature", temperature, TEMPERATURES)
        ffn_width = 4 * d if ffn_width is None else ffn_width
        check_positive_int("ffn_width", ffn_width)
        check_positive_int("d_v", d_v)
        if V_known is not None and tuple(V_known.shape) != (d, d_v):
            raise UserInputError(
                f"The 'V_known' matrix must have shape ({d}, {d_v}). Got {tuple(V_known.shape)} instead."
            )
        # the attention's value map W_V is d×d and always learned; a known V* becomes the readout
        super().__init__(
            members,
            d=d,
            d_v=d,
            V_known=None,
            ffn_width=ffn_width,
            readout_dim=d_v if V_known is None else None,
            **kwargs,
        )
        self.d_v, self.ffn_width = d_v, ffn_width
        if V_known is None:
            self.register_buffer("W_out_fixed", None)
        else:
            self.W_out = None
            self.register_buffer("W_out_fixed", V_known.detach().to(self.W_Q))  # (d, d_v)
        self.register_buffer("tau", temperatures(members, d, temperature).to(self.W_Q))  # (M,)

    def _init_extra(self, g: torch.Generator, extra: dict) -> dict[str, Tensor]:
        d, f, d_out = self.d, extra["ffn_width"], extra["readout_dim"]
        out = {
            "ln1_gain": torch.ones(d),
            "ln1_bias": torch.zeros(d),
            "ln2_gain": torch.ones(d),
            "ln2_bias": torch.zeros(d),
            "W_1": torch.randn(d, f, generator=g, dtype=torch.float64) / math.sqrt(d),
            "b_1": torch.zeros(f),
            "W_2": torch.randn(f, d, generator=g, dtype=torch.float64) / math.sqrt(f),
            "b_2": torch.zeros(d),
        }
        if d_out is not None:
            out["W_out"] = torch.randn(d, d_out, generator=g, dtype=torch.float64) / math.sqrt(d)
        return out

    def head_mixers(self, S: Tensor, model_axis: int) -> Tensor:
        return row_softmax(S, self.tau, model_axis)

    def readout(self) -> Tensor:
        return self.W_out if self.W_out is not None else self.W_out_fixed

    def query_inputs(self, X: Tensor) -> Tensor:
        return layer_norm(self.expand_inputs(X, self.n_models), self.ln1_gain, self.ln1_bias)

    def forward(self, X: Tensor) -> Tensor:
        """``X (B, n, d)`` shared or ``(M, B, n, d)`` → ``(M, B, n, d_v)``."""
        X = self.expand_inputs(X, self.n_models)  # (M, B, n, d)
        Xh = self.query_inputs(X)
        A = self.head_mixers(general_logits(Xh, self.kernel()), model_axis=0).mean(2)  # (M, B, n, n)
        H = X + general_mix(A, Xh, self.V)  # (M, B, n, d)
        Hn = layer_norm(H, self.ln2_gain, self.ln2_bias)
        M, B, n, d = H.shape
        hidden = torch.nn.functional.gelu(torch.baddbmm(self.b_1[:, None], Hn.reshape(M, B * n, d), self.W_1))
        Z = H + torch.baddbmm(self.b_2[:, None], hidden, self.W_2).view(M, B, n, d)
        return (Z.reshape(M, B * n, d) @ self.readout()).view(M, B, n, -1)

    @classmethod
    def parameter_count(
        cls, *, n: int, d: int, d_v: int, rank: int, n_heads: int = 1, ffn_width: int | None = None, **options
    ) -> int:
        f = 4 * d if ffn_width is None else ffn_width
        return (
            2 * n_heads * d * rank + d * d + 2 * d * f + f + d + 4 * d + d * d_v
        )  # QK, W_V, FFN, norms, W_out

    @classmethod
    def activation_count(
        cls, *, n: int, d: int, d_v: int, n_heads: int = 1, ffn_width: int | None = None, **options
    ) -> int:
        f = 4 * d if ffn_width is None else ffn_width
        attention = super().activation_count(n=n, d=d, d_v=d, n_heads=n_heads)
        return attention + 2 * (6 * n * d + 2 * n * f + n * d_v)  # norms, residuals, FFN, readout

    def reference_member(self, m: int) -> TransformerBlock:
        W_Q, W_K, _, _, _ = self._reference_parts(m)
        learn_out = self.W_out is not None
        return TransformerBlock(
            W_Q,
            W_K,
            self.V[m].detach(),
            self.readout()[m if learn_out else ...].detach(),
            tau=float(self.tau[m]),
            W_1=self.W_1[m].detach(),
            b_1=self.b_1[m].detach(),
            W_2=self.W_2[m].detach(),
            b_2=self.b_2[m].detach(),
            ln1=(self.ln1_gain[m].detach(), self.ln1_bias[m].detach()),
            ln2=(self.ln2_gain[m].detach(), self.ln2_bias[m].detach()),
            learn_out=learn_out,
        )

    def operators(self) -> dict[str, Tensor]:
        ops = super().operators()
        W_out = self.readout()
        ops["W_out"] = (W_out if W_out.dim() == 3 else W_out.expand(self.n_models, -1, -1)).detach()
        return ops
