"""What every task (data generator) shares: the sample container, the teacher, parameter checks.

A *task* is a frozen dataclass of parameters (validated on construction, usable as a config
section). ``task.teacher(generator)`` draws the ground truth (``A*`` or ``K*``, ``V*``) from that
generator and returns a :class:`Teacher`; ``teacher.sample(N, generator)`` draws ``N`` samples from
a second generator, so the same teacher can give a training set and a fresh held-out set::

    teacher = FixedOperatorTask(r_star=4).teacher(torch.Generator().manual_seed(0))
    train = teacher.sample(128, torch.Generator().manual_seed(1))   # Batch(X, clean, Y)
    test = teacher.sample(4096, torch.Generator().manual_seed(2))
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..config import config_error, param, validate
from ..validation import check_rank
from .operators import SPECTRA, make_spectrum


@dataclass(frozen=True)
class Batch:
    """``N`` samples: inputs ``X (N, n, d)``, clean targets ``f*(X) (N, n, d_v)``, noisy ``Y = clean + E``."""

    X: torch.Tensor  # (N, n, d)
    clean: torch.Tensor  # (N, n, d_v)
    Y: torch.Tensor  # (N, n, d_v)

    def __len__(self) -> int:
        return self.X.shape[0]

    def to(self, *args: Any, **kwargs: Any) -> Batch:
        """Move/cast all three tensors (arguments as for ``torch.Tensor.to``)."""
        return Batch(self.X.to(*args, **kwargs), self.clean.to(*args, **kwargs), self.Y.to(*args, **kwargs))


def as_generator(seed_or_generator: int | torch.Generator) -> torch.Generator:
    """A CPU ``torch.Generator``: passed through, or freshly seeded from an int."""
    if isinstance(seed_or_generator, torch.Generator):
        return seed_or_generator
    return torch.Generator().manual_seed(int(seed_or_generator))


class Teacher:
    """A drawn ground truth ``f*`` and its input distribution.

    Inputs are ``X = C^{1/2} Z`` with ``Z`` iid ``N(0, 1)`` (``C = I`` unless the task sets a token
    covariance); targets are ``Y = f*(X) + E`` with ``E`` iid ``N(0, σ²)``. Subclasses implement
    :meth:`mixer` (the realised ``(N, n, n)`` token-mixing matrix ``M(X)``) and set ``V``; the clean
    target is always ``f*(X) = M(X) X V*``.
    """

    name = "teacher"

    def __init__(
        self,
        *,
        n: int,
        d: int,
        d_v: int,
        r_star: int,
        sigma: float,
        V: torch.Tensor,
        token_sqrt: torch.Tensor | None = None,
    ) -> None:
        self.n, self.d, self.d_v, self.r_star, self.sigma = n, d, d_v, r_star, float(sigma)
        self.V = V  # (d, d_v) float64
        self.token_sqrt = token_sqrt  # (n, n) float64 or None

    # ----- the map
    def mixer(self, X: torch.Tensor) -> torch.Tensor:
        """The realised token-mixing matrix ``M(X)``, ``(N, n, n)``."""
        raise NotImplementedError

    def target(self, X: torch.Tensor) -> torch.Tensor:
        """The clean target ``f*(X) = M(X) X V*``, ``(N, n, d_v)``, in ``X``'s dtype and device."""
        return self.mixer(X) @ X @ self.V.to(X)  # (N, n, n) @ (N, n, d) @ (d, d_v)

    # ----- sampling
    def sample_inputs(self, n_samples: int, generator: torch.Generator) -> torch.Tensor:
        """``X (N, n, d)`` float64 drawn from ``generator``."""
        Z = torch.randn(n_samples, self.n, self.d, generator=generator, dtype=torch.float64)  # (N, n, d)
        return Z if self.token_sqrt is None else self.token_sqrt @ Z

    def sample(self, n_samples: int, generator: torch.Generator, dtype: torch.dtype = torch.float64) -> Batch:
        """``N`` fresh samples. Everything is drawn and computed in float64, then cast to ``dtype``.

        Draw order from ``generator``: ``X`` then the noise ``E`` (the noise is drawn even when
        ``σ = 0``, so the inputs of a seed do not depend on ``σ``).
        """
        if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
            raise config_error("n_samples", "an int in [1, inf)", n_samples)
        X = self.sample_inputs(n_samples, generator)  # (N, n, d)
        clean = self.target(X)  # (N, n, d_v)
        noise = torch.randn(clean.shape, generator=generator, dtype=torch.float64)
        Y = clean + self.sigma * noise
        return Batch(X.to(dtype), clean.to(dtype), Y.to(dtype))

    # ----- ground truth
    @property
    def truth(self) -> dict[str, Any]:
        """The ground truth: ``V`` (numpy float64), ``r_star``, ``sigma`` and the subclass's operator."""
        return {"V": self.V.numpy().copy(), "r_star": self.r_star, "sigma": self.sigma}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, d={self.d}, d_v={self.d_v}, r_star={self.r_star}, sigma={self.sigma})"


def singular_values(M: torch.Tensor) -> np.ndarray:
    """Singular values of ``M`` in float64 numpy, non-increasing."""
    return torch.linalg.svdvals(M.to(torch.float64)).numpy()


# ----- parameter validation shared by the task dataclasses


def _check_types(task: Any) -> None:
    """Check the Python type of every field and normalise numbers to the declared type.

    ``validate`` checks ranges and choices, not types; a frozen dataclass is updated in place with
    ``object.__setattr__`` (only in ``__post_init__``), so ``sigma=0`` is stored as ``0.0``.
    """
    hints = typing.get_type_hints(type(task))
    for f in dataclasses.fields(task):
        tp, value = hints[f.name], getattr(task, f.name)
        allow_none = typing.get_origin(tp) is not None and type(None) in typing.get_args(tp)
        if value is None and allow_none:
            continue
        base = next((a for a in typing.get_args(tp) if a is not type(None)), tp) if allow_none else tp
        ok = {
            int: isinstance(value, (int, np.integer)) and not isinstance(value, bool),
            float: isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool),
            str: isinstance(value, str),
            bool: isinstance(value, bool),
        }.get(base, True)
        if not ok:
            kind = {int: "an int", float: "a float", str: "a string", bool: "a bool"}[base]
            raise config_error(f.name, kind + (" or None" if allow_none else ""), value)
        if base in (int, float) and type(value) is not base:  # 2 -> 2.0, np.int64(3) -> 3
            object.__setattr__(task, f.name, base(value))


def check_task(task: Any) -> None:
    """Validate a task dataclass: field types, declared ranges/choices, then cross-field rules.

    Raises :class:`~entropic_bound.errors.ConfigError` (a ``UserInputError``) with scikit-learn's
    message template, e.g. ``The 'r_star' parameter must be an int in [1, 16]. Got 20 instead.``
    """
    _check_types(task)
    validate(task)  # ranges, choices, then task.check()


class TaskParams:
    """What every task dataclass shares: validated on construction (:func:`check_task`), ``r*``
    within the side of the matrix it ranks (``rank_side``: ``"n"`` or ``"d"``), and ``d_out``."""

    rank_side = "n"

    def __post_init__(self) -> None:
        check_task(self)

    def check(self) -> None:
        check_rank("r_star", self.r_star, getattr(self, self.rank_side))

    @property
    def d_out(self) -> int:
        return self.d if self.d_v is None else self.d_v


@dataclass(frozen=True)
class LowRankTaskParams(TaskParams):
    """The parameters of a teacher with a rank-``r*`` operator (``A*`` or ``K*``), a value map and noise.

    Subclasses redeclare a field to change its default or wording; a redeclared field keeps its
    place, so the field order (which ``repr``, and through it every derived seed, prints) is this one
    followed by the subclass's own fields.
    """

    n: int = param(16, ge=1, doc="tokens per sequence")
    d: int = param(8, ge=1, doc="input features")
    d_v: int | None = param(None, ge=1, doc="output features (None: d)")
    r_star: int = param(4, ge=1, doc="rank of the teacher's operator")
    spectrum: str = param("flat", choices=SPECTRA, doc="singular-value profile of the operator")
    decay: float = param(0.25, gt=0.0, le=1.0, doc="geometric spectrum: s_r*/s_1")
    alpha: float = param(1.0, ge=0.0, doc="power spectrum: s_i = i^-alpha")
    sigma: float = param(0.1, ge=0.0, doc="noise standard deviation")

    def singular_profile(self) -> torch.Tensor:
        """The operator's ``r*`` singular values before scaling (:func:`~.operators.make_spectrum`)."""
        return make_spectrum(self.r_star, self.spectrum, decay=self.decay, alpha=self.alpha)

    def teacher_fields(self, V: torch.Tensor) -> dict[str, Any]:
        """The :class:`Teacher` keyword arguments every low-rank task passes on, with its drawn ``V*``."""
        return {
            "n": self.n,
            "d": self.d,
            "d_v": self.d_out,
            "r_star": self.r_star,
            "sigma": self.sigma,
            "V": V,
        }
