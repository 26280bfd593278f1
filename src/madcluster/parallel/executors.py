"""Executors: run independent jobs one after another here, or in parallel on Ray.

Every executor has the same contract, so a benchmark grid and a fleet of per-entity models run
unchanged on either:

* a **job** is ``fn(payload, data)``, where ``data`` is one of a few shared objects (a dataset's
  arrays) named by ``job.data_key``; each shared object is handed over once (Ray: one
  ``ray.put`` per object), never once per job;
* a job that raises becomes a failed outcome with its error and traceback, and the other jobs go
  on; ``on_done(job, outcome)`` is called in this process as each job ends, in completion order,
  so the caller can write the result at once;
* ``KeyboardInterrupt`` stops the run after ``on_done`` of every finished job has returned;
* ``warm_up(modules)`` may be called before the data is loaded: a parallel executor starts its
  workers and has them import ``modules`` (torch, the job's code) while the caller loads data;
  ``close()`` releases what ``warm_up`` started when ``run`` is never reached (``run`` closes
  at its end).

Executors are registered by name in :data:`EXECUTORS` (a factory of the options
:func:`make_executor` passes on); a new one is a class with ``name``, ``describe``, ``warm_up``,
``close`` and ``run``, and one registry line. Ray is imported only by
:class:`~madcluster.parallel.ray_executor.RayExecutor`, and only when it runs.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from madcluster.parallel.jobs import Job, JobFn, OnDone, Outcome, Progress, guarded_call


class SequentialExecutor:
    """Jobs one after another in this process (the default without Ray)."""

    name = "sequential"

    def describe(self) -> dict[str, Any]:
        return {"executor": self.name}

    def warm_up(self, modules: Sequence[str]) -> None:
        """Nothing to start: this process imports what it needs when the first job runs."""

    def close(self) -> None:
        """Nothing to stop."""

    def run(
        self,
        fn: JobFn,
        jobs: Sequence[Job],
        data: Mapping[str, Any],
        on_done: OnDone,
        progress: Progress | None = None,
    ) -> None:
        for job in jobs:
            if progress is not None:
                progress.start(1)
            outcome = guarded_call(fn, job.payload, data.get(job.data_key))
            on_done(job, outcome)
            if progress is not None:
                progress.finish(outcome.ok, 0)


def ray_available() -> bool:
    """Whether ``import ray`` would work, without importing it."""
    return importlib.util.find_spec("ray") is not None


def sequential_executor(*, ray_address: str | None = None, **options: Any) -> SequentialExecutor:
    """:class:`SequentialExecutor` (the CPU and retry options mean nothing to it)."""
    if ray_address:
        raise ValueError("--ray-address needs --executor ray")
    return SequentialExecutor()


def ray_executor(
    *,
    ray_address: str | None = None,
    num_cpus: int | None = None,
    cpus_per_task: float = 1.0,
    max_retries: int = 3,
) -> Any:
    """:class:`~madcluster.parallel.ray_executor.RayExecutor`, or a ``ValueError`` saying how to
    install Ray."""
    if not ray_available():
        raise ValueError(
            "--executor ray needs Ray: pip install 'madcluster[distributed]' "
            "(or pip install 'ray[default]')"
        )
    from madcluster.parallel.ray_executor import RayExecutor

    return RayExecutor(
        address=ray_address,
        num_cpus=num_cpus,
        cpus_per_task=cpus_per_task,
        max_retries=max_retries,
    )


#: The executors by name: each a factory taking :func:`make_executor`'s ``ray_address``,
#: ``num_cpus``, ``cpus_per_task`` and ``max_retries`` (keywords; what it does not use it ignores).
EXECUTORS: dict[str, Callable[..., Any]] = {
    "sequential": sequential_executor,
    "ray": ray_executor,
}
#: The name that picks one: Ray when it is installed and there is more than one job.
AUTO = "auto"


def executor_names() -> list[str]:
    """What ``--executor`` accepts: ``auto`` and every registered executor."""
    return [AUTO, *EXECUTORS]


def make_executor(
    name: str = AUTO,
    *,
    ray_address: str | None = None,
    num_cpus: int | None = None,
    cpus_per_task: float = 1.0,
    max_retries: int = 3,
    n_jobs: int | None = None,
) -> SequentialExecutor | Any:
    """The executor registered as ``name`` (:data:`EXECUTORS`: ``sequential``, ``ray``), or
    ``auto``: Ray when it is installed and there is more than one job.

    ``ray_address`` joins an existing cluster; without it a local Ray is started with ``num_cpus``
    (default: every core) and stopped at the end.
    """
    if name != AUTO and name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; choose one of {', '.join(executor_names())}")
    if name == AUTO:
        parallel = n_jobs is None or n_jobs > 1
        name = "ray" if (ray_available() and parallel) or ray_address else "sequential"
    return EXECUTORS[name](
        ray_address=ray_address,
        num_cpus=num_cpus,
        cpus_per_task=cpus_per_task,
        max_retries=max_retries,
    )


__all__ = [
    "AUTO",
    "EXECUTORS",
    "Job",
    "Outcome",
    "Progress",
    "SequentialExecutor",
    "executor_names",
    "guarded_call",
    "make_executor",
    "ray_available",
    "ray_executor",
    "sequential_executor",
]
