"""The shape of a quick report, for the browser test of its height: per experiment its notes, the
pixel size of each figure, each table's size and first rows, and every verdict as verdicts.json
holds it. The test lays this content out with today's page code (blank images of the same sizes)
and measures it in Chromium. Regenerate after a change to what the analyses show:

    entropic-bound reproduce --scale quick --out OUT
    python tests/unit/report_shape.py OUT
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

SHAPE = Path(__file__).resolve().parents[1] / "data" / "quick_report_shape.json.gz"
ROWS_KEPT = 10  # a table preview shows no more


def _png_size(path: Path) -> list[int]:
    return list(struct.unpack(">II", path.read_bytes()[16:24]))


def _write(out: Path) -> None:
    import gzip

    from entropic_bound.report.writer import analyse_store
    from entropic_bound.store import RunStore

    experiments = []
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        for exp, scale, analysis in analyse_store(store):
            tables = {
                name: {
                    "rows": len(t),
                    "head": json.loads(t.head(ROWS_KEPT).to_json(orient="split", index=False)),
                }
                for name, t in analysis.tables.items()
            }
            figures = {name: _png_size(out / "figures" / f"{name}.png") for name in analysis.figures}
            experiments.append(
                {"name": exp.name, "scale": scale, "runs": len(analysis.results), "notes": analysis.notes}
                | {"tables": tables, "figures": figures}
            )
    verdicts = json.loads((out / "verdicts.json").read_text())
    shape = {"experiments": experiments, "verdicts": [{"claim": c, **v} for c, v in verdicts.items()]}
    SHAPE.write_bytes(gzip.compress(json.dumps(shape).encode(), mtime=0))
    print(f"{len(experiments)} experiments, {len(verdicts)} verdicts -> {SHAPE}")


if __name__ == "__main__":
    _write(Path(sys.argv[1]))
