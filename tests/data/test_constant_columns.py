"""A constant training column: warned at fit, held at score time (issue 21 item 5)."""

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
    assert "'version' (= 7)" in caplog.text and "held at its training value" in caplog.text
    assert list(model.constant_columns_) == [3]


def test_a_constant_column_that_moves_does_not_flag_every_row(small_params, caplog, tmp_path):
    train, test = _frames()
    model = MADCluster(**small_params).fit(train)
    before = model.decision_function(test)
    moved = test.assign(version=test["version"] + 100.0)  # e.g. a new software version
    with caplog.at_level(logging.WARNING):
        after = model.decision_function(moved)
    np.testing.assert_allclose(after, before)
    assert (after > model.threshold_).mean() < 0.5
    assert "'version' was constant (7)" in caplog.text and "200 row(s)" in caplog.text
    path = tmp_path / "m.mcz"
    model.save(path)  # the held columns survive a save / load
    np.testing.assert_allclose(MADCluster.load(path).decision_function(moved), before)


def test_no_warning_without_constant_columns(small_params, caplog):
    train, test = _frames()
    with caplog.at_level(logging.WARNING):
        MADCluster(**small_params).fit(train.drop(columns="version")).decision_function(test.drop(columns="version"))
    assert "constant" not in caplog.text
