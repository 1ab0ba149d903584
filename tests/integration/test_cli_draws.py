"""``--draws`` end to end: two draws of a tiny E1 into one store, resumed, reported per claim."""

from __future__ import annotations

import json

from entropic_bound.cli import main
from entropic_bound.experiments import tiny_settings
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.pipeline import configure
from entropic_bound.store import RunStore


def _tiny_e1() -> list[str]:
    out = []
    for key, value in tiny_settings("E1").items():
        text = f"[{','.join(map(str, value))}]" if isinstance(value, tuple) else str(value)
        out += ["--set", f"E1.{key}={text}"]
    return out


def test_two_draws_store_both_grids_resume_and_replicate_every_claim(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["reproduce", "--only", "E1", "--out", str(out), "--draws", "0,1", *_tiny_e1()]
    assert main([*argv, "--quiet"]) == 0
    exp = configure("E1", "quick", tiny_settings("E1"))
    ids = {d: {s.run_id for s in exp.drawn_specs(Seeds(exp.name, d))} for d in (0, 1)}
    with RunStore(out / "runs.sqlite", readonly=True) as store:
        assert store.finished_ids("E1") == ids[0] | ids[1] and not ids[0] & ids[1]
        info = store.experiment_info("E1")
        assert info["draws"] == [0, 1] and info["config"]["draw"] == 0 and "draws" not in info["config"]
        params = [r["params"] for r in store.records("E1")]
        assert sum(p.get("draw") == 1 for p in params) == len(ids[1]) == sum("draw" not in p for p in params)

    verdicts = json.loads((out / "verdicts.json").read_text())
    assert set(verdicts) == set(exp.claims)
    for v in verdicts.values():
        rep = v["replication"]
        assert rep["draws"] == [0, 1] and len(rep["verdicts"]) == 2
        assert rep["agree"] == (len(set(rep["verdicts"])) == 1)
        assert v["verdict"] == ("inconclusive" if rep.get("reason") else rep["pooled"]["verdict"])
    html = (out / "report.html").read_text()
    assert "<th>draws</th>" in html and "draw 0: " in html and "draw 1: " in html
    assert "decided on the pooled units of every draw" in html

    capsys.readouterr()
    assert main(argv) == 0  # resume: nothing is trained again
    err = capsys.readouterr().err
    total = len(ids[0]) + len(ids[1])
    assert f"E1: 0 run(s) trained, {total} already stored" in err

    # one draw from the same store: the report decides on that draw alone
    assert main(["report", "--out", str(out)]) == 0
    assert main(["run", "E1", "--out", str(out), "--quiet", "--set", "draw=1", *_tiny_e1()]) == 0
    single = json.loads((out / "verdicts.json").read_text())
    assert all(
        {k: v["replication"][k] for k in ("draws", "verdicts", "agree")}
        == {"draws": [1], "verdicts": [v["verdict"]], "agree": True}
        for v in single.values()
    )
    assert all(len(v["replication"].get("decisions", [None])) == 1 for v in single.values())
    assert all(v["standard"] is False and v["overrides"].get("draw") == 1 for v in single.values())
