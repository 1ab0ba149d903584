"""Progress bars on a terminal: at 80 columns the counts, elapsed and time left are whole; the bar
goes first, then the description is cut; a wide terminal gets the bar back."""

from __future__ import annotations

import io

from rich.console import Console

from entropic_bound.cli.progress import rich_bars

LINES = [
    (0, 48, "E2: 0 run(s) already stored, 12 group(s) to run", 200.0),
    (17.5, 1150, "all: 7 experiments", 3725.0),
    (13, 26, "E7: group 1/6 done, 1 running", 61.0),
]


def _drawn(width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    bar, update = rich_bars(console)
    for done, total, description, left in LINES:
        update(done, total, description, left={description.split(":")[0]: left})
    console.print(bar.get_renderable())
    return console.export_text().splitlines()


def test_at_80_columns_every_number_is_whole():
    lines = _drawn(80)
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines), lines
    for line, numbers in zip(lines, ("0/48", "17/1150", "13/26")):
        assert f" {numbers} elapsed 0:00:00 left ~" in line, line
    assert lines[0].endswith("left ~0:03:19") or lines[0].endswith("left ~0:03:20"), lines[0]
    assert lines[1].endswith("left ~1:02:04") or lines[1].endswith("left ~1:02:05"), lines[1]
    assert lines[0].startswith("E2: 0 run(s) already stored") and "…" in lines[0]  # cut, not wrapped
    assert "━" not in "".join(lines)  # no room for a bar of any use: dropped


def test_a_wide_terminal_shows_the_whole_description_and_the_bar():
    lines = _drawn(140)
    assert lines[0].startswith("E2: 0 run(s) already stored, 12 group(s) to run ")
    assert "━" in lines[2]  # E7 half done: a drawn bar
    assert all(len(line) <= 140 for line in lines)
