"""The interface every student ensemble implements.

A student *ensemble* holds ``M`` independent models of one kind in one set of tensors: every
parameter has a leading model axis. One forward pass serves all models; the training loss is the
sum of the per-model mean losses, so each model receives exactly its own gradient.

Ranks differ between models of one ensemble by zero padding: model ``m`` of rank ``r_m`` draws its
factors at width ``r_m`` from its own generator and pads them with zero columns to the ensemble's
width ``r_max``. For a product ``P Qᵀ`` the gradient of a zero column is ``G Q[:, j] = 0``, so padded
columns stay exactly zero under plain GD and Adam alike, and a model's numbers do not depend on
which other models share its ensemble.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from ..errors import UserInputError
from ..validation import check_choice, check_positive_int, check_rank

POSITIONAL = ("none", "learned_absolute")


@dataclass(frozen=True)
class PlotStyle:
    """How a student's series look in every figure."""

    colour: str = "#000000"
    marker: str = "o"
    offset: float = 1.0  # factor along a log rank axis, so coinciding series of two students stay visible


@dataclass(frozen=True)
class MemberSpec:
    """One model of an ensemble: its query–key (or operator) rank, init scale and seed."""

    rank: int
    init_scale: float
    seed: int


def member_generator(seed: int) -> torch.Generator:
    """The generator a member draws its initial parameters from."""
    return torch.Generator().manual_seed(int(seed))


def stack_padded(factors: Sequence[Tensor], width: int) -> Tensor:
    """Stack per-model factors ``(..., r_m)`` into ``(M, ..., width)`` with zero padding."""
    out = []
    for f in factors:
        pad = width - f.shape[-1]
        assert pad >= 0, f"factor width {f.shape[-1]} exceeds ensemble width {width}"
        out.append(torch.nn.functional.pad(f, (0, pad)))
    return torch.stack(out)


def _students_with(flag: str) -> str:
    """The registered students whose class sets ``flag``, as ``B1 and B2`` (for a refusal's message)."""
    from ..registry import STUDENTS  # the registry's entries are these classes' subclasses

    names = [name for name in STUDENTS if getattr(STUDENTS.get(name), flag)]
    return f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else "".join(names)


class EnsembleStudent(nn.Module):
    """Base class: ``M`` models with a leading model axis on every parameter.

    The constructor checks the shapes, then draws each member's parameters from its own generator
    (:meth:`_draw_member`, in the order the subclass returns them) and stacks them: the rank-padded
    ``factors`` first, then a learned ``V`` (or the shared buffer ``V_fixed`` when ``V_known`` is
    given), then the subclass's own parameters (:meth:`_register_params`). Subclasses implement
    ``_draw_member``, ``forward``, ``operators`` and ``mixers``; ``spectra`` defaults to the
    singular values of every square operator.
    """

    rung: str = ""
    ladder_step: int = -1  # place on the interpolation ladder B0 → B3 (figures and tables sort by it)
    fixed_mixer = False  # True: the token mixer does not depend on the input (B0's A = P Qᵀ)
    plot_style = PlotStyle()
    n_models: int
    factors: tuple[str, ...] = ()  # rank-padded: columns past a member's rank stay zero
    rank_bound: tuple[str, str] = ("d", "the per-head query–key width is at most d")  # (side, why)
    supports_positional = False
    positional_note = ""  # why a rung without positions has none
    supports_heads = True
    default_dtype: torch.dtype = torch.float32

    def __init__(
        self,
        members: Sequence[MemberSpec],
        *,
        n: int,
        d: int,
        d_v: int,
        V_known: Tensor | None = None,
        n_heads: int = 1,
        positional: str = "none",
        v_init_scale: float = 1.0,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
        **extra: object,
    ) -> None:
        super().__init__()
        self._check(members, n=n, d=d, d_v=d_v, V_known=V_known, n_heads=n_heads, positional=positional)
        self.n_models, self.n, self.d, self.d_v, self.n_heads = len(members), n, d, d_v, n_heads
        self.positional, self.ranks = positional, [int(m.rank) for m in members]
        self.init_dtype = self.default_dtype if dtype is None else dtype
        params: dict[str, list[Tensor]] = {}
        for m in members:
            g = member_generator(m.seed)
            for name, t in self._draw_member(m, g, V_known is None, v_init_scale, extra).items():
                params.setdefault(name, []).append(t.to(self.init_dtype))
        for name in self.factors:
            setattr(
                self, name, nn.Parameter(stack_padded(params.pop(name), max(self.ranks)))
            )  # (M, …, r_max)
        self.V = nn.Parameter(torch.stack(params.pop("V"))) if V_known is None else None  # (M, d, d_v)
        V_fixed = None if V_known is None else V_known.detach().to(self.init_dtype)
        self.register_buffer("V_fixed", V_fixed)  # (d, d_v)
        self._register_params(params)
        if device is not None:
            self.to(device)

    def _check(self, members: Sequence[MemberSpec], *, n, d, d_v, V_known, n_heads, positional) -> None:
        for name, value in (("n", n), ("d", d), ("d_v", d_v), ("n_heads", n_heads)):
            check_positive_int(name, value)
        check_choice("positional", positional, POSITIONAL)
        if positional != "none" and not self.supports_positional:
            raise UserInputError(
                f"The 'positional' option is only available for {_students_with('supports_positional')}"
                f"{self.positional_note}. Got {positional!r} for {self.rung}."
            )
        if n_heads != 1 and not self.supports_heads:
            raise UserInputError(
                f"The 'n_heads' option is for {_students_with('supports_heads')}. Got {n_heads} for {self.rung}."
            )
        if not members:
            raise UserInputError("An ensemble needs at least one member. Got 0 instead.")
        side, why = self.rank_bound
        bound = {"n": n, "d": d}[side]
        for m in members:
            check_rank("rank", m.rank, bound, what=f"{why}={bound}")
        if V_known is not None and tuple(V_known.shape) != (d, d_v):
            raise UserInputError(
                f"The 'V_known' matrix must have shape ({d}, {d_v}). Got {tuple(V_known.shape)} instead."
            )

    def _draw_member(
        self, m: MemberSpec, g: torch.Generator, learn_v: bool, v_init_scale: float, extra: dict
    ) -> dict[str, Tensor]:  # pragma: no cover - interface
        """Member ``m``'s parameters drawn from ``g``: the ``factors`` at width ``m.rank``, ``V`` when
        ``learn_v``, then the subclass's own."""
        raise NotImplementedError

    def _register_params(self, params: dict[str, list[Tensor]]) -> None:
        """Stack and register the subclass's own per-member parameters (what is left after ``factors``
        and ``V``), in the order they were drawn."""
        for name, ts in params.items():
            setattr(self, name, nn.Parameter(torch.stack(ts)))

    @classmethod
    def full_rank(cls, n: int, d: int) -> int:
        """The largest rank a member can have on ``n`` tokens of ``d`` features (its :attr:`rank_bound`)."""
        return {"n": n, "d": d}[cls.rank_bound[0]]

    # ----- memory (``--max-memory``; each student's count is checked against a measured peak)
    @classmethod
    def parameter_count(cls, *, n: int, d: int, d_v: int, rank: int, n_heads: int = 1, **options) -> int:
        """Trainable numbers of one member (``V`` counted as learned, positions as present)."""
        raise NotImplementedError  # pragma: no cover - interface

    @classmethod
    def step_count(cls, *, n: int, d: int, d_v: int, n_heads: int = 1, **options) -> int:
        """Numbers one member forms once per step whatever the batch (its operator or kernels, and their
        gradients)."""
        raise NotImplementedError  # pragma: no cover - interface

    @classmethod
    def activation_count(cls, *, n: int, d: int, d_v: int, n_heads: int = 1, **options) -> int:
        """Numbers one member keeps per sample for the backward pass, and their gradients."""
        raise NotImplementedError  # pragma: no cover - interface

    @classmethod
    def training_bytes(
        cls,
        *,
        n: int,
        d: int,
        d_v: int,
        rank: int,
        batch: int,
        n_heads: int = 1,
        itemsize: int = 8,
        **options,
    ) -> int:
        """One member's training memory: parameters ×4 (value, gradient, Adam's two moments), the
        per-step operators and ``batch`` samples' activations."""
        shape = dict(n=n, d=d, d_v=d_v, n_heads=n_heads, **options)
        params = cls.parameter_count(rank=rank, **shape)
        return itemsize * (4 * params + cls.step_count(**shape) + batch * cls.activation_count(**shape))

    def reference_member(self, m: int) -> nn.Module:  # pragma: no cover - interface
        """Member ``m`` as the plain single-model module of :mod:`.reference` (factors trimmed to its
        rank): the ensemble's correctness oracle and ``bench train``'s per-model baseline."""
        raise NotImplementedError

    def value(self) -> Tensor:
        """``V (M, d, d_v)``, or the shared known ``(d, d_v)``."""
        return self.V if self.V is not None else self.V_fixed

    def values(self) -> Tensor:
        """``V`` per model, ``(M, d, d_v)`` (the known ``V*`` expanded, not copied)."""
        V = self.value()
        return V if V.dim() == 3 else V.expand(self.n_models, -1, -1)

    def forward(self, X: Tensor) -> Tensor:  # pragma: no cover - interface
        """``X (B, n, d)`` shared by all models, or ``(M, B, n, d)`` → ``(M, B, n, d_v)``."""
        raise NotImplementedError

    def operators(self) -> dict[str, Tensor]:  # pragma: no cover - interface
        """Detached analysis operators, model axis first (``A (M, n, n)``, ``K (M, h, d, d)``...)."""
        raise NotImplementedError

    def mixers(self, X: Tensor) -> Tensor:  # pragma: no cover - interface
        """Realised token-mixing matrices ``(M, B, h, n, n)`` on inputs ``X``."""
        raise NotImplementedError

    def spectra(self) -> dict[str, np.ndarray]:
        """Float64 singular values of each operator, ``(M, ..., k)``."""
        from ..spectra import singular_values

        return {name: singular_values(op) for name, op in self.operators().items()}

    @staticmethod
    def expand_inputs(X: Tensor, n_models: int) -> Tensor:
        """``(B, n, d)`` or ``(M, B, n, d)`` → ``(M, B, n, d)`` (a view when shared)."""
        if X.dim() == 3:
            return X.unsqueeze(0).expand(n_models, *X.shape)
        assert X.dim() == 4 and X.shape[0] == n_models, f"inputs {tuple(X.shape)} for {n_models} models"
        return X
