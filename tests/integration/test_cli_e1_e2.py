"""E1 and E2 end to end through the CLI at a tiny scale."""

import json
import sqlite3

import pytest

from entropic_bound.cli import main


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, tiny_args):
    out = tmp_path_factory.mktemp("eb") / "out"
    rc = main(["reproduce", "--only", "E1,E2", "--out", str(out), "--quiet", *tiny_args("E1", "E2")])
    assert rc == 0
    return out


def test_output_folder_contract(tiny_run, read_outputs):
    verdicts, results = read_outputs(tiny_run)
    assert set(verdicts) == {"C1", "C2", "C3"}
    for v in verdicts.values():
        assert v["verdict"] in ("confirmed", "refuted", "inconclusive")
        assert v["criterion"] and isinstance(v["evidence"], dict) and v["scale"] == "quick"
        rob = v["robustness"]
        assert len(rob["settings"]) >= 2 and rob["settings"][0]["verdict"] == v["verdict"]
    # this tiny variant of E1 decides C1 and C2 as the quick defaults do
    assert verdicts["C1"]["verdict"] == "confirmed" and verdicts["C2"]["verdict"] == "confirmed"
    html = (tiny_run / "report.html").read_text()
    assert "Claim boundaries" in html and html.index("Claim boundaries") < html.index("E1 — ")
    e1 = results["E1"]
    assert set(e1["rank"]) == {1, 2, 3, 6} and (e1["status"] == "ok").all()
    assert {"excess", "closed_form", "ratio_to_closed_form", "finite_sample_optimum"} <= set(e1.columns)
    assert len(results["E2"]) == 2 * 2 * 2  # sample counts × optimisers × init scales
    figures = {p.name for p in (tiny_run / "figures").glob("*.png")}
    assert {
        "e1_excess_vs_rank.png",
        "e1_learned_spectra.png",
        "e2_effective_rank_over_training.png",
        "e2_final_spectra.png",
    } <= figures
    html = (tiny_run / "report.html").read_text()
    assert html.index("Verdicts") < html.index("E1 — ") and "src='figures/e1_excess_vs_rank.png'" in html


def test_trained_students_match_the_closed_form(tiny_run, read_outputs):
    _, results = read_outputs(tiny_run)
    e1 = results["E1"]
    below = e1[e1["rank"] < e1["task.r_star"]]
    assert ((below["ratio_to_closed_form"] > 0.8) & (below["ratio_to_closed_form"] < 1.3)).all()
    above = e1[e1["rank"] >= e1["task.r_star"]]
    assert (above["closed_form"] == 0).all() and (above["rel_excess"] < 0.05).all()


def test_store_records_provenance_and_rerun_skips(tiny_run, capsys, tiny_args):
    conn = sqlite3.connect(tiny_run / "runs.sqlite")
    rows = conn.execute("SELECT run_id, versions, git_commit, params FROM runs").fetchall()
    assert len({r[0] for r in rows}) == len(rows) > 0
    versions = json.loads(rows[0][1])
    assert "torch" in versions and "numpy" in versions
    assert "train.lr" in json.loads(rows[0][3])
    before = len(rows)
    rc = main(["reproduce", "--only", "E1,E2", "--out", str(tiny_run), *tiny_args("E1", "E2")])
    assert rc == 0
    out, err = capsys.readouterr()
    assert "0 run(s) trained" in err
    # the terminal ends with the verdict table (every claim, its verdict, one line of evidence), then the path
    verdicts = json.loads((tiny_run / "verdicts.json").read_text())
    assert out.index("C1") < out.index("C2") < out.index("C3")
    assert all(v["verdict"] in out for v in verdicts.values()) and "median" in out
    assert out.strip().splitlines()[-1] == str(tiny_run / "report.html")
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == before
    # tiny overrides: every verdict is marked non-standard, in the JSON, the table and the page
    assert all(v["standard"] is False and v["overrides"]["task.n"] == 8 for v in verdicts.values())
    assert (
        verdicts["C1"]["overrides"]["ranks"] == [1, 2, 3, 6] and "train.lr" not in verdicts["C1"]["overrides"]
    )
    assert "Non-default config" in out and "E1 (" in out and "E2 (" in out
    assert "Non-default config" in (tiny_run / "report.html").read_text()
    assert "report: writing verdicts.json and report.html" in err  # the report's steps are shown


def test_json_flag_prints_the_verdicts_in_claim_order(tiny_run, capsys, tiny_args):
    rc = main(["reproduce", "--only", "E1,E2", "--out", str(tiny_run), "--json", *tiny_args("E1", "E2")])
    assert rc == 0
    verdicts = json.loads(capsys.readouterr().out)
    assert list(verdicts) == ["C1", "C2", "C3"] and verdicts["C1"]["experiment"] == "E1"


def test_report_and_export_rebuild_from_the_store(tiny_run, tmp_path, read_outputs):
    out = tmp_path / "again"
    assert main(["report", "--store", str(tiny_run / "runs.sqlite"), "--out", str(out)]) == 0
    first, _ = read_outputs(tiny_run)
    second, _ = read_outputs(out)
    assert {k: v["verdict"] for k, v in first.items()} == {k: v["verdict"] for k, v in second.items()}
    assert (
        main(
            [
                "export",
                "--store",
                str(tiny_run / "runs.sqlite"),
                "--out",
                str(tmp_path / "x"),
                "--format",
                "parquet",
            ]
        )
        == 0
    )
    assert (tmp_path / "x" / "E1.parquet").is_file()


def test_list_shows_registries(capsys):
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    for name in (
        "E1",
        "E2",
        "fixed_operator",
        "softmax_teacher",
        "B0",
        "energy_effective_rank",
        "optimal_hard_threshold",
    ):
        assert name in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "E9"], "Unknown experiment 'E9'. Available:"),
        (["run", "E1", "--set", "train.lrr=1"], "Did you mean 'train.lr'"),
        (["run", "E1", "--set", "eps_floor=1e-3"], "Did you mean 'verdict.eps_floor'"),
        (["reproduce", "--only", "E7", "--set", "E7.checkpoints=minilm"], "Unknown config key 'checkpoints'"),
        (["run", "E1", "--set", "ranks=[40]"], "'ranks' parameter must hold ints in [1, 16]"),
        (["run", "E1", "--set", "task.sigma=-1"], "'task.sigma' parameter must be a float in [0, inf)"),
        (["run", "E1", "--set", "train.n_samples=abc"], "must be an int"),
        (["run", "E1", "--scale", "huge"], "invalid choice"),
        (["reproduce", "--only", "E1", "--set", "train.lr=1"], "must start with one of the experiments"),
        (["run", "E1", "--config", "/nonexistent.yaml"], "does not exist"),
        (["report", "--store", "/nonexistent/runs.sqlite"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, capsys, tmp_path):
    rc = main([*args, "--out", str(tmp_path / "o")] if args[0] in ("run", "reproduce") else args)
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_output_folder_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["run", "E1", "--out", str(target)]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_max_memory_splits_ensembles_without_changing_results(tmp_path, tiny_args, read_outputs):
    from entropic_bound.pipeline import configure

    exp = configure(
        "E1",
        "quick",
        {"task.r_stars": [2], "task.spectra": ["flat"], "ranks": [1, 2, 3, 6], "task.n": 8, "task.d": 4},
    )
    whole = exp.groups(exp.specs())
    estimate = exp.memory_estimate(exp.specs()[0])  # data and moments shared, then each model
    exp.max_memory_bytes = estimate.total(2)
    split = exp.groups(exp.specs())
    assert len(split) > len(whole) and max(len(g) for g in split) <= 2
    assert sorted(s.run_id for g in split for s in g) == sorted(s.run_id for g in whole for s in g)
    args = ["reproduce", "--only", "E1", "--quiet", *tiny_args("E1")]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b"), "--max-memory", "0.3"]) == 0
    a, b = read_outputs(tmp_path / "a")[1]["E1"], read_outputs(tmp_path / "b")[1]["E1"]
    assert (a["run_id"] == b["run_id"]).all()
    assert abs(a["excess"] - b["excess"]).max() < 1e-9 * a["excess"].abs().max()


def test_max_memory_below_one_model_fails_before_work(tmp_path, capsys):
    assert main(["run", "E1", "--out", str(tmp_path / "o"), "--max-memory", "0.000001"]) == 2
    err = capsys.readouterr().err
    assert "at least one model" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
    assert main(["run", "E1", "--out", str(tmp_path / "o"), "--max-memory", "-3"]) == 2
