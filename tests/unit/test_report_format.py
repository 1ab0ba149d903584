"""Output formats: verdicts.json order, CSV rows/integers/precision, readable evidence lines, plain `list`."""

import html
import json

import numpy as np
import pandas as pd
from rich.console import Console

from entropic_bound.cli.list_cmd import plain
from entropic_bound.cli.summary import verdict_table
from entropic_bound.experiments.framework.verdict import Analysis, Verdict
from entropic_bound.pipeline import EXPERIMENTS
from entropic_bound.report.evidence import evidence_html, evidence_line
from entropic_bound.report.format import natural_key, number, sorted_naturally, words
from entropic_bound.report.writer import ExperimentReport, csv_text, ordered_verdicts, verdicts_json


def _report(claims):
    verdicts = [
        Verdict(c, "confirmed", "crit", {"by_r": {"16": 1.0, "2": 2.0, "1": 3.0}}, "E1") for c in claims
    ]
    e1 = EXPERIMENTS.get("E1")
    return ExperimentReport(e1(e1.configure("quick")), "quick", Analysis(pd.DataFrame(), verdicts), {})


def test_verdicts_json_is_in_claim_order_with_numeric_keys_in_numeric_order():
    reports = [_report(["C10", "X1", "C2"]), _report(["C13", "C1", "X2"])]
    data = json.loads(verdicts_json(ordered_verdicts(reports)))
    assert list(data) == ["C1", "C2", "C10", "C13", "X1", "X2"]
    assert list(data["C1"]["evidence"]["by_r"]) == ["1", "2", "16"]
    assert data["C1"]["scale"] == "quick" and "claim" not in data["C1"]
    assert data["C1"]["standard"] is True and data["C1"]["overrides"] == {}


def test_natural_order():
    assert sorted(["C10", "X1", "C2", "C1"], key=natural_key) == ["C1", "C2", "C10", "X1"]
    assert list(sorted_naturally({"16": 0, "2": 0, "b": {"10": 0, "9": 0}})["b"]) == ["9", "10"]


def test_csv_sorted_by_parameters_integers_whole_floats_six_digits():
    df = pd.DataFrame(
        {
            "run_id": ["c", "a", "b"],
            "rank": [3.0, 1.0, 2.0],
            "steps_run": [500.0, 500.0, np.nan],
            "excess": [1 / 3, 2 / 3, 1e-12 / 7],
        }
    )
    text = csv_text(df, sort_by=["rank", "run_id"])
    back = pd.read_csv(pd.io.common.StringIO(text))
    assert list(back["rank"]) == [1, 2, 3]
    lines = text.splitlines()
    assert lines[1] == "a,1,500,0.666667"
    assert lines[2] == "b,2,,1.42857e-13"
    assert lines[3] == "c,3,500,0.333333"


def test_csv_of_a_derived_table_keeps_the_order_its_analysis_chose():
    df = pd.DataFrame({"corpus": ["b", "a", "c"], "complexity": [0.5, 1.25, 2.0]})  # sorted by complexity
    assert csv_text(df).splitlines()[1:] == ["b,0.5", "a,1.25", "c,2"]


def test_numbers_and_words_read_plainly():
    assert number(0.0012345) == "0.00123" and number(400.0) == "400" and number(None) == "—"
    assert number(float("nan")) == "—" and number(True) == "yes"
    assert words("median_rel_error_gd_small") == "median relative error GD small"
    assert words("max_rel_excess_at_or_above_r_star") == "max relative excess at or above r*"


def test_evidence_line_prefers_summary_then_template_then_numbers():
    assert evidence_line("C99", {"summary": "rate 0.9 over 12 cells", "x": 1}) == "rate 0.9 over 12 cells"
    line = evidence_line("C1", {"median_ratio": 1.00627, "q10": 0.991, "q90": 1.02, "runs": 4})
    assert "1.006" in line and "4 runs" in line and "median_ratio" not in line
    # a template whose keys are missing falls back to the first numbers, in words
    fallback = evidence_line("C1", {"excluded_diverged": 0, "rate_exact": 0.912345, "cells": 12, "by": {}})
    assert fallback == "rate exact 0.912; cells 12"


def test_evidence_html_keeps_every_value():
    evidence = {
        "a": {"b": [1.5, 2.5, 3.5], "c": [{"n": 1, "v": "yes"}, {"n": 2, "v": "no"}]},
        "long": "z" * 500,
    }
    page = evidence_html(evidence)
    for piece in ("1.5", "2.5", "3.5", "z" * 500, ">yes<", ">no<"):
        assert piece in page


def test_list_summaries_lose_their_restructuredtext_markup():
    assert (
        plain("Effective rank ``exp(H(p))`` with :math:`p_i` and `s_i`")
        == "Effective rank exp(H(p)) with p_i and s_i"
    )


def test_terminal_table_shows_every_claim_with_its_verdict():
    verdicts = {
        "C10": {"verdict": "refuted", "experiment": "E6", "evidence": {"summary": "rate 0.1"}},
        "C2": {"verdict": "confirmed", "experiment": "E1", "evidence": {"x_y": 0.5}},
    }
    console = Console(width=100, record=True)
    console.print(verdict_table(verdicts))
    text = console.export_text()
    assert text.index("C2") < text.index("C10")
    assert "refuted" in text and "rate 0.1" in text and "x y 0.5" in text


def test_claim_lines_read_nested_evidence_and_fall_back_on_other_shapes():
    c5 = {
        "by_teacher": {
            "linear": {
                "frac_at_or_above_reaching_floor": 1.0,
                "runs_at_or_above": 14,
                "min_rel_excess_below": 0.2524,
            },
            "softmax": {
                "frac_at_or_above_reaching_floor": 0.5,
                "runs_at_or_above": 14,
                "min_rel_excess_below": 0.28,
            },
        }
    }
    line = evidence_line("C5", c5)
    assert "linear: 100% of 14 runs" in line and "softmax: 50% of 14 runs" in line and "0.252" in line
    c9 = {
        "linear_v_known/n=16": {
            "N": 64,
            "rate_by_r_star": {"1": 1.0, "16": 0.75},
            "out_of_domain_flagged": None,
        }
    }
    assert evidence_line("C9", c9) == "linear v known/n=16 (N = 64): exact rate ≥ 0.75 on 2 r*"
    assert evidence_line("C5", {"reason": "no runs"}) == "no runs"  # another shape: the fallback


def test_every_claim_line_reads_its_experiments_real_evidence():
    """Each claim's own line (not the fallback) formats the evidence a real quick reproduce wrote
    (tests/data/quick_evidence.json, lists cut to 5 items), so a renamed evidence key shows up here."""
    import json
    from pathlib import Path

    from entropic_bound.report.claim_lines import CLAIM_LINES

    evidence = json.loads((Path(__file__).resolve().parents[1] / "data" / "quick_evidence.json").read_text())
    assert set(CLAIM_LINES) == set(evidence)
    for claim, line in CLAIM_LINES.items():
        text = line(evidence[claim])
        assert text and "{" not in text, claim


def test_the_c13_line_marks_a_markov_control_that_is_not_required():
    """A copyable Markov source is reported beside the required controls, marked so a reader does not
    take its 'no' for a failed control (real quick evidence, one control marked as E7 now marks it)."""
    import json
    from pathlib import Path

    from entropic_bound.report.claim_lines import CLAIM_LINES

    evidence = json.loads((Path(__file__).resolve().parents[1] / "data" / "quick_evidence.json").read_text())
    c13 = evidence["C13"]
    controls = {**c13["controls"]}
    controls["markov_v4_k3_a0.1"] = {
        **controls["markov_v4_k3_a0.1"],
        "agrees": False,
        "required": False,
        "context_recurrence": 0.73,
    }
    text = CLAIM_LINES["C13"]({**c13, "controls": controls})
    assert "markov_v4_k3_a0.1 (not required: copyable): no" in text
    assert "markov_v8_k2_a0.1 (not required" not in text  # stored before the flag: required


def test_the_verdict_table_marks_a_verdict_whose_interval_touches_its_threshold():
    """A real interval decision (Wilson over 4 teacher draws, all exact, against 0.9) is narrow and the
    verdict table says so, with the legend that says what it means; one that clears its bar is not
    marked. An inconclusive claim says why and what would decide it, in its row."""
    from entropic_bound.experiments.framework.claim_power import claim_power
    from entropic_bound.experiments.framework.rule import Interval, Rule, Unit
    from entropic_bound.report.format import AT_THE_BAR, AT_THE_BAR_MEANS
    from entropic_bound.report.html import _summary_table
    from entropic_bound.stats.interval_decision import decide_by_interval, wilson

    touching = decide_by_interval(1.0, wilson(4, 4), 0.9, units=4).to_dict()
    cost = {"experiment": "E6", "scale": "quick", "draws": [0], "seconds": 8.0, "cfg": None}
    power = claim_power(touching, Rule((), Interval.WILSON), Unit("teacher draw"), cost)
    clear = decide_by_interval(1.0, wilson(40, 40), 0.9).to_dict()
    rows = [
        {
            "claim": "C9",
            "verdict": "inconclusive",
            "experiment": "E6",
            "evidence": {"decision": touching, "reason": "the interval reaches its bar", "power": power},
        },
        {"claim": "C1", "verdict": "confirmed", "experiment": "E1", "evidence": {"decision": clear}},
    ]
    table = _summary_table(rows)
    cells = table.split("</table>")[0].split("<tr>")
    assert AT_THE_BAR in cells[2] and "0.9" in cells[2] and AT_THE_BAR not in cells[3]
    assert html.escape(AT_THE_BAR_MEANS) in table and "Decided 1 of 2 claims." in table
    assert "why: the interval reaches its bar" in cells[2] and "needs ≈ 35 teacher draws (has 4" in cells[2]
    assert "--draws 0-" in cells[2] and "to decide" not in cells[3]
