"""Real quick-scale rows of E1–E6 for verdict tests: the store's table of a ``reproduce --scale quick``.

The CSVs under ``tests/data/quick_rows/`` are the rows (only the columns the verdicts read) that the
quick defaults produced; unit tests call the verdict functions on them and flip each criterion by
changing a threshold or perturbing one real number. Regenerate after a change to the quick grid:

    python tests/unit/quick_rows.py --write OUT_E1 OUT_E2 ...   # folders of `reproduce --only EX`
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[1] / "data" / "quick_rows"
DROP_PREFIXES = ("train.", "teacher_meanmixer_", "meanmixer_")
KEEP = {"train.n_samples", "train.optimizer", "train.lr", "train.steps"}


def load(name: str) -> pd.DataFrame:
    """The stored quick rows of experiment ``name`` (E1…E6)."""
    return pd.read_csv(DATA / f"{name}.csv.gz")


def _write(folder: Path) -> None:
    from entropic_bound.pipeline import configure
    from entropic_bound.store import RunStore

    with RunStore(folder / "runs.sqlite", readonly=True) as store:
        for name in store.experiments():
            exp = configure(name, "quick", {})
            table, _ = exp.select(store.table(name), [], exp.seeds)
            cols = [c for c in table.columns if c in KEEP or not c.startswith(DROP_PREFIXES)]
            cols = [c for c in cols if c not in ("wall_s", "timing_s", "experiment")]
            table[cols].to_csv(DATA / f"{name}.csv.gz", index=False, float_format="%.10g")
            print(f"{name}: {len(table)} rows")


if __name__ == "__main__" and sys.argv[1:2] == ["--write"]:
    DATA.mkdir(parents=True, exist_ok=True)
    for arg in sys.argv[2:]:
        _write(Path(arg))
