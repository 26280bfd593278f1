"""The lowest level incidents open at stays on the at-once score's scale when the final score's
weights move without the at-once ones: the default's discord part weighs 2.5 in the final score
of continuous columns and 2 at once, so its floor is the threshold of the training scores with
the discord part at the weight its at-once weight pairs with (1), not ``threshold_``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.base import threshold_from_scores
from madcluster.estimator.incident_scoring import (
    default_incident_policy,
    expectation,
    incident_floor,
)

TINY = {"window_size": 20, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}


@pytest.fixture(scope="module")
def fitted() -> tuple[MADCluster, np.ndarray]:
    train = make_series(700, 3, seed=4)
    return MADCluster(**TINY).fit(train), train


def test_the_floor_is_the_threshold_with_the_weights_the_at_once_score_pairs_with(fitted):
    detector, train = fitted
    model = detector.model_
    c = model.combination
    assert c.weights["discord"] == 2.5 and c.at_once_weights == {"discord": 2.0}
    assert c.paired_weights() == {**c.weights, "discord": 1.0}
    params = detector.get_params()
    rows = model.inputs.check_rows(train)
    own = model.own_scores(model.inputs.model_input(rows))

    def threshold(combination) -> float:
        scores = combination.reference_score(rows, own)
        return threshold_from_scores(scores, params["threshold"], params["contamination"])

    assert threshold(c) == pytest.approx(model.threshold, rel=1e-9)  # the fit's own reading
    want = threshold(replace(c, weights=c.paired_weights()))
    floor = model.incident_calibration.floor
    assert floor == pytest.approx(want, rel=1e-9)
    assert floor < model.threshold  # the discord part weighs less there
    assert incident_floor(model) == floor
    policy = default_incident_policy(model)
    assert policy.open_level >= floor
    assert policy.confirm_level == model.threshold  # final scores confirm on their own scale
    # the calibrated level below the floor: the policy opens at the floor
    low = replace(model.incident_calibration, base=floor / 100, strengths=(floor / 50,) * 8)
    assert default_incident_policy(replace(model, incident_calibration=low)).open_level == floor
    line = expectation(model)
    assert "lowest level they open at" in line or "no false-alarm estimate" in line


def test_the_floor_survives_a_model_file_and_older_files_open_at_the_threshold(fitted, tmp_path):
    detector, _ = fitted
    path = tmp_path / "m.mcz"
    detector.save(path)
    loaded = MADCluster.load(path)
    assert loaded.model_.incident_calibration == detector.model_.incident_calibration
    assert "floor" in detector.model_.incident_calibration.record()
    before = replace(detector.model_.incident_calibration, floor=None)
    assert "floor" not in before.record()
    older = replace(detector.model_, incident_calibration=before)
    assert incident_floor(older) == older.threshold
    assert incident_floor(replace(older, incident_calibration=None)) == older.threshold


def test_weights_a_user_gives_pair_with_themselves(fitted):
    """A discord weight given: its at-once weight follows it (times its share), and the floor is
    ``threshold_``."""
    _, train = fitted
    mine = MADCluster(part_weights={"discord": 2.0}, **TINY).fit(train).model_
    assert "discord" not in mine.combination.at_once_weights
    assert mine.incident_calibration.floor is None and incident_floor(mine) == mine.threshold


def test_on_few_valued_columns_incidents_read_the_positive_sum_the_final_score_the_excess():
    """The default's rule on rows with status columns: its final score counts their share of each
    part's excess over its training tail (another scale: ``threshold_`` differs), its at-once
    score, floor and incident calibration are the positive sum's, so incidents are too."""
    rng = np.random.default_rng(3)
    status = rng.integers(0, 2, size=(1000, 2)).astype(np.float32)
    rows = np.hstack([make_series(1000, 2, seed=5), status])
    train, test = rows[:700], rows[700:]
    mixed = MADCluster(**TINY).fit(train)
    positive = MADCluster(**TINY, part_rule="positive-zscore-sum").fit(train)
    assert mixed.model_.combination.at_once_rule == "positive-zscore-sum"
    assert mixed.threshold_ != pytest.approx(positive.threshold_)
    assert not np.allclose(mixed.decision_function(test), positive.decision_function(test))
    np.testing.assert_array_equal(
        mixed.stream().update(test).scores, positive.stream().update(test).scores
    )
    assert incident_floor(mixed.model_) == incident_floor(positive.model_)
    assert mixed.model_.incident_calibration == positive.model_.incident_calibration
