"""The result of a data-only r* prediction, JSON-safe via :meth:`Prediction.to_dict`."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..jsonable import json_safe

#: The rank estimates a prediction reports, in the order the CLI and E6 show them.
ESTIMATE_KEYS = (
    "noise_calibrated_rank",
    "numerical_rank",
    "energy_effective_rank",
    "largest_gap_rank",
    "optimal_hard_threshold",
    "realised_mixer_energy_rank",
)


@dataclasses.dataclass
class Prediction:
    """A predicted intrinsic rank and everything needed to judge it.

    Attributes:
        r_hat: predicted r* (the noise-calibrated cut, or the ``estimator`` asked for); ``-1`` when
            the method could not produce a matrix to measure (see ``identifiable``/``reason``).
        method: predictor name (see :data:`PREDICTORS`).
        estimates: every rank estimator (``spectra/estimators.py``) on the recovered matrix's spectrum, plus
            ``noise_calibrated_rank`` and method-specific keys.
        estimator_params: ``{key: {estimator, params, formula, reference, integer}}``.
        singular_values: spectrum of the recovered matrix (descending).
        identifiable: False when these data (or this method) cannot identify r*; ``r_hat`` is then
            not to be trusted (it may be a lower bound or a biased surrogate, as ``reason`` says).
        reason: one sentence explaining ``identifiable``.
        noise_level: estimated noise std ``σ̂`` of the entries of ``Y``.
        kernel_noise: mean spectral norm of the simulated estimation noise of the recovered matrix.
        threshold: the cut ``τ`` applied to ``singular_values``.
        margin: ``(s_{r_hat} − s_{r_hat+1}) / kernel_noise``.
        timing_s: wall time of the prediction.
        n_samples: N. shapes: ``{"X": [...], "Y": [...], "V": [...] or None}``.
        n_equations, n_unknowns: scalar equations used and unknowns solved for by the method.
        too_few_samples: not identifiable because there are no more equations than unknowns.
        cut: what the null threshold and the largest gap each give, which was chosen and why
            (:meth:`.cut.Cut.describe`).
        fit: the held-out goodness-of-fit test of the teacher class (:mod:`.goodness`):
            ``teacher_rejected`` (None when the class was not tested), ``statistic``, ``threshold``,
            ``reason``, ``split``.
    """

    r_hat: int
    method: str
    estimates: dict[str, float]
    estimator_params: dict[str, Any]
    singular_values: list[float]
    identifiable: bool
    reason: str
    noise_level: float
    margin: float
    timing_s: float
    n_samples: int
    shapes: dict[str, Any]
    kernel_noise: float = float("nan")
    threshold: float = float("nan")
    n_equations: int = 0
    n_unknowns: int = 0
    too_few_samples: bool = False
    cut: dict[str, Any] = dataclasses.field(default_factory=dict)
    fit: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (floats that are NaN/inf become ``None``)."""
        return json_safe(dataclasses.asdict(self))
