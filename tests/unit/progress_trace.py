"""A recorded ``reproduce --scale quick --workers 1`` for the time-left tests: when each experiment's
progress line came and when the sweep ended, with the groups' declared costs it ran with.

``tests/data/quick_progress_trace.json`` holds ``groups`` (``[experiment, runs, training cost]`` in
the sweep's order), ``analysis`` (cost per experiment), ``workers``, ``events`` (``[seconds,
experiment, runs done, runs in all]`` from the plain progress lines) and ``end_s`` (the first
``report:`` line: every run stored, every experiment analysed). Regenerate from a fresh run:

    entropic-bound reproduce --scale quick --out OUT --workers 1 2> LOG   # not a terminal: plain lines
    python tests/unit/progress_trace.py LOG STAMPS

``STAMPS`` has one ``<lines in LOG> <unix time>`` line per second while the run lasts (a shell loop
over ``wc -l``), the clock the log's own ``elapsed`` is tied to for the end.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

TRACE = Path(__file__).resolve().parents[1] / "data" / "quick_progress_trace.json"
LINE = re.compile(r"^(E\d): (\d+)/(\d+) runs.*elapsed (\d+):(\d\d):(\d\d)")


def _seconds(match) -> int:
    h, m, s = (int(match.group(i)) for i in (4, 5, 6))
    return 3600 * h + 60 * m + s


def _schedule(workers: int) -> dict:
    from entropic_bound.pipeline import configure
    from entropic_bound.registry import EXPERIMENTS
    from entropic_bound.sweep.time_left import plan_groups

    bound = [configure(name, "quick") for name in EXPERIMENTS.names()]
    planned = plan_groups([(exp, exp.groups(exp.specs())) for exp in bound], stored=set())
    return {
        "groups": [[g.experiment, g.runs, round(g.cost, 4)] for g in planned],
        "analysis": {exp.name: exp.analysis_cost for exp in bound},
        "workers": workers,
    }


def _write(log: Path, stamps: Path) -> None:
    lines = log.read_text().splitlines()
    events, offsets = [], []
    stamp_of = {}
    for row in stamps.read_text().splitlines():
        count, _, when = row.partition(" ")
        if count.isdigit():
            stamp_of.setdefault(int(count), float(when))  # the first second a line count was seen
    for i, line in enumerate(lines):
        match = LINE.match(line)
        if match:
            events.append([_seconds(match), match.group(1), int(match.group(2)), int(match.group(3))])
            if i + 1 in stamp_of:
                offsets.append(stamp_of[i + 1] - _seconds(match))
    first_report = next(i for i, line in enumerate(lines) if line.startswith("report:"))
    end = min(t for n, t in stamp_of.items() if n > first_report) - min(offsets)
    trace = {**_schedule(workers=1), "events": events, "end_s": round(end, 1)}
    TRACE.write_text(json.dumps(trace, indent=0) + "\n")
    print(f"{len(events)} events, end {end:.0f} s -> {TRACE}")


if __name__ == "__main__":
    _write(Path(sys.argv[1]), Path(sys.argv[2]))
