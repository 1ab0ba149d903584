"""The one rank estimator of a rank-recovery claim, chosen before any verdict.

A rank-recovery claim (C3, C7, E7's kernel ranks where they claim recovery) asks whether a learned
operator's rank equals the teacher's ``r*``. Which estimator reads "rank" decides the verdict: the
numerical rank's 1 % cut counts fitted noise at 2–5 % of the top singular value, the energy
threshold does not. The rule fixes the estimator from the ground truth alone:

    the estimator whose value on the ground truth — the teacher's operator (A* or K*) and, at the
    noise level the claim's runs fit, that operator plus noise — equals r* on every case;
    ties broken by :data:`TIE_ORDER`.

:data:`TIE_ORDER` puts the integer-valued counts first (a count equals ``r*`` without rounding; a
continuous effective rank rounds to it only on flat spectra), each group in the panel's report
order. When no estimator matches every case the one matching most cases is returned with
``all_match = False`` (a claim should then say the truth itself is ambiguous at that noise level).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import DataError
from ..spectra import ESTIMATOR_KEYS, estimate_all, panel_description, round_estimate, singular_values

_INTEGER = {key for key, d in panel_description().items() if d["integer"]}
#: Tie order: integer counts in panel order, then continuous estimators in panel order.
TIE_ORDER: tuple[str, ...] = tuple(k for k in ESTIMATOR_KEYS if k in _INTEGER) + tuple(
    k for k in ESTIMATOR_KEYS if k not in _INTEGER
)
RULE = (
    "the panel estimator whose value on the ground truth (the teacher's operator, and that operator plus "
    "noise at the runs' noise level) equals r* on every case; ties broken by the order integer counts "
    f"first, then continuous, each in panel order: {', '.join(TIE_ORDER)}"
)


def ground_truth_cases(
    operator,
    r_star: int,
    *,
    noise_fraction: float = 0.0,
    draws: int = 0,
    rng: np.random.Generator | None = None,
) -> list[dict]:
    """The truth's cases for :func:`choose_estimator`: the operator's own spectrum and ``draws`` spectra
    of ``operator + E``, ``E`` Gaussian scaled so that its top singular value is ``noise_fraction`` ×
    the operator's (the fitted-noise level of the runs). Each case is ``{singular_values, r_star,
    shape, noise_fraction}``."""
    A = np.asarray(operator, dtype=float)
    if A.ndim != 2:
        raise DataError(f"The ground-truth operator must be a matrix. Got shape {A.shape}.")
    s = np.asarray(singular_values(A))
    cases = [{"singular_values": s, "r_star": int(r_star), "shape": A.shape, "noise_fraction": 0.0}]
    if draws and rng is None:
        raise DataError("Noisy ground-truth cases need an explicit rng (numpy Generator).")
    for _ in range(draws):
        E = rng.standard_normal(A.shape)
        E *= noise_fraction * s[0] / np.linalg.norm(E, 2)
        cases.append(
            {
                "singular_values": np.asarray(singular_values(A + E)),
                "r_star": int(r_star),
                "shape": A.shape,
                "noise_fraction": float(noise_fraction),
            }
        )
    return cases


def _values(case: dict) -> dict[str, float]:
    shape = case.get("shape")
    estimates = estimate_all(case["singular_values"], shape=tuple(shape) if shape is not None else None)
    return {k: float(v) for k, v in estimates.items()}


def choose_estimator(cases: Sequence[dict], *, order: Sequence[str] = TIE_ORDER) -> dict:
    """Apply the rule to ``cases`` (``{singular_values, r_star[, shape]}`` each, e.g. from
    :func:`ground_truth_cases` over the claim's grid of ``r*`` and spectra).

    Returns ``{estimator, estimator_on_truth (the chosen estimator's value per case), r_star (per
    case), matches ({key: share of cases where the rounded value equals r*}), all_match, rule, order}``.
    An estimator the cases cannot evaluate (Gavish–Donoho without ``shape``) is skipped.
    """
    if not cases:
        raise DataError("Choosing an estimator needs at least one ground-truth case.")
    values = [_values(c) for c in cases]
    r_star = [int(c["r_star"]) for c in cases]
    usable = [k for k in order if all(k in v for v in values)]
    matches = {k: float(np.mean([round_estimate(v[k]) == r for v, r in zip(values, r_star)])) for k in usable}
    best = max(matches.values())
    chosen = next(k for k in usable if matches[k] == best)  # first in the stated order among the best
    return {
        "estimator": chosen,
        "estimator_on_truth": [v[chosen] for v in values],
        "r_star": r_star,
        "matches": matches,
        "all_match": best == 1.0,
        "rule": RULE,
        "order": list(usable),
    }


def rule_evidence(cases: Sequence[dict], labels: Sequence[tuple[str, bool]], noise_fraction: dict) -> dict:
    """:func:`choose_estimator` on ``cases`` as a claim's evidence: the estimator, its share of matching
    cases, and its value on the truth per ``labels`` entry (``(label, noiseless)``: the noiseless value
    and the range over the noisy cases), beside the median noise fraction per sample count."""
    out = choose_estimator(cases)
    on_truth: dict = {}
    for (label, clean), value in zip(labels, out["estimator_on_truth"]):
        entry = on_truth.setdefault(label, {"noiseless": None, "noisy": []})
        if clean:
            entry["noiseless"] = round(value, 4)
        else:
            entry["noisy"].append(value)
    for entry in on_truth.values():
        entry["noisy"] = (
            [round(min(entry["noisy"]), 4), round(max(entry["noisy"]), 4)] if entry["noisy"] else None
        )
    return {
        "estimator": out["estimator"],
        "all_match": out["all_match"],
        "matches": {k: round(v, 3) for k, v in out["matches"].items()},
        "estimator_on_truth": on_truth,
        "noise_fraction_by_N": {N: round(float(np.median(f)), 4) for N, f in noise_fraction.items()},
        "cases": len(cases),
        "rule": out["rule"],
    }
