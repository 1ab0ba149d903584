"""The zoo's size sections: Gu et al.'s inputs, per-window statistics with intervals over windows, the
figure against parameter count, and the sentences generated from the intervals."""

from __future__ import annotations

import numpy as np
import pytest

from entropic_bound.zoo.sink_inputs import INPUTS, input_ids, sink_head_share
from entropic_bound.zoo.size_page import control_sentence, sink_input_lines, size_sentence, trend_lines
from entropic_bound.zoo.size_trend import STATISTICS, TrendPoint, summarise, trend_figure, window_values


def test_the_inputs_keep_the_start_tokens_and_differ_only_where_stated():
    natural = np.arange(3 * 10).reshape(3, 10) + 100  # (B, n): [CLS]-like 100.. first, [SEP]-like last
    ids = input_ids(natural, prefix=[1], suffix=[2], vocab=50, seed=0)
    assert set(ids) == set(INPUTS) and all(v.shape == natural.shape for v in ids.values())
    for kind in ("random", "repeated"):
        assert (ids[kind][:, 0] == natural[:, 0]).all() and (ids[kind][:, -1] == natural[:, -1]).all()
    assert (ids["random"][:, 1:-1] < 50).all()
    assert (ids["repeated"][:, 1:-1] == natural[:, 1:2]).all()  # each window's first text token
    assert (ids["repeated_bare"] == natural[:, 1:2]).all()  # no start token: one token throughout


def test_sink_head_share_thresholds_each_window_and_head():
    B, L, H, n = 2, 1, 2, 4
    mixers = np.full((B, L, H, n, n), 0.0)
    mixers[..., :, 0] = 1.0  # every head puts everything on token 0 ...
    mixers[1, 0, 1] = np.eye(n)  # ... but head 1 in window 1 attends to itself (score 1/4 < 0.3)
    np.testing.assert_allclose(sink_head_share(mixers), [1.0, 0.5])


def _causal_mixers(rng, B=6, L=1, H=3, n=12):
    logits = rng.normal(size=(B, L, H, n, n))
    logits[:, :, 0, :, 0] += 6.0  # head 0 is a sink head
    logits = np.where(np.tril(np.ones((n, n), bool)), logits, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_window_values_and_their_intervals_over_windows():
    mixers = _causal_mixers(np.random.default_rng(0))
    values = window_values(mixers, causal=True, width=2)
    assert all(v.shape == (6, 3) for v in values.values())
    assert values["sink_energy"][:, 0].min() > 0.5 > values["sink_energy"][:, 1:].max()
    stats = summarise(values, np.array([1 / 3] * 6), np.array([4, 5, 6]))
    assert set(stats) == {key for key, _ in STATISTICS}
    for value, (low, high) in stats.values():
        assert low <= value + 1e-12 and value <= high + 1e-12
    assert stats["static_rank"][0] == 5 and stats["sink_heads"] == (
        pytest.approx(1 / 3),
        pytest.approx((1 / 3, 1 / 3)),
    )


def _point(name, parameters, value, half=0.1):
    return TrendPoint(name, parameters, {k: (value, (value - half, value + half)) for k, _ in STATISTICS})


def test_sentences_read_the_intervals():
    rising = [_point("a", 10, 1.0), _point("b", 20, 2.0), _point("c", 30, 3.0)]
    assert "rises with size at every step" in size_sentence("content_rank", rising)
    falling = rising[::-1]
    falling = [TrendPoint(p.name, q.parameters, p.values) for p, q in zip(falling, rising)]
    assert "falls with size" in size_sentence("content_rank", falling)
    bumpy = [_point("a", 10, 1.0), _point("b", 20, 5.0), _point("c", 30, 3.0)]
    assert "not in order of size" in size_sentence("content_rank", bumpy)
    levelling = [_point("a", 10, 1.0), _point("b", 20, 2.0), _point("c", 30, 2.05)]
    assert "rises with size (1 of 2 steps resolved, the rest flat)" in size_sentence("sink_energy", levelling)
    flat = [_point("a", 10, 1.0), _point("b", 20, 1.05)]
    assert "no change with size that the windows resolve" in size_sentence("content_rank", flat)
    points = [
        _point("a", 10, 1.0),
        _point("a-random", 10, 2.0),
        _point("b", 20, 3.0),
        _point("b-random", 20, 3.0),
    ]
    assert "above its random control in 0 of 2 models, below in 1, not resolved in 1" in control_sentence(
        "field_rank", points
    )


def test_the_size_section_and_figure_iterate_over_whatever_models_are_given():
    points = [_point(f"m{i}", 10 ** (7 + i), float(i + 1)) for i in range(4)]
    points += [_point(f"m{i}-random", 10 ** (7 + i), 0.5) for i in range(4)]
    page = "\n".join(trend_lines(points, "figures/size.png"))
    assert all(f"| `{p.name}` |" in page for p in points) and "](figures/size.png)" in page
    assert "across the 4 trained models" in page
    from entropic_bound.plotting import to_png

    assert len(to_png(trend_figure(points, {"m0": "#000000"}))) > 1000
    shares = {"m0": {k: np.array([0.5, 0.7]) for k in INPUTS}}
    assert "| `m0` | 60% (50%–70%)" in "\n".join(sink_input_lines(shares))


def test_an_interval_that_does_not_hold_its_point_is_drawn_as_measured():
    """A window bootstrap of a statistic fitted once on all windows can lie beside its point value;
    the figure draws that interval, it does not fail on it."""
    from entropic_bound.plotting import to_png

    beside = TrendPoint("m0", 10**8, {k: (0.2, (0.3, 0.5)) for k, _ in STATISTICS})
    fig = trend_figure([beside, _point("m0-random", 10**8, 0.5)], {"m0": "#000000"})
    assert len(to_png(fig)) > 1000
    bars = [c for c in fig.axes[0].collections if len(c.get_segments())]
    assert any(np.allclose(seg[:, 1], [0.3, 0.5]) for c in bars for seg in c.get_segments())


def test_size_tick_labels_never_overlap_on_the_ladder():
    """The ladder's sizes (two encoders and four causal LMs, 110 M and 135 M a log step apart)."""
    sizes = (22.7e6, 109.5e6, 134.5e6, 268.1e6, 494e6, 1543.7e6)
    points = [_point(f"m{i}", int(s), 1.0) for i, s in enumerate(sizes)]
    fig = trend_figure(points, {})
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.transforms import Bbox

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    for ax in fig.axes[:1]:
        boxes = []
        for label in ax.get_xticklabels():
            box = label.get_window_extent(renderer)
            if label.get_text().startswith("\n"):  # its text is the lower of its two lines
                box = Bbox.from_extents(box.x0, box.y0, box.x1, (box.y0 + box.y1) / 2)
            boxes.append(box)
        assert len(boxes) == len(sizes)
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
