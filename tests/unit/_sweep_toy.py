"""A toy executor for the runner tests, importable by spawned workers and runnable as a script.

``python _sweep_toy.py STORE SLEEP_S`` runs the toy sweep into STORE, sleeping SLEEP_S before each
group (so a test can kill it part-way). Results depend on the whole group (a batch shared by the
ensemble, seeded by the group's run ids), so a resumed sweep only matches a fresh one if groups
are formed from the full spec list.
"""

from __future__ import annotations

import hashlib
import sys
import time

import numpy as np

from entropic_bound.sweep import RunResult, RunSpec, grid_specs, run_sweep

EXPERIMENT = "toy"


def toy_specs() -> list[RunSpec]:
    """12 runs: widths {2, 3} × lr {0.1, 0.5, 2.0 (diverges)} × seeds {0, 1}."""
    return grid_specs(EXPERIMENT, {"width": [2, 3], "lr": [0.1, 0.5, 2.0]}, seeds=[0, 1], fixed={"steps": 5})


class ToyExecutor:
    name = "toy"

    def __init__(self, group_size: int = 2, sleep_s: float = 0.0) -> None:
        self.group_size = group_size
        self.sleep_s = sleep_s

    def groups(self, specs: list[RunSpec]) -> list[list[RunSpec]]:
        """Runs of equal width share shapes; chunks of ``group_size`` in run_id order."""
        by_width: dict[int, list[RunSpec]] = {}
        for spec in sorted(specs, key=lambda s: s.run_id):
            by_width.setdefault(spec.params["width"], []).append(spec)
        k = self.group_size
        return [
            runs[i : i + k]
            for width in sorted(by_width)
            for runs in [by_width[width]]
            for i in range(0, len(runs), k)
        ]

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        time.sleep(self.sleep_s)
        key = hashlib.sha256("".join(s.run_id for s in group).encode()).digest()
        shared = np.random.default_rng(int.from_bytes(key[:8], "little")).standard_normal(
            8
        )  # the ensemble's batch
        return [self._one(spec, shared) for spec in group]

    @staticmethod
    def _one(spec: RunSpec, shared: np.ndarray) -> RunResult:
        p = spec.params
        w = np.random.default_rng(spec.seed).standard_normal(8) * p["width"]
        curve = []
        for step in range(p["steps"]):
            w = w - p["lr"] * (w - shared) * (1 + p["lr"] * 10 * step)  # unstable when lr is large
            loss = float(np.mean((w - shared) ** 2))
            curve.append(loss)
            if p["lr"] > 1.0 and step == 2:
                return RunResult(
                    spec,
                    "diverged",
                    {"loss": float("nan"), "grad_norm": float("inf"), "log_loss": float("-inf")},
                    {"loss": curve + [float("nan")]},
                    diverged_step=step,
                )
        return RunResult(
            spec,
            "ok",
            {"loss": loss, "grad_norm": float(np.linalg.norm(w - shared)), "log_loss": float(np.log(loss))},
            {"loss": curve},
            wall_s=0.01,
        )


class ReportingToyExecutor(ToyExecutor):
    """Reports half of each group done, then waits ``sleep_s`` before finishing (a long group)."""

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        from entropic_bound.sweep.group_progress import report

        report(0.5)
        return super().execute(group)


class CostedToyExecutor(ToyExecutor):
    """The toy under its own experiment ``name``, its groups estimated to cost ``cost`` each (the
    joint sweep runs the costliest first); ``fail_on`` groups raise, like a crash in training."""

    def __init__(self, name: str, cost: float = 1.0, fail_on: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.name, self.cost, self.fail_on = name, cost, fail_on

    def group_cost(self, group: list[RunSpec]) -> float:
        return self.cost

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        if self.fail_on is not None and group == self.groups(named_specs(self.name))[self.fail_on]:
            raise RuntimeError(f"{self.name}: group {self.fail_on} failed")
        return super().execute(group)


def named_specs(name: str) -> list[RunSpec]:
    """The toy grid of :func:`toy_specs` as experiment ``name`` (other run ids)."""
    return grid_specs(name, {"width": [2, 3], "lr": [0.1, 0.5, 2.0]}, seeds=[0, 1], fixed={"steps": 5})


def torch_threads(group: list) -> int:
    """For the backend test: how many intra-op threads the worker's torch uses."""
    import torch

    return torch.get_num_threads()


def main(argv: list[str]) -> int:
    from entropic_bound.store import RunStore

    path, sleep_s = argv[0], float(argv[1])
    with RunStore(path) as store:
        run_sweep(
            ToyExecutor(sleep_s=sleep_s),
            toy_specs(),
            store,
            progress=lambda done, total, desc: print(done, total, desc, flush=True),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
