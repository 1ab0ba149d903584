"""The teachers E4 and E5 share, as their configs declare them: one per (kind, r*, spectrum), the two
kinds sharing K*, V* and X (:mod:`.attention_teachers` draws them). A module without torch, so that
importing a config imports no teacher."""

from __future__ import annotations

from dataclasses import dataclass

from ...config import param
from ...errors import ConfigError
from ...tasks.names import ATTENTION_TEACHERS, SPECTRA
from ...validation import check_ranks

TEACHER_KINDS = tuple(ATTENTION_TEACHERS)


@dataclass(frozen=True)
class AttentionTask:
    """E4's and E5's teachers: one per (kind, r*, spectrum), the two kinds sharing K*, V* and X."""

    n: int = param(16, ge=2, le=512, doc="tokens per sequence (keep n <= d for the linear teacher)")
    d: int = param(32, ge=2, le=512, doc="input features (= d_v)")
    teachers: tuple[str, ...] = param(TEACHER_KINDS, choices=TEACHER_KINDS)
    r_stars: tuple[int, ...] = param((2, 4), ge=1, doc="ranks of K*")
    spectra: tuple[str, ...] = param(("flat", "geometric"), choices=SPECTRA)
    decay: float = param(0.25, gt=0.0, le=1.0, doc="geometric spectra: s_r*/s_1")
    c: float = param(2.0, gt=0.0, doc="logit scale: ||K*||_F = c sqrt(d)")
    sigma: float = param(0.1, ge=0.0, doc="noise standard deviation (floor sigma^2)")

    def check(self) -> None:
        check_ranks("task.r_stars", self.r_stars, self.d, "task.d", nonempty=True)
        if not self.teachers or not self.spectra:
            raise ConfigError(
                "The 'task.teachers' and 'task.spectra' parameters must be non-empty. Got () instead."
            )


def attention_task_params(task: AttentionTask) -> dict:
    """The ``task.*`` params E4 and E5 share (all but ``task.r_star`` and ``task.spectrum``, swept)."""
    return {
        "task.n": task.n,
        "task.d": task.d,
        "task.decay": task.decay,
        "task.c": task.c,
        "task.sigma": task.sigma,
    }
