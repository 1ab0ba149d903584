"""The logit field taken apart: synthetic heads built from known parts give those parts back."""

from __future__ import annotations

import numpy as np
import pytest

from entropic_bound.inspect.logit_decomposition import PARTS, centre, decompose

B, N = 16, 32


def softmax_rows(logits: np.ndarray, causal: bool) -> np.ndarray:
    """Attention ``(B, n, n)`` of ``logits (B, n, n)`` under the mask (``j ≤ i`` when causal)."""
    n = logits.shape[-1]
    allowed = np.tril(np.ones((n, n), bool)) if causal else np.ones((n, n), bool)
    z = np.where(allowed, logits, -np.inf)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def mask_of(causal: bool) -> np.ndarray:
    return np.tril(np.ones((N, N), bool)) if causal else np.ones((N, N), bool)


def known_parts(rng: np.random.Generator, causal: bool) -> dict[str, np.ndarray]:
    """One field of each kind ``(B, n, n)``, each already in the form the split identifies (row-centred,
    nothing of the earlier parts in it): a per-window sink column; a band ``b(i − j)`` within ±2; a
    table shared by the windows that sums to 0 along the band; content of rank 3 per window with zero
    window mean. Only their sum's softmax reaches :func:`decompose`."""
    mask = mask_of(causal)
    after_sink = mask & (np.arange(N) > 0)  # every key but the sink column
    i, j = np.indices((N, N))
    column = np.zeros((B, N, N))
    column[:, :, 0] = 3.0 + rng.normal(size=(B, N))
    offset = np.abs(i - j) if not causal else i - j
    band = np.select([offset == 0, offset == 1, offset == 2], [2.0, -1.0, 0.5], 0.0)
    off_band = after_sink & (np.abs(i - j) > 2)
    position = centre(np.sin(0.3 * i + 0.7 * j) + 0.1 * j, off_band)
    x = rng.normal(size=(B, N, 3))
    content = x @ rng.normal(size=(3, 3)) @ x.transpose(0, 2, 1)  # (B, n, n) rank 3 per window
    content = centre(content - content.mean(axis=0), after_sink)
    shape = (B, N, N)
    return {
        "sink": centre(column, mask),
        "band": np.broadcast_to(centre(band, after_sink), shape),
        "position": np.broadcast_to(position, shape),
        "content": content,
    }


@pytest.mark.parametrize("causal", [True, False])
def test_the_parts_add_up_and_are_orthogonal(causal):
    rng = np.random.default_rng(0)
    logits = sum(known_parts(rng, causal).values())
    d = decompose(softmax_rows(logits, causal), causal=causal)
    parts = [
        d.sink,
        np.broadcast_to(d.band, d.field.shape),
        np.broadcast_to(d.position, d.field.shape),
        d.content,
    ]
    np.testing.assert_allclose(sum(parts), d.field, atol=1e-9)
    for a in range(4):
        for b in range(a + 1, 4):
            assert abs((parts[a] * parts[b]).sum()) < 1e-6 * (d.field**2).sum()
    assert d.shares(net=False).sum() == pytest.approx(1.0)
    assert d.shares().sum() == pytest.approx(1.0)


@pytest.mark.parametrize("kind", PARTS)
def test_a_head_made_of_one_part_is_all_that_part(kind):
    rng = np.random.default_rng(1)
    logits = known_parts(rng, True)[kind]
    d = decompose(softmax_rows(logits, True), causal=True)
    assert dict(zip(PARTS, d.shares()))[kind] == pytest.approx(1.0, abs=1e-9)
    if kind != "content":
        assert d.columns()["decomposition_content_rank"] == 0


@pytest.mark.parametrize("causal", [True, False])
def test_each_known_part_is_recovered_from_their_sum(causal):
    parts = known_parts(np.random.default_rng(2), causal)
    d = decompose(softmax_rows(sum(parts.values()), causal), causal=causal)
    found = {"sink": d.sink, "band": d.band, "position": d.position, "content": d.content}
    for kind in PARTS:
        truth = parts[kind] if kind in ("sink", "content") else parts[kind][0]
        assert np.abs(found[kind] - truth).max() < 1e-8 * np.abs(truth).max(), kind
    energy = {k: (v**2).sum() for k, v in parts.items()}
    expected = np.array([energy[k] for k in PARTS]) / sum(energy.values())
    np.testing.assert_allclose(d.shares(net=False), expected, rtol=1e-8)
    assert d.columns()["decomposition_content_rank"] <= 5  # rank 3, plus what the mask and centring add


def test_a_pure_content_head_has_no_structure_beyond_chance():
    rng = np.random.default_rng(3)
    d = decompose(softmax_rows(rng.normal(size=(B, N, N)), True), causal=True)
    shares = dict(zip(PARTS, d.shares()))
    assert shares["content"] > 0.95, shares
    raw = dict(zip(PARTS, d.shares(net=False)))
    assert raw["position"] == pytest.approx(1 / B, rel=0.3)  # what a shared table takes from noise
    assert raw["sink"] == pytest.approx(2 / N, rel=0.3)  # one key of ~N/2 per row


def test_a_pure_sink_head_is_all_sink_and_its_share_reads_one():
    i = np.arange(N)
    logits = np.zeros((B, N, N))
    logits[:, :, 0] = 5.0 + 0.1 * i  # every query puts most of its attention on token 0
    d = decompose(softmax_rows(logits, True), causal=True)
    assert d.shares()[0] == pytest.approx(1.0, abs=1e-9)
    assert d.columns()["decomposition_sink_rank"] >= 1
