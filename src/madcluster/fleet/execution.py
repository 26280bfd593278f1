"""``fit_fleet`` and ``score_fleet``: one job per entity given to an executor
(:mod:`madcluster.parallel.executors`), each output written atomically in this process as it
arrives; a file that cannot be read or a fit that fails is reported for its entity, and the
other entities finish (the room's docstring: :mod:`madcluster.fleet`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.atomic import atomic_path, atomic_write_bytes
from madcluster.data.scores_table import scores_frame
from madcluster.fleet.entities import (
    MODEL_SUFFIX,
    PLOT_SUFFIX,
    SCORES_SUFFIX,
    FleetResult,
    entity_files,
)
from madcluster.fleet.workers import fit_entity, score_entity
from madcluster.parallel.executors import Job, Outcome, Progress, make_executor


def fit_fleet(
    data: str | os.PathLike,
    output: str | os.PathLike,
    *,
    params: Mapping[str, Any] | None = None,
    read_options: Mapping[str, Any] | None = None,
    executor: str | Any = "auto",
    ray_address: str | None = None,
    threads: int | None = None,
    resume: bool = False,
    progress: bool = True,
    executor_options: Mapping[str, Any] | None = None,
    on_entity: Callable[[str, dict[str, Any]], None] | None = None,
) -> FleetResult:
    """Fit one MADCluster per file of ``data`` and write ``<output>/<entity>.mcz``.

    params: the detector's parameters, the same for every entity (``MADCluster`` constructor
        arguments, and ``preset``; see :func:`~madcluster.factory.make_detector`).
    read_options: :func:`~madcluster.data.io.read_table` options (``label_column``, ...).
    resume: skip entities whose model file already exists.
    threads: torch threads per model, as the estimator's ``n_jobs`` (default: one;
        :mod:`madcluster.threads`).
    progress: a bar over entities on a terminal (never in a redirected stderr).
    on_entity: called here with ``(entity, details)`` as each entity finishes (details include
        its training ``history``), e.g. to print epoch lines.
    """
    files = entity_files(data)
    out = Path(output)
    result = FleetResult()
    todo = {}
    for entity, path in files.items():
        target = out / f"{entity}{MODEL_SUFFIX}"
        if resume and target.is_file():
            result.skipped.append(entity)
            result.outputs[entity] = target
        else:
            todo[entity] = path
    payload = {"params": dict(params or {}), "read": dict(read_options or {})}

    def write(entity: str, value: dict[str, Any]) -> Path:
        target = out / f"{entity}{MODEL_SUFFIX}"
        atomic_write_bytes(target, lambda fh: fh.write(value.pop("model")))
        return target

    execution = _Execution(executor, ray_address, threads, progress, executor_options, on_entity)
    return execution.run(todo, payload, fit_entity, write, result)


def score_fleet(
    models: str | os.PathLike,
    data: str | os.PathLike,
    output: str | os.PathLike | None = None,
    *,
    threshold: float | None = None,
    read_options: Mapping[str, Any] | None = None,
    device: str = "cpu",
    executor: str | Any = "auto",
    ray_address: str | None = None,
    threads: int | None = None,
    progress: bool = True,
    executor_options: Mapping[str, Any] | None = None,
    explain: bool = True,
    plot: bool = True,
    on_entity: Callable[[str, dict[str, Any]], None] | None = None,
) -> FleetResult:
    """Score every file of ``data`` with its entity's model; write ``<output>/<entity>.scores.csv``
    and ``<entity>.scores.png``, as ``madcluster score`` does for one file.

    models: a folder of ``<entity>.mcz`` (from :func:`fit_fleet`), or one model file used for
        every entity. output: default ``<data>.scores`` next to the data folder.
    explain: add the ``top_channels`` column (:meth:`MADCluster.explain`); plot: write the PNG.
    on_entity: called here with ``(entity, details)`` as each entity finishes (details include
        its ``metrics`` when the file has labels).
    """
    files = entity_files(data)
    out = Path(output) if output is not None else Path(str(Path(data)).rstrip("/") + ".scores")
    result = FleetResult()
    todo = {}
    for entity, path in files.items():
        model = Path(models) if Path(models).is_file() else Path(models) / f"{entity}{MODEL_SUFFIX}"
        if not model.is_file():
            result.failures[entity] = f"no model {model}"
            continue
        todo[entity] = (path, model)
    payload = {
        "read": dict(read_options or {}),
        "threshold": threshold,
        "device": device,
        "explain": explain,
        "plot": plot,
    }

    def write(entity: str, value: dict[str, Any]) -> Path:

        frame = scores_frame(
            value.pop("scores"),
            value.pop("predicted"),
            labels=value.pop("labels"),
            timestamp_column=value.pop("timestamp_column"),
            timestamps=value.pop("timestamps"),
            top_channels=value.pop("top_channels"),
        )
        target = out / f"{entity}{SCORES_SUFFIX}"
        with atomic_path(target) as tmp:
            frame.to_csv(tmp, index_label="row")
        png = value.pop("png")
        if png is not None:
            atomic_write_bytes(out / f"{entity}{PLOT_SUFFIX}", lambda fh: fh.write(png))
        return target

    execution = _Execution(executor, ray_address, threads, progress, executor_options, on_entity)
    return execution.run(todo, payload, score_entity, write, result)


@dataclass(frozen=True)
class _Execution:
    """How a fleet's jobs run: the executor (a name for :func:`make_executor` with
    ``ray_address`` and ``options``, or an executor), torch ``threads`` per job, the ``progress``
    bar, and ``on_entity`` called as each entity finishes."""

    executor: str | Any
    ray_address: str | None
    threads: int | None
    progress: bool
    options: Mapping[str, Any] | None
    on_entity: Callable[[str, dict[str, Any]], None] | None = None

    def run(
        self,
        todo: Mapping[str, Any],
        payload: dict[str, Any],
        fn: Callable[[Any, Any], dict[str, Any]],
        write: Callable[[str, dict[str, Any]], Path],
        result: FleetResult,
    ) -> FleetResult:
        """Run one job per entity and write each output as it arrives."""
        runner = (
            make_executor(
                self.executor,
                ray_address=self.ray_address,
                n_jobs=len(todo),
                **(self.options or {}),
            )
            if isinstance(self.executor, str)
            else self.executor
        )
        jobs = [
            Job(entity, (entity, item, {**payload, "threads": self.threads}))
            for entity, item in todo.items()
        ]
        total = len(todo) + len(result.skipped)
        # tqdm redraws only on a terminal: in a redirected stderr they are kilobytes of escape codes
        # (the caller's on_entity prints plain lines there instead)
        shown = self.progress and total > 1 and sys.stderr.isatty()
        bar = Progress(total, desc="entities", done=len(result.skipped), enabled=shown)

        def on_done(job: Job, outcome: Outcome) -> None:
            if not outcome.ok:
                result.failures[job.key] = outcome.error
                return
            try:
                result.outputs[job.key] = write(job.key, dict(outcome.value))
                result.details[job.key] = {
                    k: v
                    for k, v in outcome.value.items()
                    if np.isscalar(v) or k in ("metrics", "history")
                }
                if self.on_entity is not None:
                    self.on_entity(job.key, result.details[job.key])
            except Exception as exc:  # noqa: BLE001 - one unwritable output must not stop the rest
                result.failures[job.key] = f"writing the output failed: {type(exc).__name__}: {exc}"

        try:
            runner.run(fn, jobs, {}, on_done, bar)
        finally:
            bar.close()
            result.executor = runner.describe()
        return result
