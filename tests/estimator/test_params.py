"""One table of parameters: every detector's signature takes its defaults from its table, fit
checks each value once against it, the command line reads it, and every bad value is a
``ParameterError`` (a ``ValueError``)."""

from __future__ import annotations

import inspect
import re
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from madcluster import KMeansDetector, MADCluster, ParameterError, PCADetector
from madcluster.baselines import KMEANS_PARAMS, PCA_PARAMS
from madcluster.benchmark.config import BenchmarkConfig
from madcluster.defaults import defaults
from madcluster.estimator.params import MADCLUSTER_PARAMS, PRECISION_NAMES
from madcluster.images.detector import IMAGE_PARAMS, ImageMADCluster

SRC = Path(__file__).resolve().parents[2] / "src" / "madcluster"


@pytest.mark.parametrize(("cls", "table"), [
    (MADCluster, MADCLUSTER_PARAMS), (ImageMADCluster, IMAGE_PARAMS),
    (PCADetector, PCA_PARAMS), (KMeansDetector, KMEANS_PARAMS),
])
def test_signature_defaults_are_the_table(cls, table):
    signature = {n: p.default for n, p in inspect.signature(cls).parameters.items()}
    assert set(signature) == set(table)
    assert signature == defaults(table)
    assert cls._parameters is table


def test_contamination_default_is_written_once():
    hits = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1)
            if re.search(r"contamination\W.*\b0\.01\b", line)]
    assert hits == ["defaults.py:" + hits[0].split(":")[1]], hits


def test_benchmark_config_defaults_are_the_detectors():
    config = {f.name: f.default for f in fields(BenchmarkConfig)}
    for name in ("lr", "weight_decay", "validation_size", "patience", "contamination"):
        assert config[name] == MADCLUSTER_PARAMS[name].default, name
    assert config["batch_size"] == 128  # Table 1's protocol, not the detector's "auto"
    assert config["n_components"] == PCA_PARAMS["n_components"].default
    assert config["n_centroids"] == KMEANS_PARAMS["n_centroids"].default


def test_precision_names_match_the_training_loop():
    from madcluster.training.network import PRECISIONS

    assert tuple(PRECISIONS) == PRECISION_NAMES


@pytest.mark.parametrize(("make", "match"), [
    (lambda: MADCluster(contamination=0.7), r"contamination must be in \[0, 0.5\), got 0.7"),
    (lambda: MADCluster(lr=0), "lr must be > 0"),
    (lambda: MADCluster(validation_size=1.0), r"validation_size must be in \[0, 1\)"),
    (lambda: MADCluster(scaling="robust"), "unknown scaling 'robust'; choose one of standard, minmax"),
    (lambda: MADCluster(pretrain_epochs=5, epochs=5), r"pretrain_epochs must be an integer in \[0, epochs\)"),
    (lambda: MADCluster(threshold="pot", contamination=0.0), "needs contamination > 0"),
    (lambda: MADCluster(n_jobs=0), "n_jobs"),
    (lambda: PCADetector(n_components=1.5), "n_components must be an int >= 1 or a variance fraction"),
    (lambda: KMeansDetector(contamination=-0.1), "contamination must be in"),
])
def test_bad_values_fail_before_the_data_is_read(make, match):
    with pytest.raises(ParameterError, match=match):
        make().fit(np.zeros((3, 2)))  # too short to fit: the parameter is refused first


@pytest.mark.parametrize(("params", "match"), [
    ({"layout": "rows"}, "unknown layout 'rows'"),
    ({"head_weight": 0}, "head_weight must be a finite number > 0"),
    ({"contamination": 0.5}, "contamination must be in"),
])
def test_image_detector_raises_the_same_error_type(params, match):
    with pytest.raises(ParameterError, match=match):
        ImageMADCluster(**params).fit(np.zeros((1, 3, 8, 8), dtype=np.float32))
    assert issubclass(ParameterError, ValueError)  # older `except ValueError` callers still catch it


def test_command_line_refuses_with_the_tables_message(capsys):
    from madcluster.cli import main

    with pytest.raises(SystemExit):
        main(["fit", "data.csv", "--contamination", "0.7"])
    assert "contamination must be in [0, 0.5), got 0.7" in capsys.readouterr().err
