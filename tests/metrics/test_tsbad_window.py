"""TSB-AD's window rule against its definition, written as a direct loop: the biased sample
autocorrelation, its strict local maxima at lags 3..400, the highest one's lag, 125 outside
lags 6..303. The fixture test (``test_tsbad_metrics.py``) compares with the package on twelve
series; these pin the rule on short series, at its bounds and where a slow start outranks the
period."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from madcluster.metrics.tsbad import DEFAULT_PERIOD, _autocorrelation, find_length_rank, tsbad_vus


def _acf(x: np.ndarray, n_lags: int) -> np.ndarray:
    c = x - x.mean()
    acov = np.array([np.sum(c[: c.size - k] * c[k:]) for k in range(n_lags + 1)]) / c.size
    return acov / acov[0]


def _window(x: np.ndarray) -> int:
    acf = _acf(x, min(400, x.size - 1))
    peaks = [
        lag for lag in range(4, acf.size - 1) if acf[lag] > acf[lag - 1] and acf[lag] > acf[lag + 1]
    ]
    if not peaks:
        return DEFAULT_PERIOD
    best = max(peaks, key=lambda lag: acf[lag])
    return best if 6 <= best <= 303 else DEFAULT_PERIOD


def _sine(period: float, n: int) -> np.ndarray:
    return np.sin(2 * np.pi * np.arange(n) / period)


def test_the_autocorrelation_is_the_biased_sample_one() -> None:
    x = 5.0 + _sine(17, 300) + np.random.default_rng(0).normal(0, 0.3, 300)
    for n_lags in (40, 299):
        got = _autocorrelation(x, n_lags)
        assert got.shape == (n_lags + 1,)
        np.testing.assert_allclose(got, _acf(x, n_lags), atol=1e-12)


def test_short_and_noisy_series_follow_the_definition() -> None:
    rng = np.random.default_rng(1)
    for n in list(range(6, 40)) * 6 + [120, 450]:
        x = rng.normal(size=n) + _sine(rng.uniform(5, 30), n)
        assert find_length_rank(x) == _window(x), n


def test_the_highest_peak_wins_over_a_slow_start() -> None:
    # lag 4 reads more than the peak at 50 here, but it is no strict local maximum
    x = _sine(50, 300)
    assert _acf(x, 10)[4] > _acf(x, 60)[50]
    assert find_length_rank(x) == 50


@pytest.mark.parametrize(("period", "window"), [(6.0, 6), (303.5, 303), (304.5, DEFAULT_PERIOD)])
def test_the_window_bounds(period: float, window: int) -> None:
    # the biased autocorrelation peaks just before a sine's period: 303.5 at lag 303
    assert find_length_rank(_sine(period, 4000)) == window


def test_a_constant_series_falls_back_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_length_rank(np.full(100, 3.0)) == DEFAULT_PERIOD


def test_tsbad_vus_reads_the_first_column_of_a_table() -> None:
    rng = np.random.default_rng(2)
    first, other = _sine(40, 600), _sine(90, 600)
    labels = np.zeros(600, dtype=int)
    labels[300:320] = 1
    scores = rng.random(600) + 0.3 * labels
    table = np.column_stack([first, other])
    assert tsbad_vus(scores, labels, table) == tsbad_vus(scores, labels, first)
    assert tsbad_vus(scores, labels, table) != tsbad_vus(scores, labels, other)
