"""One task: build the detector, fit on train, score test, threshold under every protocol, metrics.

:func:`run_task` is what an executor calls, in this process or in a Ray worker; it takes the
dataset's arrays (``train``, ``test``, ``labels``) and cuts out the task's entity itself, so one
copy of each dataset serves every task.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from madcluster.benchmark.cost import PeakRSS, model_cost, process_max_rss_mb
from madcluster.benchmark.schema import TASK_SCHEMA
from madcluster.evaluation.protocols import continuous_metrics, evaluate_protocols
from madcluster.evaluation.released_protocol import (
    describe_steps,
    detector_overrides,
    fit_arguments,
    not_applied,
    window_labels,
    window_scores,
)
from madcluster.evaluation.thresholds import compute_thresholds
from madcluster.factory import make_detector
from madcluster.threads import torch_threads

if TYPE_CHECKING:
    from madcluster.benchmark.config import BenchmarkConfig
    from madcluster.benchmark.grid import Task


def detector_params(config: BenchmarkConfig, seed: int, *, verbose: bool = False) -> dict[str, Any]:
    """The parameters of ``config``'s detector for one seed (for
    :func:`~madcluster.factory.make_detector`).

    ``config.detector_params`` go to the constructor as they are (over everything else), so
    options the detector gains later need no change here. Released-protocol step ``a`` adds
    ``scaling="minmax"`` where the detector has that option.
    """
    extra = dict(config.detector_params or {})
    if config.is_baseline:
        size = (
            {"n_components": config.n_components}
            if config.detector == "pca"
            else {"n_centroids": config.n_centroids}
        )
        params = {
            "window_size": config.window_size,
            "stride": config.stride,
            "contamination": config.contamination,
            "random_state": seed,
            **size,
        }
        return {"detector": config.detector, **params, **extra}
    from madcluster.estimator.detector import MADCluster

    params = {
        "embedder": config.embedder,
        "embedder_params": config.resolved_embedder_params(),
        "window_size": config.window_size,
        "stride": config.stride or 1,
        "epochs": config.epochs,
        "batch_size": config.batch_size,
        "lr": config.lr,
        "weight_decay": config.weight_decay,
        "validation_size": config.validation_size,
        "patience": config.patience,
        "mode": config.mode,
        "contamination": config.contamination,
        "random_state": seed,
        "device": config.device,
        "verbose": verbose,
        # every window in every epoch: the budget the stored results were measured with (set
        # detector_params={"epoch_windows": N} for the library default's sampling)
        "epoch_windows": None,
    }
    overrides = detector_overrides(config.released_steps, MADCluster().get_params())
    return {**params, **overrides, **extra}


def run_task(task: Task, data: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Fit, score and evaluate one (row, seed, entity); returns the JSON-able task record."""
    started = time.time()
    with torch_threads(task.threads):
        record = _fit_score(task, data)
    record.update(
        schema=TASK_SCHEMA,
        row=task.row,
        key=task.key,
        fingerprint=task.fingerprint,
        seed=task.seed,
        entity=task.entity,
        host=socket.gethostname(),
        pid=os.getpid(),
        wall_seconds=time.time() - started,
        process_max_rss_mb=process_max_rss_mb(),
    )
    return record


def _fit_score(task: Task, data: Mapping[str, np.ndarray]) -> dict[str, Any]:
    config = task.config
    train = data["train"][slice(*task.train_slice)]
    test = data["test"][slice(*task.test_slice)]
    labels = data["labels"][slice(*task.test_slice)]
    record: dict[str, Any] = {
        "name": task.part_name,
        "n_train": len(train),
        "n_test": len(test),
        "test_anomaly_ratio": float(labels.mean()) if len(labels) else 0.0,
    }
    if len(train) < config.window_size or len(test) < config.window_size:
        record["skipped"] = f"shorter than one window ({config.window_size})"
        return record
    steps = config.released_steps
    detector = make_detector(detector_params(config, task.seed, verbose=task.show_epochs))
    if "n_jobs" in detector.get_params():
        # the task's threads (None: one), not the default's
        detector.set_params(n_jobs=task.threads)
    if steps:
        record["released_protocol"] = {
            **describe_steps(steps),
            "not_applied": not_applied(steps, detector),
        }
    with PeakRSS() as memory:
        t0 = time.perf_counter()
        detector.fit(train, **fit_arguments(steps, detector, test))
        t1 = time.perf_counter()
        if "b" in steps:  # stride-1 windows, scored and labelled as whole windows
            scores, how = window_scores(detector, test, config.window_size)
            train_scores, _ = window_scores(detector, train, config.window_size)
            labels = window_labels(labels, config.window_size)
            record["released_protocol"]["window_scoring"] = how
            record["released_protocol"]["window_anomaly_ratio"] = float(labels.mean())
        else:
            scores = detector.decision_function(test)
            train_scores = detector.decision_scores_
        t2 = time.perf_counter()
    if scores.shape != (len(labels),):
        raise RuntimeError(f"{task.part_name}: {scores.shape} scores for {len(labels)} labels")
    if not np.isfinite(scores).all():
        raise FloatingPointError(f"{task.part_name}: non-finite anomaly scores")
    record.update(
        train_seconds=t1 - t0,
        score_seconds=t2 - t1,
        peak_rss_mb=memory.peak_mb,
        n_scores=len(scores),
    )
    record.update(model_cost(detector, config.window_size))
    history = getattr(detector, "history_", None)
    if history:
        record["history"] = history_summary(history)
    if labels.min() == labels.max():
        record["skipped"] = "test labels are all one class: metrics undefined"
        return record
    thresholds = compute_thresholds(
        train_scores,
        scores,
        labels,
        contamination=config.contamination,
        anomaly_ratio=task.anomaly_ratio,
    )
    record["thresholds"] = {k: v.value for k, v in thresholds.items()}
    record["metrics"] = evaluate_protocols(
        scores,
        labels,
        record["thresholds"],
        window=config.metric_window,
        range_on="predictions" if "d" in steps else "scores",
    )
    if "d" in steps:  # what the same scores give without step d: columns b and c of a decomposition
        record["metrics_on_scores"] = continuous_metrics(
            scores, labels, window=config.metric_window
        )
    return record


def history_summary(history: Mapping[str, list[float]]) -> dict[str, Any]:
    """Epochs run, the restored (best-validation) epoch and the head's curves.

    Head-specific curves (``nu`` and ``radius`` of the single-cluster head) are summarised when
    the history has them, so other heads need no change here.
    """
    val = np.asarray(history.get("val_loss", []), dtype=np.float64)
    n = len(history.get("epoch", val))
    best = int(np.nanargmin(val)) + 1 if np.isfinite(val).any() else max(n, 1)
    out: dict[str, Any] = {"epochs_run": n, "best_epoch": best}  # best = the restored state
    for key in ("nu", "radius"):
        if history.get(key):
            out[f"final_{key}"] = float(history[key][-1])
            out[f"best_{key}"] = float(history[key][best - 1])
    if history.get("train_loss"):
        out["final_train_loss"] = float(history["train_loss"][-1])
    out["best_val_loss"] = float(val[best - 1]) if np.isfinite(val).any() else float("nan")
    if history.get("seconds"):
        out["seconds_per_epoch"] = float(np.mean(history["seconds"]))
    for key in ("nu", "radius", "train_loss", "val_loss"):
        if key in history:
            out[key] = [float(v) for v in history[key]]
    return out


__all__ = ["detector_params", "history_summary", "run_task"]
