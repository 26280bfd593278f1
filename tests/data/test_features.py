"""The roughness channels: the maths by hand, causality, and what they add to the detector."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster.data.features import ROUGHNESS_EPS, roughness


def test_roughness_by_hand():
    x = np.array([[0.0], [1.0], [3.0], [3.0], [7.0]])  # differences 0, 1, 2, 0, 4
    out = roughness(x, window=2)
    means = [np.nan, 1.0, (1 + 4) / 2, (4 + 0) / 2, (0 + 16) / 2]  # early rows average what they have
    np.testing.assert_allclose(out[:, 0], np.log(np.array(means) + ROUGHNESS_EPS))  # row 0: none (NaN)


def test_constant_channel_is_log_eps_and_output_keeps_shape():
    x = np.column_stack([np.full(50, 3.0), np.arange(50.0)])
    out = roughness(x, window=10)
    assert out.shape == x.shape
    assert np.all(np.isnan(out[0]))
    np.testing.assert_allclose(out[1:, 0], np.log(ROUGHNESS_EPS))
    np.testing.assert_allclose(out[1:, 1], np.log(1.0 + ROUGHNESS_EPS))


def test_roughness_is_causal():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 3))
    y = x.copy()
    y[120:] *= 5.0
    np.testing.assert_array_equal(roughness(x, 10)[1:120], roughness(y, 10)[1:120])
    assert np.all(roughness(y, 10)[130:] > roughness(x, 10)[130:].max() - 1.0)


def test_bad_window():
    with pytest.raises(ValueError, match="window must be >= 1"):
        roughness(np.zeros((10, 2)), 0)


def test_detector_feeds_the_roughness_channels_and_round_trips(tmp_path):
    from madcluster import MADCluster

    rng = np.random.default_rng(0)
    x = np.sin(np.arange(900)[:, None] / 7 + np.arange(3)) + 0.1 * rng.standard_normal((900, 3))
    params = {"window_size": 20, "epochs": 1, "stride": 5, "random_state": 0}
    params["embedder_params"] = {"hidden_size": 8, "n_layers": 2}
    plain = MADCluster(roughness_window=0, **params).fit(x)
    rough = MADCluster(roughness_window=10, **params).fit(x)
    assert plain.net_.embedder.layers[0].input_size == 3
    assert rough.net_.embedder.layers[0].input_size == 6 and rough.n_features_in_ == 3
    seen = rough.model_.inputs.model_input(x)
    assert seen.shape == (900, 6) and seen.dtype == np.float32
    np.testing.assert_allclose(seen[:, 3:].mean(axis=0), 0.0, atol=1e-4)  # scaled on train
    scores = rough.decision_function(x)
    rough.save(tmp_path / "m.zip")
    np.testing.assert_allclose(MADCluster.load(tmp_path / "m.zip").decision_function(x), scores)
    with pytest.raises(ValueError, match="roughness_window must be an integer >= 0"):
        MADCluster(roughness_window=-1, **params).fit(x)


def test_default_roughness_is_for_the_drnn_only():
    from madcluster import MADCluster

    x = np.random.default_rng(0).standard_normal((300, 2))
    small = {"window_size": 20, "epochs": 1, "stride": 10, "random_state": 0}
    drnn = MADCluster(embedder_params={"hidden_size": 4, "n_layers": 1}, **small).fit(x)
    assert drnn.roughness_window_ == 3 and len(drnn.scaler_mean_) == 4
    svdd = MADCluster(embedder="deepsvdd", embedder_params={"hidden_size": 4, "n_layers": 1}, **small).fit(x)
    assert svdd.roughness_window_ == 0 and len(svdd.scaler_mean_) == 2  # base models: published input
    paper = MADCluster.from_preset("paper", embedder_params={"hidden_size": 4, "n_layers": 1}, **small).fit(x)
    assert paper.roughness_window_ == 0
