"""``entropic-bound list EXPERIMENT``: the config keys with defaults, ranges or choices and meanings."""

from __future__ import annotations

import pytest

from entropic_bound import config as cfglib
from entropic_bound.cli import main
from entropic_bound.cli.config_listing import config_rows, scale_config
from entropic_bound.config_keys import experiment_names
from entropic_bound.experiments.framework.config_lookup import config_class


@pytest.mark.parametrize("name", experiment_names())
def test_every_config_key_is_listed_with_its_quick_default(name):
    rows = config_rows(name)
    quick = scale_config(config_class(name), "quick")
    assert [key for key, *_ in rows] == cfglib.keys(quick)


def test_list_e7_prints_defaults_ranges_choices_and_meanings(capsys):
    assert main(["list", "E7"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "task.corpus_paths" in out and "text files, each one more natural corpus" in out
    row = {key: (default, allowed, meaning) for key, default, allowed, meaning in config_rows("E7")}
    assert row["task.tokens"] == (
        "100000 (paper: 400000)",
        "[1000, 1e+08]",
        "tokens per corpus (train + held out)",
    )
    assert row["task.corpora"][1].startswith("one of ") and row["train.steps"][0] == "600 (paper: 3000)"
