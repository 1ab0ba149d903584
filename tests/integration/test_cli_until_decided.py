"""``--until-decided`` end to end: a tiny E1 decided within its budget and resumed without
retraining; a tiny E6 whose shares stay open looked at draw after draw (slow)."""

from __future__ import annotations

import json
import re

import pytest

from entropic_bound.cli import main
from entropic_bound.experiments import tiny_settings
from entropic_bound.store import RunStore


def _tiny(name: str) -> list[str]:
    out = []
    for key, value in tiny_settings(name).items():
        text = f"[{','.join(map(str, value))}]" if isinstance(value, tuple) else str(value)
        out += ["--set", f"{name}.{key}={text}"]
    return out


def test_run_until_decided_records_each_claims_looks_and_resumes_without_training(tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "run",
        "E1",
        "--out",
        str(out),
        "--workers",
        "1",
        "--until-decided",
        "--budget",
        "60s",
        *_tiny("E1"),
    ]
    assert main(argv) == 0
    first = capsys.readouterr()
    verdicts = json.loads((out / "verdicts.json").read_text())
    assert verdicts and all(v["verdict"] != "inconclusive" for v in verdicts.values())
    for v in verdicts.values():
        seq = v["evidence"]["sequential"]
        assert seq["stop"] == "decided" and seq["looks"] == len(seq["units"]) == 1
        assert "method" in seq
    assert "sequential: 1 look" in first.out and "E1: " in first.err
    assert re.search(r"sequential: 1 look(, \d+ planned units)?, decided", (out / "report.html").read_text())
    assert main([*argv, "--quiet"]) == 0 and capsys.readouterr().err == ""  # no look lines either
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        info = store.experiment_info("E1")
        assert info["draws"] == [0] and info["sequential"] == {"stop": "decided"}
        assert "sequential" not in info["config"]
        runs = store.count("E1")

    assert main(argv) == 0  # resumed: the same draws, nothing trained again
    assert f"E1: 0 run(s) trained, {runs} already stored" in capsys.readouterr().err
    assert json.loads((out / "verdicts.json").read_text()) == verdicts


@pytest.mark.slow
def test_open_shares_are_looked_at_after_every_draw_until_no_draws_are_left(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["run", "E6", "--out", str(out), "--workers", "1", "--until-decided", "--budget", "5m"]
    assert main([*argv, "--max-draws", "3", *_tiny("E6")]) == 0
    err = capsys.readouterr().err
    verdicts = json.loads((out / "verdicts.json").read_text())
    shares = {c: v for c, v in verdicts.items() if "intervals" in v["evidence"]["sequential"]}
    assert shares, "E6 has claims decided by a confidence sequence"
    for claim, v in shares.items():
        seq = v["evidence"]["sequential"]
        assert seq["stop"] in ("decided", "no draws left") and seq["units"] == sorted(seq["units"])
        if seq["stop"] == "no draws left":
            assert v["verdict"] == "inconclusive" and seq["looks"] == 3
            assert f"E6 look 3 (draws 0,1,2): {claim} interval" in err
        assert set(seq["e_value"]) == {"for_confirmed", "for_refuted"}
    assert (out / "figures" / "E6_sequential.png").is_file()
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        assert store.experiment_info("E6")["draws"] == [0, 1, 2]
