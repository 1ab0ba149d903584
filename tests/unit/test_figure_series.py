"""Figures whose series can be told apart and whose text says only what is drawn: E7's corpora
(twelve of them, no two drawn alike), E2's init scales, E4's floors, inspect's sink threshold."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgb

from entropic_bound.experiments.e7_language.plots import (
    plot_loss_curves,
    plot_rank_vs_complexity,
    plot_rank_vs_progress,
    plot_structure,
)
from entropic_bound.inspect.mixers import SINK_THRESHOLD
from entropic_bound.inspect.plots import head_heatmap
from entropic_bound.plotting import series_styles, sweep_colour

CORPORA = [
    ("tinyshakespeare", "natural"),
    ("pydoc_prose", "natural"),
    ("python_stdlib", "code"),
    ("lagcopy-L4", "synthetic"),
    ("shakespeare-kgram4", "synthetic"),
    ("shakespeare-kgram2", "synthetic"),
    ("markov_order1", "synthetic"),
    ("markov_order3", "synthetic"),
    ("mqar-p2r", "synthetic"),  # a registered recall control
    ("mqar-16", "synthetic"),
    ("lagcopy-L8", "synthetic"),
    ("random_walk", "synthetic"),
]


def _look(line) -> tuple:
    return (to_rgb(line.get_color()), line.get_marker(), line.get_linestyle())


def _labelled(ax) -> dict[str, tuple]:
    return {line.get_label(): _look(line) for line in ax.get_lines() if not line.get_label().startswith("_")}


def test_series_styles_never_repeat_even_past_the_palette():
    names = [f"series {i}" for i in range(40)]
    looks = series_styles(names)
    assert len({(s["color"], s["marker"], s["ls"]) for s in looks.values()}) == 40
    assert len({looks[n]["color"] for n in names[:12]}) == 12  # the first twelve: twelve colours


def test_e7_loss_curves_draw_every_corpus_its_own_way_and_explain_only_what_is_drawn():
    runs = pd.DataFrame(
        [
            {"run_id": f"{name}-{seed}", "corpus": name, "seed": seed, "learned": True, "reference_bits": 2.0}
            for name, _ in CORPORA
            for seed in (0, 1)
        ]
    )
    curves = {
        rid: {
            "curve_step": [1, 10, 100],
            "batch_loss": [3.0, 2.0, 1.5],
            "step": [1, 10, 100],
            "val_loss": [3, 2, 1.6],
        }
        for rid in runs["run_id"]
    }
    fig = plot_loss_curves(runs, curves)
    looks = _labelled(fig.axes[0])
    assert set(looks) == {name for name, _ in CORPORA}
    assert len(set(looks.values())) == len(CORPORA)
    assert "set aside" not in fig.get_suptitle()  # every run learned: no dotted line to explain
    key = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert key == ["learned run", "reference (bits/token)"]
    runs.loc[0, "learned"] = False
    fig = plot_loss_curves(runs, curves)
    assert "dotted: set aside" in fig.get_suptitle()
    assert "set aside as not learned" in [t.get_text() for t in fig.axes[1].get_legend().get_texts()]


def test_e7_rank_figures_give_each_corpus_a_distinct_look_and_say_what_the_error_bars_are():
    corpora = pd.DataFrame(
        [
            {"name": name, "kind": kind, "rank": 3.0 + i, "rank_sd": 0.5}
            | {"information": 1.0 + i, "compression": 2.0, "mixing_known": 5.0, "mixing_data": 6.0}
            for i, (name, kind) in enumerate(CORPORA)
        ]
    )
    fig = plot_rank_vs_complexity(corpora, "kernel rank")
    containers = fig.axes[0].containers  # one errorbar per corpus
    looks = {c.get_label(): _look(c.lines[0]) for c in containers}
    assert len(looks) == len(CORPORA) and len(set(looks.values())) == len(CORPORA)
    assert "± 1 sd over learned seeds" in fig.get_suptitle()
    points = pd.DataFrame(
        [
            {
                "run_id": f"{name}-0",
                "corpus": name,
                "progress": p,
                "rank": 2.0 + p,
                "step": np.log(10 + 90 * p),
            }
            for name, _ in CORPORA
            for p in (0.0, 0.5, 1.0)
        ]
    )
    fig = plot_rank_vs_progress(points)
    looks = _labelled(fig.axes[0])
    assert len(looks) == len(CORPORA) and len(set(looks.values())) == len(CORPORA)


def test_e7_head_structure_names_the_sources_left_of_the_dashes_and_keys_the_dot_colours():
    rows = []
    for source, kind in [
        ("text:tinyshakespeare", "natural"),
        ("kgram:k4", "synthetic"),
        ("mqar-p2r", "synthetic"),  # a registered recall control
    ]:
        for head, category in enumerate(["content", "sink", "local"]):
            rows.append(
                {"source": source, "kind": kind, "run_id": source, "category": category, "head": head}
            )
    heads = pd.DataFrame(rows).assign(logit_field_rank_90=4.0)
    fig = plot_structure(heads)
    assert "left of the dashed line: natural, synthetic sources, right: controls" in fig.get_suptitle()
    keyed = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert {"content head", "sink head", "local head"} <= set(keyed)


def _lab(colour: str) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour: distances there are what the eye tells apart."""
    rgb = np.array(to_rgb(colour))
    linear = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = to_xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_e2_init_scales_a_decade_apart_have_colours_far_apart():
    inits = [1e-3, 1e-2, 0.1, 1.0]  # E2's init scales
    gaps = [
        np.linalg.norm(_lab(sweep_colour(a, "init")) - _lab(sweep_colour(b, "init")))
        for a, b in zip(inits, inits[1:])
    ]
    assert min(gaps) > 40, gaps  # viridis drew 0.1 and 1 about 35 apart: two blues


def test_the_sink_heatmap_marks_the_threshold_and_outlines_the_sink_heads():
    scores = np.array([[0.1, 0.5], [0.31, 0.29]])
    table = pd.DataFrame(
        [{"layer": i, "head": j, "sink_score": scores[i, j]} for i in range(2) for j in range(2)]
    )
    fig = head_heatmap(table, "sink_score", threshold=(SINK_THRESHOLD, "sink head"))
    ax, bar = fig.axes
    outlined = sorted(tuple(p.get_xy()) for p in ax.patches)
    assert outlined == [(-0.5, 0.5), (0.5, -0.5)]  # (layer 1, head 0) and (layer 0, head 1)
    assert any(np.allclose(line.get_ydata(), SINK_THRESHOLD) for line in bar.get_lines())
    assert "sink head, score > 0.3" in ax.get_xlabel()


def test_e4_reference_levels_are_legend_entries_not_labels_on_top_of_each_other():
    from entropic_bound.experiments.e4_attention_teacher.plots import plot_excess_vs_rank
    from entropic_bound.pipeline import configure

    rows = [
        {"task.r_star": 2, "teacher": kind, "task.spectrum": "flat", "v": "known", "rank": r}
        | {"rel_excess": 10.0**-r, "noise_floor": 0.011, "signal": 1.0, "k0_rel_excess": 1.0}
        for kind in ("linear", "softmax")
        for r in (1, 2, 3)
    ]
    fig = plot_excess_vs_rank(configure("E4", "quick").cfg, pd.DataFrame(rows))  # ε_floor 0.01: close
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert all(not ax.texts for ax in panels)  # nothing written on the lines
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"ε_floor", "noise σ² / signal", "K = 0 model", "r = r*"} <= set(labels)
    looks = {
        line.get_label(): (line.get_color(), str(line.get_linestyle())) for line in panels[0].get_lines()
    }
    assert looks["ε_floor"] != looks["noise σ² / signal"]


def _paper_sized_heads(n_sources: int = 28) -> pd.DataFrame:
    """A head table the size of the paper E7 figure: n_sources sources, 3 models of 8 heads each."""
    categories = ["local", "positional", "content", "sink"]
    return pd.DataFrame(
        [
            {
                "source": f"docstrings_of_package_{i}",
                "kind": "natural",
                "run_id": f"{i}-{seed}",
                "category": categories[(i + head) % 4],
                "logit_field_rank_90": 2.0 + head,
            }
            for i in range(n_sources)
            for seed in range(3)
            for head in range(8)
        ]
    )


def test_e7_structure_figure_keeps_every_source_name_apart_at_the_paper_count():
    """Rotated tick labels are legible when the ticks lie at least 1.5 lines apart across the text."""
    fig = plot_structure(_paper_sized_heads())
    fig.draw_without_rendering()
    ax = fig.axes[1]
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert len(labels) == 28
    points_per_px = 72 / fig.dpi
    xs = ax.transData.transform([(x, 0) for x in ax.get_xticks()])[:, 0] * points_per_px
    across = np.diff(xs).min() * np.sin(np.radians(labels[0].get_rotation()))
    assert across >= 1.5 * labels[0].get_fontsize()


def test_e7_loss_curves_keep_their_panels_with_a_paper_sized_legend():
    """26 corpora: the legend goes below the panels and the panels keep their height."""
    names = [f"corpus_number_{i}" for i in range(26)]
    runs = pd.DataFrame(
        [{"run_id": n, "corpus": n, "seed": 0, "learned": True, "reference_bits": 2.0} for n in names]
    )
    curves = {
        n: {"curve_step": [1, 10], "batch_loss": [3.0, 2.0], "step": [1, 10], "val_loss": [3, 2]}
        for n in names
    }
    fig = plot_loss_curves(runs, curves)
    fig.draw_without_rendering()
    assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == 26
    for ax in fig.axes:
        assert ax.get_position().height * fig.get_figheight() >= 1.5  # inches


def test_e7_rank_figure_says_when_a_measure_is_unknown_for_every_corpus():
    corpora = pd.DataFrame(
        [
            {"name": name, "kind": "natural", "rank": 3.0, "rank_sd": 0.5, "information": 1.0}
            | {"compression": 2.0, "mixing_known": np.nan, "mixing_data": 4.0}
            for name in ("tinyshakespeare", "pydoc_prose")
        ]
    )
    fig = plot_rank_vs_complexity(corpora, "kernel rank")
    assert [ax.get_xlabel().split()[0] for ax in fig.axes] == ["information", "compression", "mixing_data"]
    assert "not known for these corpora: mixing_known" in fig.get_suptitle()
