"""Per-channel attribution: occlusion contributions and MADCluster.explain."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.embedders import EMBEDDERS
from madcluster.estimator.attribution import (
    channel_groups,
    channel_ranking,
    fit_baseline,
    input_deviation,
    occlusion_contributions,
    spans_around,
    standardised_contributions,
    top_channels,
)


def test_occlusion_of_an_additive_score_gives_each_channel_its_own_part():
    inputs = np.array([[1.0, 2.0, 0.0], [0.0, -3.0, 1.0]])
    weights = np.array([1.0, 2.0, 3.0])
    contributions = occlusion_contributions(lambda m: (m**2) @ weights, inputs, [[0], [1], [2]])
    np.testing.assert_allclose(contributions, inputs**2 * weights)


def test_derived_columns_are_occluded_with_their_channel():
    assert channel_groups(2, 4) == [[0, 2], [1, 3]]
    inputs = np.ones((3, 4))
    contributions = occlusion_contributions(lambda m: m.sum(axis=1), inputs, channel_groups(2, 4))
    np.testing.assert_allclose(contributions, 2.0)


def test_input_deviation_is_the_largest_magnitude_among_a_channels_columns():
    inputs = np.array([[1.0, -2.0, -3.0, 0.5], [0.0, 1.0, 0.2, -0.1]])
    np.testing.assert_allclose(input_deviation(inputs, [[0, 2], [1, 3]]), [[3.0, 2.0], [0.2, 1.0]])


def test_baseline_holds_each_terms_mean_and_spread_on_normal_data():
    rng = np.random.default_rng(0)
    normal = rng.normal(size=(500, 2)) * [1.0, 3.0]
    baseline = fit_baseline(lambda m: m[:, 0] ** 2 + m[:, 1] ** 2, normal, [[0], [1]], max_steps=400)
    last = normal[-400:]
    np.testing.assert_allclose(baseline[0], (last**2).mean(axis=0))
    np.testing.assert_allclose(baseline[1], (last**2).std(axis=0))
    np.testing.assert_allclose(baseline[2:], [np.abs(last).mean(axis=0), np.abs(last).std(axis=0)])


def test_a_channel_that_always_moves_the_score_does_not_outrank_the_unusual_one():
    # channel 0 always drops the score by ~10 (+-1); channel 1 by ~0 (+-0.1), now by 2
    baseline = np.array([[10.0, 0.0], [1.0, 0.1], [1.0, 1.0], [0.5, 0.5]])
    occlusion = np.array([[10.5, 2.0]])
    deviation = np.array([[1.0, 1.0]])
    assert channel_ranking(occlusion, slice(0, 1))[0] == 0  # raw drop: the always-busy channel
    z = standardised_contributions(occlusion, deviation, baseline)
    np.testing.assert_allclose(z, [[0.5, 20.0]])
    assert channel_ranking(z, slice(0, 1))[0] == 1


def test_a_channel_the_score_ignores_gets_a_floored_spread_not_a_huge_z_score():
    normal = np.zeros((50, 2))
    normal[::2, 0] = 1.0  # channel 0 moves the score; channel 1 is constant and ignored
    baseline = fit_baseline(lambda m: m[:, 0].copy(), normal, [[0], [1]])
    np.testing.assert_allclose(baseline[1], [0.5, 0.5e-3])
    np.testing.assert_allclose(baseline[3], [0.5, 0.5e-3])
    assert np.all(fit_baseline(lambda m: np.zeros(len(m)), np.zeros((5, 2)), [[0], [1]])[[1, 3]] == 1.0)


def test_top_channels_lists_positive_contributors_in_order():
    contributions = np.array([[0.1, 3.0, -1.0, 2.0], [-1.0, -2.0, -0.5, -3.0]])
    assert top_channels(contributions, ["a", "b", "c", "d"]) == ["b;d;a", ""]
    assert list(channel_ranking(contributions, slice(0, 1))) == [1, 3, 0, 2]


@pytest.fixture(scope="module")
def spiky():
    train = make_series(800, 4, seed=0)
    test = make_series(300, 4, seed=1)
    test[150:160, 2] += 8.0  # the anomaly is in channel 2 only
    return train, test


def test_explain_names_the_channel_with_the_anomaly(spiky, small_params, tmp_path):
    train, test = spiky
    model = MADCluster(**small_params).fit(train)
    contributions = model.explain(test)
    assert contributions.shape == test.shape and np.isfinite(contributions).all()
    assert channel_ranking(contributions, slice(150, 160))[0] == 2
    assert model.attribution_baseline_.shape == (4, test.shape[1])
    model.save(tmp_path / "m.mcz")
    np.testing.assert_allclose(MADCluster.load(tmp_path / "m.mcz").explain(test), contributions, rtol=1e-5, atol=1e-6)
    from dataclasses import replace

    from madcluster.estimator.attribution import AttributionBaseline

    model.model_ = replace(model.model_, attribution=AttributionBaseline(None))  # a file from before the baseline: the raw drop
    raw = model.explain(test)
    assert channel_ranking(raw, slice(150, 160))[0] == 2 and not np.allclose(raw, contributions)


@pytest.mark.parametrize("name", sorted(EMBEDDERS))
def test_explain_works_for_every_base_model(name, spiky):
    train, test = spiky
    params = dict(getattr(EMBEDDERS[name], "test_params", {}))
    model = MADCluster(embedder=name, embedder_params=params, window_size=16, stride=8, epochs=1,
                       batch_size=32, random_state=0).fit(train[:400])
    contributions = model.explain(test)
    assert contributions.shape == test.shape and np.isfinite(contributions).all()
    # the contributions explain the score: holding every channel at its mean changes it
    assert np.abs(contributions).sum() > 0


def test_spans_around_alerts_keep_a_window_of_history_and_merge():
    rows = np.zeros(1000, dtype=bool)
    rows[[300, 301, 340, 900]] = True
    assert spans_around(rows, 20, 1000) == [(260, 361), (860, 921)]
    assert spans_around(np.zeros(50, dtype=bool), 20, 50) == []


def test_explain_of_alert_rows_only_matches_the_full_ranking(spiky, small_params):
    train, test = spiky
    model = MADCluster(**small_params).fit(train)
    rows = np.zeros(len(test), dtype=bool)
    rows[150:160] = True
    some = model.explain(test, rows=rows)
    assert np.all(some[~rows] == 0) and np.abs(some[rows]).sum() > 0
    assert channel_ranking(some, rows)[0] == channel_ranking(model.explain(test), rows)[0] == 2
