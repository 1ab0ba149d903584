"""``export --format mlflow``: a local MLflow tracking store in ``OUT``, one experiment per E.

MLflow's plain-folder backend is in maintenance mode and refused by default since MLflow 3, so the
store is MLflow's local database backend: ``OUT/mlflow.db`` (SQLite) with artifacts under
``OUT/artifacts/<experiment>/``. Read it with ``mlflow ui --backend-store-uri sqlite:///OUT/mlflow.db``
or ``MlflowClient(tracking_uri=tracking_uri(OUT))``.

Each stored run becomes one MLflow run named by its run id: every flattened parameter as a param,
the final metrics as metrics under their own names (the runs table's columns), every training curve
as the metric history ``curve/<name>`` over steps (a prefix, since a curve and a final metric may
share a name: E7's ``val_loss``), 1-D curves not over steps as ``by_index/<name>`` over their index,
status, git commit and package versions as tags, and the full stored curves as the artifact
``curves.json``. An export killed mid-run leaves
that run unfinished; the next export deletes it and writes it again, and skips finished ones.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from .runs import RunView

RUN_ID_TAG = "entropic_bound.run_id"
_BATCH = 1000  # MLflow's limit of metrics per log_batch call (params: 100, tags: 100)


def tracking_uri(out: Path) -> str:
    return f"sqlite:///{(Path(out) / 'mlflow.db').resolve()}"


def _chunks(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _experiment_id(client, name: str, out: Path) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        return found.experiment_id
    location = (out / "artifacts" / name).resolve().as_uri()
    return client.create_experiment(name, artifact_location=location)


def _finished_runs(client, experiment_id: str) -> set[str]:
    """Store run ids already exported completely; unfinished ones (a killed export) are deleted."""
    done = set()
    for run in client.search_runs([experiment_id], max_results=50_000):
        stored_id = run.data.tags.get(RUN_ID_TAG)
        if run.info.status == "FINISHED":
            done.add(stored_id)
        else:
            client.delete_run(run.info.run_id)
    return done


def _write_run(client, experiment_id: str, view: RunView) -> None:
    from mlflow.entities import Metric, Param

    t = view.created_ms
    tags = {RUN_ID_TAG: view.run_id, "status": view.status, **view.provenance}
    tags.update({f"curve.{name}": text for name, text in view.text.items()})
    run = client.create_run(experiment_id, start_time=t, tags=tags, run_name=view.run_id)
    rid = run.info.run_id
    params = [Param(k, str(v)) for k, v in view.hparams.items()]
    metrics = [Metric(k, v, t, view.last_step) for k, v in view.metrics.items()]
    for name, points in view.series.items():
        metrics += [Metric(f"curve/{name}", value, t, step) for step, value in points]
    for name, points in view.by_index.items():
        metrics += [Metric(name, value, t, index) for index, value in points]
    for chunk in _chunks(params, 100):
        client.log_batch(rid, params=chunk)
    for chunk in _chunks(metrics, _BATCH):
        client.log_batch(rid, metrics=chunk)
    client.log_dict(rid, view.curves, "curves.json")
    client.set_terminated(rid, "FINISHED", end_time=t)


def export_mlflow(views: Iterable[RunView], out: Path) -> tuple[int, int]:
    """Write every run not yet finished in the store at ``out``; returns (written, already there)."""
    from mlflow.tracking import MlflowClient

    out.mkdir(parents=True, exist_ok=True)
    for name in ("mlflow", "alembic"):  # schema-creation chatter on first use
        logging.getLogger(name).setLevel(logging.WARNING)
    written = skipped = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation notices of MLflow's own dependencies
        client = MlflowClient(tracking_uri=tracking_uri(out))
        experiments: dict[str, tuple[str, set[str]]] = {}
        for view in views:
            if view.experiment not in experiments:
                eid = _experiment_id(client, view.experiment, out)
                experiments[view.experiment] = (eid, _finished_runs(client, eid))
            eid, done = experiments[view.experiment]
            if view.run_id in done:
                skipped += 1
                continue
            _write_run(client, eid, view)
            written += 1
    return written, skipped
