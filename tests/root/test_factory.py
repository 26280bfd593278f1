"""One source for every setting: the constructors' signatures; one way from params to a detector."""

from __future__ import annotations

import inspect

import pytest

from madcluster.baselines import KMeansDetector, PCADetector
from madcluster.benchmark.config import BenchmarkConfig
from madcluster.embedders import EMBEDDERS
from madcluster.estimator.detector import MADCluster
from madcluster.factory import make_detector


def _default(cls, name):
    return inspect.signature(cls).parameters[name].default


def test_benchmark_config_defaults_are_the_constructors():
    """A benchmark row left at its defaults measures the detectors' defaults."""
    config = BenchmarkConfig(dataset="x")
    for name in ("embedder", "mode", "epochs", "window_size", "lr", "weight_decay",
                 "validation_size", "patience", "contamination"):
        assert getattr(config, name) == _default(MADCluster, name), name
    # except the batch: a benchmark row trains every window (Table 1's protocol) in batches of 128,
    # the detector's "auto" is the embedder's batch for its sampled epochs
    assert _default(MADCluster, "batch_size") == "auto" and config.batch_size == 128
    # and the D-RNN's size: the paper's (its paper_params: 64 units, Table 1), the detector's 32 apart
    drnn = EMBEDDERS["drnn"]
    for argument, setting in drnn.size_options.items():
        expected = drnn.paper_params.get(argument, _default(drnn, argument))
        assert getattr(config, setting) == expected, setting
    assert _default(drnn, "hidden_size") == 32 and config.hidden_size == 64
    assert config.n_centroids == _default(KMeansDetector, "n_centroids")
    assert config.n_components == _default(PCADetector, "n_components")


def test_make_detector_builds_each_kind_with_the_constructors_defaults():
    assert make_detector({}).get_params() == MADCluster().get_params()
    paper = make_detector({"preset": "paper", "window_size": 20})
    assert paper.get_params() == MADCluster.from_preset("paper", window_size=20).get_params()
    assert paper.score_stride == 20 and paper.embedder_params == EMBEDDERS["drnn"].paper_params
    assert isinstance(make_detector({"detector": "kmeans", "n_centroids": 3}), KMeansDetector)
    assert make_detector({"detector": "pca"}).get_params() == PCADetector().get_params()
    with pytest.raises(ValueError, match="unknown detector 'lof'"):
        make_detector({"detector": "lof"})
    with pytest.raises(ValueError, match="preset 'paper' is MADCluster's"):
        make_detector({"detector": "pca", "preset": "paper"})


def test_score_scaling_default_agrees():
    from madcluster.method.config import MethodConfig

    assert MethodConfig().score_scaling == _default(MADCluster, "score_scaling")
    fields = {f: MethodConfig.__dataclass_fields__[f].default for f in MethodConfig.field_names() if f != "eps"}
    assert {f: _default(MADCluster, f) for f in fields} == fields
