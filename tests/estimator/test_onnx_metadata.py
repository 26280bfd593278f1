"""What an ONNX file's metadata holds, field by field against the fitted model (the mutation
run's survivors: the record's version and column names were never read back by a test)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from series_helpers import three_channels

from madcluster import MADCluster
from madcluster.estimator.onnx_metadata import scoring_metadata
from madcluster.estimator.onnx_scorer import METADATA_VERSION


def test_the_metadata_is_the_fitted_models_record_as_json():
    rows = pd.DataFrame(three_channels(200, 0), columns=["a", "b", "c"])
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0).fit(rows)
    fitted = model.model_
    meta = json.loads(json.dumps(scoring_metadata(fitted)))  # JSON as it is written
    assert meta["version"] == METADATA_VERSION
    assert meta["feature_names"] == ["a", "b", "c"] and meta["n_features"] == 3
    grid = fitted.grid
    assert (meta["window_size"], meta["score_stride"], meta["causal"]) == (
        grid.window_size,
        grid.score_stride,
        grid.causal,
    )
    for key in ("scaler_mean", "scaler_scale", "constant_columns"):
        np.testing.assert_array_equal(meta[key], getattr(fitted.inputs, key))
    assert meta["roughness_window"] == fitted.inputs.roughness_window
    assert meta["threshold"] == model.threshold_
    assert meta["warmup_reference_from"] == fitted.warmup.reference_from
    table = fitted.warmup.quantiles
    assert (meta["warmup_quantiles"] is None) == (table is None)
    if table is not None:
        np.testing.assert_array_equal(meta["warmup_quantiles"], table)
    assert "combination" not in meta  # no input terms: the graph's score alone


def test_a_model_without_names_or_warm_up_writes_none_for_them():
    """Window scores (``score_type="window"``) are not causal: no warm-up table."""
    model = MADCluster(input_terms=None, window_size=12, epochs=1, random_state=0)
    model.set_params(score_type="window").fit(three_channels(200, 0))
    meta = scoring_metadata(model.model_)
    assert meta["feature_names"] is None
    assert meta["causal"] is False and meta["warmup_quantiles"] is None


def test_the_combination_is_read_back_whole_from_the_json():
    """The default's parts travel as JSON arrays (dtype, shape, values) and the scorer's reader
    rebuilds the same combination: every array equal, of its dtype and shape."""
    from madcluster.estimator.onnx_scorer import _read_input_terms
    from madcluster.score.schema import combination_arrays, combination_record

    model = MADCluster(window_size=12, epochs=1, random_state=0).fit(three_channels(300, 0))
    combination = model.model_.combination
    assert combination.combines
    meta = json.loads(json.dumps(scoring_metadata(model.model_)))
    read = _read_input_terms(meta, "m.onnx")
    assert combination_record(read) == combination_record(combination)
    expected, got = combination_arrays(combination), combination_arrays(read)
    assert got.keys() == expected.keys()
    for key, array in expected.items():
        assert got[key].dtype == array.dtype and got[key].shape == array.shape, key
        np.testing.assert_array_equal(got[key], array)
    x = three_channels(100, 3)
    base = np.linspace(0.0, 1.0, len(x))
    np.testing.assert_array_equal(read.score(x, base), combination.score(x, base))
