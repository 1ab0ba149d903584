"""The claim-boundary table says how the verdicts fell, in one notation, and never presents the
only setting tried as a condition; table columns whose names do not say what they hold are explained."""

from __future__ import annotations

import pandas as pd

from entropic_bound.experiments.framework.robustness import SettingOutcome, summarise_boundary
from entropic_bound.report.boundary_view import across_text, boundary_table_html, confirmed_text, setting_text
from entropic_bound.report.tables import table_preview


def _rob(*outcomes, holds_when=None) -> dict:
    return summarise_boundary([SettingOutcome(s, v, stat) for s, v, stat in outcomes], holds_when)


def test_all_refuted_reads_as_such_not_as_same_verdict_everywhere_yes():
    rob = _rob(({"c": 0.5}, "refuted", 0.2), ({"c": 1.0}, "refuted", 0.3), ({"c": 2.0}, "refuted", None))
    assert across_text(rob["settings"]) == "refuted at all 3 settings"
    assert confirmed_text(rob) == "at none of the settings tried"
    page = boundary_table_html([{"claim": "C11", "robustness": rob}])
    assert "same verdict everywhere" not in page and "nowhere in the grid" not in page


def test_one_setting_is_said_as_one_setting_not_as_a_condition():
    rob = _rob(({"seeds": 1}, "confirmed", 0.9))
    assert across_text(rob["settings"]) == "one setting tried: confirmed"
    assert confirmed_text(rob) == "at the one setting tried"
    mixed = _rob(({"seeds": 1}, "confirmed", 0.9), ({"seeds": 3}, "inconclusive", None))
    assert across_text(mixed["settings"]) == "confirmed at 1 of 2, inconclusive at 1"
    assert confirmed_text(mixed) == "only with the first seed"


def test_one_notation_for_settings_and_a_labelled_statistic():
    assert (
        setting_text({"task.r_stars": [4], "c3_estimator": None})
        == "task.r_stars = 4, c3_estimator = default"
    )
    rob = _rob(({"task.r_stars": [4, 8]}, "confirmed", 0.123456), ({"task.r_stars": [2]}, "refuted", 1.5))
    page = boundary_table_html([{"claim": "C3", "robustness": rob}])
    assert "task.r_stars = 4, 8: <b" in page and "[4" not in page and "r_stars=" not in page
    assert ", statistic 0.123" in page and "(0.123)" not in page
    assert "statistic: the number the claim&#x27;s criterion compares" in page
    assert confirmed_text(rob) == "only with task.r_stars = 4, 8"


def test_most_settings_confirmed_reads_as_everywhere_but_the_misses():
    rob = _rob(
        ({"r_stars": [2, 4]}, "confirmed", 1.0),
        ({"r_stars": [2]}, "confirmed", 1.0),
        ({"r_stars": [4]}, "inconclusive", 0.0),
        holds_when="every setting tried except r_stars=[4] (inconclusive)",
    )
    assert confirmed_text(rob) == "everywhere except r_stars = 4 (inconclusive)"


def test_a_claims_own_wording_of_where_it_holds_is_kept():
    rob = _rob(
        ({"c": 0.5}, "confirmed", 1.0), ({"c": 4.0}, "refuted", 2.0), holds_when="k0-normalised, c <= 1"
    )
    assert confirmed_text(rob) == "k0-normalised, c <= 1"


def test_many_settings_fold_into_one_line_of_counts():
    rob = _rob(*[({"c": c}, "confirmed" if c < 3 else "refuted", None) for c in range(6)])
    page = boundary_table_html([{"claim": "C6", "robustness": rob}])
    assert (
        "<td>confirmed at 3 of 6, refuted at 3</td>" in page
        and "<details><summary>the 6 settings</summary>" in page
    )


def test_table_columns_are_explained_in_a_legend_and_tooltips():
    df = pd.DataFrame(
        {"c": [0.5], "pairs": [8], "ratio_k0": [0.3], "k0_lo": [0.2], "k0_hi": [0.4], "coverage": [0.93]}
    )
    html = table_preview(df, "results/E4_c6_map.csv", "E4: c6_map", "E4-c6_map")
    assert html.startswith("<details class=table id='E4-c6_map'><summary><b>E4: c6_map</b>")
    legend = html[html.index("Columns.") :]
    for column in ("ratio_k0", "k0_lo", "k0_hi", "coverage", "pairs"):
        assert f"<b>{column}</b>: " in legend
    assert "lower end of the 95 % interval of the median ratio_k0" in legend
    assert "<th title='softmax ÷ linear teacher excess risk" in html
    assert "<b>c</b>:" not in legend  # a name that says what it is needs no gloss
