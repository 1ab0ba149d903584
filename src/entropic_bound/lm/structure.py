"""Content-independent structure vs content routing in realised mixers (E7, C13).

A realised mixer ``M_b`` is one head's row-stochastic ``n × n`` attention on window ``b``. Scores
take ``mixers (B, ..., n, n)`` (windows first) and return one value per head ``(...)``. Queries
that can see a single key (query 0 of a causal head) carry no choice and are left out of the
row means. Baselines, from the most to the least content-independent:

- **uniform** ``U``: equal weight on every visible key (averaging);
- **sink**: attention on the first token (:func:`entropic_bound.inspect.sink_score`);
- **local band** ``T``: the head's mean attention at each relative offset ``i − j`` over windows
  and queries, renormalised per row — a Toeplitz, content-independent mixer;
- **position-only mean mixer** ``P_{−b}``: the head's mean mixer over the *other* windows (it
  contains the sink, the band and any absolute-position pattern, and nothing that depends on the
  content of window ``b``).

Scores: ``uniform_tv`` = mean total variation ``½ Σ_j |M_b[i, j] − U[i, j]|`` (distance from
uniform); ``content_tv`` = mean total variation between ``M_b`` and ``P_{−b}`` — the share of
attention mass that the window's *content* moves (0 for a purely positional head; close to 1 for
a head that routes by content); ``band_explained`` = ``1 − Σ_b ||M_b − T||² / Σ_b ||M_b − U||²``.
With ``B`` windows ``P_{−b}`` is a mean of ``B − 1`` mixers, so ``content_tv`` carries a small
positive sampling floor for heads whose attention varies at random; use ``B ≥ 8``.
``content_tv_max`` is the largest per-query-row content TV (mean over windows): it shows routing
confined to a few rows, which the row mean dilutes; it is reported, not used to categorise.

**Answer rows** (recall controls only). Where a source's answers are known to need routing (an
MQAR corpus's ``answer_mask``), ``content_tv_answers`` is the content TV over the query rows that
predict an answer token only (NaN without such rows). On episode-aligned MQAR windows routing
happens at a few rows of each window (the answer queries) and the all-row mean dilutes it below
the threshold even in a model that answers correctly. This is not a double standard with natural
text: the control asks "can the instrument see routing where routing is known to happen", and
only a source with an answer mask can say where that is; the natural-text verdict is unchanged
and head-averaged, as C13 speaks of the realised mixer as a whole.

:func:`head_categories` names each head by the structural prior that holds its attention —
``averaging`` (near uniform), ``sink``, ``local`` — else ``content`` when ``content_tv`` reaches its
threshold, else ``positional`` (content-independent, far from uniform); a head whose answer-row
score ``content_tv_answers`` reaches the threshold is ``content`` whatever its all-row category.
"""

from __future__ import annotations

import numpy as np

from ..inspect import locality_mass, positional_prior_explained, sink_score, uniform_mixer

STRUCTURAL = ("sink", "local", "positional", "averaging")
CATEGORIES = ("content", *STRUCTURAL)


def _query_mean(values: np.ndarray, causal: bool) -> np.ndarray:
    """Mean over queries ``(..., n) → (...)``, query 0 left out when causal."""
    return values[..., 1:].mean(axis=-1) if causal else values.mean(axis=-1)


def uniform_tv(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """Mean total-variation distance of each row from uniform attention: ``(B, ..., n, n) → (...)``."""
    mixers = np.asarray(mixers, dtype=np.float64)
    tv = 0.5 * np.abs(mixers - uniform_mixer(mixers.shape[-1], causal=causal)).sum(axis=-1)  # (B, ..., n)
    return _query_mean(tv, causal).mean(axis=0)


def _content_tv_rows(mixers: np.ndarray) -> np.ndarray:
    """Per-row TV between each window's mixer and the leave-one-out mean: ``(B, ..., n, n) → (B, ..., n)``."""
    B = mixers.shape[0]
    prior = (mixers.sum(axis=0)[None] - mixers) / (B - 1)  # (B, ..., n, n)
    return 0.5 * np.abs(mixers - prior).sum(axis=-1)


def content_tv(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """Mean total variation between each window's mixer and the leave-one-out mean mixer: ``(...)``.

    NaN with fewer than two windows (no position-only baseline to compare with).
    """
    mixers = np.asarray(mixers, dtype=np.float64)
    if mixers.shape[0] < 2:
        return np.full(mixers.shape[1:-2], np.nan)
    return _query_mean(_content_tv_rows(mixers), causal).mean(axis=0)


def content_tv_max(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """The largest per-query-row content TV (mean over windows): ``(...)``; NaN with one window."""
    mixers = np.asarray(mixers, dtype=np.float64)
    if mixers.shape[0] < 2:
        return np.full(mixers.shape[1:-2], np.nan)
    rows = _content_tv_rows(mixers).mean(axis=0)  # (..., n)
    return (rows[..., 1:] if causal else rows).max(axis=-1)


def content_tv_rows(mixers: np.ndarray, rows: np.ndarray | None, *, causal: bool) -> np.ndarray:
    """Content TV over the query rows ``rows (B, n)`` (True where the row predicts an answer):
    ``(...)``; NaN when no row is selected (query 0 of a causal head never is) or with one window."""
    mixers = np.asarray(mixers, dtype=np.float64)
    shape = mixers.shape[1:-2]
    if rows is None or mixers.shape[0] < 2:
        return np.full(shape, np.nan)
    sel = np.asarray(rows, dtype=bool).copy()
    if causal:
        sel[:, 0] = False
    if not sel.any():
        return np.full(shape, np.nan)
    tv = np.moveaxis(_content_tv_rows(mixers), -1, 1)  # (B, n, ...)
    return tv[sel].mean(axis=0)


def band_mixer(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """The Toeplitz mixer of the head's mean attention per offset: ``(B, ..., n, n) → (..., n, n)``."""
    mixers = np.asarray(mixers, dtype=np.float64)
    n = mixers.shape[-1]
    i, j = np.indices((n, n))
    offset = i - j  # (n, n), in (−n, n)
    mean = mixers.mean(axis=0)  # (..., n, n)
    visible = (offset >= 0) if causal else np.ones((n, n), dtype=bool)
    band = np.zeros_like(mean)
    for d in np.unique(offset[visible]):
        cells = (offset == d) & visible
        band[..., cells] = mean[..., cells].mean(axis=-1, keepdims=True)
    band = band * visible
    return band / np.maximum(band.sum(axis=-1, keepdims=True), 1e-300)


def band_explained(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """``1 − Σ_b ||M_b − T||² / Σ_b ||M_b − U||²``; NaN for a head exactly uniform everywhere."""
    mixers = np.asarray(mixers, dtype=np.float64)
    resid = ((mixers - band_mixer(mixers, causal=causal)[None]) ** 2).sum(axis=(0, -2, -1))
    spread = ((mixers - uniform_mixer(mixers.shape[-1], causal=causal)) ** 2).sum(axis=(0, -2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(spread > 0, 1.0 - resid / np.where(spread > 0, spread, 1.0), np.nan)


def structure_summary(
    mixers: np.ndarray, *, causal: bool, window: int = 2, answer_rows: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Every structure score of ``mixers (B, ..., n, n)``: ``{name: (...)}`` (see module doc);
    ``answer_rows (B, n)`` marks the query rows that predict an answer (recall controls only)."""
    return {
        "sink_score": sink_score(mixers).mean(axis=0),
        "locality_mass": locality_mass(mixers, window).mean(axis=0),
        "positional_prior_explained": positional_prior_explained(mixers, causal=causal),
        "band_explained": band_explained(mixers, causal=causal),
        "uniform_tv": uniform_tv(mixers, causal=causal),
        "content_tv": content_tv(mixers, causal=causal),
        "content_tv_max": content_tv_max(mixers, causal=causal),
        "content_tv_answers": content_tv_rows(mixers, answer_rows, causal=causal),
    }


def head_categories(
    scores: dict[str, np.ndarray],
    *,
    content: float,
    sink: float,
    locality: float,
    structure: float,
) -> np.ndarray:
    """Each head's category (``CATEGORIES``), elementwise over the score arrays, first match wins:

    ``averaging`` — within ``structure`` (total variation) of uniform attention (its sink score and
    locality mass are then those of uniform attention on short windows, not a learned prior);
    ``sink`` — sink score > ``sink``; ``local`` — locality mass ≥ ``locality`` (the band holds the
    attention, whatever content decides inside it); ``content`` — ``content_tv ≥ content``, most of
    the remaining attention moves with the content; ``positional`` — content-independent and far
    from uniform. A NaN ``content_tv`` (one window) counts as content: no evidence of independence.
    Last, where ``scores`` has a finite ``content_tv_answers`` (a recall control's answer rows) that
    reaches ``content``, the head is ``content``: it routes where routing is known to happen. A
    source without an answer mask (natural text) has NaN there and keeps its category.
    """
    ctv = np.asarray(scores["content_tv"], dtype=float)
    out = np.full(ctv.shape, "positional", dtype=object)
    out[~(ctv < content)] = "content"
    out[np.asarray(scores["locality_mass"], dtype=float) >= locality] = "local"
    out[np.asarray(scores["sink_score"], dtype=float) > sink] = "sink"
    out[np.asarray(scores["uniform_tv"], dtype=float) < structure] = "averaging"
    if "content_tv_answers" in scores:
        answers = np.broadcast_to(np.asarray(scores["content_tv_answers"], dtype=float), ctv.shape)
        with np.errstate(invalid="ignore"):
            out[answers >= content] = "content"  # NaN (no answer rows) compares False
    return out
