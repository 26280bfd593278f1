"""A new executor in one file plus one registry line: jobs on a pool of threads in this process.

:class:`ThreadExecutor` below is all a new executor is (``name``, ``describe``, ``warm_up``,
``close``, ``run`` with the contract of :mod:`madcluster.parallel.executors`); the test registers
it with one line (``EXECUTORS["threads"] = ThreadExecutor.from_options``, here through
``monkeypatch``) and runs jobs, a fleet and the command line's ``--executor threads`` on it with no
other edit.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np
import pytest
from grid_data import write_fleet

from madcluster.parallel.executors import EXECUTORS, executor_names, make_executor
from madcluster.parallel.jobs import Job, JobFn, OnDone, Outcome, Progress, guarded_call


# ---------------------------------------------------------------------- the new executor
class ThreadExecutor:
    """Jobs on ``workers`` threads of this process; ``on_done`` runs in the calling thread, in
    completion order, as each job ends."""

    name = "threads"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    @classmethod
    def from_options(cls, *, num_cpus: int | None = None, **options: Any) -> ThreadExecutor:
        """The registry's factory: ``num_cpus`` threads (default 2); the Ray options are not
        its."""
        return cls(num_cpus or 2)

    def describe(self) -> dict[str, Any]:
        return {"executor": self.name, "workers": self.workers}

    def warm_up(self, modules: Sequence[str]) -> None:
        """Nothing to start: the threads share this process's imports."""

    def close(self) -> None:
        """Nothing to stop: ``run`` closes its pool."""

    def run(
        self,
        fn: JobFn,
        jobs: Sequence[Job],
        data: Mapping[str, Any],
        on_done: OnDone,
        progress: Progress | None = None,
    ) -> None:
        with ThreadPoolExecutor(self.workers) as pool:
            running: dict[Future[Outcome], Job] = {}
            for job in sorted(jobs, key=lambda j: -j.size):  # the largest first
                running[pool.submit(guarded_call, fn, job.payload, data.get(job.data_key))] = job
            if progress is not None:
                progress.start(len(running))
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    outcome = future.result()
                    on_done(running.pop(future), outcome)
                    if progress is not None:
                        progress.finish(outcome.ok, len(running))


# ---------------------------------------------------------------------- end of the new executor


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(EXECUTORS, "threads", ThreadExecutor.from_options)  # the registry line


def test_a_new_executor_runs_jobs_by_the_contract(registered):
    executor = make_executor("threads", num_cpus=3)
    assert isinstance(executor, ThreadExecutor) and executor.workers == 3
    assert "threads" in executor_names()
    shared = {"table": np.arange(10)}
    seen_data, done = [], {}

    def square(payload: int, table: np.ndarray) -> int:
        seen_data.append(table)
        if payload == 4:
            raise ValueError("four is refused")
        return int(table[payload]) ** 2

    def on_done(job: Job, outcome: Outcome) -> None:
        assert threading.current_thread() is threading.main_thread()  # in the caller's thread
        done[job.key] = outcome

    jobs = [Job(f"j{i}", i, data_key="table", size=i) for i in range(8)]
    executor.run(square, jobs, shared, on_done)
    assert {k: o.value for k, o in done.items() if o.ok} == {
        f"j{i}": i * i for i in range(8) if i != 4
    }
    assert not done["j4"].ok and done["j4"].error == "ValueError: four is refused"
    assert all(table is shared["table"] for table in seen_data)  # handed over, never copied


@pytest.mark.slow
def test_a_new_executor_fits_a_fleet_from_the_command_line(registered, tmp_path, capsys):
    """``madcluster fit FOLDER --executor threads``: the registered name is a choice, and its
    models are the sequential executor's (one worker: torch's random generator is one per
    process, so fits in parallel threads would draw from it in turn)."""
    from madcluster.cli import main
    from madcluster.estimator.detector import MADCluster

    data = write_fleet(tmp_path / "fleet", 2)
    small = ["--window-size", "20", "--stride", "10", "--epochs", "1", "--quiet"]
    small += ["--hidden-size", "8", "--layers", "2", "--seed", "0"]
    for executor in ("threads", "sequential"):
        out = tmp_path / executor
        argv = ["fit", str(data), "-o", str(out), *small, "--executor", executor]
        assert main([*argv, "--num-cpus", "1"] if executor == "threads" else argv) == 0
    assert "2 entities with a model" in capsys.readouterr().out
    rows = np.random.default_rng(0).normal(size=(60, 3)).astype(np.float32)
    for entity in ("srv0", "srv1"):
        threaded = MADCluster.load(tmp_path / "threads" / f"{entity}.mcz")
        sequential = MADCluster.load(tmp_path / "sequential" / f"{entity}.mcz")
        np.testing.assert_array_equal(
            threaded.decision_function(rows), sequential.decision_function(rows)
        )
