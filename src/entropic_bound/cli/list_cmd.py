"""``list``: every registered experiment, task, student and estimator."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..registry import ESTIMATORS, EXPERIMENTS, STUDENTS, TASKS


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list experiments, tasks, students and rank estimators")
    p.set_defaults(func=_list)


def _list(args) -> int:
    from .. import experiments, models, spectra, tasks  # noqa: F401  (importing registers the names)

    console = Console(width=120)
    for title, registry in (
        ("experiments", EXPERIMENTS),
        ("tasks", TASKS),
        ("students", STUDENTS),
        ("estimators", ESTIMATORS),
    ):
        table = Table(title=title, title_justify="left", show_header=False)
        for name in registry.names():
            table.add_row(name, registry.summary(name))  # experiment summaries name their claims
        console.print(table)
    try:
        from ..predict import PREDICTORS
    except ImportError:
        return 0
    table = Table(title="predictors", title_justify="left", show_header=False)
    for name in PREDICTORS.names():
        table.add_row(name, PREDICTORS.summary(name))
    console.print(table)
    return 0
