"""B1–B3 ensembles against the plain per-model modules, the teachers, and the trainer."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from entropic_bound.errors import UserInputError
from entropic_bound.models.base import MemberSpec
from entropic_bound.models.block import TransformerBlockEnsemble
from entropic_bound.models.chunking import chunk_members
from entropic_bound.models.linear_qk import LinearQKEnsemble
from entropic_bound.models.reference import member_module
from entropic_bound.models.softmax_attention import SoftmaxAttentionEnsemble
from entropic_bound.training import FixedData, TrainConfig, train_ensemble

F64 = torch.float64
MEMBERS = [MemberSpec(rank=r, init_scale=0.4, seed=s) for s, r in enumerate([2, 5, 8, 3])]
CASES = [
    (LinearQKEnsemble, "none"),
    (LinearQKEnsemble, "learned_absolute"),
    (SoftmaxAttentionEnsemble, "none"),
    (SoftmaxAttentionEnsemble, "learned_absolute"),
    (TransformerBlockEnsemble, "none"),
]


def make(cls, positional="none", members=MEMBERS, v_known=False, heads=3, **kw):
    V = torch.linalg.qr(torch.randn(8, 8, generator=torch.Generator().manual_seed(9), dtype=F64))[0][:, :4]
    return cls(
        members,
        n=6,
        d=8,
        d_v=4,
        n_heads=heads,
        positional=positional,
        V_known=V if v_known else None,
        dtype=F64,
        **kw,
    )


def inputs(B=5, seed=1):
    return torch.randn(B, 6, 8, generator=torch.Generator().manual_seed(seed), dtype=F64)


@pytest.mark.parametrize("v_known", [False, True])
@pytest.mark.parametrize("cls,positional", CASES)
def test_forward_equals_reference_modules(cls, positional, v_known):
    ens, X = make(cls, positional, v_known=v_known), inputs()
    Y = ens(X)  # shared inputs: the fused path
    assert Y.shape == (4, 5, 6, 4)
    for m in range(4):
        torch.testing.assert_close(Y[m], member_module(ens, m)(X), rtol=1e-10, atol=1e-12)
    X4 = torch.randn(4, 5, 6, 8, dtype=F64)  # per-model inputs: the general path
    for m in range(4):
        torch.testing.assert_close(ens(X4)[m], member_module(ens, m)(X4[m]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls,positional", CASES)
def test_mixers_are_per_head_and_reproduce_the_output(cls, positional):
    ens, X = make(cls, positional), inputs()
    mix = ens.mixers(X)  # (M, B, h, n, n)
    assert mix.shape == (4, 5, 3, 6, 6)
    if cls is SoftmaxAttentionEnsemble:
        torch.testing.assert_close(mix.sum(-1), torch.ones(4, 5, 3, 6, dtype=F64))
    if cls is not TransformerBlockEnsemble:
        V = ens.operators()["V"]  # (M, d, d_v)
        expected = mix.mean(2) @ X @ V[:, None]
        torch.testing.assert_close(ens(X).detach(), expected)


def test_spectra_from_factors_match_dense_kernel():
    ens = make(SoftmaxAttentionEnsemble)
    ops = ens.operators()
    dense = torch.linalg.svdvals(ops["W_Q"] @ ops["W_K"].transpose(-1, -2)).numpy()  # (M, h, d)
    sv = ens.spectra()["K"]
    assert sv.shape == (4, 3, 8)
    np.testing.assert_allclose(sv, dense[..., : sv.shape[-1]], atol=1e-10)
    for m, spec in enumerate(MEMBERS):  # rank r_m: the rest of the spectrum is zero
        assert np.all(sv[m, :, spec.rank :] < 1e-10) and np.all(sv[m, :, : spec.rank] > 1e-6)


@pytest.mark.parametrize("cls", [LinearQKEnsemble, SoftmaxAttentionEnsemble, TransformerBlockEnsemble])
def test_member_does_not_depend_on_ensemble_composition(cls):
    alone = make(cls, members=[MEMBERS[1]])
    crowd = make(cls, members=[MEMBERS[2], MEMBERS[0], MEMBERS[1]])
    X = inputs()
    torch.testing.assert_close(alone(X)[0], crowd(X)[2], rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(alone.W_Q[0, ..., :5], crowd.W_Q[2, ..., :5], rtol=0, atol=0)


def short_training(cls, positional, steps=15):
    ens = make(cls, positional, heads=2)
    X = inputs(B=12, seed=3)
    Y = torch.randn(12, 6, 4, generator=torch.Generator().manual_seed(4), dtype=F64)
    refs = [member_module(ens, m) for m in range(4)]
    cfg = TrainConfig(optimizer="adam", lr=1e-2, steps=steps, n_samples=12, checkpoints=0)
    out = train_ensemble(ens, FixedData(X, Y), cfg)
    losses = []
    for ref in refs:
        opt = torch.optim.Adam([p for p in ref.parameters() if p.requires_grad], lr=1e-2)
        for _ in range(steps):
            loss = (ref(X) - Y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append((ref(X) - Y).pow(2).mean().item())
    return ens, refs, out, np.array(losses)


@pytest.mark.parametrize("cls,positional", CASES)
def test_training_matches_per_model_loop(cls, positional):
    ens, refs, out, losses = short_training(cls, positional)
    np.testing.assert_allclose(out.final_loss, losses, rtol=1e-8)
    for m, ref in enumerate(refs):
        trained = member_module(ens, m)
        for (name, p), q in zip(ref.named_parameters(), trained.parameters()):
            torch.testing.assert_close(q, p, rtol=1e-7, atol=1e-9, msg=name)


def test_padded_columns_stay_exactly_zero_under_training():
    ens, _, _, _ = short_training(SoftmaxAttentionEnsemble, "learned_absolute")
    for m, spec in enumerate(MEMBERS):
        assert torch.all(ens.W_Q[m, ..., spec.rank :] == 0) and torch.all(ens.W_K[m, ..., spec.rank :] == 0)
    assert torch.any(ens.W_Q[1, ..., :5] != 0)


def kernel_teacher(d=8, r=3, seed=5):
    g = torch.Generator().manual_seed(seed)
    W_Q, W_K = torch.randn(d, r, generator=g, dtype=F64), torch.randn(d, r, generator=g, dtype=F64)
    V = torch.randn(d, 4, generator=g, dtype=F64)
    return W_Q, W_K, V


@pytest.mark.parametrize("cls", [LinearQKEnsemble, SoftmaxAttentionEnsemble])
def test_teacher_kernel_reproduces_the_teacher(cls):
    W_Q, W_K, V = kernel_teacher()
    K = W_Q @ W_K.T  # K*, rank 3
    ens = cls([MemberSpec(3, 1.0, 0)], n=6, d=8, d_v=4, V_known=V, dtype=F64)
    with torch.no_grad():
        ens.W_Q[0, 0], ens.W_K[0, 0] = W_Q, W_K
    Xn = inputs().numpy()
    logits = Xn @ K.numpy() @ Xn.transpose(0, 2, 1) / math.sqrt(8)  # X K* Xᵀ / √d
    if cls is LinearQKEnsemble:
        expected = logits @ Xn @ V.numpy() / 6  # the linear teacher
    else:
        e = np.exp(logits - logits.max(-1, keepdims=True))
        expected = (e / e.sum(-1, keepdims=True)) @ Xn @ V.numpy()
    np.testing.assert_allclose(
        ens(torch.from_numpy(Xn))[0].detach().numpy(), expected, rtol=1e-10, atol=1e-12
    )


def test_sqrt_r_temperature_uses_member_rank():
    ens = make(SoftmaxAttentionEnsemble, temperature="sqrt_r")
    np.testing.assert_allclose(ens.tau.numpy(), np.sqrt([2, 5, 8, 3]))
    torch.testing.assert_close(ens(inputs())[2], member_module(ens, 2)(inputs()))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(cls=TransformerBlockEnsemble, positional="learned_absolute"), "only available for B1 and B2"),
        (dict(cls=LinearQKEnsemble, positional="sinusoidal"), "'positional' parameter must be one of"),
        (dict(cls=SoftmaxAttentionEnsemble, temperature="sqrt_n"), "'temperature' parameter"),
        (
            dict(cls=LinearQKEnsemble, members=[MemberSpec(9, 1.0, 0)]),
            r"'rank' parameter must be an int in \[1, 8\]",
        ),
        (dict(cls=LinearQKEnsemble, heads=0), "'n_heads' parameter"),
    ],
)
def test_bad_inputs_raise_one_line_user_errors(kwargs, match):
    with pytest.raises(UserInputError, match=match) as info:
        make(**kwargs)
    assert "\n" not in str(info.value)


def test_chunk_members_respects_budget_and_order():
    chunks = chunk_members(list(range(10)), max_memory_bytes=350, bytes_per_member=100)
    assert chunks == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert chunk_members(list(range(3)), 10**6, 1) == [[0, 1, 2]]
    with pytest.raises(UserInputError, match="at least one model"):
        chunk_members([1], 10, 100)
