"""Exceptions for the user's mistakes.

Every error a user can cause derives from :class:`UserInputError`; the CLI prints its message as
one line and exits with status 2. Internal invariants use ``assert``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserInputError(ValueError):
    """A mistake in what the user asked for (bad config, bad file, bad name)."""


class ConfigError(UserInputError):
    """A config key is unknown, mistyped or out of range."""


class UnknownNameError(UserInputError, KeyError):
    """A registry lookup missed."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class DataError(UserInputError):
    """An input file or array is missing, malformed or not finite."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return `` Did you mean 'x'?`` for the closest choice, or an empty string."""
    by_lower = {str(c).lower(): str(c) for c in choices}
    close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=0.6)
    return f" Did you mean '{by_lower[close[0]]}'?" if close else ""
