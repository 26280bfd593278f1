"""A warm-started refit on recent rows (issue 36 item 5) and the attribution baseline measured at
the first explain() or save, not in fit (item 2)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import make_series

from madcluster import MADCluster
from madcluster.defaults import REFIT_EPOCHS
from madcluster.exceptions import DataError, ParameterError


def test_refit_starts_from_the_model_and_learns_the_new_level(small_params):
    train = make_series(800, 3, seed=0)
    shifted = make_series(800, 3, seed=1) + np.array([3.0, 0.0, -2.0], dtype=np.float32)
    model = MADCluster(**small_params).fit(train)
    old_threshold, old_net = model.threshold_, model.model_.net
    before = float(np.mean(model.decision_function(shifted) > model.threshold_))
    model.refit(shifted[:500])
    assert model.epochs == small_params["epochs"]  # the parameters do not change
    assert 1 <= len(model.history_["epoch"]) <= REFIT_EPOCHS
    assert model.model_.net is not old_net and model.threshold_ != old_threshold
    assert np.allclose(model.scaler_mean_[:3], shifted[:500].mean(axis=0), atol=1e-4)
    after = float(np.mean(model.decision_function(shifted[500:]) > model.threshold_))
    assert before > 0.5 and after < 0.2


def test_refit_weights_start_where_the_model_ended(small_params, monkeypatch):
    from madcluster.estimator import fitting

    train = make_series(800, 3, seed=0)
    model = MADCluster(**small_params).fit(train)
    trained = {k: v.clone() for k, v in model.model_.net.state_dict().items()}
    seen = {}
    original = fitting.train

    def spy(params, build, *args):
        seen["state"] = build().state_dict()
        seen["epochs"] = params["epochs"]
        return original(params, build, *args)

    monkeypatch.setattr(fitting, "train", spy)
    model.refit(train[-400:], epochs=1)
    assert seen["epochs"] == 1
    assert all(np.array_equal(seen["state"][k].numpy(), v.numpy()) for k, v in trained.items())


def test_refit_from_scratch_is_a_fit(small_params):
    train = make_series(600, 3, seed=0)
    recent = make_series(600, 3, seed=2)
    refitted = MADCluster(**small_params).fit(train).refit(recent, from_scratch=True)
    fresh = MADCluster(**small_params).fit(recent)
    np.testing.assert_array_equal(refitted.decision_scores_, fresh.decision_scores_)


def test_refit_checks_its_rows_and_epochs(small_params):
    model = MADCluster(**small_params).fit(make_series(600, 3))
    with pytest.raises(DataError):
        model.refit(make_series(600, 4))
    with pytest.raises(DataError):
        model.refit(make_series(10, 3))
    with pytest.raises(ParameterError):
        model.refit(make_series(600, 3), epochs=0)


def test_the_attribution_baseline_waits_for_explain_and_is_the_same(small_params, tmp_path):
    train, test = make_series(800, 4, seed=0), make_series(300, 4, seed=1)
    test[150:160, 2] += 8.0
    model = MADCluster(**small_params).fit(train)
    assert model.model_.attribution._values is None  # not measured in fit
    lazy = model.explain(test)
    eager = MADCluster(**small_params).fit(train)
    eager.attribution_baseline_  # noqa: B018 - measured before any explain
    np.testing.assert_array_equal(model.attribution_baseline_, eager.attribution_baseline_)
    np.testing.assert_array_equal(lazy, eager.explain(test))
    saved = MADCluster(**small_params).fit(train)
    saved.save(tmp_path / "m.mcz")  # a save measures it: the file has it
    np.testing.assert_array_equal(MADCluster.load(tmp_path / "m.mcz").attribution_baseline_, eager.attribution_baseline_)
