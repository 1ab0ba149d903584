"""Draws: fresh random draws of an experiment, from one config key.

Every experiment's config has ``draw`` (an int ≥ 0, default 0, declared once in :class:`Drawn`).
Every seed an experiment derives — teacher, data, student init, corpus sampling, probes, batch
order, the bootstrap of a verdict's statistic — is salted by its draw (:func:`salted`,
:func:`drawn_seed`), and a run's params name its draw (:func:`draw_params`), so the runs of two
draws have different ids and can share one store.

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


def parse_draws(text: str) -> tuple[int, ...]:
    """``"0,1,2"`` → ``(0, 1, 2)``: distinct integers ≥ 0, at least one; else one line (exit 2)."""
    parts = [p.strip() for p in str(text).split(",")]
    expected = "comma-separated distinct integers >= 0, e.g. --draws 0,1,2"
    if not any(parts):
        raise UserInputError(f"The '--draws' option must be {expected}. Got {text!r} instead.")
    draws = []
    for p in parts:
        if not p.isdigit():
            raise UserInputError(f"The '--draws' option must be {expected}. Got {text!r} ({p!r}) instead.")
        draws.append(int(p))
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
