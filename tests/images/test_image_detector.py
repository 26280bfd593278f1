"""ImageMADCluster: each image model alone and + MADCluster (both layouts) trains for one epoch
and gives finite scores and maps of the right shape; save/load round trip; clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.exceptions import DataError, ModelFileError, NotFittedError
from madcluster.images.detector import ImageMADCluster
from madcluster.images.inputs import training_batch_size
from madcluster.images.io import read_mvtec_class
from madcluster.images.table import CONFIGS, DEFAULT_CONFIG

SMALL = {
    "rd4ad": {"backbone": "resnet18"},
    "pyramidflow": {"blocks": 1, "hidden": 8},
}


def detector(name: str, **kw) -> ImageMADCluster:
    return ImageMADCluster(name, SMALL[name], image_size=32, epochs=1, batch_size=4, random_state=0, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("config", [{"mode": "base-only"}, {"layout": "channels"}, {"layout": "pixels"}, {"detach_h": True}])
def test_trains_and_scores_every_configuration(name, config, tiny_root):
    train, test = read_mvtec_class(tiny_root / "disc")
    model = detector(name, **config).fit(train.images)
    scores, maps = model.decision_and_map(test.images)
    assert scores.shape == (len(test),) and np.isfinite(scores).all()
    assert maps.shape == (len(test), 32, 32) and np.isfinite(maps).all()
    assert model.decision_scores_.shape == (len(train),)
    has_head = config.get("mode") != "base-only"
    assert ("own" in model.score_stats_) == has_head
    assert ("own" in model.map_stats_) == (has_head and config.get("layout", "pixels") == "pixels")
    assert np.isfinite(model.history_["train_loss"]).all()


@pytest.mark.parametrize(("n", "batch", "expected"), [(209, 16, 15), (30, 16, 16), (5, 4, 3), (17, 16, 9), (4, 16, 16)])
def test_no_training_batch_of_one_image(n, batch, expected):
    size = training_batch_size(n, batch)
    assert size == expected and n % size != 1 and -(-n // size) == -(-n // batch)  # same number of batches


@pytest.mark.slow
def test_rd4ad_trains_when_the_last_batch_would_hold_one_image(tiny_root):
    train, _ = read_mvtec_class(tiny_root / "disc")
    images = train.images[:5]  # batch 4: 4 + 1, and batch norm cannot train on one 1 x 1 image
    assert np.isfinite(detector("rd4ad").fit(images).history_["train_loss"]).all()


def test_detach_h_trains_the_base_model_exactly_as_alone(tiny_root):
    """With MADCluster's gradient stopped at h, the base model's own map equals the model alone."""
    train, test = read_mvtec_class(tiny_root / "disc")
    alone = detector("pyramidflow", mode="base-only").fit(train.images)
    detached = detector("pyramidflow", layout="channels", detach_h=True).fit(train.images)
    np.testing.assert_allclose(detached.anomaly_map(test.images), alone.anomaly_map(test.images), rtol=1e-5, atol=1e-6)
    assert not np.allclose(detached.decision_function(test.images), alone.decision_function(test.images))


@pytest.mark.slow
def test_save_load_round_trip_and_same_seed_same_scores(tiny_root, tmp_path):
    train, test = read_mvtec_class(tiny_root / "weave")  # grayscale
    model = detector("rd4ad", layout="pixels").fit(train.images)
    scores, maps = model.decision_and_map(test.images)
    path = tmp_path / "model.mcz"
    model.save(path)
    loaded = ImageMADCluster.load(path)
    again_scores, again_maps = loaded.decision_and_map(test.images)
    np.testing.assert_array_equal(again_scores, scores)
    np.testing.assert_array_equal(again_maps, maps)
    np.testing.assert_array_equal(loaded.predict(test.images), model.predict(test.images))
    np.testing.assert_array_equal(detector("rd4ad", layout="pixels").fit(train.images).decision_function(test.images), scores)
    series_model = MADCluster(window_size=8, epochs=1, random_state=0).fit(np.random.default_rng(0).normal(size=(64, 2)))
    series_model.save(tmp_path / "series.mcz")
    with pytest.raises(ModelFileError, match="not an image model"):
        ImageMADCluster.load(tmp_path / "series.mcz")


def test_folders_and_bad_input(tiny_root):
    model = detector("pyramidflow").fit(tiny_root / "disc")  # an MVTec class folder: its train/good
    assert model.n_channels_ == 3
    folder_scores = model.decision_function(tiny_root / "disc" / "test" / "hole")
    assert folder_scores.shape == (1,)
    with pytest.raises(DataError, match="grayscale but the model was trained on RGB"):
        model.decision_function(tiny_root / "weave" / "test" / "hole")
    with pytest.raises(DataError, match=r"images \[N, C, H, W\]"):
        model.decision_function(np.zeros((2, 3)))
    with pytest.raises(DataError, match="NaN"):
        model.decision_function(np.full((1, 3, 32, 32), np.nan))
    with pytest.raises(DataError, match="1 \\(grayscale\\) or 3 \\(RGB\\) channels"):
        model.decision_function(np.zeros((1, 4, 32, 32)))
    resized = model.decision_function(np.random.default_rng(0).random((2, 3, 48, 48)))  # resized to 32
    assert resized.shape == (2,)
    with pytest.raises(NotFittedError):
        detector("pyramidflow").decision_function(np.zeros((1, 3, 32, 32)))
    with pytest.raises(ValueError, match="unknown layout"):
        detector("pyramidflow", layout="rows").fit(tiny_root / "disc")


def test_head_weight_scales_the_standardised_madcluster_term_in_score_and_map(tiny_root, tmp_path):
    """score = z(base) + w z(MADCluster), with training statistics; w = 0.25 is exactly that sum."""
    train, test = read_mvtec_class(tiny_root / "disc")
    model = detector("pyramidflow", layout="pixels", detach_h=True, head_weight=0.25).fit(train.images)
    scores, maps = model.score_terms(test.images)
    for terms, stats, combined in ((scores, model.score_stats_, model.decision_function(test.images)),
                                   (maps, model.map_stats_, model.anomaly_map(test.images))):
        own = sum((terms[k] - stats[k][0]) / stats[k][1] for k in terms if k != "base")
        expected = (terms["base"] - stats["base"][0]) / stats["base"][1] + 0.25 * (own - stats["own"][0]) / stats["own"][1]
        np.testing.assert_allclose(combined, expected, rtol=1e-10, atol=1e-10)
    full = detector("pyramidflow", layout="pixels", detach_h=True, head_weight=1.0).fit(train.images)
    assert not np.allclose(full.decision_function(test.images), model.decision_function(test.images))
    model.save(tmp_path / "w.mcz")
    np.testing.assert_array_equal(ImageMADCluster.load(tmp_path / "w.mcz").decision_function(test.images),
                                  model.decision_function(test.images))
    for bad in (0.0, -1.0, float("nan"), "1"):
        with pytest.raises(ValueError, match="head_weight"):
            detector("pyramidflow", head_weight=bad).fit(train.images)


def test_the_defaults_are_the_chosen_table_configuration_and_paper_stays_literal():
    defaults = ImageMADCluster().get_params()
    assert {k: defaults[k] for k in CONFIGS[DEFAULT_CONFIG]} == CONFIGS[DEFAULT_CONFIG]
    assert CONFIGS["paper"] == {"mode": "full", "layout": "channels", "detach_h": False, "head_weight": 1.0}
