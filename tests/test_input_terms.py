"""MADCluster(window_term="kmeans"): the window-KMeans term inside the estimator (off by default)."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.baselines import KMeansDetector
from madcluster.exceptions import ParameterError, StreamError
from madcluster.scoring import standardize
from madcluster.window_term import OWN_SCORE, WINDOW_SCORE, window_kmeans_scores

TINY = {"window_size": 20, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (np.sin(np.arange(n)[:, None] / 5 + np.arange(3)) + 0.05 * rng.normal(size=(n, 3))).astype(np.float32)


@pytest.fixture(scope="module")
def train_test():
    test = _series(300, 1)
    test[200:215] += 2.0  # a level shift the windows have never seen
    return _series(600, 0), test


@pytest.fixture(scope="module")
def with_term(train_test):
    return MADCluster(window_term="kmeans", **TINY).fit(train_test[0])


def test_default_is_off_and_unchanged(train_test):
    train, test = train_test
    assert MADCluster().window_term is None
    plain = MADCluster(**TINY).fit(train)
    off = MADCluster(window_term=None, **TINY).fit(train)
    assert plain.window_term_ is None
    assert np.array_equal(plain.decision_function(test), off.decision_function(test))
    assert OWN_SCORE not in plain.score_stats_


def test_score_is_the_z_sum_of_madcluster_and_the_window_baseline(train_test, with_term):
    train, test = train_test
    plain = MADCluster(**TINY).fit(train)  # same seed: the same network as inside with_term
    baseline = KMeansDetector(window_size=TINY["window_size"], random_state=0).fit(train)
    term = window_kmeans_scores(with_term.window_term_, test)
    assert np.allclose(term, baseline.decision_function(test), rtol=1e-4, atol=1e-4)
    expected = standardize(plain.decision_function(test), with_term.score_stats_[OWN_SCORE]) + standardize(term, with_term.score_stats_[WINDOW_SCORE])
    scores = with_term.decision_function(test)
    assert np.allclose(scores, expected)
    assert scores[200:215].mean() > np.percentile(scores[:150], 99)
    # training scores, threshold and labels include the term
    assert abs(with_term.decision_scores_.mean()) < 1e-6  # the sum of two training z-scores
    assert with_term.threshold_ == pytest.approx(np.quantile(with_term.decision_scores_, 1 - with_term.contamination))


def test_save_load_round_trip_gives_identical_scores(tmp_path, train_test, with_term):
    path = tmp_path / "model.mcz"
    with_term.save(path)
    loaded = MADCluster.load(path)
    assert loaded.window_term == "kmeans"
    assert np.array_equal(loaded.window_term_.centroids, with_term.window_term_.centroids)
    assert np.array_equal(loaded.decision_function(train_test[1]), with_term.decision_function(train_test[1]))
    assert loaded.threshold_ == with_term.threshold_


def test_stream_refuses_the_term(with_term):
    with pytest.raises(StreamError, match="window_term"):
        with_term.stream()


@pytest.mark.parametrize("value", ["pca", "KMeans", 1, True])
def test_bad_values_are_parameter_errors(train_test, value):
    with pytest.raises(ParameterError, match="window_term"):
        MADCluster(window_term=value, **TINY).fit(train_test[0])


def test_onnx_export_refuses_the_term(tmp_path, with_term):
    pytest.importorskip("onnx")
    from madcluster.export import ExportError, export_onnx

    with pytest.raises(ExportError, match="window_term"):
        export_onnx(with_term, tmp_path / "model.onnx")
    assert not (tmp_path / "model.onnx").exists()


def test_the_term_sees_a_column_that_was_constant_in_training(train_test):
    train, test = (a.copy() for a in train_test)
    train[:, 2], test[:, 2] = 0.0, 0.0
    test[100:130, 2] = 5.0  # the network holds this column at 0; the windows see it move
    model = MADCluster(window_term="kmeans", **TINY).fit(train)
    scores = model.decision_function(test)
    assert scores[105:125].min() > scores[:80].max()
