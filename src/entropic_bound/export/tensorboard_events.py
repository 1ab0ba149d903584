"""``export --format tensorboard``: one TensorBoard run per stored run, ``OUT/<experiment>/<run_id>/``.

Each run folder holds one event file with the training curves as scalars over steps, the 1-D
curves over their index (``by_index/…``), the final metrics as ``final/<metric>`` at the last step,
the hyper-parameters (HParams plugin: every flattened parameter, seed and status, with the final
metrics as its metrics) and the provenance and text curves as text. View with
``tensorboard --logdir OUT``.

A run folder is written under a temporary name and renamed when complete, so an interrupted export
leaves no half run, and a second export skips the runs already there (stored runs never change).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from .runs import RunView


def _write_run(view: RunView, folder: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter
    from torch.utils.tensorboard.summary import hparams

    walltime = view.created_ms / 1000 or None
    with SummaryWriter(log_dir=str(folder)) as writer:
        for tag, points in {**view.series, **view.by_index}.items():
            for step, value in points:
                writer.add_scalar(tag, value, step, walltime=walltime)
        final = {f"final/{name}": value for name, value in view.metrics.items()}
        for tag, value in final.items():
            writer.add_scalar(tag, value, view.last_step, walltime=walltime)
        for summary in hparams(view.hparams, final):  # experiment, session start, session end
            writer.file_writer.add_summary(summary, view.last_step, walltime=walltime)
        for name, value in {**view.text, **view.provenance}.items():
            writer.add_text(name, value, view.last_step, walltime=walltime)


def export_tensorboard(views: Iterable[RunView], out: Path) -> tuple[int, int]:
    """Write every run not yet in ``out``; returns (runs written, runs already there)."""
    written = skipped = 0
    for view in views:
        final = out / _safe(view.experiment) / view.run_id
        if final.is_dir():
            skipped += 1
            continue
        partial = final.with_name(f".partial-{view.run_id}")
        shutil.rmtree(partial, ignore_errors=True)  # left by an interrupted export
        _write_run(view, partial)
        os.replace(partial, final)
        written += 1
    return written, skipped


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
