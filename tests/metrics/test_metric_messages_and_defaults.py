"""Each metric's refusal names the argument and the metric in its first words (the whole message
start is matched, so a changed or lost name fails), the documented defaults (a window of 100,
250 thresholds), and corners of point adjustment and affiliation the reference cases miss."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

from madcluster.exceptions import DataError
from madcluster.metrics import (
    affiliation_precision_recall,
    auc_pr,
    auc_roc,
    evaluate,
    f1,
    point_adjusted_f1,
    precision,
    range_auc,
    range_auc_pr,
    range_auc_roc,
    recall,
    vus,
    vus_pr,
    vus_roc,
)

LABELS = np.array([0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0])
SCORES = np.array([0.1, 0.2, 0.9, 0.4, 0.8, 0.3, 0.1, 0.2, 0.7, 0.1, 0.6, 0.0])
NO_ANOMALY = np.zeros(12, dtype=int)
ALL_ANOMALOUS = np.ones(12, dtype=int)


def _evaluate(scores: np.ndarray, labels: np.ndarray) -> object:
    return evaluate(scores, labels, threshold=0.5)


SCORED: list[tuple[Callable, str]] = [
    (auc_roc, "ROC-AUC"),
    (range_auc, "Range-AUC"),
    (vus, "VUS"),
    (_evaluate, r"evaluation \(ROC-AUC and range metrics\)"),
]


@pytest.mark.parametrize(("metric", "name"), SCORED)
def test_scored_metrics_name_what_is_wrong(metric: Callable, name: str) -> None:
    with pytest.raises(DataError, match=r"^labels must contain only 0 and 1, found "):
        metric(SCORES, np.where(np.arange(12) == 3, 2, LABELS))
    with pytest.raises(DataError, match=r"^scores has 12 points but labels has 11: "):
        metric(SCORES, LABELS[:11])
    with pytest.raises(DataError, match=rf"^labels contain no normal point: {name} is undefined"):
        metric(SCORES, ALL_ANOMALOUS)


@pytest.mark.parametrize(
    ("metric", "name"),
    [
        (auc_roc, "ROC-AUC"),
        (auc_pr, "AUC-PR"),
        (range_auc, "Range-AUC"),
        (vus, "VUS"),
        (_evaluate, r"evaluation \(recall, AUC, affiliation, range metrics\)"),
        (point_adjusted_f1, "point-adjusted F1"),
    ],
)
def test_labels_without_an_anomaly_name_the_metric(metric: Callable, name: str) -> None:
    scores = SCORES > 0.5 if metric is point_adjusted_f1 else SCORES
    with pytest.raises(DataError, match=rf"^labels contain no anomaly: {name} is undefined"):
        metric(scores, NO_ANOMALY)


def test_pointwise_areas_name_their_arguments() -> None:
    for metric in (auc_roc, auc_pr):
        with pytest.raises(DataError, match=r"^labels must contain only 0 and 1"):
            metric(SCORES, LABELS * 3)
        with pytest.raises(DataError, match=r"^scores has 12 points but labels has 11: "):
            metric(SCORES, LABELS[:11])


def test_affiliation_names_predictions_and_labels() -> None:
    with pytest.raises(DataError, match=r"^predictions must contain only 0 and 1"):
        affiliation_precision_recall(LABELS * 2, LABELS)
    with pytest.raises(DataError, match=r"^labels must contain only 0 and 1"):
        affiliation_precision_recall(LABELS, LABELS * 2)


def test_a_nan_threshold_is_named() -> None:
    with pytest.raises(DataError, match=r"^threshold is NaN$"):
        evaluate(SCORES, LABELS, threshold=float("nan"))


def test_the_default_window_is_100() -> None:
    rng = np.random.default_rng(0)
    labels = np.zeros(400, dtype=int)
    labels[150:170] = labels[300:305] = 1
    scores = rng.random(400) + 0.5 * labels
    for pair, (roc, pr) in ((range_auc, (range_auc_roc, range_auc_pr)), (vus, (vus_roc, vus_pr))):
        at_100 = pair(scores, labels, window=100)
        assert at_100 != pair(scores, labels, window=101)  # the case tells 100 from 101
        assert pair(scores, labels) == at_100
        assert (roc(scores, labels), pr(scores, labels)) == at_100
    out = evaluate(scores, labels, threshold=0.9)
    assert (out["range_auc_roc"], out["range_auc_pr"]) == range_auc(scores, labels, window=100)
    assert (out["vus_roc"], out["vus_pr"]) == vus(scores, labels, window=100)


@pytest.mark.parametrize("n_thresholds", [2.5, 1.0, "3", True, 0])
def test_a_threshold_count_that_is_no_positive_integer_is_refused(n_thresholds: object) -> None:
    for metric in (range_auc, vus):
        with pytest.raises(DataError, match="n_thresholds must be a positive integer"):
            metric(SCORES, LABELS, window=4, n_thresholds=n_thresholds)


def test_one_threshold_is_enough() -> None:
    for metric in (range_auc, vus):
        assert all(np.isfinite(metric(SCORES, LABELS, window=4, n_thresholds=1)))


def test_point_adjustment_credits_a_segment_at_the_first_point() -> None:
    labels = np.array([1, 1, 1, 0, 0, 0, 1, 1, 0, 0])
    hit_last = np.array([0, 0, 1, 0, 0, 0, 0, 0, 0, 0])  # only the first segment's last point
    # both points of the first segment credited: tp 3, fp 0, fn 2
    assert point_adjusted_f1(hit_last, labels) == pytest.approx(2 * 3 / (2 * 3 + 2))
    assert point_adjusted_f1(np.roll(hit_last, -2), labels) == pytest.approx(6 / 8)


def test_affiliation_with_no_prediction_near_the_last_event() -> None:
    """The last event has no prediction in its zone: its precision is undefined and its recall
    0, and the arrays per event keep every event."""
    labels = np.zeros(60, dtype=int)
    labels[5:10] = labels[30:35] = labels[50:55] = 1
    pred = labels.copy()
    pred[50:55] = 0
    assert affiliation_precision_recall(pred, labels) == pytest.approx((1.0, 2 / 3))


@pytest.mark.parametrize("metric", [precision, recall, f1, point_adjusted_f1])
def test_binary_metrics_name_predictions_and_labels(metric: Callable) -> None:
    pred = (SCORES > 0.5).astype(int)
    with pytest.raises(DataError, match=r"^predictions must contain only 0 and 1"):
        metric(pred * 2, LABELS)
    with pytest.raises(DataError, match=r"^labels must contain only 0 and 1"):
        metric(pred, LABELS * 2)
    with pytest.raises(DataError, match=r"^predictions has 12 points but labels has 11: "):
        metric(pred, LABELS[:11])


def test_recall_and_f1_without_an_anomaly_name_themselves() -> None:
    for metric in (recall, f1):
        with pytest.raises(DataError, match=r"^labels contain no anomaly: recall/F1 is undefined"):
            metric(SCORES > 0.5, NO_ANOMALY)
    assert precision(np.zeros(12, dtype=int), NO_ANOMALY) == 0.0  # nothing predicted, nothing true


def test_affiliation_names_what_is_wrong() -> None:
    with pytest.raises(DataError, match=r"^predictions has 12 points but labels has 11: "):
        affiliation_precision_recall(LABELS, LABELS[:11])
    with pytest.raises(
        DataError, match=r"^labels contain no anomaly: affiliation precision/recall is undefined"
    ):
        affiliation_precision_recall(LABELS, NO_ANOMALY)


def test_affiliation_with_nothing_predicted_warns_of_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        precision_, recall_ = affiliation_precision_recall(np.zeros(12, dtype=int), LABELS)
    assert np.isnan(precision_) and recall_ == 0.0
