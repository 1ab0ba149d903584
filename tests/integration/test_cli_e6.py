"""E6 end to end through the CLI at a tiny scale: verdicts, results and figures; a bad override."""

import json

import pandas as pd

from entropic_bound.cli import main

TINY = [
    "task.d=8",
    "task.d_v=8",
    "task.ns=[6]",
    "x1_ns=[8]",
    "task.r_stars=[1,3]",
    "task.spectra=[flat]",
    "sample_counts=[4,48]",
    "task.sigmas=[0.0,0.1]",
    "task.sigma_ref=0.0",
    "seeds=2",
    "decisive_seeds=0",
    "c10_ns=[2]",
    "c10_r_stars=[4,8]",
]


def _args() -> list[str]:
    return [x for a in TINY for x in ("--set", a)]


def test_tiny_e6_writes_verdicts_results_and_figures(tmp_path):
    out = tmp_path / "out"
    assert main(["run", "E6", "--out", str(out), "--quiet", *_args()]) == 0
    verdicts = json.loads((out / "verdicts.json").read_text())
    assert {"C8", "C9", "C10", "X1"} <= set(verdicts)
    for claim in ("C8", "C9", "C10", "X1"):
        assert verdicts[claim]["verdict"] in ("confirmed", "refuted", "inconclusive")
        assert verdicts[claim]["experiment"] == "E6" and verdicts[claim]["criterion"]
    # without the decisive cells' extra seeds (X1 at n = 6 and at n = d = d_v = 8): exact rates on 2
    # teacher draws per r*, whose Wilson interval reaches below 0.9
    for claim in ("C9", "X1"):
        decision = verdicts[claim]["evidence"]["decision"]
        assert verdicts[claim]["verdict"] == "inconclusive" and decision["narrow"], decision
    x1_n = {json.dumps(s["setting"]) for s in verdicts["X1"]["robustness"]["settings"]}
    assert {'{"ns": [6]}', '{"ns": [8]}'} <= x1_n
    for claim in ("C8", "C9", "C10", "X1"):
        rob = verdicts[claim]["robustness"]
        assert len(rob["settings"]) >= 2 and rob["settings"][0]["verdict"] == verdicts[claim]["verdict"]
    # noiseless linear teacher at N = 48: both linear methods exact for r* < min(n, d_v) = 6
    c9 = verdicts["C9"]["evidence"]
    assert c9["linear_v_known/n=6"]["rate_by_r_star"] == {"1": 1.0, "3": 1.0}
    assert c9["linear_v_unknown/n=6"]["rate_by_r_star"] == {"1": 1.0, "3": 1.0}
    table = pd.read_csv(out / "results" / "E6.csv")
    # settings × r* × cells × seeds at n = 6, plus X1's method (V known, unknown) × r* × seeds at n = 8,
    # plus C10 (d)'s softmax_linearised (2 teachers × 2 V) × r* 4, 8 × seeds at n = 2 (r* >> n), σ = 0
    assert len(table) == 8 * 2 * 3 * 2 + 2 * 2 * 2 + 4 * 2 * 2 and (table["status"] == "ok").all()
    # (d) is decided at n = 2 (r* 4, 8 >= 2n) and left undecided at n = 6 (r* 1, 3)
    d = verdicts["C10"]["evidence"]["V_known"]["d_mixer_informative_softmax_saturated_linear"]
    assert d["by_n"]["n=2"]["in_regime"] and not d["by_n"]["n=6"]["in_regime"]
    assert "numerical_rank_degradation" in verdicts["C8"]["evidence"]
    assert {
        "r_hat",
        "exact",
        "identifiable",
        "reason",
        "margin",
        "noise_level",
        "timing_s",
        "cpu_s",
        "est_energy_effective_rank",
        "est_realised_mixer_energy_rank",
    } <= set(table.columns)
    assert (table["exact"] == (table["r_hat"] == table["task.r_star"])).all()
    outside = table[(table["method"] == "softmax_log_attention") & (table["v"] == "unknown")]
    assert (
        len(outside)
        and (outside["identifiable"] == 0).all()
        and outside["reason"].str.contains("V unknown").all()
    )
    assert {"E6_recovery_rates.csv", "E6_frontier.csv", "E6_estimates.csv"} <= {
        p.name for p in (out / "results").iterdir()
    }
    figures = {p.name for p in (out / "figures").glob("e6_*.png")}
    assert {
        "e6_rate_vs_N_linear.png",
        "e6_rate_vs_sigma_softmax.png",
        "e6_estimates_vs_r_star_linear_n6.png",  # the grid's n
        "e6_estimates_vs_r_star_linear_n2.png",  # C10 (d)'s n < r* cells get their own figure
        "e6_estimates_vs_r_star_softmax_n8.png",  # the X1-only n gets its own figure
    } <= figures, sorted(figures)


def test_bad_e6_override_is_one_line_and_exit_2(tmp_path, capsys):
    rc = main(["run", "E6", "--out", str(tmp_path / "o"), "--set", "methods=[linear_v_knwn]"])
    err = capsys.readouterr().err
    assert rc == 2 and "The 'methods' parameter must be one of" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
