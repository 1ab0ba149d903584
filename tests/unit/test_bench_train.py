"""``bench train``: the FLOP formula, the vmap side's equivalence, the result keys and the one-line errors."""

from __future__ import annotations

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from entropic_bound.bench.train import VmapEnsemble, Workload, build_ensemble, flops_per_model_sample
from entropic_bound.cli import main
from entropic_bound.models.base import MemberSpec
from entropic_bound.models.reference import member_module


def counted_flops(w: Workload) -> int:
    """Matmul FLOPs of one forward + backward of the plain module, counted by torch."""
    ens = build_ensemble(w, [MemberSpec(w.r, 0.2, 0)], "cpu")
    module = member_module(ens, 0)
    X = torch.randn(w.batch, w.n, w.d)
    with FlopCounterMode(display=False) as counter:
        module(X).pow(2).mean().backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("student", ["linear_qk", "softmax"])
@pytest.mark.parametrize("heads,rank,v_known", [(1, 0, False), (2, 3, False), (1, 5, True)])
def test_flop_formula_matches_torch_flop_counter(student, heads, rank, v_known):
    w = Workload(
        student=student, models=1, n=6, d=8, batch=3, steps=1, rank=rank, heads=heads, v_known=v_known
    )
    assert flops_per_model_sample(w) * w.batch == counted_flops(w)


def test_block_flop_formula_is_close_to_the_counter():
    w = Workload(student="block", models=1, n=6, d=8, batch=3, steps=1)
    ratio = flops_per_model_sample(w) * w.batch / counted_flops(w)
    assert 0.8 < ratio < 1.25


def tiny_modules(student: str, v_known: bool = False, heads: int = 1):
    w = Workload(student=student, models=3, n=5, d=4, batch=6, steps=1, rank=3, heads=heads, v_known=v_known)
    members = [MemberSpec(w.r, 0.5, seed) for seed in range(w.models)]
    ens = build_ensemble(w, members, "cpu").double()
    return w, [member_module(ens, m) for m in range(w.models)]


@pytest.mark.parametrize(
    "student,v_known,heads",
    [("linear_qk", False, 1), ("linear_qk", True, 2), ("softmax", False, 2), ("block", False, 1)],
)
def test_vmap_side_has_the_per_model_losses_and_gradients(student, v_known, heads):
    w, modules = tiny_modules(student, v_known, heads)
    g = torch.Generator().manual_seed(1)
    X, Y = (torch.randn(w.batch, w.n, w.d, generator=g, dtype=torch.float64) for _ in range(2))
    vm = VmapEnsemble(modules)
    losses = vm.losses(X, Y)
    losses.sum().backward()
    for m, module in enumerate(modules):
        loss = torch.nn.functional.mse_loss(module(X), Y)
        loss.backward()
        assert losses[m].item() == pytest.approx(loss.item(), rel=1e-12)
        for name, p in module.named_parameters():
            if p.requires_grad:
                torch.testing.assert_close(vm.params[name].grad[m], p.grad, rtol=1e-10, atol=1e-12)
            else:
                assert not vm.params[name].requires_grad  # a known V stays frozen
    assert len(vm.trainable()) == sum(p.requires_grad for p in modules[0].parameters())


def test_vmap_training_follows_the_per_model_adam_trajectories():
    w, modules = tiny_modules("softmax")
    g = torch.Generator().manual_seed(2)
    batches = [
        tuple(torch.randn(w.batch, w.n, w.d, generator=g, dtype=torch.float64) for _ in range(2))
        for _ in range(5)
    ]
    initial = [module.W_Q.detach().clone() for module in modules]
    vm = VmapEnsemble(modules)
    opt = torch.optim.Adam(vm.trainable(), lr=1e-2)
    for X, Y in batches:
        opt.zero_grad()
        vm.losses(X, Y).sum().backward()
        opt.step()
    for m, module in enumerate(modules):
        own = torch.optim.Adam(module.parameters(), lr=1e-2)
        for X, Y in batches:
            own.zero_grad()
            torch.nn.functional.mse_loss(module(X), Y).backward()
            own.step()
        torch.testing.assert_close(vm.params["W_Q"][m].detach(), module.W_Q.detach(), rtol=1e-9, atol=1e-11)
        assert (module.W_Q - initial[m]).abs().max() > 1e-3  # training moved the weights


def test_bench_train_json_on_a_tiny_workload(capsys):
    threads_before = torch.get_num_threads()
    rc = main(
        [
            "bench",
            "train",
            "--student",
            "softmax",
            "--models",
            "3",
            "--n",
            "4",
            "--d",
            "4",
            "--batch",
            "2",
            "--steps",
            "2",
            "--repeats",
            "1",
            "--json",
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for key in (
        "ensemble_model_steps_per_s",
        "naive_model_steps_per_s",
        "vmap_model_steps_per_s",
        "ratio",
        "ratio_vs_vmap",
        "ensemble_gflops",
        "vmap_gflops",
        "gemm_peak_gflops",
        "vmap_model_steps_per_cpu_s",
        "ratio_vs_vmap_cpu",
        "ratio_cpu",
    ):
        assert out[key] > 0, key
    assert out["ratio"] == pytest.approx(out["ensemble_model_steps_per_s"] / out["naive_model_steps_per_s"])
    assert out["ratio_vs_vmap"] == pytest.approx(
        out["ensemble_model_steps_per_s"] / out["vmap_model_steps_per_s"]
    )
    assert out["workload"]["models"] == 3 and out["workload"]["rank"] == 4
    assert out["ratio_vs_vmap_cpu"] == pytest.approx(
        out["ensemble_model_steps_per_cpu_s"] / out["vmap_model_steps_per_cpu_s"]
    )
    assert len(out["ratios_vs_vmap_per_round"]) == 1
    assert out["workload"]["threads"] == 1  # one thread by default, as `run`
    assert torch.get_num_threads() == threads_before  # restored after the bench


def test_threads_flag_sets_torch_threads(capsys):
    argv = ["bench", "train", "--student", "linear_qk", "--models", "2", "--n", "3", "--d", "3"]
    assert main([*argv, "--batch", "2", "--steps", "1", "--repeats", "1", "--threads", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["workload"]["threads"] == 2


def test_bench_train_table(capsys):
    assert (
        main(
            [
                "bench",
                "train",
                "--student",
                "block",
                "--models",
                "2",
                "--n",
                "4",
                "--d",
                "4",
                "--batch",
                "2",
                "--steps",
                "1",
                "--repeats",
                "1",
                "--max-memory",
                "1",
            ]
        )
        == 0
    )
    assert "ratio" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,match",
    [
        (["--student", "mamba"], "'student' parameter must be one of 'linear_qk', 'softmax', 'block'"),
        (["--student", "softmax", "--models", "0"], "'models' parameter"),
        (["--student", "softmax", "--batch", "-3"], "'batch' parameter"),
        (
            ["--student", "linear_qk", "--d", "4", "--rank", "5"],
            "'rank' parameter must be an int in \\[1, 4\\]",
        ),
        (["--student", "linear_qk", "--device", "tpu"], "'device'"),
        (["--student", "linear_qk", "--threads", "-1"], "'threads' parameter"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(argv, match, capsys):
    assert main(["bench", "train", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert __import__("re").search(match, err)
