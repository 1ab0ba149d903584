"""Do several draws of one experiment measure the same thing? Cochran's Q on their statistics.

A claim is decided on the pooled units of all its draws; the draws' own statistics then serve as a
check that pooling is sound. Each draw's statistic ``x_i`` comes with its 95 % interval; its standard
error is read from the interval's width, ``s_i = (hi_i − lo_i) / (2 · z)``, and

    Q = Σ w_i (x_i − x̄)²,   w_i = 1 / s_i²,   x̄ = Σ w_i x_i / Σ w_i,

is referred to χ² with ``k − 1`` degrees of freedom (Cochran 1954; the fixed-effect test of a
meta-analysis). ``I² = max(0, (Q − df) / Q)`` is the share of the spread beyond chance (Higgins &
Thompson 2002). The draws disagree only when ``p <`` :data:`DISAGREE_LEVEL`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

__all__ = ["DISAGREE_LEVEL", "cochran_q"]

#: the level below which the draws' statistics are said to disagree: 1 %, so that among the 15 claims
#: of a reproduce a homogeneous claim is called "draws disagree" in fewer than one run in six
DISAGREE_LEVEL = 0.01

#: a zero-width interval (every unit the same) still carries rounding: its standard error is floored here
_SE_FLOOR = 1e-9


def cochran_q(
    statistics: Sequence[float], intervals: Sequence[Sequence[float]], level: float = 0.95
) -> dict | None:
    """``{"test", "q", "df", "p", "i2", "draws", "disagree"}`` of the draws' statistics, or None when
    fewer than two draws have a finite statistic and an interval of positive width (a point value, such
    as a count rule's worst run, has no sampling error for Q to weigh)."""
    z = stats.norm.ppf(0.5 + level / 2)
    pairs = [
        (float(x), (float(iv[1]) - float(iv[0])) / (2 * z))
        for x, iv in zip(statistics, intervals, strict=True)
        if iv is not None and all(map(math.isfinite, (x, iv[0], iv[1]))) and iv[1] > iv[0]
    ]
    if len(pairs) < 2:
        return None
    x = np.array([p[0] for p in pairs])
    se = np.maximum(np.array([p[1] for p in pairs]), _SE_FLOOR)
    w = 1.0 / se**2
    mean = float(np.sum(w * x) / np.sum(w))
    q = float(np.sum(w * (x - mean) ** 2))
    df = len(pairs) - 1
    p = float(stats.chi2.sf(q, df))
    i2 = max(0.0, (q - df) / q) if q > 0 else 0.0
    return {
        "test": "cochran_q",
        "q": q,
        "df": df,
        "p": p,
        "i2": i2,
        "draws": len(pairs),
        "disagree": p < DISAGREE_LEVEL,
    }
