"""How ``run`` and ``reproduce`` end: a table of verdicts (claim, verdict in colour, one line of
evidence) and then the report path; or, with ``--json``, the verdicts JSON on stdout instead."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..report.evidence import evidence_line
from ..report.format import AT_THE_BAR, AT_THE_BAR_MEANS, at_the_bar, natural_key, next_step, scale_line
from ..report.overrides import non_standard_line
from ..report.sequential_view import draws_cell

STYLES = {"confirmed": "bold green", "refuted": "bold red", "inconclusive": "bold yellow"}


def verdict_table(verdicts: dict) -> Table:
    """``verdicts`` as in verdicts.json (claim → verdict dict), one row per claim in claim order."""
    table = Table(title="verdicts", title_justify="left", show_lines=False)
    table.add_column("claim", no_wrap=True)
    table.add_column("exp", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("draws")
    table.add_column("key evidence", overflow="fold")
    for claim in sorted(verdicts, key=natural_key):
        v = verdicts[claim]
        verdict = str(v.get("verdict", "?"))
        evidence = Text(evidence_line(claim, v.get("evidence") or {}))
        step = next_step(v)
        if step:
            evidence.append(f"\n→ {step}", style="yellow")
        marker = f" ({AT_THE_BAR})" if at_the_bar(v) else ""
        table.add_row(
            claim,
            str(v.get("experiment", "")),
            Text(verdict, style=STYLES.get(verdict, "")) + Text(marker),
            Text(draws_cell(v)),
            evidence,
        )
    return table


def print_outcome(report: Path, *, as_json: bool = False, quiet: bool = False, console=None) -> None:
    """The end of a run: verdict table then report path (``quiet``: the path only; ``as_json``: the JSON)."""
    verdicts_path = Path(report).with_name("verdicts.json")
    if as_json:
        sys.stdout.write(verdicts_path.read_text())
        return
    if not quiet and verdicts_path.is_file():
        if console is None:
            console = Console()
            console = console if console.is_terminal else Console(width=120)
        verdicts = json.loads(verdicts_path.read_text())
        console.print(scale_line(verdicts), highlight=False)
        console.print(verdict_table(verdicts))
        if any(at_the_bar(v) for v in verdicts.values()):
            console.print(f"{AT_THE_BAR}: {AT_THE_BAR_MEANS}", style="dim", highlight=False)
        line = non_standard_line(verdicts)
        if line:
            console.print(line, style="bold yellow", highlight=False)
    print(report, flush=True)  # last line: the bare path, for scripts
