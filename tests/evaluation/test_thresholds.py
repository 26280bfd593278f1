import numpy as np
import pytest

from madcluster.base import BaseDetector
from madcluster.evaluation import (
    PROTOCOLS,
    ThresholdResult,
    best_f1_threshold,
    combined_threshold,
    compute_thresholds,
    get_protocol,
    train_pot_threshold,
    train_quantile_threshold,
)
from madcluster.evaluation import thresholds as th


def _f1(pred, y):
    tp = np.sum(pred & y)
    denom = pred.sum() + y.sum()
    return 0.0 if denom == 0 else 2.0 * tp / denom


def test_train_quantile_by_hand_and_matches_detector_base():
    scores = np.arange(101.0)
    assert train_quantile_threshold(scores, 0.1) == pytest.approx(90.0)

    class _D(BaseDetector):
        contamination = 0.1

        def fit(self, X, y=None):
            return self

        def decision_function(self, X):
            return X

    d = _D()
    d._set_training_scores(scores)
    assert d.threshold_ == train_quantile_threshold(scores, 0.1)


def test_test_ratio_by_hand():
    scores = np.arange(1000.0)
    t = th.test_ratio_threshold(scores, 0.01)  # 99th percentile
    assert t == pytest.approx(989.01)
    assert int((scores > t).sum()) == 10


def test_combined_by_hand():
    train, test = np.zeros(900), np.arange(100.0)
    # pooled sorted: 901 zeros then 1..99; 99th percentile at position 0.99 * 999 = 989.01 -> 89.01
    assert combined_threshold(train, test, 0.01) == pytest.approx(89.01)


def test_best_f1_by_hand():
    scores = np.array([0.1, 0.4, 0.35, 0.8])
    labels = np.array([0, 0, 1, 1])
    t, f1 = best_f1_threshold(scores, labels, return_f1=True)
    assert t == 0.1 and f1 == pytest.approx(0.8)
    assert (scores > t).tolist() == [False, True, True, True]


def test_best_f1_ties_and_edges():
    # a tie group is flagged together or not at all
    assert best_f1_threshold(np.array([1.0, 1.0, 0.0, 0.0]), np.array([1, 0, 0, 0])) == 0.0
    # best is to flag every point: the threshold is just below the minimum, also for float32 scores
    s32 = np.array([3.0, 2.0, 1.0], dtype=np.float32)
    t = best_f1_threshold(s32, np.array([1, 1, 1]))
    assert (s32 > t).all() and t < 1.0
    # no anomalies: flag nothing
    t, f1 = best_f1_threshold(np.array([0.2, 0.5]), np.array([0, 0]), return_f1=True)
    assert t == 0.5 and f1 == 0.0
    # among equal F1, the highest threshold wins
    assert best_f1_threshold(np.array([2.0, 1.0]), np.array([1, 0])) == 1.0


@pytest.mark.parametrize("seed", range(25))
def test_best_f1_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    scores = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # rounding makes ties
    labels = (rng.random(n) < rng.uniform(0.05, 0.9)).astype(np.uint8)
    if labels.sum() == 0:
        labels[0] = 1
    y = labels.astype(bool)
    candidates = np.r_[np.unique(scores), np.nextafter(scores.min(), -np.inf)]
    brute = max(_f1(scores > c, y) for c in candidates)
    t, f1 = best_f1_threshold(scores, labels, return_f1=True)
    assert f1 == pytest.approx(brute)
    assert _f1(scores > t, y) == pytest.approx(brute)


def test_best_f1_is_fast():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=700_000).astype(np.float32)
    labels = (rng.random(700_000) < 0.05).astype(np.uint8)
    labels[scores > 2.5] = 1
    t, f1 = best_f1_threshold(scores, labels, return_f1=True)
    assert f1 == pytest.approx(_f1(scores > t, labels.astype(bool)))


def test_registry():
    assert list(PROTOCOLS) == ["train-quantile", "train-pot", "test-ratio", "combined", "best-f1"]
    assert [n for n, p in PROTOCOLS.items() if p.oracle] == ["best-f1"]
    assert all(p.description and p.name == n for n, p in PROTOCOLS.items())
    assert get_protocol("Best_F1") is PROTOCOLS["best-f1"]
    with pytest.raises(ValueError, match="known: train-quantile"):
        get_protocol("evt")


def test_compute_thresholds():
    rng = np.random.default_rng(0)
    train, test = rng.normal(size=500), rng.normal(size=300)
    labels = (test > 1.5).astype(int)
    out = compute_thresholds(train, test, labels, contamination=0.01, anomaly_ratio=0.05)
    assert set(out) == set(PROTOCOLS)
    assert all(isinstance(r, ThresholdResult) for r in out.values())
    assert out["best-f1"].oracle and not out["test-ratio"].oracle
    assert out["train-quantile"].value == train_quantile_threshold(train, 0.01)
    assert out["test-ratio"].value == pytest.approx(np.percentile(test, 95))
    assert out["best-f1"].value == best_f1_threshold(test, labels)
    no_labels = compute_thresholds(train, test, None, contamination=0.01, anomaly_ratio=0.05)
    assert "best-f1" not in no_labels and len(no_labels) == 4
    assert out["train-pot"].value == train_pot_threshold(train, 0.01) and not out["train-pot"].oracle
    only = compute_thresholds(
        train, test, labels, contamination=0.01, anomaly_ratio=0.05, protocols=["combined"]
    )
    assert list(only) == ["combined"]
    with pytest.raises(ValueError, match="needs the test labels"):
        compute_thresholds(
            train, test, None, contamination=0.01, anomaly_ratio=0.05, protocols=["best-f1"]
        )


def test_bad_inputs():
    with pytest.raises(ValueError, match="for 1 % pass 0.01"):
        th.test_ratio_threshold(np.arange(10.0), 1)
    with pytest.raises(ValueError, match="fraction"):
        train_quantile_threshold(np.arange(10.0), -0.1)
    with pytest.raises(ValueError, match="NaN"):
        train_quantile_threshold(np.array([0.0, np.nan]), 0.1)
    with pytest.raises(ValueError, match="non-empty"):
        combined_threshold([], [], 0.1)
    with pytest.raises(ValueError, match="shape"):
        best_f1_threshold(np.arange(3.0), np.array([0, 1]))


def test_pot_row_left_out_when_the_training_scores_cannot_support_it():
    tied = np.r_[np.zeros(1000), np.ones(30), np.full(20, 2.0)]  # no spread above the 98 % quantile
    test = np.random.default_rng(0).normal(size=300)
    out = compute_thresholds(tied, test, None, contamination=0.01, anomaly_ratio=0.05)
    assert "train-pot" not in out and "train-quantile" in out
    with pytest.raises(ValueError, match="no spread"):
        compute_thresholds(tied, test, None, contamination=0.01, anomaly_ratio=0.05, protocols=["train-pot"])
