"""``export --format tensorboard|mlflow``: a real E1 store (plus an E7-shaped run) read back with
TensorBoard's EventAccumulator and MLflow's client; re-export and a missing package."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from entropic_bound.cli import main
from entropic_bound.config import flatten
from entropic_bound.pipeline import run_experiments
from entropic_bound.store import RunStore
from entropic_bound.sweep.spec import RunResult, RunSpec

pytest.importorskip("tensorboard", reason="the 'tensorboard' extra (in the test extra)")
pytest.importorskip("mlflow", reason="the 'mlflow' extra (in the test extra)")

TINY_E1 = {"task.r_stars": [2], "task.spectra": ["flat"], "ranks": [1, 2], "task.n": 8, "task.d": 4}
TINY_E1 |= {"train.steps": 40, "train.n_samples": 24}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    """A trained tiny E1 grid, and one E7-shaped diverged run with nested per-head curves."""
    out = tmp_path_factory.mktemp("store")
    run_experiments(["E1"], scale="quick", overrides={"E1": TINY_E1}, out=out)
    curves = {
        "step": [0, 10, 20],
        "val_loss": [4.0, 3.0, 2.5],
        "heads": {"sink_score": [[[0.1, 0.9]], [[0.2, 0.8]], [[0.3, 0.7]]]},
        "reason": "stopped: loss exceeded the divergence factor",
    }
    lm = RunResult(RunSpec("E7", {"corpus": "markov", "train": {"lr": 2e-3}}, 0), "diverged", {}, curves, 20)
    lm.metrics = {"val_loss": math.nan, "steps_run": 20.0}
    with RunStore(out / "runs.sqlite") as store:
        store.put(lm, provenance={"versions": {"torch": "x"}, "git_commit": "abc"})
    return out / "runs.sqlite"


def records(store_path: Path) -> list[dict]:
    with RunStore(store_path, readonly=True) as store:
        return store.records()


def export(store_path: Path, out: Path, fmt: str) -> int:
    return main(["export", "--store", str(store_path), "--format", fmt, "--out", str(out)])


def accumulator(folder: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_tensorboard_event_files_hold_curves_metrics_and_hparams(store_path, tmp_path, capsys):
    from tensorboard.plugins.hparams import metadata

    out = tmp_path / "tb"
    recs = records(store_path)
    assert export(store_path, out, "tensorboard") == 0
    assert f"{len(recs)} runs written" in capsys.readouterr().out
    assert sorted(p.name for p in out.glob("*/*")) == sorted(r["run_id"] for r in recs)
    for rec in (r for r in recs if r["experiment"] == "E1"):
        acc = accumulator(out / "E1" / rec["run_id"])
        loss = [(e.step, e.value) for e in acc.Scalars("loss")]
        assert [s for s, _ in loss] == rec["curves"]["step"]
        assert [v for _, v in loss] == pytest.approx(rec["curves"]["loss"], rel=1e-6)  # float32 events
        sv = [e.value for e in acc.Scalars("by_index/teacher_singular_values")]
        assert sv == pytest.approx(rec["curves"]["teacher_singular_values"], rel=1e-6)
        final = acc.Scalars("final/A_numerical_rank")
        assert [e.step for e in final] == [rec["curves"]["step"][-1]]
        assert final[0].value == rec["metrics"]["A_numerical_rank"]
        content = acc.PluginTagToContent("hparams")
        start = metadata.parse_session_start_info_plugin_data(content["_hparams_/session_start_info"])
        assert start.hparams["rank"].number_value == rec["params"]["rank"]
        assert start.hparams["train.lr"].number_value == pytest.approx(rec["params"]["train.lr"])
        assert start.hparams["status"].string_value == "ok"
        experiment = metadata.parse_experiment_plugin_data(content["_hparams_/experiment"])
        assert "final/A_numerical_rank" in {m.name.tag for m in experiment.metric_infos}


def test_tensorboard_nested_curves_text_and_nan(store_path, tmp_path):
    from tensorboard.util import tensor_util

    out = tmp_path / "tb"
    assert export(store_path, out, "tensorboard") == 0
    (folder,) = (out / "E7").iterdir()
    acc = accumulator(folder)
    assert [(e.step, round(e.value, 6)) for e in acc.Scalars("heads/sink_score/0/1")] == [
        (0, 0.9),
        (10, 0.8),
        (20, 0.7),
    ]
    assert math.isnan(acc.Scalars("final/val_loss")[0].value)
    (reason,) = acc.Tensors("reason/text_summary")
    assert tensor_util.make_ndarray(reason.tensor_proto).item().decode().startswith("stopped")


def test_tensorboard_export_resumes_without_duplicates(store_path, tmp_path, capsys):
    out = tmp_path / "tb"
    assert export(store_path, out, "tensorboard") == 0
    first = sorted(out.rglob("events.out.tfevents.*"))
    victim = first[0].parent
    partial = victim.with_name(f".partial-{victim.name}")
    victim.rename(partial)  # as if the export had been killed while writing this run
    (partial / "junk").write_text("half a run")
    capsys.readouterr()
    assert export(store_path, out, "tensorboard") == 0
    assert f"1 runs written, {len(first) - 1} already there" in capsys.readouterr().out
    again = sorted(out.rglob("events.out.tfevents.*"))
    assert len(again) == len(first) and not partial.exists()
    assert not list(out.rglob("junk"))


def mlflow_client(out: Path):
    from mlflow.tracking import MlflowClient

    from entropic_bound.export.mlflow_store import tracking_uri

    return MlflowClient(tracking_uri=tracking_uri(out))


def test_mlflow_store_holds_one_experiment_per_e_and_one_run_per_run(store_path, tmp_path, capsys):
    import json

    out = tmp_path / "ml"
    recs = records(store_path)
    assert export(store_path, out, "mlflow") == 0
    assert f"{len(recs)} runs written" in capsys.readouterr().out
    client = mlflow_client(out)
    for name in ("E1", "E7"):
        exp = client.get_experiment_by_name(name)
        runs = {r.info.run_name: r for r in client.search_runs([exp.experiment_id])}
        mine = [r for r in recs if r["experiment"] == name]
        assert sorted(runs) == sorted(r["run_id"] for r in mine)
        for rec in mine:
            run = runs[rec["run_id"]]
            assert run.info.status == "FINISHED" and run.data.tags["status"] == rec["status"]
            assert run.data.tags["git_commit"] == rec["git_commit"]
            for key, value in flatten(rec["params"]).items():
                assert run.data.params[key] == str(value)
            for key, value in rec["metrics"].items():
                got = run.data.metrics[key]
                assert (math.isnan(got) and math.isnan(value)) or got == value, key
            if name == "E1":
                history = client.get_metric_history(run.info.run_id, "curve/loss")
                assert sorted((m.step, m.value) for m in history) == list(
                    zip(rec["curves"]["step"], rec["curves"]["loss"])
                )
            local = client.download_artifacts(run.info.run_id, "curves.json", str(tmp_path))
            assert json.loads(Path(local).read_text()) == rec["curves"]
    e7 = client.search_runs([client.get_experiment_by_name("E7").experiment_id])[0]
    assert [m.value for m in client.get_metric_history(e7.info.run_id, "curve/heads/sink_score/0/0")] == [
        0.1,
        0.2,
        0.3,
    ]
    assert [m.value for m in client.get_metric_history(e7.info.run_id, "curve/val_loss")] == [4.0, 3.0, 2.5]
    assert e7.data.tags["curve.reason"].startswith("stopped")


def test_mlflow_export_resumes_an_interrupted_run_and_skips_finished_ones(store_path, tmp_path, capsys):
    from entropic_bound.export.mlflow_store import RUN_ID_TAG

    out = tmp_path / "ml"
    assert export(store_path, out, "mlflow") == 0
    client = mlflow_client(out)
    exp = client.get_experiment_by_name("E1")
    victim = client.search_runs([exp.experiment_id])[0]
    client.delete_run(victim.info.run_id)  # as if it had never been written ...
    stale = client.create_run(exp.experiment_id, tags={RUN_ID_TAG: victim.info.run_name})  # ... or half
    capsys.readouterr()
    assert export(store_path, out, "mlflow") == 0
    assert f"1 runs written, {len(records(store_path)) - 1} already there" in capsys.readouterr().out
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == len(records(store_path)) - 1 and all(r.info.status == "FINISHED" for r in runs)
    assert stale.info.run_id not in {r.info.run_id for r in runs}


@pytest.mark.parametrize(
    "fmt,module,extra",
    [
        ("tensorboard", "tensorboard", "tensorboard"),
        ("mlflow", "mlflow", "mlflow"),
        ("parquet", "pyarrow", "parquet"),
    ],
)
def test_a_missing_optional_package_names_the_extra(
    fmt, module, extra, store_path, tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, module, None)  # import of the package now fails
    assert export(store_path, tmp_path / "o", fmt) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"pip install 'entropic-bound[{extra}]'" in err
    assert not (tmp_path / "o").exists()
