"""A claim's power: the units it has, the units that would decide it, what they cost and the command
that adds them.

Read from the claim's ``evidence["decision"]`` (its statistic, interval, bars, direction and
``units``), its declared :class:`~.rule.Rule` (the interval method) and :class:`~.rule.Unit` (what
adds units). The statistic is held where it is: the units needed are those at which an interval of the
same method around the same statistic clears the bar on the statistic's side (:mod:`...stats.power`).
Where every draw brings fresh units (``Unit.added_by == "draws"``) the command adds draws; the CPU
cost is the measured seconds of this experiment's runs per draw.
"""

from __future__ import annotations

import math
from functools import reduce
from typing import Any

from ...stats.power import plan
from .rule import Interval, Rule, Unit

#: how each interval method is planned (see stats/power.py); COUNT and POINT rules have no interval
PLANNED_AS = {
    Interval.WILSON: "wilson",
    Interval.NEWCOMBE: "scaled",  # the arms' shares are not recorded; Newcombe's width also goes as 1/√n
    Interval.BOOTSTRAP: "scaled",
    Interval.CLUSTER_BOOTSTRAP: "scaled",
    Interval.ORDER_STATISTIC: "scaled",
    Interval.SPEARMAN: "fisher",
}


def bar_facing(decision: dict) -> tuple[float | None, str]:
    """``(the bar the statistic would clear, "confirm" | "refute")``, or ``(None, why not)``."""
    x, bar, refute = decision["statistic"], decision["threshold"], decision["refute_threshold"]
    sign = 1.0 if decision.get("direction", "higher") == "higher" else -1.0
    if not all(map(math.isfinite, (x, bar, refute))):
        return None, "its statistic or bars are undefined"
    if sign * (x - bar) > 0:
        return bar, "confirm"
    if sign * (x - refute) < 0:
        return refute, "refute"
    if x in (bar, refute):
        return None, f"its statistic {x:.3g} sits on its bar"
    return None, f"its statistic {x:.3g} lies between its bars {bar:.3g} and {refute:.3g}"


def deciding_method(decision: dict, rule: Rule, unit: Unit) -> tuple[Interval, Unit]:
    """The interval method and unit of what decided: a condition's own (matched by the unit its
    record names) where a condition decided, else the claim's."""
    named = decision.get("unit")
    for condition in rule.conditions:
        if condition.unit is not None and condition.unit.name == named and condition.unit.name != unit.name:
            return condition.interval, Unit(condition.unit.name, condition.unit.keys, unit.added_by)
    return rule.interval, unit


def claim_power(decision: dict | None, rule: Rule, unit: Unit, cost: dict[str, Any]) -> dict[str, Any]:
    """The claim's ``power`` record. ``cost``: ``experiment``, ``scale``, ``draws`` (run), ``seconds``
    (CPU seconds of those draws' runs) and ``cfg`` (the experiment's config)."""
    if not isinstance(decision, dict) or "interval" not in decision:
        if rule.interval in (Interval.COUNT, Interval.POINT):
            return {"available": False, "reason": f"a {rule.interval.value} rule has no interval to plan"}
        return {"available": False, "reason": "these runs give its statistic no interval to plan from"}
    interval, unit = deciding_method(decision, rule, unit)
    method = PLANNED_AS.get(interval)
    if method is None:
        return {"available": False, "reason": f"a {interval.value} rule has no interval to plan"}
    units_now = decision.get("units")
    if not units_now:
        return {"available": False, "reason": "the units behind its interval are not counted"}
    boundary, side = bar_facing(decision)
    if boundary is None:
        return {"available": False, "reason": f"no sample size decides it: {side}"}
    planned = plan(
        method,
        statistic=decision["statistic"],
        boundary=boundary,
        units_now=int(units_now),
        unit=unit.name,
        interval=tuple(decision["interval"]),
    )
    out = {"available": True, "side": side, **planned.to_dict()}
    out.update(_how_to_add(planned.units_needed, int(units_now), unit, cost))
    return out


def _how_to_add(needed: int | None, now: int, unit: Unit, cost: dict[str, Any]) -> dict[str, Any]:
    """The command that brings the units to ``needed`` and its CPU seconds."""
    if needed is None:
        return {"command": None}
    factor = needed / now
    draws = list(cost["draws"])
    per_draw_s = cost["seconds"] / max(1, len(draws))
    head = f"entropic-bound run {cost['experiment']} --scale {cost['scale']}"
    if unit.added_by == "draws":
        total = max(len(draws), math.ceil(len(draws) * factor))
        more = list(range(max(draws) + 1, max(draws) + 1 + total - len(draws)))
        spec = ",".join(map(str, draws + more)) if len(draws) + len(more) <= 6 else _span(draws, more)
        return {
            "draws_needed": total,
            "cpu_s_per_unit": cost["seconds"] / now,
            "cpu_s_needed": per_draw_s * len(more),
            "command": f"{head} --draws {spec}",
        }
    if unit.added_by is None:
        return {"command": None, "why_no_command": f"no setting adds more of them ({unit.name})"}
    current = reduce(getattr, unit.added_by.split("."), cost["cfg"])
    if isinstance(current, int) and not isinstance(current, bool):
        value = max(current, math.ceil(current * factor))
        return {
            "cpu_s_per_unit": cost["seconds"] / now,
            "cpu_s_needed": cost["seconds"] * (value / current - 1),
            "command": f"{head} --set {unit.added_by}={value}",
        }
    return {
        "command": None,
        "why_no_command": f"add ≈ {needed - now} more to {unit.added_by} (each a {unit.name})",
    }


def _span(draws: list[int], more: list[int]) -> str:
    """A long draw list in the ``a-b`` form ``--draws`` accepts."""
    every = sorted(draws + more)
    if every == list(range(every[0], every[-1] + 1)):
        return f"{every[0]}-{every[-1]}"
    return ",".join(map(str, every))
