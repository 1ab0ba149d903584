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

**Content share** (what categorises). A row whose mean pattern ``P̄`` spreads over few keys cannot
move much mass with content, however completely content decides: a head that picks one of two
keys by content, half the time each, has content TV ½. The largest mean content TV any set of
windows with mean ``P̄`` can have is ``B/(B−1) · (1 − Σ_j P̄_j²)`` (TV is convex in ``M_b``, so
one-hot rows are extremal; ``B/(B−1)`` is the leave-one-out factor), the *content ceiling*.
``content_share`` = Σ content TV / Σ ceiling over the query rows (and windows): the share of the
movement the head's mean pattern allows that content actually makes — 1 for a head whose every
choice is made by content, 0 for a content-independent one, whatever the number of candidates.
A row whose windows all attend one-hot to the same key has ceiling 0 and adds nothing to either sum.

**Answer rows** (recall controls only). Where a source's answers are known to need routing (an
MQAR corpus's ``answer_mask``), ``content_tv_answers`` is the content TV over the query rows that
predict an answer token only (NaN without such rows). On episode-aligned MQAR windows routing
happens at a few rows of each window (the answer queries) and the all-row mean dilutes it below
the threshold even in a model that answers correctly (``content_share_answers`` likewise). This is not a double standard with natural
text: the control asks "can the instrument see routing where routing is known to happen", and
only a source with an answer mask can say where that is; the natural-text verdict is unchanged
and head-averaged, as C13 speaks of the realised mixer as a whole.

:func:`head_categories` names each head by the structural prior that holds its attention —
``averaging`` (near uniform), ``sink``, ``local`` — else ``content`` when ``content_share`` reaches its
threshold, else ``positional`` (content-independent, far from uniform); a head whose answer-row
score ``content_share_answers`` reaches the threshold is ``content`` whatever its all-row category.
"""

from __future__ import annotations

import numpy as np

from ...inspect import locality_mass, positional_prior_explained, sink_score, uniform_mixer
from ..names import MIN_MOVED

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


def _content_ceiling_rows(mixers: np.ndarray) -> np.ndarray:
    """Per-row largest mean content TV a head with this mean pattern can have: ``(B, ..., n, n) → (..., n)``."""
    B = mixers.shape[0]
    mean = mixers.mean(axis=0)
    return B / (B - 1) * np.clip(1.0 - (mean**2).sum(axis=-1), 0.0, None)


def _share(tv: np.ndarray, ceiling: np.ndarray) -> np.ndarray:
    """Σ TV / Σ ceiling (0 where the ceiling sums to 0: identical one-hot rows, no content)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ceiling > 0, tv / np.where(ceiling > 0, ceiling, 1.0), 0.0)


def _selected_rows(mixers: np.ndarray, rows: np.ndarray | None, causal: bool) -> np.ndarray | None:
    """The selected ``(B, n)`` query rows, or None when there are none (or one window only)."""
    if rows is None or mixers.shape[0] < 2:
        return None
    sel = np.asarray(rows, dtype=bool).copy()
    if causal:
        sel[:, 0] = False
    return sel if sel.any() else None


CONTENT_SCORES = (
    "content_tv",
    "content_tv_max",
    "content_tv_answers",
    "content_share",
    "content_share_answers",
)


def content_scores(
    mixers: np.ndarray, rows: np.ndarray | None = None, *, causal: bool
) -> dict[str, np.ndarray]:
    """Every content score of ``mixers (B, ..., n, n)`` from one pass over the per-row TVs:
    ``{name: (...)}`` for :data:`CONTENT_SCORES` (see module doc). All NaN with fewer than two
    windows; the ``_answers`` scores NaN when ``rows (B, n)`` selects no query row (query 0 of a
    causal head never is)."""
    mixers = np.asarray(mixers, dtype=np.float64)
    nan = np.full(mixers.shape[1:-2], np.nan)
    if mixers.shape[0] < 2:
        return dict.fromkeys(CONTENT_SCORES, nan)
    tv, ceiling = _content_tv_rows(mixers), _content_ceiling_rows(mixers)  # (B, ..., n), (..., n)
    window_mean = tv.mean(axis=0)  # (..., n)
    out = {
        "content_tv": _query_mean(tv, causal).mean(axis=0),
        "content_tv_max": (window_mean[..., 1:] if causal else window_mean).max(axis=-1),
        "content_share": _share(_query_mean(window_mean, causal), _query_mean(ceiling, causal)),
        "content_tv_answers": nan,
        "content_share_answers": nan,
    }
    sel = _selected_rows(mixers, rows, causal)
    if sel is not None:
        tv_sel = np.moveaxis(tv, -1, 1)[sel].mean(axis=0)  # (...)
        ceiling_sel = np.moveaxis(np.broadcast_to(ceiling[None], tv.shape), -1, 1)[sel].mean(axis=0)
        out["content_tv_answers"], out["content_share_answers"] = tv_sel, _share(tv_sel, ceiling_sel)
    return {k: out[k] for k in CONTENT_SCORES}


def content_share(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """Content TV over its ceiling, summed over query rows (see module doc): ``(...)`` in [0, 1];
    NaN with fewer than two windows."""
    return content_scores(mixers, causal=causal)["content_share"]


def content_tv(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """Mean total variation between each window's mixer and the leave-one-out mean mixer: ``(...)``;
    NaN with fewer than two windows (no position-only baseline to compare with)."""
    return content_scores(mixers, causal=causal)["content_tv"]


def content_tv_rows(mixers: np.ndarray, rows: np.ndarray | None, *, causal: bool) -> np.ndarray:
    """Content TV over the query rows ``rows (B, n)`` (True where the row predicts an answer)."""
    return content_scores(mixers, rows, causal=causal)["content_tv_answers"]


def content_share_rows(mixers: np.ndarray, rows: np.ndarray | None, *, causal: bool) -> np.ndarray:
    """:func:`content_share` over the query rows ``rows (B, n)`` only."""
    return content_scores(mixers, rows, causal=causal)["content_share_answers"]


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
        **content_scores(mixers, answer_rows, causal=causal),
    }


def head_categories(
    scores: dict[str, np.ndarray],
    *,
    content: float,
    sink: float,
    locality: float,
    structure: float,
    min_moved: float = MIN_MOVED,
) -> np.ndarray:
    """Each head's category (``CATEGORIES``), elementwise over the score arrays, first match wins:

    ``averaging`` — within ``structure`` (total variation) of uniform attention (its sink score and
    locality mass are then those of uniform attention on short windows, not a learned prior);
    ``sink`` — sink score > ``sink``; ``local`` — locality mass ≥ ``locality`` (the band holds the
    attention, whatever content decides inside it); ``content`` — ``content_share ≥ content``, most
    of the movement its mean pattern allows is made by content; ``positional`` — content-independent
    and far from uniform; content must also move at least ``min_moved`` of the mass (content TV).
    A NaN score (one window) counts as content: no evidence of independence.
    Last, where ``scores`` has a finite ``content_share_answers`` (a recall control's answer rows)
    that reaches ``content``, the head is ``content``: it routes where routing is known to happen. A
    source without an answer mask (natural text) has NaN there and keeps its category. Scores
    stored before the content share existed fall back to the content TV (``content_tv``, ``_answers``).
    """
    share = "content_share" if "content_share" in scores else "content_tv"
    ctv = np.asarray(scores[share], dtype=float)
    moved = np.asarray(scores["content_tv"], dtype=float)
    out = np.full(ctv.shape, "positional", dtype=object)
    out[~(ctv < content) & ~(moved < min_moved)] = "content"  # NaN (one window) counts as content
    out[np.asarray(scores["locality_mass"], dtype=float) >= locality] = "local"
    out[np.asarray(scores["sink_score"], dtype=float) > sink] = "sink"
    out[np.asarray(scores["uniform_tv"], dtype=float) < structure] = "averaging"
    answer_key = "content_share_answers" if "content_share_answers" in scores else "content_tv_answers"
    if answer_key in scores:
        answers = np.broadcast_to(np.asarray(scores[answer_key], dtype=float), ctv.shape)
        moved = np.broadcast_to(np.asarray(scores.get("content_tv_answers", answers), dtype=float), ctv.shape)
        with np.errstate(invalid="ignore"):
            out[(answers >= content) & (moved >= min_moved)] = "content"  # NaN (no answer rows): False
    return out
