"""The claim-boundary table of the report: for each verdict with a ``robustness`` entry (shape in
:mod:`entropic_bound.experiments.framework.robustness`), how the claim came out across the settings tried,
where it was confirmed and each setting's verdict.

One notation throughout: ``key = value``, lists as ``4, 8``, an unset option as ``default``. A
single setting tried is said as such, never as a condition the claim holds under. The number beside
a setting's verdict is its ``statistic`` (explained under the table and in the page's terms).
"""

from __future__ import annotations

import html

from .format import number, value_text

_COLOURS = {"confirmed": "#1a7f37", "refuted": "#cf222e", "inconclusive": "#9a6700"}
#: Settings listed inline up to this many; more fold into a ``<details>`` line of counts.
INLINE_SETTINGS = 4
STATISTIC_NOTE = (
    "statistic: the number the claim's criterion compares with its threshold, recomputed at that setting "
    "(the criterion is under each claim)."
)


def _value(value) -> str:
    return "default" if value is None else value_text(value, digits=4)


def _item(key: str, value) -> str:
    """One key of a setting; a setting that keeps part of the seeds says so (it is less data, not a
    condition under which the claim holds)."""
    if key == "seeds":
        return "the first seed" if value == 1 else f"the first {_value(value)} seeds"
    if key == "seed":
        return f"seed {_value(value)} alone"
    return f"{key} = {_value(value)}"


def setting_text(setting: dict) -> str:
    """``{"task.r_stars": [4], "c3_estimator": None}`` → ``task.r_stars = 4, c3_estimator = default``."""
    return ", ".join(_item(k, v) for k, v in setting.items()) or "the default setting"


def _outcome(entry: dict, default: bool = False) -> str:
    verdict = str(entry.get("verdict", "?"))
    colour = _COLOURS.get(verdict, "#57606a")
    stat = entry.get("statistic")
    stat_text = f", statistic {number(stat)}" if stat is not None else ""
    return (
        f"<span class=outcome>{'default, ' if default else ''}{html.escape(setting_text(entry.get('setting') or {}))}: "
        f"<b style='color:{colour}'>{html.escape(verdict)}</b>{html.escape(stat_text)}</span>"
    )


def across_text(settings: list[dict]) -> str:
    """How the verdicts fell across the settings: ``refuted at all 3 settings``, ``confirmed at 2
    of 5, refuted at 3``, ``one setting tried: confirmed``."""
    verdicts = [str(e.get("verdict", "?")) for e in settings]
    if len(verdicts) == 1:
        return f"one setting tried: {verdicts[0]}"
    counts = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
    if len(counts) == 1:
        return f"{verdicts[0]} at all {len(verdicts)} settings"
    parts = [f"{v} at {n}" for v, n in sorted(counts.items(), key=lambda kv: -kv[1])]
    parts[0] += f" of {len(verdicts)}"
    return ", ".join(parts)


def confirmed_text(rob: dict) -> str:
    """Where the claim came out confirmed, in the table's notation. A claim's own wording of it
    (``holds_when`` other than the grid's generic forms) is kept as the claim states it."""
    from ..experiments.framework.robustness import (
        describe_setting,
    )  # the grid's generic wording, to recognise it

    settings = rob.get("settings") or []
    confirmed = [e for e in settings if e.get("verdict") == "confirmed"]
    misses = [e for e in settings if e.get("verdict") != "confirmed"]
    listed = "; ".join(describe_setting(e.get("setting") or {}) for e in confirmed)
    stated = str(rob.get("holds_when") or "")
    generic = stated in (listed, "every setting tried", "nowhere in the grid")
    if stated and not generic and not stated.startswith("every setting tried except "):
        return stated
    if not confirmed:
        return "at none of the settings tried"
    if len(confirmed) == len(settings):
        return "at every setting tried" if len(settings) > 1 else "at the one setting tried"
    if len(misses) < len(confirmed):
        return "everywhere except " + "; ".join(
            f"{setting_text(e['setting'])} ({e['verdict']})" for e in misses
        )
    return "only with " + "; ".join(setting_text(e.get("setting") or {}) for e in confirmed)


def boundary_rows(verdicts: list[dict]) -> list[dict]:
    """The verdicts (dicts with ``claim``) that carry a robustness entry, in the order given."""
    return [v for v in verdicts if isinstance(v.get("robustness"), dict)]


def _outcomes_cell(settings: list[dict]) -> str:
    """Each setting's verdict; the first setting is the default, whose verdict is the claim's."""
    chips = "".join(_outcome(e, default=i == 0) for i, e in enumerate(settings))
    if len(settings) <= INLINE_SETTINGS:
        return chips
    return f"<details><summary>the {len(settings)} settings</summary>{chips}</details>"


def boundary_table_html(verdicts: list[dict]) -> str:
    """One row per claim with a boundary: its verdicts across the settings, where it was
    confirmed, each setting's verdict (folded when there are many)."""
    rows = []
    for v in boundary_rows(verdicts):
        rob = v["robustness"]
        settings = rob.get("settings") or []
        claim = html.escape(v["claim"])
        rows.append(
            f"<tr><td><a href='#claim-{claim}'>{claim}</a></td>"
            f"<td>{html.escape(across_text(settings))}</td><td>{html.escape(confirmed_text(rob))}</td>"
            f"<td class=outcomes>{_outcomes_cell(settings)}</td></tr>"
        )
    if not rows:
        return ""
    head = "<tr><th>claim</th><th>verdicts across the settings</th><th>confirmed</th><th>verdict per setting</th></tr>"
    table = f"<div class=scroll><table class=boundary>{head}{''.join(rows)}</table></div>"
    return f"{table}<p class=small>{html.escape(STATISTIC_NOTE)}</p>"
