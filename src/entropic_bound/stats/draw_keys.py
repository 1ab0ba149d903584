"""The draw a row belongs to, as a column, so that a unit's keys name one unit across draws.

Rows of several draws are decided together, and a draw re-draws every seed: seed 0 of draw 1 is a
different teacher from seed 0 of draw 0. A unit keyed by ``(..., seed)`` alone would merge them, so
every unit key of a pooled decision includes ``draw``. Rows that come without the column (one draw's
rows, read straight from a results table) are one draw, and get a constant one.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["DRAW", "with_draw"]

#: The column naming a row's draw (``Decision.select`` writes it).
DRAW = "draw"


def with_draw(rows: pd.DataFrame, draw: int = 0) -> pd.DataFrame:
    """``rows`` with a ``draw`` column (``draw`` where it has none: the rows are one draw)."""
    return rows if DRAW in rows else rows.assign(**{DRAW: int(draw)})
