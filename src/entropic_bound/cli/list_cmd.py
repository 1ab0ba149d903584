"""``list``: every registered experiment, task, student and estimator."""

from __future__ import annotations

import re

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..registry import ESTIMATORS, EXPERIMENTS, PREDICTORS, STUDENTS, TASKS


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list experiments, tasks, students and rank estimators")
    p.add_argument(
        "experiment",
        nargs="?",
        help="an experiment (e.g. E7): its config keys, defaults, ranges and meanings",
    )
    p.set_defaults(func=_list)


_ROLE = re.compile(r":(?:math|class|func|meth|data|mod|attr):`([^`]*)`")


def plain(text: str) -> str:
    """A reStructuredText summary as plain text: ``code``, `x` and :math:`x` lose their markup."""
    text = _ROLE.sub(lambda m: m.group(1).lstrip("~"), text)
    return re.sub(r"``([^`]*)``|`([^`]*)`", lambda m: m.group(1) or m.group(2) or "", text)


def _list(args) -> int:
    console = Console(width=120)
    if args.experiment:
        return _list_config(console, args.experiment)
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


def _list_config(console: Console, name: str) -> int:
    """One line a key (greppable): ``key = default  allowed  — meaning``."""
    from .config_listing import config_rows

    console.print(f"{name} config keys (--set KEY=VALUE; defaults of --scale quick):", highlight=False)
    for key, default, allowed, meaning in config_rows(name):
        parts = [f"{key} = {default}", allowed and f"  {allowed}", meaning and f"  — {plain(meaning)}"]
        console.print(Text("".join(p for p in parts if p)), soft_wrap=True)
    return 0
