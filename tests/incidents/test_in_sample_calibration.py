"""A model with too few held-out rows calibrates its false-alarm budget in sample, on its last
training rows read at once: its incidents open above ``threshold_`` where those scores demand it,
and it says the estimate is optimistic."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.estimator.incident_scoring import (
    MIN_CALIBRATION_ROWS,
    default_incident_policy,
    expectation,
    incident_floor,
    series_incidents,
    validation_at_once,
)
from madcluster.incidents.calibration import DEFAULT_FALSE_INCIDENTS, IncidentCalibration
from madcluster.incidents.policy import IncidentPolicy

#: The CLI incidents tests' small model (``--window-size 20 --epochs 2 --stride 4 --hidden-size
#: 16 --layers 2``, seed 0): on 600 rows it once opened at ``threshold_`` alone and raised a
#: false incident that stayed open until the anomaly.
SMALL = {
    "window_size": 20,
    "epochs": 2,
    "stride": 4,
    "embedder_params": {"hidden_size": 16, "n_layers": 2},
    "random_state": 0,
    "verbose": False,
}
TRAIN_ROWS = 600  # 120 validation rows: fewer than MIN_CALIBRATION_ROWS
ANOMALY = slice(150, 181)


@pytest.fixture(scope="module")
def train() -> np.ndarray:
    return make_series(TRAIN_ROWS, 3)


@pytest.fixture(scope="module")
def small(train):
    return MADCluster(**SMALL).fit(train)


@pytest.fixture(scope="module")
def test_rows() -> np.ndarray:
    rows = make_series(300, 3, seed=2)
    rows[ANOMALY, 1] += 6.0
    return rows


def test_a_small_model_calibrates_on_its_last_training_rows_read_at_once(small, train):
    model = small.model_
    rows = TRAIN_ROWS - 2 * small.window_size  # each read from two windows in
    assert int(TRAIN_ROWS * small.validation_size) < MIN_CALIBRATION_ROWS <= rows
    calibration = model.incident_calibration
    assert calibration is not None and calibration.in_sample and calibration.rows == rows
    measured = IncidentCalibration.measure(
        validation_at_once(model, train, rows), settle_rows=small.window_size, in_sample=True
    )
    assert replace(calibration, floor=None) == measured  # read as validation rows: no self-matches


def test_its_incidents_open_above_threshold_where_its_at_once_scores_demand_it(small):
    calibration = small.model_.incident_calibration
    budget = calibration.level_for(DEFAULT_FALSE_INCIDENTS)
    # the at-once scores pass the floor (threshold_ on their scale) too often
    assert budget > 1.2 * incident_floor(small.model_)
    policy = default_incident_policy(small.model_)
    assert policy.open_level == budget
    assert (policy.k, policy.n, policy.settle_rows) == (calibration.k, calibration.n, 20)


def test_no_false_incident_before_a_late_anomaly_where_threshold_alone_raised_one(small, test_rows):
    model = small.model_
    alone = IncidentPolicy.at(
        incident_floor(model), confirm_level=small.threshold_, settle_rows=small.window_size
    )
    before = [i for i in series_incidents(model, test_rows, alone) if i.start < ANOMALY.start]
    assert before  # the fault: opened on normal rows, and it swallowed the anomaly
    found = small.incidents(test_rows)
    assert len(found) == 1 and ANOMALY.start - 5 <= found["start"].iloc[0] <= ANOMALY.stop
    assert found["channels"].iloc[0].split(";")[0] == "1"


def test_the_expectation_says_it_was_measured_in_sample_and_is_optimistic(small):
    line = expectation(small.model_)
    assert "false incidents per 10,000 normal rows" in line
    assert "in sample" in line and "optimistic" in line


def test_an_explicit_budget_is_taken_from_the_in_sample_calibration(small, test_rows):
    calibration = small.model_.incident_calibration
    strict = small.incidents(test_rows, false_incidents=0.5)
    assert (strict["peak_score"] > calibration.level_for(0.5)).all()
    assert default_incident_policy(small.model_, 0.5).open_level == calibration.level_for(0.5)


@pytest.mark.parametrize("in_sample", [False, True])
def test_the_record_keeps_whether_it_was_measured_in_sample(small, in_sample):
    calibration = replace(small.model_.incident_calibration, in_sample=in_sample)
    record = calibration.record()
    assert record["in_sample"] is in_sample
    assert IncidentCalibration.from_record(record) == calibration
    older = {key: value for key, value in record.items() if key != "in_sample"}
    assert IncidentCalibration.from_record(older).in_sample is False  # held out, then the only kind


def test_model_files_keep_an_in_sample_calibration(small, tmp_path):
    small.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz").model_.incident_calibration
    assert loaded == small.model_.incident_calibration and loaded.in_sample


def test_a_model_fitted_with_validation_data_calibrates_in_sample():
    train = make_series(1200, 3, seed=5)  # 240 validation rows it would have held out
    fitted = MADCluster(**SMALL).fit(train, validation_data=make_series(300, 3, seed=6))
    calibration = fitted.model_.incident_calibration
    assert calibration.in_sample and calibration.rows == len(train) - 2 * fitted.window_size


def _bursts(n: int, height: float, every: int = 50, seed: int = 0) -> np.ndarray:
    """Quiet at-once scores with a 5-row burst every ``every`` rows (an incident each),
    ``height`` and up."""
    rng = np.random.default_rng(seed)
    scores = np.zeros(n)
    for start in range(10, n - 10, every):
        scores[start : start + 5] = height + rng.exponential()
    return scores


@pytest.mark.parametrize(
    ("held_out", "in_sample", "kept"),
    [
        ("ramp", (2.0, 50), "in sample"),  # one incident at any level: no tail to fit
        ((2.0, 150), (6.0, 50), "in sample"),  # three incidents, the in-sample rows open higher
        ((6.0, 150), (2.0, 50), "held out"),  # three incidents, the held-out rows open higher
        ((2.0, 50), (6.0, 50), "held out"),  # eight incidents: trusted, however the rest open
    ],
)
def test_few_validation_incidents_keep_the_calibration_that_opens_higher(
    small, monkeypatch, held_out, in_sample, kept
):
    """Validation rows that raise fewer than TRUSTED_INCIDENTS incidents fit the tail poorly:
    the last training rows are measured too, and the one whose level for the default budget is
    higher kept (the training rows alone are optimistic); with enough, the held-out calibration
    is kept as it is."""
    from madcluster.estimator import incident_scoring

    data = make_series(2000, 3, seed=5)
    n_val = incident_scoring.validation_rows(len(data), small.validation_size, small.window_size)
    assert MIN_CALIBRATION_ROWS <= n_val < incident_scoring.MAX_CALIBRATION_ROWS
    in_sample_rows = min(len(data) - 2 * small.window_size, incident_scoring.MAX_CALIBRATION_ROWS)

    def fake(model, rows, n):
        if n == n_val:
            return np.linspace(0.0, 1.0, n) if held_out == "ramp" else _bursts(n, *held_out)
        assert min(n, incident_scoring.MAX_CALIBRATION_ROWS) == in_sample_rows
        return _bursts(in_sample_rows, *in_sample, seed=1)

    monkeypatch.setattr(incident_scoring, "validation_at_once", fake)
    calibration = incident_scoring.calibrate_incidents(small.model_, data, small.validation_size)
    assert calibration is not None
    assert calibration.in_sample is (kept == "in sample")
    assert calibration.rows == (in_sample_rows if kept == "in sample" else n_val)
    if held_out != "ramp":
        trusted = len(_bursts(n_val, *held_out).nonzero()[0]) // 5
        assert (trusted >= incident_scoring.TRUSTED_INCIDENTS) is (held_out[1] == 50)


def test_enough_validation_rows_are_the_calibration_alone(small, monkeypatch):
    """From MAX_CALIBRATION_ROWS validation rows the last training rows are those very rows:
    nothing is measured in sample."""
    from madcluster.estimator import incident_scoring

    data = make_series(10_400, 3, seed=5)
    n_val = incident_scoring.validation_rows(len(data), small.validation_size, small.window_size)
    assert n_val >= incident_scoring.MAX_CALIBRATION_ROWS
    calls = []

    def fake(model, rows, n):
        calls.append(n)
        return _bursts(min(n, incident_scoring.MAX_CALIBRATION_ROWS), 2.0)

    monkeypatch.setattr(incident_scoring, "validation_at_once", fake)
    calibration = incident_scoring.calibrate_incidents(small.model_, data, small.validation_size)
    assert calls == [n_val]
    assert calibration is not None and not calibration.in_sample
