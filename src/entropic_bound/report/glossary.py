"""What the report's terse names mean: table columns whose name does not say it (``ratio_k0``,
``k0_lo``, ``coverage``…) and the terms the claim lines and boundaries use ("K = 0", "transient").

A table preview shows a legend of its columns found here, and each such header carries the
meaning as a tooltip; the page ends with the terms. Names the report shows that are not here read
as words (``rel_excess`` → relative excess).
"""

from __future__ import annotations

import re

#: Column name → meaning. A name matches exactly, or through a pattern of :data:`COLUMN_PATTERNS`.
COLUMNS = {
    "ratio_k0": "softmax ÷ linear teacher excess risk at rank r*−1, each divided by its K = 0 excess "
    "(a median over pairs in the c6 map)",
    "ratio_signal": "softmax ÷ linear teacher excess risk at rank r*−1, each divided by the signal",
    "coverage": "the exact probability that the [lo, hi] interval holds the true median "
    "(order statistics; below 6 pairs, [min, max] with its lower coverage)",
    "pairs": "(K*, V*, X) draws fitted under both teachers",
    "k0_rel_excess": "excess risk of the K = 0 model, divided by the signal",
    "k0_excess": "excess risk of the K = 0 model",
    "excess_over_k0": "excess risk ÷ the K = 0 model's excess risk",
    "over_k0_below": "excess risk at rank r*−1 ÷ the K = 0 model's excess risk",
    "rel_excess": "held-out excess risk ÷ the signal E||f*||²/(n d_v)",
    "rel_excess_below": "relative excess risk at rank r*−1",
    "rel_excess_at": "relative excess risk at rank r*",
    "signal": "the signal E||f*||²/(n d_v) of the teacher",
    "noise_floor": "the noise variance σ² of the targets",
    "row_entropy_ratio": "mean entropy of an attention row ÷ log n (1: uniform, 0: one-hot)",
    "mean_max_attention": "mean largest attention weight of a row",
    "flagged": "share of runs the predictor flagged not identifiable",
    "confident_wrong": "share of runs that claimed identifiability and missed r*",
    "rate": "share of runs with r_hat = r* (exact recovery)",
    "mean_r_hat": "mean predicted rank r_hat",
    "in_domain": "the method can identify r* in this setting in principle",
    "runs": "runs in the cell",
    "transient": "runs whose rank equalled r* at some checkpoint and rose above it later, fitting noise",
}

#: ``(pattern, meaning)`` for families of columns; ``{0}`` is the pattern's first group.
COLUMN_PATTERNS = (
    (r"^(k0|signal)_lo$", "lower end of the 95 % interval of the median ratio_{0}"),
    (r"^(k0|signal)_hi$", "upper end of the 95 % interval of the median ratio_{0}"),
    (r"^(linear|softmax)_over_k0$", "{0} teacher: excess risk at r*−1 ÷ its K = 0 excess"),
    (r"^(linear|softmax)_rel$", "{0} teacher: excess risk at r*−1 ÷ the signal"),
    (r"^exact_(.+)$", "share of runs whose {0} equals r*"),
)

#: Terms of the claim lines and boundaries, shown once at the end of the page.
TERMS = {
    "K = 0 model": "the model with its attention kernel K at zero (uniform attention for the softmax, a "
    "zero output for linear attention): ΔR(K = 0) is what attention can remove at all",
    "k0 / signal normalisation": "an excess risk divided by the K = 0 model's excess (k0) or by the signal",
    "median interval (k0 interval)": "the distribution-free interval [lo, hi] of a median from order "
    "statistics, 'coverage' its exact probability; the k0 interval is that of the median ratio normalised "
    "by the K = 0 excess",
    "transient": "a run whose rank equalled r* at some checkpoint and ended above it while the loss kept "
    "falling into the noise floor (it fitted noise late): counted as a low-rank answer",
    "flagged / confidently wrong": "a prediction that answers 'not identifiable' / one that claims "
    "identifiability and misses r*",
    "statistic": "in the claim boundaries, the number the claim's criterion compares with its threshold, "
    "recomputed at that setting",
}


def column_meaning(name: str) -> str | None:
    """What column ``name`` holds, or None when its name is meant to say it."""
    if name in COLUMNS:
        return COLUMNS[name]
    for pattern, meaning in COLUMN_PATTERNS:
        match = re.match(pattern, name)
        if match:
            return meaning.format(*match.groups())
    return None
