"""An ONNX file's scorer checks and scales rows with the fitted model's own code
(:class:`~madcluster.estimator.inputs.InputSpec`), so both refuse bad rows with the same words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.exceptions import DataError

pytest.importorskip("onnxruntime")
from madcluster.estimator.onnx_scorer import OnnxScorer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bb28e52"


def test_onnx_scorer_reads_rows_as_the_model_does():
    model = MADCluster.load(FIXTURES / "default.mcz").model_.inputs
    onnx = OnnxScorer(FIXTURES / "default.onnx").inputs
    for field in ("scaler_mean", "scaler_scale", "constant_columns"):
        np.testing.assert_array_equal(getattr(onnx, field), getattr(model, field))
    assert (onnx.roughness_window, onnx.n_features, onnx.min_rows) == (
        model.roughness_window,
        model.n_features,
        model.min_rows,
    )


@pytest.mark.parametrize("bad", ["nan", "columns", "short"])
def test_onnx_scorer_refuses_bad_rows_as_the_model_does(bad):
    rows = np.load(FIXTURES / "expected.npz")["test"].copy()
    if bad == "nan":
        rows[7, 1] = np.nan
    elif bad == "columns":
        rows = rows[:, :2]
    else:
        rows = rows[:3]
    errors = []
    for scorer in (
        MADCluster.load(FIXTURES / "default.mcz"),
        OnnxScorer(FIXTURES / "default.onnx"),
    ):
        with pytest.raises(DataError) as caught:
            scorer.decision_function(rows)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
