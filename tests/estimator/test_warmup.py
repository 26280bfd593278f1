"""The first rows of a scored series raise no more alarms than the rest."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.data.windows import causal_window_of, causal_window_starts
from madcluster.estimator.warmup import calibrate, fit_quantile_table

WINDOW = 20


def _normal(n: int, seed: int) -> np.ndarray:
    """Three noisy sines with a random phase: normal data, a fresh draw per seed."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) + rng.integers(0, 1000)
    return np.stack([np.sin(2 * np.pi * t / p) for p in (17.0, 29.0, 41.0)], axis=1) + 0.2 * rng.standard_normal((n, 3))


@pytest.fixture(scope="module")
def fitted() -> MADCluster:
    return MADCluster(window_size=WINDOW, epochs=2, contamination=0.05, random_state=0).fit(_normal(1500, 0))


@pytest.mark.slow
def test_first_window_flag_rate_is_at_most_twice_the_average(fitted):
    """Same model, same threshold: rows 0..L-1 of 30 fresh normal series against all their rows."""
    flags = np.stack([fitted.predict(_normal(200, seed)) for seed in range(1, 31)])
    first, overall = flags[:, :WINDOW].mean(), flags.mean()
    assert overall > 0.005, "threshold too high for the comparison to mean anything"
    assert first <= 2 * overall, (first, overall)
    assert flags[:, 0].mean() <= 2 * overall + 0.05, "row 0 alone"


def test_early_scores_stay_on_the_scale_of_the_rest(fitted):
    scores = np.stack([fitted.decision_function(_normal(200, seed)) for seed in range(31, 41)])
    early, late = scores[:, : WINDOW // 2].ravel(), scores[:, WINDOW:].ravel()
    assert abs(np.median(early) - np.median(late)) < 0.5 * (np.quantile(late, 0.9) - np.quantile(late, 0.1))


def test_training_file_is_not_flagged_at_its_start(fitted):
    assert fitted.labels_[:WINDOW].mean() <= 2 * fitted.labels_.mean() + 1e-12


def test_model_file_keeps_the_calibration(fitted, tmp_path):
    fitted.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz")
    np.testing.assert_array_equal(loaded.warmup_quantiles_, fitted.warmup_quantiles_)
    x = _normal(120, 99)
    np.testing.assert_allclose(loaded.decision_function(x), fitted.decision_function(x), atol=1e-9)


def test_causal_window_depends_on_the_step_only():
    steps = np.arange(200)
    starts = causal_window_of(steps, 20, 5)
    position = steps - starts
    assert np.array_equal(position[:15], np.arange(15)) and np.all(position[20:] >= 15) and np.all(position <= 19)
    for n in (20, 37, 200):  # the windows of a prefix are a prefix of the windows
        assert set(causal_window_starts(n, 20, 5)) == set(starts[:n])


def test_calibrate_maps_early_positions_onto_the_reference():
    rng = np.random.default_rng(0)
    window_scores = rng.standard_normal((4000, 10)) + np.linspace(5, 0, 10)  # early positions shifted
    window_scores[:, :3] = np.exp(window_scores[:, :3])  # and skewed
    table = fit_quantile_table(window_scores, 8)
    positions = np.tile(np.arange(10), 4000)
    out = calibrate(window_scores.ravel(), positions, table, 8).reshape(4000, 10)
    np.testing.assert_allclose(out[:, 8:], window_scores[:, 8:])
    threshold = np.quantile(window_scores[:, 8:], 0.95)
    np.testing.assert_allclose((out[:, :8] > threshold).mean(axis=0), 0.05, atol=0.01)  # same share
    extreme = calibrate(np.array([1e6, 2e6]), np.array([0, 0]), table, 8)
    assert extreme[1] > extreme[0] > out.max(), "beyond the measured range the map keeps growing"


def test_a_rounding_step_at_tied_quantiles_does_not_move_the_calibrated_score():
    """Many training windows scoring the same at a position tie its quantiles; a value on the tie
    and one 1e-14 away (a stream's float64 path) must map to the same calibrated score."""
    from madcluster.estimator.warmup import calibrate, fit_quantile_table

    rng = np.random.default_rng(0)
    scores = rng.normal(size=(400, 4))
    scores[:80, 0] = 5.001694673592146  # a fifth of the windows: the same score at position 0
    table = fit_quantile_table(scores, reference_from=2)
    tie = np.asarray([5.001694673592146, 5.001694673592146 + 1e-14, 5.001694673592146 - 1e-14])
    out = calibrate(tie, np.zeros(3, dtype=np.int64), table, reference_from=2)
    assert out[0] == out[1] == out[2]
