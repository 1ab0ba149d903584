"""Every criterion of C1–C10, X1, X2 on the real rows the quick defaults produced (tests/data/quick_rows).

Each test decides the claim on the stored rows (the quick-scale verdict, asserted), then flips it each
way by a threshold the config exposes or by perturbing one real number, and checks the boundary entry
(``robustness``) has the default setting first and one verdict per setting.
"""

from __future__ import annotations

import numpy as np
import pytest
from quick_rows import load

from entropic_bound.experiments.e1_linear_surrogate import claims as e1_claims
from entropic_bound.experiments.e2_recovery import claims as e2_claims
from entropic_bound.experiments.e3_ladder import analysis as e3_analysis
from entropic_bound.experiments.e3_ladder import claims as e3_claims
from entropic_bound.experiments.e4_attention_teacher import claims as e4_claims
from entropic_bound.experiments.e5_attention_recovery import analysis as e5_analysis
from entropic_bound.experiments.e5_attention_recovery import claims as e5_claims
from entropic_bound.experiments.e6_predictability import analysis as e6_analysis
from entropic_bound.experiments.e6_predictability import claims as e6_claims
from entropic_bound.experiments.framework.claim_slices import with_option
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.experiments.framework.verdict import ClaimContext
from entropic_bound.pipeline import configure
from entropic_bound.registry import EXPERIMENTS

CTX = ClaimContext()
E5_CTX = ClaimContext(seeds=Seeds("E5"))  # C7 reads its rule's noise cases from the draw's seeds


def _judge(claim, cfg, rows, context=None):
    """The claim decided at the default and over its robustness grid, as ``Experiment.analyse`` does
    (with draw 0's seeds: C3's and C7's rules read their noise cases from them)."""
    return claim.judge(cfg, rows, context or ClaimContext(seeds=Seeds(_EXPERIMENT_OF[claim.id])))


_EXPERIMENT_OF = {c.id: name for name in EXPERIMENTS for c in EXPERIMENTS.get(name).declared_claims}


def _cfg(name: str, **thresholds):
    """The quick config of ``name`` with verdict thresholds changed (``eps_floor=…`` → ``verdict.eps_floor``)."""
    cfg = configure(name, "quick", {}).cfg
    return with_option(cfg, {f"verdict.{k}": v for k, v in thresholds.items()})


def _kept_rows(name: str):
    rows = load(name)
    return rows[rows["status"] == "ok"].reset_index(drop=True)


def _boundary_is_well_formed(v, default_keys: set[str]) -> None:
    rob = v.robustness
    assert rob["settings"][0]["verdict"] == v.outcome and default_keys <= set(rob["settings"][0]["setting"])
    assert len(rob["settings"]) >= 2 and rob["robust"] == (len({s["verdict"] for s in rob["settings"]}) == 1)
    assert rob["holds_when"]


# ------------------------------------------------------------------ E1: C1, C2
def test_c1_confirmed_on_quick_rows_and_flips():
    rows = _kept_rows("E1")
    v = _judge(e1_claims.C1, _cfg("E1"), rows)
    assert v.outcome == "confirmed" and 0.98 < v.evidence["median_ratio"] < 1.05
    _boundary_is_well_formed(v, {"spectra", "v_settings"})
    lo, hi = v.evidence["decision"]["interval"]  # bootstrap over the 4 teacher draws
    assert lo < v.evidence["median_ratio"] < hi and v.evidence["teacher_draws"] == 4
    # a band edge below the whole interval: refuted; inside it: the draws disagree, inconclusive
    assert _judge(e1_claims.C1, _cfg("E1", c1_high=lo - 1e-3), rows).outcome == "refuted"
    assert _judge(e1_claims.C1, _cfg("E1", c1_high=(lo + hi) / 2), rows).outcome == "inconclusive"
    worse = rows.assign(
        ratio_to_closed_form=rows["ratio_to_closed_form"] * 1.3
    )  # training stops short of the bound
    assert _judge(e1_claims.C1, _cfg("E1"), worse).outcome == "refuted"


def test_c2_confirmed_on_quick_rows_and_flips():
    rows = _kept_rows("E1")
    v = _judge(e1_claims.C2, _cfg("E1"), rows)
    assert v.outcome == "confirmed"
    _boundary_is_well_formed(v, {"spectra"})
    worst = v.evidence["max_rel_excess_at_or_above_r_star"]
    # the floor is a count rule: the worst run decides, and the boundary says where it flips
    assert v.evidence["eps_floor_boundary"]["eps_floor_that_flips"] == worst
    assert v.evidence["decisions"]["every_run_reaches_floor"]["margin"] == pytest.approx(0.01 - worst)
    assert _judge(e1_claims.C2, _cfg("E1", eps_floor=worst / 2), rows).outcome == "refuted"
    lo, hi = v.evidence["decisions"]["transition_sharp"]["interval"]  # over teacher draws
    assert _judge(e1_claims.C2, _cfg("E1", sharpness=hi * 1.01), rows).outcome == "refuted"
    assert _judge(e1_claims.C2, _cfg("E1", sharpness=(lo + hi) / 2), rows).outcome == "inconclusive"


# ------------------------------------------------------------------ E2: C3
@pytest.fixture(scope="module")
def e2_prepared():
    """The quick rows with the minimum-norm ranks ``E2Recovery.prepare`` regenerates from the seeds."""
    rows = _kept_rows("E2")
    return configure("E2", "quick", {}).prepare(rows, rows, [], Seeds("E2"))[0]


def test_c3_nothing_to_detect_on_quick_rows_and_flips(e2_prepared):
    rows = e2_prepared
    v = _judge(e2_claims.C3, _cfg("E2"), rows)
    # the estimator the rule picks on the truth (numerical rank counts the 2 % least-squares noise)
    assert v.evidence["estimator"] == "energy_threshold_rank_90" and "non_standard" not in v.evidence
    assert v.evidence["estimator_rule"]["matches"]["numerical_rank"] < 1
    # the minimum-norm fit of N = 2, 3 samples is already low rank (2, 2, 3, 4 for r* = 2, 2, 4, 4)
    assert sorted(v.evidence["min_norm_rank"].values()) == [2.0, 2.0, 3.0, 4.0]
    assert v.outcome == "inconclusive" and v.evidence["reason"].startswith("nothing to detect")
    assert v.evidence["small_init_identified_recovery"] == pytest.approx(1.0, abs=1e-12)  # the control
    _boundary_is_well_formed(v, {"c3_estimator"})
    # data whose minimum-norm answer were full rank: the real runs are judged, by Newcombe's interval
    # over the 4 under-identified data sets (the runs of one data set are one unit)
    under = rows["identified"] < 0.5
    room = rows.assign(
        min_norm_energy_threshold_rank_90=np.where(under, 16.0, rows["min_norm_energy_threshold_rank_90"])
    )
    v = _judge(e2_claims.C3, _cfg("E2"), room)
    e = v.evidence
    assert e["decision"]["unit"].startswith("data set") and e["decision"]["units"] == e["data_sets"] == 4
    assert (e["runs_small"], e["runs_large"]) == (8, 7) and e["decision"]["threshold"] == 0.0
    lo, hi = e["decision"]["interval"]  # contrast 0.375 over 4 data sets: the interval holds 0
    assert v.outcome == "inconclusive" and lo < 0 < e["contrast"] < hi and "more data sets" in e["reason"]
    # small init's runs given a large estimate: refuted once large init recovers as often
    small_under = under & (rows["init_scale"] <= 0.01)
    large_under = under & (rows["init_scale"] >= 0.1)
    swapped = room.assign(
        A_energy_threshold_rank_90=np.where(
            small_under, 16.0, np.where(large_under, room["task.r_star"], room["A_energy_threshold_rank_90"])
        )
    )
    v = _judge(
        e2_claims.C3, _cfg("E2"), swapped, ClaimContext(seeds=Seeds("E2"))
    )  # no rank curves: final estimates
    assert v.outcome == "refuted" and v.evidence["decision"]["interval"][1] <= 0
    # small init recovers, large init does not: confirmed, the interval above the boundary 0
    clean = room.assign(
        A_energy_threshold_rank_90=np.where(
            small_under, room["task.r_star"], np.where(large_under, 16.0, room["A_energy_threshold_rank_90"])
        )
    )
    v = _judge(e2_claims.C3, _cfg("E2"), clean, ClaimContext(seeds=Seeds("E2")))
    lo = v.evidence["decision"]["interval"][0]
    assert v.evidence["contrast"] == pytest.approx(1.0) and v.outcome == "confirmed" and 0 < lo < 1
    # a boundary above the interval's lower end: the interval holds it, inconclusive
    higher = _cfg("E2", c3_contrast=lo + 1e-6)
    assert _judge(e2_claims.C3, higher, clean, ClaimContext(seeds=Seeds("E2"))).outcome == "inconclusive"
    # identified data alone cannot show a bias; stored rows without the metric say so
    v = _judge(e2_claims.C3, _cfg("E2"), rows[rows["identified"] > 0.5])
    assert v.outcome == "inconclusive" and "nothing to detect" in v.evidence["reason"]
    bare = e2_claims.verdict_c3(_cfg("E2"), _kept_rows("E2"), ClaimContext(seeds=Seeds("E2")))
    assert bare.outcome == "inconclusive" and bare.evidence["reason"].startswith("min_norm_rank absent")
    forced = _judge(e2_claims.C3, _cfg("E2", c3_estimator="numerical_rank"), rows)
    assert "non_standard" in forced.evidence


# ------------------------------------------------------------------ E3: C4, X2
def test_c4_confirmed_on_quick_rows_and_flips():
    rows = e3_analysis.fill_settings(_kept_rows("E3"))
    v = _judge(e3_claims.C4, _cfg("E3"), rows)
    assert v.outcome == "confirmed" and v.evidence["decision"]["unit"] == "student seed"
    _boundary_is_well_formed(v, {"v_settings"})
    assert {s["setting"].get("seed", [None])[0] for s in v.robustness["settings"]} >= {0, 1}
    assert _judge(e3_claims.C4, _cfg("E3", c4_fail=1.5), rows).outcome == "refuted"
    # one seed's B1 excess halved: the two seeds straddle c4_fail, the jump's interval reaches it
    b1 = (rows["rung"] == "B1") & (rows["role"] == "ladder") & (rows["seed"] == 0)
    split = rows.assign(rel_excess=np.where(b1, rows["rel_excess"] * 0.3, rows["rel_excess"]))
    mixed = _judge(e3_claims.C4, _cfg("E3"), split)
    assert mixed.outcome == "inconclusive" and mixed.evidence["decisions"]["jump"]["narrow"]
    # the controls must reach the floor before a failure at B1 can be attributed: inconclusive otherwise
    assert _judge(e3_claims.C4, _cfg("E3", eps_floor=1e-9), rows).outcome == "inconclusive"
    # B1-B3's failure is read from converged runs only (their excess fell < 1 % over the last quarter)
    assert v.evidence["convergence_B1_B3_full_rank"]["converged"] == 12
    tight = _judge(e3_claims.C4, _cfg("E3", convergence_tol=1e-4), rows)
    assert tight.outcome == "inconclusive" and "still improving" in tight.evidence["reason"]


def test_x2_quick_rows_cannot_refute_and_flip_with_the_step_and_convergence_rules():
    rows = e3_analysis.fill_settings(_kept_rows("E3"))
    v = _judge(e3_claims.X2, _cfg("E3"), rows)
    # 2 seeds, neither at the floor: the share's Wilson interval (0-0.66) straddles 1/2, and 1500 steps
    # < x2_min_steps: the reason names both what would decide it
    assert v.outcome == "inconclusive" and v.evidence["decision"]["units"] == 2
    assert "more seeds" in v.evidence["reason"] and "6000" in v.evidence["reason"]
    best = v.evidence["worst_best_rel_excess"]
    # a share bar the 2 seeds can fall below (0.7), long enough by the step rule, but the positional runs'
    # excess still fell 16-20 % over the last quarter: still improving
    failing = {"x2_min_steps": 1000, "x2_seed_share": 0.7}
    v = _judge(e3_claims.X2, _cfg("E3", **failing), rows)
    assert v.outcome == "inconclusive" and "still improving" in v.evidence["reason"]
    drops = v.evidence["convergence_failing_pairs"]["relative_drop"]  # B1 signed, B2 row-stochastic
    assert min(drops) >= 0.1
    loose = max(drops) + 0.01  # the same runs called converged: refuted
    assert _judge(e3_claims.X2, _cfg("E3", **failing, convergence_tol=loose), rows).outcome == "refuted"
    floor = _cfg("E3", eps_floor=min(best * 2, 0.99), x2_seed_share=0.2)  # both seeds under it: 2/2 >= 0.2
    assert _judge(e3_claims.X2, floor, rows).outcome == "confirmed"


# ------------------------------------------------------------------ E4: C5, C6
def test_c5_confirmed_on_quick_rows_by_its_interval_and_flips():
    rows = _kept_rows("E4")
    v = _judge(e4_claims.C5, _cfg("E4"), rows)
    # every share is 1 over 36 teacher draws per kind: the Wilson interval (from 0.904) clears 0.9
    d = v.evidence["decision"]
    assert v.outcome == "confirmed" and d["statistic"] == 1.0 and d["interval"][0] >= 0.9
    assert d["units"] == 36 and v.evidence["teacher_draws"] == {"linear": 36, "softmax": 36}
    assert d["threshold"] == d["refute_threshold"] == 0.9
    assert {s["setting"].get("c") for s in v.robustness["settings"]} >= {0.5, 1.0, 2.0, 4.0}
    # a rate above what 36 draws can show: the interval straddles it, too few teacher draws
    high = _judge(e4_claims.C5, _cfg("E4", c5_rate=0.95), rows)
    assert high.outcome == "inconclusive" and "too few teacher draws" in high.evidence["reason"]
    # c5_margin is reported only: no band between the floor and the margin
    low = min(t["min_rel_excess_below"] for t in v.evidence["by_teacher"].values())
    assert _judge(e4_claims.C5, _cfg("E4", c5_margin=2 * low / 0.01), rows).outcome == "confirmed"
    # a floor above every deficient run's excess: rank-deficient students "reach" it, deficiency fails
    below = rows[rows["rank"] < rows["task.r_star"]]["rel_excess"]
    refuted = _judge(e4_claims.C5, _cfg("E4", eps_floor=float(below.max()) * 1.01), rows)
    assert refuted.outcome == "refuted" and refuted.evidence["decision"]["condition"].endswith("/deficient")


def test_c5_far_floor_refutes_only_through_converged_runs():
    """The stored convergence of each real run: with a floor below what r >= r* students reach, the runs
    above it have stopped improving (converged), so achievability is refuted, not left open."""
    rows = _kept_rows("E4")
    assert rows["converged"].notna().all()
    v = _judge(e4_claims.C5, _cfg("E4", eps_floor=1e-7), rows)
    assert v.outcome == "refuted" and "stopped improving" in v.evidence["reason"]
    t = v.evidence["by_teacher"]["linear"]
    assert (
        t["converged_above_floor"] > 0
        and len(t["above_floor_runs"]) == t["converged_above_floor"] + t["still_improving"]
    )


def test_c6_is_mapped_over_c_with_teacher_pairs_and_an_interval_at_each():
    rows = _kept_rows("E4")
    v = _judge(e4_claims.C6, _cfg("E4"), rows)
    settings = v.robustness["settings"]
    assert (
        settings[0]["setting"] == {"c": 2.0, "c6_normalisation": "k0"} and settings[0]["verdict"] == v.outcome
    )
    assert {(s["setting"]["c"], s["setting"]["c6_normalisation"]) for s in settings} == {
        (c, n) for c in (0.5, 1.0, 2.0, 4.0) for n in ("k0", "signal")
    }
    # measured at quick: no compression relative to K = 0 at any c (36 teacher pairs at c = 2); relative
    # to the signal compressed for c <= 1, where the boundary (4 softmax draws at r*, all at the floor,
    # none at r*-1) clears 1/2
    assert v.outcome == "refuted" and v.evidence["pairs"] == 36
    assert v.evidence["holds_where"] == {"k0": "nowhere in the grid", "signal": "c <= 1"}
    d = v.evidence["decision"]
    assert d["condition"] == "compressed" and d["margin"] < 0 and d["units"] == 36
    assert d["threshold"] == d["refute_threshold"]
    for norm, by_c in v.evidence["map"].items():
        for c, cell in by_c.items():
            lo, hi = cell["interval"]
            assert cell["pairs"] >= 4 and lo <= cell["median"] <= hi, (norm, c)
    c1 = rows[np.isclose(rows["task.c"], 1.0)]
    sig1 = with_option(_cfg("E4", c6_normalisation="signal"), {"task.c": 1.0})
    assert e4_claims.verdict_c6(sig1, c1, CTX).outcome == "confirmed"
    # a boundary bar 4 draws cannot clear: open
    strict = with_option(sig1, {"verdict.c6_boundary_share": 0.6})
    at1 = e4_claims.verdict_c6(strict, c1, CTX)
    assert at1.outcome == "inconclusive" and at1.evidence["decision"]["condition"] in (
        "boundary_kept",
        "deficient_below",
    )
    # the same c with one seed left: one pair is not a median, undecided
    assert e4_claims.verdict_c6(sig1, c1[c1["seed"] == 0], CTX).outcome == "inconclusive"
    # a factor inside the interval: not clearly compressed, not clearly not
    lo, hi = v.evidence["map"]["signal"]["1"]["interval"]
    inside = with_option(sig1, {"verdict.c6_factor": (lo + hi) / 2})
    assert e4_claims.verdict_c6(inside, c1, CTX).outcome == "inconclusive"
    # the boundary must be kept: a softmax student that misses the floor at r* refutes even when compressed
    soft_at = (rows["teacher"] == "softmax") & (rows["rank"] == rows["task.r_star"])
    lost = rows.assign(rel_excess=np.where(soft_at, 0.5, rows["rel_excess"]))
    assert _judge(e4_claims.C6, _cfg("E4", c6_factor=1.0, c6_normalisation="signal"), lost).outcome == (
        "refuted"
    )


def test_c6_holds_when_reads_the_region():
    from entropic_bound.experiments.framework.verdict import Verdict

    def out(c, norm, verdict):
        return ({"c": c, "c6_normalisation": norm}, Verdict("C6", verdict, "", {}, "E4"))

    grid = [
        out(c, n, "confirmed" if (n == "signal" and c <= 1) else "refuted")
        for c in (0.5, 1, 2, 4)
        for n in ("k0", "signal")
    ]
    assert e4_claims.c6_holds_when(grid) == "signal-normalised, c <= 1"
    grid = [out(c, "k0", "confirmed" if c >= 2 else "refuted") for c in (0.5, 1, 2, 4)]
    assert e4_claims.c6_holds_when(grid) == "k0-normalised, c >= 2"
    assert e4_claims.c6_holds_when([out(1, "k0", "refuted")]) == "nowhere in the grid"


# ------------------------------------------------------------------ E5: C7, C8
@pytest.fixture(scope="module")
def e5_prepared():
    """The quick rows with the minimum-norm kernel ranks ``E5AttentionRecovery.prepare`` regenerates."""
    rows = _kept_rows("E5")
    return configure("E5", "quick", {}).prepare(rows, rows, [], Seeds("E5"))[0]


def test_c7_by_the_rule_confirmed_on_quick_rows_and_flips(e5_prepared):
    rows = e5_prepared
    v = _judge(e5_claims.C7, _cfg("E5"), rows)
    e = v.evidence
    # the rule's estimator on K* and its least-squares noise: the 99 % energy rank
    assert e["estimator"] == "energy_threshold_rank_99" and "non_standard" not in e
    assert e["estimator_rule"]["all_match"]
    for teacher, small_ok in (("linear", 6), ("softmax", 5)):
        cell = e["by_teacher"][teacher]
        assert cell["small_init_identified_recovery"] == 1.0 and cell["data_sets_with_room"] == 4
        assert cell["identified_data_sets"] == 4  # the identified gate over data sets too
        assert min(cell["min_norm_rank"].values()) >= 6  # the data alone leave a rank-6+ kernel (r* 2, 4)
        # a small-init run fits the r* = 4 geometric data at rank 3: that cell tests identifiability, set aside
        assert cell["cells_fit_below"] == {"r*=4, geometric, V known, N=1": 3.0}
        assert (cell["success_small"], cell["runs_small"], cell["success_large"], cell["runs_large"]) == (
            small_ok,
            6,
            0,
            3,
        )
        assert cell["data_sets"] == 3
    d = e["decision"]  # the teacher with the smallest margin, over its 3 data sets, above the boundary 0
    assert v.outcome == "confirmed" and d["teacher"] == "softmax" and d["units"] == 3
    assert d["unit"].startswith("data set") and 0 < d["interval"][0] < 0.5 < d["statistic"]
    _boundary_is_well_formed(v, {"spectra", "r_stars"})
    assert v.robustness["holds_when"] == "r* in {2}; r* = 4 inconclusive"
    under = rows["train.n_samples"] == 1
    small_under, large_under = (rows["init_scale"] <= 0.01) & under, (rows["init_scale"] >= 0.1) & under
    col = "K_energy_threshold_rank_99"
    # small init recovers r*, large init does not: no cell fits below, contrast 1 over 4 data sets
    clean = rows.assign(
        **{col: np.where(small_under, rows["task.r_star"], np.where(large_under, 30.0, rows[col]))}
    )
    v = _judge(e5_claims.C7, _cfg("E5"), clean)
    lo = v.evidence["decision"]["interval"][0]
    assert v.outcome == "confirmed" and 0.3 < lo < 1 and v.evidence["decision"]["units"] == 4
    assert _judge(e5_claims.C7, _cfg("E5", c7_contrast=lo + 1e-6), clean).outcome == "inconclusive"
    # one small-init run that fits at r* - 1 sets its whole cell aside (both teachers here)
    flat2 = small_under & (rows["task.r_star"] == 2) & (rows["task.spectrum"] == "flat")
    low = clean.assign(**{col: np.where(flat2 & (rows["init_scale"] == 0.001), 1.0, clean[col])})
    e = _judge(e5_claims.C7, _cfg("E5"), low).evidence
    assert e["by_teacher"]["linear"]["cells_fit_below"] == {"r*=2, flat, V known, N=1": 1.0}
    assert e["by_teacher"]["linear"]["data_sets"] == 3
    # large init recovers, small init does not: the interval lies below 0
    swapped = rows.assign(
        **{col: np.where(small_under, 30.0, np.where(large_under, rows["task.r_star"], rows[col]))}
    )
    v = _judge(e5_claims.C7, _cfg("E5"), swapped)
    assert v.outcome == "refuted" and v.evidence["decision"]["interval"][1] <= 0
    # small init misses r* on identified data beyond doubt: refuted by the gate, which then decides
    ident_small = (rows["init_scale"] <= 0.01) & ~under
    missed = clean.assign(**{col: np.where(ident_small, rows["task.d"], clean[col])})
    v = _judge(e5_claims.C7, _cfg("E5"), missed)
    assert v.outcome == "refuted" and v.evidence["decision"]["threshold"] == 0.9
    # minimum-norm kernels at r*: nothing to detect
    forced = clean.assign(
        min_norm_energy_threshold_rank_99=np.where(
            under, rows["task.r_star"], clean["min_norm_energy_threshold_rank_99"]
        )
    )
    v = _judge(e5_claims.C7, _cfg("E5"), forced)
    assert v.outcome == "inconclusive" and "nothing to detect" in v.evidence["reason"]
    # without the under-identified runs, or without the metric, the implicit bias cannot be decided
    assert _judge(e5_claims.C7, _cfg("E5"), rows[rows["train.n_samples"] > 1]).outcome == "inconclusive"
    bare = e5_claims.verdict_c7(_cfg("E5"), _kept_rows("E5"), E5_CTX)
    assert bare.outcome == "inconclusive" and bare.evidence["reason"].startswith("min_norm_rank absent")
    hand = e5_claims.verdict_c7(_cfg("E5", c7_estimator="numerical_rank"), rows, E5_CTX)
    assert "non_standard" in hand.evidence and hand.evidence["estimator"] == "numerical_rank"


def _c8_small(rows):
    ident = rows[e5_analysis.identified(rows)]
    return ident[ident["init_scale"] <= 0.01]


def test_c8_control_in_e5_nothing_to_detect():
    """E5's learned kernels equal K* under both teachers: the control table shows no contamination."""
    table = e5_analysis.c8_table(_c8_small(_kept_rows("E5"))).set_index(["estimator", "operator"])
    assert abs(table.loc[("numerical_rank", "kernel"), "softmax_minus_linear"]) < 1.0
    assert abs(table.loc[("energy_effective_rank", "kernel"), "softmax_minus_linear"]) < 0.05
    assert "C8" not in {c.id for c in e5_claims.CLAIMS}


# ------------------------------------------------------------------ E6: C9, C10, X1
def _e6():
    return e6_analysis.with_domain(_kept_rows("E6"))


def test_c9_confirmed_on_quick_rows_by_its_interval_and_flips():
    rows = _e6()
    v = _judge(e6_claims.C9, _cfg("E6"), rows)
    # every rate is 1 over 40 teacher draws per cell: the Wilson interval clears 0.9
    d = v.evidence["decision"]
    assert v.outcome == "confirmed" and d["statistic"] == 1.0 and d["interval"][0] > 0.9 and d["units"] == 40
    # a bar above the interval's lower end leaves it undecided, with the reason
    strict = _judge(e6_claims.C9, _cfg("E6", rate=0.95, flag_rate=0.95), rows)
    assert strict.outcome == "inconclusive" and "more teacher draws" in strict.evidence["reason"]
    lin = rows["method"].isin(["linear_v_known", "linear_v_unknown"]) & rows["in_domain"]
    wrong = rows.assign(exact=np.where(lin & (rows["task.r_star"] == 2), 0.0, rows["exact"]))
    assert _judge(e6_claims.C9, _cfg("E6", rate=0.5, flag_rate=0.5), wrong).outcome == "refuted"


def _shift(rows, mask, col, by):
    return rows.assign(**{col: np.where(mask, rows[col] + by, rows[col])})


def test_c10_d_is_decided_per_n_where_r_star_exceeds_n():
    rows = _e6()
    v = _judge(e6_claims.C10, _cfg("E6"), rows)
    main = v.evidence["V_known"]
    assert main["b_numerical_rank_saturates"]["holds"] is True
    # (c): the bias at the largest r* is -0.51 on average, but its interval over teacher draws spans 0
    energy = main["c_energy_rank_over_small_compresses_large"]
    lo, hi = energy["decisions"]["compresses_largest"]["interval"]
    assert energy["holds"] is None and lo < -0.5 < 0 < hi
    d = main["d_mixer_informative_softmax_saturated_linear"]
    # n = 16 (r* up to 16) is not r* >> n: undecided there, whatever the linear mixer does (+1.8)
    assert d["by_n"]["n=16"]["in_regime"] is False and d["by_n"]["n=16"]["holds"] is None
    assert d["by_n"]["n=16"]["linear_last_step"] > 1.0
    # n = 8, r* = 16 -> 32: the linear mixer saturates (+0.39), the softmax one barely rises (+0.22):
    # its whole interval lies below the half rank unit a rank read needs to change, refuted
    at8 = d["by_n"]["n=8"]
    assert at8["in_regime"] and 0 < at8["softmax_last_step"] < 0.5 and at8["linear_last_step"] <= 0.5
    assert at8["holds"] is False and d["holds"] is False and v.outcome == "refuted"
    assert (
        v.evidence["decision"]["condition"] == "d/n=8/softmax_rises" and v.evidence["decision"]["units"] == 8
    )
    assert {"ns": [8]} in [s["setting"] for s in v.robustness["settings"]]
    col, mix = "est_realised_mixer_energy_rank", rows["method"] == "softmax_linearised"
    top8 = mix & (rows["task.n"] == 8) & (rows["task.r_star"] == 32)
    soft = rows["teacher"] == "softmax"
    # the softmax mixer rising by a further 0.5 at r* = 32, the linear one 0.3 lower there, and the
    # energy rank 2 lower at the largest r*: every interval clears its bar, confirmed
    largest = (
        mix & soft & (rows["task.r_star"] == rows.loc[mix & (rows["task.n"] == 16), "task.r_star"].max())
    )
    risen = _shift(_shift(rows, top8 & soft, col, 0.5), top8 & ~soft, col, -0.3)
    risen = _shift(risen, largest & (rows["task.n"] == 16), "est_energy_effective_rank", -2.0)
    assert e6_claims.verdict_c10(_cfg("E6"), risen, CTX).outcome == "confirmed"
    # the linear mixer rising by 1 more where r* >> n: not saturated, contradicted, refuted
    lin_up = _shift(rows, top8 & ~soft, col, 1.0)
    assert e6_claims.verdict_c10(_cfg("E6"), lin_up, CTX).outcome == "refuted"
    # the same rise at n = 16 (outside the regime) refutes nothing
    top16 = mix & (rows["task.n"] == 16) & (rows["task.r_star"] == 16) & ~soft
    assert e6_claims.verdict_c10(_cfg("E6"), _shift(risen, top16, col, 3.0), CTX).outcome == "confirmed"
    assert "paper" in v.evidence["paper_estimators"]["numerical_rank"]


def test_c8_decided_where_the_softmax_contaminates_the_estimate():
    rows = _e6()
    v = _judge(e6_claims.C8, _cfg("E6"), rows)
    e, d = v.evidence, v.evidence["decision"]
    # the contamination: the numerical rank's error grows by ~4.8 rank units under the softmax, its
    # interval over the 28 teacher draws well above 1
    assert e["numerical_rank_degradation_ci"][0] >= 1.0 and e["pairs"] >= 40 and e["teacher_draws"] >= 20
    # energy / numerical ≈ 0.38, its interval over draws below the boundary 1: confirmed
    assert v.outcome == "confirmed" and d["interval"][0] < 0.5 < d["interval"][1] < 1.0
    assert d["units"] == e["teacher_draws"] and d["threshold"] == d["refute_threshold"] == 1.0
    assert d["statistic"] == pytest.approx(
        e["energy_degradation"] / e["numerical_rank_degradation"], rel=1e-3
    )
    assert abs(e["realised_mixer_degradation"]) < 0.1  # recovered mixers: the in-experiment control
    # the whole panel ranked: Gavish-Donoho's hard threshold degrades least, the energy rank is not first
    assert [r["estimator"] for r in e["ranking"]][0] == e["least_degraded_kernel_estimator"]
    assert e["least_degraded_kernel_estimator"] == "optimal_hard_threshold" and e["energy_rank_place"] > 1
    # a laxer bar above the interval confirms
    assert e6_claims.verdict_c8(_cfg("E6", c8_ratio=0.9), rows, CTX).outcome == "confirmed"
    soft = (rows["method"] == "softmax_linearised") & (rows["teacher"] == "softmax")
    # the energy rank unmoved by the softmax (its value on K* under the softmax teacher): confirmed
    exact = rows.assign(
        est_energy_effective_rank=rows["est_energy_effective_rank"].where(
            ~soft, rows["true_energy_effective_rank"]
        )
    )
    assert e6_claims.verdict_c8(_cfg("E6"), exact, CTX).outcome == "confirmed"
    # the energy rank pushed away from its value on K* by the numerical rank's degradation: refuted
    away = np.sign(rows["est_energy_effective_rank"] - rows["true_energy_effective_rank"]).replace(0, 1)
    by = np.where(soft, away * 2 * e["numerical_rank_degradation"], 0.0)
    worse = rows.assign(est_energy_effective_rank=rows["est_energy_effective_rank"] + by)
    assert e6_claims.verdict_c8(_cfg("E6"), worse, CTX).outcome == "refuted"
    # a contamination boundary above the numerical rank's whole interval: the premise fails, refuted
    none = e6_claims.verdict_c8(_cfg("E6", c8_min_contamination=10.0), rows, CTX)
    assert none.outcome == "refuted"
    assert none.evidence["decision"]["condition"] == "numerical_rank_contaminated"


def test_c10_band_rule_has_one_boundary():
    assert e6_claims.band(1.0, 0.5, above=True) is True and e6_claims.band(0.5, 0.5, above=True) is True
    assert e6_claims.band(0.2, 0.5, above=True) is False and e6_claims.band(-0.1, 0.5, above=True) is False
    assert e6_claims.band(1.2, 0.5, above=False) is False and e6_claims.band(None, 0, True) is None


def test_x1_confirmed_on_quick_rows_by_its_interval_and_flips():
    rows = _e6()
    cfg = _cfg("E6")
    frontier = e6_analysis.frontier_table(e6_analysis.rate_table(rows), cfg.task.sigma_ref, cfg.verdict.rate)
    ctx = ClaimContext(tables={"frontier": frontier})
    v = _judge(e6_claims.X1, cfg, rows, ctx)
    d = v.evidence["decision"]  # every rate 1 over 40 teacher draws at sigma = 0
    assert v.outcome == "confirmed" and d["statistic"] == 1.0 and d["interval"][0] > 0.9 and d["units"] >= 40
    assert {"ns": [32]} in [s["setting"] for s in v.robustness["settings"]]
    loose = _cfg("E6", rate=0.5, flag_rate=0.5)
    assert _judge(e6_claims.X1, loose, rows, ctx).outcome == "confirmed"
    # every in-domain prediction on the geometric spectrum confidently wrong: half the draws of each r*
    # miss, refuted
    soft = (
        (rows["method"] == "softmax_log_attention")
        & rows["in_domain"]
        & (rows["task.spectrum"] == "geometric")
    )
    wrong = rows.assign(exact=np.where(soft, 0.0, rows["exact"]))
    assert _judge(e6_claims.X1, _cfg("E6", rate=0.95), wrong, ctx).outcome == "refuted"
    # outside its domain (V unknown) it must say "not identifiable"
    unflagged = rows.assign(identifiable=np.where(rows["in_domain"], rows["identifiable"], 1.0))
    assert _judge(e6_claims.X1, loose, unflagged, ctx).outcome == "refuted"


@pytest.mark.parametrize(
    "name", [n for n in EXPERIMENTS.declared() if n != "E7"]
)  # E7 stores heads, not runs
def test_quick_rows_match_the_quick_grid(name):
    """The stored rows are exactly the quick grid's runs (regenerate them when the grid changes)."""
    exp = configure(name, "quick", {})
    assert set(load(name)["run_id"]) == {s.run_id for s in exp.specs()}
