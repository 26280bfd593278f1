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
