"""Fleets: one model per entity (server, machine, channel), one file per entity, fitted in parallel.

::

    from madcluster.fleet import fit_fleet, score_fleet
    fit_fleet("servers/", "models/", params={"window_size": 50, "epochs": 5}, executor="ray")
    score_fleet("models/", "servers-today/", "scores/")

``servers/`` holds one CSV / Parquet / ``.npy`` file per entity; the entity is the file name
without its ending. ``fit_fleet`` writes ``models/<entity>.mcz``; ``score_fleet`` writes
``scores/<entity>.scores.csv`` and ``.scores.png``, as ``madcluster score`` does for one file
(timestamp column, ``top_channels``, labels and metrics with ``label_column``).

Each entity is one job of an executor (:mod:`madcluster.parallel.executors`): in this process,
or on Ray with one CPU and one torch thread per model. Workers read their input file themselves
(on a cluster: shared storage) and send the fitted model or the scores back, and this process
writes every output file atomically, so outputs need no shared storage. A file that cannot be read
or a fit that fails is reported for its entity, and the other entities finish.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.atomic import atomic_path, atomic_write_bytes
from madcluster.data.columns import check_columns, feature_values
from madcluster.data.io import read_table
from madcluster.data.scores_table import input_columns, scores_frame
from madcluster.data.table import SUPPORTED_SUFFIXES
from madcluster.estimator.attribution import top_channels
from madcluster.exceptions import ParameterError
from madcluster.metrics import evaluate
from madcluster.parallel.executors import Job, Outcome, Progress, make_executor
from madcluster.threads import torch_threads

MODEL_SUFFIX = ".mcz"
SCORES_SUFFIX = ".scores.csv"
PLOT_SUFFIX = ".scores.png"


@dataclass
class FleetResult:
    """Per entity, what was written (``outputs``) or why not (``failures``: entity -> error)."""

    outputs: dict[str, Path] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    executor: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


def entity_files(folder: str | os.PathLike) -> dict[str, Path]:
    """``{entity: file}`` for every readable series file in ``folder`` (sorted by entity)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{str(folder)!r} is not a folder of entity files")
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        entity = entity_name(path)
        if entity is None or not path.is_file() or path.name.endswith(SCORES_SUFFIX):
            continue
        if entity in found:
            raise ParameterError(
                f"two files for entity {entity!r}: {found[entity].name}, {path.name}"
            )
        found[entity] = path
    if not found:
        raise FileNotFoundError(
            f"no series files in {str(folder)!r} (endings: {', '.join(SUPPORTED_SUFFIXES)})"
        )
    return found


def entity_name(path: str | os.PathLike) -> str | None:
    """The file name without its series ending (``m-1.csv.gz`` -> ``m-1``); None if not a series."""
    name = Path(path).name
    for suffix in sorted(SUPPORTED_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


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
    return execution.run(todo, payload, _fit_one, write, result)


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
    return execution.run(todo, payload, _score_one, write, result)


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


def _fit_one(payload: tuple[str, Path, dict[str, Any]], _data: Any = None) -> dict[str, Any]:
    """In a worker: read one entity's file, fit, and return the model file's bytes."""
    from madcluster.factory import make_detector

    entity, path, options = payload
    table = read_table(path, **options["read"])
    started = time.perf_counter()
    detector = make_detector(options["params"])
    if "n_jobs" in detector.get_params():  # the fleet's threads per model (baselines have none)
        detector.set_params(n_jobs=options["threads"])
    with torch_threads(options["threads"]):  # named columns are recorded and checked at score
        detector.fit(feature_values(table, str(path)))
    seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / f"{entity}{MODEL_SUFFIX}"
        detector.save(file)
        model = file.read_bytes()
    history = getattr(detector, "history_", None) or {}
    return {
        "model": model,
        "n_rows": int(table.values.shape[0]),
        "n_features": int(table.values.shape[1]),
        "epochs_run": len(history.get("epoch", [])),
        "train_seconds": seconds,
        "threshold": float(detector.threshold_),
        "history": history,
    }


def _score_one(payload: tuple[str, tuple[Path, Path], dict[str, Any]], _data: Any = None) -> dict:
    """In a worker: read one entity's file and its model; return what ``madcluster score``
    writes for one file (scores, timestamps, top channels, metrics with labels, the PNG)."""
    from madcluster.estimator.detector import MADCluster

    entity, (path, model), options = payload
    table = read_table(path, **options["read"])
    with torch_threads(options["threads"]):
        detector = MADCluster.load(model, device=options["device"]).set_params(
            n_jobs=options["threads"]
        )
        check_columns(table, str(path), detector, label_column=options["read"].get("label_column"))
        X = feature_values(table, str(path))
        scores = detector.decision_function(X)
    threshold = detector.threshold_ if options["threshold"] is None else options["threshold"]
    predicted = (scores > threshold).astype(np.int64)
    with torch_threads(options["threads"]):
        contributions = detector.explain(X, rows=predicted == 1) if options.get("explain") else None
    channels = None if contributions is None else top_channels(contributions, table.columns)
    return {
        "scores": scores,
        "predicted": predicted,
        **input_columns(table, channels),
        "png": _plot_png(entity, scores, threshold, table, X, contributions)
        if options.get("plot")
        else None,
        "metrics": _metrics(scores, table.labels, threshold),
        "threshold": float(threshold),
        "n_rows": len(scores),
        "n_above": int(predicted.sum()),
    }


def _metrics(
    scores: np.ndarray, labels: np.ndarray | None, threshold: float
) -> dict[str, float] | None:
    """``madcluster score``'s metrics, when the file has labels of both classes."""
    if labels is None or labels.min() == labels.max():
        return None

    return {k: float(v) for k, v in evaluate(scores, labels, threshold=threshold).items()}


def _plot_png(
    entity: str, scores: np.ndarray, threshold: float, table: Any, X: Any, contributions: Any
) -> bytes:
    """The single-file score plot as PNG bytes (the main process writes the file)."""
    import io

    from madcluster.viz import plot_scores

    figure = plot_scores(
        scores,
        threshold,
        table.labels,
        X=X,
        contributions=contributions,
        timestamps=table.timestamps,
        title=f"MADCluster scores: {entity}",
    )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


__all__ = [
    "FleetResult",
    "entity_files",
    "entity_name",
    "fit_fleet",
    "score_fleet",
]
