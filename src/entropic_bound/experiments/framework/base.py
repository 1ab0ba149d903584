"""What an experiment is: a typed config, the grid of runs it runs (:mod:`.grid`) and the claims it
decides from them (:mod:`.decision`).

An :class:`Experiment` instance is bound to one validated config. It is the sweep's executor
(:class:`~.grid.Grid`: specs, groups, costs, memory, device, ``execute``) and it analyses the
store's table into result tables, figures and verdicts (:class:`~.decision.Decision`).
"""

from __future__ import annotations

import re
from typing import Any

from ... import config as cfglib
from ...errors import ConfigError
from ...names import SCALES
from .decision import Decision
from .grid import Grid


class Experiment(Grid, Decision):
    """Base class; subclasses set ``title``, ``config_class`` and ``scale_settings`` (or override
    :meth:`default_config`), ``declared_claims`` (their ``claims.py`` ``CLAIMS``; ``claims`` lists their ids)
    and ``analysis_function``, and implement :meth:`specs` and :meth:`execute`.

    The name is the class name's ``E<k>`` prefix (``E1LinearSurrogate`` → ``E1``); it is the
    registry key (its lazy line in ``registry.py``), every run spec's ``experiment`` and the
    first part of every seed the experiment derives (:meth:`seed`).
    """

    name: str = ""
    title: str = ""
    config_class: type = object
    scale_settings: dict[str, dict[str, Any]] = {}  # scale → the fields that differ from config_class()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            match = re.match(r"E\d+", cls.__name__)
            cls.name = match.group(0) if match else cls.__name__

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfglib.validate(cfg)

    @property
    def name_with_title(self) -> str:
        return f"{self.name} — {self.title}"

    @classmethod
    def default_config(cls, scale: str) -> Any:
        """The embedded config for ``scale`` (``quick`` or ``paper``): ``config_class`` with that
        scale's :attr:`scale_settings`."""
        return cls.config_class(**cls.scale_settings.get(scale, {}))

    @classmethod
    def configure(cls, scale: str = "quick", overrides: Any = ()) -> Any:
        """Default config for ``scale`` with dotted overrides applied and validated."""
        if scale not in SCALES:
            raise ConfigError(
                f"The 'scale' parameter must be one of {', '.join(SCALES)}. Got {scale!r} instead."
            )
        cfg = cfglib.apply_overrides(cls.default_config(scale), overrides)
        return cfglib.validate(cfg)

    @classmethod
    def from_dict(cls, data: dict) -> Any:
        """Rebuild a stored config (as written by :func:`entropic_bound.config.to_dict`)."""
        flat = cfglib.flatten(data)
        return cfglib.validate(cfglib.apply_overrides(cls.default_config("quick"), flat))
