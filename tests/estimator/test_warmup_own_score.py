"""The warm-up calibration on the network's own score alone (no input parts to hide the first
rows' excess), and its mapping beyond the measured range."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.warmup import calibrate, fit_quantile_table

WINDOW = 20


def _normal(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n) + rng.integers(0, 1000)
    return np.stack(
        [np.sin(2 * np.pi * t / p) for p in (17.0, 29.0, 41.0)], axis=1
    ) + 0.2 * rng.standard_normal((n, 3))


@pytest.mark.slow
def test_the_own_score_alone_flags_its_first_rows_no_more_than_the_rest():
    model = MADCluster(
        window_size=WINDOW, epochs=2, contamination=0.05, random_state=0, input_terms=None
    )
    model.fit(_normal(1500, 0))
    assert model.input_terms_ == [] and model.warmup_quantiles_ is not None
    series = [_normal(200, seed) for seed in range(1, 31)]
    flags = np.stack([model.predict(x) for x in series])
    overall = flags.mean()
    assert overall > 0.005, "threshold too high for the comparison to mean anything"
    assert flags[:, :WINDOW].mean() <= 2 * overall, (flags[:, :WINDOW].mean(), overall)
    assert flags[:, 0].mean() <= 2 * overall + 0.05, "row 0 alone"
    # the same model without its table: the first rows are what the calibration takes away
    plain = replace(model.model_, warmup=replace(model.model_.warmup, quantiles=None))
    raw = np.stack([plain.decision_function(x) > model.threshold_ for x in series])
    assert raw[:, :WINDOW].mean() > flags[:, :WINDOW].mean()


def test_values_beyond_the_measured_range_keep_rising():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(400, WINDOW))
    scores[:, :5] *= 3.0  # the first positions spread three times as wide
    table = fit_quantile_table(scores, 10)
    top = table[0, -1]  # the largest position-0 score measured
    values = top + np.array([0.5, 1.0, 4.0, 20.0])
    out = calibrate(values, np.zeros(4, dtype=np.int64), table, 10)
    assert (
        np.all(np.diff(out) > 0) and out[0] > table[-1, -1]
    )  # above the reference's largest, rising
    low = table[0, 0] - np.array([20.0, 4.0, 1.0])
    below = calibrate(low, np.zeros(3, dtype=np.int64), table, 10)
    assert np.all(np.diff(below) > 0) and below[-1] < table[-1, 0]
