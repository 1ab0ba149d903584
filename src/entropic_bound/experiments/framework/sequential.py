"""Sequential verdicts: claims re-decided after every draw without inflating their error rate.

``--until-decided`` trains draw after draw and looks at every claim after each one. Looked at again
and again, a fixed-sample interval is "confirmed" far more often than its level says, so each look
of a claim whose statistic is a mean of bounded per-unit values reads an anytime-valid confidence
sequence instead (:mod:`...stats.confidence_sequence`): a share of units (a
:attr:`~.rule.Interval.WILSON` rule: 0/1 values), or a contrast of two groups over the same units (a
:attr:`~.rule.Interval.NEWCOMBE` rule with no condition beside it, C3: each data set's small-init
minus large-init recovery fraction, in [−1, 1]; its sequence is that of the mean over the data sets
holding both groups). The units of each draw are read in a seeded random order, after the units of
the draws before it. The claim is decided at the first look whose sequence clears its bar (the
decision record's ``threshold`` or ``refute_threshold``), and stays decided there.

Any other statistic (a correlation, a bootstrap median, the smallest of several contrasts, C7's one
per teacher) has no such sequence here. It gets a pre-declared number of units instead: the units its power plan asks for at
the first look (:mod:`.claim_power`), and it is decided once, on the first draws that reach them —
never by repeated looks. Before that its verdict is inconclusive.

Each verdict carries ``evidence["sequential"]``: the method, the looks, the units at each look,
the interval at each look, the stop (``decided``, or the reason the command ended: ``budget``, ``no
draws left``) and, for a confidence sequence, the e-values at its bars: ``for_confirmed`` is the
evidence against the share lying at or short of its confirmation bar, valid at any stopping time
(the sequence clears the bar where it passes 2/α = 40), ``for_refuted`` the same at the refutation bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from ...stats.confidence_sequence import confidence_sequence, e_value, grid_with
from ...stats.interval_decision import decide_by_interval
from .draws import Seeds
from .replication import analyse_draws
from .rule import Interval
from .verdict import Analysis, Verdict

CS_METHOD = "confidence sequence (hedged betting, Waudby-Smith & Ramdas 2024)"
PLANNED_METHOD = "pre-declared units from the first look's power plan, decided once"
ALPHA = 0.05  # the level every claim's interval is taken at (95 %)
OUTCOMES = {True: "confirmed", False: "refuted", None: "inconclusive"}


def is_bounded_mean(claim) -> bool:
    """A claim whose statistic is a share of 0/1 units, so a confidence sequence decides it."""
    return claim is not None and claim.rule.interval == Interval.WILSON


def is_paired_contrast(claim) -> bool:
    """A claim decided by one contrast of two groups over the same units (no condition beside it),
    whose decision records carry each unit's difference: a mean of bounded values, read by a sequence.
    A claim that is the minimum of several contrasts (one per teacher) is not one sequence."""
    return claim is not None and claim.rule.interval == Interval.NEWCOMBE and not claim.rule.conditions


def draw_values(claim, records: list[dict]) -> tuple[list[np.ndarray], tuple[float, float]] | None:
    """Each draw's per-unit values and the range they lie in, or None where no sequence reads ``claim``
    on these records: a share's 0/1 units (share × units of them), a paired contrast's differences."""
    if is_bounded_mean(claim):
        ones = [int(round(float(r["statistic"]) * int(r["units"]))) for r in records]
        return [np.r_[np.ones(k), np.zeros(int(r["units"]) - k)] for k, r in zip(ones, records)], (0.0, 1.0)
    if is_paired_contrast(claim) and all(r.get("unit_values") for r in records):
        ranges = {tuple(r["value_range"]) for r in records}
        if len(ranges) == 1:
            return [np.asarray(r["unit_values"], dtype=float) for r in records], ranges.pop()
    return None


def analyse_sequential(
    exp, table: pd.DataFrame, records: list[dict], draws: Sequence[int], scale: str, stop: str | None
) -> Analysis:
    """:func:`~.replication.analyse_draws` on ``draws`` (in the order they were trained), every
    claim's verdict replaced by its sequential one; ``stop``: why the command ended, for the claims
    still open (None: it has not)."""
    draws = list(draws)
    analysis = analyse_draws(exp, table, records, draws, scale)
    claims = {c.id: c for c in getattr(exp, "declared_claims", ())}
    first = None
    verdicts = []
    for v in analysis.verdicts:
        claim = claims.get(v.claim)
        decisions = _per_draw(v)
        if decisions and draw_values(claim, decisions):
            verdicts.append(_by_sequence(v, claim, exp.name, draws, stop))
            continue
        if first is None and len(draws) > 1:
            first = {u.claim: u for u in analyse_draws(exp, table, records, draws[:1], scale).verdicts}
        verdicts.append(_by_plan(v, (first or {}).get(v.claim, v), exp, table, records, draws, scale, stop))
    analysis.verdicts = verdicts
    analysis.notes.append("Verdicts decided sequentially, one look after each draw (--until-decided).")
    return analysis


def _per_draw(v: Verdict) -> list[dict] | None:
    """Each draw's decision record with its share and units, or None where one is missing."""
    records = (v.replication or {}).get("decisions") or [v.evidence.get("decision")]
    ok = all(
        isinstance(r, dict) and r.get("units") and np.isfinite(r.get("statistic", np.nan)) for r in records
    )
    return records if ok else None


def units_in_order(
    claim_id: str, experiment: str, draws: Sequence[int], values: list[np.ndarray]
) -> np.ndarray:
    """(N,) the units of each draw (``values``, one array per draw), in a random order seeded by the
    draw, after those of the draws before it."""
    parts = []
    for draw, x in zip(draws, values):
        rng = np.random.default_rng(Seeds(experiment, draw).seed("sequential", claim_id))
        parts.append(rng.permutation(np.asarray(x, dtype=float)))
    return np.concatenate(parts)


def _by_sequence(v: Verdict, claim, experiment: str, draws: list[int], stop: str | None) -> Verdict:
    values, (low, high) = draw_values(claim, _per_draw(v))
    x = units_in_order(claim.id, experiment, draws, values)
    unit_scale = (x - low) / (high - low)  # the sequence reads values in [0, 1]
    d = v.evidence["decision"]
    bar, refute, higher = d["threshold"], d["refute_threshold"], d.get("direction", "higher") == "higher"
    scaled_bar, scaled_refute = ((b - low) / (high - low) for b in (bar, refute))
    lower, upper = confidence_sequence(
        unit_scale, ALPHA, grid_with([scaled_bar, scaled_refute])
    )  # (N,), (N,)
    lower, upper = low + (high - low) * lower, low + (high - low) * upper
    units = np.cumsum([len(part) for part in values]).tolist()
    looks = []
    for n in units:
        interval = (float(lower[n - 1]), float(upper[n - 1]))
        looks.append(
            decide_by_interval(
                x[:n].mean(),
                interval,
                bar,
                refute_threshold=refute,
                higher_is_better=higher,
                level=1 - ALPHA,
                unit=d.get("unit", "unit"),
                units=n,
            )
        )
        if looks[-1].outcome is not None:
            break
    last = looks[-1]
    n = last.units
    record = {
        "method": CS_METHOD,
        "looks": len(looks),
        "units": units[: len(looks)],
        "intervals": [list(look.interval) for look in looks],
        "interval": list(last.interval),
        "stop": "decided" if last.outcome is not None else stop,
        "e_value": {  # against the share lying on the other side of each bar (40 = 2/α: the sequence clears it)
            "for_confirmed": e_value(unit_scale[:n], scaled_bar, ALPHA, higher),
            "for_refuted": e_value(unit_scale[:n], scaled_refute, ALPHA, not higher),
        },
    }
    outcome = OUTCOMES[last.outcome]
    evidence = {**v.evidence, "decision": last.to_dict(), "sequential": record}
    if outcome != v.outcome and OUTCOMES[_interval_outcome(d)] != v.outcome:
        # something beside the interval (a condition, the draws' disagreement) decided the fixed
        # verdict: the sequence alone cannot overrule it
        outcome = "inconclusive"
        evidence["reason"] = (
            f"the sequence says {OUTCOMES[last.outcome]}, but: {v.evidence.get('reason', v.outcome)}"
        )
    elif outcome == "inconclusive":
        evidence["reason"] = (
            f"its confidence sequence [{last.interval[0]:.3g}, {last.interval[1]:.3g}] reaches its bar"
        )
    else:
        evidence.pop("reason", None)
    return replace(v, outcome=outcome, evidence=evidence)


def _interval_outcome(d: dict) -> bool | None:
    """What the fixed-sample interval of decision record ``d`` alone decides."""
    higher = d.get("direction", "higher") == "higher"
    return decide_by_interval(
        d["statistic"],
        d["interval"],
        d["threshold"],
        refute_threshold=d["refute_threshold"],
        higher_is_better=higher,
    ).outcome


def _by_plan(v, first: Verdict, exp, table, records, draws, scale, stop) -> Verdict:
    """Decided once: at the first look when that decides it, else on the first draws whose units
    reach what the first look's power plan asked (never on more draws trained for other claims)."""
    units = _units_per_look(v)
    record = {"method": PLANNED_METHOD, "looks": len(units), "units": units}
    if first.outcome != "inconclusive":
        record.update(planned_units=units[0], looks=1, units=units[:1], stop="decided")
        return replace(first, evidence={**first.evidence, "sequential": record})
    power = first.evidence.get("power") or {}
    planned = power.get("units_needed")
    record["planned_units"] = planned
    reached = next((i for i, n in enumerate(units) if planned and n and n >= planned), None)
    if reached is None:
        why = f"waiting for its {planned} planned units" if planned else power.get("reason", "no power plan")
        record["stop"] = stop if planned else "no plan"
        evidence = {**v.evidence, "sequential": record, "reason": f"decided once at planned units: {why}"}
        return replace(v, outcome="inconclusive", evidence=evidence)
    if reached + 1 < len(draws):
        v = _verdict_on(exp, table, records, draws[: reached + 1], scale, v.claim)
    stop = "decided" if v.outcome != "inconclusive" else "planned units reached"
    record.update(looks=reached + 1, units=units[: reached + 1], stop=stop)
    return replace(v, evidence={**v.evidence, "sequential": record})


def _units_per_look(v: Verdict) -> list[int | None]:
    """The units after each draw (each draw's own units summed; None where they are not counted)."""
    per_draw = (v.replication or {}).get("decisions") or [v.evidence.get("decision")]
    counts = [(r or {}).get("units") for r in per_draw]
    if not all(counts):
        return [None] * len(counts)
    return np.cumsum(counts).astype(int).tolist()


def _verdict_on(exp, table, records, draws, scale, claim_id: str) -> Verdict:
    return next(u for u in analyse_draws(exp, table, records, draws, scale).verdicts if u.claim == claim_id)
