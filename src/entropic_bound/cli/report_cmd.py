"""``report`` and ``export``: rebuild the report folder, or export tables and tracker runs, from a run store."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserInputError
from ..export import FORMATS
from ..names import DEFAULT_OUT, STORE_NAME
from .run_cmd import add_force


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report", help="rewrite report.html, verdicts.json, results/ and figures/ from a store"
    )
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--store", default=None, help="run store file (default OUT/runs.sqlite)")
    p.add_argument("--only", default=None, help="comma-separated experiments")
    add_force(p)
    p.set_defaults(func=_report)
    e = sub.add_parser(
        "export", help="export the store: tables (CSV, Parquet) or runs with curves (TensorBoard, MLflow)"
    )
    e.add_argument("--store", default=str(Path(DEFAULT_OUT) / STORE_NAME), help="run store file")
    e.add_argument(
        "--out", default=None, help="folder for the exported files (default: 'export' beside the store)"
    )
    e.add_argument(
        "--format",
        default="csv",
        choices=FORMATS,
        help="csv / parquet: one table per experiment; tensorboard: event files per run; "
        "mlflow: a local MLflow store (one experiment per E). Default csv",
    )
    add_force(e)
    e.set_defaults(func=_export)


def _report(args) -> int:
    from ..pipeline import report
    from .progress import report_steps

    only = [n.strip() for n in args.only.split(",")] if args.only else None
    print(report(out=args.out, store=args.store, only=only, steps=report_steps(False), force=args.force))
    return 0


def _export(args) -> int:
    if not Path(args.store).is_file():
        raise UserInputError(f"Run store '{args.store}' does not exist; pass an existing file with --store.")
    from ..export import export_store
    from ..store.run_store import RunStore

    out = args.out or Path(args.store).parent / "export"  # beside the store, wherever it is
    with RunStore(args.store, readonly=True) as store:
        for line in export_store(store, out, fmt=args.format, force=args.force):
            print(line)
    return 0
