"""One head's realised logit field taken apart: sink column, local band, position-only part, content.

**The field.** A head's pre-softmax logits are seen only through its attention ``A (B, n, n)`` over
``B`` text windows, and softmax forgets each query's constant: the identified field is
``L_ij = log A_ij`` centred over the keys query ``i`` sees (``j ≤ i`` when causal). Keys whose attention
underflowed to 0 in any window are left out of that query in every window, so that one key mask ``M``
serves all windows. Everything below lives in that space of row-centred fields (the gauge).

**The split: nested least squares in a stated order** (sequential, "type I" sums of squares), so the
parts are orthogonal and their energies ``Σ L²`` add up to the field's exactly:

1. ``sink``: each window's logits on the first key, one free value per (window, query) — a column,
   whatever its content; in the gauge, ``L_i0`` on key 0 and ``−L_i0 / (m_i − 1)`` on the query's other
   ``m_i − 1`` keys. Projecting a centred row on that column takes the key-0 entry exactly.
2. ``band``: a function ``b(i − j)`` of relative position for ``|i − j| ≤ w`` (``0 ≤ i − j ≤ w`` when
   causal), the same in every window, fitted to what the sink left.
3. ``position``: any function of absolute positions ``(i, j)`` the same in every window: the mean over
   windows of what the sink left, less the band.
4. ``content``: what is left, each window's deviation from the window mean.

Why this order and not a symmetric one: the position-only space contains the band (a band is a
function of ``(i, j)``) and the window mean of the sink column, so any other order, or a symmetric
split, would leave the band nothing or count the sink twice. The order runs from the narrowest
description (one key) to the widest (a full table shared by the windows), and the content is only what
no content-free description explains; its rank is the routing rank Appendix B asks about.

**Shares.** ``<part>_share_raw`` is the exact energy share (the four add up to 1). Fitting free
parameters takes some energy from any field, pure noise included (the position table has one
parameter per visible cell, so it takes about ``1/B`` of a content-only field), so ``<part>_share`` is
the share net of that overfit: each structural part's energy less its parameter count times the
content's residual energy per degree of freedom (clipped at 0), and ``content_share`` is the rest —
≈ 0 structure for a content-only head, ≈ 1 sink for a pure sink head.

**Ranks.** Each part's rank is the project's ``energy_threshold_rank`` (τ = 0.9; :mod:`..spectra.
estimators`) of its ``n × n`` matrix (per window for the field, sink and content, averaged over the
windows); a part with no energy (below ``1e-12`` of the window's field) has rank 0. A row-centred,
masked matrix is not a kernel: the causal mask alone gives a bilinear score of rank 1 an energy rank
of 2–3, so compare ranks between heads and controls, not with ``d_head``.

With one window nothing tells position from content (the window is its own mean): the position and
content columns are NaN there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError

BAND = 2  # ±w tokens, as ``inspect``'s locality window
LEVEL = 0.9
PARTS = ("sink", "band", "position", "content")
SUFFIXES = ("share", "share_raw", "rank")
#: The per-head columns ``inspect`` adds (with text).
DECOMPOSITION_COLUMNS = (
    *(f"decomposition_{p}_share" for p in PARTS),
    *(f"decomposition_{p}_share_raw" for p in PARTS),
    *(f"decomposition_{p}_rank" for p in PARTS),
    "decomposition_field_rank",
)
_NO_ENERGY = 1e-12  # a part below this share of its window's field energy is round-off: rank 0


@dataclass
class Decomposition:
    """One head's parts: ``field``, ``sink`` and ``content`` ``(B, n, n)``; ``band`` and ``position``
    ``(n, n)`` (the same in every window); ``dof`` the free parameters of each of :data:`PARTS`."""

    field: np.ndarray
    sink: np.ndarray
    band: np.ndarray
    position: np.ndarray
    content: np.ndarray
    dof: np.ndarray  # (4,)

    def window_energy(self) -> np.ndarray:
        """``(B, 4)`` energy of each part in each window (the shared parts once per window)."""
        B = self.field.shape[0]
        shared = [np.full(B, (self.band**2).sum()), np.full(B, (self.position**2).sum())]
        return np.stack([(self.sink**2).sum(axis=(1, 2)), *shared, (self.content**2).sum(axis=(1, 2))], 1)

    def noise_per_dof(self) -> float:
        """Residual energy per degree of freedom of the content: what one free parameter takes from noise."""
        return float((self.content**2).sum()) / self.dof[3] if self.dof[3] > 0 else 0.0

    def shares(self, *, net: bool = True) -> np.ndarray:
        """``(4,)`` share of the field's energy in each part; ``net`` takes each structural part's
        overfit out (clipped at 0) and gives it to the content."""
        energy = self.window_energy().sum(axis=0)
        return _net(energy, self.dof, self.noise_per_dof()) if net else energy / max(energy.sum(), 1e-300)

    def window_shares(self) -> np.ndarray:
        """``(B, 4)`` net shares per window, each structural part's overfit split evenly over windows."""
        dof = self.dof / self.field.shape[0]
        return np.stack([_net(e, dof, self.noise_per_dof()) for e in self.window_energy()])

    def window_ranks(self, level: float = LEVEL) -> dict[str, np.ndarray]:
        """``(B,)`` energy-threshold rank of the field, sink and content in each window."""
        scale = (self.field**2).sum(axis=(1, 2))
        return {k: _rank(getattr(self, k), scale, level) for k in ("field", "sink", "content")}

    def columns(self, level: float = LEVEL) -> dict[str, float]:
        """The :data:`DECOMPOSITION_COLUMNS` of this head."""
        out = {f"decomposition_{p}_share": v for p, v in zip(PARTS, self.shares())}
        out.update({f"decomposition_{p}_share_raw": v for p, v in zip(PARTS, self.shares(net=False))})
        ranks = {k: float(v.mean()) for k, v in self.window_ranks(level).items()}
        scale = np.array([(self.field**2).sum() / self.field.shape[0]])
        for p in ("band", "position"):
            ranks[p] = float(_rank(getattr(self, p)[None], scale, level)[0])
        out.update({f"decomposition_{p}_rank": ranks[p] for p in PARTS})
        out["decomposition_field_rank"] = ranks["field"]
        if self.field.shape[0] < 2:  # one window: what is shared by the windows is all of it
            out.update({f"decomposition_{p}_{s}": np.nan for p in ("position", "content") for s in SUFFIXES})
        return {k: float(v) for k, v in out.items()}


def _net(energy: np.ndarray, dof: np.ndarray, s2: float) -> np.ndarray:
    total = max(float(energy.sum()), 1e-300)
    structure = np.maximum(energy[:3] - dof[:3] * s2, 0.0) / total
    return np.append(structure, 1.0 - structure.sum())


def _rank(parts: np.ndarray, scale: np.ndarray, level: float) -> np.ndarray:
    """Energy-threshold rank of each ``(n, n)`` matrix in ``parts (B, n, n)``; 0 below round-off."""
    from ..spectra.estimators import energy_threshold_rank

    s = np.linalg.svd(parts, compute_uv=False)  # (B, n)
    empty = (parts**2).sum(axis=(1, 2)) <= _NO_ENERGY * np.maximum(scale, 1e-300)
    return np.where(empty, 0.0, energy_threshold_rank(s, tau=level))


def shared_mask(A: np.ndarray, *, causal: bool) -> np.ndarray:
    """Keys each query may see in every window: ``(n, n)`` bool (``j ≤ i`` when causal, ``A > 0`` always)."""
    n = A.shape[-1]
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    return allowed & (A > 0).all(axis=0)


def centre(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``values (..., n, n)`` centred over each query's visible keys, 0 off the mask."""
    m = np.maximum(mask.sum(axis=-1, keepdims=True), 1)  # (n, 1)
    inside = np.where(mask, values, 0.0)
    return mask * (inside - inside.sum(axis=-1, keepdims=True) / m)


def _sink_part(field: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Projection of the centred ``field (B, n, n)`` on each window's key-0 column; and which rows have one."""
    m = mask.sum(axis=-1)  # (n,) visible keys per query
    rows = mask[:, 0] & (m >= 2)  # a lone key is all gauge: nothing to fit
    unit = centre(np.broadcast_to(np.eye(mask.shape[0])[0], mask.shape), mask)  # e_0 − 1/m per row
    coef = np.where(rows, field[..., :, 0] * m / np.maximum(m - 1, 1), 0.0)  # (B, n)
    return coef[..., None] * unit, rows


def _band_basis(mask: np.ndarray, rows: np.ndarray, width: int, causal: bool) -> np.ndarray:
    """Indicators of the offsets ``i − j`` within the band, with the sink column and each row's constant
    projected out (what the sink step leaves room for): ``(offsets, n, n)``."""
    n = mask.shape[0]
    i, j = np.indices((n, n))
    offsets = range(0 if causal else -width, width + 1)
    basis = np.stack([(i - j == d) & mask for d in offsets]).astype(float)
    basis[:, rows, 0] = 0.0  # the sink column is already spoken for
    keep = mask.copy()
    keep[rows, 0] = False
    return centre(basis, keep)


def decompose(A, *, causal: bool, width: int = BAND) -> Decomposition:
    """Take one head's attention ``A (B, n, n)`` (one window: ``(n, n)``) apart (see the module docstring)."""
    A = np.asarray(A, dtype=float)
    A = A[None] if A.ndim == 2 else A
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise DataError(f"Need attention A (B, n, n). Got {A.shape}.")
    B, n, _ = A.shape
    mask = shared_mask(A, causal=causal)
    field = centre(np.log(np.where(mask, A, 1.0)), mask)  # (B, n, n)
    sink, rows = _sink_part(field, mask)
    rest = field - sink
    mean = rest.mean(axis=0)  # (n, n): the best field shared by the windows
    basis = _band_basis(mask, rows, width, causal)  # (k, n, n)
    flat = basis.reshape(len(basis), -1)
    gram = flat @ flat.T
    coef = np.linalg.pinv(gram, rcond=1e-10) @ (flat @ mean.ravel())
    band = (coef @ flat).reshape(n, n)
    free = np.maximum(mask.sum(axis=-1) - 1 - rows, 0).sum()  # shared dims once sink and gauge are out
    band_dof = np.linalg.matrix_rank(gram) if len(basis) else 0
    dof = np.array([B * rows.sum(), band_dof, free - band_dof, (B - 1) * free], dtype=float)
    return Decomposition(field, sink, band, mean - band, rest - mean, dof)


def decompose_layers(mixers: np.ndarray, *, causal: bool, width: int = BAND) -> dict[str, np.ndarray]:
    """:data:`DECOMPOSITION_COLUMNS` ``(L, H)`` of ``mixers (B, L, H, n, n)``."""
    L, H = mixers.shape[1:3]
    out = {c: np.full((L, H), np.nan) for c in DECOMPOSITION_COLUMNS}
    for layer in range(L):
        for h in range(H):
            for c, v in decompose(mixers[:, layer, h], causal=causal, width=width).columns().items():
                out[c][layer, h] = v
    return out
