"""``bench train``: the FLOP formula, the result keys and the one-line errors."""

from __future__ import annotations

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from entropic_bound.bench_train import Workload, build_ensemble, flops_per_model_sample
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


def test_bench_train_json_on_a_tiny_workload(capsys):
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
        "ratio",
        "ensemble_gflops",
        "gemm_peak_gflops",
    ):
        assert out[key] > 0, key
    assert out["ratio"] == pytest.approx(out["ensemble_model_steps_per_s"] / out["naive_model_steps_per_s"])
    assert out["workload"]["models"] == 3 and out["workload"]["rank"] == 4


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
        (["--student", "mamba"], "linear_qk, softmax, block"),
        (["--student", "softmax", "--models", "0"], "'models' parameter"),
        (["--student", "softmax", "--batch", "-3"], "'batch' parameter"),
        (
            ["--student", "linear_qk", "--d", "4", "--rank", "5"],
            "'rank' parameter must be an int in \\[1, 4\\]",
        ),
        (["--student", "linear_qk", "--device", "tpu"], "'device'"),
    ],
)
def test_bad_inputs_exit_2_with_one_line(argv, match, capsys):
    assert main(["bench", "train", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert __import__("re").search(match, err)
