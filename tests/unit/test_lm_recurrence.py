"""Context recurrence (can an in-context lookup answer a source?) against a plain loop and closed cases."""

from __future__ import annotations

import numpy as np
import pytest

from entropic_bound.language_models.corpora.recurrence import context_recurrence


def loop_recurrence(tokens: np.ndarray, order: int, n_ctx: int) -> tuple[float, float]:
    """The definition, written as loops: each target's context looked up backwards in its window."""
    recurs = right = total = 0
    for start in range(0, len(tokens) - n_ctx, n_ctx + 1):
        w = tokens[start : start + n_ctx + 1]
        for i in range(order - 1, n_ctx):  # the context ending at i predicts w[i + 1]
            total += 1
            for j in range(i - 1, order - 2, -1):
                if tuple(w[j - order + 1 : j + 1]) == tuple(w[i - order + 1 : i + 1]):
                    recurs += 1
                    right += int(w[j + 1] == w[i + 1])
                    break
    return recurs / total, right / max(recurs, 1)


@pytest.mark.parametrize("V,order,n_ctx", [(2, 1, 8), (4, 2, 32), (4, 3, 32), (8, 2, 16), (16, 3, 12)])
def test_vectorised_recurrence_equals_the_loop(V, order, n_ctx):
    tokens = np.random.default_rng(V * 10 + order).integers(0, V, size=(n_ctx + 1) * 40)
    assert context_recurrence(tokens, order, n_ctx) == pytest.approx(loop_recurrence(tokens, order, n_ctx))


def test_closed_cases():
    # period 3, order 2: a window's 31 targets see 3 new contexts, then every context recurs and the
    # copy is right
    periodic = np.tile([0, 1, 2], 33)
    recurs, right = context_recurrence(periodic, 2, 32)
    assert recurs == pytest.approx(28 / 31) and right == 1.0
    distinct = np.arange(33 * 3) % 256  # no context ever repeats in a window
    assert context_recurrence(distinct, 1, 32) == (0.0, 0.0)
    assert np.isnan(context_recurrence(np.zeros(10, dtype=int), 2, 32)[0])  # no whole window
