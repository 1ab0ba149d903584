"""E3: verdict logic on synthetic tables (each verdict flips with the numbers), the grid and its
ensembles, held-out excess against independent ground truths, and bad input before any work."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from entropic_bound.config import apply_overrides
from entropic_bound.errors import ConfigError, UserInputError
from entropic_bound.experiments import E3Config, E3Ladder
from entropic_bound.experiments.e3_ladder.analysis import fill_settings, summary_table
from entropic_bound.experiments.e3_ladder.claims import c4_on_summary, x2_on_summary
from entropic_bound.experiments.e3_ladder.config import E3Task
from entropic_bound.experiments.e3_ladder.experiment import build_student, evaluate, task_of, training_data
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.models import (
    LinearOperatorEnsemble,
    LinearQKEnsemble,
    MemberSpec,
    TransformerBlockEnsemble,
)
from entropic_bound.sweep.spec import RunSpec
from entropic_bound.tasks import FixedOperatorTask
from entropic_bound.theory import clean_signal, population_excess_risk
from entropic_bound.training import TrainConfig
from entropic_bound.training.evaluation import held_out_excess

CFG = E3Config(task=E3Task(n=8, d=8, r_star=2), ranks=(2,))


def _row(role, rung, v, rank, rel, positional="none", operator="low_rank", seed=0, n_heads=1):
    return {
        "role": role,
        "task.kind": "linear_qk_teacher" if role == "control_b" else "fixed_operator",
        "task.operator": np.nan if role == "control_b" else operator,
        "rung": rung,
        "v": v,
        "positional": positional,
        "n_heads": np.nan if rung == "B0" else float(n_heads),
        "rank": rank,
        "seed": seed,
        "rel_excess": rel,
        "converged": 1.0,
        "status": "ok",
    }


def ladder_table(B0=1e-5, B1=1.0, B2=0.99, B3=1.0, control=1e-5, spread=0.0):
    rows = []
    for v in ("known", "learned"):
        for seed, jitter in enumerate((-spread, 0.0, spread)):
            for rung, rel in (("B0", B0), ("B1", B1), ("B2", B2), ("B3", B3)):
                rows.append(_row("ladder", rung, v, CFG.full_rank(rung), rel + jitter, seed=seed))
                rows.append(_row("ladder", rung, v, 1, max(rel, 0.6), seed=seed))  # swept rank
            rows.append(_row("control_b", "B1", v, CFG.task.d, control, seed=seed))
    return pd.DataFrame(rows)


def c4(**kw):
    table = ladder_table(**kw)
    return c4_on_summary(CFG, summary_table(table), table)


def test_c4_confirmed_when_the_jump_is_at_b1_and_controls_reach_the_floor():
    v = c4(spread=0.001)
    assert v.outcome == "confirmed"
    assert v.evidence["full_rank"]["known"]["B1"] == pytest.approx(1.0)  # median over seeds
    assert v.evidence["ratio_c"]["learned"] == pytest.approx(0.01 / (1.0 - 1e-5))


def test_c4_refuted_when_a_rung_learns_or_softmax_makes_a_difference():
    assert c4(B1=0.3).outcome == "refuted"  # no jump at B1
    assert c4(B3=0.4).outcome == "refuted"  # B3 fails the 0.5 threshold (and the ratio)
    v = c4(B2=0.7)  # B2 far from B1: (c) ratio 0.3 > 0.1
    assert v.outcome == "refuted" and v.evidence["ratio_holds"] is False and v.evidence["jump_holds"] is True


def test_c4_caps_values_above_the_zero_predictor():
    v = c4(B2=1.06, B3=1.2)  # V known can push B2/B3 above 1: no more signal recovered than B1
    assert v.outcome == "confirmed" and v.evidence["ratio_c"]["known"] == pytest.approx(0.0, abs=1e-9)


def test_c4_inconclusive_when_a_control_fails_or_runs_are_missing():
    v = c4(B0=0.05)
    assert v.outcome == "inconclusive" and "control" in v.evidence["reason"]
    assert c4(control=0.2).outcome == "inconclusive"
    table = ladder_table()
    v = c4_on_summary(CFG, summary_table(table[table["rung"] != "B3"]))
    assert v.outcome == "inconclusive" and "B3" in v.evidence["reason"]
    assert c4_on_summary(CFG, summary_table(table.iloc[0:0])).outcome == "inconclusive"


def x2_table(b1_pos=0.005, b2_pos=0.004, seeds=4, stuck=0):
    """X2 rows over ``seeds`` student seeds, the first ``stuck`` of them at 0.13 with positions."""
    rows = []
    for rung, operator, pos_value, none_value in (
        ("B1", "low_rank", b1_pos, 1.0),
        ("B2", "row_stochastic", b2_pos, 0.8),
        ("B2", "low_rank", 0.6, 1.05),
    ):
        for rank, factor in ((2, 3.0), (8, 1.0)):
            for seed in range(seeds):
                pos = 0.13 if seed < stuck else pos_value * factor
                rows.append(_row("x2", rung, "known", rank, pos, "learned_absolute", operator, seed=seed))
                rows.append(_row("x2", rung, "known", rank, none_value, "none", operator, seed=seed))
    return pd.DataFrame(rows)


def test_x2_confirmed_refuted_or_inconclusive_by_floor_and_run_length():
    short, long = CFG, replace(CFG, x2_train=replace(CFG.x2_train, steps=6000))
    v = x2_on_summary(short, summary_table(x2_table()), x2_table())
    assert v.outcome == "confirmed"
    pair = v.evidence["pairs"]["B2/row_stochastic"]
    assert pair["best_setting"]["rank"] == 8 and pair["min_rank_reaching_floor"] == 8
    assert pair["gap_closed"] == pytest.approx(1 - 0.004 / 0.8)
    assert v.evidence["pairs"]["B2/low_rank"]["decides_verdict"] is False
    failing = x2_table(b2_pos=0.03)
    v = x2_on_summary(short, summary_table(failing), failing)
    assert v.outcome == "inconclusive" and "6000" in v.evidence["reason"]
    assert x2_on_summary(long, summary_table(failing), failing).outcome == "refuted"
    # the same numbers from runs still improving, or with no curve: cannot refute
    for flag in (0.0, np.nan):
        v = x2_on_summary(long, summary_table(failing), failing.assign(converged=flag))
        assert v.outcome == "inconclusive" and "still improving" in v.evidence["reason"]
    assert x2_on_summary(long, summary_table(failing)).outcome == "inconclusive"
    no_b1 = x2_table()[lambda t: t["rung"] != "B1"]
    assert x2_on_summary(long, summary_table(no_b1), no_b1).outcome == "inconclusive"


def test_x2_a_stuck_seed_lowers_the_share_and_more_seeds_decide():
    """One seed stuck at 0.13 does not make the verdict absorbing: at 3 seeds the share 2/3 is open, at
    8 seeds 7/8 clears the one boundary (1/2); the decision counts student seeds, keyed by draw."""
    v = x2_on_summary(CFG, summary_table(x2_table(seeds=3, stuck=1)), x2_table(seeds=3, stuck=1))
    assert v.outcome == "inconclusive" and "more seeds" in v.evidence["reason"]
    many = x2_table(seeds=8, stuck=1)
    v = x2_on_summary(CFG, summary_table(many), many)
    d = v.evidence["decision"]
    assert v.outcome == "confirmed" and d["statistic"] == pytest.approx(7 / 8) and d["units"] == 8
    assert d["threshold"] == d["refute_threshold"] == CFG.verdict.x2_seed_share
    pooled = pd.concat([many.assign(draw=0), many.assign(draw=1)])
    assert x2_on_summary(CFG, summary_table(pooled), pooled).evidence["decision"]["units"] == 16


@pytest.mark.parametrize("share,outcome", [(0.75, "confirmed"), (0.25, "refuted")])
def test_x2_share_is_decided_either_side_of_its_one_boundary(share, outcome):
    """A share of seeds reaching the floor off 1/2: 4 seeds leave it open, 40 decide it (long, converged
    runs, so a failure refutes)."""
    long = replace(CFG, x2_train=replace(CFG.x2_train, steps=6000))
    for seeds, expected in ((4, "inconclusive"), (40, outcome)):
        rows = x2_table(b1_pos=0.002, b2_pos=0.002, seeds=seeds, stuck=round((1 - share) * seeds))
        assert x2_on_summary(long, summary_table(rows), rows).outcome == expected, (share, seeds)


def test_c4_states_the_positional_confound():
    table = pd.concat([ladder_table(), x2_table()])
    cause = c4_on_summary(CFG, summary_table(table), table).evidence["cause"]
    assert cause["separated"] is False and "positions" in cause["confound"]
    assert cause["gap_closed_with_positions"]["B1/low_rank"] == pytest.approx(1 - 0.005 / 1.0)
    assert "without positions" in cause["would_separate"]


def test_c4_failure_of_b1_b3_needs_converged_runs():
    table = ladder_table()
    assert c4_on_summary(CFG, summary_table(table), table).outcome == "confirmed"
    v = c4_on_summary(CFG, summary_table(table), table.assign(converged=0.0))
    assert v.outcome == "inconclusive" and v.evidence["convergence_B1_B3_full_rank"]["still_improving"] == 18
    # a refutation (no jump at B1) reads "B1 reached the floor": no convergence needed
    low = ladder_table(B1=0.3)
    assert c4_on_summary(CFG, summary_table(low), low.assign(converged=0.0)).outcome == "refuted"


# ----- the grid


def test_grid_groups_all_seeds_and_ranks_of_a_rung_into_one_ensemble():
    exp = E3Ladder(replace(CFG, seeds=2, ranks=(1, 2)))
    specs = exp.specs()
    assert len({s.run_id for s in specs}) == len(specs)
    groups = exp.groups(specs)
    for g in groups:
        keys = {
            (
                s.params["role"],
                s.params["rung"],
                s.params["v"],
                s.params["positional"],
                s.params.get("task.operator"),
                s.params.get("n_heads"),
            )
            for s in g
        }
        assert len(keys) == 1
    b1 = [
        g
        for g in groups
        if g[0].params["rung"] == "B1" and g[0].params["role"] == "ladder" and g[0].params["v"] == "known"
    ]
    assert len(b1) == 1 and sorted({(s.params["rank"], s.seed) for s in b1[0]}) == [
        (r, s) for r in (1, 2, 8) for s in (0, 1)
    ]  # swept ranks + full rank d = 8, both seeds
    b0 = [s for s in specs if s.params["rung"] == "B0"]
    assert max(s.params["rank"] for s in b0) == CFG.task.n
    assert not [
        s
        for s in E3Ladder(replace(CFG, control_b=False, positional_rungs=())).specs()
        if s.params["role"] != "ladder"
    ]
    changed = E3Ladder(replace(CFG, seeds=2, ranks=(1, 2), task=replace(CFG.task, sigma=0.2))).specs()
    assert not {s.run_id for s in changed} & {s.run_id for s in specs}


def test_every_rung_sees_the_same_data_stream():
    exp = E3Ladder(CFG)
    by_rung = {}
    for s in exp.specs():
        if s.params["role"] == "ladder":
            by_rung.setdefault(s.params["rung"], s.params)
    train = TrainConfig(**{k[6:]: v for k, v in by_rung["B0"].items() if k.startswith("train.")})
    batches = []
    for rung in ("B0", "B3"):
        task = task_of(by_rung[rung])
        data = training_data(task.teacher(0), task, 0, train, Seeds("E3"))
        batches.append([data.batch(i) for i in range(2)])
    for (x0, y0), (x1, y1) in zip(*batches):
        assert torch.equal(x0, x1) and torch.equal(y0, y1)


# ----- measurement against independent ground truths


def test_held_out_excess_of_b0_matches_the_population_formula():
    task = FixedOperatorTask(n=6, d=4, r_star=2, sigma=0.1)
    teacher = task.teacher(0)
    model = LinearOperatorEnsemble([MemberSpec(r, 0.5, r) for r in (1, 3, 6)], n=6, d=4, d_v=4)
    test = teacher.sample(16_000, torch.Generator().manual_seed(1))
    metrics, mixers, target = evaluate(model, teacher, test, n_mix=8)
    ops = model.operators()
    truth = teacher.truth
    exact = population_excess_risk(ops["A"], ops["V"], truth["A"], truth["V"]) / clean_signal(
        truth["A"], truth["V"]
    )
    np.testing.assert_allclose(metrics["rel_excess_population"], exact)
    np.testing.assert_allclose(metrics["rel_excess"], exact, rtol=0.05)
    np.testing.assert_allclose(mixers, ops["A"].numpy())  # a fixed operator is its own mean mixer
    np.testing.assert_allclose(target, truth["A"])


def test_held_out_excess_matches_a_per_model_loop_in_chunks():
    members = [MemberSpec(r, 0.5, 10 + r) for r in (1, 3)]
    model = LinearQKEnsemble(members, n=5, d=3, d_v=3, dtype=torch.float64)
    X = torch.randn(70, 5, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    clean = torch.randn(70, 5, 3, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    got = held_out_excess(model, X, clean, chunk=16)
    for m, member in enumerate(members):
        alone = LinearQKEnsemble([member], n=5, d=3, d_v=3, dtype=torch.float64)
        with torch.no_grad():
            expected = ((alone(X)[0] - clean) ** 2).mean().item()
        assert got[m] == pytest.approx(expected, rel=1e-12)


# ----- bad input


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"ranks": (9,)}, "The 'ranks' parameter must hold ints in [1, 8] (task.d"),
        ({"x2_ranks": (12,)}, "The 'x2_ranks' parameter must hold ints in [1, 8]"),
        ({"positional_rungs": ("B1", "B3")}, "positional information is for B1 and B2 only. Got 'B3'"),
        ({"positional_rungs": ("B0",)}, "positional information is for B1 and B2 only. Got 'B0'"),
        ({"rungs": ()}, "must hold at least one of B0, B1, B2, B3"),
        ({"rungs": ("B1", "B5")}, "The 'rungs' parameter must be one of 'B0', 'B1', 'B2', 'B3'. Got 'B5'"),
        ({"task.r_star": 9}, "The 'task.r_star' parameter must be an int in [1, 8]"),
    ],
)
def test_bad_config_is_one_line(changes, message):
    with pytest.raises(ConfigError) as err:
        E3Ladder(apply_overrides(CFG, changes))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_b0_only_sweep_allows_ranks_up_to_n():
    cfg = replace(
        CFG,
        task=E3Task(n=12, d=4, r_star=2),
        rungs=("B0",),
        ranks=(10,),
        control_b=False,
        positional_rungs=(),
    )
    specs = E3Ladder(cfg).specs()
    assert sorted({s.params["rank"] for s in specs}) == [10, 12]


def test_models_refuse_positions_on_b0_and_b3():
    with pytest.raises(
        UserInputError, match="only available for B1 and B2 .B0's fixed operator already knows positions"
    ):
        LinearOperatorEnsemble([MemberSpec(2, 0.1, 0)], n=4, d=2, d_v=2, positional="learned_absolute")
    with pytest.raises(UserInputError, match="only available for B1 and B2"):
        TransformerBlockEnsemble([MemberSpec(2, 0.1, 0)], n=4, d=2, d_v=2, positional="learned_absolute")
    spec = next(s for s in E3Ladder(CFG).specs() if s.params["rung"] == "B3")
    bad = RunSpec(spec.experiment, {**spec.params, "positional": "learned_absolute"}, 0)
    with pytest.raises(UserInputError):
        build_student([bad], task_of(bad.params).teacher(0), torch.float32, Seeds("E3"))


# ----- X2's convergence rule on real trainings


@pytest.fixture(scope="module")
def x2_short():
    """B1 and B2 with and without learned positions (n = d = 8, r* = 2, full rank), 300 Adam steps on the
    cosine schedule: the positional runs are far above the floor and still improving."""
    cfg = E3Config(
        task=E3Task(n=8, d=8, r_star=2),
        rungs=("B0",),
        ranks=(2,),
        v_settings=("known",),
        control_b=False,
        seeds=1,
        x2_seeds=4,  # the share of seeds reaching the floor needs 4 to decide against 1/2
        x2_ranks=(8,),
        n_test=256,
        x2_train=replace(E3Config().x2_train, steps=300),
    )
    exp = E3Ladder(cfg)
    rows = []
    for group in exp.groups(exp.specs()):
        if group[0].params["role"] == "x2":
            rows += [
                {**r.spec.params, "seed": r.spec.seed, "status": r.status, **r.metrics}
                for r in exp.execute(group)
            ]
    return cfg, fill_settings(pd.DataFrame(rows))


def _x2(cfg, rows, **verdict):
    cfg = replace(cfg, verdict=replace(cfg.verdict, x2_min_steps=1, **verdict))
    return x2_on_summary(cfg, summary_table(rows), rows)


def test_x2_real_runs_still_improving_cannot_refute(x2_short):
    cfg, rows = x2_short
    positional = rows[rows["positional"] == "learned_absolute"]
    assert (positional["rel_excess"] > 0.02).all() and (positional["relative_drop"] >= 0.1).any()
    v = _x2(cfg, rows)
    assert v.outcome == "inconclusive" and "still improving" in v.evidence["reason"]
    assert v.evidence["convergence_failing_pairs"]["still_improving"] >= 1
    # the same runs, were their last-quarter drop called converged (tolerance above it): refuted
    loose = float(positional["relative_drop"].max()) + 0.01
    assert _x2(cfg, rows, convergence_tol=loose).outcome == "refuted"
    # and a floor they reached: confirmed
    assert _x2(cfg, rows, eps_floor=float(positional["rel_excess"].max()) + 0.01).outcome == "confirmed"
