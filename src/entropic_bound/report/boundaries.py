"""The "claim boundaries" table: where each claim holds, from the verdicts' ``robustness`` entries.

One row per claim: the verdict at the default setting, whether every setting tried agrees
(``robust``), the region where it holds (``holds_when``) and each setting's own verdict and
statistic. No peer tool maps where each claim holds; this is that map, read from the data.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable

from ..experiments.robustness import describe_setting


def _plain(verdict: str) -> str:
    return html.escape(verdict)


def _setting_line(entry: dict, badge: Callable[[str], str]) -> str:
    stat = entry.get("statistic")
    number = "" if stat is None else f" <span class=small>({stat:.3g})</span>"
    return (
        f"<code>{html.escape(describe_setting(entry['setting']))}</code>: {badge(entry['verdict'])}{number}"
    )


def boundary_rows(verdicts: Iterable) -> list[dict]:
    """``{claim, verdict, robust, holds_when, settings}`` per verdict that carries a boundary."""
    rows = []
    for v in verdicts:
        rob = v.robustness
        if not rob:
            continue
        rows.append(
            {
                "claim": v.claim,
                "verdict": v.verdict,
                "robust": bool(rob.get("robust")),
                "holds_when": rob.get("holds_when", ""),
                "settings": list(rob.get("settings", [])),
            }
        )
    return rows


def boundary_table(verdicts: Iterable, badge: Callable[[str], str] = _plain) -> str:
    """The HTML table (empty string when no verdict carries a boundary)."""
    rows = boundary_rows(verdicts)
    if not rows:
        return ""
    head = (
        "<tr><th>claim</th><th>default verdict</th><th>robust</th><th>holds when</th>"
        "<th>verdict per setting (statistic)</th></tr>"
    )
    body = [
        f"<tr><td><b>{html.escape(r['claim'])}</b></td><td>{badge(r['verdict'])}</td>"
        f"<td>{'yes' if r['robust'] else 'no'}</td><td>{html.escape(str(r['holds_when']))}</td>"
        f"<td class=small>{'<br>'.join(_setting_line(s, badge) for s in r['settings'])}</td></tr>"
        for r in rows
    ]
    return "<table>" + head + "".join(body) + "</table>"
