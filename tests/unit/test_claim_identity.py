"""A claim owns its identity: every declared claim states it completely, and only the claim builds its
verdict (a criterion returns a Finding and cannot name another claim or experiment)."""

from __future__ import annotations

import pandas as pd
import pytest

from entropic_bound.experiments.framework.claim import Claim, needs_rows
from entropic_bound.experiments.framework.claim_slices import Setting, config_value
from entropic_bound.experiments.framework.rule import Condition, Interval, Rule, Unit
from entropic_bound.experiments.framework.verdict import ClaimContext, Finding, Verdict
from entropic_bound.pipeline import configure
from entropic_bound.registry import EXPERIMENTS

DECLARED = [(name, claim) for name in EXPERIMENTS.names() for claim in EXPERIMENTS.get(name).declared_claims]


def _is_unit(unit) -> bool:
    return (
        isinstance(unit, Unit)
        and isinstance(unit.name, str)
        and bool(unit.name)
        and isinstance(unit.keys, tuple)
        and all(isinstance(k, str) and k for k in unit.keys)
    )


def _resolves(cfg, keys: tuple[str, ...]) -> bool:
    for key in keys:
        try:
            config_value(cfg, key)
        except AttributeError:
            return False
    return True


@pytest.mark.parametrize(("name", "claim"), DECLARED, ids=[f"{n}-{c.id}" for n, c in DECLARED])
def test_every_declared_claim_states_its_identity_unit_and_rule(name, claim):
    assert isinstance(claim, Claim) and claim.experiment == name
    assert isinstance(claim.statement, str) and claim.statement.strip()
    assert _is_unit(claim.unit), claim.unit
    rule, cfg = claim.rule, EXPERIMENTS.get(name).config_class()
    assert isinstance(rule, Rule) and isinstance(rule.interval, Interval)
    assert isinstance(rule.thresholds, tuple) and _resolves(cfg, rule.thresholds), rule.thresholds
    for condition in rule.conditions:
        assert isinstance(condition, Condition) and isinstance(condition.interval, Interval)
        assert _resolves(cfg, condition.thresholds) and (condition.unit is None or _is_unit(condition.unit))
    assert rule.thresholds or rule.conditions or rule.interval is Interval.SPEARMAN  # a bar to hold it to


def test_claim_ids_are_unique_across_experiments_and_listed_by_their_experiment():
    ids = [claim.id for _, claim in DECLARED]
    assert len(ids) == len(set(ids)), sorted(ids)
    for name in EXPERIMENTS.names():
        experiment = EXPERIMENTS.get(name)
        assert experiment.claims == tuple(c.id for c in experiment.declared_claims)


def _claim(decide, **fields) -> Claim:
    return Claim(
        id="C98",
        experiment="E98",
        statement="a claim under test",
        unit=Unit("run"),
        rule=Rule(thresholds=("verdict.rate",), interval=Interval.WILSON),
        decide=decide,
        sentence="{runs} runs",
        default_setting=lambda cfg: {"rate": 0.5},
        statistic="runs",
        **fields,
    )


ROWS = pd.DataFrame({"x": [1.0, 2.0, 3.0]})


def _share_above(cfg, rows, context) -> Finding:
    holds = None if not len(rows) else bool((rows["x"] > 1).mean() >= 0.5)
    return Finding(
        {None: "inconclusive", True: "confirmed", False: "refuted"}[holds], "x > 1", {"runs": len(rows)}
    )


def test_the_claim_builds_its_verdict_from_the_criterions_finding():
    grid = [Setting({"rows": "first"}, None, ROWS.iloc[:1])]
    v = _claim(_share_above, grid=lambda cfg, rows, context: grid).judge(None, ROWS, ClaimContext())
    assert isinstance(v, Verdict)
    assert (v.claim, v.experiment, v.statement) == ("C98", "E98", "a claim under test")
    assert (v.outcome, v.criterion, v.evidence) == ("confirmed", "x > 1", {"runs": 3})
    assert [s["verdict"] for s in v.robustness["settings"]] == ["confirmed", "refuted"]
    assert v.to_dict()["statement"] == "a claim under test"


def test_the_statement_is_the_same_whatever_the_outcome():
    claim = _claim(_share_above)
    outcomes = {
        claim.judge(None, rows, ClaimContext()).outcome: claim.judge(None, rows, ClaimContext()).statement
        for rows in (ROWS, ROWS.iloc[:1], ROWS.iloc[:0])
    }
    assert set(outcomes) == {"confirmed", "refuted", "inconclusive"}
    assert set(outcomes.values()) == {claim.statement}


def test_a_criterion_cannot_name_another_claim_or_experiment():
    def impostor(cfg, rows, context):
        return Verdict("C1", "confirmed", "x > 1", {"runs": len(rows)}, "E1", "another claim's words")

    with pytest.raises(TypeError, match="C98's criterion must return a Finding"):
        _claim(impostor).judge(None, ROWS, ClaimContext())
    with pytest.raises(TypeError, match="must return a Finding"):
        _claim(_share_above).verdict(impostor(None, ROWS, None))


def test_needs_rows_decides_an_empty_store_inconclusive_under_the_claims_identity():
    def needs_a_column(cfg, rows, context):
        return Finding("confirmed", "reads x", {"max": float(rows["x"].max())})

    claim = _claim(needs_rows(needs_a_column))
    empty = claim.judge(None, pd.DataFrame(), ClaimContext())
    assert (empty.claim, empty.experiment, empty.outcome, empty.criterion) == (
        "C98",
        "E98",
        "inconclusive",
        "no runs",
    )
    assert claim.judge(None, ROWS, ClaimContext()).evidence == {"max": 3.0}


def test_e1_words_each_claim_one_way_whatever_the_outcome():
    """E1 once stated C1 and C2 in other words when they came out inconclusive."""
    exp = configure("E1", "quick", {})
    for claim in exp.declared_claims:
        inconclusive = claim.judge(exp.cfg, pd.DataFrame(), ClaimContext())
        assert inconclusive.outcome == "inconclusive" and inconclusive.statement == claim.statement
