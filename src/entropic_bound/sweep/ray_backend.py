"""The Ray backend: groups of runs as Ray tasks, on a local Ray or an existing cluster.

Each task is one whole group (an ensemble trained together, never one tiny model), so the
per-task overhead of Ray (~ms) is paid once per ensemble. Results come back to the driver, where
the runner is the one store writer: the run store stays the single source of truth, and a killed
driver loses only the groups in flight (rerunning the same command resumes from the store).

A worker process that dies mid-task (killed, out of memory, a lost node) is a *system* failure;
Ray resubmits the task up to ``max_retries`` times. Exceptions raised by the executor itself are
not retried: they are bugs or bad input, and re-raised on the driver as their original type.

``import ray`` happens only inside :meth:`RayBackend.map_groups`, so the other backends (and the
``local`` default) never need Ray installed.
"""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import UserInputError
from ..results import RunSpec

_ADDRESS = re.compile(r"^(?:ray://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})$")


def parse_address(address: str | None) -> tuple[str, int] | None:
    """``None`` / ``"auto"`` → None; ``"HOST:PORT"`` (or ``ray://HOST:PORT``) → ``(host, port)``."""
    if address is None or address == "auto":
        return None
    match = _ADDRESS.match(str(address))
    port = int(match["port"]) if match else 0
    if not match or not 1 <= port <= 65535:
        raise UserInputError(
            f"The 'address' parameter must be 'auto' or HOST:PORT (e.g. 10.0.0.5:6379). "
            f"Got {address!r} instead."
        )
    return match["host"].strip("[]"), port


def _check_reachable(host: str, port: int, timeout: float) -> None:
    """Fail fast: Ray itself retries an unreachable GCS for minutes before giving up."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        raise UserInputError(
            f"Cannot reach a Ray cluster at {host}:{port} ({exc.strerror or exc}); "
            "start one with 'ray start --head' or check --address."
        ) from None


def _import_ray():
    try:
        import ray
    except ImportError:
        raise UserInputError("The 'ray' backend needs Ray: pip install 'entropic-bound[ray]'.") from None
    return ray


def _run_group(fn, group: list[RunSpec]) -> Any:
    """The task body: one torch thread per task (a task holds one CPU), then the group."""
    import torch

    torch.set_num_threads(1)
    return fn(group)


class RayBackend:
    """Run each group as a Ray task holding ``cpus_per_task`` CPUs.

    ``address=None`` starts a private local Ray with ``num_cpus=workers``; ``"auto"`` or
    ``"HOST:PORT"`` joins a running cluster, whose free CPUs then decide how many groups run at
    once (``workers > 1`` further caps the groups in flight). A cluster is joined at construction
    (so a wrong address fails before anything is written), a local Ray is started by the first
    :meth:`map_groups`; either is kept for later sweeps in this process (``reproduce`` runs several);
    :meth:`close` (or process exit) shuts down what this backend started. If Ray is already
    initialised in this process, that connection is used as is and never shut down here.
    """

    name = "ray"

    def __init__(
        self,
        workers: int = 1,
        address: str | None = None,
        max_retries: int = 3,
        cpus_per_task: float = 1,
        connect_timeout: float = 5.0,
        log_file: str | Path | None = None,
    ) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise UserInputError(f"The 'workers' parameter must be an int >= 1. Got {workers!r} instead.")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise UserInputError(
                f"The 'max_retries' parameter must be an int >= 0. Got {max_retries!r} instead."
            )
        self.workers = workers
        self.address = address
        self.host_port = parse_address(address)
        self.max_retries = max_retries
        self.cpus_per_task = cpus_per_task
        self.connect_timeout = connect_timeout
        self.log_file = None if log_file is None else Path(log_file)
        self._started = False
        self._printer = None  # Ray's own cluster-message printer, while ours replaces it
        ray = _import_ray()  # fail before the sweep writes anything: no Ray, or no cluster there
        if self.host_port is not None and not str(address).startswith("ray://"):
            _check_reachable(*self.host_port, connect_timeout)
        if address is not None:
            self._connect(ray)

    def close(self) -> None:
        """Shut down the Ray connection (and the local Ray) this backend started, if any."""
        if self._started:
            import ray

            ray.shutdown()
            self._started = False
        if self._printer is not None:
            import ray._private.worker as ray_worker

            ray_worker.print_to_stdstream = self._printer
            self._printer = None

    def _connect(self, ray) -> None:
        if not ray.is_initialized():
            self._started = self._init(ray)

    def init_options(self) -> dict:
        """``ray.init`` keywords: the workers' output and Ray's info logging stay off the terminal."""
        quiet = dict(logging_level=logging.ERROR, log_to_driver=False)
        if self.address is None:
            return dict(num_cpus=self.workers, include_dashboard=False, **quiet)
        return dict(address=self.address, **quiet)

    def _init(self, ray) -> bool:
        try:
            ray.init(**self.init_options())
        except ConnectionError as exc:
            raise UserInputError(
                f"Cannot connect to the Ray cluster at '{self.address}': "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            ) from None
        self._route_cluster_messages()
        return True

    def _route_cluster_messages(self) -> None:
        """Send the cluster's messages ("(raylet) A worker died…", lost nodes) to :attr:`log_file`.

        Ray's driver prints them from a background thread even with ``log_to_driver=False``, through
        the module function ``print_to_stdstream``, which it looks up at each message; replacing it
        is the one way to keep them off a ``--quiet`` terminal. :meth:`close` puts Ray's back."""
        if self.log_file is None:
            return
        import ray._private.worker as ray_worker

        log_file = self.log_file

        def to_log(data: dict, ignore_prefix: bool = False) -> None:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            with open(log_file, "a", encoding="utf-8") as handle:
                for line in data.get("lines", []):
                    handle.write(f"({data.get('pid', 'ray')}) {line}\n")

        self._printer = ray_worker.print_to_stdstream
        ray_worker.print_to_stdstream = to_log

    def _in_flight(self) -> int | None:
        """The cap on groups submitted at once: ``workers`` on a cluster when > 1, else none."""
        return self.workers if self.address is not None and self.workers > 1 else None

    def map_groups(self, fn, groups: list[list[RunSpec]]) -> Iterator[tuple[int, Any]]:
        if not groups:
            return
        ray = _import_ray()
        self._connect(ray)
        remote = ray.remote(
            num_cpus=self.cpus_per_task, max_retries=self.max_retries, retry_exceptions=False
        )(_run_group)
        pending: dict = {}
        try:
            fn_ref = ray.put(fn)  # the executor (config included) is shipped once, not per task
            cap = self._in_flight() or len(groups)
            queue = iter(enumerate(groups))
            for index, group in queue:
                pending[remote.remote(fn_ref, group)] = index
                if len(pending) >= cap:
                    break
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                index = pending.pop(ready[0])
                result = self._get(ray, ready[0], index)
                for next_index, group in queue:  # refill before handing the result to the writer
                    pending[remote.remote(fn_ref, group)] = next_index
                    break
                yield index, result
        finally:
            for ref in pending:  # the driver stops early (error, Ctrl-C): drop the groups still queued
                ray.cancel(ref, force=True)

    def _get(self, ray, ref, index: int) -> Any:
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise
        except ray.exceptions.WorkerCrashedError:
            raise RuntimeError(
                f"Ray worker running group {index} died {self.max_retries + 1} time(s); "
                "the finished groups are stored, rerun to resume."
            ) from None
