"""Point-wise metrics: precision / recall / F1 on binary predictions, ROC-AUC and average precision.

These are the classical per-time-point metrics reported by the paper and by TSB-AD's
``get_metrics`` (Liu & Paparrizos, NeurIPS 2024 Datasets & Benchmarks). The definitions are
those of scikit-learn, which TSB-AD calls:

* precision / recall / F1 of the anomaly class, with scikit-learn's ``zero_division=0``
  convention (TSB-AD ``metric_PointF1`` with given predictions);
* ROC-AUC = ``sklearn.metrics.roc_auc_score`` (ties in the scores count one half);
* AUC-PR = ``sklearn.metrics.average_precision_score`` (step-wise average precision, *not* the
  trapezoidal area, which is optimistic; TSB-AD ``metric_PR``).

They are reimplemented here in numpy (one sort, cumulative sums) so that the metrics package has
no dependency beyond numpy, and are tested against scikit-learn.

Point adjustment (``point_adjusted_f1``) is **not** used by default: it inflates scores (Kim et al.,
AAAI 2022) and the paper does not use it. It is provided only as an explicitly named extra.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from madcluster.metrics._segments import runs
from madcluster.metrics._validation import (
    check_binary,
    check_same_length,
    check_scores,
    require_anomaly,
    require_normal,
)

__all__ = [
    "auc_pr",
    "auc_roc",
    "f1",
    "point_adjusted_f1",
    "precision",
    "precision_recall_f1",
    "recall",
]


def _binary_pair(predictions: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    pred = check_binary(predictions, "predictions")
    lab = check_binary(labels, "labels")
    check_same_length(pred, lab, "predictions", "labels")
    return pred, lab


def _prf(pred: np.ndarray, lab: np.ndarray) -> tuple[float, float, float]:
    tp = int(np.count_nonzero(pred & lab))
    n_pred = int(np.count_nonzero(pred))
    n_true = int(np.count_nonzero(lab))
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_true if n_true else 0.0
    denom = n_pred + n_true  # = 2 tp + fp + fn
    f = 2 * tp / denom if denom else 0.0
    return p, r, f


def precision_recall_f1(predictions: ArrayLike, labels: ArrayLike) -> tuple[float, float, float]:
    """Precision, recall and F1 of the anomaly class on binary point predictions.

    ``F1 = 2 TP / (2 TP + FP + FN)``. With no predicted anomaly, precision (and so F1) is 0, as
    scikit-learn's ``precision_recall_fscore_support(..., zero_division=0)`` used by TSB-AD.

    Raises:
        DataError: inputs not 1-D 0/1 of equal length, or ``labels`` has no anomaly (recall and
            F1 are undefined).
    """
    pred, lab = _binary_pair(predictions, labels)
    require_anomaly(lab, "recall/F1")
    return _prf(pred, lab)


def precision(predictions: ArrayLike, labels: ArrayLike) -> float:
    """Point-wise precision ``TP / (TP + FP)``; 0 when nothing is predicted (sklearn convention).

    Defined even when ``labels`` has no anomaly (it is then 0 if anything is predicted).
    """
    pred, lab = _binary_pair(predictions, labels)
    return _prf(pred, lab)[0]


def recall(predictions: ArrayLike, labels: ArrayLike) -> float:
    """Point-wise recall ``TP / (TP + FN)``; raises if ``labels`` has no anomaly."""
    return precision_recall_f1(predictions, labels)[1]


def f1(predictions: ArrayLike, labels: ArrayLike) -> float:
    """Point-wise F1 of the anomaly class (no point adjustment); raises if no anomaly."""
    return precision_recall_f1(predictions, labels)[2]


def _score_pair(scores: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    s = check_scores(scores)
    lab = check_binary(labels, "labels")
    check_same_length(s, lab, "scores", "labels")
    return s, lab


def _curve_counts(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative true/false positives at every distinct threshold, highest first.

    Entry ``k`` counts the points whose score is ``>=`` the k-th largest distinct score: tied
    points enter together, which is what makes ties count one half in the ROC area.
    """
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    last_of_value = np.flatnonzero(s[1:] != s[:-1])
    idx = np.concatenate([last_of_value, [s.size - 1]])
    tps = np.cumsum(labels[order], dtype=np.int64)[idx]
    fps = idx + 1 - tps
    return tps, fps


def _roc_area(tps: np.ndarray, fps: np.ndarray) -> float:
    tpr = np.concatenate([[0.0], tps / tps[-1]])
    fpr = np.concatenate([[0.0], fps / fps[-1]])
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2.0))


def _average_precision(tps: np.ndarray, fps: np.ndarray) -> float:
    prec = tps / (tps + fps)
    rec = tps / tps[-1]
    return float(np.sum(np.diff(rec, prepend=0.0) * prec))


def roc_and_pr(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """``(auc_roc, auc_pr)`` of already-validated arrays with both classes, sharing one sort."""
    tps, fps = _curve_counts(scores, labels)
    return _roc_area(tps, fps), _average_precision(tps, fps)


def auc_roc(scores: ArrayLike, labels: ArrayLike) -> float:
    """Area under the ROC curve of continuous ``scores`` (higher = more anomalous).

    Same value as ``sklearn.metrics.roc_auc_score``: trapezoidal area over every distinct
    threshold, so tied scores count one half.

    Raises:
        DataError: bad inputs, or ``labels`` lacks either class (the ROC curve is undefined).
    """
    s, lab = _score_pair(scores, labels)
    require_anomaly(lab, "ROC-AUC")
    require_normal(lab, "ROC-AUC")
    return _roc_area(*_curve_counts(s, lab))


def auc_pr(scores: ArrayLike, labels: ArrayLike) -> float:
    """Average precision of continuous ``scores``: ``sum_k (R_k - R_{k-1}) P_k``.

    Same value as ``sklearn.metrics.average_precision_score`` (used by TSB-AD as AUC-PR): the
    step-wise area under the precision-recall curve, one step per distinct threshold. The
    trapezoidal rule is not used because it over-estimates the area between far-apart points.

    Raises:
        DataError: bad inputs, or ``labels`` has no anomaly (recall is undefined).
    """
    s, lab = _score_pair(scores, labels)
    require_anomaly(lab, "AUC-PR")
    return _average_precision(*_curve_counts(s, lab))


def point_adjusted_f1(predictions: ArrayLike, labels: ArrayLike) -> float:
    """F1 after *point adjustment* (Xu et al., WWW 2018) — an explicitly named extra, not a
    default.

    Every ground-truth anomaly segment that contains at least one predicted point counts as fully
    detected (all its points become predicted); then the point-wise F1 is taken. This uses the test
    labels to alter the predictions and is known to overstate performance (Kim et al., AAAI 2022),
    which is why the paper and this package do not report it by default.

    Note: the common ``adjust_predicts`` loop (TSB-AD ``_adjust_predicts`` and the code derived
    from OmniAnomaly) walks back with ``range(i, 0, -1)`` and so never credits index 0 when a
    segment starting at the first point is detected later; here the whole segment is credited.
    Apart from that corner case the value equals TSB-AD's ``metric_PointF1PA`` with predictions.
    """
    pred, lab = _binary_pair(predictions, labels)
    require_anomaly(lab, "point-adjusted F1")
    starts, stops = runs(lab)
    csum = np.concatenate([[0], np.cumsum(pred, dtype=np.int64)])
    hit = csum[stops] - csum[starts] > 0
    marks = np.zeros(lab.size + 1, dtype=np.int64)
    np.add.at(marks, starts[hit], 1)
    np.add.at(marks, stops[hit], -1)
    adjusted = pred | (np.cumsum(marks[:-1]) > 0)
    return _prf(adjusted, lab)[2]
