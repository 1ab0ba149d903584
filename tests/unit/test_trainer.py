"""The ensemble trainer against per-model loops, plus stopping and divergence rules."""

import numpy as np
import pytest
import torch

from entropic_bound.models import LinearOperatorEnsemble, MemberSpec, member_generator
from entropic_bound.training import (
    FixedData,
    MomentData,
    TrainConfig,
    checkpoint_steps,
    per_model_loss,
    train_ensemble,
)

N_TOK, D = 8, 4


def _data(seed=0, N=24, sigma=0.1):
    g = torch.Generator().manual_seed(seed)
    U = torch.linalg.qr(torch.randn(N_TOK, N_TOK, generator=g, dtype=torch.float64))[0]
    A = U[:, :2] @ U[:, :2].T * 2.0
    V = torch.linalg.qr(torch.randn(D, D, generator=g, dtype=torch.float64))[0]
    X = torch.randn(N, N_TOK, D, generator=g, dtype=torch.float64)
    Y = A @ X @ V + sigma * torch.randn(N, N_TOK, D, generator=g, dtype=torch.float64)
    return X, Y, V


def _per_model_loop(member: MemberSpec, X, Y, V, cfg: TrainConfig):
    """What a researcher would write: one model, one optimiser, plain PyTorch."""
    g = member_generator(member.seed)
    P = (
        torch.randn(N_TOK, member.rank, generator=g, dtype=torch.float64)
        .mul_(member.init_scale)
        .requires_grad_()
    )
    Q = (
        torch.randn(N_TOK, member.rank, generator=g, dtype=torch.float64)
        .mul_(member.init_scale)
        .requires_grad_()
    )
    opt = (
        torch.optim.Adam([P, Q], lr=cfg.lr) if cfg.optimizer == "adam" else torch.optim.SGD([P, Q], lr=cfg.lr)
    )
    for _ in range(cfg.steps):
        loss = ((P @ Q.T @ X @ V - Y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (P @ Q.T).detach()


@pytest.mark.parametrize("optimizer, lr", [("adam", 1e-2), ("gd", 0.2)])
def test_ensemble_matches_per_model_loop(optimizer, lr):
    X, Y, V = _data()
    members = [MemberSpec(1, 0.3, 11), MemberSpec(3, 0.1, 12), MemberSpec(N_TOK, 0.05, 13)]
    cfg = TrainConfig(optimizer=optimizer, lr=lr, steps=60, checkpoints=4)
    model = LinearOperatorEnsemble(members, n=N_TOK, d=D, d_v=D, V_known=V)
    train_ensemble(model, FixedData(X, Y), cfg)
    for m, member in enumerate(members):
        expected = _per_model_loop(member, X, Y, V, cfg)
        torch.testing.assert_close(model.A[m].detach(), expected, rtol=1e-9, atol=1e-11)


def test_padded_columns_stay_zero_and_members_do_not_depend_on_the_ensemble():
    X, Y, V = _data(1)
    members = [MemberSpec(1, 0.2, 1), MemberSpec(5, 0.2, 2)]
    cfg = TrainConfig(optimizer="adam", lr=1e-2, steps=40)
    big = LinearOperatorEnsemble(members, n=N_TOK, d=D, d_v=D)
    train_ensemble(big, MomentData.from_data(X, Y), cfg)
    assert torch.all(big.P[0, :, 1:] == 0) and torch.all(big.Q[0, :, 1:] == 0)
    alone = LinearOperatorEnsemble(members[:1], n=N_TOK, d=D, d_v=D)
    train_ensemble(alone, MomentData.from_data(X, Y), cfg)
    torch.testing.assert_close(big.A[0], alone.A[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("v_known", [True, False])
def test_moment_loss_equals_direct_loss_and_gradient(v_known):
    X, Y, V = _data(2, N=37)
    model = LinearOperatorEnsemble(
        [MemberSpec(r, 0.5, r) for r in (1, 4, 8)], n=N_TOK, d=D, d_v=D, V_known=V if v_known else None
    )
    direct = per_model_loss(model, X, Y)
    g_direct = torch.autograd.grad(direct.sum(), [model.P, model.Q])
    moment = MomentData.from_data(X, Y).loss(model, 0)
    g_moment = torch.autograd.grad(moment.sum(), [model.P, model.Q])
    torch.testing.assert_close(moment, direct, rtol=1e-10, atol=1e-12)
    for a, b in zip(g_moment, g_direct):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)


def test_divergence_is_recorded_per_model_and_others_train_on():
    X, Y, V = _data(3)
    members = [MemberSpec(2, 0.1, 1), MemberSpec(2, 30.0, 2)]
    model = LinearOperatorEnsemble(members, n=N_TOK, d=D, d_v=D, V_known=V)
    out = train_ensemble(model, MomentData.from_data(X, Y), TrainConfig(optimizer="gd", lr=0.5, steps=300))
    assert out.diverged_step[0] == -1 and out.diverged_step[1] > 0
    assert np.isfinite(out.final_loss[0]) and out.final_loss[0] < 0.05
    assert torch.isfinite(model.A).all()  # the diverged model is frozen at zeros, never NaN


def test_early_stop_freezes_a_model_exactly_where_it_stopped():
    X, Y, V = _data(4)
    member = MemberSpec(2, 0.3, 7)
    cfg = TrainConfig(optimizer="gd", lr=0.5, steps=3000, early_stop_tol=1e-6, patience=50)
    model = LinearOperatorEnsemble([member], n=N_TOK, d=D, d_v=D, V_known=V)
    out = train_ensemble(model, MomentData.from_data(X, Y), cfg)
    assert out.converged[0] and out.steps_run[0] < 3000
    again = LinearOperatorEnsemble([member], n=N_TOK, d=D, d_v=D, V_known=V)
    train_ensemble(
        again, MomentData.from_data(X, Y), TrainConfig(optimizer="gd", lr=0.5, steps=int(out.steps_run[0]))
    )
    torch.testing.assert_close(model.A, again.A, rtol=1e-12, atol=1e-14)


def test_checkpoints_and_curves():
    assert checkpoint_steps(100, 5)[0] == 0 and checkpoint_steps(100, 5)[-1] == 100
    steps = checkpoint_steps(1000, 12)
    assert steps == sorted(set(steps))
    X, Y, V = _data(5)
    model = LinearOperatorEnsemble([MemberSpec(3, 0.1, 1)], n=N_TOK, d=D, d_v=D, V_known=V)
    out = train_ensemble(model, FixedData(X, Y), TrainConfig(optimizer="adam", steps=50, checkpoints=6))
    curves = out.member_curves(0)
    assert curves["step"][0] == 0 and curves["step"][-1] == 50
    assert len(curves["spectrum_A"]) == len(curves["step"]) and len(curves["spectrum_A"][0]) == N_TOK
    assert curves["loss"][-1] < curves["loss"][0]
