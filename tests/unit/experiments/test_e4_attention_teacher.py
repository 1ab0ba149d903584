"""E4: held-out excess and K = 0 helpers against direct computations; C5/C6 verdict logic on synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from entropic_bound.experiments.e4_attention_teacher.analysis import paired_ratios, transition_table
from entropic_bound.experiments.e4_attention_teacher.claims import verdict_c5, verdict_c6
from entropic_bound.experiments.e4_attention_teacher.config import E4Config, E4Verdict
from entropic_bound.experiments.e4_attention_teacher.experiment import E4AttentionTeacher
from entropic_bound.experiments.framework.claim_slices import with_option
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.experiments.framework.verdict import ClaimContext
from entropic_bound.experiments.science.attention_teachers import (
    build_student,
    draw_data,
    draw_teacher,
    uniform_attention_excess,
)
from entropic_bound.models.base import MemberSpec
from entropic_bound.training.evaluation import held_out_excess

CTX = ClaimContext()
E4 = Seeds("E4")  # draw 0
TASK = {"n": 6, "d": 8, "r_star": 2, "spectrum": "flat", "decay": 0.25, "c": 2.0, "sigma": 0.1}


def test_teachers_share_kernel_value_and_inputs():
    _, lin = draw_teacher(E4, "linear", TASK, 0)
    _, soft = draw_teacher(E4, "softmax", TASK, 0)
    assert torch.equal(lin.K, soft.K) and torch.equal(lin.V, soft.V)
    a = draw_data(E4, "test", lin, TASK, 5, 0, torch.float64)
    b = draw_data(E4, "test", soft, TASK, 5, 0, torch.float64)
    c = draw_data(E4, "train", soft, TASK, 5, 0, torch.float64)
    assert torch.equal(a.X, b.X) and not torch.equal(a.X, c.X)


@pytest.mark.parametrize("kind", ["linear", "softmax"])
def test_heldout_excess_matches_per_model_loop_and_is_zero_at_the_teacher(kind):
    _, teacher = draw_teacher(E4, kind, TASK, 1)
    test = draw_data(E4, "test", teacher, TASK, 37, 1, torch.float64)
    model = build_student(kind, [MemberSpec(2, 0.5, 3), MemberSpec(4, 0.5, 4)], teacher, False, torch.float64)
    got = held_out_excess(model, test.X, test.clean, chunk=10)  # chunks of 10 over 37 samples
    with torch.no_grad():
        pred = model(test.X)
    for m in range(2):
        assert got[m] == pytest.approx(float(((pred[m] - test.clean) ** 2).mean()), rel=1e-12)
    with torch.no_grad():  # plant the teacher in member 0: W_Q W_K^T = K*, V = V*
        U, s, Wt = torch.linalg.svd(teacher.K)
        model.W_Q[0, 0, :, :2] = U[:, :2] * s[:2]
        model.W_K[0, 0, :, :2] = Wt[:2].T
        model.V[0] = teacher.V
    assert held_out_excess(model, test.X, test.clean)[0] < 1e-20


def test_uniform_attention_excess():
    _, soft = draw_teacher(E4, "softmax", TASK, 2)
    test = draw_data(E4, "test", soft, TASK, 200, 2, torch.float64)
    known = uniform_attention_excess(test, soft.V, "softmax")
    pred = test.X.mean(1, keepdim=True) @ soft.V  # (N, 1, d_v): uniform mixing with V*
    assert known == pytest.approx(float((pred - test.clean).pow(2).mean()), rel=1e-12)
    learned = uniform_attention_excess(test, None, "softmax")
    assert learned <= known + 1e-12  # the best V is at least as good as V*
    rng = np.random.default_rng(0)  # and no perturbed V beats it
    for _ in range(5):
        V = torch.linalg.lstsq(test.X.mean(1), test.clean.mean(1)).solution + 0.01 * torch.tensor(
            rng.normal(size=(8, 8))
        )
        assert learned <= uniform_attention_excess(test, V, "softmax") + 1e-12
    assert uniform_attention_excess(test, None, "linear") == pytest.approx(float(test.clean.pow(2).mean()))
    # a model with K = 0 really attains the reported excess
    model = build_student("softmax", [MemberSpec(1, 1.0, 0)], soft, True, torch.float64)
    with torch.no_grad():
        model.W_Q.zero_()
    assert held_out_excess(model, test.X, test.clean)[0] == pytest.approx(known, rel=1e-10)


def synthetic(
    below: float, at: float, soft_below: float | None = None, soft_k0: float = 0.5, seeds: int = 1
) -> pd.DataFrame:
    """Rows for r* = 2, 3 with ranks 1..r*+1 and ``seeds`` teacher draws each; rel_excess `below`
    under r*, `at` from r* on."""
    rows = []
    for kind, seed in ((k, s) for k in ("linear", "softmax") for s in range(seeds)):
        k0 = 1.0 if kind == "linear" else soft_k0
        for r_star in (2, 3):
            for rank in range(1, r_star + 2):
                value = (
                    (soft_below if kind == "softmax" and soft_below is not None else below)
                    if rank < r_star
                    else at
                )
                if rank < r_star - 1:
                    value = min(1.0, 2 * value)
                rows.append(
                    {
                        "teacher": kind,
                        "task.r_star": r_star,
                        "task.spectrum": "flat",
                        "task.c": 2.0,
                        "v": "known",
                        "seed": seed,
                        "rank": rank,
                        "rel_excess": value,
                        "excess_over_k0": value / k0,
                        "k0_rel_excess": k0,
                    }
                )
    return pd.DataFrame(rows)


def test_c5_confirmed_and_refuted():
    cfg = E4Config()
    # 40 teacher draws per kind, all on their side: the Wilson interval (>= 0.912) clears 0.9
    assert verdict_c5(cfg, synthetic(0.3, 1e-4, seeds=40), CTX).outcome == "confirmed"
    # the same shares on 2 draws per kind: the interval reaches 0.34, inconclusive for want of draws
    few = verdict_c5(cfg, synthetic(0.3, 1e-4), CTX)
    assert few.outcome == "inconclusive" and few.evidence["decision"]["narrow"]
    assert "too few teacher draws" in few.evidence["reason"]
    # r >= r* misses the floor and has stopped improving: achievability fails
    assert verdict_c5(cfg, synthetic(0.3, 0.05).assign(converged=1.0), CTX).outcome == "refuted"
    # the same misses still improving (or with no curve to tell): they cannot refute
    v = verdict_c5(cfg, synthetic(0.3, 0.05).assign(converged=0.0), CTX)
    assert v.outcome == "inconclusive" and "still improving" in v.evidence["reason"]
    assert verdict_c5(cfg, synthetic(0.3, 0.05), CTX).outcome == "inconclusive"
    # r < r* above the floor by less than c5_margin: deficient all the same (one boundary, eps_floor)
    assert verdict_c5(cfg, synthetic(0.02, 1e-4, seeds=40), CTX).outcome == "confirmed"
    # r < r* reaching the floor: deficiency fails
    v = verdict_c5(cfg, synthetic(0.005, 1e-4), CTX)
    assert v.outcome == "refuted" and v.evidence["decision"]["condition"].endswith("/deficient")
    assert verdict_c5(cfg, synthetic(0.3, 1e-4).iloc[:0], CTX).outcome == "inconclusive"


def with_failures(rows: pd.DataFrame, share: float, ranks: str, value: float) -> pd.DataFrame:
    """``rows`` with the runs below r* (``ranks="below"``) or at and above it (``"above"``) of the first
    ``(1 - share)`` of each teacher kind's teacher draws set to ``value``."""
    out = rows.copy()
    draws = out[["task.r_star", "seed"]].drop_duplicates().sort_values(["seed", "task.r_star"])
    bad = draws.iloc[: round((1 - share) * len(draws))]
    side = out["rank"] < out["task.r_star"] if ranks == "below" else out["rank"] >= out["task.r_star"]
    hit = out.set_index(["task.r_star", "seed"]).index.isin(bad.set_index(["task.r_star", "seed"]).index)
    out.loc[side & hit, "rel_excess"] = value
    return out


@pytest.mark.parametrize("ranks,value", [("below", 0.005), ("above", 0.05)])
@pytest.mark.parametrize("share,outcome", [(0.96, "confirmed"), (0.8, "refuted")])
def test_c5_each_share_is_decided_either_side_of_its_one_boundary(ranks, value, share, outcome):
    """A share off its bar (0.9) is decided by enough teacher draws, the way the data lie: 20 draws per
    kind leave it open, 200 decide it (the failing runs have converged: they count)."""
    cfg = E4Config()
    for seeds, expected in ((5, "inconclusive"), (100, outcome)):
        rows = with_failures(synthetic(0.3, 1e-4, seeds=seeds), share, ranks, value).assign(converged=1.0)
        v = verdict_c5(cfg, rows, CTX)
        assert v.outcome == expected, (ranks, share, seeds)
        assert (
            v.evidence["decision"]["units"] == 2 * seeds
            and v.evidence["teacher_draws"]["linear"] == 2 * seeds
        )
        d = v.evidence["decision"]
        assert d["threshold"] == d["refute_threshold"] == cfg.verdict.c5_rate


def test_c5_teacher_draws_of_several_draws_are_distinct_units():
    one = synthetic(0.3, 1e-4, seeds=10)
    pooled = pd.concat([one.assign(draw=0), one.assign(draw=1)])
    assert verdict_c5(E4Config(), one, CTX).evidence["decision"]["units"] == 20
    v = verdict_c5(E4Config(), pooled, CTX)
    assert v.evidence["decision"]["units"] == 40 and v.outcome == "confirmed"


def test_c6_normalisations_and_flip():
    # two pairs (r* = 2, 3) per c here: c6_min_pairs lowered to decide them
    cfg_k0, cfg_sig = (
        E4Config(verdict=E4Verdict(c6_normalisation=n, c6_min_pairs=2)) for n in ("k0", "signal")
    )
    # softmax excess(r*-1) = 0.2 of the signal vs linear 0.4; but K = 0 already leaves only 0.5 of the signal
    table = synthetic(0.4, 1e-4, soft_below=0.2, soft_k0=0.5)
    pairs = paired_ratios(transition_table(table))
    assert np.allclose(pairs["ratio_signal"], 0.5) and np.allclose(pairs["ratio_k0"], 1.0)
    many = synthetic(0.4, 1e-4, soft_below=0.2, soft_k0=0.5, seeds=4)  # 8 draws clear the 0.5 boundary bar
    assert verdict_c6(cfg_sig, many, CTX).outcome == "confirmed"
    assert verdict_c6(cfg_sig, table, CTX).evidence["decision"]["condition"] in (
        "boundary_kept",
        "deficient_below",
    )
    v = verdict_c6(cfg_k0, many, CTX)
    assert v.outcome == "refuted" and v.evidence["other_normalisation_verdict"] == "confirmed"
    assert verdict_c6(E4Config(verdict=E4Verdict(c6_normalisation="signal")), table, CTX).outcome == (
        "inconclusive"  # two pairs < the default four: not decided
    )
    # compressed under both normalisations
    table = synthetic(0.4, 1e-4, soft_below=0.1, soft_k0=0.8, seeds=4)
    assert verdict_c6(cfg_k0, table, CTX).outcome == "confirmed"
    # compressed, but the softmax loses the boundary (does not reach the floor at r*)
    lost = table.copy()
    lost.loc[(lost["teacher"] == "softmax") & (lost["rank"] == lost["task.r_star"]), "rel_excess"] = 0.05
    assert verdict_c6(cfg_k0, lost.assign(converged=1.0), CTX).outcome == "refuted"
    assert verdict_c6(cfg_k0, lost.assign(converged=0.0), CTX).outcome == "inconclusive"  # still improving
    # compressed so far that r*-1 reaches the floor too: the boundary has moved below r*
    moved = table.copy()
    moved.loc[(moved["teacher"] == "softmax") & (moved["rank"] == moved["task.r_star"] - 1), "rel_excess"] = (
        1e-3
    )
    v = verdict_c6(cfg_k0, moved, CTX)
    assert v.outcome == "refuted" and v.evidence["decision"]["condition"] == "deficient_below"
    assert verdict_c6(cfg_k0, table.iloc[:0], CTX).outcome == "inconclusive"


def test_c6_unit_is_the_teacher_pair_not_its_v_settings():
    """V known and V learned of one teacher share K*, V* and X: one pair, their ratios' median."""
    table = synthetic(0.4, 1e-4, soft_below=0.1, soft_k0=0.8, seeds=3)
    both = pd.concat([table, table.assign(v="learned")])
    cfg = E4Config()
    assert verdict_c6(cfg, table, CTX).evidence["pairs"] == verdict_c6(cfg, both, CTX).evidence["pairs"] == 6
    assert verdict_c6(cfg, both, CTX).evidence["decision"]["units"] == 6


@pytest.mark.parametrize("share,outcome", [(0.75, "confirmed"), (0.25, "refuted")])
def test_c6_boundary_share_is_decided_either_side_of_its_bar(share, outcome):
    """The share of softmax draws reaching the floor at r* off its bar (0.5): 4 draws leave it open,
    enough draws decide it either way (the compression holds throughout)."""
    cfg = E4Config()
    for seeds, expected in ((2, "inconclusive"), (40, outcome)):
        table = synthetic(0.4, 1e-4, soft_below=0.1, soft_k0=0.8, seeds=seeds).assign(converged=1.0)
        soft = table[table["teacher"] == "softmax"]
        rows = pd.concat([table[table["teacher"] == "linear"], with_failures(soft, share, "above", 0.05)])
        v = verdict_c6(cfg, rows, CTX)
        assert v.outcome == expected, (share, seeds)
        kept = v.evidence["decisions"]["boundary_kept"]
        assert kept["threshold"] == kept["refute_threshold"] == cfg.verdict.c6_boundary_share


def _trained(steps: int, init: float, lr_final: float | None) -> tuple[E4Config, pd.DataFrame]:
    """Real E4 runs (linear and softmax teachers, r* = 2, ranks 1-4) trained for ``steps``."""
    over = {
        "task.n": 6,
        "task.d": 8,
        "task.r_stars": [2],
        "task.spectra": ["flat"],
        "v_settings": ["known"],
        "n_test": 64,
        "train.n_samples": 32,
        "train.steps": steps,
        "train.checkpoints": 8,
        "train.lr_final": lr_final,
        "c6_cs": [],
        "seeds": 1,
        "ranks": [],
        "init_scale": init,
    }
    exp = E4AttentionTeacher(E4AttentionTeacher.configure("quick", over))
    results = [r for g in exp.groups(exp.specs()) for r in exp.execute(g)]
    rows = [{**r.spec.params, "seed": r.spec.seed, "run_id": r.spec.run_id, **r.metrics} for r in results]
    return exp.cfg, pd.DataFrame(rows)


def test_c5_convergence_rule_on_real_trainings():
    # 300 cosine steps (the quick schedule): r >= r* students reach 1e-2 and stop improving
    cfg, rows = _trained(300, 1e-3, 1e-4)
    # one teacher draw per kind: all shares 1, Wilson interval down to 0.21 — inconclusive at 0.9,
    # confirmed at a rate the interval clears
    v = verdict_c5(cfg, rows, CTX)
    assert v.outcome == "inconclusive" and v.evidence["decision"]["interval"][0] < 0.25
    assert verdict_c5(with_option(cfg, {"verdict.c5_rate": 0.2}), rows, CTX).outcome == "confirmed"
    far = with_option(cfg, {"verdict.eps_floor": 1e-4, "verdict.c5_rate": 0.95})  # below where they settled
    v = verdict_c5(far, rows, CTX)
    # refuted although one run is still improving: too few would reach it even if that one did
    assert v.outcome == "refuted" and "stopped improving" in v.evidence["reason"]
    # 30 constant-lr steps: far from the floor and still falling fast: not a refutation
    cfg, short = _trained(30, 0.1, None)
    assert (short["converged"] == 0).all() and (short["last_quarter_drop"] > 0.1).all()
    v = verdict_c5(cfg, short, CTX)
    assert v.outcome == "inconclusive" and v.evidence["still_improving"] == 6
    assert "train longer" in v.evidence["reason"]
