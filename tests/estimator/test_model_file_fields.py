"""What a model file's fields become on loading, read back one by one from a committed fixture
file (rewritten where a field needs another value): the parameters as the estimator takes them,
column names as an object array, constant columns as int64 indices, the arrays kept beside the
network. ``test_fixture_files.py`` checks the scores; these check the fields no score shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from madcluster import MADCluster
from madcluster.estimator.persistence import read_model_file, write_model_file

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bb28e52" / "default.mcz"


def test_the_parameters_load_as_the_estimator_takes_them() -> None:
    model = MADCluster.load(FIXTURE)
    params = model.get_params()
    assert params["input_terms"] == ("kmeans", "ar")  # a tuple again: JSON wrote a list
    assert params["device"] == "cpu"
    assert model.device_ == "cpu"


def test_the_arrays_beside_the_network_load_as_written() -> None:
    _, arrays = read_model_file(FIXTURE)
    model = MADCluster.load(FIXTURE)
    np.testing.assert_array_equal(model.attribution_baseline_, arrays["attribution_baseline"])
    np.testing.assert_array_equal(model.center_path_, arrays["center_path"])
    assert model.decision_scores_.dtype == np.float64


@pytest.mark.parametrize("constant", [[], [1]])
def test_column_names_and_constant_columns_load_as_arrays(tmp_path, constant: list) -> None:
    config, arrays = read_model_file(FIXTURE)
    config = {k: v for k, v in config.items() if k not in ("format", "format_version")}
    config["fitted"]["feature_names_in_"] = ["flow", "pressure", "temperature"]
    config["fitted"]["constant_columns_"] = constant
    path = tmp_path / "named.mcz"
    write_model_file(path, config, arrays)
    model = MADCluster.load(path)
    assert model.feature_names_in_.dtype == object
    assert list(model.feature_names_in_) == ["flow", "pressure", "temperature"]
    assert model.constant_columns_.dtype == np.int64
    assert model.constant_columns_.tolist() == constant
