"""The estimator API: fit / decision_function / predict / save / load, determinism, errors."""

from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest
import torch
from series_helpers import make_series
from sklearn.base import clone
from torch import nn

from madcluster import DataError, MADCluster, ModelFileError
from madcluster.exceptions import NotFittedError


@pytest.fixture(scope="module")
def fitted() -> MADCluster:
    params = {"window_size": 20, "stride": 4, "epochs": 2, "batch_size": 32, "embedder_params": {"hidden_size": 16, "n_layers": 2}, "random_state": 0}
    return MADCluster(**params).fit(make_series())


def test_one_finite_score_per_row_for_any_length(fitted):
    for n in (20, 21, 57, 333):
        scores = fitted.decision_function(make_series(n, seed=3))
        assert scores.shape == (n,) and np.all(np.isfinite(scores))


def test_fitted_attributes_and_predict(fitted):
    assert fitted.decision_scores_.shape == (800,)
    assert fitted.threshold_ == pytest.approx(np.quantile(fitted.decision_scores_, 0.99))
    assert fitted.labels_.sum() == (fitted.decision_scores_ > fitted.threshold_).sum()
    x = make_series(200, seed=5)
    np.testing.assert_array_equal(fitted.predict(x), (fitted.decision_function(x) > fitted.threshold_).astype(int))
    h = fitted.history_
    for key in ("nu", "radius", "mean_distance", "cluster_loss", "distance_loss", "train_loss", "val_loss"):
        assert len(h[key]) == len(h["epoch"]) >= 1 and np.all(np.isfinite(h[key]))
    assert all(0 < v < 1 for v in h["nu"])


def test_dataframe_input_and_injected_anomaly_scores_higher(fitted):
    x = make_series(400, seed=9)
    x[200:210] += 4.0
    scores = fitted.decision_function(pd.DataFrame(x, columns=list("abc")))
    assert scores[200:210].mean() > np.quantile(scores, 0.9)


@pytest.mark.slow
def test_same_seed_same_scores_and_other_seed_differs(small_params, series):
    a = MADCluster(**small_params).fit(series).decision_function(series)
    b = MADCluster(**small_params).fit(series).decision_function(series)
    np.testing.assert_array_equal(a, b)
    c = MADCluster(**{**small_params, "random_state": 1}).fit(series).decision_function(series)
    assert not np.allclose(a, c)


def test_clone_and_params(fitted):
    copy = clone(fitted)
    assert copy.get_params() == fitted.get_params()
    assert not hasattr(copy, "threshold_")
    copy.set_params(epochs=1)
    assert copy.epochs == 1


def test_save_load_round_trip_gives_identical_scores(fitted, tmp_path):
    path = tmp_path / "model.mcz"
    fitted.save(path)
    loaded = MADCluster.load(path)
    x = make_series(300, seed=4)
    np.testing.assert_array_equal(loaded.decision_function(x), fitted.decision_function(x))
    assert loaded.threshold_ == fitted.threshold_
    assert loaded.get_params()["window_size"] == 20
    assert not list(tmp_path.glob(".*tmp")), "atomic write left a temporary file"
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["arrays.npz", "config.json"]


def test_bad_model_files(tmp_path, fitted):
    with pytest.raises(ModelFileError, match="does not exist"):
        MADCluster.load(tmp_path / "missing.mcz")
    garbage = tmp_path / "garbage.mcz"
    garbage.write_bytes(b"not a zip at all")
    with pytest.raises(ModelFileError, match="corrupt or truncated"):
        MADCluster.load(garbage)
    good = tmp_path / "good.mcz"
    fitted.save(good)
    truncated = tmp_path / "truncated.mcz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(ModelFileError):
        MADCluster.load(truncated)


@pytest.mark.parametrize(
    "data,match",
    [
        (np.full((100, 3), np.nan), "NaN"),
        (np.where(np.eye(100, 3) > 0, np.inf, 1.0), "NaN/inf"),
        (np.zeros(100), "2-D"),
        (np.zeros((100, 3, 2)), "2-D"),
        (np.zeros((10, 3)), "fewer than one window"),
        (np.zeros((100, 4)), "fitted on 3"),
        (pd.DataFrame({"a": np.zeros(100), "b": ["x"] * 100}), "non-numeric"),
    ],
)
def test_bad_input_raises_clear_value_error(fitted, data, match):
    with pytest.raises(DataError, match=match):
        fitted.decision_function(data)


def test_fit_errors(series):
    with pytest.raises(ValueError, match="unknown embedder"):
        MADCluster(embedder="nope", epochs=1).fit(series)
    with pytest.raises(ValueError, match="unknown mode"):
        MADCluster(mode="nope").fit(series)
    with pytest.raises(ValueError, match="unknown precision 'float16'; choose one of float32, bfloat16"):
        MADCluster(precision="float16").fit(series)
    with pytest.raises(DataError, match="fewer than one window"):
        MADCluster().fit(series[:50])
    with pytest.raises(NotFittedError):
        MADCluster().decision_function(series)


class TinyConv(nn.Module):
    """A user's own embedder: any module returning h [B, L, f]."""

    def __init__(self, n_features: int, f: int = 8) -> None:
        super().__init__()
        self.conv = nn.Conv1d(n_features, f, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)


def test_custom_module_plugs_in_and_round_trips(series, tmp_path):
    model = MADCluster(embedder=TinyConv(3), window_size=20, stride=4, epochs=2, random_state=0).fit(series)
    scores = model.decision_function(series)
    assert scores.shape == (800,)
    model.save(tmp_path / "custom.mcz")
    with pytest.raises(ModelFileError, match="custom embedder"):
        MADCluster.load(tmp_path / "custom.mcz")
    loaded = MADCluster.load(tmp_path / "custom.mcz", embedder=TinyConv(3))
    np.testing.assert_array_equal(loaded.decision_function(series), scores)


class Pooled(nn.Module):
    def forward(self, x):
        return x.mean(dim=1)  # [B, D]: time pooled away


def test_custom_module_with_wrong_output_shape_is_rejected(series):
    with pytest.raises(ValueError, match=r"must return h of shape \[B, L, f\]"):
        MADCluster(embedder=Pooled(), window_size=20, epochs=1).fit(series)
