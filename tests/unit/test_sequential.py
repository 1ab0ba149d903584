"""Sequential verdicts (--until-decided): a share decided by its confidence sequence at the first
look that clears its bar, the command's options checked, and the loop's order and stops."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from entropic_bound import pipeline, until_decided
from entropic_bound.cli import main
from entropic_bound.errors import UserInputError
from entropic_bound.experiments.framework import sequential
from entropic_bound.experiments.framework.rule import Interval
from entropic_bound.experiments.framework.verdict import Verdict
from entropic_bound.pipeline import PipelineResult
from entropic_bound.report.sequential_figure import sequential_figure
from entropic_bound.report.sequential_view import draws_cell
from entropic_bound.stats.interval_decision import decide_by_interval, wilson
from entropic_bound.sweep.runner import SweepSummary

CLAIM = SimpleNamespace(id="C9", rule=SimpleNamespace(interval=Interval.WILSON))


def _share_verdict(counts: list[int], per_draw: int, bar: float = 0.5) -> Verdict:
    """A Wilson-decided share with ``counts`` successes of ``per_draw`` units in each draw."""

    def record(k: int, n: int) -> dict:
        return decide_by_interval(k / n, wilson(k, n), bar, units=n, unit="teacher").to_dict()

    pooled = record(sum(counts), per_draw * len(counts))
    outcome = sequential.OUTCOMES[decide_by_interval(**_args(pooled)).outcome]
    decisions = [record(k, per_draw) for k in counts]
    return Verdict("C9", outcome, "rate", {"decision": pooled}, "E6", replication={"decisions": decisions})


def _args(d: dict) -> dict:
    return {"statistic": d["statistic"], "interval": d["interval"], "threshold": d["threshold"]}


def test_a_share_far_above_its_bar_is_confirmed_at_an_early_look_and_stays_there():
    v = _share_verdict([8, 8, 9, 8, 8, 7, 9, 8], per_draw=10)
    out = sequential._by_sequence(v, CLAIM, "E6", list(range(8)), stop=None)
    seq = out.evidence["sequential"]
    assert out.outcome == "confirmed" and seq["stop"] == "decided"
    assert 1 < seq["looks"] < 8 and seq["units"] == [10 * (i + 1) for i in range(seq["looks"])]
    lo, hi = seq["interval"]
    assert lo >= 0.5 and out.evidence["decision"]["interval"] == [lo, hi]
    assert seq["e_value"]["for_confirmed"] > 2 / sequential.ALPHA > seq["e_value"]["for_refuted"]
    assert all(a[0] <= b[0] and a[1] >= b[1] for a, b in zip(seq["intervals"], seq["intervals"][1:]))


def test_a_share_on_its_bar_stays_open_with_the_commands_stop():
    v = _share_verdict([10, 11, 9, 10], per_draw=20)
    out = sequential._by_sequence(v, CLAIM, "E6", [0, 1, 2, 3], stop="budget")
    assert out.outcome == "inconclusive" and out.evidence["sequential"]["stop"] == "budget"
    assert out.evidence["sequential"]["looks"] == 4 and "confidence sequence" in out.evidence["reason"]
    assert draws_cell(out.to_dict()).endswith("sequential: 4 looks, budget")
    assert sequential_figure([out]) is not None and sequential_figure([]) is None


def test_what_decided_a_verdict_beside_its_interval_is_not_overruled_by_the_sequence():
    v = _share_verdict([20] * 6, per_draw=20)
    blocked = replace(v, outcome="inconclusive", evidence={**v.evidence, "reason": "a control fails"})
    out = sequential._by_sequence(blocked, CLAIM, "E6", list(range(6)), stop=None)
    assert out.outcome == "inconclusive" and "a control fails" in out.evidence["reason"]


def test_units_keep_each_draws_count_in_a_seeded_order():
    records = [{"statistic": 0.25, "units": 8}, {"statistic": 0.5, "units": 4}]
    values, value_range = sequential.draw_values(CLAIM, records)
    assert value_range == (0.0, 1.0)
    x = sequential.units_in_order("C9", "E6", [0, 1], values)
    assert x.shape == (12,) and x[:8].sum() == 2 and x[8:].sum() == 2
    assert np.array_equal(x, sequential.units_in_order("C9", "E6", [0, 1], values))


@pytest.mark.parametrize("text, seconds", [("2h", 7200), ("30m", 1800), ("90s", 90), ("1.5m", 90)])
def test_budgets_parse(text, seconds):
    assert until_decided.parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["0", "0s", "-1h", "3parsecs", "2", "h", ""])
def test_bad_budgets_say_what_is_expected(text):
    with pytest.raises(UserInputError, match="positive time with a unit h, m or s"):
        until_decided.parse_budget(text)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--until-decided", "--budget", "0"], "--budget"),
        (["--until-decided", "--budget", "3parsecs"], "--budget"),
        (["--until-decided", "--budget", "1h", "--draws", "0,1"], "without --draws"),
        (["--until-decided"], "needs a '--budget'"),
        (["--budget", "1h"], "needs '--until-decided'"),
        (["--until-decided", "--budget", "1h", "--max-draws", "0"], "--max-draws"),
    ],
)
def test_bad_sequential_options_are_one_line_and_exit_2(extra, message, capsys, tmp_path):
    for command in (["run", "E1"], ["reproduce", "--only", "E1"]):
        assert main([*command, "--out", str(tmp_path / "out"), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def _open_verdict(claim: str, more_units: int, cpu_s_per_unit: float) -> Verdict:
    evidence = {
        "decision": {"threshold": 0.5},
        "power": {
            "more_units": more_units,
            "cpu_s_per_unit": cpu_s_per_unit,
            "units_needed": 10 + more_units,
        },
        "sequential": {"stop": None, "units": [10], "interval": [0.2, 0.9]},
    }
    return Verdict(claim, "inconclusive", "rate", evidence, "E?")


def test_the_cheapest_open_experiment_goes_next_until_the_budget_is_spent(monkeypatch, tmp_path):
    costs = {"E1": (_open_verdict("C1", 100, 1.0),), "E2": (_open_verdict("C3", 5, 1.0),)}
    calls, now = [], [0.0]

    def fake_run(names, *, draws, sequential, **_):
        [name] = names
        calls.append((name, list(draws)))
        now[0] += 10.0  # every look takes 10 s
        analysis = SimpleNamespace(verdicts=list(costs[name]))
        summary = SweepSummary(total=1, skipped=0, ran=1, diverged=0, wall_s=10.0, cpu_s=10.0)
        return PipelineResult(
            {name: summary}, tmp_path / "look.html", tmp_path, {name: (None, "quick", analysis)}
        )

    stops = {}
    monkeypatch.setattr(pipeline, "run_experiments", fake_run)
    monkeypatch.setattr(pipeline, "report", lambda *a, **k: tmp_path / "report.html")
    monkeypatch.setattr(until_decided, "_record_stops", lambda path, stop: stops.update(stop))
    lines = []
    out = until_decided.run_until_decided(
        ["E1", "E2"], budget_s=45, out=tmp_path, echo=lines.append, clock=lambda: now[0]
    )
    # both looked at once, then E2 (5 units to go) before E1 (100), until 45 s would be overrun
    assert calls == [("E1", [0]), ("E2", [0]), ("E2", [0, 1]), ("E2", [0, 1, 2])]
    assert stops == {"E1": "budget", "E2": "budget"} and out.summaries["E2"].ran == 3
    assert lines[0].startswith("E1 look 1 (draws 0): C1 interval [0.2, 0.9] at 10 units")
    assert "≈ 100 more units expected" in lines[0]


def _c3():
    from entropic_bound.experiments.e2_recovery.claims import CLAIMS

    return next(c for c in CLAIMS if c.id == "C3")


def _contrast_verdict(draws: list[np.ndarray]) -> Verdict:
    """C3-like verdicts: per draw, the bias contrast of data sets whose small-init runs recover with
    the fractions ``draws[i][:, 0]`` and large-init runs with ``draws[i][:, 1]`` (4 runs a group)."""
    from entropic_bound.experiments.science.implicit_bias import bias_contrast

    def record(fractions: np.ndarray) -> dict:
        rows = [
            {"seed": i, "init": init, "ok": j < round(4 * f)}
            for i, pair in enumerate(fractions)
            for init, f in zip(("small", "large"), pair)
            for j in range(4)
        ]
        frame = pd.DataFrame(rows)
        small, large = frame[frame["init"] == "small"], frame[frame["init"] == "large"]
        out = bias_contrast(small, large, small["ok"], large["ok"], ["seed"], 0.0)
        return out["decision"].to_dict()

    decisions = [record(f) for f in draws]
    pooled = record(np.concatenate(draws))
    outcome = sequential.OUTCOMES[decide_by_interval(**_args(pooled)).outcome]
    return Verdict(
        "C3", outcome, "contrast", {"decision": pooled}, "E2", replication={"decisions": decisions}
    )


def test_a_paired_contrast_carries_each_data_sets_difference():
    v = _contrast_verdict([np.array([[1.0, 0.25], [0.5, 0.5], [0.75, 1.0]])])
    record = v.evidence["decision"]
    assert record["unit_values"] == [0.75, 0.0, -0.25] and record["value_range"] == [-1.0, 1.0]
    assert sequential.draw_values(_c3(), [record])[1] == (-1.0, 1.0)
    # the smallest of several contrasts (one per teacher, with a gate beside it) is no single sequence
    c7 = SimpleNamespace(rule=SimpleNamespace(interval=Interval.NEWCOMBE, conditions=("gate",)))
    assert sequential.draw_values(c7, [record]) is None


@pytest.mark.parametrize("effect, outcome", [(0.5, "confirmed"), (-0.5, "refuted")])
def test_a_contrast_off_its_boundary_is_decided_by_its_sequence(effect, outcome):
    rng = np.random.default_rng(7)
    small = np.clip(0.5 + effect / 2 + rng.normal(0, 0.1, (8, 12)), 0, 1)
    draws = [np.stack([s, np.clip(s - effect, 0, 1)], axis=1) for s in small]
    out = sequential._by_sequence(_contrast_verdict(draws), _c3(), "E2", list(range(8)), stop=None)
    record = out.evidence["sequential"]
    assert out.outcome == outcome and record["stop"] == "decided" and record["looks"] < 8
    lo, hi = record["interval"]
    assert -1 <= lo <= hi <= 1 and (lo > 0 if effect > 0 else hi < 0)


def test_a_contrast_on_its_boundary_is_rarely_decided_at_any_look():
    """200 sequences of a true contrast of exactly 0, looked at after each of 10 draws of 6 data sets:
    the sequence decides wrongly in at most its level (5 %, with Monte-Carlo room)."""
    rng = np.random.default_rng(11)
    wrong = 0
    for _ in range(200):
        draws = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(6, 2)) for _ in range(10)]
        out = sequential._by_sequence(_contrast_verdict(draws), _c3(), "E2", list(range(10)), stop=None)
        wrong += out.outcome != "inconclusive"
    assert wrong / 200 <= 0.08


def test_every_look_of_a_planned_claim_is_analysed_on_the_run_records(monkeypatch):
    """A claim decided once at its planned units is analysed again on the first draws: on the stored
    runs (curves included), not on the per-draw decision records."""
    runs = [{"run_id": "a", "curves": {}}]
    share = _share_verdict([3, 4], per_draw=10)  # inconclusive at the first look
    planned = replace(share, claim="C1", evidence={**share.evidence, "power": {"units_needed": 20}})
    seen = []

    def analyse_draws(exp, table, records, draws, scale):
        seen.append((records, tuple(draws)))
        return SimpleNamespace(verdicts=[planned], notes=[])

    monkeypatch.setattr(sequential, "analyse_draws", analyse_draws)
    exp = SimpleNamespace(name="E1", declared_claims=())
    sequential.analyse_sequential(exp, pd.DataFrame(), runs, [0, 1, 2], "quick", None)
    assert [d for _, d in seen] == [(0, 1, 2), (0,), (0, 1)]
    assert all(records is runs for records, _ in seen)
