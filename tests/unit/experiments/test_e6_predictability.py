"""E6: grid, groups and shared draws; domain rules; C9/C10/X1 verdict logic on synthetic tables (flips with the numbers)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from entropic_bound.errors import ConfigError
from entropic_bound.experiments import tiny_settings
from entropic_bound.experiments.e6_predictability.analysis import (
    frontier_table,
    in_domain,
    rate_table,
    with_domain,
)
from entropic_bound.experiments.e6_predictability.claims import verdict_c9, verdict_x1
from entropic_bound.experiments.e6_predictability.config import E6Config, E6Task
from entropic_bound.experiments.e6_predictability.contamination import verdict_c8
from entropic_bound.experiments.e6_predictability.experiment import (
    E6Predictability,
    cells,
    draw,
    predict_run,
    reference_metrics,
    settings,
)
from entropic_bound.experiments.framework.claim_slices import with_option
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.experiments.framework.verdict import ClaimContext
from entropic_bound.predict import predict_r_star
from entropic_bound.spectra import panel_description

CFG = E6Config()
R_STARS = (1, 2, 4, 8, 16)
#: Bars the 5-10 teacher draws of these tables can clear by their Wilson interval (0.9 needs >= 35 draws).
LOOSE = with_option(CFG, {"verdict.rate": 0.5, "verdict.flag_rate": 0.5})

E6 = Seeds("E6")  # draw 0


def _row(
    teacher,
    method,
    v,
    r_star,
    *,
    n=16,
    N=64,
    sigma=0.0,
    spectrum="flat",
    seed=0,
    r_hat=None,
    identifiable=True,
    **est,
):
    r_hat = r_star if r_hat is None else r_hat
    return {
        "teacher": teacher,
        "method": method,
        "v": v,
        "task.n": n,
        "task.d": 32,
        "task.d_v": 32,
        "task.r_star": r_star,
        "task.spectrum": spectrum,
        "n_samples": N,
        "task.sigma": sigma,
        "seed": seed,
        "r_hat": r_hat,
        "exact": float(r_hat == r_star),
        "identifiable": float(identifiable),
        "confident_wrong": float(identifiable and r_hat != r_star),
        "cpu_s": 0.01,
        **est,
    }


def _table(rows) -> pd.DataFrame:
    return with_domain(pd.DataFrame(rows))


# ---------------------------------------------------------------- grid, groups, draws


def test_cells_are_two_slices_or_the_full_grid():
    cfg = E6Config(task=E6Task(sigmas=(0.0, 0.1), sigma_ref=0.01), sample_counts=(8, 64))
    assert cells(cfg) == [(8, 0.01), (64, 0.0), (64, 0.01), (64, 0.1)]
    full = E6Config(task=E6Task(sigmas=(0.0, 0.1), sigma_ref=0.01), sample_counts=(8, 64), full_grid=True)
    assert cells(full) == sorted(itertools.product((8, 64), (0.0, 0.01, 0.1)))


def test_settings_run_each_method_where_it_applies():
    assert settings(CFG) == [
        ("linear", "linear_v_known", "known"),
        ("linear", "linear_v_unknown", "unknown"),
        ("linear", "softmax_linearised", "known"),
        ("linear", "softmax_linearised", "unknown"),
        ("softmax", "softmax_linearised", "known"),
        ("softmax", "softmax_linearised", "unknown"),
        ("softmax", "softmax_log_attention", "known"),
        ("softmax", "softmax_log_attention", "unknown"),
    ]


def test_specs_and_groups_are_complete_and_deterministic():
    exp = E6Predictability(
        E6Predictability.configure(
            "quick", {"task.r_stars": [2], "task.spectra": ["flat"], "seeds": 2, "decisive_seeds": 0}
        )
    )
    specs = exp.specs()
    # settings × cells × seeds at n = 16, plus X1's method (V known, unknown) at n = 32, (max N, sigma_ref),
    # plus C10 (d)'s softmax_linearised (2 teachers × 2 V) at n = 8, r* 16 and 32, max N, σ in {0, 0.01}
    assert len(specs) == 8 * 4 * 2 + 2 * 2 + 4 * 2 * 2 * 2 and len({s.run_id for s in specs}) == len(specs)
    c10 = [s for s in specs if s.params["task.n"] == 8]
    assert {s.params["method"] for s in c10} == {"softmax_linearised"}
    assert {(s.params["task.r_star"], s.params["n_samples"], s.params["task.sigma"]) for s in c10} == {
        (r, 64, x) for r in (16, 32) for x in (0.0, 0.01)
    }
    x1 = [s for s in specs if s.params["task.n"] == 32]
    assert {s.params["method"] for s in x1} == {"softmax_log_attention"}
    assert {(s.params["n_samples"], s.params["task.sigma"]) for s in x1} == {(64, 0.01)}
    specs = [s for s in specs if s.params["task.n"] == 16]
    groups = exp.groups(specs)  # (the n = 8 and n = 32 groups come after)
    # one data draw per (N, seed), shared by both teachers and every σ: 4 predictions per (teacher, σ)
    assert len(groups) == 2 * 2
    assert sorted(len(g) for g in groups) == [2 * 1 * 4] * 2 + [2 * 3 * 4] * 2
    again = [[s.run_id for s in g] for g in exp.groups(exp.specs())]
    assert [[s.run_id for s in g] for g in groups] == again[: len(groups)]  # deterministic, n = 32 after


def test_draw_shares_kernel_and_inputs_across_teachers_and_sigma():
    p = {
        "teacher": "linear",
        "task.n": 6,
        "task.d": 8,
        "task.d_v": 8,
        "task.r_star": 2,
        "task.spectrum": "flat",
        "task.decay": 0.25,
        "task.c": 2.0,
        "task.sigma": 0.0,
        "n_samples": 5,
    }
    lin, X1, Y1 = draw(p, 0, E6)
    soft, X2, Y2 = draw({**p, "teacher": "softmax", "task.sigma": 0.1}, 0, E6)
    assert np.array_equal(lin.K.numpy(), soft.K.numpy()) and np.array_equal(X1, X2)
    # the clean linear target is the task's formula, σ = 0
    K, V = lin.K.numpy(), lin.V.numpy()
    expected = (X1 @ K @ X1.transpose(0, 2, 1) / np.sqrt(8)) @ X1 @ V / 6
    assert np.allclose(Y1, expected, atol=1e-12)
    _, X3, _ = draw({**p, "n_samples": 7}, 1, E6)
    assert not np.array_equal(X1, X3[:5])


def test_execute_stores_every_estimate_and_recovers_linear_v_known():
    exp = E6Predictability(
        E6Predictability.configure(
            "quick",
            {
                "task.teachers": ["linear"],
                "methods": ["linear_v_known"],
                "task.r_stars": [3],
                "task.spectra": ["geometric"],
                "sample_counts": [16],
                "task.sigmas": [0.0],
                "task.sigma_ref": 0.0,
                "seeds": 1,
                "decisive_seeds": 0,
                "task.d": 8,
                "task.d_v": 8,
                "task.ns": [6],
            },
        )
    )
    [group] = exp.groups(exp.specs())
    [res] = exp.execute(group)
    teacher, X, Y = draw(group[0].params, group[0].seed, E6)
    direct = predict_r_star(X, Y, teacher="linear-qk", V=teacher.V.numpy(), method="linear_v_known")
    assert res.metrics["r_hat"] == direct.r_hat == 3 and res.metrics["exact"] == 1.0
    assert res.metrics["identifiable"] == 1.0 and res.metrics["confident_wrong"] == 0.0
    assert {f"est_{k}" for k in direct.estimates} <= set(res.metrics)
    assert res.metrics["true_numerical_rank"] == 3 and res.curves["reason"] == direct.reason


def test_execute_shares_statistics_and_equals_the_per_cell_predictions():
    """A group (both teachers, two σ, every method and V setting) executed from shared statistics
    gives every run's discrete numbers exactly and the others within float64 round-off of
    predict_r_star run on each cell alone."""
    exp = E6Predictability(E6Predictability.configure("quick", tiny_settings("E6")))  # σ 0 and 0.1 at N = 48
    at = {"n_samples": 48, "task.r_star": 3}
    [group] = [g for g in exp.groups(exp.specs()) if g[0].seed == 0 and at.items() <= g[0].params.items()]
    assert {(s.params["teacher"], s.params["task.sigma"]) for s in group} == {
        (t, x) for t in ("linear", "softmax") for x in (0.0, 0.1)
    }
    shared = exp.execute(group)
    for spec, res in zip(group, shared):
        teacher, X, Y = draw(spec.params, spec.seed, E6)
        alone = predict_run(spec, teacher, X, Y, reference_metrics(teacher, X))
        assert res.spec == spec and res.curves["reason"] == alone.curves["reason"]
        for key, value in alone.metrics.items():
            if key in ("cpu_s", "timing_s"):
                continue
            if key in COUNTS or key.endswith(INTEGER_ESTIMATES):
                assert res.metrics[key] == value, (spec.params, key)
            else:  # σ̂ of noiseless data is round-off itself (√eps of the RSS's cancellation)
                assert res.metrics[key] == pytest.approx(value, rel=1e-9, abs=1e-7, nan_ok=True), (
                    spec.params,
                    key,
                )


COUNTS = {"r_hat", "exact", "identifiable", "confident_wrong", "n_equations", "n_unknowns", "too_few_samples"}
INTEGER_ESTIMATES = (
    *(k for k, v in panel_description(sigma_known=True).items() if v["integer"]),
    "noise_calibrated_rank",
)


def test_config_rejects_r_star_above_d():
    with pytest.raises(ConfigError, match="r_stars"):
        E6Predictability.configure("quick", {"task.r_stars": [40]})


# ---------------------------------------------------------------- domains


@pytest.mark.parametrize(
    "method, v, n, r_star, expected",
    [
        ("linear_v_known", "known", 16, 16, True),
        ("linear_v_unknown", "unknown", 16, 15, True),
        ("linear_v_unknown", "unknown", 16, 16, False),  # rank Y_i = min(r*, n, d_v) only bounds r* >= 16
        ("linear_v_unknown", "unknown", 32, 31, True),
        ("linear_v_unknown", "unknown", 32, 32, False),  # n = d: no residual to confirm r* = d
        ("linear_v_unknown", "unknown", 48, 32, True),
        ("softmax_log_attention", "known", 16, 16, True),
        ("softmax_log_attention", "known", 48, 1, False),  # n > d_v: A_i not recoverable
        ("softmax_log_attention", "unknown", 16, 1, False),
        ("softmax_linearised", "known", 16, 1, False),
    ],
)
def test_in_domain(method, v, n, r_star, expected):
    assert in_domain(method, v, n, 32, 32, r_star) is expected


# ---------------------------------------------------------------- C9


def _c9_rows(rate_unknown=1.0, flag_16=True, seeds=10):
    rows = []
    for r in R_STARS:
        for s in range(seeds):
            rows.append(_row("linear", "linear_v_known", "known", r, seed=s))
            if r == 16:
                rows.append(
                    _row(
                        "linear", "linear_v_unknown", "unknown", r, seed=s, r_hat=5, identifiable=not flag_16
                    )
                )
            else:
                hit = s < round(rate_unknown * seeds)
                rows.append(
                    _row("linear", "linear_v_unknown", "unknown", r, seed=s, r_hat=r if hit else r + 1)
                )
            rows.append(
                _row("linear", "linear_v_known", "known", r, N=8, seed=s, r_hat=0)
            )  # small N: ignored
    return rows


def test_c9_confirmed_then_flips_with_the_rate_and_the_flags():
    assert verdict_c9(LOOSE, _table(_c9_rows()), ClaimContext()).outcome == "confirmed"
    # every draw exact, but 10 draws: the Wilson interval 0.72-1 reaches 0.9, inconclusive
    v = verdict_c9(CFG, _table(_c9_rows()), ClaimContext())
    assert v.outcome == "inconclusive" and v.evidence["decision"]["narrow"]
    v = verdict_c9(CFG, _table(_c9_rows(rate_unknown=0.3)), ClaimContext())
    assert v.outcome == "refuted" and v.evidence["linear_v_unknown/n=16"]["rate_by_r_star"][4] == 0.3
    assert v.evidence["decision"]["interval"][1] <= 0.9
    v = verdict_c9(CFG, _table(_c9_rows(flag_16=False)), ClaimContext())
    assert v.outcome == "refuted" and v.evidence["linear_v_unknown/n=16"]["out_of_domain_flagged"] == 0.0
    # 8 of 10 draws exact: below 0.9 as a point, but the interval reaches 0.94: inconclusive
    assert verdict_c9(CFG, _table(_c9_rows(rate_unknown=0.8)), ClaimContext()).outcome == "inconclusive"


def test_c9_ignores_noise_above_sigma_max_and_needs_both_methods():
    rows = _c9_rows() + [_row("linear", "linear_v_known", "known", 4, sigma=0.3, r_hat=1)]
    assert verdict_c9(LOOSE, _table(rows), ClaimContext()).outcome == "confirmed"
    rows = [r for r in _c9_rows() if r["method"] == "linear_v_known"]
    v = verdict_c9(CFG, _table(rows), ClaimContext())
    assert v.outcome == "inconclusive" and v.evidence["missing"] == ["linear_v_unknown"]


# C10: test_verdicts_on_quick_rows.py decides its sub-claims on real quick rows.


def _linearised(c: float) -> tuple[E6Config, pd.DataFrame]:
    """Real softmax_linearised predictions for both teachers (same K*, X) at logit scale ``c``: six
    teacher draws (r* 2, 4, 8 × 2 seeds), two noise cells each."""
    over = {
        "task.ns": [16],
        "x1_ns": [],
        "c10_ns": [],
        "methods": ["softmax_linearised"],
        "v_settings": ["known"],
        "task.r_stars": [2, 4, 8],
        "task.spectra": ["flat"],
        "sample_counts": [64],
        "task.sigmas": [0.0, 0.01],
        "task.sigma_ref": 0.01,
        "seeds": 2,
        "task.c": c,
    }
    exp = E6Predictability(E6Predictability.configure("quick", over))
    results = [r for g in exp.groups(exp.specs()) for r in exp.execute(g)]
    return exp.cfg, pd.DataFrame([{**r.spec.params, "seed": r.spec.seed, **r.metrics} for r in results])


def test_c8_on_real_predictions_flips_each_way_by_its_interval_over_teacher_draws():
    # c = 3: the softmax's curvature enters the linearised kernel; the numerical rank counts it
    # (+8.9), the energy rank much less (+2.1): the ratio's interval over six draws lies below 1
    cfg, rows = _linearised(3.0)
    v = verdict_c8(cfg, rows, ClaimContext())
    e, d = v.evidence, v.evidence["decision"]
    assert e["pairs"] == 12 and e["teacher_draws"] == 6 and e["numerical_rank_degradation_ci"][0] >= 1.0
    assert v.outcome == "confirmed" and d["interval"][1] <= 1.0 and d["unit"] == "teacher draw"
    assert d["units"] == 6 and d["threshold"] == d["refute_threshold"] == cfg.verdict.c8_ratio == 1.0
    assert d["interval"][0] <= e["energy_to_numerical_ratio"] <= d["interval"][1]
    # the whole panel ranked, least degraded first; Gavish-Donoho's hard threshold beats the energy rank
    degradations = [r["degradation"] for r in e["ranking"]]
    assert degradations == sorted(degradations) and len(e["ranking"]) == 5
    assert e["least_degraded_kernel_estimator"] == "optimal_hard_threshold" and e["energy_rank_place"] > 1
    # one boundary: a boundary below the whole interval refutes, inside it leaves it undecided
    strict = verdict_c8(with_option(cfg, {"verdict.c8_ratio": d["interval"][0] / 2}), rows, ClaimContext())
    assert (
        strict.outcome == "refuted"
        and strict.evidence["decision"]["condition"] == "energy_to_numerical_ratio"
    )
    mid = verdict_c8(with_option(cfg, {"verdict.c8_ratio": sum(d["interval"]) / 2}), rows, ClaimContext())
    assert mid.outcome == "inconclusive" and "more teacher draws" in mid.evidence["reason"]
    # the energy rank pushed away from its value on K* by the numerical rank's own errors: refuted
    soft = rows["teacher"] == "softmax"
    away = np.sign(rows["est_energy_effective_rank"] - rows["true_energy_effective_rank"]).replace(0, 1)
    push = (rows["est_numerical_rank"] - rows["true_numerical_rank"]).abs() + 1.0
    worse = rows.assign(
        est_energy_effective_rank=rows["est_energy_effective_rank"] + np.where(soft, away * push, 0)
    )
    assert verdict_c8(cfg, worse, ClaimContext()).outcome == "refuted"
    # c = 0.1: nearly linear logits, the softmax does not contaminate the numerical rank (it reads it
    # closer to K*'s than the linear teacher does): the paper's premise fails, refuted
    cfg, rows = _linearised(0.1)
    v = verdict_c8(cfg, rows, ClaimContext())
    assert v.outcome == "refuted" and v.evidence["numerical_rank_degradation_ci"][1] < 1.0
    assert v.evidence["decision"]["condition"] == "numerical_rank_contaminated"


# ---------------------------------------------------------------- X1


def _x1_rows(miss_sigma=None, flag_outside=True):
    rows = []
    for r in R_STARS:
        for sigma in (0.0, 0.01, 0.1):
            for s in range(10):
                miss = sigma == miss_sigma and s == 0 and r == 8
                rows.append(
                    _row(
                        "softmax",
                        "softmax_log_attention",
                        "known",
                        r,
                        sigma=sigma,
                        seed=s,
                        r_hat=r - 1 if miss else r,
                    )
                )
            rows.append(
                _row(
                    "softmax",
                    "softmax_log_attention",
                    "known",
                    r,
                    sigma=0.1,
                    N=8,
                    r_hat=-1,
                    identifiable=False,
                )
            )
        rows.append(
            _row(
                "softmax",
                "softmax_log_attention",
                "known",
                r,
                n=48,
                r_hat=-1 if flag_outside else r,
                identifiable=not flag_outside,
            )
        )
        rows.append(_row("softmax", "softmax_log_attention", "unknown", r, r_hat=-1, identifiable=False))
    return rows


def _x1(rows, cfg=LOOSE):
    table = _table(rows)
    rates = rate_table(table)
    return verdict_x1(
        cfg, table, ClaimContext(tables={"frontier": frontier_table(rates, 0.1, CFG.verdict.rate)})
    )


def test_x1_confirmed_then_flips():
    v = _x1(_x1_rows())
    assert v.outcome == "confirmed" and v.evidence["exact_inside"] and v.evidence["flagged_outside"]
    assert v.evidence["frontier"]["n=16/r*=4"]["min_N_exact"] == 64.0  # N = 8 failed at σ = 0.1
    v = _x1(_x1_rows(miss_sigma=0.01))  # 9/10 at r* = 8: interval 0.60-0.98, above 0.5
    assert v.outcome == "confirmed"
    assert _x1(_x1_rows(), CFG).outcome == "inconclusive"  # 10/10 draws: the interval reaches 0.72 < 0.9
    rows = _x1_rows(miss_sigma=0.01)
    rows += [
        _row("softmax", "softmax_log_attention", "known", 8, sigma=0.01, seed=99 + k, r_hat=7)
        for k in range(10)
    ]
    v = _x1(rows, CFG)  # 9/20 draws exact: interval 0.26-0.66, wholly below 0.9
    assert v.outcome == "refuted" and v.evidence["decision"]["condition"] == "sigma=0.01/r*=8"
    assert _x1(_x1_rows(miss_sigma=0.1)).outcome == "confirmed"  # σ = 0.1 > sigma_max is reported, not judged
    v = _x1(_x1_rows(flag_outside=False), CFG)
    assert v.outcome == "refuted" and v.evidence["out_of_domain_flagged"]["n=48/V known"] == 0.0


def test_rate_table_counts_runs_and_flags():
    rates = rate_table(_table(_x1_rows()))
    g = rates[(rates["v"] == "unknown")]
    assert (g["rate"] == 0).all() and (g["flagged"] == 1).all() and (g["runs"] == 1).all()
    g = rates[(rates["v"] == "known") & (rates["task.n"] == 16) & (rates["n_samples"] == 64)]
    assert (g["rate"] == 1).all() and (g["runs"] == 10).all()
