"""Executors: run independent jobs one after another here, or in parallel on Ray.

Every executor has the same contract, so a benchmark grid and a fleet of per-entity models run
unchanged on either:

* a **job** is ``fn(payload, data)``, where ``data`` is one of a few shared objects (a dataset's
  arrays) named by ``job.data_key``; each shared object is handed over once (Ray: one
  ``ray.put`` per object), never once per job;
* a job that raises becomes a failed outcome with its error and traceback, and the other jobs go
  on; ``on_done(job, outcome)`` is called in this process as each job ends, in completion order,
  so the caller can write the result at once;
* ``KeyboardInterrupt`` stops the run after ``on_done`` of every finished job has returned.

Ray is imported only by :class:`~madcluster.evaluation.ray_executor.RayExecutor`, and only when
it runs.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

EXECUTORS = ("auto", "sequential", "ray")


@dataclass(frozen=True)
class Job:
    """One unit of work: ``fn(payload, data[data_key])``; ``key`` names it in progress and errors."""

    key: str
    payload: Any
    data_key: str | None = None


@dataclass
class Outcome:
    """How a job ended: ``value`` when ``ok``, else ``error`` (one line) and ``traceback``."""

    ok: bool
    value: Any = None
    error: str = ""
    traceback: str = ""
    host: str = ""
    pid: int = 0


JobFn = Callable[[Any, Any], Any]
OnDone = Callable[[Job, Outcome], None]


def guarded_call(fn: JobFn, payload: Any, data: Any) -> Outcome:
    """``fn(payload, data)`` with any ``Exception`` turned into a failed :class:`Outcome`."""
    where = {"host": socket.gethostname(), "pid": os.getpid()}
    try:
        return Outcome(ok=True, value=fn(payload, data), **where)
    except Exception as exc:  # noqa: BLE001 - every task failure is recorded, none stops the grid
        return Outcome(
            ok=False,
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
            **where,
        )


class Progress:
    """One bar over jobs, with done / failed / running counts (silent when ``enabled`` is False)."""

    def __init__(self, total: int, *, desc: str = "tasks", enabled: bool = True, done: int = 0):
        from tqdm.auto import tqdm

        self.done, self.failed, self.running = done, 0, 0
        self.resumed = done
        self._bar = tqdm(total=total, initial=done, desc=desc, unit="task", disable=not enabled)
        self._show()

    def start(self, running: int) -> None:
        self.running = running
        self._show()

    def finish(self, ok: bool, running: int) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.running = running
        self._show(refresh=False)
        self._bar.update()

    def _show(self, *, refresh: bool = True) -> None:
        counts = {"done": self.done, "failed": self.failed, "running": self.running}
        if self.resumed:
            counts["resumed"] = self.resumed
        self._bar.set_postfix(counts, refresh=refresh)

    def close(self) -> None:
        self._bar.close()


class SequentialExecutor:
    """Jobs one after another in this process (the default without Ray)."""

    name = "sequential"

    def describe(self) -> dict[str, Any]:
        return {"executor": self.name}

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


def make_executor(
    name: str = "auto",
    *,
    ray_address: str | None = None,
    num_cpus: int | None = None,
    cpus_per_task: float = 1.0,
    max_retries: int = 3,
    n_jobs: int | None = None,
) -> SequentialExecutor | Any:
    """``sequential``, ``ray``, or ``auto``: Ray when it is installed and there is more than one job.

    ``ray_address`` joins an existing cluster; without it a local Ray is started with ``num_cpus``
    (default: every core) and stopped at the end.
    """
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
    if name == "auto":
        parallel = n_jobs is None or n_jobs > 1
        name = "ray" if (ray_available() and parallel) or ray_address else "sequential"
    if name == "sequential":
        if ray_address:
            raise ValueError("--ray-address needs --executor ray")
        return SequentialExecutor()
    if not ray_available():
        raise ValueError(
            "--executor ray needs Ray: pip install 'madcluster[distributed]' "
            "(or pip install 'ray[default]')"
        )
    from madcluster.evaluation.ray_executor import RayExecutor

    return RayExecutor(
        address=ray_address,
        num_cpus=num_cpus,
        cpus_per_task=cpus_per_task,
        max_retries=max_retries,
    )


__all__ = [
    "EXECUTORS",
    "Job",
    "Outcome",
    "Progress",
    "SequentialExecutor",
    "guarded_call",
    "make_executor",
    "ray_available",
]
