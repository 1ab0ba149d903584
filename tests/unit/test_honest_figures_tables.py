"""Figures and tables that do not mislead: E6 draws no empty panel, shows a method outside its
domain by its flag rate and a confidently wrong answer in red; results tables keep every swept setting as a key (E2, E4)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from entropic_bound.experiments.e2_recovery.analysis import recovery_table
from entropic_bound.experiments.e4_attention_teacher.analysis import saturation_table
from entropic_bound.experiments.e6_predictability.plots import plot_estimates, plot_rate_heatmaps


def _rates(wrong_cell: bool = False) -> pd.DataFrame:
    """Softmax teacher: log-attention (V known: in domain, exact; V unknown: outside, all flagged)
    at n = 6 and an X1-only n = 8; the linearised method only at n = 6. With ``wrong_cell``, half the
    runs of log-attention, V unknown, n = 8, r* = 3, N = 4 claim identifiability and miss r*."""
    rows = []
    cells = [("softmax_log_attention", v, n) for v in ("known", "unknown") for n in (6, 8)]
    cells += [("softmax_linearised", "known", 6)]
    for (method, v, n), r, N in itertools.product(cells, (1, 3), (4, 48)):
        inside = method == "softmax_log_attention" and v == "known"
        wrong = (
            0.5
            if wrong_cell and (method, v, n, r, N) == ("softmax_log_attention", "unknown", 8, 3, 4)
            else 0.0
        )
        rows.append(
            {"teacher": "softmax", "method": method, "v": v, "task.n": n, "task.spectrum": "flat"}
            | {"task.r_star": r, "n_samples": N, "task.sigma": 0.0, "rate": float(inside), "runs": 2}
            | {"flagged": 0.0 if inside else 1.0 - wrong, "confident_wrong": wrong, "in_domain": inside}
        )
    return pd.DataFrame(rows)


def _panels(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>" and ax.images]


def _drawn_colour(ax, row: int, col: int) -> tuple:
    """The colour the figure shows at cell (row, col): the topmost image not masked there."""
    shown = None
    for image in ax.get_images():
        value = np.ma.masked_invalid(image.get_array())[row, col]
        if value is not np.ma.masked:
            shown = tuple(np.round(image.to_rgba(float(value)), 3))
    return shown


def test_e6_heatmaps_draw_the_cells_with_something_to_see_and_name_the_right_abstentions():
    figures = plot_rate_heatmaps(_rates(), sigma_ref=0.0)
    assert set(figures) == {"e6_rate_vs_N_softmax", "e6_rate_vs_sigma_softmax"}
    fig = figures["e6_rate_vs_N_softmax"]
    titles = {ax.get_title(): ax for ax in _panels(fig)}
    # in domain: drawn; outside it with every run flagged (the right answer): named, not drawn
    assert set(titles) == {
        "softmax log attention, V known\nn = 6, flat",
        "softmax log attention, V known\nn = 8, flat",
    }
    assert {t.get_text() for t in titles["softmax log attention, V known\nn = 6, flat"].texts} == {"1"}
    note = " ".join(fig.get_supxlabel().split())
    assert "softmax log attention, V unknown (n = 6 flat, n = 8 flat)" in note
    assert "softmax linearised, V known (n = 6 flat)" in note


def test_e6_heatmaps_draw_when_every_setting_is_a_right_abstention():
    # a reduced grid (the linearised method alone): nothing to colour, every setting named in the note
    only_abstained = _rates().query("method == 'softmax_linearised'")
    fig = plot_rate_heatmaps(only_abstained, sigma_ref=0.0)["e6_rate_vs_N_softmax"]
    fig.canvas.draw()
    assert _panels(fig) == []
    assert "softmax linearised, V known (n = 6 flat)" in " ".join(fig.get_supxlabel().split())


def test_e6_a_confidently_wrong_cell_looks_wrong_not_flagged():
    fig = plot_rate_heatmaps(_rates(wrong_cell=True), sigma_ref=0.0)["e6_rate_vs_N_softmax"]
    ax = {ax.get_title(): ax for ax in _panels(fig)}["softmax log attention, V unknown\nn = 8, flat"]
    # rows r* = 1, 3; columns N = 4, 48: the wrong cell is (1, 0), its neighbours are flagged
    wrong, flagged = _drawn_colour(ax, 1, 0), _drawn_colour(ax, 1, 1)
    assert flagged is not None and wrong is not None and wrong != flagged
    red, green, blue, _ = wrong
    assert red > 0.5 and red > 1.5 * max(green, blue)  # a red, not a grey
    assert {t.get_text() for t in ax.texts} == {"wrong 0.5", "flag 1"}
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 1 and hatched[0].get_xy() == pytest.approx((-0.5, 0.5))
    colour_bars = [a.get_xlabel() for a in fig.axes if not a.get_images()]
    assert any("confidently wrong" in label for label in colour_bars), colour_bars


def test_e6_estimates_keep_each_panel_legible():
    est = _rates().drop(columns=["rate", "flagged", "in_domain"])
    est = pd.concat(
        [
            est.assign(estimator=k, mean_estimate=est["task.r_star"] + 0.5, true_value=est["task.r_star"])
            for k in ("numerical_rank", "energy_effective_rank", "largest_gap_rank")
        ]
    )
    figures = plot_estimates(est, sigma_ref=0.0)
    assert set(figures) == {"e6_estimates_vs_r_star_softmax_n6", "e6_estimates_vs_r_star_softmax_n8"}
    for fig in figures.values():
        panels = _panels(fig)
        assert len(panels) <= 6
        for ax in panels:
            labelled = [h for h in ax.get_lines() if not h.get_label().startswith("_")]
            assert len(labelled) <= 6  # ≤ 4 (method, V) lines, the truth and the diagonal


def test_e4_saturation_rows_keep_the_logit_scale():
    rows = pd.DataFrame(
        {"teacher": "softmax", "task.r_star": 2, "task.spectrum": "flat", "v": "known"}
        | {"task.c": [0.5, 0.5, 4.0], "signal": [1.0, 3.0, 9.0], "k0_rel_excess": 1.0}
        | {"row_entropy_ratio": [0.9, 0.9, 0.2], "mean_max_attention": [0.2, 0.2, 0.9]}
    )
    table = saturation_table(rows)
    assert sorted(table["task.c"]) == pytest.approx(
        [0.5, 4.0], abs=1e-12
    )  # never 1.67, the mean over the sweep
    assert table.set_index("task.c").loc[0.5, "signal"] == pytest.approx(2.0, rel=1e-12)


def test_e2_recovery_rates_are_per_r_star():
    rows = pd.DataFrame(
        {"train.optimizer": "gd", "init_scale": 1e-3, "train.n_samples": 32, "task.spectrum": "flat"}
        | {"task.r_star": [2, 2, 4, 4], "A_numerical_rank": [2.0, 2.0, 3.0, 3.0]}
        | {"identified": True, "rel_error": 0.1}
    )
    table = recovery_table(rows)
    rates = table.set_index("r_star")["exact_numerical_rank"].to_dict()
    assert rates.keys() == {2, 4} and rates == pytest.approx({2: 1.0, 4: 0.0}, abs=1e-12)
    assert np.array_equal(table["runs"], [2, 2])
