import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import MiniBatchKMeans
from sklearn.decomposition import PCA
from sklearn.metrics import roc_auc_score

from madcluster.baselines import KMeansDetector, PCADetector, kmeans, window_scores_to_points
from madcluster.data.windows import window_starts, windows_to_points
from madcluster.exceptions import DataError, NotFittedError

DETECTORS = [
    pytest.param(lambda **kw: PCADetector(window_size=20, n_components=0.9, **kw), id="pca"),
    pytest.param(lambda **kw: KMeansDetector(window_size=20, n_centroids=8, **kw), id="kmeans"),
]


def _series(n, rng, d=4):
    t = np.arange(n)[:, None]
    phases = np.arange(d)[None, :]
    return (
        np.sin(2 * np.pi * t / 50 + phases)
        + 0.5 * np.sin(2 * np.pi * t / 13 + 2 * phases)
        + 0.05 * rng.normal(size=(n, d))
    )


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    train = _series(3000, rng)
    test = _series(1500, rng)
    labels = np.zeros(1500, dtype=np.uint8)
    test[700:740, 1] += 2.5  # level shift on one channel
    test[1100:1130, 2] = test[1100:1130, 3]  # broken correlation / copied channel
    labels[700:740] = labels[1100:1130] = 1
    return train.astype(np.float32), test.astype(np.float32), labels


@pytest.mark.parametrize("make", DETECTORS)
def test_shapes_and_fitted_attributes(make, data):
    train, test, _ = data
    det = make(random_state=0).fit(train)
    scores = det.decision_function(test)
    assert scores.shape == (len(test),) and np.isfinite(scores).all()
    assert det.decision_scores_.shape == (len(train),)
    assert det.labels_.shape == (len(train),) and 0 < det.labels_.mean() <= 0.02
    assert det.n_features_in_ == 4
    assert det.stride_ == 2  # default: window_size // 10
    assert det.predict(test).shape == (len(test),)
    # training scores equal scoring the training data again
    np.testing.assert_allclose(det.decision_function(train), det.decision_scores_, rtol=1e-6)


@pytest.mark.parametrize("make", DETECTORS)
def test_detects_injected_anomalies(make, data):
    train, test, labels = data
    scores = make(random_state=0).fit(train).decision_function(test)
    assert roc_auc_score(labels, scores) > 0.9


@pytest.mark.parametrize("make", DETECTORS)
def test_deterministic_with_random_state(make, data):
    train, test, _ = data
    a = make(random_state=3).fit(train).decision_function(test)
    b = make(random_state=3).fit(train).decision_function(test)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("make", DETECTORS)
def test_clone_and_params(make, data):
    det = make(random_state=1, stride=5)
    params = det.get_params()
    assert params["window_size"] == 20 and params["stride"] == 5 and params["random_state"] == 1
    copy = clone(det)
    assert copy.get_params() == params and copy is not det
    det.fit(data[0])
    assert not hasattr(clone(det), "threshold_")


@pytest.mark.parametrize("make", DETECTORS)
def test_input_errors(make, data):
    train, test, _ = data
    det = make()
    with pytest.raises(NotFittedError):
        det.decision_function(test)
    with pytest.raises(DataError, match="fewer than one window"):
        det.fit(train[:10])
    det.fit(train)
    with pytest.raises(DataError, match="5 features but the detector was fitted on 4"):
        det.decision_function(np.zeros((100, 5)))
    with pytest.raises(DataError, match="fewer than one window"):
        det.decision_function(test[:19])
    bad = test.copy()
    bad[3, 0] = np.nan
    with pytest.raises(DataError, match="NaN"):
        det.decision_function(bad)


def test_parameter_errors(data):
    train = data[0]
    with pytest.raises(ValueError, match="stride"):
        PCADetector(window_size=10, stride=11).fit(train)
    with pytest.raises(ValueError, match="window_size"):
        KMeansDetector(window_size=0).fit(train)
    with pytest.raises(ValueError, match="variance fraction"):
        PCADetector(window_size=10, n_components=1.5).fit(train)
    with pytest.raises(DataError, match="n_centroids=50 is more than the 6 training windows"):
        KMeansDetector(window_size=10, n_centroids=50, stride=10).fit(train[:60])


def test_pca_matches_sklearn_reconstruction_error():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3)).cumsum(axis=0)
    det = PCADetector(window_size=10, n_components=0.9, stride=1).fit(x)
    scaled = det._scale(x)
    windows = det._gather(scaled, np.arange(len(x) - 9))
    ref = PCA(n_components=0.9, svd_solver="full").fit(windows)
    assert det.n_components_ == ref.n_components_
    np.testing.assert_allclose(det.explained_variance_, ref.explained_variance_, rtol=1e-3)
    recon = ref.inverse_transform(ref.transform(windows))
    expected = np.sqrt(((windows - recon) ** 2).sum(axis=1))
    got = det._score_windows(windows, (windows.astype(np.float64) ** 2).sum(axis=1))
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3)
    assert (
        PCADetector(window_size=10, n_components=500, stride=1).fit(x).n_components_ == 30
    )  # capped at L*D


def test_kmeans_score_is_distance_to_nearest_centroid():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 2))
    det = KMeansDetector(window_size=5, n_centroids=4, stride=1, random_state=0).fit(x)
    windows = det._gather(det._scale(x), np.arange(len(x) - 4))
    expected = det.kmeans_.transform(windows).min(axis=1)
    got = det._score_windows(windows, (windows.astype(np.float64) ** 2).sum(axis=1))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_minibatch_for_many_windows(monkeypatch, data):
    monkeypatch.setattr(kmeans, "_MINIBATCH_ABOVE", 100)
    det = KMeansDetector(window_size=20, n_centroids=4, random_state=0).fit(data[0])
    assert isinstance(det.kmeans_, MiniBatchKMeans)
    assert det.n_train_windows_ > 100


def test_max_train_windows_subsamples(data):
    det = KMeansDetector(
        window_size=20, n_centroids=4, stride=1, max_train_windows=50, random_state=0
    ).fit(data[0])
    assert det.n_train_windows_ == 50


@pytest.mark.parametrize("stride", [1, 3, 7])
def test_window_scores_to_points_matches_windows_to_points(stride):
    rng = np.random.default_rng(stride)
    n, window = 53, 7
    starts = window_starts(n, window, stride)
    scores = rng.normal(size=len(starts))
    expected = windows_to_points(np.repeat(scores[:, None], window, axis=1), starts, n)
    np.testing.assert_allclose(window_scores_to_points(scores, starts, window, n), expected)


def test_each_detector_reports_its_own_cost():
    from series_helpers import make_series

    from madcluster import KMeansDetector, PCADetector

    x = make_series(400, 3)
    pca = PCADetector(window_size=10).fit(x)
    assert pca.cost()["macs_per_window"] == 30 * (pca.n_components_ + 1)
    km = KMeansDetector(window_size=10, n_centroids=4).fit(x)
    assert km.cost(20) == {"n_params": 4 * 60, "macs_per_window": 4 * 60,
                           "macs_method": "analytic: window vector (L*D) times the k centroids"}
