"""The one entry point that computes every metric the paper reports, from scores and a threshold."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from madcluster.exceptions import DataError
from madcluster.metrics._validation import (
    check_binary,
    check_same_length,
    check_scores,
    check_window,
    require_anomaly,
    require_normal,
)
from madcluster.metrics.affiliation import affiliation_precision_recall
from madcluster.metrics.pointwise import precision_recall_f1, roc_and_pr
from madcluster.metrics.range_vus import range_and_vus

METRIC_KEYS: tuple[str, ...] = (
    "f1",
    "precision",
    "recall",
    "aff_precision",
    "aff_recall",
    "range_auc_roc",
    "range_auc_pr",
    "vus_roc",
    "vus_pr",
    "auc_roc",
    "auc_pr",
)


def evaluate(
    scores: ArrayLike,
    labels: ArrayLike,
    *,
    threshold: float,
    window: int = 100,
    range_on: Literal["scores", "predictions"] = "scores",
) -> dict[str, float]:
    """Every metric of the paper's tables for point-level anomaly ``scores`` and 0/1 ``labels``.

    Predictions are ``scores > threshold`` (strict, so a threshold equal to the largest score
    predicts nothing). How the threshold is chosen (train quantile, test ratio, oracle best-F1...)
    is the caller's protocol and must be reported with the result; see ``madcluster.evaluation``.

    * ``f1``, ``precision``, ``recall``: point-wise, on the predictions, no point adjustment.
    * ``aff_precision``, ``aff_recall``: affiliation metrics (Huet et al., KDD 2022) on the
      predictions. ``aff_precision`` is NaN when nothing is predicted (it is undefined, as in the
      reference code); ``precision`` and ``f1`` are 0 then (scikit-learn's ``zero_division=0``).
    * ``range_auc_roc``, ``range_auc_pr`` (buffer ``window``) and ``vus_roc``, ``vus_pr`` (buffers
      0..``window``), Paparrizos et al., VLDB 2022, with 250 thresholds, as ``vus`` 0.0.6 /
      TSB-AD ``get_metrics``. With ``range_on="scores"`` (default, as TSB-AD) they use
      the continuous scores; with ``range_on="predictions"`` they use the 0/1 predictions as the
      score, which is how the paper's released scripts report them.
    * ``auc_roc``, ``auc_pr``: threshold-free, on the continuous scores (scikit-learn's
      ``roc_auc_score`` and ``average_precision_score``).

    Raises:
        DataError (a ``ValueError``): length mismatch, non-finite scores, labels not 0/1, a NaN
        threshold, a bad ``window``/``range_on``, or labels with no anomaly or no normal point
        (recall, ROC and range metrics are undefined then).
    """
    s = check_scores(scores)
    lab = check_binary(labels, "labels")
    check_same_length(s, lab, "scores", "labels")
    require_anomaly(lab, "evaluation (recall, AUC, affiliation, range metrics)")
    require_normal(lab, "evaluation (ROC-AUC and range metrics)")
    window = check_window(window)
    try:
        thr = float(threshold)
    except (TypeError, ValueError):
        raise DataError(f"threshold must be a number, got {threshold!r}") from None
    if math.isnan(thr):
        raise DataError("threshold is NaN")
    if range_on not in ("scores", "predictions"):
        raise DataError(f"range_on must be 'scores' or 'predictions', got {range_on!r}")

    pred = s > thr
    prec, rec, f = precision_recall_f1(pred, lab)
    aff_p, aff_r = affiliation_precision_recall(pred, lab)
    range_input = s if range_on == "scores" else pred.astype(np.float64)
    r_roc, r_pr, v_roc, v_pr = range_and_vus(range_input, lab, window=window)
    roc, ap = roc_and_pr(s, lab)
    return {
        "f1": f,
        "precision": prec,
        "recall": rec,
        "aff_precision": aff_p,
        "aff_recall": aff_r,
        "range_auc_roc": r_roc,
        "range_auc_pr": r_pr,
        "vus_roc": v_roc,
        "vus_pr": v_pr,
        "auc_roc": roc,
        "auc_pr": ap,
    }
