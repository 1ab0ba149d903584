"""E3's claims C4 and X2: each declaration, criterion, report sentence and robustness grid (the numbers
they read are in :mod:`.statistics`).

Every criterion reads *medians over seeds* of the held-out relative excess risk (summary_table); the
seed spread (min, max) is in the summary table and the evidence."""

from __future__ import annotations

import pandas as pd

from ...stats.unit_intervals import all_of, record
from ..framework.claim import Claim, Formats
from ..framework.claim_slices import Setting, grid_setting, sliced, with_option
from ..framework.rule import Condition, Interval, Rule, Unit
from ..framework.verdict import ClaimContext, Finding, decide
from .analysis import summary_table
from .config import OPERATORS, ladder_parts, positional_rungs
from .statistics import (
    REPRESENTABLE,
    STUDENT_SEED,
    c4_decisions,
    convergence,
    full_rank_attention,
    full_rank_median,
    positional_confound,
    ratio_c,
    x2_decisions,
    x2_pair,
    x2_positional,
)


def _and(names) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def c4_on_summary(cfg, summary: pd.DataFrame, runs: pd.DataFrame | None = None) -> Finding:
    """C4 from the full-rank medians of every rung and V setting, with controls (a), (b) and (c); ``runs``
    (the runs, with ``converged``) decide whether the attention rungs' failure may be read (convergence
    rule). The rungs are the registry's ladder (:func:`ladder_parts`)."""
    base, attention = ladder_parts()
    span = f"{attention[0]}–{attention[-1]}"
    steps = ", ".join(f"|{b}−{a}|" for a, b in zip(attention, attention[1:]))
    criterion = (
        f"at full rank (r = n for {base}, r = d for {span}), for every V setting: {_and(attention)} have relative excess "
        f">= {cfg.verdict.c4_fail:g}; (c) max({steps}) / ({attention[0]} − {base}) <= {cfg.verdict.c4_ratio:g}, each value capped at 1 "
        f"(the zero predictor; a fixed V* can push {'/'.join(attention[1:])} above it). Located only when "
        f"(a) {base} and (b) B1 on a B1-teacher task both reach the floor (< eps_floor = {cfg.verdict.eps_floor:g}); "
        f"otherwise inconclusive. Medians over seeds. A full-rank {span} run above the floor that is still improving "
        f"(held-out excess fell by >= {cfg.verdict.convergence_tol:.0%} over the last quarter of training time; "
        "stats.convergence) cannot count as "
        "failing: the jump then reads inconclusive. The jump (smallest attention-rung median) and (c) (largest over V) "
        "are decided by their 95% bootstrap intervals over student seeds (the independent unit; E3 has one teacher): "
        "holding when the interval lies on the claimed side of its bar, failing when it lies on the other side, "
        "else inconclusive. The controls are floor rules on their medians. The verdict is on the jump; its cause "
        "is not decided: B0 -> B1 adds input conditioning and removes positional information at once (evidence "
        "'cause': the confound, the gap X2's learned positions close, and the runs that would separate the two)"
    )
    ladder = summary[summary["role"] == "ladder"] if len(summary) else summary
    ev: dict = {
        "full_rank": {},
        "control_a_B0": {},
        "control_b_B1_teacher": {},
        "ratio_c": {},
        "cause": positional_confound(cfg, summary),
    }
    missing = []
    for v in cfg.v_settings:
        rows = {r: full_rank_median(cfg, summary, "ladder", r, v) for r in (base, *attention)}
        ev["full_rank"][v] = rows
        ev["control_a_B0"][v] = rows[base]
        ev["control_b_B1_teacher"][v] = full_rank_median(cfg, summary, "control_b", "B1", v)
        missing += [f"{r} (V {v})" for r, x in rows.items() if x is None]
        if ev["control_b_B1_teacher"][v] is None:
            missing.append(f"control (b) (V {v})")
        if None not in rows.values():
            cap = {r: min(x, 1.0) for r, x in rows.items()}  # above 1 = worse than predicting 0: no signal
            ev["ratio_c"][v] = ratio_c(cap, base, attention)
            ev.setdefault("ratio_c_uncapped", {})[v] = ratio_c(rows, base, attention)
    full_attention = [
        x for v in cfg.v_settings for r, x in ev["full_rank"][v].items() if r != base and x is not None
    ]
    ev["min_full_rank_B1_B3"] = min(full_attention) if full_attention else None
    if len(ladder):
        swept = ladder[ladder["rung"].isin(attention)]
        ev["min_over_ranks_B1_B3"] = float(swept["rel_excess_median"].min()) if len(swept) else None
    if missing or not cfg.v_settings:
        ev["reason"] = "missing runs: " + ", ".join(missing or ["no V setting"])
        return Finding("inconclusive", criterion, ev)
    controls = all(
        ev["control_a_B0"][v] < cfg.verdict.eps_floor
        and ev["control_b_B1_teacher"][v] < cfg.verdict.eps_floor
        for v in cfg.v_settings
    )
    if not controls:
        ev["reason"] = (
            "a control did not reach the floor, so a failure at B1 cannot be attributed to the task"
        )
        return Finding("inconclusive", criterion, ev)
    if runs is None:
        ev["reason"] = "no runs given: the seed intervals cannot be computed"
        return Finding("inconclusive", criterion, ev)
    decisions = c4_decisions(cfg, runs, base, attention)
    outcome = record(ev, decisions)
    ev["jump_holds"], ev["ratio_holds"] = decisions["jump"].outcome, decisions["ratio_c"].outcome
    failing = runs[full_rank_attention(cfg, runs)]
    ev["convergence_B1_B3_full_rank"], reason = convergence(cfg, failing)
    if outcome and reason:
        ev["reason"] = reason
        return Finding("inconclusive", criterion, ev)
    return Finding(decide(outcome), criterion, ev)


def x2_criterion(cfg) -> str:
    share = cfg.verdict.x2_seed_share
    return (
        f"for each representable pair (B1 on a signed low-rank A*, B2 on a row-stochastic A*), at its best "
        f"rank/head setting with learned_absolute positions (the lowest seed median), the share of student seeds "
        f"(seed, draw) whose run reaches the floor (relative excess < eps_floor = {cfg.verdict.eps_floor:g}) against one "
        f"boundary, x2_seed_share = {share:g} (a setting makes A* learnable when more than half of its initialisations "
        "learn it: its median lies below the floor exactly then), by its 95% Wilson interval: confirmed when every "
        "pair's interval lies at or above it; a failure when one lies at or below it, which refutes only when the "
        f"runs had >= x2_min_steps = {cfg.verdict.x2_min_steps} steps and every learned_absolute run of that pair "
        f"above the floor has converged (held-out excess fell by < {cfg.verdict.convergence_tol:.0%} over the last "
        "quarter of training time, the summed learning rate; stats.convergence); otherwise inconclusive with what "
        "would decide it (more seeds, longer runs). Gap closed = 1 − excess(positions)/excess(none)."
    )


def x2_on_summary(cfg, summary: pd.DataFrame, rows: pd.DataFrame | None = None) -> Finding:
    """X2: do learned absolute positions make the fixed operator learnable by B1 (signed A*) and B2
    (row-stochastic A*)?"""
    steps = cfg.x2_train.steps
    criterion = x2_criterion(cfg)
    x2 = summary[summary["role"] == "x2"] if len(summary) else summary
    ev: dict = {
        "steps": steps,
        "x2_min_steps": cfg.verdict.x2_min_steps,
        "pairs": {},
    }
    for student in positional_rungs():  # every rung that takes positions; REPRESENTABLE decides
        for operator in OPERATORS:
            res = x2_pair(cfg, x2, student, operator) if len(x2) else None
            if res is not None:
                res["decides_verdict"] = (student, operator) in REPRESENTABLE
                ev["pairs"][f"{student}/{operator}"] = res
    decisive = [ev["pairs"].get(f"{r}/{o}") for r, o in REPRESENTABLE]
    if any(p is None for p in decisive):
        ev["reason"] = "missing learned_absolute runs of B1 on low_rank or B2 on row_stochastic"
        return Finding("inconclusive", criterion, ev)
    ev["worst_best_rel_excess"] = max(p["best_rel_excess"] for p in decisive)
    if rows is None:
        ev["reason"] = "no runs given: the seed shares cannot be counted"
        return Finding("inconclusive", criterion, ev)
    decisions = x2_decisions(cfg, rows, ev["pairs"])
    outcome = record(ev, decisions)
    ev["worst_share_reaching_floor"] = min(d.statistic for d in decisions.values())
    short = steps < cfg.verdict.x2_min_steps
    if outcome is True:
        return Finding("confirmed", criterion, ev)
    if outcome is None:
        _, key = all_of(decisions)
        ev["reason"] = (
            f"the Wilson interval of {key}'s share of seeds reaching the floor over {decisions[key].units} student "
            f"seeds straddles {cfg.verdict.x2_seed_share:g}: more seeds decide it (4 when they all agree; "
            "--set x2_seeds=N)"
            + (
                f", and runs of >= {cfg.verdict.x2_min_steps} steps (x2_train.steps) for a failure to refute"
                if short
                else ""
            )
        )
        return Finding("inconclusive", criterion, ev)
    failing = [k for k, d in decisions.items() if d.outcome is False]
    pos = rows[x2_positional(rows, failing)]
    ev["convergence_failing_pairs"], reason = convergence(cfg, pos)
    if not short and not reason:
        return Finding("refuted", criterion, ev)
    if not short:
        ev["reason"] = reason
        return Finding("inconclusive", criterion, ev)
    ev["reason"] = (
        f"positional runs had {steps} < {cfg.verdict.x2_min_steps} steps and did not reach the floor yet: "
        f"runs of >= {cfg.verdict.x2_min_steps} steps decide it (--set x2_train.steps={cfg.verdict.x2_min_steps}); "
        f"see gap_closed for how far they got{'; ' + reason if reason else ''}"
    )
    return Finding("inconclusive", criterion, ev)


def verdict_c4(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """C4 on the seed medians of ``rows`` (the kept rows, with their setting columns filled by ``prepare``)."""
    return c4_on_summary(cfg, summary_table(rows), rows)


def verdict_x2(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    """X2 on the seed medians of ``rows``."""
    return x2_on_summary(cfg, summary_table(rows), rows)


def c4_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """C4 decided again per V setting and per student initialisation (seed)."""
    per_v = (
        [Setting({"v_settings": [v]}, with_option(cfg, {"v_settings": (v,)}), rows) for v in cfg.v_settings]
        if len(cfg.v_settings) > 1
        else []
    )
    return per_v + sliced(cfg, rows, (("seed", "seed"),))


def x2_grid(cfg, rows: pd.DataFrame, context: ClaimContext) -> list[Setting]:
    """X2 decided again per student initialisation (seed) and per head count of the X2 runs."""
    per_heads = (
        [
            Setting({"x2_heads": [h]}, cfg, rows[(rows["role"] != "x2") | (rows["n_heads"] == str(h))])
            for h in cfg.x2_heads
        ]
        if len(cfg.x2_heads) > 1
        else []
    )
    return sliced(cfg, rows, (("seed", "seed"),)) + per_heads


def c4_sentence(e: dict, fmt: Formats) -> str:
    parts = []
    for v, by_student in e["full_rank"].items():
        rungs = ", ".join(f"{k} {fmt.number(x)}" for k, x in by_student.items())
        parts.append(f"V {v}: {rungs}")
    return f"relative excess at full rank — {'; '.join(parts)}; jump holds: {fmt.number(e['jump_holds'])}"


def x2_sentence(e: dict, fmt: Formats) -> str:
    gaps = ", ".join(f"{pair} {fmt.number(p['gap_closed'])}" for pair, p in e["pairs"].items())
    lead = f"{e['reason']}; " if e.get("reason") else ""
    return f"{lead}gap closed by positions: {gaps}"


def c4_statement() -> str:
    """C4 in words, naming the rungs of the ladder as registered when E3's claims are imported."""
    base, attention = ladder_parts()
    return (
        f"excess risk jumps at {attention[0]} even at full rank and stays at {', '.join(attention[1:])} "
        "(the paper names input conditioning as the cause; the ladder confounds it with the loss of positional "
        "information)"
    )


#: A convergence gate: a run above the floor that is still improving cannot count as failing.
CONVERGED = Condition(("verdict.convergence_tol",), Interval.COUNT, Unit("run"))

C4 = Claim(
    id="C4",
    experiment="E3",
    statement=c4_statement(),
    unit=STUDENT_SEED,
    rule=Rule(
        thresholds=("verdict.c4_fail", "verdict.c4_ratio"),
        interval=Interval.BOOTSTRAP,
        conditions=(Condition(("verdict.eps_floor",), Interval.POINT), CONVERGED),  # the controls' medians
    ),
    decide=verdict_c4,
    sentence=c4_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "v_settings", "seeds"),
    statistic="min_full_rank_B1_B3",
    grid=c4_grid,
)
X2 = Claim(
    id="X2",
    experiment="E3",
    statement="learned absolute positions make the fixed operator learnable by attention",
    unit=STUDENT_SEED,
    rule=Rule(
        thresholds=("verdict.x2_seed_share", "verdict.eps_floor"),
        interval=Interval.WILSON,
        conditions=(Condition(("verdict.x2_min_steps",), Interval.COUNT, Unit("run")), CONVERGED),
    ),
    decide=verdict_x2,
    sentence=x2_sentence,
    default_setting=lambda cfg: grid_setting(cfg, "x2_heads", "seeds"),
    statistic="worst_share_reaching_floor",
    grid=x2_grid,
)
CLAIMS = (C4, X2)
