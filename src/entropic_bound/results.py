"""Run specs and results: what one run is, and what it produced (a leaf: the store and the sweep
both import it, neither through the other).

A :class:`RunSpec` is identified by a content hash of ``(experiment, params, seed)``::

    run_id = sha256(json.dumps({"experiment", "params", "seed"}, sort_keys=True,
                               separators=(",", ":")))[:16]

so the same run always has the same id, on any machine, and a changed learning rate, width or
seed is a different run. Floats hash through their shortest round-trip ``repr`` (``0.1`` → ``0.1``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError

STATUSES = ("ok", "diverged")


def _plain(value: Any) -> Any:
    """``json.dumps`` hook: numpy/torch scalars → Python scalars, arrays → lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def canonical_json(obj: Any, *, allow_nan: bool = False) -> str:
    """Sorted-key JSON without spaces, the form run ids are hashed from."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=allow_nan, default=_plain)


def _normalise_params(params: Any) -> dict:
    """A JSON round trip of ``params``: tuples become lists, numpy scalars Python scalars."""
    if not isinstance(params, Mapping):
        raise ConfigError(f"The 'params' of a run spec must be a dict. Got {type(params).__name__} instead.")
    try:
        return json.loads(canonical_json(dict(params)))
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"The 'params' of a run spec must be finite JSON scalars, lists or dicts: {exc}."
        ) from None


@dataclass(frozen=True, eq=False)
class RunSpec:
    """One run: an experiment name, its parameters (JSON-able), a seed and the draw it belongs to.

    Equality and hashing go through :attr:`run_id`, so specs work as dict keys and set members.
    ``params`` is normalised on construction (a private copy, tuples turned into lists). ``draw``
    (an int >= 0) is the experiment's random draw: a ``"draw"`` in ``params`` (as a store's records
    hold it) is moved to it. Draw 0 hashes nothing more, so its ids are those of a run without draws;
    draw ``d > 0`` hashes ``{"draw": d}`` among the params (:meth:`key`).
    """

    experiment: str
    params: dict
    seed: int
    draw: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.experiment, str) or not self.experiment:
            raise ConfigError(
                f"The 'experiment' of a run spec must be a non-empty str. Got {self.experiment!r} instead."
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            if not (hasattr(self.seed, "item") and isinstance(self.seed.item(), int)):
                raise ConfigError(f"The 'seed' of a run spec must be an int. Got {self.seed!r} instead.")
            object.__setattr__(self, "seed", int(self.seed.item()))
        params = _normalise_params(self.params)
        draw = params.pop("draw", self.draw)
        if hasattr(draw, "__index__") and not isinstance(draw, bool):
            draw = int(draw)  # a numpy integer
        if not isinstance(draw, int) or isinstance(draw, bool) or draw < 0:
            raise ConfigError(f"The 'draw' of a run spec must be an int >= 0. Got {draw!r} instead.")
        if self.draw and draw != self.draw:
            raise ConfigError(f"A run spec has two draws, {self.draw} and {draw!r} in its params; give one.")
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "draw", draw)

    def key(self) -> dict:
        """What the run id hashes: the params with ``{"draw": d}`` for a draw ``d > 0`` (the form a
        store keeps them in)."""
        params = {**self.params, "draw": self.draw} if self.draw else self.params
        return {"experiment": self.experiment, "params": params, "seed": self.seed}

    @property
    def run_id(self) -> str:
        """First 16 hex digits of the sha256 of the canonical JSON of :meth:`key`."""
        return hashlib.sha256(canonical_json(self.key()).encode("utf-8")).hexdigest()[:16]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunSpec):
            return NotImplemented
        return canonical_json(self.key()) == canonical_json(other.key())

    def __hash__(self) -> int:
        return hash(self.run_id)


@dataclass
class RunResult:
    """What a run produced.

    ``metrics`` maps names to floats (NaN/inf allowed: a diverged run has them); ``curves`` is
    JSON-able (lists of numbers, e.g. a loss curve); ``diverged_step`` is the step at which a
    ``"diverged"`` run was stopped.
    """

    spec: RunSpec
    status: str
    metrics: dict = field(default_factory=dict)
    curves: dict = field(default_factory=dict)
    diverged_step: int | None = None
    wall_s: float = 0.0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(
                f"The 'status' of a run result must be one of {STATUSES}. Got {self.status!r} instead."
            )
        self.metrics = {str(k): float(v) for k, v in self.metrics.items()}
        if self.diverged_step is not None:
            self.diverged_step = int(self.diverged_step)
        self.wall_s = float(self.wall_s)
