"""Rank over training: recovered, transient, or not recovered (C3/C7).

Gradient descent from small initialisation learns the teacher's directions one by one, so the rank
of a learned operator climbs to ``r*`` — and on finite noisy data may then climb further as the run
fits the noise (the training loss falls below the noise floor σ²). A rank that equalled ``r*`` and
left it that way shows the implicit bias *and* the fitted noise; it is not a refutation of the bias.

:func:`classify_rank_curve` (ranks rounded to integers with :func:`~entropic_bound.spectra.round_estimate`):

- ``"recovered"``: the final rank equals ``r*``;
- ``"transient"``: the rank equalled ``r*`` at some checkpoint, ends above it, and the loss kept
  falling after the rank last equalled ``r*`` — into the noise floor when ``floor`` is given
  (final loss ≤ floor: the extra directions fit noise);
- ``"not_recovered"``: anything else (never equal to ``r*``; ends below it; or rose while the loss
  stayed above the floor, i.e. extra directions that were not fitted noise).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import DataError
from ..spectra import round_estimate

STATUSES = ("recovered", "transient", "not_recovered")


def classify_rank_curve(
    steps: Sequence[float],
    ranks: Sequence[float],
    losses: Sequence[float],
    r_star: int,
    *,
    floor: float | None = None,
) -> dict:
    """Classify one run's rank curve (see the module docstring).

    Returns ``{status, rank_final, first_at_r_star, last_at_r_star (steps, None if never), loss_at_last_r_star,
    loss_final, floor, curve: {step, rank, loss}}``; ``curve`` is the evidence a reader needs.
    """
    s = np.asarray(steps, dtype=float)
    k = round_estimate(np.asarray(ranks, dtype=float))
    loss = np.asarray(losses, dtype=float)
    if not (len(s) == len(k) == len(loss)) or not len(s):
        raise DataError(
            f"steps, ranks and losses must be equally long and non-empty. Got {len(s)}, {len(k)}, {len(loss)}."
        )
    at = np.flatnonzero(k == r_star)
    final = int(k[-1])
    out = {
        "rank_final": final,
        "first_at_r_star": float(s[at[0]]) if len(at) else None,
        "last_at_r_star": float(s[at[-1]]) if len(at) else None,
        "loss_at_last_r_star": float(loss[at[-1]]) if len(at) else None,
        "loss_final": float(loss[-1]),
        "floor": floor,
        "curve": {"step": s.tolist(), "rank": k.tolist(), "loss": loss.tolist()},
    }
    if final == r_star:
        return {"status": "recovered", **out}
    kept_falling = len(at) and final > r_star and loss[-1] < loss[at[-1]]
    into_floor = floor is None or loss[-1] <= floor
    return {"status": "transient" if kept_falling and into_floor else "not_recovered", **out}
