"""Draws: a run spec carries its draw, every seed comes from the draw's ``Seeds``; verdicts combine
over draws.

Draw 0 is the grid as it was before draws existed (``test_run_ids_stable.py`` pins its ids); here a
fresh draw gives new run ids, a new teacher, new data and new trained numbers, and the combination
rule flips each way on real verdicts decided on the quick rows.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from quick_rows import load

from entropic_bound.errors import UserInputError
from entropic_bound.experiments import tiny_settings
from entropic_bound.experiments.e1_linear_surrogate import claims as e1_claims
from entropic_bound.experiments.e7_language.execute import _load
from entropic_bound.experiments.framework.claim_slices import with_option
from entropic_bound.experiments.framework.draws import Seeds, drawn_seed, draws_to_run, parse_draws, salted
from entropic_bound.experiments.framework.params import from_params
from entropic_bound.experiments.framework.replication import DISAGREE, combine
from entropic_bound.experiments.framework.verdict import ClaimContext
from entropic_bound.experiments.science.attention_teachers import draw_data, draw_teacher
from entropic_bound.pipeline import configure
from entropic_bound.registry import EXPERIMENTS
from entropic_bound.report.format import draws_text
from entropic_bound.results import canonical_json
from entropic_bound.tasks import FixedOperatorTask


@pytest.mark.parametrize("name", EXPERIMENTS.names())
def test_a_fresh_draw_names_every_run_anew_and_draw_zero_adds_nothing(name):
    exp = configure(name, "quick", tiny_settings(name))
    zero, one = exp.drawn_specs(exp.seeds), exp.drawn_specs(Seeds(name, 1))
    assert exp.draw == 0 and all(s.draw == 0 and "draw" not in s.key()["params"] for s in zero)
    assert [s.params for s in zero] == [s.params for s in one] and {s.draw for s in one} == {1}
    assert not {s.run_id for s in zero} & {s.run_id for s in one}
    assert len({s.run_id for s in zero + one}) == 2 * len(zero)
    # a draw set by override is the same grid as the draw's seeds give
    overridden = configure(name, "quick", {**tiny_settings(name), "draw": 1})
    assert [s.run_id for s in overridden.drawn_specs(overridden.seeds)] == [s.run_id for s in one]


def test_seeds_are_salted_only_off_draw_zero():
    assert salted(0, "a", 3) == ("a", 3) and drawn_seed(0, 7) == 7
    assert salted(2, "a", 3) != salted(1, "a", 3) and drawn_seed(1, 7) != drawn_seed(2, 7) != 7
    exp = configure("E1", "quick", {})
    assert exp.seeds.seed("teacher", 1) != Seeds("E1", 1).seed("teacher", 1)
    assert Seeds("E1", 1).seed("teacher", 1) == configure("E1", "quick", {"draw": 1}).seeds.seed("teacher", 1)


def _first_group(exp, draw=0):
    return exp.groups(exp.drawn_specs(Seeds(exp.name, draw)))[0]


def test_e1_draw_one_trains_another_teacher_data_and_init():
    exp = configure("E1", "quick", {**tiny_settings("E1"), "task.spectra": ("geometric",)})
    zero, one = exp.execute(_first_group(exp)), exp.execute(_first_group(exp, 1))
    assert [r.spec.draw for r in one] == [1] * len(one)
    # the teacher: another A*, drawn from the draw's seed
    task = FixedOperatorTask(**from_params(zero[0].spec, "task"))
    a0, a1 = (Seeds("E1", d).seed("teacher", task, 0) for d in (0, 1))
    t0, t1 = (task.teacher(torch.Generator().manual_seed(a)).truth["A"] for a in (a0, a1))
    assert not np.allclose(t0, t1)
    # the data (the least-squares optimum on them) and the trained students
    opt = [[r.metrics["finite_sample_optimum"] for r in rs] for rs in (zero, one)]
    assert np.isfinite(opt).all() and not np.allclose(*opt)
    assert not np.allclose([r.metrics["excess"] for r in zero], [r.metrics["excess"] for r in one])
    # an executor configured at draw 1 trains a draw-1 group as the draw-0 one does (the group's draw decides)
    again = configure("E1", "quick", {**tiny_settings("E1"), "task.spectra": ("geometric",), "draw": 1})
    again = again.execute(_first_group(exp, 1))
    assert [r.metrics["excess"] for r in again] == [r.metrics["excess"] for r in one]


def test_attention_teachers_and_data_move_with_the_draw():
    params = {"n": 6, "d": 4, "r_star": 2, "spectrum": "flat", "decay": 0.5, "c": 1.0, "sigma": 0.1}
    _, t0 = draw_teacher(Seeds("E4"), "linear", params, 0)
    _, t1 = draw_teacher(Seeds("E4", 1), "linear", params, 0)
    assert not np.allclose(t0.truth["K"], t1.truth["K"])
    b0 = draw_data(Seeds("E4"), "train", t0, params, 8, 0, torch.float64)
    b1 = draw_data(Seeds("E4", 1), "train", t0, params, 8, 0, torch.float64)
    assert not torch.allclose(b0.X, b1.X)


#: a number each experiment's runs compute from their teacher, data and init (E1, E7: tests above)
DRAWN_METRIC = {
    "E2": "train_loss",
    "E3": "train_loss",
    "E4": "train_loss",
    "E5": "train_loss",
    "E6": "noise_level",
}


FEWER_STEPS = {"E2": {"train.steps": 100}}  # its tiny grid trains longest; fewer steps still differ


@pytest.mark.parametrize("name", sorted(DRAWN_METRIC))
def test_draw_one_trains_other_numbers(name):
    exp = configure(name, "quick", {**tiny_settings(name), **FEWER_STEPS.get(name, {})})
    by_params = {canonical_json(s.params): s for s in exp.drawn_specs(Seeds(name, 1))}
    key, compared = DRAWN_METRIC[name], 0
    for group in exp.groups(exp.specs())[:3]:  # a tiny grid's large-init groups may diverge
        drawn = [by_params[canonical_json(s.params)] for s in group]
        zero, one = ([r.metrics[key] for r in exp.execute(g)] for g in (group, drawn))
        pairs = [(a, b) for a, b in zip(zero, one) if np.isfinite(a) and np.isfinite(b)]
        assert not pairs or any(a != b for a, b in pairs), (zero, one)  # a noiseless run may give 0 twice
        compared += len(pairs)
        if compared:
            break
    assert compared


NATURAL = ("tinyshakespeare", "pydoc_prose", "stdlib_code")


def _tokens(spec):
    return np.asarray(_load(spec, Seeds("E7", spec.draw)).tokens)


def test_e7_draw_one_samples_other_synthetic_corpora_and_trains_other_models():
    exp = configure("E7", "quick", tiny_settings("E7"))
    one_specs = exp.drawn_specs(Seeds("E7", 1))
    pairs = [(a, b) for a, b in zip(exp.specs(), one_specs) if a.params.get("corpus.name")]
    markov = [(a, b) for a, b in pairs if a.params["corpus.name"].startswith("markov")]
    assert markov
    for a, b in markov:
        assert not np.array_equal(_tokens(a), _tokens(b))
    group = next(g for g in exp.groups(exp.specs()) if g[0].params.get("corpus.name") in NATURAL)
    by_params = {canonical_json(s.params): s for s in one_specs}
    drawn = [by_params[canonical_json(s.params)] for s in group]
    zero, one = exp.execute(group), exp.execute(drawn)
    # the same text, another window of it, other models: init, batches and probes come from the draw
    for a, b in zip(zero, one):
        assert a.spec.params["corpus.name"] == b.spec.params["corpus.name"]
        if a.spec.params["corpus.name"] in NATURAL:
            assert not np.array_equal(_tokens(a.spec), _tokens(b.spec))
        for key in ("initial_val_bits", "train_bits", "heldout_bits"):
            assert np.isfinite(a.metrics[key]) and a.metrics[key] != b.metrics[key], key


# -- the combination rule, on real verdicts of C1 decided on the quick rows ---------------------
def _c1(**thresholds):
    rows = load("E1")
    rows = rows[rows["status"] == "ok"].reset_index(drop=True)
    cfg = configure("E1", "quick", {}).cfg
    cfg = with_option(cfg, {f"verdict.{k}": v for k, v in thresholds.items()})
    return e1_claims.C1.judge(cfg, rows, ClaimContext())


def _moved(verdict, statistic, interval):
    """``verdict`` with its decision record at another statistic and interval (another draw's)."""
    decision = {**verdict.evidence["decision"], "statistic": statistic, "interval": list(interval)}
    return replace(verdict, evidence={**verdict.evidence, "decision": decision})


def test_the_pooled_verdict_stands_unless_the_draws_statistics_disagree():
    confirmed = _c1()
    refuted = _c1(c1_low=0.5, c1_high=0.95)  # the whole interval (about 1.00-1.01) above the band
    assert (confirmed.outcome, refuted.outcome) == ("confirmed", "refuted")

    both = combine(confirmed, [confirmed, confirmed], [0, 1], e1_claims.C1)
    assert both.outcome == "confirmed" and both.evidence == confirmed.evidence
    decision = confirmed.evidence["decision"]
    rep = both.to_dict()["replication"]
    assert rep["draws"] == [0, 1] and rep["verdicts"] == ["confirmed"] * 2 and rep["agree"]
    assert rep["decisions"] == [decision, decision]  # every draw's distance from its bar
    assert rep["pooled"]["verdict"] == "confirmed" and rep["pooled"]["statistic"] == decision["statistic"]
    assert rep["heterogeneity"]["test"] == "cochran_q" and rep["heterogeneity"]["p"] == 1.0
    assert draws_text(rep) == "2 draws pooled"

    # one draw's interval reaches a bar and the other's does not, on the same statistic: no
    # disagreement, the pooled verdict stands (per-draw verdicts are each draw's fewer units)
    split = combine(confirmed, [confirmed, refuted], [0, 1], e1_claims.C1)
    assert split.outcome == "confirmed" and not split.replication["heterogeneity"]["disagree"]
    assert draws_text(split.replication) == "2 draws pooled (each: confirmed, refuted)"

    # a draw whose statistic lies far past the bar the pooled verdict cleared: the draws disagree
    lo, hi = decision["interval"]
    width, bar = hi - lo, decision["threshold"]
    toward = 1 if decision["direction"] == "lower" else -1  # the bar's side, seen from the statistic
    across = bar + toward * 5 * width
    far = _moved(confirmed, across, (across - width / 2, across + width / 2))
    apart = combine(confirmed, [confirmed, far], [0, 1], e1_claims.C1)
    assert apart.outcome == "inconclusive" and apart.evidence["reason"].startswith(DISAGREE)
    assert apart.replication["reason"] == DISAGREE and apart.replication["heterogeneity"]["disagree"]
    assert draws_text(apart.replication).startswith("2 draws disagree (p = ")
    # ... while one that differs only in size, on the same side, leaves the verdict with its Q reported
    beyond = decision["statistic"] - toward * 5 * width
    deeper = _moved(confirmed, beyond, (beyond - width / 2, beyond + width / 2))
    sized = combine(confirmed, [confirmed, deeper], [0, 1], e1_claims.C1)
    assert sized.outcome == "confirmed" and sized.replication["heterogeneity"]["disagree"]
    assert draws_text(sized.replication).startswith("2 draws pooled; sizes differ, same side (p = ")

    single = combine(confirmed, [confirmed], [0], e1_claims.C1)
    assert single.outcome == "confirmed" and single.replication["heterogeneity"] is None
    assert draws_text(single.replication) == "1 draw"


def test_draws_parse_and_default_per_scale():
    assert parse_draws("0,1,2") == (0, 1, 2) and parse_draws(" 3 ") == (3,)
    assert parse_draws("0-3") == (0, 1, 2, 3) and parse_draws("0,5-6") == (0, 5, 6)
    for bad in ("", "a", "0,-1", "1,1", "0,,1", "1.5", "3-1", "0-2,2", "1-"):
        with pytest.raises(UserInputError, match="--draws"):
            parse_draws(bad)
    assert draws_to_run("quick", 0, None, False) == (0,)
    assert draws_to_run("paper", 0, None, False) == (0, 1)  # the paper scale decides on two draws
    assert draws_to_run("paper", 4, None, True) == (4,)
    assert draws_to_run("quick", 0, (2, 5), False) == (2, 5)
    with pytest.raises(UserInputError, match="not both"):
        draws_to_run("quick", 1, (0, 1), True)


@pytest.mark.parametrize("name", EXPERIMENTS.names())
def test_a_group_holds_one_draw_so_every_run_trains_from_its_own_draws_seeds(name):
    exp = configure(name, "quick", tiny_settings(name))
    specs = exp.drawn_specs(Seeds(name, 61)) + exp.drawn_specs(Seeds(name, 62))
    groups = exp.groups(specs)
    assert all(len({s.draw for s in g}) == 1 for g in groups)
    assert {exp.seeds_of(g).draw for g in groups} == {61, 62}
