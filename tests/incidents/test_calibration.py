"""The false-alarm budget: counts where the normal rows have them, an exponential tail above,
and the level that meets a budget meeting it on fresh normal rows of the same kind."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.exceptions import ParameterError
from madcluster.incidents.calibration import (
    PER_ROWS,
    TAIL_COUNT,
    IncidentCalibration,
    kth_largest_trailing,
    opening_statistic,
)
from madcluster.incidents.policy import IncidentPolicy, track


def _normal(n: int, seed: int) -> np.ndarray:
    """Smoothed noise's positive part, as the default rule's at-once score on normal rows."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=n + 4)
    return np.maximum(0.0, np.convolve(raw, np.ones(5) / np.sqrt(5), mode="valid"))


def test_kth_largest_of_the_trailing_rows():
    got = kth_largest_trailing(np.array([1.0, 5.0, 2.0, 4.0, 3.0]), k=2, n=3)
    assert np.isneginf(got[0]) and got[1:].tolist() == [1.0, 2.0, 4.0, 3.0]


def test_the_base_is_the_highest_level_raising_enough_incidents_and_counts_them():
    scores = _normal(20_000, 0)
    calibration = IncidentCalibration.measure(scores)
    counted = len(track(scores, IncidentPolicy.at(calibration.base)))
    assert counted == len(calibration.strengths) >= TAIL_COUNT
    assert min(calibration.strengths) > calibration.base
    assert calibration.expected(calibration.base) == pytest.approx(PER_ROWS * counted / len(scores))


def test_a_budget_level_holds_on_fresh_normal_rows():
    calibration = IncidentCalibration.measure(_normal(4000, 1))  # a validation split's size
    level = calibration.level_for(20.0)
    fresh = _normal(60_000, 2)
    per_rows = PER_ROWS * len(track(fresh, IncidentPolicy.at(level))) / len(fresh)
    assert 20.0 / 3 < per_rows < 20.0 * 3
    assert calibration.expected(level) == pytest.approx(20.0)
    assert calibration.level_for(2.0) > level  # a smaller budget, a higher level


def test_record_round_trips_and_bad_budgets_are_refused():
    calibration = IncidentCalibration.measure(_normal(3000, 3))
    assert IncidentCalibration.from_record(calibration.record()) == calibration
    with pytest.raises(ParameterError, match="budget must be > 0"):
        calibration.level_for(0)
    with pytest.raises(ParameterError, match="too few to calibrate"):
        IncidentCalibration.measure(np.zeros(300)).level_for(2.0)
    with pytest.raises(ParameterError, match="finite normal scores, got 3"):
        IncidentCalibration.measure(np.zeros(3))


def test_with_a_spike_path_the_statistic_is_the_larger_of_k_of_n_and_the_score_over_the_factor():
    scores = np.array([1.0, 5.0, 2.0, 4.0, 3.0])
    got = opening_statistic(scores, k=2, n=3, spike_factor=2.0)
    assert got.tolist() == [0.5, 2.5, 2.0, 4.0, 3.0]
    assert np.array_equal(opening_statistic(scores, 2, 3), kth_largest_trailing(scores, 2, 3))


def test_a_spike_paths_strengths_are_the_levels_its_incidents_open_below():
    scores = _normal(20_000, 4)
    scores[::997] += 6.0  # lone spikes, which 2 of 5 never opens on
    plain = IncidentCalibration.measure(scores, spike_factor=None)
    spiking = IncidentCalibration.measure(scores, spike_factor=2.0)
    assert spiking.level_for(2.0) > plain.level_for(2.0)  # the spikes count as incidents
    for level in (spiking.base, spiking.level_for(5.0)):
        policy = spiking.policy(level)
        assert policy.spike_level == 2.0 * level and policy.settle_rows == 0
    counted = len(track(scores, spiking.policy(spiking.base)))
    assert counted == len(spiking.strengths)


def test_the_record_keeps_the_settle_rows_and_spike_factor_and_an_older_one_has_neither():
    calibration = IncidentCalibration.measure(_normal(3000, 5), settle_rows=100, spike_factor=3.0)
    assert IncidentCalibration.from_record(calibration.record()) == calibration
    assert calibration.policy(1.0).settle_rows == 100
    older = {
        k: v for k, v in calibration.record().items() if k not in ("settle_rows", "spike_factor")
    }
    read = IncidentCalibration.from_record(older)
    assert (read.settle_rows, read.spike_factor) == (0, None)
    assert (read.policy(1.0).settle_rows, read.policy(1.0).spike_level) == (0, None)
