"""Columns far from their training range on most scored rows are named, with how far, by the API
(a FarFromTrainingWarning from decision_function / predict) and by `madcluster score` (one
WARNING line): the same function the service's ``far_columns`` answers use."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from madcluster import FarFromTrainingWarning, MADCluster
from madcluster.cli import main

COLUMNS = ["flow", "pressure", "temp"]


def _series(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = np.arange(n)[:, None]
    values = np.sin(t / np.array([3.0, 7.0, 11.0])) + 0.1 * rng.standard_normal((n, 3))
    return pd.DataFrame(values, columns=COLUMNS)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("far") / "m.mcz"
    MADCluster(window_size=12, epochs=1, random_state=0).fit(_series(300, 0)).save(path)
    return path


def _far_flow(model: MADCluster, frame: pd.DataFrame, deviations: float) -> pd.DataFrame:
    moved = frame.copy()
    moved["flow"] = model.scaler_mean_[0] + deviations * model.scaler_scale_[0]
    return moved


def test_scoring_far_data_warns_naming_the_column_and_how_far(model_file):
    model = MADCluster.load(model_file)
    far = _far_flow(model, _series(40, 1), -58.0)
    expected = r"'flow' \(40 of 40 rows, median -58 training deviations from its mean\)"
    with pytest.warns(FarFromTrainingWarning, match=expected):
        model.decision_function(far)
    with pytest.warns(FarFromTrainingWarning, match="'flow'"):
        model.predict(far[["temp", "flow", "pressure"]])  # matched by name, as scored
    with warnings.catch_warnings():
        warnings.simplefilter("error", FarFromTrainingWarning)
        model.decision_function(_series(40, 1))  # in range: no warning
        one_spike = _series(40, 1)
        one_spike.loc[3, "pressure"] = 1e3  # one far row of 40: perhaps an anomaly, not a move
        model.decision_function(one_spike)


def test_score_command_names_the_far_column_in_one_line(model_file, tmp_path, capsys):
    model = MADCluster.load(model_file)
    _far_flow(model, _series(40, 2), 30.0).to_csv(tmp_path / "far.csv", index=False)
    args = ["score", str(model_file), str(tmp_path / "far.csv"), "--plot", "none"]
    assert main([*args, "-o", str(tmp_path / "s.csv")]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "far from the training range" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("WARNING: far from the training range on most rows: 'flow' (40 of")
    assert "median +30 training deviations" in lines[0] and ".py:" not in err


def test_scoring_an_onnx_export_names_the_far_column_too(model_file, tmp_path, capsys):
    """The export records the scaling's kind, so the torch-free scorer and `madcluster score
    model.onnx` name far columns as the model file does (a minmax model: in training ranges)."""
    pytest.importorskip("onnxruntime")
    from madcluster import OnnxScorer
    from madcluster.estimator.export import export_onnx

    minmax = MADCluster(window_size=12, epochs=1, random_state=0, scaling="minmax")
    for model, unit in ((MADCluster.load(model_file), "training deviations"), (minmax, "ranges")):
        if not hasattr(model, "model_"):
            model.fit(_series(300, 0))
        export_onnx(model.model_, tmp_path / "m.onnx")
        far = _far_flow(model, _series(40, 1), -58.0)
        with pytest.warns(FarFromTrainingWarning, match=f"'flow' \\(40 of 40 rows, median .*{unit}"):
            OnnxScorer(tmp_path / "m.onnx").decision_function(far)
    far.to_csv(tmp_path / "far.csv", index=False)
    args = ["score", str(tmp_path / "m.onnx"), str(tmp_path / "far.csv"), "--plot", "none"]
    assert main([*args, "-o", str(tmp_path / "s.csv")]) == 0
    assert "WARNING: far from the training range on most rows: 'flow'" in capsys.readouterr().err
