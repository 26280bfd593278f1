"""embed(model_, X) and center_path_: what the paper's figures are drawn from."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.fitted import embed


def test_embed_gives_one_feature_vector_per_step(full_model, data, params):
    h = embed(full_model.model_, data[1])
    assert h.shape == (len(data[1]), params["embedder_params"]["hidden_size"])
    assert np.isfinite(h).all() and h.std(axis=0).max() > 0


def test_embed_is_what_the_score_is_computed_from(data, params):
    # distance-only with the raw Eq. 7 sum and no base score: the score is exactly ||h - c||^2 - R^2
    params = {**params, "embedder_params": {"hidden_size": 8, "n_layers": 2}}
    model = MADCluster(input_terms=None, mode="distance-only", score_scaling="raw", **params).fit(
        data[0]
    )
    h = embed(model.model_, data[1])
    head = model.net_.head
    c, r = head.center.detach().numpy(), float(head.radius)
    expected = ((h - c) ** 2).sum(axis=1) - r**2
    # after the warm-up (rows 0..L-s-1, quantile-calibrated onto the later rows' scale: madcluster.estimator.warmup)
    steady = model.window_size - model.model_.grid.score_stride
    np.testing.assert_allclose(
        model.decision_function(data[1])[steady:], expected[steady:], rtol=1e-4, atol=1e-5
    )
    # distance-only keeps c fixed: every recorded epoch has the same center
    assert model.center_path_.shape == (params["epochs"] + 1, 8)
    np.testing.assert_array_equal(
        model.center_path_, np.broadcast_to(model.center_path_[0], model.center_path_.shape)
    )


def test_center_path_records_every_epoch_and_moves(full_model, params):
    path = full_model.center_path_
    assert path.shape == (params["epochs"] + 1, 8)  # the initial c, then after each epoch
    # no validation split, so no checkpoint is restored: the last row is the final center
    np.testing.assert_allclose(path[-1], full_model.net_.head.center.detach().numpy())
    assert np.linalg.norm(path[-1] - path[0]) > 0  # the full method learns c


def test_base_only_has_no_center_path(base_model):
    assert base_model.center_path_ is None


def test_center_path_survives_save_and_load(full_model, data, tmp_path):
    full_model.save(tmp_path / "m.mcz")
    loaded = MADCluster.load(tmp_path / "m.mcz")
    np.testing.assert_array_equal(loaded.center_path_, full_model.center_path_)
    np.testing.assert_allclose(
        embed(loaded.model_, data[1]), embed(full_model.model_, data[1]), rtol=1e-5, atol=1e-6
    )


def test_embed_checks_its_input(full_model):
    with pytest.raises(ValueError):
        embed(full_model.model_, np.zeros((50, 2), dtype=np.float32))  # wrong number of features


def test_embed_maps_non_causal_windows_back_to_their_points(data):
    # a point-wise module: h_t = W x_t whatever window it sits in, so every step must come back as
    # exactly W x_t, the overlap of the end-aligned last window included (a shifted mapping fails)
    torch = pytest.importorskip("torch")
    module = torch.nn.Linear(3, 4)
    model = MADCluster(
        input_terms=None,
        embedder=module,
        mode="distance-only",
        window_size=20,
        stride=4,
        epochs=1,
        validation_size=0.0,
        random_state=0,
        device="cpu",
    ).fit(data[0])
    test = data[1][:95]  # 95 = 4 windows of 20 + an end-aligned fifth overlapping the fourth
    h = embed(model.model_, test)
    linear = model.net_.embedder.module  # the fitted copy of the module
    assert not model.net_.embedder.causal
    with torch.no_grad():
        expected = linear(torch.from_numpy(model.model_.inputs.model_input(test))).numpy()
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-6)


def test_center_path_starts_when_the_head_starts_after_pretraining(data, params):
    model = MADCluster(input_terms=None, pretrain_epochs=1, **params).fit(data[0])
    # c is initialised after the one pretraining epoch: that value, then one row per later epoch
    assert model.center_path_.shape == (params["epochs"] - 1 + 1, 8)
    assert np.linalg.norm(model.center_path_[0]) > 0  # the initialised c, not the zero placeholder


def test_the_old_method_still_embeds_and_warns(full_model, data):
    with pytest.warns(DeprecationWarning, match=r"embed\(detector.model_, X\)"):
        h = full_model.embed(data[1][:64])
    np.testing.assert_array_equal(h, embed(full_model.model_, data[1][:64]))
