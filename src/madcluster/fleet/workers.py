"""What runs in a fleet's worker: one entity's file read there, fitted or scored, and what the
main process writes sent back (a model file's bytes; scores, top channels, metrics, the PNG).

Why a module of its own: these are the functions an executor ships to its workers (on Ray, by
reference to this module); they write no file, so outputs need no shared storage.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from madcluster.data.columns import check_columns, feature_values
from madcluster.data.io import read_table
from madcluster.data.scores_table import input_columns
from madcluster.estimator.attribution import top_channels
from madcluster.fleet.entities import MODEL_SUFFIX
from madcluster.metrics import evaluate
from madcluster.threads import torch_threads


def fit_entity(payload: tuple[str, Path, dict[str, Any]], _data: Any = None) -> dict[str, Any]:
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


def score_entity(payload: tuple[str, tuple[Path, Path], dict[str, Any]], _data: Any = None) -> dict:
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
