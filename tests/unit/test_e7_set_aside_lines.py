"""An own corpus whose runs were set aside says so on the console: which file, its loss-gap fraction
against the allowed one, and what would help."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.experiments.e7_language.config import E7Config
from entropic_bound.experiments.e7_language.set_aside import print_set_aside, set_aside_lines


def _runs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "corpus": ["text:a", "text:a", "text:b", "tinyshakespeare"],
            "corpus.path": ["/u/a.txt", "/u/a.txt", "/u/b.txt", np.nan],
            "learned": [False, True, True, False],
            "loss_gap_fraction": [0.9, 0.2, 0.1, 0.8],
        }
    )


def test_only_own_corpora_set_aside_are_named_with_their_gap_and_advice():
    cfg = E7Config()
    lines = set_aside_lines(cfg, _runs())
    assert len(lines) == 1  # b.txt learned; tinyshakespeare is not the user's file
    line = lines[0]
    assert line.startswith("warning: own corpus /u/a.txt: 1 of 2 run(s) set aside")
    assert "loss-gap fraction 0.90" in line and "verdict.learned_max_gap_fraction = 0.35" in line
    assert f"train.steps=N, now {cfg.train.steps}" in line and "--scale paper" in line


def test_the_lines_reach_the_console_once(capsys):
    cfg = E7Config()
    runs = _runs().assign(**{"corpus.path": ["/v/a.txt", "/v/a.txt", "/v/b.txt", np.nan]})
    assert print_set_aside(cfg, runs) == print_set_aside(cfg, runs)
    assert capsys.readouterr().err.count("own corpus /v/a.txt") == 1
