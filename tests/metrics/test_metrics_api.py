"""The public API: ``evaluate``'s contract, input validation, undefined cases, and speed."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from metric_cases import smd_like

from madcluster.exceptions import DataError
from madcluster.metrics import (
    METRIC_KEYS,
    affiliation_precision,
    affiliation_precision_recall,
    affiliation_recall,
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


def test_evaluate_has_exactly_the_documented_keys() -> None:
    out = evaluate(SCORES, LABELS, threshold=0.5)
    assert tuple(out) == METRIC_KEYS
    assert set(out) == {
        "f1", "precision", "recall", "aff_precision", "aff_recall", "range_auc_roc",
        "range_auc_pr", "vus_roc", "vus_pr", "auc_roc", "auc_pr",
    }  # fmt: skip
    assert all(isinstance(v, float) for v in out.values())


def test_evaluate_equals_the_individual_functions() -> None:
    out = evaluate(SCORES, LABELS, threshold=0.5, window=4)
    pred = SCORES > 0.5
    assert out["precision"] == precision(pred, LABELS)
    assert out["recall"] == recall(pred, LABELS)
    assert out["f1"] == f1(pred, LABELS)
    assert out["aff_precision"] == affiliation_precision(pred, LABELS)
    assert out["aff_recall"] == affiliation_recall(pred, LABELS)
    assert out["range_auc_roc"] == pytest.approx(range_auc_roc(SCORES, LABELS, window=4), abs=1e-15)
    assert out["range_auc_pr"] == pytest.approx(range_auc_pr(SCORES, LABELS, window=4), abs=1e-15)
    assert out["vus_roc"] == pytest.approx(vus_roc(SCORES, LABELS, window=4), abs=1e-15)
    assert out["vus_pr"] == pytest.approx(vus_pr(SCORES, LABELS, window=4), abs=1e-15)
    assert out["auc_roc"] == auc_roc(SCORES, LABELS)
    assert out["auc_pr"] == auc_pr(SCORES, LABELS)


def test_threshold_is_strict() -> None:
    # 0.9 is the top score: "> 0.9" predicts nothing, "> 0.8" predicts exactly that point.
    out = evaluate(SCORES, LABELS, threshold=0.9)
    assert out["precision"] == 0.0 and out["recall"] == 0.0 and out["f1"] == 0.0
    out = evaluate(SCORES, LABELS, threshold=0.8)
    assert out["precision"] == 1.0 and out["recall"] == pytest.approx(1 / 4)


def test_nothing_predicted() -> None:
    """Documented behaviour: precision/F1 = 0 (sklearn zero_division=0), aff_precision = NaN
    (undefined in Huet et al.'s code), aff_recall = 0."""
    out = evaluate(SCORES, LABELS, threshold=10.0)
    assert out["precision"] == 0.0 and out["f1"] == 0.0
    assert math.isnan(out["aff_precision"])
    assert out["aff_recall"] == 0.0
    assert 0.0 <= out["auc_roc"] <= 1.0


def test_range_on_predictions_uses_the_binary_predictions() -> None:
    out = evaluate(SCORES, LABELS, threshold=0.5, window=4, range_on="predictions")
    pred = (SCORES > 0.5).astype(float)
    assert out["range_auc_roc"] == pytest.approx(range_auc(pred, LABELS, window=4)[0], abs=1e-15)
    assert out["vus_pr"] == pytest.approx(vus(pred, LABELS, window=4)[1], abs=1e-15)
    assert out["auc_roc"] == auc_roc(SCORES, LABELS)  # threshold-free metrics stay on scores


def test_perfect_detector() -> None:
    out = evaluate(LABELS * 2.0, LABELS, threshold=1.0, window=2)
    for key in ("f1", "precision", "recall", "aff_precision", "aff_recall", "auc_roc", "auc_pr"):
        assert out[key] == pytest.approx(1.0), key


def test_accepts_bool_lists_and_float_labels() -> None:
    a = evaluate(list(SCORES), [bool(v) for v in LABELS], threshold=0.5)
    b = evaluate(SCORES.astype(np.float32), LABELS.astype(float), threshold=0.5)
    assert a.keys() == b.keys()
    assert point_adjusted_f1(SCORES > 0.5, LABELS) >= f1(SCORES > 0.5, LABELS)


@pytest.mark.parametrize(
    ("scores", "labels", "kwargs", "match"),
    [
        (SCORES[:-1], LABELS, {}, "points"),
        (np.where(LABELS, np.nan, SCORES), LABELS, {}, "NaN"),
        (np.where(LABELS, np.inf, SCORES), LABELS, {}, "inf"),
        (SCORES, LABELS * 2, {}, "only 0 and 1"),
        (SCORES, np.zeros_like(LABELS), {}, "no anomaly"),
        (SCORES, np.ones_like(LABELS), {}, "no normal point"),
        (SCORES.reshape(3, 4), LABELS.reshape(3, 4), {}, "1-D"),
        (np.array([]), np.array([]), {}, "empty"),
        (np.array(["a"] * 12), LABELS, {}, "numeric"),
        (SCORES, LABELS, {"threshold": float("nan")}, "NaN"),
        (SCORES, LABELS, {"threshold": "high"}, "number"),
        (SCORES, LABELS, {"window": -1}, "window"),
        (SCORES, LABELS, {"window": 2.5}, "window"),
        (SCORES, LABELS, {"range_on": "labels"}, "range_on"),
    ],
)
def test_evaluate_rejects_bad_input(scores, labels, kwargs, match) -> None:
    kwargs = {"threshold": 0.5, **kwargs}
    with pytest.raises(ValueError, match=match) as info:
        evaluate(scores, labels, **kwargs)
    assert isinstance(info.value, DataError)


def test_undefined_cases_of_individual_functions() -> None:
    normal_only = np.zeros(12, dtype=int)
    anomalous_only = np.ones(12, dtype=int)
    with pytest.raises(DataError, match="no anomaly"):
        recall(SCORES > 0.5, normal_only)
    with pytest.raises(DataError, match="no anomaly"):
        affiliation_precision_recall(SCORES > 0.5, normal_only)
    with pytest.raises(DataError, match="no normal"):
        auc_roc(SCORES, anomalous_only)
    with pytest.raises(DataError, match="no normal"):
        vus(SCORES, anomalous_only)
    with pytest.raises(DataError, match="no anomaly"):
        range_auc(SCORES, normal_only)
    with pytest.raises(DataError, match="n_thresholds"):
        vus(SCORES, LABELS, n_thresholds=0)
    # Still defined: precision without anomalies, AUC-PR and affiliation with every point anomalous.
    assert precision(SCORES > 0.5, normal_only) == 0.0
    assert auc_pr(SCORES, anomalous_only) == pytest.approx(1.0)
    assert affiliation_precision_recall(np.ones(12), anomalous_only) == (1.0, 1.0)


def test_smd_size_is_fast() -> None:
    """All metrics on 708,420 points (SMD's test size): ~0.5 s here, the published code ~3 min.
    The bound is loose on purpose (noisy shared CI machines);
    benchmarks/studies/speed/bench_metrics.py times it."""
    scores, labels = smd_like()
    threshold = float(np.quantile(scores, 0.96))
    start = time.perf_counter()
    out = evaluate(scores, labels, threshold=threshold)
    elapsed = time.perf_counter() - start
    assert elapsed < 30.0, f"evaluate took {elapsed:.1f} s on 708k points"
    assert all(np.isfinite(v) for v in out.values())
