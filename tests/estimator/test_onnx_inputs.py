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


def test_the_model_file_and_the_onnx_metadata_write_one_inputs_record(tmp_path):
    """Both files hold the inputs as :meth:`InputSpec.to_record` gives them (the model file under
    its format's names, its scalars as JSON and the scaler as arrays; the metadata as JSON): the
    same values, read back by the same :meth:`InputSpec.from_record`."""
    import json
    import zipfile

    from madcluster.estimator.export import export_onnx
    from madcluster.estimator.onnx_metadata import scoring_metadata
    from madcluster.estimator.persistence import INPUT_KEYS

    rows = np.sin(np.arange(300)[:, None] / np.array([3.0, 7.0])).astype(np.float32)
    model = MADCluster(window_size=12, epochs=1, random_state=0, scaling="minmax").fit(rows)
    record = model.model_.inputs.to_record()
    model.save(tmp_path / "m.mcz")
    with zipfile.ZipFile(tmp_path / "m.mcz") as zf:
        in_file = json.loads(zf.read("config.json"))["fitted"]
    metadata = scoring_metadata(model.model_)
    for key, value in record.items():
        expected = value.tolist() if isinstance(value, np.ndarray) else value
        assert metadata[key] == expected, key
        if key in INPUT_KEYS and not isinstance(value, np.ndarray):
            assert in_file[INPUT_KEYS[key]] == expected, key
    export_onnx(model.model_, tmp_path / "m.onnx")
    again = OnnxScorer(tmp_path / "m.onnx").inputs.to_record()
    loaded = MADCluster.load(tmp_path / "m.mcz").model_.inputs.to_record()
    for key, value in record.items():
        np.testing.assert_array_equal(again[key], value)
        np.testing.assert_array_equal(loaded[key], value)
