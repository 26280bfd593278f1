"""Every metric of a score series under each threshold protocol's threshold.

The threshold-dependent metrics (F1, precision, recall, affiliation) are computed per protocol; the
continuous-score ones (Range-AUC, VUS, AUC) once, since no threshold changes them (except under
released-protocol step d, which computes them on the 0/1 predictions).
"""

from __future__ import annotations

import numpy as np

from madcluster.metrics import METRIC_KEYS, evaluate
from madcluster.metrics.affiliation import affiliation_precision_recall
from madcluster.metrics.pointwise import precision_recall_f1

# metrics that depend on the threshold (computed per protocol) and those that do not (computed once)
THRESHOLD_METRICS = ("f1", "precision", "recall", "aff_precision", "aff_recall")
CONTINUOUS_METRICS = tuple(k for k in METRIC_KEYS if k not in THRESHOLD_METRICS)
METRICS = THRESHOLD_METRICS + CONTINUOUS_METRICS


def continuous_metrics(
    scores: np.ndarray, labels: np.ndarray, *, window: int = 100
) -> dict[str, float]:
    """The threshold-independent metrics (Range-AUC, VUS, AUC) of continuous ``scores``."""
    # any threshold: the continuous metrics do not depend on it (the point metrics are discarded)
    values = evaluate(scores, labels, threshold=float(np.median(scores)), window=window)
    return {k: float(values[k]) for k in CONTINUOUS_METRICS}


def evaluate_protocols(
    scores: np.ndarray,
    labels: np.ndarray,
    thresholds: dict[str, float],
    *,
    window: int = 100,
    range_on: str = "scores",
) -> dict[str, dict[str, float]]:
    """Every metric for each protocol's threshold; the continuous-score ones are computed once.

    ``range_on="predictions"`` (released-protocol step d) computes Range-AUC / VUS on each
    protocol's 0/1 predictions, so they are computed per protocol; AUC-ROC / AUC-PR stay on the
    scores.
    """
    out: dict[str, dict[str, float]] = {}
    shared: dict[str, float] | None = None
    if range_on == "predictions":
        for protocol, threshold in thresholds.items():
            full = evaluate(scores, labels, threshold=threshold, window=window, range_on=range_on)
            out[protocol] = {k: float(full[k]) for k in METRICS}
        return out
    if range_on != "scores":
        raise ValueError(f"range_on must be 'scores' or 'predictions', got {range_on!r}")
    for protocol, threshold in thresholds.items():
        if shared is None:
            full = evaluate(scores, labels, threshold=threshold, window=window)
            shared = {k: full[k] for k in CONTINUOUS_METRICS}
            out[protocol] = {k: float(full[k]) for k in METRICS}
            continue
        pred = np.asarray(scores, dtype=np.float64) > threshold
        p, r, f = precision_recall_f1(pred, labels)
        aff_p, aff_r = affiliation_precision_recall(pred, labels)
        values = {
            "f1": f,
            "precision": p,
            "recall": r,
            "aff_precision": aff_p,
            "aff_recall": aff_r,
            **shared,
        }
        out[protocol] = {k: float(values[k]) for k in METRICS}
    return out


__all__ = [
    "CONTINUOUS_METRICS",
    "METRICS",
    "THRESHOLD_METRICS",
    "continuous_metrics",
    "evaluate_protocols",
]
