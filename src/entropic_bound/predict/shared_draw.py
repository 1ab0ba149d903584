"""Many predictions on one data draw: what depends on the inputs alone is computed once.

An experiment that predicts r* in many cells of one draw (E6: the same inputs ``X`` and ``V`` under
several noise levels ``Y = f*(X) + σE`` and two teachers) repeats the part of each predictor that
reads ``X`` and ``V`` only. :class:`DrawStatistics` holds that part, computed on first use:

| statistic | predictor | reused across |
| --- | --- | --- |
| normal matrix ``Σ (XᵢᵀXᵢ) ⊗ (BᵢBᵢᵀ)``, ``Bᵢ = XᵢᵀXᵢV``, and its Cholesky factor | ``linear_v_known`` | σ |
| normal matrix with ``Bᵢ = XᵢᵀCXᵢV``, its factor, ``pinv(XᵢV)`` of the mixer samples | ``softmax_linearised``, V known | σ, teacher |
| weights ``λ_min(XᵢᵀXᵢ)``, ``pinv(Xᵢ)``, ``Σ w S⁻¹`` | ``linear_v_unknown``, n ≥ d | σ |
| ``pinv(XᵢV)`` and its column norms | ``softmax_log_attention``, V known | σ |

Only the right-hand sides (``b = Σ vec(XᵢᵀTᵢBᵢᵀ)``, ``Σ||Tᵢ||²``, ``pinv(Xᵢ) Yᵢ``, ``Yᵢ pinv(XᵢV)``)
and what follows from them are computed per prediction. :func:`predict_on_draw` gives what
``predict_r_star(..., check_fit=False)`` gives, up to float64 round-off: the goodness-of-fit test
is not run, so the training-only fits it reads are skipped, and ``linear_v_known`` sums all samples
in one system instead of a training and a held-out one. Every random draw (the cut's noise
simulation, the held-out split that orders log-attention's samples) comes from the prediction's own
``seed`` as before.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from .api import prediction, read_rank
from .base import Fit, chunks
from .goodness import held_out, not_tested, split_description
from .linear_v_known import known_gram, linear_v_known
from .linear_v_unknown import linear_v_unknown, pooled_inputs
from .result import Prediction
from .softmax_linearised import linearised_gram, mixer_pinv, softmax_linearised
from .softmax_log_attention import Inverses, check_setting, softmax_log_attention


class DrawStatistics:
    """The statistics of inputs ``X (N, n, d)`` and value matrix ``V (d, d_v)`` that every target on
    them shares (module docstring), each computed the first time a prediction needs it."""

    def __init__(self, X: np.ndarray, V: np.ndarray) -> None:
        self.X, self.V = X, V

    def holds(self, X: np.ndarray, V: np.ndarray) -> bool:
        """Whether these are the inputs the statistics were computed from."""
        return np.array_equal(X, self.X) and np.array_equal(V, self.V)

    @functools.cached_property
    def known_gram(self):
        return known_gram(self.X, self.V)

    @functools.cached_property
    def linearised_gram(self):
        return linearised_gram(self.X, self.V)

    @functools.cached_property
    def mixer_pinv(self) -> np.ndarray:
        return mixer_pinv(self.X, self.V)

    @functools.cached_property
    def pooled(self):
        return [pooled_inputs(self.X[sl]) for sl in chunks(self.X.shape[0])]

    @functools.cached_property
    def inverses(self) -> Inverses:
        return Inverses.of(self.X, self.V)


def _fit(stats: DrawStatistics, Y: np.ndarray, method: str, v_known: bool, rng, held) -> Fit:
    """``method``'s fit on targets ``Y`` from the shared statistics."""
    X, V = stats.X, stats.V if v_known else None
    n, d = X.shape[1:]
    if method == "linear_v_known":
        return linear_v_known(X, Y, V, rng=rng, held=held, gram=stats.known_gram if v_known else None)
    if method == "linear_v_unknown":
        return linear_v_unknown(X, Y, V, rng=rng, held=held, inputs=stats.pooled if n >= d else None)
    if method == "softmax_linearised":
        shared = {"gram": stats.linearised_gram, "pinv": stats.mixer_pinv} if v_known else {}
        return softmax_linearised(X, Y, V, rng=rng, held=held, **shared)
    if method == "softmax_log_attention":
        inverses = stats.inverses if v_known and not check_setting(X, Y, V) else None
        return softmax_log_attention(X, Y, V, rng=rng, held=held, inverses=inverses, heldout_model=False)
    raise ValueError(f"no shared-statistics path for method '{method}'")


def predict_on_draw(
    stats: DrawStatistics, Y: np.ndarray, *, method: str, v_known: bool, seed: int
) -> Prediction:
    """``predict_r_star(stats.X, Y, V=stats.V if v_known else None, method=method, seed=seed,
    check_fit=False)`` from the shared statistics (module docstring). ``Y (N, n, d_v)`` float64,
    checked by the caller."""
    start = time.perf_counter()
    N = stats.X.shape[0]
    held = held_out(N, seed)
    fit = _fit(stats, Y, method, v_known, np.random.default_rng(seed), held)
    gof = not_tested("not tested: check_fit=False", split_description(N, held, seed))
    shapes = {"X": list(stats.X.shape), "Y": list(Y.shape), "V": list(stats.V.shape) if v_known else None}
    return prediction(fit, method, read_rank(fit, method), shapes, gof, time.perf_counter() - start)
