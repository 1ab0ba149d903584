"""``list``: every registered experiment, task, student and estimator."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .. import experiments as _experiments  # noqa: F401  (registers experiments)
from .. import models as _models  # noqa: F401
from .. import spectra as _spectra  # noqa: F401
from .. import tasks as _tasks  # noqa: F401
from ..registry import ESTIMATORS, EXPERIMENTS, STUDENTS, TASKS


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list experiments, tasks, students and rank estimators")
    p.set_defaults(func=_list)


def _list(args) -> int:
    console = Console(width=120)
    for title, registry in (("experiments", EXPERIMENTS), ("tasks", TASKS), ("students", STUDENTS),
                            ("estimators", ESTIMATORS)):
        table = Table(title=title, title_justify="left", show_header=False)
        for name in registry.names():
            extra = ""
            obj = registry.get(name)
            if registry is EXPERIMENTS:
                extra = f" [claims {', '.join(obj.claims)}]"
            table.add_row(name, registry.summary(name) + extra)
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
