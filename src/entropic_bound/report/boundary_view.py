"""The claim-boundary table of the report: for each verdict with a ``robustness`` entry (shape in
:mod:`entropic_bound.experiments.robustness`), where the claim holds and how each setting came out."""

from __future__ import annotations

import html

from .format import number, value_text

_COLOURS = {"confirmed": "#1a7f37", "refuted": "#cf222e", "inconclusive": "#9a6700"}


def _setting_text(setting: dict) -> str:
    return ", ".join(f"{k} = {value_text(v, digits=4)}" for k, v in setting.items()) or "default"


def _outcome(entry: dict) -> str:
    verdict = str(entry.get("verdict", "?"))
    colour = _COLOURS.get(verdict, "#57606a")
    stat = entry.get("statistic")
    stat_text = f" ({number(stat)})" if stat is not None else ""
    return (
        f"<span class=outcome>{html.escape(_setting_text(entry.get('setting') or {}))}: "
        f"<b style='color:{colour}'>{html.escape(verdict)}</b>{html.escape(stat_text)}</span>"
    )


def boundary_rows(verdicts: list[dict]) -> list[dict]:
    """The verdicts (dicts with ``claim``) that carry a robustness entry, in the order given."""
    return [v for v in verdicts if isinstance(v.get("robustness"), dict)]


def boundary_table_html(verdicts: list[dict]) -> str:
    """One row per claim with a boundary: robust or not, where it holds, each setting's verdict."""
    rows = []
    for v in boundary_rows(verdicts):
        rob = v["robustness"]
        outcomes = "".join(_outcome(e) for e in rob.get("settings") or [])
        robust = "yes" if rob.get("robust") else "no"
        rows.append(
            f"<tr><td><a href='#claim-{html.escape(v['claim'])}'>{html.escape(v['claim'])}</a></td>"
            f"<td>{robust}</td><td>{html.escape(str(rob.get('holds_when', '')))}</td>"
            f"<td class=outcomes>{outcomes}</td></tr>"
        )
    if not rows:
        return ""
    head = "<tr><th>claim</th><th>same verdict everywhere</th><th>holds when</th><th>verdict per setting</th></tr>"
    return f"<div class=scroll><table class=boundary>{head}{''.join(rows)}</table></div>"
