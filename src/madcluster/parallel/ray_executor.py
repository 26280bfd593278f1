"""Jobs as Ray tasks: a local Ray on this machine, or an existing cluster (``address``).

Each shared data object is ``ray.put`` once and its reference passed to every job that uses it,
so a dataset travels to each node once, not once per task. A job that raises is caught inside the
worker (:func:`~madcluster.parallel.executors.guarded_call`) and comes back as a failed outcome;
a worker that dies (killed, out of memory) is retried by Ray up to ``max_retries`` times and is
recorded as failed after that. Exactly as many jobs as the cluster has task slots are in flight
(Ray does not keep submission order among queued tasks, so a deeper queue would lose the order);
a freed slot gets the next job before the finished one's result is written. So ``running`` in the
progress bar means running, Ctrl-C has little to cancel, and jobs start largest first
(``Job.size``): the last job to finish is a short one.
:meth:`RayExecutor.warm_up` connects early and has every task slot import torch and the job's
code while the caller is still loading data (about 2.6 s per worker here, otherwise paid after
the data is loaded).

``ray`` is imported here only, inside :meth:`RayExecutor.run`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from madcluster.parallel.jobs import Job, JobFn, OnDone, Outcome, Progress, guarded_call


class RayExecutor:
    """Run jobs as Ray tasks with ``cpus_per_task`` CPUs each and Ray's retries on worker death."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        cpus_per_task: float = 1.0,
        max_retries: int = 3,
    ) -> None:
        if cpus_per_task <= 0:
            raise ValueError(f"cpus_per_task must be > 0, got {cpus_per_task}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.address = address
        self.num_cpus = num_cpus
        self.cpus_per_task = cpus_per_task
        self.max_retries = max_retries
        self._info: dict[str, Any] = {}
        self._owns_ray: bool | None = None  # None: not connected by this executor yet
        self._warming: list[Any] = []

    def describe(self) -> dict[str, Any]:
        return {
            "executor": self.name,
            "ray_address": self.address or "local",
            "cpus_per_task": self.cpus_per_task,
            "max_retries": self.max_retries,
            **self._info,
        }

    def warm_up(self, modules: Sequence[str]) -> None:
        """Connect now and have each task slot import ``modules`` (not waited for)."""
        import ray

        from madcluster.parallel.jobs import import_modules

        if self._owns_ray is None:
            self._owns_ray = self._connect()
        slots = self._slots()
        remote = ray.remote(import_modules).options(num_cpus=self.cpus_per_task, max_retries=0)
        self._warming = [remote.remote(list(modules)) for _ in range(slots)]

    def _slots(self) -> int:
        import ray

        return max(1, int(float(ray.cluster_resources().get("CPU", 1.0)) // self.cpus_per_task))

    def _connect(self) -> bool:
        """Connect (or start a local Ray); True when this call started it and must stop it."""
        import ray

        if ray.is_initialized():
            return False
        quiet = {"logging_level": logging.WARNING}  # no INFO lines between the progress bars
        if self.address:
            ray.init(address=self.address, **quiet)
        else:
            ray.init(
                num_cpus=self.num_cpus or os.cpu_count() or 1,
                include_dashboard=False,
                log_to_driver=False,
                **quiet,
            )
        return True

    def run(
        self,
        fn: JobFn,
        jobs: Sequence[Job],
        data: Mapping[str, Any],
        on_done: OnDone,
        progress: Progress | None = None,
    ) -> None:
        import ray

        if not jobs:
            self.close()
            return
        if self._owns_ray is None:
            self._owns_ray = self._connect()
        try:
            slots = self._slots()
            cpus = float(ray.cluster_resources().get("CPU", 1.0))
            self._info = {"ray_version": ray.__version__, "cluster_cpus": cpus, "slots": slots}
            remote = ray.remote(guarded_call).options(
                num_cpus=self.cpus_per_task, max_retries=self.max_retries, retry_exceptions=False
            )
            refs: dict[str | None, Any] = {}
            # largest first (stable: equal sizes keep the given order); pop() takes from the end
            queue = sorted(jobs, key=lambda job: job.size, reverse=True)
            queue.reverse()
            in_flight: dict[Any, Job] = {}

            def submit() -> None:  # fill every free slot, largest job first
                while queue and len(in_flight) < slots:
                    job = queue.pop()
                    if job.data_key not in refs:  # once per shared object, not per job
                        refs[job.data_key] = ray.put(data.get(job.data_key))
                    in_flight[remote.remote(fn, job.payload, refs[job.data_key])] = job

            try:
                submit()
                while in_flight:
                    if progress is not None:
                        progress.start(len(in_flight))
                    ready, _ = ray.wait(list(in_flight), num_returns=1)
                    finished = [(ref, in_flight.pop(ref)) for ref in ready]
                    submit()  # before writing results, so the freed slot does not wait for us
                    for ref, job in finished:
                        outcome = self._result(ref)
                        on_done(job, outcome)
                        if progress is not None:
                            progress.finish(outcome.ok, len(in_flight))
            except KeyboardInterrupt:
                for ref in in_flight:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:  # noqa: BLE001,S110 - best effort while stopping
                        pass
                raise
        finally:
            self.close()

    def close(self) -> None:
        """Shut down the local Ray this executor started; leave a joined or outer one running."""
        import ray

        if self._owns_ray:
            ray.shutdown()
        self._owns_ray, self._warming = None, []

    def _result(self, ref: Any) -> Outcome:
        """The job's outcome; a task Ray gave up on (worker died too often) becomes a failure."""
        import ray

        try:
            return ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - RayTaskError, WorkerCrashedError, ...
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return Outcome(
                ok=False,
                error=f"{type(exc).__name__} after {self.max_retries} retries: {first}",
                traceback=str(exc),
            )


__all__ = ["RayExecutor"]
