"""Console lines for a user's own corpus whose runs were set aside as not learned: which file, how far
its loss gap is from the allowed fraction, and what would let the models learn it."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

#: (path, steps, gap fraction) already printed in this process: a report rebuilt in the same process
#: (draws, replication) says it once
_PRINTED: set[tuple] = set()


def set_aside_lines(cfg, runs: pd.DataFrame) -> list[str]:
    """One line per own corpus (``task.corpus_paths``) with a run set aside as not learned."""
    if "corpus.path" not in runs or "learned" not in runs:
        return []
    own = runs[runs["corpus.path"].map(lambda p: isinstance(p, str)) & ~runs["learned"].astype(bool)]
    allowed, min_tv = cfg.verdict.learned_max_gap_fraction, cfg.verdict.learned_min_uniform_tv
    out = []
    for path, g in own.groupby("corpus.path", sort=False):
        total = int((runs["corpus.path"] == path).sum())
        gap = float(np.nanmedian(g["loss_gap_fraction"].to_numpy(float)))
        if gap > allowed:
            why = f"loss-gap fraction {gap:.2f} (median of these runs) > verdict.learned_max_gap_fraction = {allowed:g}"
        else:
            why = (
                f"loss-gap fraction {gap:.2f} within verdict.learned_max_gap_fraction = {allowed:g}, but the "
                f"attention stayed within verdict.learned_min_uniform_tv = {min_tv:g} of uniform"
            )
        out.append(
            f"warning: own corpus {path}: {len(g)} of {total} run(s) set aside as not learned: {why}; "
            f"train longer (--set train.steps=N, now {cfg.train.steps}), use --scale paper, or give a "
            "longer, less repetitive text."
        )
    return out


def print_set_aside(cfg, runs: pd.DataFrame) -> list[str]:
    """Print :func:`set_aside_lines` on stderr (each once per process); return them for the notes."""
    lines = set_aside_lines(cfg, runs)
    for line in lines:
        if line not in _PRINTED:
            _PRINTED.add(line)
            print(line, file=sys.stderr)
    return lines
