"""``list``: every registered experiment, task, student and estimator."""

from __future__ import annotations

import re

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..registry import ESTIMATORS, EXPERIMENTS, PREDICTORS, STUDENTS, TASKS


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list experiments, tasks, students and rank estimators")
    p.set_defaults(func=_list)


_ROLE = re.compile(r":(?:math|class|func|meth|data|mod|attr):`([^`]*)`")


def plain(text: str) -> str:
    """A reStructuredText summary as plain text: ``code``, `x` and :math:`x` lose their markup."""
    text = _ROLE.sub(lambda m: m.group(1).lstrip("~"), text)
    return re.sub(r"``([^`]*)``|`([^`]*)`", lambda m: m.group(1) or m.group(2) or "", text)


def _list(args) -> int:
    console = Console(width=120)
    for title, registry in (
        ("experiments", EXPERIMENTS),
        ("tasks", TASKS),
        ("students", STUDENTS),
        ("estimators", ESTIMATORS),
        ("predictors", PREDICTORS),
    ):
        table = Table(title=title, title_justify="left", show_header=False)
        for name in registry.names():
            table.add_row(name, Text(plain(registry.summary(name))))  # experiment summaries name their claims
        console.print(table)
    return 0
