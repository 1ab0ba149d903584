"""The report as a browser shows it: headless system Chromium driven by Playwright, at 1,400 px.

A tiny report (one experiment, a wide and a long table, deeply nested evidence, a boundary, two
figures) must stay within the height bound, have no table wider than the page (none scrolls
sideways), load every image at no less than half its natural size, resolve every in-page link
and show every evidence value whole. The quick report's content (its verdicts, notes, tables and
figure sizes, tests/data/quick_report_shape.json.gz) laid out by today's page code stays within
the height bound at 1,280 px.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tools.browser_check import chromium_path

from entropic_bound.experiments.framework.verdict import Analysis, Verdict
from entropic_bound.plotting import figure_grid
from entropic_bound.report.format import number
from entropic_bound.report.writer import ExperimentReport, ordered_verdicts, verdicts_json

pytest.importorskip("playwright.sync_api", reason="the [test] extra installs playwright")
pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="needs the system chromium (.ci/run installs it)"
)

HEIGHT_BOUND = 25_000
QUICK_SHAPE = Path(__file__).resolve().parents[1] / "data" / "quick_report_shape.json.gz"


def _figure(ncols: int):
    fig, axes = figure_grid(1, ncols)
    for i, ax in enumerate(axes[0]):
        ax.plot(np.arange(10), np.arange(10) ** (i + 1), marker="o", label=f"series {i}")
        ax.set_xlabel("rank r")
        ax.set_ylabel("excess risk")
        ax.legend()
    return fig


def _long_evidence() -> dict:
    per_setting = {str(k): {"rate": 1 / k, "runs": k, "ci": [0.1 * k, 0.2 * k]} for k in (1, 2, 16, 32)}
    return {
        "median_ratio": 1.0062788177092798,
        "q10": 0.99,
        "q90": 1.02,
        "runs": 48,
        "by_setting": per_setting,
        "rho_per_run": [float(x) for x in np.linspace(-1, 1, 60)],
        "cells": [{"n": n, "sigma": 0.1 * n, "verdict": "confirmed"} for n in range(12)],
        "very_long_key_name_that_goes_on_and_on_to_test_wrapping_of_the_evidence_table": "x" * 300,
    }


def _tiny_report(out):
    from entropic_bound.pipeline import configure
    from entropic_bound.plotting import to_png
    from entropic_bound.report.html import render_report
    from entropic_bound.report.writer import csv_text

    exp = configure("E1", "quick")
    wide = pd.DataFrame(
        {f"a_rather_long_column_name_{i}": np.random.default_rng(i).random(200) for i in range(40)}
    )
    robustness = {
        "settings": [
            {"setting": {"c": c}, "verdict": "confirmed" if c < 1 else "refuted", "statistic": c}
            for c in (0.5, 1.0, 2.0)
        ],
        "robust": False,
        "holds_when": "c=0.5",
    }
    verdicts = [
        Verdict("C1", "confirmed", "median ratio in [0.9, 1.1]", _long_evidence(), "E1", "the bound holds"),
        Verdict(
            "C2", "refuted", "a criterion", {"summary": "worst excess 0.5 at r = r*"}, "E1", "x", robustness
        ),
    ]
    analysis = Analysis(
        results=wide, verdicts=verdicts, tables={"wide": wide, "short": wide.head(5)}, notes=["n = 8"]
    )
    figures = {"four_panels": _figure(4), "one_panel": _figure(1)}
    files = {}
    for name, fig in figures.items():
        (out / "figures").mkdir(parents=True, exist_ok=True)
        (out / "figures" / f"{name}.png").write_bytes(to_png(fig))
        files[name] = f"figures/{name}.png"
    (out / "results").mkdir(exist_ok=True)
    for name, table in {"E1": wide, "E1_wide": wide, "E1_short": wide.head(5)}.items():
        (out / "results" / f"{name}.csv").write_text(csv_text(table))
    reports = [ExperimentReport(exp, "quick", analysis, files)]
    ordered = ordered_verdicts(reports)
    (out / "verdicts.json").write_text(verdicts_json(ordered))
    page = render_report(reports, out_dir=out, store_path="runs.sqlite", verdicts=ordered)
    (out / "report.html").write_text(page)
    return out / "report.html"


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    from tools.browser_check import measure

    out = tmp_path_factory.mktemp("report")
    report = _tiny_report(out)
    return report, measure(report)


def test_page_fits_the_window_and_the_height_bound(measured):
    report, m = measured
    assert m["height"] <= HEIGHT_BOUND
    assert m["scroll_width"] <= m["width"], m["overflow"]
    assert m["overflow"] == []
    assert m["bytes"] <= 2 * 2**20


def test_no_table_is_wider_than_the_page(measured):
    """The 40-column table shows transposed; evidence tables, opened, wrap: nothing scrolls sideways."""
    report, m = measured
    assert m["wide_tables"] == []
    assert "shown transposed: 40 columns" in report.read_text()


def test_every_image_loads_at_no_less_than_half_its_size(measured):
    _, m = measured
    assert len(m["images"]) == 2
    for img in m["images"]:
        assert img["complete"] and img["natural"] > 0, img
        assert img["shown"] >= img["natural"] / 2, img


def test_every_in_page_link_resolves(measured):
    _, m = measured
    assert m["broken_links"] == []


def test_evidence_is_shown_whole(measured):
    report, m = measured
    verdicts = json.loads((report.parent / "verdicts.json").read_text())
    text = m["evidence_text"][0]
    evidence = verdicts["C1"]["evidence"]
    assert "x" * 300 in text
    for value in evidence["rho_per_run"]:
        assert number(value, digits=4) in text
    for entry in evidence["by_setting"].values():
        assert number(entry["rate"], digits=4) in text
    assert text.count("confirmed") == 12  # every record of the list of cells


def test_large_tables_are_previews_linking_the_full_csv(measured):
    report, _ = measured
    page = report.read_text()
    assert page.count("<tr>") < 200  # 200-row tables are not inlined whole
    assert "results/E1_wide.csv" in page and "first 10 of 200 rows" in page
    assert "figures/four_panels.png" in page and "base64" not in page


def _quick_shaped_report(out: Path) -> Path:
    """The quick report's content (see tests/unit/report_shape.py) as today's code lays it out,
    each figure a blank PNG of the size the quick report drew."""
    from PIL import Image

    from entropic_bound.pipeline import configure
    from entropic_bound.report.html import render_report

    shape = json.loads(gzip.decompress(QUICK_SHAPE.read_bytes()))
    (out / "figures").mkdir(parents=True, exist_ok=True)
    reports = []
    for e in shape["experiments"]:
        files = {}
        for name, (width, height) in e["figures"].items():
            Image.new("RGB", (width, height), "white").save(out / "figures" / f"{name}.png")
            files[name] = f"figures/{name}.png"
        tables = {
            name: pd.DataFrame(t["head"]["data"], columns=t["head"]["columns"])
            for name, t in e["tables"].items()
        }
        results = pd.DataFrame(index=range(e["runs"]))
        analysis = Analysis(results=results, verdicts=[], tables=tables, notes=e["notes"])
        reports.append(ExperimentReport(configure(e["name"], e["scale"]), e["scale"], analysis, files))
    page = render_report(reports, out_dir=out, store_path="runs.sqlite", verdicts=shape["verdicts"])
    (out / "report.html").write_text(page)
    return out / "report.html"


def test_the_quick_reports_content_fits_the_height_bound_at_1280_px(tmp_path):
    from tools.browser_check import measure

    m = measure(_quick_shaped_report(tmp_path), width=1280)
    assert len(m["images"]) >= 20 and m["broken_links"] == []
    assert m["height"] <= HEIGHT_BOUND, m["height"]
