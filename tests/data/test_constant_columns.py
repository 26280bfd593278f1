"""A constant training column: warned at fit, seen as its steps at score time."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from series_helpers import make_series

from madcluster import MADCluster


def _frames():
    train = pd.DataFrame(make_series(500, 3), columns=["a", "b", "c"]).assign(version=7.0)
    test = pd.DataFrame(make_series(200, 3, seed=3), columns=["a", "b", "c"]).assign(version=7.0)
    return train, test


def test_fit_warns_naming_the_constant_column_and_what_scoring_does(small_params, caplog):
    train, _ = _frames()
    with caplog.at_level(logging.WARNING):
        model = MADCluster(**small_params).fit(train)
    assert "'version' (= 7)" in caplog.text and "sees only its steps" in caplog.text
    assert list(model.constant_columns_) == [3]


def test_a_new_level_that_holds_scores_at_its_step_only(small_params, caplog, tmp_path):
    train, test = _frames()
    # on the training scales alone: the new level moves the parts on every row after it, and
    # series scales (read on the whole 200-row series) would rescale the rows before it too
    model = MADCluster(**small_params, series_scale_rows=0).fit(train)
    before = model.decision_function(test)
    moved = test.assign(version=test["version"].where(test.index < 100, 107.0))  # a new version at row 100
    with caplog.at_level(logging.WARNING):
        after = model.decision_function(moved)
    assert (after > model.threshold_).mean() < 0.5  # not every row after the change
    assert after[95:105].max() > before[95:105].max()  # the step itself scores
    np.testing.assert_allclose(after[:80], before[:80], rtol=1e-5, atol=1e-6)  # before the step
    assert "'version' was constant (7)" in caplog.text and "100 row(s)" in caplog.text
    path = tmp_path / "m.mcz"
    model.save(path)  # the constant columns survive a save / load
    np.testing.assert_allclose(MADCluster.load(path).decision_function(moved), after)


def test_a_column_that_moves_and_returns_scores_where_it_moves(small_params):
    train, test = _frames()
    model = MADCluster(**small_params).fit(train)
    blip = test.assign(version=test["version"].where((test.index < 120) | (test.index >= 125), 9.0))
    scores = model.decision_function(blip)
    assert scores[118:128].max() > np.percentile(scores[:100], 99)


def test_no_warning_without_constant_columns(small_params, caplog):
    train, test = _frames()
    with caplog.at_level(logging.WARNING):
        MADCluster(**small_params).fit(train.drop(columns="version")).decision_function(test.drop(columns="version"))
    assert "constant" not in caplog.text
