"""Argument checks for code paths outside the configs (model constructors, closed forms, tasks).

Each raises a :class:`~entropic_bound.errors.ConfigError` (a ``UserInputError``) built by
:func:`entropic_bound.config.config_error`, so every message follows the one template::

    The 'rank' parameter must be an int in [1, 8] (the operator is n×n with n=8). Got 9 instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .config import config_error
from .errors import ConfigError


def check_rank(name: str, value: object, upper: int, *, lower: int = 1, what: str = "") -> int:
    """``value`` as an int in ``[lower, upper]`` (``what`` says where the bound comes from)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lower <= value <= upper:
        raise config_error(name, f"an int in [{lower}, {upper}]" + (f" ({what})" if what else ""), value)
    return int(value)


def check_positive_int(name: str, value: object) -> int:
    """``value`` as an int ``>= 1``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise config_error(name, "an int in [1, inf)", value)
    return int(value)


def check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    """``value`` is one of ``choices``."""
    if value not in choices:
        raise config_error(name, "one of " + ", ".join(repr(c) for c in choices), value)


def check_ranks(name: str, values: Sequence[int], upper: int, what: str, *, nonempty: bool = False) -> None:
    """Every rank in a config's list ``values`` is at most ``upper`` (``what`` names the bound, e.g.
    ``"task.n"``); ``nonempty``: the list holds at least one."""
    bad = [v for v in values if v > upper]
    if bad:
        raise ConfigError(
            f"The '{name}' parameter must hold ints in [1, {upper}] ({what}). Got {bad[0]} instead."
        )
    if nonempty and not values:
        raise ConfigError(f"The '{name}' parameter must hold at least one int. Got () instead.")
