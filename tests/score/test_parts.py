"""Each part of the score against a direct loop: its whole-series values, its causal (at-once)
reading, its stream (= the whole series), and the combination's statistics of each reading."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from madcluster.score.autoregressive import AutoRegressive
from madcluster.score.combination import Combination
from madcluster.score.legacy import KMeansWindowEnding, kmeans_from_arrays
from madcluster.score.parts import FitContext, part_class
from madcluster.score.window_kmeans import WindowKMeans

L = 12
EXACT = 1e-9


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    rows = np.sin(t / np.array([4.0, 6.0, 9.0])) + 0.1 * rng.normal(size=(n, 3))
    return rows.astype(np.float32)


@pytest.fixture(scope="module")
def train():
    return _series(400, 0)


@pytest.fixture(scope="module")
def test_rows():
    rows = _series(150, 1)
    rows[90:96, 2] += 2.0
    return rows


def _close(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0.0) <= EXACT * max(1.0, np.abs(want).max())


def _nearest(part: WindowKMeans, window_rows: np.ndarray) -> float:
    """A window's distance to its nearest centroid, directly."""
    z = (window_rows[:, part.columns].astype(np.float64) - part.scaler_mean) / part.scaler_scale
    return float(np.min(np.linalg.norm(part.centroids.astype(np.float64) - z.ravel(), axis=1)))


def test_window_kmeans_against_a_direct_loop(train, test_rows):
    part = WindowKMeans.fit(train, FitContext(L, 0))
    n = len(test_rows)
    starts = sorted({*range(0, n - L + 1, part.stride), n - L})
    distance = {s: _nearest(part, test_rows[s : s + L]) for s in starts}
    whole = []
    for t in range(n):  # the windows starting in the block of L starts nearest to t
        first = min(max(t - L + 1, 0), n - 2 * L + 1)
        block = [distance[s] for s in starts if first <= s <= first + L - 1]
        whole.append(np.mean(block))
    _close(part.values(test_rows), whole)
    assert part.final_after() == L and part.reads_ahead


def _prefix_error(part: WindowKMeans, prefix_rows: np.ndarray) -> float:
    """The least squared distance over the centroids of ``prefix_rows`` to each one's first rows."""
    z = (prefix_rows[:, part.columns].astype(np.float64) - part.scaler_mean) / part.scaler_scale
    centroids = part.centroids.astype(np.float64).reshape(len(part.centroids), L, -1)
    return float(np.min(((centroids[:, : len(z)] - z) ** 2).sum(axis=(1, 2))))


def test_window_kmeans_causal_reading_against_a_direct_loop(train, test_rows):
    """At once, each grid window starting in [t - L + 1, t] is matched on its rows so far; the
    value pools their squared errors per observed row, times L (the series' first row stands in
    for the rows before it). Files from before it read the window ending at t."""
    part = WindowKMeans.fit(train, FitContext(L, 0))
    n = len(test_rows)
    padded = np.vstack([np.repeat(test_rows[:1], L, axis=0), test_rows])  # step t is row t + L
    direct = []
    for t in range(n):
        starts = [s for s in range(-L, t + 1) if s % part.stride == 0 and s > t - L]
        errors = [_prefix_error(part, padded[s + L : t + L + 1]) for s in starts]
        observed = sum(t - s + 1 for s in starts)
        direct.append(np.sqrt(sum(errors) / observed * L))
    _close(part.at_once(test_rows), direct)
    stream, at, causal = part.stream(), 0, []
    for size in (1, 1, 30, 1, 7, 110):  # a row at a time, in chunks, and restored mid-way
        causal.append(stream.append(test_rows[at : at + size]))
        at += size
        if at == 32:
            restored = part.stream()
            restored.load(stream.state())
            stream = restored
    _close(np.concatenate(causal), direct)
    old = KMeansWindowEnding(**{f.name: getattr(part, f.name) for f in dataclasses.fields(part)})
    trailing = [_nearest(part, padded[t + 1 : t + L + 1]) for t in range(n)]
    _close(old.at_once(test_rows), trailing)
    stream, at, causal = old.stream(), 0, []
    for size in (1, 30, 7, 112):  # a stream of such a file reads the same
        causal.append(stream.append(test_rows[at : at + size]))
        at += size
    _close(np.concatenate(causal), trailing)
    assert type(kmeans_from_arrays(part.to_arrays())) is WindowKMeans
    arrays = {k: v for k, v in part.to_arrays().items() if k != "prefix_at_once"}
    assert type(kmeans_from_arrays(arrays)) is KMeansWindowEnding  # a file from before it


def test_autoregressive_against_a_direct_loop(train, test_rows):
    part = AutoRegressive.fit(train)
    z = (test_rows[:, part.columns].astype(np.float64) - part.mean) / part.scale
    direct = []
    for t in range(len(z)):
        if t < part.lags:
            direct.append(part.start_value)
            continue
        lags = np.concatenate([*(z[t - k] for k in range(1, part.lags + 1)), [1.0]])
        direct.append(np.mean((lags @ part.coef - z[t]) ** 2))
    _close(part.values(test_rows), direct)
    _close(part.at_once(test_rows), direct)
    assert part.final_after() == 0 and not part.reads_ahead


@pytest.mark.parametrize("name", ["kmeans", "ar"])
def test_a_parts_stream_gives_its_causal_reading_and_then_the_whole_series(train, test_rows, name):
    part = part_class(name).fit(train, FitContext(L, 0))
    stream, causal, at = part.stream(), [], 0
    for size in (1, 3, 1, 20, 7, 50, 1, 67):
        causal.append(stream.append(test_rows[at : at + size]))
        at += size
    assert at == len(test_rows)
    _close(np.concatenate(causal), part.at_once(test_rows))
    if part.reads_ahead:  # the last steps as the whole series gives them now
        steps = np.arange(len(test_rows) - 2 * L, len(test_rows))
        _close(stream.values(steps), part.values(test_rows)[steps])


@pytest.mark.parametrize("smoothing", [{}, {"own": 5, "ar": 3}])
def test_each_reading_is_standardised_with_its_own_training_statistics(train, smoothing):
    """On the training rows every part's final and causal readings have mean 0 and standard
    deviation 1 after the combination standardises them (a causal reading read with the final
    reading's statistics, or smoothed with the wrong width, would not)."""
    own = np.random.default_rng(3).normal(size=len(train))
    combination = Combination.fit(
        ("kmeans", "ar"), train, own, FitContext(L, 0), {}, smoothing, rule="zscore-sum"
    )
    raw = {
        "own": own,
        "kmeans": combination.terms[0].values(train),
        "ar": combination.terms[1].values(train),
    }
    for part in combination.parts:
        width = smoothing.get(part.name, 1)
        values = raw[part.name]
        final = np.array(
            [
                values[min(max(t - (width - 1) // 2, 0), len(values) - width) :][:width].mean()
                for t in range(len(values))
            ]
        )
        # at once, a new fit reads a smoothed point-wise part at its step alone
        causal = part.at_once(train) if part.name == "kmeans" else values
        assert np.array_equal(part.bind(own).at_once(train), causal)
        for reading, at_once in ((final, False), (causal, True)):
            z = combination.contribution(part, reading, at_once=at_once)
            assert abs(z.mean()) < 1e-9 and abs(z.std() - 1.0) < 1e-9, (part.name, at_once)
    assert set(combination.at_once_stats) == {"kmeans", *(n for n, w in smoothing.items() if w > 1)}


@pytest.mark.parametrize("width", range(1, 13))
def test_a_centred_mean_is_final_after_its_delay_directly(width):
    """Rows after step t until no later row moves its centred mean: found by growing the series."""
    from madcluster.score.combination import smoothing_delay
    from madcluster.score.smoothing import centred_means

    values = np.random.default_rng(width).normal(size=80)
    t, whole = 40, centred_means(values, width)[40]
    seen = [centred_means(values[: t + 1 + d], width)[t] for d in range(width + 1)]
    direct = next(d for d in range(width + 1) if all(v == whole for v in seen[d:]))
    assert smoothing_delay(width) == direct


@pytest.mark.parametrize("n", [300, 10_030])  # 10,021 windows: the evenly spaced 10,000 of them
def test_window_kmeans_fits_as_the_kmeans_baseline_to_the_bit(n):
    """sklearn's KMeans fitted directly gives the centroids the window-KMeans baseline gives, on
    the columns the part reads: a binary channel left out, a constant one kept."""
    from madcluster.baselines import KMeansDetector

    rows = np.hstack([_series(n, 5), np.zeros((n, 1), dtype=np.float32)])
    rows[:, 1] = rows[:, 1] > 0  # two levels: left out
    part = WindowKMeans.fit(rows, FitContext(10, 0))
    assert list(part.columns) == [0, 2, 3] and part.stride == 1 and part.window_size == 10
    base = KMeansDetector(window_size=10, n_centroids=20, random_state=0).fit(rows[:, part.columns])
    assert np.array_equal(part.centroids, base.cluster_centers_)
    assert np.array_equal(part.scaler_mean, base.scaler_.mean_)
    assert np.array_equal(part.scaler_scale, base.scaler_.scale_)
    only_binary = WindowKMeans.fit(rows[:, [1]], FitContext(10, 0))  # nothing else: it is read
    assert list(only_binary.columns) == [0]


@pytest.mark.parametrize("name", ["kmeans", "ar"])
def test_a_parts_arrays_and_stream_state_round_trip(train, test_rows, name):
    part = part_class(name).fit(train, FitContext(L, 0))
    again = part_class(name).from_arrays({k: np.array(v) for k, v in part.to_arrays().items()})
    assert np.array_equal(again.values(test_rows), part.values(test_rows))
    assert all(np.asarray(v).dtype.kind in "fi" for v in part.to_arrays().values())
    straight, first = part.stream(), part.stream()
    expected = [straight.append(test_rows[:70]), straight.append(test_rows[70:])]
    first.append(test_rows[:70])
    resumed = again.stream()
    resumed.load({k: np.array(v) for k, v in first.state().items()})
    assert np.array_equal(resumed.append(test_rows[70:]), expected[1])
    if part.reads_ahead:
        steps = np.arange(len(test_rows) - L, len(test_rows))
        assert np.array_equal(resumed.values(steps), straight.values(steps))


def test_autoregressive_fit_is_the_ridge_solve_directly(train):
    """The predictor of the standardised rows from their previous 5 (and 1), by the ridge normal
    equations written out; the start value is the mean training error after the first lags."""
    part = AutoRegressive.fit(train)
    data = train.astype(np.float64)
    z = (data - data.mean(axis=0)) / data.std(axis=0)
    rows = [
        np.concatenate([*(z[max(t - k, 0)] for k in range(1, 6)), [1.0]]) for t in range(len(z))
    ]
    a = np.asarray(rows)
    coef = np.linalg.inv(a.T @ a + np.eye(a.shape[1])) @ a.T @ z
    assert part.lags == 5 and list(part.columns) == [0, 1, 2]
    np.testing.assert_allclose(part.coef, coef, rtol=1e-8, atol=1e-10)
    errors = ((a @ coef - z) ** 2).mean(axis=1)[5:]
    assert part.start_value == pytest.approx(errors.mean(), rel=1e-9)
