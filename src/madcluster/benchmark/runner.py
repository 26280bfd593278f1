"""The benchmark runner: train on a dataset's ``train`` split, score ``test``, evaluate every
protocol.

One :class:`~madcluster.benchmark.config.BenchmarkConfig` is one row of a results table::

    config = BenchmarkConfig(dataset="MSL", embedder="drnn", mode="full", seeds=(0, 1, 2),
                             epochs=5, stride=10)
    result = run_benchmark(config)          # also writes <out>/MSL_drnn_full.json + results.md

:func:`run_grid` runs many rows at once. Each row is split into independent tasks (one seed, and
with ``per_entity`` one entity: one fit + score + metrics each, :mod:`.fit_score`), run by an
executor (in this process, or on Ray), each written to ``<out>/tasks/`` as soon as it finishes
(:mod:`.store`), so a rerun skips finished tasks. Rows are then built from whatever has finished
(:mod:`.aggregate`) and written with :mod:`.report`.

Per task: the dataset is loaded once with :func:`madcluster.data.load_dataset` (concatenated
series, or each entity with ``per_entity``, the released code's protocol); the detector is built
(MADCluster with ``mode`` full / distance-only / cluster-only, or the PCA / KMeans baselines),
fitted on ``train`` (early stopping on the END of ``train``, never test data), and scored on
``test``; thresholds follow every protocol of :data:`madcluster.evaluation.PROTOCOLS`
(``train-quantile``, ``test-ratio`` and ``combined`` with the dataset's known test anomaly ratio
unless given, and the ORACLE ``best-f1``); the metrics of :func:`madcluster.metrics.evaluate`
follow, continuous-score ones once. Costs per task: parameters, MACs per window, training and
scoring time, peak RSS (:mod:`.cost`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from madcluster.benchmark.aggregate import BenchmarkResult, build_result
from madcluster.benchmark.config import BenchmarkConfig
from madcluster.benchmark.fit_score import run_task
from madcluster.benchmark.grid import Row, Task, dataset_key, plan_rows
from madcluster.benchmark.provenance import provenance
from madcluster.benchmark.report import write_result
from madcluster.benchmark.store import OK, TaskStore, failure_record
from madcluster.parallel.executors import Job, Outcome, Progress, make_executor

logger = logging.getLogger(__name__)

TASK_FOLDER = "tasks"


@dataclass
class GridResult:
    """What :func:`run_grid` did: a result per row that has one, and every failure."""

    results: list[BenchmarkResult]
    failures: list[dict[str, Any]] = field(default_factory=list)
    row_errors: dict[str, str] = field(default_factory=dict)  # row name -> why it has no result
    n_tasks: int = 0
    n_resumed: int = 0
    n_run: int = 0
    executor: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures and not self.row_errors


def run_benchmark(config: BenchmarkConfig) -> BenchmarkResult:
    """Train, score and evaluate ``config`` for every seed in this process; write it if ``out``.

    Raises ``RuntimeError`` when a task failed (the finished ones are kept for a rerun).
    """
    grid = run_grid([config], executor="sequential")
    if grid.failures:
        first = grid.failures[0]
        raise RuntimeError(
            f"{len(grid.failures)} task(s) of {config.result_name()} failed; first, "
            f"{first['name']} (seed {first['seed']}): {first['error']}"
        )
    if not grid.results:
        raise ValueError(next(iter(grid.row_errors.values())))
    return grid.results[0]


def run_grid(
    configs: Iterable[BenchmarkConfig],
    *,
    executor: str | Any = "sequential",
    ray_address: str | None = None,
    resume: bool = True,
    task_dir: str | Path | None = None,
    progress: bool | None = None,
    loader: Callable[..., Any] | None = None,
    executor_options: dict[str, Any] | None = None,
) -> GridResult:
    """Run every task of every row and write each row built from its finished tasks.

    executor: ``sequential``, ``ray``, ``auto`` or an executor object (see :mod:`.executors`);
        ``executor_options`` go to :func:`~madcluster.parallel.executors.make_executor`.
    resume: skip tasks whose result file is already in ``task_dir`` (default
        ``<out>/tasks`` of each row; with ``out=None`` nothing is kept between runs).
    Ctrl-C stops the run, writes the rows from what has finished, and re-raises.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("the grid is empty")
    if loader is None:
        from madcluster.data.datasets import load_dataset as loader
    runner = None  # an explicit executor starts its workers while the data loads
    if not isinstance(executor, str) or executor != "auto":
        runner = _executor(executor, ray_address, None, executor_options)
        if hasattr(runner, "warm_up"):
            runner.warm_up(["madcluster.benchmark.fit_score"])
    try:
        datasets, rows = _load_and_plan(configs, loader)
    except BaseException:
        if hasattr(runner, "close"):
            runner.close()  # the workers warm_up started
        raise
    tasks = [t for row in rows for t in row.tasks]
    stores = {id(row): _store(row.config, task_dir) for row in rows}
    store_of = {id(t): stores[id(row)] for row in rows for t in row.tasks}
    todo = []
    for task in tasks:
        if not resume:
            store_of[id(task)].forget(task)
        if store_of[id(task)].done(task) is None:
            todo.append(task)
    if runner is None:
        runner = _executor(executor, ray_address, len(todo), executor_options)
    todo_stores = [store_of[id(t)] for t in todo]
    if runner.name != "sequential":  # one torch thread per task unless the row says otherwise
        todo = [t if t.threads is not None else replace(t, threads=1) for t in todo]
    elif len(tasks) == 1 and todo:  # a single fit shows its epochs, as `madcluster fit` does
        todo = [replace(todo[0], show_epochs=todo[0].config.verbose)]
    verbose = any(c.verbose for c in configs) if progress is None else progress
    bar = Progress(len(tasks), done=len(tasks) - len(todo), enabled=verbose and len(tasks) > 1)
    arrays = {
        k: {"train": d.train, "test": d.test, "labels": d.labels} for k, d in datasets.items()
    }
    failures: list[dict[str, Any]] = []

    def on_done(job: Job, outcome: Outcome) -> None:
        task: Task = job.payload
        if outcome.ok:
            record = {**outcome.value, "status": OK}
        else:
            record = failure_record(task, outcome.error, outcome.traceback)
            failures.append(record)
            logger.warning("task %s/%s failed: %s", task.row, task.key, outcome.error)
        job_store[id(job)].put(task, record)

    jobs = [Job(f"{t.row}/{t.key}", t, t.data_key, size=_task_size(t)) for t in todo]
    job_store = {id(job): store for job, store in zip(jobs, todo_stores, strict=True)}
    try:
        runner.run(run_task, jobs, arrays, on_done, bar)
    finally:
        bar.close()
        grid = _write_rows(rows, stores, failures, runner.describe())
        grid.n_tasks, grid.n_resumed, grid.n_run = len(tasks), len(tasks) - len(todo), len(todo)
    return grid


def _load_and_plan(
    configs: Sequence[BenchmarkConfig], loader: Callable[..., Any]
) -> tuple[dict[str, Any], list[Row]]:
    """Load each dataset once and expand the configurations into rows of tasks."""
    datasets: dict[str, Any] = {}
    for config in configs:
        key = dataset_key(config)
        if key not in datasets:
            datasets[key] = loader(config.dataset, data_dir=config.data_dir)
    rows = plan_rows(configs, datasets)
    _check_names(rows)
    return datasets, rows


def _executor(
    executor: str | Any, ray_address: str | None, n_jobs: int | None, options: dict | None
) -> Any:
    if not isinstance(executor, str):
        return executor
    return make_executor(executor, ray_address=ray_address, n_jobs=n_jobs, **(options or {}))


def _task_size(task: Task) -> float:
    """Points the task trains on and scores: what its run time grows with."""
    return float(
        task.train_slice[1] - task.train_slice[0] + task.test_slice[1] - task.test_slice[0]
    )


def _check_names(rows: Sequence[Row]) -> None:
    """Two different rows writing one result file would overwrite each other: refuse."""
    seen: dict[tuple[str, str | None], str] = {}
    for row in rows:
        key = (row.name, row.config.out)
        fingerprint = row.config.fingerprint()
        if seen.setdefault(key, fingerprint) != fingerprint:
            raise ValueError(
                f"two rows of the grid are both named {row.name!r} but differ in their settings; "
                "give them different tags (--tag or 'tag' in the grid file)"
            )


def _store(config: BenchmarkConfig, task_dir: str | Path | None) -> TaskStore:
    if task_dir is not None:
        return TaskStore(task_dir)
    return TaskStore(Path(config.out) / TASK_FOLDER if config.out is not None else None)


def _write_rows(
    rows: Sequence[Row], stores: dict[int, TaskStore], failures: list, executor: dict
) -> GridResult:
    """Build every row from its finished tasks and write it (JSON + results.md) if ``out``."""
    grid = GridResult(results=[], failures=failures, executor=executor)
    shared = provenance("", None, **executor)  # git state and versions: once for every row
    for row in rows:
        store = stores[id(row)]
        records = {t.key: r for t in row.tasks if (r := store.done(t)) is not None}
        row_failures = [f for f in failures if f["row"] == row.name]
        argv = list(row.config.argv) if row.config.argv is not None else None
        prov = {**shared, "command": row.config.command(), "argv": argv}
        try:
            result = build_result(row, records, row_failures, prov)
        except ValueError as exc:
            grid.row_errors[row.name] = str(exc)
            continue
        if row.config.out is not None:
            result.path = write_result(result.to_dict(), row.config.out)
        grid.results.append(result)
    return grid


__all__ = ["TASK_FOLDER", "GridResult", "run_benchmark", "run_grid"]
