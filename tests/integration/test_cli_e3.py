"""E3 end to end through the CLI at a tiny scale, and its bad inputs."""

import json

import pandas as pd
import pytest

from entropic_bound.cli import main

TINY = [
    "task.n=8",
    "task.d=8",
    "task.r_star=2",
    "ranks=[2]",
    "seeds=1",
    "v_settings=[known]",
    "train.steps=200",
    "x2_train.steps=100",
    "x2_ranks=[8]",
    "n_test=256",
    "n_mixer=16",
]


def _args(prefix: str = "") -> list[str]:
    out = []
    for a in TINY:
        out += ["--set", prefix + a]
    return out


def test_tiny_e3_writes_verdicts_results_and_figures(tmp_path):
    out = tmp_path / "out"
    assert main(["run", "E3", "--out", str(out), "--quiet", *_args()]) == 0
    verdicts = json.loads((out / "verdicts.json").read_text())
    assert {"C4", "X2"} <= set(verdicts)
    c4, x2 = verdicts["C4"], verdicts["X2"]
    # B0 reaches the floor, B1-B3 stay near 1 even at full rank, the B1 teacher control is learned
    assert c4["verdict"] == "confirmed", c4["evidence"]
    assert (
        c4["robustness"]["settings"][0]["verdict"] == "confirmed" and len(c4["robustness"]["settings"]) >= 1
    )
    assert (
        c4["evidence"]["full_rank"]["known"]["B0"] < 0.01 < 0.5 < c4["evidence"]["full_rank"]["known"]["B1"]
    )
    # 100 positional steps are far below x2_min_steps: X2 may not be refuted from them
    assert x2["verdict"] in ("confirmed", "inconclusive") and x2["evidence"]["steps"] == 100
    assert set(x2["evidence"]["pairs"]) == {
        "B1/low_rank",
        "B1/row_stochastic",
        "B2/low_rank",
        "B2/row_stochastic",
    }
    table = pd.read_csv(out / "results" / "E3.csv")
    assert set(table["role"]) == {"ladder", "control_b", "x2"} and (table["status"] == "ok").all()
    assert set(table[table["role"] == "ladder"]["rung"]) == {"B0", "B1", "B2", "B3"}
    b0 = table[table["rung"] == "B0"]
    assert (
        (b0["rel_excess"] - b0["rel_excess_population"]).abs() < 0.05 * b0["rel_excess_population"] + 1e-3
    ).all()
    assert (out / "results" / "E3_summary.csv").is_file()
    figures = {p.name for p in (out / "figures").glob("*.png")}
    assert {"e3_full_rank_bars.png", "e3_excess_vs_rank.png", "e3_mixers.png"} <= figures


@pytest.mark.parametrize(
    "setting, message",
    [
        ("rungs=[B1,B9]", "The 'rungs' parameter must be one of 'B0', 'B1', 'B2', 'B3'. Got 'B9'"),
        ("ranks=[40]", "The 'ranks' parameter must hold ints in [1, 16] (task.d"),
        ("positional_rungs=[B3]", "positional information is for B1 and B2 only"),
        ("positional_rungs=[B0]", "positional information is for B1 and B2 only"),
        ("n_heads=0", "The 'n_heads' parameter must be an int in [1, 64]"),
    ],
)
def test_bad_e3_input_is_one_line_and_exit_2(setting, message, tmp_path, capsys):
    rc = main(["run", "E3", "--out", str(tmp_path / "o"), "--set", setting])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
