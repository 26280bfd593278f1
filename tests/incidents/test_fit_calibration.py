"""The fit measures the false-alarm budget on its held-out validation rows, says what to expect,
and model files keep it; ``false_incidents`` opens incidents at its level."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.incident_scoring import (
    MIN_CALIBRATION_ROWS,
    TRUSTED_INCIDENTS,
    default_incident_policy,
    expectation,
    series_incidents,
    settle_rows,
    validation_at_once,
)
from madcluster.exceptions import ParameterError
from madcluster.incidents.calibration import DEFAULT_FALSE_INCIDENTS, IncidentCalibration
from madcluster.incidents.policy import DEFAULT_SPIKE_FACTOR

TINY = {"window_size": 20, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}


def _series(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None] / 5 + np.arange(3)
    return (np.sin(t) + 0.3 * rng.normal(size=(n, 3))).astype(np.float32)


@pytest.fixture(scope="module")
def model():
    return MADCluster(input_terms=("kmeans", "ar"), verbose=False, **TINY).fit(_series(1500, 0))


def test_the_fit_calibrates_on_its_end_rows_and_files_keep_it(model, tmp_path):
    """300 validation rows: their calibration, kept where they raise enough incidents, else the
    one of it and the in-sample calibration (the last 1,460 training rows) opening higher."""
    data, m = _series(1500, 0), model.model_
    settle = settle_rows(m)
    held = IncidentCalibration.measure(
        validation_at_once(m, data, int(1500 * model.validation_size)), settle_rows=settle
    )
    inside = IncidentCalibration.measure(
        validation_at_once(m, data, 1500 - 2 * TINY["window_size"]),
        settle_rows=settle,
        in_sample=True,
    )
    higher = max((held, inside), key=lambda c: c.level_for(DEFAULT_FALSE_INCIDENTS))
    trusted = len(held.strengths) >= TRUSTED_INCIDENTS
    calibration = m.incident_calibration
    assert calibration == (held if trusted else higher)
    assert "false incidents per 10,000 normal rows" in expectation(m)
    model.save(tmp_path / "m.mcz")
    assert MADCluster.load(tmp_path / "m.mcz").model_.incident_calibration == calibration


def test_incidents_open_at_the_higher_of_threshold_and_budget_or_at_a_budget_given(model):
    rows = _series(600, 1)
    rows[300:330, 0] += 2.0
    calibration = model.model_.incident_calibration
    default = max(model.threshold_, calibration.level_for(DEFAULT_FALSE_INCIDENTS))
    assert default_incident_policy(model.model_).open_level == default
    assert (model.incidents(rows)["peak_score"] > default).all()
    strict = model.incidents(rows, false_incidents=0.5)
    assert (strict["peak_score"] > calibration.level_for(0.5)).all()
    assert calibration.level_for(0.5) > calibration.level_for(DEFAULT_FALSE_INCIDENTS)


def test_without_enough_rows_or_at_once_scores_there_is_no_budget():
    too_short = (
        MIN_CALIBRATION_ROWS + 2 * TINY["window_size"] - 1
    )  # the calibration's rows, less one
    short = MADCluster(input_terms=("ar",), **TINY).fit(_series(too_short, 2))
    assert short.model_.incident_calibration is None
    assert f"fewer than {MIN_CALIBRATION_ROWS} training rows" in expectation(short.model_)
    with pytest.raises(ParameterError, match="false_incidents needs the fit's"):
        short.incidents(_series(200, 3), false_incidents=2.0)
    unstreamed = MADCluster(embedder="usad", mode="base-only", **TINY).fit(_series(600, 2))
    assert unstreamed.model_.incident_calibration is None
    assert "does not stream" in expectation(unstreamed.model_)


def test_the_default_policy_settles_for_a_window_and_opens_on_one_spike(model):
    calibration = model.model_.incident_calibration
    policy = default_incident_policy(model.model_)
    assert policy.settle_rows == calibration.settle_rows == model.window_size
    assert policy.spike_level == pytest.approx(DEFAULT_SPIKE_FACTOR * policy.open_level)
    rows = _series(400, 4)
    rows[:15, 0] += 6.0  # hot from the stream's first row
    unsettled = series_incidents(model.model_, rows, replace(policy, settle_rows=0))
    assert any(i.start < model.window_size for i in unsettled)
    assert (model.incidents(rows)["start"] >= model.window_size).all()


def test_a_model_calibrated_before_the_settling_and_spikes_keeps_the_policy_it_measured(model):
    older = {
        key: value
        for key, value in model.model_.incident_calibration.record().items()
        if key not in ("settle_rows", "spike_factor")
    } | {"k": 2, "n": 5}
    fitted = replace(model.model_, incident_calibration=IncidentCalibration.from_record(older))
    policy = default_incident_policy(fitted)
    assert (policy.k, policy.n, policy.settle_rows, policy.spike_level) == (2, 5, 0, None)
