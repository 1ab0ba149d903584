"""Can an in-context lookup answer a source? How often a target's context already occurred in its window.

For a token stream cut into non-overlapping windows of ``n_ctx + 1`` tokens (a model's view), each
target's order-k context (the k tokens ending just before it) is looked up earlier in the same
window. ``recurs`` is the share of targets whose context occurred earlier; ``copy_right`` the share
of those whose token equals the one that followed the latest earlier occurrence. Where both are
high, a content-addressed head ("find where this context was, read what came next", an
induction-style lookup) predicts the source nearly as well as its transition table, so a model may
answer it by content routing: such a source cannot be a *local-only* control (E7's C13).
"""

from __future__ import annotations

import numpy as np


def context_recurrence(tokens: np.ndarray, order: int, n_ctx: int) -> tuple[float, float]:
    """``(recurs, copy_right)`` of ``tokens (N,)`` (values < 256) for order-``order`` contexts in
    windows of ``n_ctx + 1`` tokens (see module doc); ``(nan, nan)`` when no window has a target."""
    L = n_ctx + 1
    n_windows = len(tokens) // L
    M = n_ctx - order + 1  # targets per window: positions order … n_ctx
    if n_windows == 0 or M < 1:
        return float("nan"), float("nan")
    w = np.asarray(tokens[: n_windows * L], dtype=np.int64).reshape(n_windows, L)
    code = np.zeros((n_windows, M), dtype=np.int64)  # code[:, m]: context ending at m + order − 1
    for d in range(order):
        code = code * 256 + w[:, d : d + M]
    match = (code[:, :, None] == code[:, None, :]) & np.tri(M, M, -1, dtype=bool)  # earlier, same
    recurs = match.any(axis=2)  # (W, M)
    latest = (M - 1) - np.argmax(match[:, :, ::-1], axis=2)  # latest earlier occurrence
    target = w[:, order:]  # the token after each context: (W, M)
    copied = np.take_along_axis(target, latest, axis=1) == target
    n_recur = int(recurs.sum())
    return float(recurs.mean()), float((copied & recurs).sum() / max(n_recur, 1))
