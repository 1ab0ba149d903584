"""How the tables label ``--until-decided`` verdicts: "sequential", their looks and why they stopped,
beside the draws (the figure: :mod:`.sequential_figure`)."""

from __future__ import annotations

from .format import draws_text


def sequential_text(record: dict | None) -> str:
    """``"sequential: 3 looks, decided"`` for a verdict's ``evidence["sequential"]`` ("" without one)."""
    if not record:
        return ""
    looks = record.get("looks", 0)
    stop = record.get("stop") or "open"
    planned = f", {record['planned_units']} planned units" if record.get("planned_units") else ""
    return f"sequential: {looks} look{'s' * (looks != 1)}{planned}, {stop}"


def draws_cell(verdict: dict) -> str:
    """The table's draws cell: the draws, and for a sequential verdict its looks and stop."""
    text = draws_text(verdict.get("replication"))
    extra = sequential_text((verdict.get("evidence") or {}).get("sequential"))
    return f"{text}; {extra}" if extra else text
