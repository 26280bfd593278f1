"""``benchmarks/incidents.py`` opens its candidates where the fit would: the calibration the fit
keeps (the held-out one, or with few incidents on it the higher of it and the in-sample one), and
the levels of other budgets as named candidates."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from madcluster.estimator.incident_scoring import kept_calibration
from madcluster.incidents.calibration import IncidentCalibration

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SHAPE = (3, 5, 20, 0.8, 0, 3.0)  # k, n, close rows, close fraction, settle windows, spike


@pytest.fixture(scope="module")
def incidents():
    sys.path.insert(0, str(BENCHMARKS))  # the script's own imports (benchlib)
    spec = importlib.util.spec_from_file_location("incidents_script", BENCHMARKS / "incidents.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bursts(n: int, height: float, every: int) -> np.ndarray:
    scores = np.zeros(n)
    rng = np.random.default_rng(0)
    for start in range(10, n - 10, every):
        scores[start : start + 5] = height + rng.exponential()
    return scores


def _series(validation: np.ndarray, in_sample: np.ndarray | None) -> dict[str, np.ndarray]:
    arrays = {
        "validation": validation,
        "at_once": np.zeros(400),
        "labels": np.zeros(400, dtype=np.uint8),
        "threshold": np.asarray(0.5),
    }
    if in_sample is not None:
        arrays["in_sample"] = in_sample
    return arrays


def _kept(incidents, arrays: dict) -> IncidentCalibration:
    incidents._CALIBRATIONS.clear()
    incidents.policy_spans(arrays, SHAPE, "budget")
    (calibration,) = incidents._CALIBRATIONS.values()
    return calibration


def test_few_held_out_incidents_read_the_calibration_the_fit_keeps(incidents):
    quiet, loud = _bursts(1000, 2.0, 400), _bursts(2000, 6.0, 50)  # 3 incidents; 40, higher
    kept = _kept(incidents, _series(quiet, loud))
    assert kept.in_sample
    k, n, close_rows, fraction, _, spike = SHAPE
    shape = {"k": k, "n": n, "close_rows": close_rows, "close_fraction": fraction}
    held = IncidentCalibration.measure(quiet, **shape, spike_factor=spike)
    inside = IncidentCalibration.measure(loud, **shape, spike_factor=spike, in_sample=True)
    assert kept == kept_calibration(held, inside)


def test_enough_held_out_incidents_or_caches_from_before_read_the_validation_rows(incidents):
    loud = _bursts(2000, 6.0, 50)
    assert not _kept(incidents, _series(_bursts(1000, 2.0, 50), loud)).in_sample  # 20: trusted
    assert not _kept(incidents, _series(_bursts(1000, 2.0, 400), None)).in_sample


def test_other_budgets_are_named_candidates_opening_higher_for_fewer(incidents):
    """A burst between the levels for 2 and for 0.5 false incidents per 10,000 pages at the
    first and not at the second."""
    validation = _bursts(1000, 2.0, 50)
    k, n, close_rows, fraction, _, spike = SHAPE
    calibration = IncidentCalibration.measure(
        validation, k=k, n=n, close_rows=close_rows, close_fraction=fraction, spike_factor=spike
    )
    low, high = calibration.level_for(incidents.BUDGET), calibration.level_for(0.5)
    assert low < high
    arrays = _series(validation, None)
    arrays["at_once"][200:205] = (low + high) / 2
    incidents._CALIBRATIONS.clear()
    assert len(incidents.policy_spans(arrays, SHAPE, "budget")) == 1
    assert incidents.policy_spans(arrays, SHAPE, "budget@0.5") == []
