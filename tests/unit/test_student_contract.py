"""The contract every registered student keeps, checked for each name in ``STUDENTS``.

Shapes of the forward pass; padded factor columns (past a member's rank) get exactly zero
gradient, so ranks differ by zero padding under GD and Adam; every member equals the plain
single-model module of ``models/reference.py`` built from its own (trimmed) weights.
"""

from __future__ import annotations

import pytest
import torch

from entropic_bound.models.base import MemberSpec
from entropic_bound.models.reference import member_module
from entropic_bound.registry import STUDENTS

F64 = torch.float64
N, D, D_V, B = 6, 8, 4, 5
MEMBERS = [MemberSpec(rank=r, init_scale=0.4, seed=s) for s, r in enumerate([2, 5, 3])]


def build(name: str, v_known: bool = False):
    V = torch.linalg.qr(torch.randn(D, D, generator=torch.Generator().manual_seed(9), dtype=F64))[0][:, :D_V]
    return STUDENTS.build(
        name, MEMBERS, n=N, d=D, d_v=D_V, V_known=V if v_known else None, dtype=F64, n_heads=2
    )


def inputs() -> torch.Tensor:
    return torch.randn(B, N, D, generator=torch.Generator().manual_seed(1), dtype=F64)


def test_the_registry_entry_is_all_an_experiment_knows_of_a_student():
    """Place on the ladder, plot style, full rank and options come from the student; E3's ladder,
    positional rungs and figures read them (a new rung needs its module and its registry line)."""
    from entropic_bound.experiments.e3_ladder.config import POSITIONAL_RUNGS, RUNGS
    from entropic_bound.experiments.e3_ladder.plots import style

    classes = {name: STUDENTS.get(name) for name in STUDENTS}
    on_ladder = [name for name, cls in classes.items() if cls.ladder_step >= 0]
    steps = [classes[name].ladder_step for name in on_ladder]
    assert len(set(steps)) == len(steps) and RUNGS == tuple(
        sorted(on_ladder, key=lambda s: classes[s].ladder_step)
    )
    assert POSITIONAL_RUNGS == tuple(name for name in RUNGS if classes[name].supports_positional)
    looks = [style(name) for name in STUDENTS]
    assert len({(look.colour, look.marker, look.offset) for look in looks}) == len(looks)
    for cls in classes.values():
        assert cls.full_rank(N, D) == {"n": N, "d": D}[cls.rank_bound[0]]
    assert style("not a student").marker == "o"


@pytest.mark.parametrize("name", STUDENTS.names())
def test_build_ignores_keywords_the_student_does_not_declare(name):
    student = build(name)
    assert student.rung == name and student.n_models == len(MEMBERS)
    assert set(student.accepts) >= {"n", "d", "d_v", "V_known", "dtype"}


@pytest.mark.parametrize("name", STUDENTS.names())
@pytest.mark.parametrize("v_known", [False, True])
def test_forward_shape(name, v_known):
    Y = build(name, v_known)(inputs())
    assert Y.shape == (len(MEMBERS), B, N, D_V) and Y.dtype == F64


@pytest.mark.parametrize("name", STUDENTS.names())
def test_padded_factor_columns_get_zero_gradient(name):
    student = build(name)
    Y = student(inputs())
    target = torch.randn(Y.shape, generator=torch.Generator().manual_seed(2), dtype=F64)
    (Y - target).pow(2).mean().backward()
    for factor in student.factors:
        grad = getattr(student, factor).grad  # (M, ..., r_max)
        for m, spec in enumerate(MEMBERS):
            assert torch.count_nonzero(grad[m, ..., spec.rank :]) == 0, (factor, m)
            assert torch.count_nonzero(grad[m, ..., : spec.rank]) > 0, (factor, m)


@pytest.mark.parametrize("name", STUDENTS.names())
@pytest.mark.parametrize("v_known", [False, True])
def test_every_member_equals_the_reference_module(name, v_known):
    student, X = build(name, v_known), inputs()
    Y = student(X).detach()
    for m in range(len(MEMBERS)):
        torch.testing.assert_close(Y[m], member_module(student, m)(X).detach(), rtol=1e-10, atol=1e-12)
