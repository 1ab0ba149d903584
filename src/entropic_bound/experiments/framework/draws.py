"""Draws: fresh random draws of an experiment, and the seeds each draw derives.

A draw is an int >= 0: ``--draws 0,1`` on the command line (or the ``draw`` key every config
inherits from :class:`Drawn`, ``--set draw=1``). It travels as data: each run spec carries it
(:attr:`~entropic_bound.results.RunSpec.draw`, hashed into the run id for a draw > 0, so the runs
of two draws can share one store), and every seed an experiment derives — teacher, data, student
init, corpus sampling, probes, batch order, the bootstrap of a verdict's statistic — comes from one
:class:`Seeds` object ``(experiment, draw)``.

Draw 0 adds nothing: its params, run ids and seeds are those of a config that has no draw at all,
so every store, run id and number made before draws existed is draw 0's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ...config import param
from ...errors import UserInputError
from ...names import SCALE_DRAWS


@dataclass(frozen=True)
class Drawn:
    """The base of every experiment's config: the draw every derived seed comes from."""

    draw: int = param(
        0, ge=0, doc="random draw: every derived seed (teacher, data, init, corpus, probes) comes from it"
    )


def draw_params(draw: int) -> dict:
    """The params a run of ``draw`` adds to its spec: none for draw 0 (its run ids stay unsalted)."""
    return {"draw": int(draw)} if draw else {}


def salted(draw: int, *parts: Any) -> tuple:
    """``parts`` of a seed derivation with ``draw`` appended (draw 0: ``parts`` unchanged)."""
    return (*parts, ("draw", int(draw))) if draw else parts


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed derived from ``parts`` (stable across processes and machines)."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def drawn_seed(draw: int, seed: int) -> int:
    """An integer seed given in a config (a corpus seed, a bootstrap seed) moved to ``draw``
    (draw 0: ``seed`` itself)."""
    if not draw:
        return seed
    return derive_seed("draw", int(seed), int(draw))


@dataclass(frozen=True)
class Seeds:
    """Every seed of one draw of one experiment, derived in one place.

    ``Seeds("E1", 0)`` gives the seeds an experiment had before draws existed; another draw moves
    every one of them (its derivation's parts end with ``("draw", d)``)."""

    experiment: str
    draw: int = 0

    def seed(self, purpose: str, *parts: Any) -> int:
        """The seed for ``purpose`` (``"teacher"``, ``"data"``, ``"init"`` …) of ``parts``."""
        return derive_seed(f"{self.experiment}/{purpose}", *salted(self.draw, *parts))

    def of_run(self, purpose: str, run_id: str) -> int:
        """The seed for ``purpose`` of one run: not salted again, its run id already names the draw."""
        return derive_seed(f"{self.experiment}/{purpose}", run_id)

    def moved(self, seed: int) -> int:
        """An integer seed given in a config (a corpus seed, a bootstrap seed) moved to this draw."""
        return drawn_seed(self.draw, seed)

    def window(self, name: str) -> int | None:
        """The seed of which window of a finite text ``name`` this draw reads; None for draw 0 (the
        text's own start)."""
        return derive_seed(f"{self.experiment}/window", name, self.draw) if self.draw else None


def parse_draws(text: str) -> tuple[int, ...]:
    """``"0,1,2"`` or ``"0-2"`` → ``(0, 1, 2)``: distinct integers ≥ 0, at least one; else one line (exit 2)."""
    parts = [p.strip() for p in str(text).split(",")]
    expected = "comma-separated distinct integers >= 0 or ranges a-b, e.g. --draws 0,1,2 or --draws 0-9"
    if not any(parts):
        raise UserInputError(f"The '--draws' option must be {expected}. Got {text!r} instead.")
    draws: list[int] = []
    for p in parts:
        low, dash, high = p.partition("-")
        if not low.isdigit() or (dash and (not high.isdigit() or int(high) < int(low))):
            raise UserInputError(f"The '--draws' option must be {expected}. Got {text!r} ({p!r}) instead.")
        draws.extend(range(int(low), int(high or low) + 1))
    if len(set(draws)) != len(draws):
        raise UserInputError(
            f"The '--draws' option must be {expected}; each draw once. Got {text!r} instead."
        )
    return tuple(draws)


def draws_to_run(scale: str, config_draw: int, draws, draw_overridden: bool) -> tuple[int, ...]:
    """The draws a command trains: ``draws`` when given; else the one draw an override set
    (``--set E1.draw=3``); else the scale's default (:data:`~entropic_bound.names.SCALE_DRAWS`:
    one draw at quick, two at paper, so the paper scale decides on two draws)."""
    if draws is not None:
        if draw_overridden:
            raise UserInputError(
                "Give the draws one way: --draws 0,1 or a 'draw' override (--set draw=1), not both."
            )
        return tuple(int(d) for d in draws)
    return (int(config_draw),) if draw_overridden else SCALE_DRAWS[scale]
